import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def add_all(*xs):
    return xs[0] + xs[1]


def main():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(add_all, mesh=mesh, in_specs=(P(), P(None)), out_specs=P())
    return f(jnp.float32(1.0), jnp.float32(2.0))
