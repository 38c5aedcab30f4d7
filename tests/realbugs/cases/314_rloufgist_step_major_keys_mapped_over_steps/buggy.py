import jax
import jax.numpy as jnp
from jax import random


def kernel(key, state):
    # one random-walk Metropolis step on a standard normal target
    key_move, key_accept = random.split(key)
    proposal = state + 0.7 * random.normal(key_move, state.shape)
    log_ratio = 0.5 * (jnp.sum(state**2) - jnp.sum(proposal**2))
    accept = jnp.log(random.uniform(key_accept)) < log_ratio
    return jnp.where(accept, proposal, state)


def chain(step_keys, initial_state):
    # moves one chain through all its steps, one key per step
    def one_step(state, key):
        new_state = kernel(key, state)
        return new_state, new_state

    _, states = jax.lax.scan(one_step, initial_state, step_keys)
    return states


def main():
    num_samples, num_chains = 4, 4
    # keys laid out step-major, (num_samples, num_chains), as for a scan over vmapped steps
    keys = random.split(random.PRNGKey(0), num_samples * num_chains).reshape(num_samples, num_chains, 2)
    initial_states = jnp.array([[0.0, 0.0], [2.0, -2.0], [-3.0, 1.0], [1.0, 3.0]])
    return jax.vmap(chain)(keys, initial_states)
