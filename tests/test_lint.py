"""`axischeck lint`: the seeded corpus, the runtime agreeing with it, formats, config, exit codes."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import json
import re
import sys
import tokenize
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax
from axischeck._cli import main
from axischeck._lint import RULES, Finding, LintUsageError, _flow, lint, lint_files
from axischeck._lint._config import suppressed
from axischeck._lint._output import github, render
from conftest import cpu_mesh

HERE = Path(__file__).parent
CASES = HERE / "lint_cases"
ROOT = HERE.parent
CASE_FILES = sorted(CASES.glob("*.py"))

# `# expect: AX001` on a line lint must flag; `# expect(jax<0.12.1): AX017` where only the
# releases before 0.12.1 refuse the line (lint reads the installed release, as JAX's rules do).
_EXPECT = re.compile(r"#\s*expect(?:\(jax<([\d.]+)\))?:\s*(AX\d{3}(?:\s*,\s*AX\d{3})*)")
JAX_RELEASE = tuple(int(p) for p in re.findall(r"\d+", jax.__version__)[:3])


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def expectations(path: Path) -> list[tuple[int, str, tuple[int, ...] | None]]:
    """(line, code, release before which JAX refuses the line, or None) for every
    `# expect` comment (comments only, read with tokenize)."""
    found = []
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type == tokenize.COMMENT and (m := _EXPECT.search(tok.string)):
                before = _release(m.group(1)) if m.group(1) else None
                found += [(tok.start[0], c.strip(), before) for c in m.group(2).split(",")]
    return found


def expected(path: Path) -> set[tuple[int, str]]:
    """(line, code) of every finding lint must report with the installed JAX."""
    return {(line, code) for line, code, before in expectations(path) if before is None or JAX_RELEASE < before}


def accepted_lines(path: Path) -> set[int]:
    """Lines the installed JAX accepts though an earlier release refuses them."""
    return {line for line, _, before in expectations(path) if before is not None and JAX_RELEASE >= before}


def found(path: Path) -> set[tuple[int, str]]:
    findings, _ = lint_files([path])
    return {(f.line, f.code) for f in findings}


# ------------------------------------------------------------------ seeded corpus


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.name for p in CASE_FILES])
def test_corpus_file_has_exactly_the_expected_findings(path: Path) -> None:
    want = expected(path)
    if path.name.startswith("clean_"):
        assert want == set()
    else:
        assert path.name.startswith("bad_") and want, "a bad_ case file must expect findings"
    assert found(path) == want


def test_corpus_covers_every_code_in_several_spellings() -> None:
    counts: dict[str, int] = {}
    for path in CASE_FILES:
        for _, code, _before in expectations(path):
            counts[code] = counts.get(code, 0) + 1
    assert set(counts) == set(RULES)
    assert all(n >= 2 for n in counts.values()), counts


def test_every_finding_names_the_transform_and_what_jax_does() -> None:
    for path in CASE_FILES:
        for f in lint_files([path])[0]:
            assert re.match(
                r"(filter_|nnx\.)?(vmap|pmap|shard_map|smap)\(|psum|pmean|pmax|pmin|all_gather|axis_index|axis_name",
                f.message,
            )
            assert "JAX" in f.message or "axischeck" in f.message or "Equinox" in f.message or f.code in ("AX008",), (
                f.message
            )


# ----------------------------------------------------- the runtime agrees with the linter

# Cases the runtime can run on CPU: each `case_*` function of these files must raise, with
# an error whose text matches (axischeck's own AxisCheckError or JAX's error).
RUNTIME = {
    "bad_in_axes_length.py": r"in_axes|len\(args\)|positional argument|pytree structure|tuple index out of range",
    "bad_out_axes.py": r"out_axes|out_specs|tree prefix|pytree structure",
    "bad_axis_name.py": r"unbound axis name",
    "bad_signature.py": r"signature|dimension",
    "bad_axis_range.py": r"axis|rank",
    "bad_shard_map.py": r"in_specs|too long|pytree structure",
    "bad_batch_size.py": r"inconsistent sizes|disagree on the batch size|squeeze",
    "bad_axis_beyond_rank.py": r"rank should be at least",
    "bad_nothing_mapped.py": r"non-None value|at least one argument with a mapped axis|every in_axes entry is None",
    "bad_python_scalar.py": r"rank should be at least 1|pjit arguments|too long",
    "bad_tree_prefix.py": r"tree prefix",
    "bad_scan_carry.py": r"carry input and carry output",
    "bad_uneven_shards.py": r"evenly divisible",
    "bad_unmapped_output.py": r"out_axes|batched|replicat|out_specs",
    "bad_hidden_facts.py": r"in_axes|pytree structure|unbound axis name|positional argument",
    "bad_misspelled_option.py": r"unexpected keyword argument",
    "bad_mapped_iterator.py": r"iterator|not a valid JAX type|iterable type",
    "bad_size_one_axis.py": r"require replication",
    "bad_mapped_function.py": r"not a valid JAX type|as an abstract array",
    "bad_mapped_self.py": r"not a valid JAX type|as an abstract array",
}


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"lint_case_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.devices(8)
def test_library_cases_raise_and_the_clean_ones_run() -> None:
    """Equinox's and Flax NNX's transforms: every case of bad_library_transforms.py raises,
    and clean_library_transforms.py runs (skipped where the libraries are not installed)."""
    pytest.importorskip("equinox")
    pytest.importorskip("flax.nnx")
    module = _load(CASES / "bad_library_transforms.py")
    for case in [n for n in dir(module) if n.startswith("case_")]:
        with pytest.raises((ValueError, RuntimeError, NameError)):
            getattr(module, case)()
    _load(CASES / "clean_library_transforms.py")


def test_code_lint_once_misread_runs() -> None:
    """clean_misreadings.py, where lint stays silent, is correct: it runs under JAX."""
    module = _load(CASES / "clean_misreadings.py")
    assert module.AXES == [0, 0] and module.MORE_AXES == [0, 0]


ON_DEVICES = frozenset(
    [
        "bad_axis_name.py",
        "bad_hidden_facts.py",
        "bad_out_axes.py",
        "bad_scan_carry.py",
        "bad_shard_map.py",
        "bad_uneven_shards.py",
        "bad_size_one_axis.py",
    ]
)
"""The runtime cases that run pmaps or build meshes of 2 devices: skipped where fewer exist."""


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.devices(2)] if n in ON_DEVICES else []) for n in sorted(RUNTIME)]
)
def test_runtime_raises_for_each_seeded_case(name: str) -> None:
    module = _load(CASES / name)
    cases = [n for n in dir(module) if n.startswith("case_")]
    assert cases
    accepted = accepted_lines(CASES / name)
    for case in cases:
        fn = getattr(module, case)
        args: tuple[Any, ...] = (
            (cpu_mesh((2,), ("x",), (jax.sharding.AxisType.Auto,)),) if fn.__code__.co_argcount else ()
        )
        lines = range(fn.__code__.co_firstlineno, fn.__code__.co_firstlineno + len(inspect.getsource(fn).splitlines()))
        if accepted & set(lines):  # refused by earlier releases only: the installed JAX runs it
            fn(*args)
            continue
        # (DeprecationWarning: JAX 0.10 to 0.12 warn of an iterator taken as a leaf, which a
        # later release makes an error; this suite turns warnings into errors.)
        refusals = (ax.AxisCheckError, ValueError, TypeError, NameError, IndexError, DeprecationWarning)
        with pytest.raises(refusals) as info:
            fn(*args)
        assert re.search(RUNTIME[name], str(info.value)), f"{case}: {info.value}"


def test_every_runtime_case_is_a_linted_case() -> None:
    """Each case the runtime runs holds a finding, or calls a function whose definition holds one."""
    for name in RUNTIME:
        lines = {line for line, _, _before in expectations(CASES / name)}
        tree = ast.parse((CASES / name).read_text())
        spans = {
            node.name: set(
                range(min([node.lineno, *(d.lineno for d in node.decorator_list)]), (node.end_lineno or 0) + 1)
            )
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }
        calls = {
            node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }
        for case in (n for n in spans if n.startswith("case_")):
            reached, todo = set(), [case]
            while todo:  # everything the case calls, transitively
                current = todo.pop()
                if current in spans and current not in reached:
                    reached.add(current)
                    todo.extend(calls[current])
            assert lines & set().union(*(spans[n] for n in reached)), f"{name}:{case} has no expected finding"


# ------------------------------------------------------------- soundness against JAX


@given(
    n_params=st.integers(0, 3),
    n_defaults=st.integers(0, 3),
    varargs=st.booleans(),
    n_axes=st.integers(0, 4),
    n_args=st.integers(0, 4),
    by_keyword=st.booleans(),
)
def test_in_axes_length_findings_are_real_jax_errors(
    tmp_path_factory: pytest.TempPathFactory,
    n_params: int,
    n_defaults: int,
    varargs: bool,
    n_axes: int,
    n_args: int,
    by_keyword: bool,
) -> None:
    """Whenever the linter reports AX001/AX003 for a generated program, running it raises."""
    n_defaults = min(n_defaults, n_params)
    params = [f"p{i}" if i < n_params - n_defaults else f"p{i}=0.0" for i in range(n_params)]
    if varargs:
        params.append("*rest")
    args = ["x"] * n_args
    if by_keyword and n_args < n_params:
        args.append(f"p{n_args}=x")
    source = (
        "import jax\nimport jax.numpy as jnp\n\n"
        f"def f({', '.join(params)}):\n    return 0.0\n\n"
        "def run():\n"
        "    x = jnp.ones(3)\n"
        f"    g = jax.vmap(f, in_axes=({'0, ' * n_axes}))\n"
        f"    return g({', '.join(args)})\n"
    )
    path = tmp_path_factory.mktemp("gen") / "case.py"
    path.write_text(source)
    codes = {f.code for f in lint_files([path])[0]}
    if not codes & {"AX001", "AX003"}:
        return
    namespace: dict[str, Any] = {}
    exec(compile(source, str(path), "exec"), namespace)
    with pytest.raises((ValueError, TypeError)):
        namespace["run"]()


@given(
    n_out=st.integers(1, 3),
    out_axes=st.one_of(
        st.integers(-3, 3).map(str),
        st.lists(st.sampled_from(["0", "1", "-1", "None"]), min_size=1, max_size=4).map(
            lambda xs: "(" + ", ".join(xs) + ",)"
        ),
        st.lists(st.sampled_from(["0", "None"]), min_size=1, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    ),
    in_axis=st.integers(-3, 3),
    rank=st.integers(0, 2),
)
def test_out_axes_and_rank_findings_are_real_jax_errors(
    tmp_path_factory: pytest.TempPathFactory, n_out: int, out_axes: str, in_axis: int, rank: int
) -> None:
    """Whenever the linter reports AX004/AX009 for a generated program, running it raises."""
    dims = " ".join("abc"[:rank])
    shape = [2] * rank  # arguments agree with the annotation: batched rank is rank + 1
    shape.insert(in_axis % (rank + 1) if -(rank + 1) <= in_axis <= rank else 0, 3)
    source = (
        "from typing import Annotated\nimport jax\nimport jax.numpy as jnp\n\n"
        f"def f(x: Annotated[jax.Array, {dims!r}]) -> Annotated[jax.Array, {dims!r}]:\n"
        f"    return {'(' + ', '.join(['x'] * n_out) + ',)' if n_out > 1 else 'x'}\n\n"
        "def run():\n"
        f"    x = jnp.ones({tuple(shape)})\n"
        f"    return jax.vmap(f, in_axes={in_axis}, out_axes={out_axes})(x)\n"
    )
    path = tmp_path_factory.mktemp("gen") / "case.py"
    path.write_text(source)
    if not {f.code for f in lint_files([path])[0]} & {"AX004", "AX009", "AX002"}:
        return
    namespace: dict[str, Any] = {}
    exec(compile(source, str(path), "exec"), namespace)
    with pytest.raises((ValueError, TypeError)):
        namespace["run"]()


# ------------------------------------------------------------------- our own code


# The files under tests/typing/misuse_*.py exist to hold code a checker must reject (mypy's
# config excludes them too); tests/lint_cases/ is the seeded corpus. Two lines of
# tests/test_pmap_vs_jax.py build a pmap with a list in_axes on purpose, to compare the
# failure with JAX's (an `# axischeck: ignore[AX002]` there would make this list empty).
INTENTIONAL = {
    ("tests/test_pmap_vs_jax.py", "AX002", "in_axes=[0, 0]"),
    # pmap's out_axes=None on a mapped output: the runtime's warning about it is under test.
    ("tests/test_pmap.py", "AX018", "out_axes=None"),
    ("tests/test_pmap_vs_jax.py", "AX018", "out_axes=(0, None)"),
    # keys shared along a map: the runtime's SharedRandomnessWarning about them is under test.
    ("tests/test_shared_randomness.py", "AX022", ""),
}


def test_our_own_source_and_tests_are_clean() -> None:
    findings, stats = lint(
        [str(ROOT / "src"), str(ROOT / "tests")],
        exclude=["tests/lint_cases", "tests/realbugs/cases", "tests/realbugs/heldout", "tests/typing/misuse_*"],
        use_config=False,
    )
    assert stats.files > 40 and stats.sites > 100
    unexpected = [
        f
        for f in findings
        if not any(
            f.path.replace("\\", "/").endswith(path) and f.code == code and text in _line(f)
            for path, code, text in INTENTIONAL
        )
    ]
    assert unexpected == []


def _line(f: Finding) -> str:
    path = Path(f.path)
    lines = (path if path.is_absolute() else Path.cwd() / path).read_text().splitlines()
    return lines[f.line - 1]


# ---------------------------------------------------------------- command and formats


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["lint", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_exit_status_and_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(["--no-config", str(CASES / "clean_vmap_styles.py")], capsys)
    assert (status, out, err) == (0, "", "")
    status, out, _ = _run(["--no-config", str(CASES / "bad_out_axes.py")], capsys)
    assert status == 1
    first = out.splitlines()[0]
    assert re.match(r".*bad_out_axes\.py:18:37: AX004 vmap\(stats, out_axes=\(0, 0, 0\)\): out_axes has 3", first)
    assert first.endswith("(fix: out_axes=0)")


@pytest.mark.parametrize(
    "argv",
    [
        ["no/such/path.py"],
        ["--format", "xml", "tests/lint_cases/clean_axis_names.py"],
        ["--disable", "AX999", "tests/lint_cases/clean_axis_names.py"],
        ["--bogus"],
    ],
)
def test_usage_errors_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(["--no-config", *argv], capsys)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("axischeck: error:")


def test_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(["--no-config", "--format", "json", str(CASES / "bad_in_axes_keyword.py")], capsys)
    data = json.loads(out)
    assert status == 1 and len(data) == 5
    assert set(data[0]) == {"path", "line", "column", "code", "message", "fix"}
    assert all(set(d) - {"fix"} == {"path", "line", "column", "code", "message"} for d in data)
    assert [d["line"] for d in data] == [31, 35, 40, 44, 49]
    status, out, _ = _run(["--no-config", "--format", "json", str(CASES / "clean_shard_map.py")], capsys)
    assert (status, json.loads(out)) == (0, [])


def test_sarif_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(["--no-config", "--format", "sarif", str(CASES / "bad_signature.py")], capsys)
    log = json.loads(out)
    assert status == 1 and log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "axischeck"
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    assert all(r["shortDescription"]["text"] for r in driver["rules"])
    results = log["runs"][0]["results"]
    assert len(results) == 6
    for r in results:
        assert r["ruleId"] in RULES and driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("bad_signature.py")
        assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1


def test_github_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(["--no-config", "--format", "github", str(CASES / "bad_shadowed_axis_name.py")], capsys)
    lines = out.splitlines()
    assert status == 1 and len(lines) == 3
    assert re.match(r"::warning file=.*bad_shadowed_axis_name\.py,line=21,col=47,title=AX006::axis_name 'i'", lines[0])
    tricky = Finding("a,b:c.py", 3, 4, "AX001", "50% of\nit", "x")
    assert github(tricky) == "::error file=a%2Cb%3Ac.py,line=3,col=4,title=AX001::50%25 of%0Ait (fix: x)"


def test_statistics_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(["--no-config", "--statistics", str(CASES / "clean_vmap_styles.py")], capsys)
    assert status == 0 and out == ""
    assert re.search(r"1 files, \d+ lines, 1 naming a transform, \d+ transform sites", err)


def test_unparsable_file_is_reported_on_stderr_not_as_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.py"
    bad.write_text("import jax\njax.vmap(f\n")
    status, out, err = _run(["--no-config", str(bad)], capsys)
    assert status == 0 and out == ""
    assert "not checked, cannot parse" in err and "broken.py:2" in err


# -------------------------------------------------------------- suppression and config


def test_ignore_comments() -> None:
    assert suppressed("f(x)  # axischeck: ignore", "AX001")
    assert suppressed("f(x)  # axischeck: ignore[AX001, AX004]", "AX004")
    assert not suppressed("f(x)  # axischeck: ignore[AX004]", "AX001")
    assert not suppressed("f(x)  # axischeck ignore", "AX001")


def _project(tmp_path: Path, config: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text("def loss(x, y):\n    return x * y\n")
    (tmp_path / "pkg" / "train.py").write_text(
        "import jax\nfrom .model import loss\n\nbatched = jax.vmap(loss, in_axes=(0, None, 0))\n"
    )
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.py").write_text("import jax\njax.vmap(lambda x: x, in_axes=(0, 0))\n")
    return tmp_path


def test_config_paths_exclude_disable_and_cross_file_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, '[tool.axischeck.lint]\npaths = ["pkg", "scripts"]\n')
    monkeypatch.chdir(root)
    status, out, _ = _run([], capsys)
    assert status == 1
    assert {line.split(" ")[0] for line in out.splitlines()} == {"pkg/train.py:4:34:", "scripts/run.py:2:31:"}
    assert "loss takes 2 positional parameters (x, y)" in out  # found in pkg/model.py
    (root / "pyproject.toml").write_text('[tool.axischeck.lint]\npaths = ["pkg", "scripts"]\nexclude = ["scripts"]\n')
    status, out, _ = _run([], capsys)
    assert status == 1 and out.startswith("pkg/train.py")
    (root / "pyproject.toml").write_text('[tool.axischeck.lint]\npaths = ["pkg"]\ndisable = ["AX001"]\n')
    assert _run([], capsys)[0] == 0
    assert _run(["--no-config", "pkg"], capsys)[0] == 1
    assert _run(["--disable", "ax001", "--no-config", "pkg"], capsys)[0] == 0


@pytest.mark.parametrize(
    "config",
    [
        "[tool.axischeck.lint]\npath = ['src']\n",
        "[tool.axischeck.lint]\ndisable = 'AX001'\n",
        "[tool.axischeck.lint]\ndisable = ['AX100']\n",
        "[tool.axischeck.lint\n",
    ],
)
def test_bad_config_is_a_usage_error(tmp_path: Path, config: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path, config)
    monkeypatch.chdir(root)
    with pytest.raises(LintUsageError):
        lint(["pkg"])


def test_no_paths_and_no_config_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LintUsageError, match="no PATH given"):
        lint([], use_config=False)


def test_render_text_without_findings_is_empty() -> None:
    assert render([], "text", "0") == "" and render([], "json", "0") == "[]"


def test_pre_commit_hook_manifest() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    for line in ("- id: axischeck-lint", "entry: axischeck lint", "language: python", "types: [python]"):
        assert line in text


@pytest.mark.slow
def test_python_dash_m_runs_the_command() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "axischeck", "lint", "--no-config", str(CASES / "bad_axis_name.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout.count("AX005") == 6


def test_a_map_given_static_argnums_is_told_to_give_the_argument_in_axes_none(tmp_path: Path) -> None:
    """jax#5617: vmap has no static_argnums; AX023 says what it takes instead, as the
    drop-in's error does."""
    path = tmp_path / "a.py"
    path.write_text("import jax\n\n\ndef f(x, y, order):\n    return x\n\n\njax.vmap(f, static_argnums=(2,))\n")
    (finding,), _ = lint([str(path)], use_config=False)
    assert finding.code == "AX023"
    assert "vmap keeps no argument static: give argument 2 the in_axes entry None" in finding.message


