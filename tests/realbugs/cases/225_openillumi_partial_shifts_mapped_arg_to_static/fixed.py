from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(2,))
def damped_sum(z, decay, n_terms):
    powers = decay ** jnp.arange(n_terms)
    return z * jnp.sum(powers)


def main():
    rows = jnp.linspace(-1.0, 1.0, 5)
    decay, n_terms = 0.5, 4
    return jax.vmap(lambda z: damped_sum(z, decay, n_terms))(rows)
