import jax
import jax.numpy as jnp


def sum_of_squares(column):
    return jnp.sum(column**2)


def main():
    # (d, N): N = 4 samples stored as columns of d = 3 features
    matrix = jnp.arange(12.0).reshape(3, 4) / 10.0
    return jax.vmap(sum_of_squares, in_axes=1, out_axes=0)(matrix)  # one value per sample column
