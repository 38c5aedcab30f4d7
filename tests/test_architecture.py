"""The package's layers, written once, and kept: every import points down (or sideways
within a layer, without cycles).

The data flow is one way: parse -> resolve axes -> unify -> predict -> run and verify ->
explain. A module may use anything in its own layer or below; a use from below of
something above is a design mistake, whether the import is at module level or inside a
function (a lazy import hides a cycle, it does not remove it).

And one rule for the code of every module: no `eval` or `exec` (the one use, `axischeck run`
executing the program it is given as `python prog.py` does, is counted).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "axischeck"

LAYERS: list[tuple[str, set[str]]] = [
    (
        "foundation: JAX facts, values, errors",
        {"_jax_compat", "_cache", "_shape", "_text", "_option_names", "_job", "_errors", "_trees"},
    ),
    (
        "parsing: dims, axes, signatures, arguments",
        {"_dims", "_axes", "_spec", "_annotation_text", "_annotations", "_leaves", "_keys"},
    ),
    ("derivation values and their rendering", {"_steps", "_explain", "_html", "_scene", "_prediction"}),
    (
        "engine: unify, levels, traces, meshes, models, fast path, fixes",
        {
            "_unify",
            "_levels",
            "_trace",
            "_mesh",
            "_sharding",
            "_models",
            "_shard_model",
            "_fastpath",
            "_signature",
            "_infer",
            "_function",
            "_transform_models",
            "_randomness",
        },
    ),
    ("the predictor: caches and the engine for one function", {"_predictor", "_in_trace"}),
    (
        "advice: candidate fixes checked against what the program means, ranked and worded",
        {"_advice", "_suggestion", "_candidates", "_causes", "_examples", "_meaning", "_rank", "_words"},
    ),
    (
        "transforms: the drop-ins",
        {
            "_switch",
            "_options",
            "_transform",
            "_call",
            "_draws",
            "_may_draw",
            "_vmap",
            "_check",
            "_pmap",
            "_shard_map",
            "_smap",
        },
    ),
    (
        "public surface and tools",
        {
            "__init__",
            "__main__",
            "_patch",
            "_run",
            "pytest_plugin",
            "strategies",
            "testing",
            "_demo",
            "_debug",
            "_cli",
            "_lint",
            "_lsp",  # `axischeck lsp`: lint's answers in the editor
            "mypy_plugin",
            "eqx",  # axischeck.eqx / axischeck.nnx: the libraries' transforms, checked
            "nnx",
            "_libs",  # their helpers: routing, resolved calls, NNX state (_nnx_state), NNX mistakes (_nnx_mistakes)
        },
    ),
]


def _layer_of(module: str) -> int:
    for index, (_, members) in enumerate(LAYERS):
        if module in members:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")


GROUPS = {"_core": range(0, 3), "_engine": range(3, 5), "_advice": range(5, 6)}
"""The engine's folders and the layers each holds; everything else sits at the top."""


def _name(parts: tuple[str, ...]) -> str:
    """A module's name from its path inside the package: a folder of the engine holds
    modules; `_lint` (a feature in a folder) counts as one module."""
    if parts[0] in GROUPS and len(parts) > 1:
        return parts[0] if parts[1] == "__init__.py" else parts[1].removesuffix(".py")
    return parts[0].removesuffix(".py")


