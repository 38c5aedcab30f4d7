import jax
import jax.numpy as jnp


def shifted_sum(x1, x2, offset):
    return x1 + x2 + offset[0]


def main():
    x1 = jnp.arange(4.0)
    x2 = jnp.arange(4.0, 8.0)
    offset = jnp.array([0.5])
    return jax.vmap(shifted_sum)(x1, offset=offset, x2=x2)
