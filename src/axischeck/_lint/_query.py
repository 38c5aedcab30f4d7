"""What lint knows about one file's transforms, asked by position: the shapes behind a hover.

An editor asks about a place in a file: a transform (`jax.vmap(f, in_axes=(0, 1))`), the
function it returns (`g` in `g = jax.vmap(...)`, a decorated `def`), or a call of that
function (`g(x, y)`). The answer is what lint reads from the file, nothing more: each
argument's mapped axis, its batched shape where the file states it (`jnp.ones((16, 8))`),
its per-example shape (the batched one without the mapped axis) and the dims it declares
(`signature=` or `Annotated[Array, "a b"]`), and the result's shapes where the declared
output's dims are all bound by the arguments. What the file does not state is "unknown":
never a guess.

```python
>>> src = "import jax, jax.numpy as jnp\\ng = jax.vmap(lambda x: x, in_axes=1)\\ny = g(jnp.ones((3, 5)))\\n"
>>> facts = facts_at("demo.py", src, 3, 4)
>>> facts.role, [(a.name, a.axis, a.batched, a.per_example) for a in facts.arguments]
('call', [('x', '1', '(3, 5)', '(3,)')])
```
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._batch import _plain_call
from ._callee import Callee, Site, is_default
from ._checks import SiteChecker, describe
from ._config import Config, _excluded, find_pyproject, load_config
from ._flow import Use
from ._literals import UNKNOWN, axes_text
from ._module import ModuleInfo
from ._parsers import SignatureError, parse_signature
from ._project import Project, lint_files
from ._rules import Finding
from ._shapes import Array, Mesh, Spec

UNKNOWN_TEXT = "unknown"


@dataclass(frozen=True, slots=True)
class Span:
    """A range of the file: lines from 1, columns in characters from 0, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, line: int, column: int) -> bool:
        return (self.line, self.column) <= (line, column) <= (self.end_line, self.end_column)

    def size(self) -> tuple[int, int]:
        return (self.end_line - self.line, self.end_column - self.column)


@dataclass(frozen=True, slots=True)
class ArgumentFacts:
    """One argument of a mapped function, as the file states it (texts; "unknown" where not)."""

    name: str
    axis: str  # its in_axes entry ("0", "None"), or its in_specs entry for shard_map
    batched: str  # the shape passed ("(16, 8, 4)")
    per_example: str  # what one example (device, shard) sees
    declared: str  # the dims `signature=` or its annotation declares ("(a, b)")


@dataclass(frozen=True, slots=True)
class TransformFacts:
    """What lint knows at one place: the transform, its arguments and its result."""

    span: Span
    role: str  # "transform", "function" (what it returns) or "call" (a call of that)
    transform: str  # `vmap(f, in_axes=(0, 1), out_axes=0)`, as lint's messages name it
    kind: str  # "vmap", "pmap", "smap", "shard_map"
    arguments: tuple[ArgumentFacts, ...]
    out_axis: str  # out_axes (or out_specs) as written, "0" by default
    result_per_example: str
    result_batched: str
    batch_size: str

    def markdown(self) -> str:
        """The facts as a hover shows them: a headline, a table of arguments, the result."""
        unit = {"pmap": "per-device", "shard_map": "per-device", "smap": "per-shard"}.get(self.kind, "per-example")
        axis = "in_spec" if self.kind == "shard_map" else "in_axis"
        shape = "global shape" if self.kind == "shard_map" else "batched shape"
        what = {"transform": "transform", "function": "mapped function", "call": "call"}[self.role]
        lines = [f"**{_escape(self.transform)}** ({what})", ""]
        if self.arguments:
            lines += [f"| argument | {shape} | {axis} | {unit} | declared |", "|---|---|---|---|---|"]
            lines += [
                f"| {_escape(a.name)} | {a.batched} | {_escape(a.axis)} | {a.per_example} | {a.declared} |"
                for a in self.arguments
            ]
            lines.append("")
        out = "out_specs" if self.kind == "shard_map" else "out_axes"
        lines.append(
            f"result: {unit} {self.result_per_example}, {shape.split()[0]} {self.result_batched}"
            f" ({out}={_escape(self.out_axis)}); batch size {self.batch_size}"
            if self.kind != "shard_map"
            else f"result: {unit} {self.result_per_example}, global {self.result_batched} ({out}={self.out_axis})"
        )
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class CallHint:
    """The predicted shape of a mapped call's result, placed where the call ends."""

    line: int
    column: int
    text: str  # "-> (16, 8, 2)"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def settings_for(path: str) -> Config:
    """The `[tool.axischeck.lint]` that `axischeck lint` reads for `path` (the nearest
    pyproject.toml above it), or the defaults where there is none or it cannot be read."""
    try:
        return load_config(find_pyproject(Path(path).parent))
    except Exception:  # a broken pyproject.toml: `axischeck lint` says so; an editor lints with defaults
        return Config()


