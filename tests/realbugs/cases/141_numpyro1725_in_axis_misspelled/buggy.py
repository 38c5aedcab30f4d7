import jax
import jax.numpy as jnp
from jax import random


def sample_one_chain(state, step_size, num_steps):
    position, rng_key = state
    moves = step_size * random.normal(rng_key, (num_steps,))
    return position + jnp.cumsum(moves)


def main():
    rng_keys = random.split(random.PRNGKey(0), 3)
    init_positions = jnp.array([-1.0, 0.0, 1.0])
    sample = jax.vmap(sample_one_chain, in_axis=(0, None, None))
    return sample((init_positions, rng_keys), 0.5, 5)