def test_findings_are_values() -> None:
    f = Finding("a.py", 1, 2, "AX001", "m")
    assert f.as_dict() == {"path": "a.py", "line": 1, "column": 2, "code": "AX001", "message": "m"}
    assert io.StringIO(render([f], "text", "0")).read() == "a.py:1:2: AX001 m"


# -------------------------------------------------------------------------- Markdown

_DOC = """# A notebook

Some prose with `jax.vmap`.

```{code-cell} ipython3
import jax
from jax import lax
%timeit 1 + 1
```

```{code-cell} ipython3
:tags: [raises-exception]

jax.vmap(lambda x: x, in_axes=(0, 0))(1.0)
```

```python
jax.vmap(lambda x: x, in_axes=(0, 0))
```

```python
this cell does not parse (
```

- a list item:

  ```py
  jax.pmap(lambda x: lax.psum(x, "j"), axis_name="i")(1.0)
  ```

```pycon
>>> jax.vmap(lambda x: x, out_axes="b")
Traceback (most recent call last):
  ...
ValueError: an example written to fail, as a raises-exception cell is
>>> f = jax.vmap(lambda x: x,
...              out_axes="c")
>>> f  # doctest: +ELLIPSIS
<function ...>
```
"""


def test_markdown_cells_are_linted_with_the_files_line_numbers(tmp_path: Path) -> None:
    doc = tmp_path / "notebook.md"
    doc.write_text(_DOC)
    findings, stats = lint([str(doc)], use_config=False)
    assert [(f.line, f.code) for f in findings] == [(18, "AX001"), (28, "AX005"), (28, "AX016"), (37, "AX002")]
    assert findings[1].column == 34  # counted in the file, not in the dedented cell
    # A folder's .md files only with markdown=True (the command's --markdown).
    assert lint([str(tmp_path)], use_config=False)[1].files == 0
    assert lint([str(tmp_path)], use_config=False, markdown=True)[0] == findings


