import itertools

import jax
import jax.numpy as jnp

_seeds = itertools.count(100)


def simulate_path(y0):
    key = jax.random.key(next(_seeds))  # meant as a fresh seed for every path
    dws = jnp.sqrt(0.1) * jax.random.normal(key, (10, 2))

    def step(y, dw):
        y = y - 0.1 * y + dw
        return y, y

    _, ys = jax.lax.scan(step, y0, dws)
    return ys


def main():
    y0s = jnp.ones((4, 2)) * jnp.arange(1.0, 5.0)[:, None]
    return jax.vmap(simulate_path)(y0s)
