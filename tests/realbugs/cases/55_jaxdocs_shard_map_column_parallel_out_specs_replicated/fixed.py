import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def column_parallel(x, w):
    return jnp.tanh(x @ w)


def main():
    mesh = jax.make_mesh((4,), ("model",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(
        column_parallel,
        mesh=mesh,
        in_specs=(P(), P(None, "model")),
        out_specs=P(None, "model"),
    )
    x = jnp.arange(12.0).reshape(3, 4) / 12.0
    w = jnp.arange(32.0).reshape(4, 8) / 32.0
    return f(x, w)
