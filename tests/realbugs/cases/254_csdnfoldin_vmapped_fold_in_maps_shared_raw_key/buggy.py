import jax
import jax.numpy as jnp


def step_noise(key, step):
    step_key = jax.random.fold_in(key, step)
    return jax.random.normal(step_key, (3,))


def main():
    key = jax.random.PRNGKey(42)
    steps = jnp.arange(5)
    return jax.vmap(step_noise)(key, steps)
