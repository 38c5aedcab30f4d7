"""The derivation of a prediction, step by step: one `MapStep` per transform level (or a
`ShardStep` for shard_map), then the `BaseStep` of the signature or trace underneath. Plain
frozen values: the engine records them, `_explain` renders them."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class ShardRow:
    """One leaf crossing `shard_map`: the global array and its per-device block."""

    label: str
    shape: Shape | None  # global: the argument as passed, or the assembled output
    spec: str  # its PartitionSpec ("static" for an in_specs None entry)
    block: Shape | None  # what each device sees (or returns)


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
