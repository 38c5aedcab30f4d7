import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def up_proj(x, w1):
    return jax.nn.gelu(x @ w1)


def down_proj(h, w2):
    # row-parallel: each device contracts its slice of the hidden features, then sum
    return jax.lax.psum(h @ w2, "model")


def main():
    mesh = jax.make_mesh((4,), ("model",), axis_types=(AxisType.Auto,))
    x = jnp.sin(jnp.arange(6 * 8, dtype=jnp.float32)).reshape(6, 8)
    w1 = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32)).reshape(8, 16) / 4.0
    w2 = jnp.sin(jnp.arange(16 * 8, dtype=jnp.float32) * 0.3).reshape(16, 8) / 4.0
    up = jax.shard_map(up_proj, mesh=mesh, in_specs=(P(), P(None, "model")), out_specs=P(None, "model"))
    down = jax.shard_map(down_proj, mesh=mesh, in_specs=(P(None, "model"), P("model", None)), out_specs=P())
    return down(up(x, w1), w2)
