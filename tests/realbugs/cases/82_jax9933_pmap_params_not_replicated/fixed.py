import jax
import jax.numpy as jnp


def param_norm(params):
    return jnp.sum(params["kernel"] ** 2) + params["bias"][0]


def main():
    params = {"bias": jnp.arange(1.0) + 0.5, "kernel": jnp.arange(2.0) + 1.0}
    n_devices = 4
    replicated = jax.tree.map(lambda a: jnp.broadcast_to(a, (n_devices, *a.shape)), params)
    return jax.pmap(param_norm)(replicated)
