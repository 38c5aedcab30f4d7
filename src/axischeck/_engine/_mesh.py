"""Meshes and PartitionSpecs as shape arithmetic (docs/jax-semantics.md#shard_map-and-meshes).

A spec entry per array dim names zero or more mesh axes; that dim is split into the
product of their sizes: `block[d] = global[d] // prod(sizes)` on the way into
`shard_map` (and for a `NamedSharding`'s shard), `global[d] = block[d] * prod(sizes)`
on the way out. Every check here raises a `SpecMistake` carrying the facts; the
caller turns it into an error that names the user's argument.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from .._core._errors import SpecError
from .._core._jax_compat import spec_entries, type_spec
from .._core._shape import Shape
from .._core._text import format_shape, short_repr

SpecDims = tuple[tuple[str, ...], ...]
"""A PartitionSpec as the mesh axes of each array dim, `()` for an unsharded dim."""


@dataclass(frozen=True, slots=True)
class MeshShape:
    """A mesh as shape arithmetic sees it: axis names, sizes, and which are Explicit."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    explicit: frozenset[str] = frozenset()

    def size(self, axes: tuple[str, ...]) -> int:
        return math.prod(self.sizes[self.names.index(a)] for a in axes)

    def __str__(self) -> str:
        return "Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in zip(self.names, self.sizes, strict=True)) + ")"

    def describe_axes(self, axes: tuple[str, ...]) -> str:
        """`mesh axis 'x' (size 4)` or `mesh axes ('x', 'y') (total size 8)`."""
        if len(axes) == 1:
            return f"mesh axis {axes[0]!r} (size {self.size(axes)})"
        return f"mesh axes {axes} (total size {self.size(axes)})"

    def abstract(self) -> AbstractMesh:
        """The `AbstractMesh` JAX traces with: no devices needed, any size."""
        types = tuple(
            jax.sharding.AxisType.Explicit if n in self.explicit else jax.sharding.AxisType.Auto for n in self.names
        )
        return AbstractMesh(self.sizes, self.names, axis_types=types)


def mesh_shape(mesh: Any, where: str) -> MeshShape:
    """Read a `Mesh`, an `AbstractMesh`, or `{name: size}` (a mesh you don't have)."""
    if isinstance(mesh, (Mesh, AbstractMesh)):
        explicit = frozenset(
            n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t == jax.sharding.AxisType.Explicit
        )
        return MeshShape(tuple(mesh.axis_names), tuple(int(s) for s in mesh.axis_sizes), explicit)
    if isinstance(mesh, Mapping) and mesh:
        names = tuple(mesh)
        sizes = tuple(mesh.values())
        if all(isinstance(n, str) for n in names) and all(type(s) is int and s >= 1 for s in sizes):
            return MeshShape(names, sizes)
    raise SpecError(
        f"{where} must be a jax.sharding.Mesh, an AbstractMesh, or a dict of axis sizes such as"
        f" {{'x': 4, 'y': 2}}, got {short_repr(mesh)}"
    )


def context_mesh(where: str) -> MeshShape:
    """The mesh `jax.set_mesh` entered, as shard_map's `mesh=None` uses it."""
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty:
        raise SpecError(
            f"{where} has mesh=None, and no mesh is set",
            hint="pass mesh=..., or call it inside `with jax.set_mesh(mesh):`",
        )
    return mesh_shape(mesh, where)


def concrete_mesh(mesh: Any) -> Mesh | None:
    """The devices' mesh behind a shard_map's `mesh` (the `jax.set_mesh` context's for
    None), or None where there are no devices to read (an AbstractMesh, axis sizes)."""
    if isinstance(mesh, Mesh):
        return mesh
    if mesh is None:
        context = jax.sharding.get_mesh()
        return context if isinstance(context, Mesh) and not context.empty else None
    return None


def context_conflict(mesh: Any) -> str | None:
    """How the `jax.set_mesh` context contradicts an explicit `mesh`, if it does (JAX
    requires them to be the same mesh)."""
    context = jax.sharding.get_abstract_mesh()
    if context.empty or mesh is None or getattr(mesh, "abstract_mesh", mesh) == context:
        return None
    return f"the context mesh {context} (jax.set_mesh) differs from the mesh passed to shard_map, {mesh}"


