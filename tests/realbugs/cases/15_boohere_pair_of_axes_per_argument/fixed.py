import jax
import jax.numpy as jnp


def add(x, y):
    return x + y


def main():
    x = jnp.arange(9.0).reshape(3, 3)
    y = jnp.arange(0.0, -9.0, -1.0).reshape(3, 3)
    return jax.vmap(jax.vmap(add))(x, y)
