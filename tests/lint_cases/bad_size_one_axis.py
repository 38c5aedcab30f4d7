# ruff: noqa
"""AX025: out_specs leaves out a mesh axis of size 1 that the output's source is split over.

A mesh axis of size 1 splits nothing, but shard_map's replication check reads the types:
`w` split over 'model' makes `x @ w` vary along 'model', and out_specs without 'model'
promises it does not (a model-parallel layout run on a mesh whose 'model' axis has one
device).
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

AUTO = (jax.sharding.AxisType.Auto,) * 2
WEIGHTS_SPLIT = (P("data", None), P(None, "model"))
ROWS = P("data", None)


def dense(x, w):
    return x @ w


def case_weights_on_a_size_one_axis():
    mesh = jax.make_mesh((2, 1), ("data", "model"), axis_types=AUTO)
    f = jax.shard_map(dense, mesh=mesh, in_specs=WEIGHTS_SPLIT, out_specs=ROWS)  # expect: AX025
    return f(jnp.ones((8, 16)), jnp.ones((16, 4)))


def case_data_on_both_axes():
    mesh = jax.make_mesh((2, 1), ("data", "model"), axis_types=AUTO)
    f = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data"))  # expect: AX025
    return f(jnp.ones((8, 16)))


if __name__ == "__main__":
    case_weights_on_a_size_one_axis()
    case_data_on_both_axes()
