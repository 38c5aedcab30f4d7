import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def feed_forward(x, w1, w2):
    h = jax.nn.relu(x @ w1)  # column-parallel: this device's hidden units
    return jax.lax.psum(h @ w2, "model")  # row-parallel: partial sums over the hidden units


def main():
    mesh = jax.make_mesh((4, 2), ("batch", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(8 * 8, dtype=jnp.float32) * 0.5).reshape(8, 8)
    w1 = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32) * 0.3).reshape(8, 16) / 4.0
    w2 = jnp.sin(jnp.arange(16 * 8, dtype=jnp.float32) * 0.7).reshape(16, 8) / 4.0
    f = jax.shard_map(
        feed_forward,
        mesh=mesh,
        in_specs=(P("batch", None), P(None, "model"), P("model", None)),
        out_specs=P("batch", None),
    )
    return f(x, w1, w2)
