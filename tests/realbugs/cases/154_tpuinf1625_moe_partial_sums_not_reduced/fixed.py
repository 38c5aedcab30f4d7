import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def expert_ffn(x, w_gate, w_up, w_down):
    # x: (tokens, embed/4); w_gate, w_up: (embed/4, ffn): the embed (contracting) axis is split.
    gate = jax.lax.psum(x @ w_gate, "model")
    up = jax.lax.psum(x @ w_up, "model")
    hidden = jax.nn.silu(gate) * up
    return hidden @ w_down


def main():
    mesh = jax.make_mesh((4,), ("model",), axis_types=(AxisType.Auto,))
    ffn = jax.shard_map(
        expert_ffn,
        mesh=mesh,
        in_specs=(P(None, "model"), P("model", None), P("model", None), P()),
        out_specs=P(),
        check_vma=False,
    )
    x = jnp.sin(jnp.arange(8 * 16, dtype=jnp.float32)).reshape(8, 16)
    w_gate = jnp.cos(jnp.arange(16 * 8, dtype=jnp.float32)).reshape(16, 8) / 4.0
    w_up = jnp.sin(jnp.arange(16 * 8, dtype=jnp.float32) / 3.0).reshape(16, 8) / 4.0
    w_down = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32) / 5.0).reshape(8, 16) / 4.0
    return ffn(x, w_gate, w_up, w_down)
