import jax
import jax.numpy as jnp
from jax import random


def log_likelihood(rng_key, params, data):
    # per-observation log N(y | w x + b, sigma) for one posterior draw; the key jitters sigma
    x, y = data
    sigma = 0.5 + 0.01 * random.uniform(rng_key)
    mu = params["w"] * x + params["b"]
    return -0.5 * ((y - mu) / sigma) ** 2 - jnp.log(sigma)


def main():
    n = 3
    params = {"w": jnp.array([1.0, 1.2, 0.8]), "b": jnp.array([0.0, -0.1, 0.1])}
    x_test = jnp.linspace(0.0, 1.0, 5)
    y_test = 1.1 * x_test
    keys = random.split(random.PRNGKey(2), n)
    log_lk_fn = jax.vmap(log_likelihood, in_axes=(0, 0, None))
    return log_lk_fn(keys, params, (x_test, y_test))
