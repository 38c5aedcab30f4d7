from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.vmap, in_axes=(None, 0, None), out_axes=(1, 2))
def grid_value(x, y, z):
    return x[:, None] * z[None, :] + y


def main():
    x = jnp.arange(7.0)
    y = jnp.arange(5.0) / 10.0
    z = jnp.arange(3.0) + 1.0
    return grid_value(x, y, z)
