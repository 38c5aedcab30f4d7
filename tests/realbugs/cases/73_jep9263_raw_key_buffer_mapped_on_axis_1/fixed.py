import jax
from jax import random


def noise(key):
    return random.uniform(key, (3,))


def main():
    keys = random.split(random.PRNGKey(0))
    return jax.vmap(noise, in_axes=0)(keys)
