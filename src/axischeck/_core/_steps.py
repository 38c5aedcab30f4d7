"""The derivation of a prediction, step by step: one `MapStep` per transform level (or a
`ShardStep` for shard_map), then the `BaseStep` of the signature or trace underneath. Plain
frozen values: the engine records them, `_explain` renders them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from ._shape import Shape


class ArgRow(NamedTuple):
    """One argument leaf at one mapping level (a level keeps them as `ArgRows`)."""

    label: str
    shape: Shape | None  # the leaf as this level receives it; None: not an array
    axis: int | None  # the in_axes entry for it (raw, as written)
    per_example: Shape | None  # what the mapped function sees


@dataclass(frozen=True, slots=True)
class ArgRows(Sequence[ArgRow]):
    """The argument rows of one level, kept column by column: a tree of 16,000 leaves
    makes four tuples per level, not 16,000 objects for the collector. Reads as a
    sequence of `ArgRow`."""

    labels: tuple[str, ...] = ()
    shapes: tuple[Shape | None, ...] = ()
    axes: tuple[int | None, ...] = ()
    per_example: tuple[Shape | None, ...] = ()

    @staticmethod
    def of(rows: Iterable[ArgRow]) -> ArgRows:
        if isinstance(rows, ArgRows):
            return rows
        rows = tuple(rows)
        return ArgRows(
            tuple(r.label for r in rows),
            tuple(r.shape for r in rows),
            tuple(r.axis for r in rows),
            tuple(r.per_example for r in rows),
        )

    def __len__(self) -> int:
        return len(self.labels)

    @overload
    def __getitem__(self, i: int) -> ArgRow: ...

    @overload
    def __getitem__(self, i: slice) -> ArgRows: ...

    def __getitem__(self, i: int | slice) -> ArgRow | ArgRows:
        if isinstance(i, slice):
            return ArgRows(self.labels[i], self.shapes[i], self.axes[i], self.per_example[i])
        return ArgRow(self.labels[i], self.shapes[i], self.axes[i], self.per_example[i])

    def __iter__(self) -> Iterator[ArgRow]:
        return map(ArgRow, self.labels, self.shapes, self.axes, self.per_example)


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
    args: Sequence[ArgRow]
    outs: tuple[OutRow, ...] = ()
    keywords: frozenset[str] = frozenset()  # arguments passed by keyword (mapped over axis 0 whatever in_axes says)

    def __post_init__(self) -> None:
        # Rows are kept as ArgRows however they were given, so equal steps compare and hash alike.
        object.__setattr__(self, "args", ArgRows.of(self.args))


@dataclass(frozen=True, slots=True)
class SpecRow:
    """One leaf matched against the signature (argument or output)."""

    label: str
    shape: Shape | None
    spec: str
    binds: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class SpecRows(Sequence[SpecRow]):
    """Rows of a signature table, kept column by column: a tree of 16,000 leaves makes
    five tuples, not 16,000 objects. Reads as a sequence of `SpecRow`."""

    labels: tuple[str, ...] = ()
    shapes: tuple[Shape | None, ...] = ()
    specs: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @staticmethod
    def of(rows: Iterable[SpecRow]) -> SpecRows:
        if isinstance(rows, SpecRows):
            return rows
        rows = tuple(rows)
        return SpecRows(
            tuple(r.label for r in rows),
            tuple(r.shape for r in rows),
            tuple(r.spec for r in rows),
            tuple(r.binds for r in rows),
            tuple(r.note for r in rows),
        )

    def __len__(self) -> int:
        return len(self.labels)

    @overload
    def __getitem__(self, i: int) -> SpecRow: ...

    @overload
    def __getitem__(self, i: slice) -> SpecRows: ...

    def __getitem__(self, i: int | slice) -> SpecRow | SpecRows:
        if isinstance(i, slice):
            return SpecRows(self.labels[i], self.shapes[i], self.specs[i], self.binds[i], self.notes[i])
        return SpecRow(self.labels[i], self.shapes[i], self.specs[i], self.binds[i], self.notes[i])

    def __iter__(self) -> Iterator[SpecRow]:
        return map(SpecRow, self.labels, self.shapes, self.specs, self.binds, self.notes)


@dataclass(frozen=True, slots=True)
class BaseStep:
    """The per-example function: the signature's rows, or the traced outputs."""

    source: str  # "signature" or "traced"
    args: Sequence[SpecRow]
    outs: Sequence[SpecRow]

    def __post_init__(self) -> None:
        # Rows are kept as SpecRows however they were given, so equal steps compare equal.
        object.__setattr__(self, "args", SpecRows.of(self.args))
        object.__setattr__(self, "outs", SpecRows.of(self.outs))


@dataclass(frozen=True, slots=True)
class ShardRow:
    """One leaf crossing `shard_map`: the global array and its per-device block."""

    label: str
    shape: Shape | None  # global: the argument as passed, or the assembled output
    spec: str  # its PartitionSpec ("static" for an in_specs None entry)
    block: Shape | None  # what each device sees (or returns)
    split: tuple[tuple[str, ...], ...] | None = None  # the mesh axes that split each dim, where checked


@dataclass(frozen=True, slots=True)
class ShardStep:
    """One `shard_map`: its description, mesh and rows."""

    transform: str
    mesh: tuple[tuple[str, int], ...]  # (axis name, size), in mesh order
    args: tuple[ShardRow, ...]
    outs: tuple[ShardRow, ...] = ()

    def mesh_text(self) -> str:
        return "Mesh(" + ", ".join(f"{name!r}: {size}" for name, size in self.mesh) + ")"


Step = MapStep | BaseStep | ShardStep
