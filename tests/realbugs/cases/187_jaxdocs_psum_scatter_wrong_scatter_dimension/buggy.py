import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def down_proj(h, w):
    partial = h @ w  # (batch block, d_out): a partial sum over this device's hidden units
    # reduce the partial sums and keep this device's block of output features
    return jax.lax.psum_scatter(partial, "model", tiled=True)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    h = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32) * 0.2).reshape(8, 16)
    w = jnp.sin(jnp.arange(16 * 8, dtype=jnp.float32) * 0.1).reshape(16, 8) / 4.0
    f = jax.shard_map(
        down_proj,
        mesh=mesh,
        in_specs=(P("data", "model"), P("model", None)),
        out_specs=P("data", "model"),
    )
    return f(h, w)
