import jax
import jax.numpy as jnp


def scale(x, y):
    return x * y


def main():
    x = jnp.array([1.0, 2.0, 3.0])
    y = jnp.array(4.0)  # one scale factor for the whole batch
    return jax.vmap(scale, in_axes=(0, None))(x, y)
