import jax
import jax.numpy as jnp


def attention(q, k, v, key, rate=0.5):
    def dropout_fn(weights):
        keep = jax.random.bernoulli(key, 1.0 - rate, weights.shape)
        return jnp.where(keep, weights / (1.0 - rate), 0.0)

    def one_head(qh, kh, vh):
        weights = jax.nn.softmax(qh @ kh.T)
        return dropout_fn(weights) @ vh

    return jax.vmap(one_head)(q, k, v)


def main():
    heads = jnp.broadcast_to(jnp.eye(4), (3, 4, 4))
    return attention(heads, heads, heads, jax.random.key(41))
