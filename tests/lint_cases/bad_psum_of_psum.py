# ruff: noqa
"""AX019: a psum of a value already summed over the same axis.

The inner psum gives the same value on every member of the axis; summing it again
multiplies it by the axis size. JAX accepts it (a warning).
"""

import jax
import jax.numpy as jnp
from jax import lax


def total(x):
    return lax.psum(lax.psum(x, "i"), "i")  # expect: AX019


def total_in_steps(x):
    s = jax.lax.psum(x, axis_name="i")
    return jax.lax.psum(s, axis_name="i")  # expect: AX019


def case_nested():
    return jax.pmap(total, axis_name="i")(jnp.ones((2, 3)))


def case_in_steps():
    return jax.vmap(total_in_steps, axis_name="i")(jnp.ones((2, 3)))


if __name__ == "__main__":
    case_nested()
    case_in_steps()
