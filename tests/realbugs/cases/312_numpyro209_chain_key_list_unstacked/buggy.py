import jax
import jax.numpy as jnp
from jax import random


def run_chain(rng_key, init):
    # a toy random-walk chain: 6 Gaussian steps from the chain's initial value
    steps = 0.5 * random.normal(rng_key, (6,) + init.shape)
    return init[None, :] + jnp.cumsum(steps, axis=0)


def main():
    num_chains = 2
    rng_keys = [random.PRNGKey(i) for i in range(num_chains)]
    inits = jnp.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    return jax.vmap(run_chain)(rng_keys, inits)
