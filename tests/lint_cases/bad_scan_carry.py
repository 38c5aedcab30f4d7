# ruff: noqa
"""AX021: a scan carry inside shard_map that starts the same on every device and varies.

`jnp.zeros(3)` is the same on every device; a carry that adds rows of a sharded argument
varies along the mesh axis. shard_map checks that a carry keeps its type, and JAX raises.
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def block_sum(x):
    def step(acc, row):
        return acc + row, None

    acc, _ = jax.lax.scan(step, jnp.zeros(3), x)  # expect: AX021
    return acc[None]


def running_max(x, w):
    def step(best, row):
        new = jnp.maximum(best, row * 2.0)
        return new, new.sum()

    best, _ = jax.lax.scan(step, jnp.full((3,), -1.0), x)  # expect: AX021
    return best[None] * w


def case_block_sum():
    mesh = jax.make_mesh((2,), ("i",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(block_sum, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return f(jnp.arange(24.0).reshape(8, 3))


def case_running_max():
    mesh = jax.make_mesh((2,), ("i",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(running_max, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
    return f(jnp.arange(24.0).reshape(8, 3), jnp.ones(3))


if __name__ == "__main__":
    case_block_sum()
    case_running_max()
