import jax
import jax.numpy as jnp
from jax import random


def elbo_sample(key, mean, log_std):
    z = mean + jnp.exp(log_std) * random.normal(key, mean.shape)
    return -0.5 * jnp.sum(z**2) + jnp.sum(log_std)


def main():
    rng = random.PRNGKey(0)
    keys = [random.fold_in(rng, i) for i in range(4)]
    mean = jnp.arange(3.0) / 3.0
    log_std = -jnp.arange(3.0) / 5.0
    return jax.vmap(elbo_sample, in_axes=(0, None, None))(keys, mean, log_std)
