import jax
import jax.numpy as jnp


def f(x, y):
    return x + y


def main():
    x = jnp.array([1.0, 2.0, 3.0])
    offset = jnp.array([10.0, 20.0])  # shared by every example
    return jax.vmap(f)(x, y=offset)
