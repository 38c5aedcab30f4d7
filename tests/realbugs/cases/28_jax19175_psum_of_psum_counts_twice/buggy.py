import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def total(x):
    return jax.lax.psum(jax.lax.psum(x, "i"), "i")


def main():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P())
    return f(jnp.arange(4.0))
