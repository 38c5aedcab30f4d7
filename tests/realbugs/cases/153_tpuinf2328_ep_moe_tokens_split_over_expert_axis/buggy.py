import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def experts_local(x, gates, w):
    # expert parallelism: this device holds a slice of the experts; it applies them to the
    # tokens, weights them by the router, and the partial outputs of all expert shards are summed
    h = jnp.einsum("th,ehk->etk", x, w)
    y = jnp.einsum("te,etk->tk", gates, h)
    return jax.lax.psum(y, "expert")


def main():
    mesh = jax.make_mesh((2, 4), ("data", "expert"), axis_types=(AxisType.Auto, AxisType.Auto))
    tokens, hidden, n_experts = 32, 8, 8
    x = jnp.sin(jnp.arange(tokens * hidden, dtype=jnp.float32)).reshape(tokens, hidden)
    logits = jnp.cos(jnp.arange(tokens * n_experts, dtype=jnp.float32)).reshape(tokens, n_experts)
    gates = jax.nn.softmax(logits, axis=-1)
    w = jnp.tanh(jnp.arange(n_experts * hidden * hidden, dtype=jnp.float32).reshape(n_experts, hidden, hidden) / 97.0)
    moe = jax.shard_map(
        experts_local,
        mesh=mesh,
        in_specs=(P(("data", "expert")), P("data", "expert"), P("expert")),
        out_specs=P("data"),
    )
    return moe(x, gates, w)
