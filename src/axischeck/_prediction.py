"""What a prediction found: shapes, the mapped size, and the derivation steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._shape import Shape


@dataclass(frozen=True, slots=True)
class ArgRow:
    """One argument leaf at one mapping level."""

    label: str
    shape: Shape | None  # the leaf as this level receives it; None: not an array
    axis: int | None  # the in_axes entry for it (raw, as written)
    per_example: Shape | None  # what the mapped function sees


@dataclass(frozen=True, slots=True)
class OutRow:
    """One output leaf at one mapping level."""

    label: str
    per_example: Shape
    axis: int | None  # the out_axes entry for it (raw)
    shape: Shape  # after the batch dim is inserted


@dataclass(frozen=True, slots=True)
class MapStep:
    """One `vmap` level: its description, batch size and rows."""

    transform: str
    symbol: str
    axis_size: int | None  # None: not determined (the failure was before it)
    args: tuple[ArgRow, ...]
    outs: tuple[OutRow, ...] = ()


@dataclass(frozen=True, slots=True)
class SpecRow:
    """One leaf matched against the signature (argument or output)."""

    label: str
    shape: Shape | None
    spec: str
    binds: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class BaseStep:
    """The per-example function: the signature's rows, or the traced outputs."""

    source: str  # "signature" or "traced"
    args: tuple[SpecRow, ...]
    outs: tuple[SpecRow, ...]


Step = MapStep | BaseStep


@dataclass(frozen=True, slots=True)
class Prediction:
    """The predicted outputs of a transformed call, and how they were derived.

    - `shapes`: a pytree shaped like the function's output, with `Shape` leaves.
    - `axis_size`: the mapped size of the outermost transform (None for `check`).
    - `steps`: the derivation, outermost transform first; `str(prediction)` renders it.

    ```python
    >>> pred = ax.vmap(f, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)").predict(
    ...     (16, 8, 4), (4, 16, 2), (16, 8, 2))
    >>> pred.shapes
    Shape(16, 8, 2)
    ```
    """

    shapes: Any
    axis_size: int | None
    steps: tuple[Step, ...]

    def __str__(self) -> str:
        from ._explain import render_steps

        return render_steps(self.steps)


Prediction.__module__ = "axischeck"
