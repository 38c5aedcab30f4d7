"""Misuse through `functools.partial`: mypy must reject each, as for the direct forms.

Checked by tests/test_typing.py (see misuse_calls.py), with the repo's config, which
enables `axischeck.mypy_plugin`: without it mypy turns every `@partial(ax.vmap, ...)`
function into `(*Any, **Any) -> Any` and accepts all of this.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import axischeck as ax

Array = jax.Array
_rows = jax.sharding.PartitionSpec("x")  # type: ignore[no-untyped-call]


@partial(ax.vmap, in_axes=(0, None))
def project(x: Array, w: Array) -> Array:
    return x @ w


@partial(ax.pmap, axis_name="devices")
def centred(x: Array) -> Array:
    return x - x.mean()


@partial(ax.shard_map, mesh={"x": 4}, in_specs=(_rows, None), out_specs=_rows)
def sharded(x: Array, w: Array) -> Array:
    return x @ w


@partial(ax.check, signature="(n,f),(f,o)->(n,o)")
def linear(X: Array, W: Array) -> Array:
    return X @ W


def scale(x: Array, factor: float) -> Array:
    return x * factor


over_rows = partial(ax.vmap, in_axes=(0, None))
reused = over_rows(linear)
x = jnp.ones((16, 4))

# Wrong argument types.
project("x", x)  # E: arg-type
centred([1.0, 2.0])  # E: arg-type
sharded(x, None)  # E: arg-type
linear(x, 3)  # E: arg-type
reused(x, "w")  # E: arg-type

# Wrong number or names of arguments.
project(x)  # E: call-arg
project(x, x, x)  # E: call-arg
centred()  # E: call-arg
sharded(x, x, x)  # E: call-arg
project(x, v=x)  # E: call-arg

# Wrong use of the result: the return type is kept.
label: str = project(x, x)  # E: assignment
total: int = centred(x)  # E: assignment
rows = sharded(x, x).items()  # E: attr-defined
name: str = over_rows()(linear)(x, x)  # E: assignment

# Options of the wrong type, or unknown, bound by partial (as for ax.vmap(f, ...)).
partial(ax.vmap, axis_size="3")  # E: arg-type
partial(ax.vmap, in_axes=0, axis_name=["batch"])  # E: arg-type
partial(ax.vmap, in_axis=0)  # E: call-arg
partial(ax.pmap, axis_name="i", devices=3)  # E: arg-type
partial(ax.shard_map, mesh=4, out_specs=_rows)  # E: arg-type
partial(ax.check, signature=3)  # E: arg-type

# Decorating something that is not a function.
over_rows(3)  # E: call-overload

# Every other callable keeps mypy's own partial handling.
partial(scale, factor="2")  # E: arg-type
partial(scale, x, 2.0)(x)  # E: call-arg
