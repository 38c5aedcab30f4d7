import jax
import jax.numpy as jnp


def affinity(a, b):
    return jnp.exp(-jnp.sum((a - b) ** 2))


def main():
    queries = jnp.linspace(0.0, 1.0, 12).reshape(4, 3)
    keys = jnp.cos(jnp.arange(12.0)).reshape(4, 3)
    # wanted: the 4 x 4 table affinity(queries[i], keys[j]) for every pair (i, j)
    return jax.vmap(affinity)(queries, keys)
