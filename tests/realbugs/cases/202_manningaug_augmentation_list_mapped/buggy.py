import jax
import jax.numpy as jnp
from jax import lax, random


def add_noise(key, image):
    return image + 0.1 * random.normal(key, image.shape)


def flip(key, image):
    return image[:, ::-1]


def random_augmentation(key, image, augmentations):
    k_choice, k_aug = random.split(key)
    index = random.randint(k_choice, (), 0, len(augmentations))
    return lax.switch(index, augmentations, k_aug, image)


def main():
    images = jnp.arange(36.0).reshape(4, 3, 3) / 36.0
    keys = random.split(random.key(7), images.shape[0])
    return jax.vmap(random_augmentation)(keys, images, [add_noise, flip])
