import jax
import jax.numpy as jnp
from jax import random


def jitter(key, point):
    return point + 0.1 * random.normal(key, point.shape)


def main():
    keys = random.split(random.PRNGKey(0), 4)
    points = jnp.arange(8.0).reshape(4, 2)
    return jax.vmap(jitter, in_axes=0)(keys, points)
