import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def init_weights(seed):
    return seed[:, None, None] * jnp.arange(1.0, 7.0).reshape(1, 3, 2)


def main():
    mesh = jax.make_mesh((4, 2), ("dp", "mp"), axis_types=(AxisType.Auto,) * 2)
    seeds = jnp.arange(2.0) + 1.0
    init = jax.shard_map(init_weights, mesh=mesh, in_specs=P("mp"), out_specs=P("mp"), check_vma=False)
    return init(seeds)
