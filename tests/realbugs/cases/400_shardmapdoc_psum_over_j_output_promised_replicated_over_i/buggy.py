import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def row_block_sums(x_block):
    # sum the column blocks of each row block: still one row block per 'i'
    return jax.lax.psum(x_block, "j")


def main():
    mesh = jax.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(8 * 4.0).reshape(8, 4)
    f = jax.shard_map(row_block_sums, mesh=mesh, in_specs=P("i", "j"), out_specs=P())
    return f(x)
