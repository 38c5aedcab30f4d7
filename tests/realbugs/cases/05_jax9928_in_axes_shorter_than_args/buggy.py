import jax
import jax.numpy as jnp


def scale(x, y, param):
    return (x + y) * param


def main():
    x = jnp.arange(6.0).reshape(3, 2)
    y = jnp.ones((3, 2))
    return jax.vmap(scale, (0, 0))(x, y, 2.0)
