# ruff: noqa
"""AX003: in_axes entries for arguments passed by keyword.

in_axes covers only the positional arguments of a call; JAX maps every keyword argument
over axis 0 and counts only the positional ones against in_axes.
"""

from functools import partial

import jax
import jax.numpy as jnp

import axischeck as ax


def scale(x, w):
    return x * w


def scale_kw(x, *, w):
    return x * w


@partial(jax.vmap, in_axes=(0, None))
def rows(x, w):
    return x * w


def case_keyword_call():
    f = jax.vmap(scale, in_axes=(0, None))
    return f(jnp.ones((3, 4)), w=jnp.ones(4))  # expect: AX003


def case_decorated_keyword_call():
    return rows(jnp.ones((3, 4)), w=jnp.ones(4))  # expect: AX003


def case_keyword_only():
    # w is keyword-only: in_axes cannot give it None.
    return jax.vmap(scale_kw, in_axes=(0, None))(jnp.ones((3, 4)), w=jnp.ones(4))  # expect: AX003


def case_dict_of_names():
    return ax.vmap(scale, in_axes={"x": 0, "w": None})  # expect: AX003


def case_pmap_static_argument_by_keyword():
    g = jax.pmap(scale, static_broadcasted_argnums=(1,))
    return g(jnp.ones((2, 1)), w=1)  # expect: AX003


if __name__ == "__main__":
    case_pmap_static_argument_by_keyword()
    case_keyword_call()
    case_decorated_keyword_call()
    case_keyword_only()
    case_dict_of_names()
