# ruff: noqa
"""AX015: every in_axes entry is None, no keyword argument and no axis_size.

Nothing is mapped, so the transform cannot know the size of the mapped axis.
"""

import jax
import jax.numpy as jnp

import axischeck as ax

NOTHING = (None, None)


def scale(w, x):
    return w * x


def case_none():
    return jax.vmap(lambda x: x * 2, in_axes=None)(jnp.ones(3))  # expect: AX015


def case_tuple_in_a_constant():
    return jax.vmap(scale, in_axes=NOTHING)(1.0, jnp.ones(3))  # expect: AX015


def case_pmap():
    return jax.pmap(scale, in_axes=(None, None))(1.0, jnp.ones(2))  # expect: AX015


def case_axischeck():
    f = ax.vmap(scale, in_axes=[None, None])
    return f(jnp.ones(3), jnp.ones(3))  # expect: AX015


if __name__ == "__main__":
    case_none()
    case_tuple_in_a_constant()
    case_pmap()
    case_axischeck()
