import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def mlp_in(x, w_in):
    # x: this device's rows of the batch, all D features; w_in: this device's F / 4 columns
    return jax.nn.relu(x @ w_in)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(4 * 6, dtype=jnp.float32)).reshape(4, 6)
    w_in = jnp.cos(jnp.arange(6 * 16, dtype=jnp.float32) * 0.3).reshape(6, 16) / 3.0
    f = jax.shard_map(
        mlp_in,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "model")),
        out_specs=P("data", "model"),
    )
    return f(x, w_in)
