"""Abstract evaluation of the user's function (the path without a signature).

The per-example output is found with `jax.eval_shape` of the *unbatched* function on
per-example shapes. Unmapped leaves are closed over unchanged (as `jax.vmap` passes
them), so Python scalars stay Python scalars. Axis names in scope are bound by
size-only `vmap`s with `in_axes=None`, so collectives follow vmap's own shape rules.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import jax

from ._leaves import abstract
from ._shape import Shape

Env = tuple[tuple[Hashable, int], ...]
"""Named mapped axes in scope, outermost first: (axis_name, size)."""


def _is_abstract(x: object) -> bool:
    return isinstance(x, jax.ShapeDtypeStruct)


def _bind_names(fn: Callable[..., Any], env: Env) -> Callable[..., Any]:
    """Bind every name in `env` around `fn` (innermost closest to `fn`)."""
    for name, size in reversed(env):
        fn = jax.vmap(fn, in_axes=None, axis_size=size, axis_name=name)
    return fn


def eval_per_example(
    fn: Callable[..., Any], treedef: Any, values: Sequence[Any], env: Env
) -> Any:
    """The output pytree of `fn(*args, **kwargs)` with `Shape` leaves.

    `treedef`/`values` are the flattened `(args, kwargs)`; `ShapeDtypeStruct`
    values are traced, everything else is closed over.
    """
    dyn = [i for i, v in enumerate(values) if _is_abstract(v)]

    def per_example(*traced: Any) -> Any:
        vals = list(values)
        for i, t in zip(dyn, traced, strict=True):
            vals[i] = t
        args, kwargs = jax.tree_util.tree_unflatten(treedef, vals)
        return fn(*args, **kwargs)

    out = jax.eval_shape(_bind_names(per_example, env), *[values[i] for i in dyn])
    skip = len(env)
    return jax.tree_util.tree_map(lambda s: Shape(s.shape[skip:]), out)


def vmap_accepts_out_axes(
    fn: Callable[..., Any],
    treedef: Any,
    values: Sequence[Any],
    axes: Sequence[int | None],
    out_axes: Any,
    axis_size: int,
    axis_name: Hashable | None,
    env: Env,
) -> bool:
    """Whether real `jax.vmap` accepts `out_axes` (with its None entries) here.

    Only JAX knows which outputs data-depend on a mapped input, so `out_axes=None`
    is settled by asking it: one abstract trace, only on this rare path.
    """
    dyn = [i for i, (v, a) in enumerate(zip(values, axes, strict=True)) if a is not None or _is_abstract(v)]

    def flat(*traced: Any) -> Any:
        vals = list(values)
        for i, t in zip(dyn, traced, strict=True):
            vals[i] = t
        args, kwargs = jax.tree_util.tree_unflatten(treedef, vals)
        return fn(*args, **kwargs)

    mapped = jax.vmap(
        flat,
        in_axes=tuple(axes[i] for i in dyn),
        out_axes=out_axes,
        axis_size=axis_size,
        axis_name=axis_name,
    )
    structs = [abstract(values[i]) for i in dyn]
    try:
        jax.eval_shape(_bind_names(mapped, env), *structs)
    except ValueError as err:
        if "out_axes" in str(err):
            return False
        raise
    return True
