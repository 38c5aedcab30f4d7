"""Predictions, explanations and errors as HTML, for Jupyter (`_repr_html_`).

Built from the facts the text is built from, never from the text: the derivation tables
are `_explain`'s grids (the same cells as the text tables), the drawings come from the
derivation steps (each argument's shape and mapped axis; for shard_map, the mesh and each
argument's spec and block), and an error's conflicting pair from the `Place`s it carries.

Each argument gets a drawing of its axes: one box per axis, labelled with its size, the
mapped axis filled (`MAPPED`) and named, and an axis an error names drawn in `CONFLICT`.
For pmap the mapped axis is split over the devices; for shard_map and smap the mesh is
drawn with one device's cell filled, and each argument's split axes say which mesh axes
split them, with one device's block. No script, no external resource: the HTML is
self-contained and safe to keep in a saved notebook.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from ._errors import AxisCheckError, Place
from ._explain import Grid, derivation_grids
from ._steps import MapStep, ShardStep, Step
from ._text import format_shape


class Derived(Protocol):
    """What a drawing reads of a prediction: its derivation steps (and its repr, the headline)."""

    @property
    def steps(self) -> tuple[Step, ...]: ...


MAPPED = "#2563eb"  # the mapped axis (and one device's block)
CONFLICT = "#dc2626"  # an axis an error names
SPLIT = "#7c3aed"  # an axis a mesh axis splits
PLAIN = "#e5e7eb"
INK = "#111827"
MUTED = "#6b7280"

ROW_LIMIT = 50
"""Body rows a table shows; a longer one shows these and the rows an error names."""

DRAWN = 12
"""Arguments drawn at most (a pytree of 16,000 leaves draws its first ones and says so)."""

_STYLE = (
    "<style>"
    ".axischeck{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;color:#111827;"
    "line-height:1.4}"
    ".axischeck .ax-head{font-weight:600;margin:2px 0 6px}"
    ".axischeck .ax-head.ax-error{color:#b91c1c}"
    ".axischeck table{border-collapse:collapse;margin:4px 0 8px}"
    ".axischeck th,.axischeck td{border:1px solid #d1d5db;padding:2px 8px;text-align:left;"
    "font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}"
    ".axischeck th{background:#f3f4f6}"
    ".axischeck tr.ax-conflict td{background:#fee2e2;font-weight:600}"
    ".axischeck .ax-title{color:#374151;margin-top:6px}"
    ".axischeck .ax-note{color:#374151;margin:2px 0}"
    ".axischeck .ax-fix{color:#065f46;font-weight:600;margin:4px 0}"
    ".axischeck .ax-hint{color:#1e3a8a;margin:4px 0}"
    ".axischeck .ax-drawings{display:flex;flex-wrap:wrap;gap:10px;margin:6px 0}"
    ".axischeck svg text{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}"
    "</style>"
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# ----------------------------------------------------------------------- tables


def grid_html(grid: Grid, named: frozenset[str] = frozenset()) -> str:
    """One derivation table, its conflicting rows highlighted (`ax-conflict`): those the
    table marks (a signature's conflict) and those of the arguments an error names."""
    head = "".join(f"<th>{_e(h)}</th>" for h in grid.header)
    body = []
    for k, row in enumerate(grid.rows):
        marked = " class='ax-conflict'" if k in grid.marked or (row and row[0] in named) else ""
        body.append(f"<tr{marked}>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>")
    more = f"<div class='ax-note'>... and {grid.left_out} more rows</div>" if grid.left_out else ""
    title = f"<div class='ax-title'>{_e(grid.title)}</div>" if grid.title else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


# --------------------------------------------------------------------- drawings


@dataclass(frozen=True, slots=True)
class Axis:
    """One box of a drawing: an axis's size and how it is drawn."""

    size: str
    fill: str = PLAIN
    note: str = ""  # under the box: "mapped", "÷ 'data' (4)"


def axes_svg(label: str, shape_text: str, axes: Sequence[Axis], caption: str = "") -> str:
    """An array's axes as a row of boxes (width grows with the log of the size)."""
    widths = [
        max(34, min(90, 22 + 12 * math.log2(max(2, int(a.size) if a.size.isdigit() else 2))), 6.2 * len(a.note) + 8)
        for a in axes
    ]
    width = int(max(sum(widths) + 4 * len(axes) + 16, 8 * (len(label) + len(shape_text) + 4), 8 * len(caption) + 16))
    parts = [
        f"<text x='8' y='16' font-size='12' fill='{INK}'>{_e(label)}"
        f" <tspan fill='{MUTED}'>{_e(shape_text)}</tspan></text>"
    ]
    x = 8.0
    for axis, w in zip(axes, widths, strict=True):
        ink = "#ffffff" if axis.fill in (MAPPED, CONFLICT, SPLIT) else INK
        parts.append(
            f"<rect x='{x:.0f}' y='24' width='{w:.0f}' height='26' rx='3' fill='{axis.fill}' stroke='#374151'"
            f" stroke-width='1'><title>{_e(axis.note or 'axis')}</title></rect>"
            f"<text x='{x + w / 2:.0f}' y='41' font-size='12' text-anchor='middle' fill='{ink}'>{_e(axis.size)}</text>"
        )
        if axis.note:
            color = axis.fill if axis.fill != PLAIN else MUTED
            parts.append(
                f"<text x='{x + w / 2:.0f}' y='64' font-size='10' text-anchor='middle' fill='{color}'>"
                f"{_e(axis.note)}</text>"
            )
        x += w + 4
    if not axes:
        parts.append(f"<text x='8' y='41' font-size='11' fill='{MUTED}'>a scalar: no axes</text>")
    if caption:
        parts.append(f"<text x='8' y='82' font-size='11' fill='{MUTED}'>{_e(caption)}</text>")
    height = 90 if caption else 72
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' class='ax-array' width='{width}' height='{height}'"
        f" viewBox='0 0 {width} {height}' role='img' aria-label='{_e(label)} {_e(shape_text)}'>"
        + "".join(parts)
        + "</svg>"
    )


