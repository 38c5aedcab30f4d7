import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def out_proj(hidden, w):
    # hidden: (batch, seq, d_model) with d_model split over 'model'; w split along its rows
    return jax.lax.psum(jnp.einsum("bsd,de->bse", hidden, w), "model")


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    hidden = jnp.sin(jnp.arange(4 * 4 * 8, dtype=jnp.float32) * 0.3).reshape(4, 4, 8)
    w = jnp.cos(jnp.arange(8 * 6, dtype=jnp.float32) * 0.2).reshape(8, 6) / 2.0
    f = jax.shard_map(
        out_proj,
        mesh=mesh,
        in_specs=(P("data", "model"), P("model", None)),
        out_specs=P("data"),
    )
    return f(hidden, w)
