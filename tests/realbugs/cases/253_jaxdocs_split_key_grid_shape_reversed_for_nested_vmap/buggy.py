import jax
import jax.numpy as jnp


def perturb(key, value):
    return value + 0.01 * jax.random.normal(key)


def main():
    grid = jnp.arange(12.0).reshape(3, 4)
    keys = jax.random.split(jax.random.key(11), (4, 3))
    return jax.vmap(jax.vmap(perturb))(keys, grid)
