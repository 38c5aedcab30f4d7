import jax
import jax.numpy as jnp


def scale(x, w):
    return x * w


def main():
    x = jnp.arange(4.0) + 1.0
    w = jnp.array([2.5])
    return jax.pmap(scale)(x=x, w=w)
