import functools

import jax
import jax.numpy as jnp


def periodic_distance(ra, rb, box):
    dr = jnp.mod(ra - rb + box / 2.0, box) - box / 2.0
    return jnp.sqrt(jnp.sum(dr**2))


def main():
    positions = jnp.arange(16.0).reshape(8, 2) / 3.0
    i = jnp.array([0, 1, 2, 3, 4, 5])
    j = jnp.array([1, 2, 3, 4, 5, 6])
    box = jnp.array([4.0, 5.0])
    return jax.vmap(functools.partial(periodic_distance, box=box))(positions[i], positions[j])