def mesh_svg(mesh: Sequence[tuple[str, int]], unit: str = "device") -> str:
    """The mesh as a grid of devices (its first two axes; more axes are named below),
    one device's cell filled: the block every other drawing shows."""
    if not mesh:
        return ""
    # One axis is drawn as a row of devices; two or more as a grid of the first two.
    rows_axis = mesh[0] if len(mesh) > 1 else None
    cols_axis = mesh[1] if len(mesh) > 1 else mesh[0]
    rows = rows_axis[1] if rows_axis is not None else 1
    cols = cols_axis[1]
    shown_r, shown_c = min(rows, 8), min(cols, 16)
    cell = 18
    left, top = (70 if rows_axis is not None else 8), 30
    width = max(left + shown_c * cell + 20, 220)
    height = top + shown_r * cell + (34 if len(mesh) > 2 else 20)
    parts = [
        f"<text x='8' y='16' font-size='12' fill='{INK}'>mesh "
        + _e(", ".join(f"{name!r}: {size}" for name, size in mesh))
        + "</text>",
        f"<text x='{left}' y='{top - 4}' font-size='10' fill='{MUTED}'>{_e(cols_axis[0])} →</text>",
    ]
    if rows_axis is not None:
        parts.append(f"<text x='8' y='{top + 12}' font-size='10' fill='{MUTED}'>{_e(rows_axis[0])} ↓</text>")
    for r in range(shown_r):
        for c in range(shown_c):
            fill = MAPPED if r == 0 and c == 0 else PLAIN
            parts.append(
                f"<rect x='{left + c * cell}' y='{top + r * cell}' width='{cell - 2}' height='{cell - 2}'"
                f" fill='{fill}' stroke='#9ca3af'><title>{unit} ({r}, {c})</title></rect>"
            )
    if rows > shown_r or cols > shown_c:
        parts.append(
            f"<text x='{left + shown_c * cell + 4}' y='{top + shown_r * cell}' font-size='10' fill='{MUTED}'>…</text>"
        )
    if len(mesh) > 2:
        more = ", ".join(f"{name!r}: {size}" for name, size in mesh[2:])
        parts.append(f"<text x='8' y='{height - 8}' font-size='10' fill='{MUTED}'>and {_e(more)}</text>")
    parts.append(
        f"<text x='{left}' y='{top + shown_r * cell + 12}' font-size='10' fill='{MAPPED}'>one {unit}'s block</text>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' class='ax-mesh' width='{width}' height='{height + 8}'"
        f" viewBox='0 0 {width} {height + 8}' role='img' aria-label='mesh'>" + "".join(parts) + "</svg>"
    )


