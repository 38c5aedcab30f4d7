import itertools

import jax
import jax.numpy as jnp


def init(rng, x):
    # parameters of a small MLP, their shapes inferred from a dummy input
    sizes = [x.shape[-1], 8, 2]
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        rng, sub = jax.random.split(rng)
        params.append({"w": jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in), "b": jnp.zeros(fan_out)})
    return params


def main():
    ensemble_size = 4
    rngs = jax.random.split(jax.random.PRNGKey(42), ensemble_size)
    x = jnp.array([[1.0, 2.0, 3.0]])
    # one parameter set per member, all shaped from the same dummy input
    return jax.vmap(init, in_axes=(0, None))(rngs, x)
