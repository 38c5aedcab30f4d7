# ruff: noqa
"""Correct shard_map and pmap code with specs, kwargs and annotations: no findings."""

from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import axischeck as ax


def matmul(x: Annotated[jax.Array, "n k"], w: Annotated[jax.Array, "k m"]) -> Annotated[jax.Array, "n m"]:
    return x @ w


def make(mesh):
    f = jax.shard_map(matmul, mesh=mesh, in_specs=(P("x", None), P()), out_specs=P("x", None))
    g = ax.shard_map(matmul, mesh=mesh, in_specs=(P("x"), P(None, "y")), out_specs=P("x", "y"))
    h = jax.shard_map(matmul, mesh=mesh, in_specs=P(), out_specs=P())
    return f, g, h


@partial(jax.shard_map, mesh=jax.make_mesh((1,), ("x",)), in_specs=(P("x"),), out_specs=(P("x"), P()))
def two_outputs(x):
    return x, jax.lax.psum(x.sum(), "x")


def pmapped(x):
    return jax.pmap(lambda a, b: a + b, in_axes=(0, None), static_broadcasted_argnums=(2,))


def pmap_with_axis_size(x):
    return jax.pmap(lambda a: a, axis_name="i", in_axes=0, out_axes=None)


def even_shards():
    # Divisible sizes, a dimension of unknown size, and a spec over a name the mesh lacks
    # (JAX's error there is another one): nothing to report about divisibility.
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    f = jax.shard_map(lambda a, b: a + b, mesh=mesh, in_specs=(P(("x", "y")), P("x", "y")), out_specs=P())
    f(jnp.ones((8, 3)), jnp.ones((4, 6)))
    g = jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    g(jnp.ones((jax.device_count() * 2, 3)))
    return f, g
