# ruff: noqa
"""AX004: out_axes (or out_specs) that do not match the returned tuple."""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import axischeck as ax


def stats(x):
    return x.mean(), x.std()


def case_too_many():
    return jax.vmap(stats, out_axes=(0, 0, 0))(jnp.ones((3, 4)))  # expect: AX004


def case_list_for_tuple():
    return jax.vmap(stats, out_axes=[0, 0])(jnp.ones((3, 4)))  # expect(jax<0.12.1): AX004


@partial(ax.vmap, in_axes=0, out_axes=(0, None))  # expect: AX004
def three(x):
    if x.ndim > 3:
        return x, x, x
    return x * 2, x, x


def case_decorated():
    return three(jnp.ones((3, 4)))


def case_lambda():
    return jax.vmap(lambda x: (x, x + 1), out_axes=(1,))(jnp.ones((3, 4)))  # expect: AX004


def case_pmap():
    return jax.pmap(stats, axis_name="i", out_axes=(0,))(jnp.ones((2, 4)))  # expect: AX004


def case_shard_map(mesh):
    f = jax.shard_map(stats, mesh=mesh, in_specs=(P("x"),), out_specs=(P(), P(), P()))  # expect: AX004
    return f(jnp.ones(8))


if __name__ == "__main__":
    case_too_many()
    case_list_for_tuple()
    case_decorated()
    case_lambda()
    case_pmap()
    case_shard_map(jax.make_mesh((2,), ("x",)))
