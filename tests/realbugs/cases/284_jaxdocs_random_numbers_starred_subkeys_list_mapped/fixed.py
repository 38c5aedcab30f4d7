import jax
import jax.numpy as jnp
from jax import random


def noisy_reading(key, reading):
    return reading + 0.1 * random.normal(key)


def main():
    key = random.key(42)
    readings = jnp.arange(4.0)
    keys = random.split(key, num=5)
    key, subkeys = keys[0], keys[1:]
    return jax.vmap(noisy_reading)(subkeys, readings)
