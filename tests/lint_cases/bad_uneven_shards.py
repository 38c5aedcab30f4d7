# ruff: noqa
"""AX020: a shard_map argument's dimension is not a multiple of the mesh axes it is split over.

A PartitionSpec entry splits one dimension over one or more mesh axes: its size must be a
multiple of the product of their sizes (a batch of one over a data axis of 2 is not).
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attend(q):
    return q * 2.0


def add(x, y):
    return x + y


def case_batch_of_one():
    mesh = jax.make_mesh((1, 2), ("dp", "fsdp"), axis_types=(AxisType.Auto,) * 2)
    spec = P(("dp", "fsdp"), None)
    f = jax.shard_map(attend, mesh=mesh, in_specs=spec, out_specs=spec)
    q = jnp.arange(8.0).reshape(1, 8)
    return f(q)  # expect: AX020


def case_second_argument():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(add, mesh=mesh, in_specs=(P("x"), P(None, "x")), out_specs=P("x"))
    return f(jnp.ones((4, 3)), jnp.ones((4, 3)))  # expect: AX020


if __name__ == "__main__":
    case_batch_of_one()
    case_second_argument()
