import jax
import jax.numpy as jnp


def rope(x, positions, max_wavelength=10_000.0):
    # x: (..., seq_len, head_dim) for one head; positions: (seq_len,)
    half = x.shape[-1] // 2
    timescale = max_wavelength ** (jnp.arange(half) / half)
    angles = positions[:, None] / timescale[None, :]
    angles = angles.reshape((1,) * (x.ndim - 2) + angles.shape)  # over any leading axes of x
    sin, cos = jnp.sin(angles), jnp.cos(angles)
    first, second = x[..., :half], x[..., half:]
    return jnp.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def attention_with_rope(query, key, value, input_positions):
    # query, key, value: (batch, seq_len, num_heads, head_dim); input_positions: (seq_len,)
    query = jax.vmap(rope, in_axes=(-2, -1), out_axes=(-2, -1))(query, input_positions)
    key = jax.vmap(rope, in_axes=(-2, -1), out_axes=(-2, -1))(key, input_positions)
    logits = jnp.einsum("bqhd,bkhd->bhqk", query, key) / jnp.sqrt(query.shape[-1])
    weights = jax.nn.softmax(logits, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", weights, value)


def main():
    batch, seq_len, num_heads, head_dim = 1, 6, 2, 8
    shape = (batch, seq_len, num_heads, head_dim)
    size = batch * seq_len * num_heads * head_dim
    query = jnp.sin(jnp.arange(size, dtype=jnp.float32)).reshape(shape)
    key = jnp.cos(jnp.arange(size, dtype=jnp.float32)).reshape(shape)
    value = jnp.linspace(-1.0, 1.0, size).reshape(shape)
    positions = jnp.arange(seq_len, dtype=jnp.float32) + 3.0
    return attention_with_rope(query, key, value, positions)
