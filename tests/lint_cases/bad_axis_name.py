# ruff: noqa
"""AX005: collectives over axis names that no enclosing transform binds."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.lax import pmean as mean_over

import axischeck as ax


@partial(jax.pmap, axis_name="batch")
def normalize(x):
    return x / lax.psum(x, "batc")  # expect: AX005


def centred(x):
    return x - mean_over(x, axis_name="devices")  # expect: AX005


def step(x):
    return centred(x) * 2


def case_decorated():
    return normalize(jnp.ones((2, 3)))


def case_called_from_mapped_function():
    return jax.vmap(step, axis_name="batch")(jnp.ones((2, 3)))


def case_nested_lambda():
    inner = jax.vmap(lambda x: jax.lax.pmax(x, ("rows", "cols")), axis_name="rows")  # expect: AX005
    return jax.vmap(inner, axis_name="colz")(jnp.ones((2, 3, 4)))


def case_axis_index():
    return ax.vmap(lambda x: x + lax.axis_index("j"), axis_name="i")(jnp.ones((3, 2)))  # expect: AX005


def case_all_gather():
    return jax.pmap(lambda x: lax.all_gather(x, axis_name="model"), axis_name="data")(jnp.ones((2, 3)))  # expect: AX005


def total(x):
    return jax.lax.psum(x, axis_name="batch")


def case_transform_binds_no_name():
    return jax.pmap(total)(jnp.ones((2, 3)))  # expect: AX005


if __name__ == "__main__":
    case_transform_binds_no_name()
    case_decorated()
    case_called_from_mapped_function()
    case_nested_lambda()
    case_axis_index()
    case_all_gather()
