import jax.numpy as jnp
from jax import vmap


def score(pair):
    x, y = pair
    return jnp.sum(x) * jnp.mean(y)


def main():
    xs = jnp.arange(12.0).reshape(4, 3)
    ys = jnp.arange(8.0).reshape(4, 2) / 8.0
    return vmap(score)((xs, ys))
