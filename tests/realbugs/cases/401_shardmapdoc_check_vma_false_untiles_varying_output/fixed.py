import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def double(x_block):
    return 2.0 * x_block


def main():
    mesh = jax.make_mesh((2,), ("i",), axis_types=(AxisType.Auto,))
    x = jnp.arange(6.0)
    f = jax.shard_map(double, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False)
    return f(x)
