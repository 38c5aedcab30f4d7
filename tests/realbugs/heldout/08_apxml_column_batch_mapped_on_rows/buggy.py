import jax
import jax.numpy as jnp


def add_scalar(vector, scalar):
    # one vector of 3 features plus a shared offset, then normalised
    shifted = vector + scalar
    return shifted / jnp.linalg.norm(shifted)


def main():
    # a batch of 4 vectors of size 3, stored as the columns of a (3, 4) array
    vectors = jnp.arange(12.0).reshape(3, 4)
    scalar_val = 100.0
    return jax.vmap(add_scalar, in_axes=(0, None))(vectors, scalar_val)