def _modules() -> dict[str, list[Path]]:
    """Module name -> its files."""
    found: dict[str, list[Path]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _name(path.relative_to(PACKAGE).parts)
        if name not in GROUPS:
            found.setdefault(name, []).append(path)
    return found


def _imports(paths: list[Path], own: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for each relative import."""
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        top_level = {id(node) for node in tree.body}
        folder = path.relative_to(PACKAGE).parts[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = folder[: len(folder) - (node.level - 1)] if node.level > 1 else folder
            if node.level - 1 > len(folder):
                continue
            dotted = [*base, *(node.module.split(".") if node.module else [])]
            targets = (
                [(*dotted, alias.name) for alias in node.names] if not node.module or dotted[-1] in GROUPS else [dotted]
            )
            for parts in targets:
                if not parts or parts[0] == "_lint" and own == "_lint":
                    continue
                if len(parts) > 1 and parts[0] in GROUPS:  # a module of the folder, or a name its __init__ holds
                    module = f"{parts[1]}.py" if (PACKAGE / parts[0] / f"{parts[1]}.py").exists() else "__init__.py"
                    name = _name((parts[0], module))
                else:
                    name = _name((parts[0],))
                if name not in (own, "__version__") and name not in GROUPS:
                    out.append((name, node.lineno, id(node) in top_level))
    return out


def test_folders_hold_their_layers() -> None:
    """A listing shows the layers: `_core/` the foundation and parsing, `_engine/` the
    engine and predictor, `_advice/` the advice, the top level the transforms, the public
    surface and the tools."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        name = _name(parts)
        if name in GROUPS:
            continue
        want = GROUPS.get(parts[0], range(6, len(LAYERS)))
        assert _layer_of(name) in want, f"{'/'.join(parts)} is in layer {_layer_of(name)}, not in its folder's"


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        _layer_of(module)


@pytest.mark.parametrize("module", sorted(_modules()))
def test_imports_point_down(module: str) -> None:
    mine = _layer_of(module)
    for target, line, _ in _imports(_modules()[module], module):
        assert _layer_of(target) <= mine, (
            f"{module} (layer {mine}: {LAYERS[mine][0]}) imports {target} (layer {_layer_of(target)}:"
            f" {LAYERS[_layer_of(target)][0]}) at line {line}"
        )


@pytest.mark.parametrize("lazy", [False, True], ids=["module level", "lazy and type-only too"])
def test_imports_have_no_cycle(lazy: bool) -> None:
    """No module imports another that imports it back, at module level or inside a
    function or a `TYPE_CHECKING` block (a lazy import hides a cycle, it does not remove
    it: the advice, which runs the engine, sits above it rather than being imported by
    it)."""
    modules = _modules()
    graph = {m: {t for t, _, top in _imports(paths, m) if top or lazy} for m, paths in modules.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join((*path[path.index(module) :], module)))
        if module in done:
            return
        for target in sorted(graph.get(module, ())):
            visit(target, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())


# ------------------------------------------------------------------ no eval / exec

_EVAL_EXEC = re.compile(r"\b(?:eval|exec)\s*\(")


def _code_only(source: str) -> str:
    """The source without comments and string literals (docstrings included)."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            continue
        kept.append(tok.string)
    return " ".join(kept)


def test_the_eval_exec_pattern_itself() -> None:
    for bad in ["eval(x)", "exec (code)", "builtins.eval(s)", "y = eval(\n s)", "exec(compile(s, f, 'exec'))"]:
        assert _EVAL_EXEC.search(bad), bad
    for fine in [
        "jax.eval_shape(f)",
        "evaluate(x)",
        "ast.literal_eval(s)",
        "self.evaluation",
        "execute(x)",
        "eval_per_example(fn)",
        "retrieval(x)",
        "exec_time = 1",
    ]:
        assert not _EVAL_EXEC.search(fine), fine


def test_no_eval_or_exec_in_the_package() -> None:
    """Not even `axischeck run`: the program it is given is read, compiled and run by the
    import system's own loader, as any module is."""
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        source = path.read_text(encoding="utf-8")
        assert not _EVAL_EXEC.findall(_code_only(source)), f"{path.name}: {_EVAL_EXEC.search(_code_only(source))}"
        uses = [
            node
            for node in ast.walk(ast.parse(source))
            if (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None)
            in {"eval", "exec"}
        ]
        assert not uses, f"{path.name}:{[getattr(n, 'lineno', '?') for n in uses]} uses eval/exec"
