import jax
import jax.numpy as jnp


def shift_and_scale(x, y):
    return x + y, y * 2.0, jnp.dot(x, y)


def main():
    xs = jnp.arange(15.0).reshape(5, 3)
    y = jnp.array([1.0, -1.0, 0.5])
    return jax.vmap(shift_and_scale, in_axes=(0, None), out_axes=(0, None))(xs, y)
