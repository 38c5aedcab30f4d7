import jax
import jax.numpy as jnp


def reduce_block(x, axes):
    return jnp.sum(x, axes)


def main():
    x = jnp.arange(24.0).reshape(2, 3, 4)
    axes = jnp.array([0, 1])
    return jax.vmap(reduce_block)(x, axes)
