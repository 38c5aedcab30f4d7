import jax
import jax.numpy as jnp


def norm(x, state):
    mean = jax.lax.pmean(x, ("rows", "cols"))
    return x - mean, 0.9 * state + 0.1 * mean


def main():
    inner = jax.vmap(norm, in_axes=(0, None), out_axes=(0, None), axis_name="cols")
    outer = jax.vmap(inner, in_axes=(0, None), out_axes=(0, None), axis_name="rows")
    return outer(jnp.arange(12.0).reshape(3, 4), jnp.zeros(()))
