import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attention_probs(q, k, bias):
    # q: (batch, heads, q_len, head_dim), k: (batch, heads, kv_len, head_dim)
    # bias: (batch, heads, q_len, kv_len)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(scores + bias, axis=-1)


def main():
    mesh = jax.make_mesh((2, 2, 1, 2), ("dp", "fsdp", "tp", "sp"), axis_types=(AxisType.Auto,) * 4)
    q = jnp.sin(jnp.arange(4 * 2 * 8 * 4, dtype=jnp.float32)).reshape(4, 2, 8, 4)
    k = jnp.cos(jnp.arange(4 * 2 * 8 * 4, dtype=jnp.float32)).reshape(4, 2, 8, 4)
    bias = jnp.tril(jnp.zeros((8, 8)) - 1e4, k=-1).T[None, None] * jnp.ones((4, 2, 1, 1))
    q_spec = P(("dp", "fsdp"), None, "sp", None)
    k_spec = P(("dp", "fsdp"), None, None, None)
    bias_spec = P(("dp", "fsdp"), None, "sp", "sp")
    f = jax.shard_map(
        attention_probs,
        mesh=mesh,
        in_specs=(q_spec, k_spec, bias_spec),
        out_specs=P(("dp", "fsdp"), None, "sp", None),
    )
    return f(q, k, bias)
