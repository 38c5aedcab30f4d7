import jax
import jax.numpy as jnp


def log_density(params, x, y):
    mu = params["a"] + params["b"] * x
    log_lik = jnp.sum(-0.5 * ((y - mu) / params["sigma"]) ** 2 - jnp.log(params["sigma"]))
    log_prior = -0.5 * (params["a"] ** 2 + params["b"] ** 2)
    return log_lik + log_prior


def main():
    draws = {
        "a": jnp.linspace(-0.5, 0.5, 6),
        "b": jnp.linspace(0.8, 1.6, 6),
        "sigma": jnp.linspace(0.5, 1.0, 6),
    }
    x = jnp.linspace(0.0, 2.0, 6)
    y = 0.2 + 1.1 * x + jnp.array([0.1, -0.2, 0.05, 0.3, -0.1, 0.0])
    return jax.vmap(log_density, in_axes=(0, None, None))(draws, x, y)
