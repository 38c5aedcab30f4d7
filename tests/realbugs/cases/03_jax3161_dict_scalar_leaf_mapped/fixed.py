import jax
import jax.numpy as jnp


def shift(params, c, d):
    return params["a"] + params["b"] + c + d


def main():
    params = {"a": jnp.float32(5.0), "b": jnp.arange(5.0)}
    return jax.vmap(shift, in_axes=({"a": None, "b": 0}, None, None))(params, 1.0, 2.0)
