import jax
import jax.numpy as jnp


def shift(x, *offsets):
    return x - sum(offsets)


def main():
    xs = jnp.arange(2.0)
    offsets = jnp.arange(3.0) / 10.0
    return jax.vmap(shift, in_axes=0)(xs, offsets)
