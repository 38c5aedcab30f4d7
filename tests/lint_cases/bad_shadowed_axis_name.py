# ruff: noqa
"""AX006: one axis name bound twice in a nest (the inner binding hides the outer).

JAX allows it, so this is a warning: collectives inside reduce over the inner axis only.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

import axischeck as ax


def total(x):
    return lax.psum(x, "i")


def case_nested_calls():
    return jax.vmap(jax.vmap(total, axis_name="i"), axis_name="i")(jnp.ones((2, 3)))  # expect: AX006


@partial(ax.vmap, axis_name="batch")  # expect: AX006
def per_example(x):
    return lax.pmean(x, "batch")


def case_decorated_under_vmap():
    return jax.vmap(per_example, axis_name="batch")(jnp.ones((2, 3, 4)))


@partial(jax.pmap, axis_name="devices")
def outer(x):
    return jax.vmap(lambda y: lax.psum(y, "devices"), axis_name="devices")(x)  # expect: AX006


if __name__ == "__main__":
    case_nested_calls()
    case_decorated_under_vmap()
    outer(jnp.ones((2, 3)))