def findings_for(path: str, source: str, config: Config | None = None) -> list[Finding]:
    """Lint's findings in `source`, the text of the file at `path` (unsaved, perhaps), as
    `axischeck lint path` reports them: the codes `config` disables left out, nothing for
    a file it excludes. The file is linted alone: imports of other files are not followed.
    """
    config = settings_for(path) if config is None else config
    file = Path(path)
    if config.exclude:
        # A folder `axischeck lint` would not enter excludes the files in it.
        patterns = tuple(p.rstrip("/") for p in config.exclude)
        root = config.root.resolve() if config.root is not None else None
        folders = [p for p in file.resolve().parents if root is not None and p != root and p.is_relative_to(root)]
        if any(_excluded(p, patterns, config.root) for p in (file, *folders)):
            return []
    findings, _ = lint_files([file], {file: path}, {file: source})
    return [f for f in findings if f.code not in config.disable]


def facts_at(path: str, source: str, line: int, column: int) -> TransformFacts | None:
    """The facts of the innermost transform, mapped function or mapped call at (line,
    column) (line from 1, column in characters from 0), or None where there is none."""
    found = [f for f in _each_fact(path, source, (line, column)) if f.span.contains(line, column)]
    return min(found, key=lambda f: f.span.size()) if found else None


def call_hints(path: str, source: str) -> list[CallHint]:
    """Where a mapped call's batched result shape is known, a hint at the call's end."""
    hints = []
    for f in _each_fact(path, source, None):
        if f.role == "call" and UNKNOWN_TEXT not in f.result_batched:
            hints.append(CallHint(f.span.end_line, f.span.end_column, f"-> {f.result_batched}"))
    return hints


def _each_fact(path: str, source: str, near: tuple[int, int] | None) -> list[TransformFacts]:
    """Every place's facts (with `near`, only the sites and calls around that position)."""
    file = Path(path)
    project = Project([file], {file: path}, {file: source})
    collecting = gc.isenabled()
    gc.disable()
    try:
        module = project.module(file) if any(k in source for k in ("vmap", "pmap", "shard_map", "smap")) else None
        return [] if module is None else list(_facts(project, module, near))
    finally:
        project.close()
        if collecting:
            gc.enable()


def _facts(project: Project, module: ModuleInfo, near: tuple[int, int] | None) -> Iterator[TransformFacts]:
    for site in project.resolver.sites(module):
        callee = project.resolver.site_callee(site)
        checker = SiteChecker(project.resolver, site, callee, _silent)
        reader = _Reader(project, site, callee, checker)
        for span, role, use in reader.places():
            if near is None or span.contains(*near):
                yield reader.facts(span, role, use)


def _silent(*args: Any, **kwargs: Any) -> None:
    """Queries report nothing: the findings are lint's."""


