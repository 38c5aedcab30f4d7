"""Plain-text derivation tables (aligned columns, no colour, one row per leaf), and the
table an error shows of the derivation so far (see `_scene`, which builds errors)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ._errors import Place
from ._shape import Shape
from ._steps import ArgRows, BaseStep, MapStep, ShardRow, ShardStep, SpecRow, SpecRows, Step
from ._text import format_shape, int_text


class _Shapes:
    """Shape texts, each formatted once per table (a tree of 16,000 leaves has a few shapes)."""

    __slots__ = ("_texts",)

    def __init__(self) -> None:
        self._texts: dict[Shape | None, str] = {None: "-"}

    def __call__(self, s: Shape | None) -> str:
        text = self._texts.get(s)
        if text is None:
            text = self._texts[s] = format_shape(s)  # type: ignore[arg-type]  # None is in the dict
        return text


def _axis(a: int | None) -> str:
    return "None" if a is None else int_text(a)


Columns = Callable[[Sequence[int]], list[list[str]]]
"""The cells of the given body rows, column by column."""

Focus = Callable[[str], bool]
"""Whether the row of an argument (by label) is one an error is about."""


@dataclass(frozen=True, slots=True)
class _Rows:
    """A table before it is rendered: its header, how many body rows, and how to make
    the cells of some of them; `marked` rows (an error's conflicts) are shown whatever
    the limit."""

    header: list[str]
    count: int
    columns: Columns
    marked: Collection[int] = ()


def table(rows: _Rows, limit: int | None = None) -> str:
    """Left-aligned columns separated by two spaces; trailing blanks trimmed. With `limit`,
    at most that many body rows, or the marked ones only (an error's conflicts), and a
    line saying how many were left out: a message about one leaf of 16,000 stays short,
    and only the rows shown are ever formatted."""
    shown: Sequence[int] = range(rows.count)
    left_out = 0
    if limit is not None and rows.count > limit:
        shown = sorted(rows.marked) if rows.marked else range(limit)
        left_out = rows.count - len(shown)
    columns = rows.columns(shown)
    widths = [
        max(len(name), *map(len, column)) if column else len(name)
        for name, column in zip(rows.header, columns, strict=True)
    ]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format  # one call lays out a whole row
    lines = [line(*rows.header).rstrip(), *(line(*cells).rstrip() for cells in zip(*columns, strict=True))]
    if left_out:
        lines.append(f"... and {left_out} more rows (the prediction's table has them all)")
    return "\n".join(lines)


def _unit(innermost: MapStep) -> str:
    """What the mapped function sees: one example (vmap) or one device's block (pmap)."""
    return "per-device" if innermost.transform.startswith("pmap(") else "per-example"


def _arg_table(maps: Sequence[MapStep], base: BaseStep | None, focus: Focus | None, limit: int | None) -> _Rows:
    header = ["arg", "batched shape"] if maps else ["arg", "shape"]
    for i in range(len(maps)):
        tag = "" if len(maps) == 1 else f"[{i + 1}]"
        header += [f"in_axis{tag}", _unit(maps[-1]) if i == len(maps) - 1 else f"shape{tag}"]
    signature = base is not None and base.source == "signature"
    if signature:
        header += ["signature", "binds"]
    levels = [ArgRows.of(m.args) for m in maps]
    by_level = [_row_of(rows.labels) for rows in levels]  # dicts: linear in the leaves
    spec = SpecRows.of(base.args) if base is not None else SpecRows()
    at = _row_of(spec.labels)
    labels = list(dict.fromkeys([label for level in by_level for label in level] + list(at)))

    def columns(shown: Sequence[int]) -> list[list[str]]:
        shape = _Shapes()
        names = [labels[i] for i in shown]
        out = [names]
        for k, (args, level) in enumerate(zip(levels, by_level, strict=True)):
            at_level = [level.get(name) for name in names]
            if k == 0:
                out.append([shape(args.shapes[j]) if j is not None else "" for j in at_level])
            by_keyword = maps[k].keywords
            out.append(
                [
                    "" if j is None else _axis(args.axes[j]) + (" (keyword)" if _root(names[n]) in by_keyword else "")
                    for n, j in enumerate(at_level)
                ]
            )
            out.append([shape(args.per_example[j]) if j is not None else "" for j in at_level])
        rows = [at.get(name) for name in names]
        if not maps:
            out.append([shape(spec.shapes[k]) if k is not None else "" for k in rows])
        if signature:
            out.append([spec.specs[k] if k is not None else "" for k in rows])
            out.append([_binds_cell(spec, k) if k is not None else "" for k in rows])
        return out

    # The rows marked as conflicts (`<--` in the last cell) show whatever the limit.
    marked = {k for k, note in enumerate(spec.notes) if "<--" in note or "<--" in spec.binds[k]}
    shown = [i for i, label in enumerate(labels) if at.get(label) in marked] if marked and signature else []
    return _Rows(header, len(labels), columns, shown or _focused(labels, focus, limit))


def _root(label: str) -> str:
    """The argument a leaf's label belongs to (`params` for `params['w']`)."""
    return label.partition("[")[0]


def _row_of(labels: Sequence[str]) -> dict[str, int]:
    """Each label's row: the last one with it, as a dict of rows by label keeps it."""
    return {label: k for k, label in enumerate(labels)}


def _binds_cell(spec: SpecRows, k: int) -> str:
    note = spec.notes[k]
    return (spec.binds[k] + ("  " + note if note else "")).strip()


def _out_table(maps: Sequence[MapStep], base: BaseStep | None) -> _Rows:
    inner_first = list(reversed(maps))
    header = ["output", _unit(maps[-1]) if maps else "per-example"]
    signature = base is not None and base.source == "signature"
    if signature:
        header.insert(1, "signature")
    for i in range(len(inner_first)):
        tag = "" if len(maps) == 1 else f"[{len(maps) - i}]"
        header += [f"out_axis{tag}", "batched shape" if i == len(maps) - 1 else f"shape{tag}"]
    spec_outs: dict[str, SpecRow] = {r.label: r for r in base.outs} if base is not None else {}
    by_level = [{r.label: r for r in m.outs} for m in inner_first]
    labels = list(dict.fromkeys(list(spec_outs) + [label for level in by_level for label in level]))

    def columns(shown: Sequence[int]) -> list[list[str]]:
        shape = _Shapes()
        names = [labels[i] for i in shown]
        specs = [spec_outs.get(name) for name in names]
        out = [names]
        if signature:
            out.append([r.spec if r else "" for r in specs])
        firsts = [next((level[name] for level in by_level if name in level), None) for name in names]
        out.append(
            [shape(r.shape) if r else shape(f.per_example if f else None) for r, f in zip(specs, firsts, strict=True)]
        )
        for level in by_level:
            outs = [level.get(name) for name in names]
            out.append([_axis(o.axis) if o else "" for o in outs])
            out.append([shape(o.shape) if o else "" for o in outs])
        return out

    return _Rows(header, len(labels), columns)


def _focused(labels: Sequence[str], focus: Focus | None, limit: int | None) -> list[int]:
    """The rows an error is about, when the table is too long to show whole."""
    if focus is None or limit is None or len(labels) <= limit:
        return []
    return [i for i, label in enumerate(labels) if focus(label)]


def _shard_rows(step: ShardStep, focus: Focus | None = None, limit: int | None = None) -> tuple[_Rows, _Rows]:
    """Global shape -> spec -> per-device block for each argument, and back for outputs."""

    def columns(rows: Sequence[ShardRow], global_first: bool) -> Callable[[Sequence[int]], list[list[str]]]:
        """label, shape, spec, shape: global then per-device for arguments, the other way for outputs."""

        def make(shown: Sequence[int]) -> list[list[str]]:
            shape = _Shapes()
            picked = [rows[i] for i in shown]
            first = [shape(r.shape if global_first else r.block) for r in picked]
            last = [shape(r.block if global_first else r.shape) for r in picked]
            return [[r.label for r in picked], first, [r.spec for r in picked], last]

        return make

    marked = _focused([r.label for r in step.args], focus, limit)
    args = _Rows(
        ["arg", "global shape", "in_spec", "per-device block"], len(step.args), columns(step.args, True), marked
    )
    outs = _Rows(["output", "per-device block", "out_spec", "global shape"], len(step.outs), columns(step.outs, False))
    return args, outs


def _shard_section(step: ShardStep, outputs: bool, limit: int | None, focus: Focus | None = None) -> list[str]:
    parts = [f"{step.transform}: {step.mesh_text()}"]
    args, outs = _shard_rows(step, focus, limit)
    parts.append(table(args, limit))
    if outputs and step.outs:
        parts.append(table(outs, limit))
    return parts


@dataclass(frozen=True, slots=True)
class Grid:
    """One derivation table as cells: what the text table shows, for other renderings
    (`_html`). `marked` are the body rows an error is about; `left_out` counts the rows
    not shown (a tree of 16,000 leaves shows the first `limit`)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    marked: frozenset[int] = frozenset()
    left_out: int = 0


def _grid(title: str, rows: _Rows, limit: int | None) -> Grid:
    shown: Sequence[int] = range(rows.count)
    if limit is not None and rows.count > limit:
        shown = sorted({*range(limit), *rows.marked})
    columns = rows.columns(shown)
    cells = tuple(zip(*columns, strict=True)) if columns and shown else ()
    marked = frozenset(k for k, i in enumerate(shown) if i in set(rows.marked))
    return Grid(title, tuple(rows.header), cells, marked, rows.count - len(shown))


def derivation_grids(steps: Sequence[Step], *, outputs: bool = True, limit: int | None = None) -> list[Grid]:
    """The tables `render_steps` writes, as cells (titles are its section lines)."""
    maps = [s for s in steps if isinstance(s, MapStep)]
    base = next((s for s in steps if isinstance(s, BaseStep)), None)
    grids = []
    for shard in (s for s in steps if isinstance(s, ShardStep)):
        args, outs = _shard_rows(shard)
        grids.append(_grid(f"{shard.transform}: {shard.mesh_text()}", args, limit))
        if outputs and shard.outs:
            grids.append(_grid("outputs", outs, limit))
    if grids and not maps and (base is None or base.source == "traced"):
        return grids
    title = ", ".join(
        ("batch size " if len(maps) == 1 else f"[{i + 1}] {m.transform}: batch size ")
        + ("undetermined" if m.axis_size is None else f"{m.symbol}={m.axis_size}")
        for i, m in enumerate(maps)
    )
    if maps or (base is not None and base.args):
        grids.append(_grid(title or "arguments", _arg_table(maps, base, None, limit), limit))
    has_outs = (base is not None and base.outs) or any(m.outs for m in maps)
    if outputs and has_outs:
        grids.append(_grid("outputs", _out_table(maps, base), limit))
    return grids


def render_steps(
    steps: Sequence[Step], *, outputs: bool = True, limit: int | None = None, focus: Focus | None = None
) -> str:
    """The derivation table of a prediction (or, with `limit` rows per table, of the part
    reached before an error, where a long table shows the rows `focus` picks)."""
    maps = [s for s in steps if isinstance(s, MapStep)]
    base = next((s for s in steps if isinstance(s, BaseStep)), None)
    parts = []
    for shard in (s for s in steps if isinstance(s, ShardStep)):
        parts += _shard_section(shard, outputs, limit, focus)
    if len(parts) and not maps and (base is None or base.source == "traced"):
        return "\n".join(parts)  # the blocks are the whole story
    for i, m in enumerate(maps):
        size = "undetermined" if m.axis_size is None else f"{m.symbol}={m.axis_size}"
        # One level: the transform is already in the headline; nested: name each level.
        parts.append(f"batch size {size}" if len(maps) == 1 else f"[{i + 1}] {m.transform}: batch size {size}")
    if maps or (base is not None and base.args):
        parts.append(table(_arg_table(maps, base, focus, limit), limit))
    has_outs = (base is not None and base.outs) or any(m.outs for m in maps)
    if outputs and has_outs:
        parts.append(table(_out_table(maps, base), limit))
    return "\n".join(parts)


def table_so_far(trail: Sequence[Step], focus: Focus | None = None) -> str | None:
    """The input side of a derivation, for an error raised part-way through it."""
    return render_steps(trail, outputs=False, limit=ERROR_TABLE_ROWS, focus=focus) or None


ERROR_TABLE_ROWS = 12
"""Body rows an error's table shows; a longer one shows only the rows the error names."""


def named_in(problem: str, places: Sequence[Place]) -> Focus:
    """Whether a row's label is one the error is about: a place's, or named in the
    problem as a whole label (`x` is not named by `x[2][3]`)."""
    labels = {p.arg for p in places}

    def named(label: str) -> bool:
        if label in labels:
            return True
        # Only a label the problem's text holds is matched as a whole word: asked of every
        # row of a long table, a pattern compiled per label would cost the table its time.
        return label in problem and re.search(rf"(?<![\w\]'\[]){re.escape(label)}(?![\w\[])", problem) is not None

    return named


_TABLES: ContextVar[bool] = ContextVar("axischeck_error_tables", default=True)
"""Whether errors render their table: not while the fix search only asks whether an
option works (its errors are never shown; rendering them cost most of a failure)."""


def tables_read() -> bool:
    """Whether errors raised here render their table (not within `tables_unread`)."""
    return _TABLES.get()


@contextmanager
def tables_unread() -> Iterator[None]:
    """Within: engine errors carry no table (nobody will read it)."""
    token = _TABLES.set(False)
    try:
        yield
    finally:
        _TABLES.reset(token)
