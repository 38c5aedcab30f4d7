import jax
import jax.numpy as jnp


def add(a, b):
    return a + b


def main():
    g = jax.pmap(add, static_broadcasted_argnums=(1,))
    return g(jnp.ones((4, 1)), 1)
