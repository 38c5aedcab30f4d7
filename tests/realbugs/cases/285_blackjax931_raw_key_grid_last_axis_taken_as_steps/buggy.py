import jax
import jax.numpy as jnp
from jax import random


def step_all_chains(step_keys, positions):
    moves = jax.vmap(random.normal)(step_keys)
    return positions + 0.1 * moves


@jax.jit
def run_steps(keys, positions):
    # keys holds one key per (chain, step): the step axis is taken as the last one
    return jax.vmap(step_all_chains, in_axes=(-1, None))(keys, positions)


def main():
    num_chains, num_steps = 3, 5
    keys = random.split(random.PRNGKey(0), (num_chains, num_steps))
    positions = jnp.arange(3.0)
    return run_steps(keys, positions)
