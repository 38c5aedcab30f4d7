"""Plain-text derivation tables (aligned columns, no colour, one row per leaf), and the
one way the engine builds an error: from the scene where it found the mistake."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from ._errors import AxisCheckError
from ._shape import Shape, format_shape
from ._steps import BaseStep, MapStep, ShardStep, SpecRow, Step


def _shape(s: Shape | None) -> str:
    return "-" if s is None else format_shape(s)


def _axis(a: int | None) -> str:
    return "None" if a is None else str(a)


def table(rows: Sequence[Sequence[str]], limit: int | None = None) -> str:
    """Left-aligned columns separated by two spaces; trailing blanks trimmed. With `limit`,
    at most that many body rows besides the ones marked `<--` (an error's conflicts), and
    a line saying how many were left out: a message about one leaf of 16,000 stays short."""
    body = list(rows[1:])
    left_out = 0
    if limit is not None and len(body) > limit:
        kept = [r for i, r in enumerate(body) if i < limit or "<--" in r[-1]]
        left_out = len(body) - len(kept)
        body = kept
    shown = [rows[0], *body]
    widths = [max(len(r[i]) for r in shown) for i in range(len(shown[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in shown]
    if left_out:
        lines.append(f"... and {left_out} more rows (the prediction's table has them all)")
    return "\n".join(lines)


def _unit(innermost: MapStep) -> str:
    """What the mapped function sees: one example (vmap) or one device's block (pmap)."""
    return "per-device" if innermost.transform.startswith("pmap(") else "per-example"


def _arg_table(maps: Sequence[MapStep], base: BaseStep | None) -> list[list[str]]:
    header = ["arg", "batched shape"] if maps else ["arg", "shape"]
    for i in range(len(maps)):
        tag = "" if len(maps) == 1 else f"[{i + 1}]"
        header += [f"in_axis{tag}", _unit(maps[-1]) if i == len(maps) - 1 else f"shape{tag}"]
    if base is not None and base.source == "signature":
        header += ["signature", "binds"]
    by_level = [{r.label: r for r in m.args} for m in maps]  # dicts: linear in the leaves
    spec_rows = {r.label: r for r in base.args} if base is not None else {}
    labels = list(dict.fromkeys([label for level in by_level for label in level] + list(spec_rows)))
    rows = [header]
    for label in labels:
        row = [label]
        for i, level in enumerate(by_level):
            arg = level.get(label)
            if i == 0:
                row.append(_shape(arg.shape) if arg else "")
            row += [_axis(arg.axis), _shape(arg.per_example)] if arg else ["", ""]
        if not maps:
            sr = spec_rows.get(label)
            row.append(_shape(sr.shape) if sr else "")
        if base is not None and base.source == "signature":
            sr = spec_rows.get(label)
            row += [sr.spec, (sr.binds + ("  " + sr.note if sr.note else "")).strip()] if sr else ["", ""]
        rows.append(row)
    return rows


def _out_table(maps: Sequence[MapStep], base: BaseStep | None) -> list[list[str]]:
    inner_first = list(reversed(maps))
    header = ["output", _unit(maps[-1]) if maps else "per-example"]
    if base is not None and base.source == "signature":
        header.insert(1, "signature")
    for i in range(len(inner_first)):
        tag = "" if len(maps) == 1 else f"[{len(maps) - i}]"
        header += [f"out_axis{tag}", "batched shape" if i == len(maps) - 1 else f"shape{tag}"]
    rows = [header]
    spec_outs: dict[str, SpecRow] = {r.label: r for r in base.outs} if base is not None else {}
    by_level = [{r.label: r for r in m.outs} for m in inner_first]
    labels = list(dict.fromkeys(list(spec_outs) + [label for level in by_level for label in level]))
    for label in labels:
        sr = spec_outs.get(label)
        first = next((level[label] for level in by_level if label in level), None)
        row = [label]
        if base is not None and base.source == "signature":
            row.append(sr.spec if sr else "")
        row.append(_shape(sr.shape) if sr else _shape(first.per_example if first else None))
        for level in by_level:
            out = level.get(label)
            row += [_axis(out.axis), _shape(out.shape)] if out else ["", ""]
        rows.append(row)
    return rows


def _shard_section(step: ShardStep, outputs: bool, limit: int | None) -> list[str]:
    """Global shape -> spec -> per-device block for each argument, and back for outputs."""
    parts = [f"{step.transform}: {step.mesh_text()}"]
    rows = [["arg", "global shape", "in_spec", "per-device block"]]
    rows += [[r.label, _shape(r.shape), r.spec, _shape(r.block)] for r in step.args]
    parts.append(table(rows, limit))
    if outputs and step.outs:
        outs = [["output", "per-device block", "out_spec", "global shape"]]
        outs += [[r.label, _shape(r.block), r.spec, _shape(r.shape)] for r in step.outs]
        parts.append(table(outs, limit))
    return parts


def render_steps(steps: Sequence[Step], *, outputs: bool = True, limit: int | None = None) -> str:
    """The derivation table of a prediction (or, with `limit` rows per table, of the part
    reached before an error)."""
    maps = [s for s in steps if isinstance(s, MapStep)]
    base = next((s for s in steps if isinstance(s, BaseStep)), None)
    parts = []
    for shard in (s for s in steps if isinstance(s, ShardStep)):
        parts += _shard_section(shard, outputs, limit)
    if len(parts) and not maps and (base is None or base.source == "traced"):
        return "\n".join(parts)  # the blocks are the whole story
    for i, m in enumerate(maps):
        size = "undetermined" if m.axis_size is None else f"{m.symbol}={m.axis_size}"
        # One level: the transform is already in the headline; nested: name each level.
        parts.append(f"batch size {size}" if len(maps) == 1 else f"[{i + 1}] {m.transform}: batch size {size}")
    if maps or (base is not None and base.args):
        parts.append(table(_arg_table(maps, base), limit))
    has_outs = (base is not None and base.outs) or any(m.outs for m in maps)
    if outputs and has_outs:
        parts.append(table(_out_table(maps, base), limit))
    return "\n".join(parts)


def table_so_far(trail: Sequence[Step]) -> str | None:
    """The input side of a derivation, for an error raised part-way through it."""
    return render_steps(trail, outputs=False, limit=ERROR_TABLE_ROWS) or None


ERROR_TABLE_ROWS = 40
"""Body rows an error's table shows (plus every row marked as a conflict)."""


E = TypeVar("E", bound=AxisCheckError)


@dataclass(frozen=True, slots=True)
class Scene:
    """Where the engine stands when it finds a mistake: the transform it is checking and
    the derivation so far. Every engine error is built by `error`, so each one carries
    the same facts (headline, table of the arguments so far) in the same order."""

    trail: tuple[Step, ...]
    transform: str | None = None

    def then(self, step: Step) -> Scene:
        """The same scene with one more derivation step (the rows of the current level)."""
        return Scene((*self.trail, step), self.transform)

    def error(self, cls: type[E], problem: str, **facts: Any) -> E:
        table = table_so_far(self.trail) if _TABLES.get() else None
        return cls(problem, transform=self.transform, table=table, **facts)


_TABLES: ContextVar[bool] = ContextVar("axischeck_error_tables", default=True)
"""Whether errors render their table: not while the fix search only asks whether an
option works (its errors are never shown; rendering them cost most of a failure)."""


@contextmanager
def tables_unread() -> Iterator[None]:
    """Within: engine errors carry no table (nobody will read it)."""
    token = _TABLES.set(False)
    try:
        yield
    finally:
        _TABLES.reset(token)
