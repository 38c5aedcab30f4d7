import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def transpose_blocks(block):
    return jax.lax.all_to_all(block, "x", split_axis=1, concat_axis=0, tiled=True)


def main():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    x = jnp.arange(64.0).reshape(8, 8)
    f = jax.shard_map(transpose_blocks, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    return f(x)
