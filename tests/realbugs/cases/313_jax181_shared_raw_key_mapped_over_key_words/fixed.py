import jax
import jax.numpy as jnp
from jax import random


def logprob(z):
    # unnormalised log density of a 2-D Gaussian centred at (1, -1)
    return -0.5 * jnp.sum((z - jnp.array([[1.0, -1.0]])) ** 2, axis=-1)


def elbo(rng, mean, log_std):
    # Monte Carlo ELBO of a diagonal Gaussian q(z) with 8 reparameterised samples
    eps = random.normal(rng, (8, 2))
    z = mean[None, :] + jnp.exp(log_std)[None, :] * eps
    entropy = jnp.sum(log_std)
    return jnp.mean(logprob(z)) + entropy


def main():
    rng = random.PRNGKey(0)
    # two variational settings scored with the same draws (common random numbers)
    means = jnp.array([[0.0, 0.0], [1.0, -1.0]])
    log_stds = jnp.array([[0.0, 0.0], [-1.0, -1.0]])
    return jax.vmap(elbo, in_axes=(None, 0, 0))(rng, means, log_stds)
