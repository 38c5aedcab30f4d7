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
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    f = jax.shard_map(lambda a, b: a + b, mesh=mesh, in_specs=(P(("x", "y")), P("x", "y")), out_specs=P(("x", "y")))
    f(jnp.ones((8, 3)), jnp.ones((4, 6)))
    g = jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    g(jnp.ones((jax.device_count() * 2, 3)))
    return f, g


def carries():
    # A carry cast to varying, a carry that stays the same on every device, and shard_map
    # without the check: nothing to report.
    mesh = jax.make_mesh((2,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    def cast(x):
        def step(acc, row):
            return acc + row, None

        return jax.lax.scan(step, jax.lax.pcast(jnp.zeros(3), "i", to="varying"), x)[0][None]

    def count(x):
        def step(n, row):
            return n + 1.0, row

        return jax.lax.scan(step, jnp.zeros(()), x)[1]

    def unchecked(x):
        def step(acc, row):
            return acc + row, None

        return jax.lax.scan(step, jnp.zeros(3), x)[0][None]

    a = jax.shard_map(cast, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(jnp.ones((8, 3)))
    b = jax.shard_map(count, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(jnp.ones((8, 3)))
    c = jax.shard_map(unchecked, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False)(jnp.ones((8, 3)))
    return a, b, c


def size_one_axes():
    """A mesh axis of size 1 that out_specs names, that in_specs leaves out, or with the
    replication check off: nothing to report (AX025)."""
    mesh = jax.make_mesh((1, 1), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x, w = jnp.ones((8, 16)), jnp.ones((16, 4))
    named = jax.shard_map(matmul, mesh=mesh, in_specs=(P("data", None), P(None, "model")), out_specs=P("data", "model"))
    left_out = jax.shard_map(matmul, mesh=mesh, in_specs=(P("data", None), P()), out_specs=P("data", None))
    unchecked = jax.shard_map(
        matmul, mesh=mesh, in_specs=(P("data", None), P(None, "model")), out_specs=P("data", None), check_vma=False
    )
    return named(x, w), left_out(x, w), unchecked(x, w)
