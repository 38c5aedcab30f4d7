# ruff: noqa
"""AX010, AX011: shard_map in_specs against the function's arguments and ranks."""

from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jax import shard_map
from jax.sharding import PartitionSpec as P

import axischeck as ax


def add(x: Annotated[jax.Array, "n"], y: Annotated[jax.Array, "n"]) -> Annotated[jax.Array, "n"]:
    return x + y


def case_too_many_specs(mesh):
    f = jax.shard_map(add, mesh=mesh, in_specs=(P("x"), P("x"), P()), out_specs=P("x"))  # expect: AX010
    return f(jnp.ones(4), jnp.ones(4))


def case_too_few_specs(mesh):
    f = shard_map(add, mesh=mesh, in_specs=(P("x"),), out_specs=P("x"))  # expect: AX010
    return f(jnp.ones(4), jnp.ones(4))


def case_spec_longer_than_rank(mesh):
    f = jax.shard_map(add, mesh=mesh, in_specs=(P("x"), P(None, "x")), out_specs=P("x"))  # expect: AX011
    return f(jnp.ones(4), jnp.ones(4))


MESH = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))


@partial(jax.shard_map, mesh=MESH, in_specs=P("x"), out_specs=P("x", None))  # expect: AX011
def doubled(x: Annotated[jax.Array, "n"]) -> Annotated[jax.Array, "n"]:
    return 2 * x


def case_decorated():
    return doubled(jnp.ones(4))


def case_ax_shard_map(mesh):
    f = ax.shard_map(add, mesh=mesh, in_specs=(P("x"), P("x", None)), out_specs=P("x"))  # expect: AX011
    return f(jnp.ones(4), jnp.ones(4))


def plain_add(x, y):
    return x + y


def add_all(*xs):
    return xs[0] + xs[1]


def case_call_misses_an_argument(mesh):
    f = jax.shard_map(plain_add, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    x = jnp.arange(8.0)
    return f(x)  # expect: AX010


def case_spec_longer_than_a_scalar(mesh):
    f = jax.shard_map(add_all, mesh=mesh, in_specs=(P(), P(None)), out_specs=P())  # expect: AX011
    return f(jnp.float32(1.0), jnp.float32(2.0))


if __name__ == "__main__":
    case_too_many_specs(MESH)
    case_too_few_specs(MESH)
    case_spec_longer_than_rank(MESH)
    case_ax_shard_map(MESH)
    case_decorated()
    case_call_misses_an_argument(MESH)
    case_spec_longer_than_a_scalar(MESH)
