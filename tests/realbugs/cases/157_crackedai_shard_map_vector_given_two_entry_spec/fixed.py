import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def double(block):
    return block * 2.0


def main():
    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("data",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(double, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
    x = jnp.arange(2 * n, dtype=jnp.float32) / 4.0
    return f(x)
