import equinox as eqx
import jax
import jax.numpy as jnp


def per_head_window_mask(num_heads, seq_len):
    # Head h attends to the current token and the h tokens before it.
    q = jnp.arange(seq_len)[:, None]
    k = jnp.arange(seq_len)[None, :]
    return jnp.stack([(k <= q) & (k >= q - h) for h in range(num_heads)])


def main():
    batch, seq_len, num_heads, size = 4, 5, 4, 8
    attention = eqx.nn.MultiheadAttention(num_heads, size, key=jax.random.PRNGKey(0))
    x = jnp.sin(jnp.arange(batch * seq_len * size, dtype=jnp.float32)).reshape(batch, seq_len, size)
    mask = per_head_window_mask(num_heads, seq_len)  # (num_heads, seq_len, seq_len)

    def attend(x, mask):
        return attention(x, x, x, mask)

    return eqx.filter_vmap(attend, in_axes=(0, None))(x, mask)
