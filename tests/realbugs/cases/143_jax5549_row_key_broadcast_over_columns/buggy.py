import jax
import jax.numpy as jnp
from jax import random


def draw(key, x):
    return x + random.normal(key, ())


def main():
    key = random.PRNGKey(42)
    x = jnp.zeros((3, 4))
    row_keys = random.split(key, 3)
    per_row = jax.vmap(draw, in_axes=(None, 0))
    return jax.vmap(per_row, in_axes=(0, 0))(row_keys, x)
