import jax
import jax.numpy as jnp
from jax import random


def noisy_reading(key, reading):
    return reading + 0.1 * random.normal(key)


def main():
    key = random.key(42)
    readings = jnp.arange(4.0)
    key, *subkeys = random.split(key, num=5)
    return jax.vmap(noisy_reading)(subkeys, readings)
