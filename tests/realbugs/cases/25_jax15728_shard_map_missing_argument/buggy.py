import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def add(x, y):
    return x + y


def main():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(add, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    x = jnp.arange(8.0)
    return f(x)
