# ruff: noqa
"""AX009: in_axes / out_axes out of range for the declared per-example rank.

A per-example rank r means a batched rank r + 1: in_axes must be in [-(r+1), r] and so
must out_axes (for the output's per-example rank).
"""

from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

import axischeck as ax


def row_sum(x: Annotated[jax.Array, "n"]) -> Annotated[jax.Array, ""]:
    return x.sum()


def outer(x: Float[Array, "n"], y: Float[Array, "m"]) -> Float[Array, "n m"]:
    return jnp.outer(x, y)


def case_in_axes_too_big():
    return jax.vmap(row_sum, in_axes=2)(jnp.ones((3, 4)))  # expect: AX009


def case_in_axes_negative():
    return jax.vmap(outer, in_axes=(0, -3))(jnp.ones((5, 3)), jnp.ones((5, 4)))  # expect: AX009


def case_out_axes():
    # The per-example output is a scalar: the batched output has rank 1.
    return ax.vmap(row_sum, out_axes=1)(jnp.ones((5, 3)))  # expect: AX009


def case_signature_rank():
    return ax.vmap(lambda a, b: a * b, in_axes=(0, 2), signature="(n),(n)->(n)")(  # expect: AX009
        jnp.ones((5, 3)), jnp.ones((3, 5))
    )


@partial(jax.vmap, in_axes=(1, None), out_axes=3)  # expect: AX009
def table(x: Float[Array, "n"], y: Float[Array, "m"]) -> Float[Array, "n m"]:
    return jnp.outer(x, y)


def case_decorated():
    return table(jnp.ones((3, 5)), jnp.ones(4))


def case_nested():
    # The inner vmap adds one axis: the outer sees rank 2 per example, so 3 is out of range.
    return jax.vmap(jax.vmap(row_sum), in_axes=3)(jnp.ones((2, 3, 4)))  # expect: AX009


if __name__ == "__main__":
    case_in_axes_too_big()
    case_in_axes_negative()
    case_out_axes()
    case_signature_rank()
    case_decorated()
    case_nested()
