"""Static typing: `mypy --strict` accepts user code and rejects each marked misuse.

`tests/typing/user_code.py` uses the public API as users do and must be clean.
Each `tests/typing/misuse_*.py` marks the lines mypy must reject with a comment
`# E: <error-code>` (several codes, comma-separated, when mypy reports several
errors on one line): the errors must be exactly those, line by line and code by code.
One in-process mypy run, with the repo's config, covers all the files. That config
enables `axischeck.mypy_plugin`, which `@partial(ax.vmap, ...)` needs under mypy.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import tokenize
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"
USER_CODE = TYPING / "user_code.py"
PLUGIN = ROOT / "src" / "axischeck" / "mypy_plugin.py"
MISUSE_FILES = sorted(TYPING.glob("misuse_*.py"))

# `path:line: error: message  [code]`, tolerating column numbers if the config adds them.
_ERROR = re.compile(
    r"^(?P<path>.+?\.pyi?):(?P<line>\d+)(?::\d+)*: error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)
_MARKER = re.compile(r"#\s*E:\s*(?P<codes>[a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*$")

Errors = dict[Path, list[tuple[int, str, str]]]  # file -> [(line, code, message)]


@pytest.fixture(scope="module")
def mypy_errors() -> Errors:
    """Run mypy once on user_code.py and every misuse file; errors grouped by file."""
    paths = [str(p.relative_to(ROOT)) for p in [USER_CODE, *MISUSE_FILES]]
    args = [
        "--strict",
        "--config-file",
        "pyproject.toml",
        "--no-pretty",
        "--show-error-codes",
        "--hide-error-end",
        "--no-color-output",
        *paths,
    ]
    with contextlib.chdir(ROOT):  # the config's relative paths and .mypy_cache
        stdout, stderr, status = mypy_api.run(args)
    assert status in (0, 1), f"mypy failed to run (status {status}):\n{stderr}{stdout}"
    errors: Errors = {}
    for row in stdout.splitlines():
        m = _ERROR.match(row)
        if m is not None:
            entry = (int(m["line"]), m["code"] or "?", m["message"])
            errors.setdefault((ROOT / m["path"]).resolve(), []).append(entry)
        elif ": error:" in row:
            pytest.fail(f"unparsed mypy error line: {row!r}")
    return errors


def _markers_in(source: str) -> dict[int, Counter[str]]:
    """`# E: code[, code...]` comments: line -> the error codes expected there."""
    found: dict[int, Counter[str]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and (m := _MARKER.search(tok.string)):
            found[tok.start[0]] = Counter(c.strip() for c in m["codes"].split(","))
    return found


def _markers(path: Path) -> dict[int, Counter[str]]:
    return _markers_in(path.read_text())


def _source_line(path: Path, line: int) -> str:
    return path.read_text().splitlines()[line - 1].strip()


@pytest.mark.slow  # runs mypy
def test_user_code_is_clean(mypy_errors: Errors) -> None:
    errs = mypy_errors.get(USER_CODE.resolve(), [])
    report = "\n".join(f"  {USER_CODE.name}:{ln}: {msg}  [{code}]" for ln, code, msg in errs)
    assert not errs, f"mypy --strict rejects user code:\n{report}"


@pytest.mark.slow  # runs mypy
def test_no_errors_outside_the_checked_files(mypy_errors: Errors) -> None:
    checked = {p.resolve() for p in [USER_CODE, *MISUSE_FILES]}
    stray = {str(p): e for p, e in mypy_errors.items() if p not in checked}
    assert not stray, f"mypy reports errors in other files (the library?): {stray}"


def test_misuse_files_exist_and_are_excluded_from_the_repo_check() -> None:
    assert MISUSE_FILES, "no tests/typing/misuse_*.py files"
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    exclude = config["exclude"]
    patterns = [exclude] if isinstance(exclude, str) else list(exclude)
    for path in MISUSE_FILES:
        rel = path.relative_to(ROOT).as_posix()
        assert any(re.search(p, rel) for p in patterns), f"{rel} is not excluded by [tool.mypy]"
        assert _markers(path), f"{rel} has no '# E: <code>' markers"
    assert not any(re.search(p, USER_CODE.relative_to(ROOT).as_posix()) for p in patterns)


def test_the_mypy_plugin_is_enabled_for_the_checks() -> None:
    """user_code.py and misuse_partial.py prove `@partial(ax.vmap, ...)` with the plugin
    users enable: the same module path, from the repo's config."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "axischeck.mypy_plugin" in config.get("plugins", [])


@pytest.mark.slow
def test_the_mypy_plugin_imports_no_jax() -> None:
    """Loaded alone (as mypy loads a plugin by path) with jax unimportable: only mypy."""
    code = (
        "import runpy, sys\n"
        "sys.modules['jax'] = None  # any import of jax now raises ImportError\n"
        f"plugin = runpy.run_path({str(PLUGIN)!r})['plugin']\n"
        "assert plugin('2.4.1').__name__ == 'AxischeckPlugin'\n"
        "roots = {'axischeck', 'jax', 'jaxlib'}\n"
        "loaded = [n for n, m in sys.modules.items() if m is not None and n.split('.')[0] in roots]\n"
        "assert not loaded, loaded\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


@pytest.mark.slow  # runs mypy
@pytest.mark.parametrize("path", MISUSE_FILES, ids=lambda p: p.name)
def test_misuse_is_rejected_exactly_where_marked(path: Path, mypy_errors: Errors) -> None:
    expected = _markers(path)
    got: dict[int, Counter[str]] = {}
    messages: dict[int, list[str]] = {}
    for line, code, message in mypy_errors.get(path.resolve(), []):
        got.setdefault(line, Counter())[code] += 1
        messages.setdefault(line, []).append(f"{message}  [{code}]")

    problems: list[str] = []
    for line in sorted(expected.keys() | got.keys()):
        want, have = expected.get(line, Counter()), got.get(line, Counter())
        if want == have:
            continue
        src = _source_line(path, line)
        if not want:
            problems.append(f"line {line}: unexpected error(s) on an unmarked line: {src}")
        elif not have:
            problems.append(f"line {line}: expected {_codes(want)} but mypy accepts it: {src}")
        else:
            problems.append(f"line {line}: expected {_codes(want)}, got {_codes(have)}: {src}")
        problems.extend(f"    mypy: {m}" for m in messages.get(line, []))

    n_want = sum(sum(c.values()) for c in expected.values())
    n_have = sum(sum(c.values()) for c in got.values())
    assert not problems and n_want == n_have, (
        f"{path.name}: {n_have} mypy error(s) for {n_want} '# E:' marker code(s)\n" + "\n".join(problems)
    )


def _codes(counter: Counter[str]) -> str:
    return ", ".join(sorted(counter.elements()))


def test_marker_parser() -> None:
    src = 'f(1)  # E: arg-type\ng("# E: misc")\nh(x)  # E: call-overload, call-overload\nk()  # E\n'
    assert _markers_in(src) == {1: Counter(["arg-type"]), 3: Counter({"call-overload": 2})}
