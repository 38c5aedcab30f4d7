import jax
import jax.numpy as jnp


def init_dense(key, sample, features=5):
    w_key, b_key = jax.random.split(key)
    fan_in = sample.shape[-1]
    kernel = jax.random.normal(w_key, (fan_in, features)) / jnp.sqrt(fan_in)
    bias = 0.01 * jax.random.normal(b_key, (features,))
    return {"kernel": kernel, "bias": bias}


def main():
    keys = jax.random.split(jax.random.PRNGKey(7), 4)  # one key per ensemble member
    sample = jnp.ones((3,))  # a dummy input: only its shape matters
    return jax.vmap(init_dense)(keys, sample)
