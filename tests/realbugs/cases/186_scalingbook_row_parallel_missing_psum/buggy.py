import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def mlp(x, w_in, w_out):
    hidden = jax.nn.gelu(x @ w_in)  # column-parallel: this device's hidden units
    return hidden @ w_out  # row-parallel: a partial sum over the hidden units


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(8 * 6, dtype=jnp.float32)).reshape(8, 6)
    w_in = jnp.cos(jnp.arange(6 * 16, dtype=jnp.float32)).reshape(6, 16) / 4.0
    w_out = jnp.sin(jnp.arange(16 * 6, dtype=jnp.float32) * 0.3).reshape(16, 6) / 4.0
    f = jax.shard_map(
        mlp,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "model"), P("model", None)),
        out_specs=P("data", None),
    )
    return f(x, w_in, w_out)
