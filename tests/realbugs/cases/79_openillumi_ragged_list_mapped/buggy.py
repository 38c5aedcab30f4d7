import jax
import jax.numpy as jnp


def total(x):
    return jnp.sum(x**2)


def main():
    xs = [jnp.arange(3.0), jnp.arange(4.0) + 3.0, jnp.arange(2.0) + 7.0, jnp.arange(1.0) + 9.0]
    return jax.vmap(total)(xs)
