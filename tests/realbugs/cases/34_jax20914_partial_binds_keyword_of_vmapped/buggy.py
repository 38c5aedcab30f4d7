import functools

import jax
import jax.numpy as jnp


def f(a, x):
    return a + x.sum()


def main():
    x_all = jnp.arange(30.0).reshape(3, 10)
    fvmap = jax.vmap(f, in_axes=(None, 0))
    pfvmap = functools.partial(fvmap, x=x_all)
    return pfvmap(jnp.float32(2.0))
