import jax
import jax.numpy as jnp


def param_norm(params):
    return jnp.sum(params["kernel"] ** 2) + params["bias"][0]


def main():
    params = {"bias": jnp.arange(1.0) + 0.5, "kernel": jnp.arange(2.0) + 1.0}
    return jax.pmap(param_norm)(params)
