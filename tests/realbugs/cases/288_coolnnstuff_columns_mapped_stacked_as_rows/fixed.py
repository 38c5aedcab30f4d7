import jax
import jax.numpy as jnp


def blend(u, v):
    return 0.75 * u + 0.25 * v


def main():
    a = jnp.arange(6.0).reshape(2, 3)
    b = jnp.arange(10.0, 16.0).reshape(2, 3)
    # blend column by column: map the second axis of both inputs
    return jax.vmap(blend, in_axes=(1, 1), out_axes=1)(a, b)