def _conflict_axes(label: str, places: Sequence[Place]) -> set[int]:
    """The batched axes of `label` an error names."""
    found: set[int] = set()
    for p in places:
        if p.arg != label:
            continue
        axis = p.batched_axis if p.batched_axis is not None else p.axis
        if axis is not None:
            run = len(p.size) if isinstance(p.size, tuple) else 1
            found.update(range(axis, axis + run))
    return found


def _map_drawings(step: MapStep, places: Sequence[Place]) -> list[str]:
    devices = step.transform.startswith("pmap(")
    drawings = []
    for row in list(step.args)[:DRAWN]:
        if row.shape is None:
            continue
        rank = len(row.shape)
        mapped = None if row.axis is None or not -rank <= row.axis < max(rank, 1) else row.axis % max(rank, 1)
        conflicts = _conflict_axes(row.label, places)
        axes = []
        for i, size in enumerate(row.shape):
            if i in conflicts:
                axes.append(Axis(str(size), CONFLICT, "conflict" if i != mapped else "mapped: conflict"))
            elif i == mapped:
                axes.append(Axis(str(size), MAPPED, f"split over {size} devices" if devices else "mapped"))
            else:
                axes.append(Axis(str(size)))
        unit = "per device" if devices else "per example"
        caption = f"{unit}: {format_shape(row.per_example)}" if row.per_example is not None else ""
        if row.axis is None:
            caption = "not mapped: passed whole" + (" to every device" if devices else " to every call")
        drawings.append(axes_svg(row.label, format_shape(row.shape), axes, caption))
    if devices and step.axis_size is not None:
        drawings.insert(0, mesh_svg([("devices", step.axis_size)]))
    return drawings


def _shard_drawings(step: ShardStep, places: Sequence[Place]) -> list[str]:
    sizes = dict(step.mesh)
    drawings = [mesh_svg(step.mesh)]
    for row in step.args[:DRAWN]:
        if row.shape is None:
            continue
        names = row.split or ()
        conflicts = _conflict_axes(row.label, places)
        axes = []
        for i, size in enumerate(row.shape):
            split = names[i] if i < len(names) else ()
            if i in conflicts:
                axes.append(Axis(str(size), CONFLICT, "conflict"))
            elif split:
                parts = math.prod(sizes.get(n, 1) for n in split)
                over = " × ".join(f"{n!r}" for n in split)
                axes.append(Axis(str(size), SPLIT, f"÷ {over} ({parts})"))
            else:
                axes.append(Axis(str(size)))
        caption = f"one device's block: {format_shape(row.block)}" if row.block is not None else ""
        if row.spec == "static":
            caption = "in_specs None: passed whole to every device"
        drawings.append(axes_svg(f"{row.label}  {row.spec}", format_shape(row.shape), axes, caption))
    return drawings


