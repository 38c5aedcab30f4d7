import jax.numpy as jnp
from jax import random, vmap


def one_ics_sample(key, u0, m, P):
    idx = random.randint(key, (P,), 0, m)
    return u0[idx]


def main():
    key = random.PRNGKey(0)
    m, P = 6, 3
    u0_train = jnp.arange(4 * m, dtype=jnp.float32).reshape(4, m)
    keys = random.split(key, 10)
    return vmap(one_ics_sample, in_axes=(0, 0, None, None))(keys, u0_train, m, P)
