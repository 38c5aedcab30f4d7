import jax
import jax.numpy as jnp
from jax import random


def jitter(key, point):
    return point + 0.05 * random.normal(key, point.shape)


def main():
    points = jnp.arange(8.0).reshape(4, 2) / 8.0
    subkeys = map(random.key, range(100, 104))
    return jax.vmap(jitter)(subkeys, points)
