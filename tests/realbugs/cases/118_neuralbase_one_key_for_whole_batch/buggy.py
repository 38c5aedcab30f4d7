import jax
import jax.numpy as jnp
from jax import random


def augment(key, image):
    noise = random.normal(key, image.shape)
    return image + 0.05 * noise


def main():
    key = random.PRNGKey(42)
    images = jnp.arange(12.0).reshape(4, 3) / 12.0
    return jax.vmap(augment, in_axes=(None, 0))(key, images)
