import equinox as eqx
import jax
import jax.numpy as jnp


class TransformerBlock(eqx.Module):
    attention: eqx.nn.MultiheadAttention
    rope_embeddings: eqx.nn.RotaryPositionalEmbedding

    def __init__(self, num_heads, size, key):
        self.attention = eqx.nn.MultiheadAttention(num_heads, size, key=key)
        self.rope_embeddings = eqx.nn.RotaryPositionalEmbedding(embedding_size=size // num_heads)

    def __call__(self, x):
        def rotate(heads):
            return self.rope_embeddings(heads)

        def process_heads(query_heads, key_heads, value_heads):
            # Each of shape (seq_length, num_heads, head_size).
            query_heads = jax.vmap(rotate, in_axes=1, out_axes=1)(query_heads)
            key_heads = jax.vmap(rotate, in_axes=1, out_axes=1)(key_heads)
            return query_heads, key_heads, value_heads

        return self.attention(x, x, x, process_heads=process_heads)


def main():
    block = TransformerBlock(num_heads=3, size=12, key=jax.random.PRNGKey(0))
    tokens = jnp.sin(jnp.arange(5 * 12.0).reshape(5, 12))
    return block(tokens)
