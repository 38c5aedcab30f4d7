import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def all_reduce(x):
    return jax.lax.psum(x, "ici")


def main():
    # One slice: the DCN axis of the hybrid mesh has size 1, the 4 chips of the slice are 'ici'.
    mesh = jax.make_mesh((1, 4), ("dcn", "ici"), axis_types=(AxisType.Auto,) * 2)
    matrix = jnp.sin(jnp.arange(8 * 8, dtype=jnp.float32)).reshape(8, 8)
    f = jax.shard_map(all_reduce, mesh=mesh, in_specs=P(None, "ici"), out_specs=P(None, None))
    return f(matrix)
