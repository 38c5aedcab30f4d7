import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def gather_over_dcn(block):
    return jax.lax.all_gather(block, "dcn", axis=0, tiled=True)


def main():
    mesh = jax.make_mesh((2, 4), ("dcn", "ici"), axis_types=(AxisType.Auto,) * 2)
    matrix = jnp.arange(32.0).reshape(8, 4)
    f = jax.shard_map(gather_over_dcn, mesh=mesh, in_specs=P("dcn", None), out_specs=P(None, None))
    return f(matrix)
