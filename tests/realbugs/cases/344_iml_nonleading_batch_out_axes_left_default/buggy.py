import jax
import jax.numpy as jnp


def func(x, y):
    return x + y


def main():
    x_batched = jnp.array([[1.0, 2.0, 3.0]])  # (1, 3): the batch runs along axis 1
    y_batched = jnp.array([[4.0], [5.0], [6.0]])  # (3, 1): the batch runs along axis 0
    out = jax.vmap(func, in_axes=(1, 0))(x_batched, y_batched)
    # keep x's layout (the batch along axis 1) and shift x by the result
    return x_batched + out
