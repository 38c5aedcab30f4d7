import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def mark_varying(x):
    y = jax.lax.pcast(x, "i", to="varying")
    return y * 2.0


def main():
    mesh = jax.make_mesh((2,), ("i",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(mark_varying, mesh=mesh, in_specs=P(), out_specs=P("i"))
    return f(jnp.arange(6.0))
