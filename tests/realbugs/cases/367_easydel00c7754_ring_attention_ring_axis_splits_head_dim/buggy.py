from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def ring_attention(q, k, v, *, axis_name, ring_size):
    # blockwise attention: each step attends to the key/value block held locally, then
    # passes that block to the next device of the ring (online softmax across blocks)
    scale = 1.0 / jnp.sqrt(8.0)
    b, s, h, _ = q.shape
    acc = jnp.zeros_like(q)
    m = jnp.full((b, s, h, 1), -jnp.inf)
    denom = jnp.zeros((b, s, h, 1))
    perm = [(i, (i + 1) % ring_size) for i in range(ring_size)]
    for _ in range(ring_size):
        scores = jnp.einsum("bqhd,bkhd->bqhk", q, k) * scale
        m_new = jnp.maximum(m, jnp.max(scores, axis=-1, keepdims=True))
        weights = jnp.exp(scores - m_new)
        correction = jnp.exp(m - m_new)
        acc = acc * correction + jnp.einsum("bqhk,bkhd->bqhd", weights, v)
        denom = denom * correction + jnp.sum(weights, axis=-1, keepdims=True)
        m = m_new
        k = jax.lax.ppermute(k, axis_name, perm)
        v = jax.lax.ppermute(v, axis_name, perm)
    return acc / denom


def main():
    mesh = jax.make_mesh((1, 2, 4), ("dp", "fsdp", "mp"), axis_types=(AxisType.Auto,) * 3)
    shape = (2, 8, 2, 8)  # (batch, length, heads, head_dim)
    q = jnp.sin(jnp.arange(256, dtype=jnp.float32)).reshape(shape)
    k = jnp.cos(jnp.arange(256, dtype=jnp.float32) * 0.7).reshape(shape)
    v = jnp.sin(jnp.arange(256, dtype=jnp.float32) * 1.3).reshape(shape)
    qkv_ps = P("dp", "fsdp", None, "mp")
    ring_attention_sharded = jax.shard_map(
        partial(ring_attention, axis_name="mp", ring_size=4),
        mesh=mesh,
        in_specs=(qkv_ps, qkv_ps, qkv_ps),
        out_specs=qkv_ps,
        check_vma=False,
    )
    return ring_attention_sharded(q, k, v)
