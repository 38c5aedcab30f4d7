import jax
import jax.numpy as jnp
from jax import random


def add_noise(key, image):
    return image + 0.1 * random.normal(key, image.shape)


def main():
    key = random.key(42)
    images = jnp.arange(24.0).reshape(4, 6) / 24.0
    return jax.vmap(add_noise, in_axes=(None, 0))(key, images)
