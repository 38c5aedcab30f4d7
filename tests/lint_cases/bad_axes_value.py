# ruff: noqa
"""AX002: in_axes / out_axes values JAX refuses (a str, a float, a bool, a pmap list)."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import pmap, vmap

import axischeck as ax


def scale(x, w):
    return x * w


def case_str_entry():
    return jax.vmap(scale, in_axes=(0, "w"))  # expect: AX002


def case_float_entry():
    return vmap(scale, in_axes=(0, 1.0))  # expect: AX002


def case_bool_entry():
    # JAX rejects bools: True is not the axis 1.
    return ax.vmap(scale, in_axes=(True, None))  # expect: AX002


def case_str_out_axes():
    return jax.vmap(scale, out_axes="batch")  # expect: AX002


def case_nested_leaf():
    return jax.vmap(lambda p, x: p["w"] * x, in_axes=({"w": 0.0}, 0))  # expect: AX002


def case_top_level_str():
    return jax.vmap(scale, in_axes="0")  # expect: AX002


def case_pmap_list():
    # vmap reads a top-level list as a tuple; pmap does not.
    return pmap(scale, in_axes=[0, None])(jnp.ones((2, 3)), jnp.ones(3))  # expect: AX002


def case_partial_decorator():
    @partial(jax.vmap, in_axes=(0, None), out_axes=(0.5,))  # expect: AX002
    def f(x, w):
        return x * w

    return f


if __name__ == "__main__":
    case_str_entry()
    case_float_entry()
    case_bool_entry()
    case_str_out_axes()
    case_nested_leaf()
    case_top_level_str()
    case_pmap_list()
    case_partial_decorator()
