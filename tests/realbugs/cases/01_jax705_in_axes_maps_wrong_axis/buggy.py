import jax
import jax.numpy as jnp


def h(a, b):
    return jnp.sum(a) + jnp.sum(b)


def main():
    x = jnp.arange(40.0).reshape(10, 4)
    u = jnp.arange(20.0).reshape(10, 2)
    return jax.vmap(h, in_axes=(0, 1))(x, u)
