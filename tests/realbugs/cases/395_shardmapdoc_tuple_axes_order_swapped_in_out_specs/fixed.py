import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def normalize_rows(x_block):
    return x_block / jnp.sum(x_block, axis=1, keepdims=True)


def main():
    mesh = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(1.0, 25.0).reshape(8, 3)
    # rows split over both mesh axes at once
    f = jax.shard_map(normalize_rows, mesh=mesh, in_specs=P(("i", "j")), out_specs=P(("i", "j")))
    return f(x)
