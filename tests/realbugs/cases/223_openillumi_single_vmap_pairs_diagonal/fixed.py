import jax
import jax.numpy as jnp


def affinity(a, b):
    return jnp.exp(-jnp.sum((a - b) ** 2))


def main():
    queries = jnp.linspace(0.0, 1.0, 12).reshape(4, 3)
    keys = jnp.cos(jnp.arange(12.0)).reshape(4, 3)
    # wanted: the 4 x 4 table affinity(queries[i], keys[j]) for every pair (i, j)
    per_query = jax.vmap(affinity, in_axes=(None, 0))
    return jax.vmap(per_query, in_axes=(0, None))(queries, keys)