def drawings(steps: Sequence[Step], places: Sequence[Place] = ()) -> list[str]:
    """The drawings of the outermost level: its mesh (if any) and each argument's axes."""
    for step in steps:
        if isinstance(step, ShardStep):
            return _shard_drawings(step, places)
        if isinstance(step, MapStep):
            return _map_drawings(step, places)
    return []


# ------------------------------------------------------------------------ pages


def _page(head: str, body: Sequence[str], error: bool = False) -> str:
    kind = " ax-error" if error else ""
    return f"<div class='axischeck'>{_STYLE}<div class='ax-head{kind}'>{_e(head)}</div>{''.join(body)}</div>"


def _derivation(steps: Sequence[Step], places: Sequence[Place] = (), *, outputs: bool = True) -> list[str]:
    pictures = drawings(steps, places)
    named = frozenset(p.arg for p in places)
    body = [grid_html(g, named) for g in derivation_grids(steps, outputs=outputs, limit=ROW_LIMIT)]
    if pictures:
        body.insert(0, "<div class='ax-drawings'>" + "".join(pictures) + "</div>")
    return body


def prediction_html(prediction: Derived, head: str | None = None) -> str:
    """A prediction: its headline, the drawings of its arguments and its tables."""
    return _page(head or repr(prediction), _derivation(prediction.steps))


def error_html(err: AxisCheckError) -> str:
    """An error: its headline, the drawings with the conflicting axes, the table so far
    with the conflicting rows highlighted, the places that disagree, notes, and the checked
    fix or the engine's hint, as the text gives them."""
    head = f"{type(err).__name__}: " + (f"{err.transform}: {err.problem}" if err.transform else err.problem)
    steps: Sequence[Step] = err.steps
    body = _derivation(steps, err.places, outputs=False) if steps else []
    if not steps and err.table:
        body.append(f"<pre>{_e(err.table)}</pre>")
    disagreement = err.disagreement()
    if disagreement is not None:
        body.append(f"<div class='ax-note'>{_e(disagreement)}</div>")
    else:
        body.extend(f"<div class='ax-note'>{_e(p.describe())}</div>" for p in err.places)
    body.extend(f"<div class='ax-note'>{_e(note)}</div>" for note in err.notes)
    if err.fix:
        body.append(f"<div class='ax-fix'>Fix: {_e(err.fix)}</div>")
    elif err.hint:
        body.append(f"<div class='ax-hint'>Hint: {_e(err.hint)}</div>")
    return _page(head, body, error=True)


@dataclass(frozen=True, slots=True)
class ErrorView:
    """What an engine error draws itself with (`AxisCheckError._repr_html_`)."""

    def html(self, err: AxisCheckError) -> str:
        return error_html(err)


ERROR_VIEW = ErrorView()


class Explanation(str):
    """What `explain()` returns: its text, unchanged (a `str`, equal to the plain text),
    which Jupyter shows as HTML (`_repr_html_`): the derivation table with the conflict
    highlighted, and a drawing of each argument's axes.

    ```python
    >>> f = ax.vmap(jnp.add)
    >>> text = f.explain((16, 3), (16, 3))
    >>> isinstance(text, str), text == str(text), "<svg" in text._repr_html_()
    (True, True, True)
    ```
    """

    __source: Derived | AxisCheckError | None
    __head: str | None

    def __new__(cls, text: str, source: Derived | AxisCheckError | None = None, head: str | None = None) -> Self:
        new = super().__new__(cls, text)
        new.__source = source
        new.__head = head
        return new

    def _repr_html_(self) -> str:
        """The explanation as HTML (what Jupyter shows for it)."""
        source = self.__source
        if isinstance(source, AxisCheckError):
            return error_html(source)
        if source is not None:
            return prediction_html(source, self.__head)
        return _page(self.splitlines()[0] if self else "", [f"<pre>{_e(self)}</pre>"])

    def __reduce__(self) -> tuple[Any, ...]:
        return (Explanation, (str(self), self.__source, self.__head))
