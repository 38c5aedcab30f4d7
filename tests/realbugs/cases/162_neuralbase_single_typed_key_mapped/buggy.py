import jax
import jax.numpy as jnp


def reparameterize(key, mean, log_var):
    eps = jax.random.normal(key, mean.shape)
    return mean + jnp.exp(0.5 * log_var) * eps


def main():
    key = jax.random.key(42)
    means = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    log_vars = jnp.linspace(-2.0, 0.0, 12).reshape(4, 3)
    return jax.vmap(reparameterize)(key, means, log_vars)
