"""`axischeck.shard_shape`: what each device holds under `jax.jit` + `NamedSharding` layouts."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from .._core._errors import ArgumentError, SpecError
from .._core._jax_compat import spec_entries
from .._core._leaves import shapes_as_structs
from .._core._shape import Shape
from .._core._text import short_repr
from .._core._trees import PrefixMismatch, broadcast_prefix, leaf_paths
from ._mesh import SpecMistake, block_shape, check_fits, mesh_shape, spec_dims


def _is_int_tuple(x: object) -> bool:
    return isinstance(x, tuple) and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in x)


def _as_layout(spec: PartitionSpec, rank: int) -> PartitionSpec:
    """The spec as a layout reads it: unconstrained dims unsharded, extra trailing Nones dropped."""
    entries = [None if e is PartitionSpec.UNCONSTRAINED else e for e in spec_entries(spec)]
    while len(entries) > rank and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)  # type: ignore[no-untyped-call]


def _is_sharding(x: object) -> bool:
    return isinstance(x, NamedSharding) or (isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], PartitionSpec))


def shard_shape(x: Any, sharding: Any) -> Any:
    """The per-device shard shape of `x` (an array, struct or shape tuple, or a pytree of
    them) laid out by `sharding`: a `NamedSharding`, or `(mesh, PartitionSpec)` where the
    mesh may be a dict of axis sizes; a single sharding covers the whole tree, or give a
    tree prefix of `x` (as for `jax.jit`'s `in_shardings`).

    Uneven splits raise an explained `ArgumentError` where JAX raises `IndivisibleError`.

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> ax.shard_shape((16, 6), ({"x": 4, "y": 2}, P("x", "y")))
    Shape(4, 3)
    ```
    """
    x = jax.tree_util.tree_map(  # numpy ints in a shape tuple, as JAX takes them
        lambda t: tuple(int(d) for d in t) if _is_int_tuple(t) else t, x, is_leaf=_is_int_tuple
    )
    (tree,), _ = shapes_as_structs((x,), {})
    if (
        isinstance(sharding, tuple)
        and len(sharding) == 2
        and (isinstance(sharding[0], dict) or hasattr(sharding[0], "axis_names"))
        and not isinstance(sharding[1], PartitionSpec)
    ):
        raise SpecError(
            f"the spec in (mesh, spec) must be a PartitionSpec, got {short_repr(sharding[1])}: write P(...)"
        )
    paired = broadcast_prefix(sharding, tree, _is_sharding)
    if isinstance(paired, PrefixMismatch):
        raise SpecError(
            f"the sharding{paired.path} is {paired.spec_kind}, but the value{paired.path} is {paired.value_kind}"
            f" ({paired.detail}); give one sharding, or a tree prefix of the value"
        )
    labels = ["x" + p for p in leaf_paths(tree)]
    out: list[Shape] = []
    for label, leaf, s in zip(labels, jax.tree_util.tree_leaves(tree), paired, strict=True):
        if not _is_sharding(s):
            hint = " (the spec must be a PartitionSpec: P(...))" if isinstance(s, tuple) and len(s) == 2 else ""
            raise SpecError(
                f"the sharding of {label} must be a NamedSharding or (mesh, PartitionSpec), got {short_repr(s)}{hint}"
            )
        mesh_obj, spec = (s.mesh, s.spec) if isinstance(s, NamedSharding) else s
        mesh = mesh_shape(mesh_obj, "the sharding's mesh")
        shape = getattr(leaf, "shape", None)
        if shape is None:
            raise ArgumentError(
                f"{label} is a {type(leaf).__name__}, not an array", hint="pass an array, a struct or a shape tuple"
            )
        spec = _as_layout(spec, len(shape))
        try:
            dims = spec_dims(spec, mesh, frozenset(mesh.names), f"the spec of {label}")
            check_fits(dims, spec, Shape(shape), f"the spec of {label}", label, mesh, split=True)
        except SpecMistake as m:
            raise ArgumentError(f"{m.problem} (mesh {mesh})", hint=m.hint) from None
        out.append(block_shape(Shape(shape), dims, mesh))
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(tree), out)
