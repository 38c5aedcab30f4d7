import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def paged_attention(q, k, v, kv_cache):
    # q: (tokens, local query heads, head_dim); k, v: (tokens, kv heads, head_dim), replicated.
    kv_heads = k.shape[1]
    kv_cache = kv_cache.at[:, :kv_heads].set(k).at[:, kv_heads:].set(v)
    keys = kv_cache[:, :kv_heads].mean(axis=1)
    values = kv_cache[:, kv_heads:].mean(axis=1)
    scores = jnp.einsum("thd,sd->ths", q, keys) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("ths,sd->thd", probs, values)
    return out, kv_cache


def main():
    mesh = jax.make_mesh((4,), ("model",), axis_types=(AxisType.Auto,))
    attn = jax.shard_map(
        paged_attention,
        mesh=mesh,
        in_specs=(P(None, "model", None), P(), P(), P()),
        out_specs=(P(None, "model", None), P()),
    )
    q = jnp.arange(6 * 8 * 4, dtype=jnp.float32).reshape(6, 8, 4) / 100.0
    k = jnp.arange(6 * 2 * 4, dtype=jnp.float32).reshape(6, 2, 4) / 50.0
    v = jnp.cos(jnp.arange(6 * 2 * 4, dtype=jnp.float32)).reshape(6, 2, 4)
    kv_cache = jnp.zeros((6, 4, 4), dtype=jnp.float32)
    return attn(q, k, v, kv_cache)