class SpecMistake(Exception):
    """One spec that cannot apply to one array: what is wrong, and a hint. (A plain
    exception: whatever handles it may add notes or a traceback to it.)"""

    def __init__(self, problem: str, hint: str | None = None, *, indivisible: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint
        self.indivisible = indivisible  # a dim the mesh axes do not divide (a size, not the spec)


def spec_dims(spec: Any, mesh: MeshShape, manual: frozenset[str], what: str) -> SpecDims:
    """The mesh axes of each dim of `spec`, checked against the mesh (names, types)."""
    if not isinstance(spec, PartitionSpec):
        hint = f"P({spec!r})" if isinstance(spec, str) else "P(...)"
        raise SpecMistake(f"{what} is {short_repr(spec)}, not a PartitionSpec", f"write {hint}")
    dims: list[tuple[str, ...]] = []
    for entry in spec_entries(spec):
        axes = () if entry is None else tuple(entry) if isinstance(entry, tuple) else (entry,)
        for a in axes:
            if a not in mesh.names:
                raise SpecMistake(
                    f"{what} is {spec} and names mesh axis {a!r}, but the mesh is {mesh}",
                    f"use one of the mesh axes {mesh.names}",
                )
            if a not in manual:
                raise SpecMistake(
                    f"{what} is {spec} and names mesh axis {a!r}, which is not manual here (axis_names={set(manual)})",
                    f"add {a!r} to axis_names, or leave it out of the spec",
                )
        dims.append(axes)
    return tuple(dims)


def check_fits(dims: SpecDims, spec: Any, shape: Shape, what: str, arg: str, mesh: MeshShape, *, split: bool) -> None:
    """Rank, divisibility (when `split`: an input, or a shard) and duplicates, in JAX's order."""
    if len(dims) > len(shape):
        scalar = " (for a scalar, use P())" if not shape else ""
        raise SpecMistake(
            f"{what} is {spec}, which has length {len(dims)}, but {arg} has shape {format_shape(shape)},"
            f" which has rank {len(shape)}",
            f"give it at most {len(shape)} {'entry' if len(shape) == 1 else 'entries'}{scalar}",
        )
    if split:
        for d, axes in enumerate(dims):
            n = mesh.size(axes)
            if axes and shape[d] % n:
                raise SpecMistake(
                    f"{what} is {spec}, which splits axis {d} of {arg} (size {shape[d]}, shape"
                    f" {format_shape(shape)}) over {mesh.describe_axes(axes)}, but {n} does not divide {shape[d]}",
                    f"make axis {d} a multiple of {n} (pad it), shard it over fewer devices, or shard another axis",
                    indivisible=True,
                )
    seen: set[str] = set()
    for axes in dims:
        for a in axes:
            if a in seen:
                raise SpecMistake(
                    f"{what} is {spec}, which uses mesh axis {a!r} twice; each mesh axis may split at most one dim",
                    f"keep {a!r} in one entry only",
                )
            seen.add(a)


def block_shape(shape: Shape, dims: SpecDims, mesh: MeshShape) -> Shape:
    """What each device holds of an array of `shape` split by `dims`."""
    return Shape(tuple(s // mesh.size(dims[d]) if d < len(dims) else s for d, s in enumerate(shape)))


def global_shape(block: Shape, dims: SpecDims, mesh: MeshShape) -> Shape:
    """The array `shard_map` assembles from per-device blocks of shape `block`."""
    return Shape(tuple(s * mesh.size(dims[d]) if d < len(dims) else s for d, s in enumerate(block)))


def sharding_spec(x: Any, ndim: int) -> SpecDims:
    """The spec an argument's JAX type carries (Explicit axes only; unsharded dims `()`),
    padded to `ndim`. Under jit the argument is a tracer: its type still says."""
    spec = type_spec(x)
    dims: list[tuple[str, ...]] = []
    if isinstance(spec, PartitionSpec):
        for entry in spec_entries(spec):
            dims.append(() if entry is None else tuple(entry) if isinstance(entry, tuple) else (entry,))
    return tuple(dims[:ndim]) + ((),) * max(0, ndim - len(dims))


def as_partition_spec(dims: SpecDims) -> PartitionSpec:
    """The `PartitionSpec` that `dims` reads back from (trailing unsharded dims dropped)."""
    entries = [None if not d else d[0] if len(d) == 1 else d for d in dims]
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)  # type: ignore[no-untyped-call]
