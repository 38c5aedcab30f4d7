import jax
import jax.numpy as jnp
from jax import random


def mh_step(key, position):
    key, k_prop, k_acc = random.split(key, 3)
    proposal = position + 0.5 * random.normal(k_prop, position.shape)
    log_ratio = -0.5 * (jnp.sum(proposal**2) - jnp.sum(position**2))
    accept = jnp.log(random.uniform(k_acc)) < log_ratio
    return key, jnp.where(accept, proposal, position)


def main():
    keys = random.split(random.PRNGKey(0), 4)
    positions = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)  # (dim, chains)
    step = jax.vmap(mh_step, in_axes=(0, -1), out_axes=-1)
    for _ in range(3):
        keys, positions = step(keys, positions)
    return positions
