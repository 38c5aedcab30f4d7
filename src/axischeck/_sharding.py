"""`axischeck.shard_shape`: what each device holds under `jax.jit` + `NamedSharding` layouts."""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from ._errors import ArgumentError, SpecError
from ._leaves import shapes_as_structs
from ._mesh import SpecMistake, block_shape, check_fits, mesh_shape, spec_dims
from ._shape import Shape
from ._trees import PrefixMismatch, broadcast_prefix, leaf_paths, short_repr


def _is_sharding(x: object) -> bool:
    return isinstance(x, NamedSharding) or (
        isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], PartitionSpec)
    )


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
    (tree,), _ = shapes_as_structs((x,), {})
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
            raise SpecError(f"the sharding of {label} must be a NamedSharding or (mesh, PartitionSpec), got {short_repr(s)}")
        mesh_obj, spec = (s.mesh, s.spec) if isinstance(s, NamedSharding) else s
        mesh = mesh_shape(mesh_obj, "the sharding's mesh")
        shape = getattr(leaf, "shape", None)
        if shape is None:
            raise ArgumentError(f"{label} is a {type(leaf).__name__}, not an array", fix="pass an array, a struct or a shape tuple")
        try:
            dims = spec_dims(spec, mesh, frozenset(mesh.names), f"the spec of {label}")
            check_fits(dims, spec, Shape(shape), f"the spec of {label}", label, mesh, split=True)
        except SpecMistake as m:
            raise ArgumentError(f"{m.problem} (mesh {mesh})", fix=m.fix) from None
        out.append(block_shape(Shape(shape), dims, mesh))
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(tree), out)
