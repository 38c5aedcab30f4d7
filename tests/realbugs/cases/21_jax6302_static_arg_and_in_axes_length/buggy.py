import jax
import jax.numpy as jnp


def combine(a, b, c, d):
    return a * b * c + d


def main():
    f = jax.pmap(combine, static_broadcasted_argnums=(2,), in_axes=(0, None, 0))
    return f(jnp.ones((2, 3)), jnp.arange(3.0), 2.0, jnp.ones((2, 3)))