def test_each_read_of_a_method_name_is_judged_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which class the receiver of `obj.apply(...)` surely is, is found once per read, not
    once per read and method `apply` and other class defining it (40 classes: 40, not 64,000)."""
    n = 40
    vmap = "@functools.partial(jax.vmap, in_axes=(None, 0))"
    classes = "".join(f"class C{i}:\n    {vmap}\n    def apply(self, x):\n        return x\n\n\n" for i in range(n))
    calls = "".join(f"o{i} = C{i}()\no{i}.apply(jnp.ones((3, 2)))\n" for i in range(n))
    path = tmp_path / "classes.py"
    path.write_text("import functools\n\nimport jax\nimport jax.numpy as jnp\n\n\n" + classes + calls)
    judged: list[ast.expr] = []
    receivers = _flow._receivers
    monkeypatch.setattr(_flow, "_receivers", lambda module, base: judged.append(base) or receivers(module, base))
    findings, stats = lint_files([path])
    assert findings == [] and stats.sites == n
    assert len(judged) == n


def test_an_import_resolves_to_the_module_beside_the_importing_file(tmp_path: Path) -> None:
    """pre-commit passes the changed files only (`a/train.py b/utils.py`): `from utils
    import loss` in a/train.py is a/utils.py, as Python imports it for the script, not the
    linted b/utils.py of the same name."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "utils.py").write_text("def loss(params, x, y):\n    return ((x @ params - y) ** 2).sum()\n")
    (tmp_path / "b" / "utils.py").write_text("def loss(params, x):\n    return (x @ params).sum()\n")
    train = tmp_path / "a" / "train.py"
    train.write_text("import jax\nfrom utils import loss\n\ngrads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))\n")
    assert lint_files([train, tmp_path / "b" / "utils.py"])[0] == []
    # Linted with it, the module beside is read: here it takes 2 parameters, not 3.
    (tmp_path / "a" / "utils.py").write_text("def loss(params, x):\n    return (x @ params).sum()\n")
    assert [f.code for f in lint_files([train, tmp_path / "a" / "utils.py"])[0]] == ["AX001"]