class _Reader:
    """The facts of one site, at each place that shows it."""

    def __init__(self, project: Project, site: Site, callee: Callee | None, checker: SiteChecker) -> None:
        self.project, self.site, self.callee, self.checker = project, site, callee, checker
        self.kind = site.transform.kind

    def places(self) -> Iterator[tuple[Span, str, Use | None]]:
        site, module = self.site, self.site.module
        yield _span(module, site.node), "transform", None
        if site.decorated is not None:
            node = site.decorated.node
            name = getattr(node, "name", None)
            text = module.line(node.lineno)
            at = text.find(f" {name}", _char(text, node.col_offset)) + 1 if isinstance(name, str) else 0
            if at > 0:
                yield Span(node.lineno, at, node.lineno, at + len(str(name))), "function", None
        else:
            parent = module.parents.get(site.node)
            if isinstance(parent, ast.Assign):
                for target in parent.targets:
                    if isinstance(target, ast.Name):
                        yield _span(module, target), "function", None
        for use in self.checker.result_uses():
            if _plain_call(use) and use.module is module:
                yield _span(module, use.node), "call", use

    # ----------------------------------------------------------------- facts

    def facts(self, span: Span, role: str, use: Use | None) -> TransformFacts:
        site = self.site
        declared = self._declared()
        names = list(self.callee.positional) if self.callee is not None else []
        values: list[Any] = []
        if use is not None:
            args, keywords = use.arguments()
            if keywords or not use.spelled_out():
                args = []  # keyword arguments are mapped by their own rule: not read here
            values = [self.project.values.of(a, use.module) for a in args]
            names += [f"argument {i}" for i in range(len(names), len(values))]
            names = names[: len(values)]
        axes = self._axes(len(names))
        rows = []
        per_examples: list[tuple[int | None, ...] | None] = []
        sizes: set[int] = set()
        for i, name in enumerate(names):
            value = values[i] if i < len(values) else UNKNOWN
            axis = axes[i] if i < len(axes) else UNKNOWN
            batched = value.text() if isinstance(value, Array) else UNKNOWN_TEXT
            per = self._per_example(value, axis)
            per_examples.append(per)
            size = _mapped_size(value, axis)
            if size is not None:
                sizes.add(size)
            rows.append(
                ArgumentFacts(
                    name,
                    _axis_text(axis, self.kind),
                    batched,
                    _shape_text(per),
                    str(declared[0][i]) if i < len(declared[0]) and declared[0][i] is not None else UNKNOWN_TEXT,
                )
            )
        batch = sizes.pop() if len(sizes) == 1 else None
        axis_size = site.option("axis_size") if self.kind == "vmap" else UNKNOWN
        if type(axis_size) is int and (batch is None or batch == axis_size) and not sizes:
            batch = axis_size
        result = _result(declared, per_examples) if use is not None else None
        out_axis = site.option("out_specs" if self.kind == "shard_map" else "out_axes")
        if is_default(out_axis):
            out_axis = 0
        batched_result = self._batched(result, out_axis, batch)
        return TransformFacts(
            span,
            role,
            describe(site, self.callee),
            self.kind,
            tuple(rows),
            _axis_text(out_axis, self.kind),
            _shape_text(result) if self.kind in ("vmap", "pmap") else UNKNOWN_TEXT,
            _shape_text(batched_result),
            str(batch) if batch is not None and self.kind in ("vmap", "pmap") else UNKNOWN_TEXT,
        )

    def _axes(self, n: int) -> list[Any]:
        """Each positional argument's in_axes entry (in_specs entry for shard_map)."""
        if self.kind == "shard_map":
            specs = self.site.options.get("in_specs")
            value = self.project.values.of(specs, self.site.module) if specs is not None else UNKNOWN
            return list(value) if isinstance(value, tuple) else [value] * n
        if self.kind == "smap" and not self.site.has("in_axes"):
            return [UNKNOWN] * n
        value = self.checker.in_axes()
        if isinstance(value, (tuple, list)):
            return list(value)
        return [value] * n

    def _per_example(self, value: Any, axis: Any) -> tuple[int | None, ...] | None:
        if not isinstance(value, Array):
            return None
        if self.kind == "shard_map":
            return self._block(value, axis)
        if axis is None:
            return value.shape
        if type(axis) is not int or not -value.rank <= axis < value.rank or self.kind == "smap":
            return None
        axis %= value.rank
        return value.shape[:axis] + value.shape[axis + 1 :]

    def _block(self, value: Array, spec: Any) -> tuple[int | None, ...] | None:
        """One device's block: each split dimension divided by its mesh axes' sizes."""
        mesh = self.project.values.of(self.site.options.get("mesh"), self.site.module)
        if not isinstance(spec, Spec) or not isinstance(mesh, Mesh) or len(spec.entries) > value.rank:
            return None
        block: list[int | None] = []
        for dim, size in enumerate(value.shape):
            names = spec.entries[dim] if dim < len(spec.entries) else ()
            parts = 1
            for n in names:
                k = mesh.size(n)
                if k is None:
                    return None
                parts *= k
            block.append(None if size is None or size % parts else size // parts)
        return tuple(block)

    def _batched(self, result: tuple[int | None, ...] | None, out_axis: Any, batch: int | None) -> Any:
        if result is None or self.kind not in ("vmap", "pmap"):
            return None
        if out_axis is None:
            return result
        if type(out_axis) is not int or not -(len(result) + 1) <= out_axis <= len(result):
            return None
        at = out_axis % (len(result) + 1)
        return (*result[:at], batch, *result[at:])

    def _declared(self) -> tuple[list[Any], Any]:
        """The per-example dims declared for each positional parameter and the output
        (`ArraySpec`s, None where a parameter declares none or a tree)."""
        site, callee = self.site, self.callee
        value = site.option("signature")
        if isinstance(value, str):
            try:
                core = parse_signature(value)
            except SignatureError:
                core = None
            if core is not None:
                inputs = [t.leaves[0] if t.is_leaf else None for t in core.inputs]
                out = core.output.leaves[0] if core.output is not None and core.output.is_leaf else None
                return inputs, out
        if callee is None or callee.func is None or callee.sites:
            return [], None
        notes = callee.func.params.annotations
        return [_dims(notes.get(p)) for p in callee.positional], _dims(notes.get("return"))


def _dims(annotation: ast.expr | None) -> Any:
    """The `ArraySpec` of an annotation that declares one array's dims as a string."""
    if annotation is None:
        return None
    from .._core._annotation_text import dims_of_node
    from .._core._dims import parse_array_spec
    from .._core._errors import AxisCheckError

    try:
        dims = dims_of_node(annotation, "annotation")
        return parse_array_spec(dims) if isinstance(dims, str) else None
    except (AxisCheckError, ValueError, TypeError, RecursionError):
        return None


def _result(declared: tuple[list[Any], Any], shapes: list[tuple[int | None, ...] | None]) -> Any:
    """The declared output's per-example shape, its dims bound by the arguments' shapes
    (None when a dim is not bound, the arguments disagree, or a spec is variadic)."""
    from .._core._dims import Fixed, Named

    inputs, out = declared
    if out is None or out.variadic_index is not None:
        return None
    bound: dict[str, int] = {}
    for spec, shape in zip(inputs, shapes, strict=False):
        if spec is None or shape is None:
            continue
        if spec.variadic_index is not None or len(spec.dims) != len(shape):
            return None
        for dim, size in zip(spec.dims, shape, strict=True):
            if size is None:
                continue
            if isinstance(dim, Named):
                if bound.setdefault(dim.name, size) != size:
                    return None  # the arguments disagree: lint's findings say so, no shape to show
            elif isinstance(dim, Fixed) and dim.size != size:
                return None
    result = []
    for dim in out.dims:
        if isinstance(dim, Fixed):
            result.append(dim.size)
        elif isinstance(dim, Named) and dim.name in bound:
            result.append(bound[dim.name])
        else:
            return None
    return tuple(result)


def _mapped_size(value: Any, axis: Any) -> int | None:
    if isinstance(value, Array) and type(axis) is int and -value.rank <= axis < value.rank:
        size = value.shape[axis]
        return size
    return None


def _axis_text(axis: Any, kind: str) -> str:
    if axis is UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(axis, Spec):
        return axis.text()
    if kind == "shard_map" and not (axis is None or isinstance(axis, (int, tuple))):
        return UNKNOWN_TEXT
    return axes_text(axis)


def _shape_text(shape: Any) -> str:
    if not isinstance(shape, tuple) or any(s is None for s in shape):
        return UNKNOWN_TEXT
    return Array(shape).text()


def _char(text: str, byte_offset: int) -> int:
    return byte_offset if text.isascii() else len(text.encode()[:byte_offset].decode(errors="ignore"))


def _span(module: ModuleInfo, node: ast.AST) -> Span:
    line: int = getattr(node, "lineno", 1)
    end_line: int = getattr(node, "end_lineno", None) or line
    start = _char(module.line(line), getattr(node, "col_offset", 0))
    end = getattr(node, "end_col_offset", None)
    return Span(line, start, end_line, _char(module.line(end_line), end) if end is not None else start)
