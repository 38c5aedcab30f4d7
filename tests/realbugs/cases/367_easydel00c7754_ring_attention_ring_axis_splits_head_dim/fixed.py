import jax
import jax.numpy as jnp


def attention(q, k, v):
    # plain attention over the whole sequence; the compiler partitions it
    scores = jnp.einsum("bqhd,bkhd->bqhk", q, k) / jnp.sqrt(8.0)
    weights = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bqhk,bkhd->bqhd", weights, v)


def main():
    shape = (2, 8, 2, 8)  # (batch, length, heads, head_dim)
    q = jnp.sin(jnp.arange(256, dtype=jnp.float32)).reshape(shape)
    k = jnp.cos(jnp.arange(256, dtype=jnp.float32) * 0.7).reshape(shape)
    v = jnp.sin(jnp.arange(256, dtype=jnp.float32) * 1.3).reshape(shape)
    return attention(q, k, v)
