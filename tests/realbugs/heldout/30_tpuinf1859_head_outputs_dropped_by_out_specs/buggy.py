import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def project(x, w):
    # x: (tokens, latent) block of tokens; w: (latent, heads * head_dim) block of heads
    return x @ w


def main():
    mesh = jax.make_mesh((2, 4), ("data", "head"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(8 * 6, dtype=jnp.float32)).reshape(8, 6)
    w = jnp.cos(jnp.arange(6 * 16, dtype=jnp.float32)).reshape(6, 16)
    sharded = jax.shard_map(
        project,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "head")),
        out_specs=P("data"),
        check_vma=False,
    )
    # (tokens, heads * head_dim)
    return sharded(x, w)
