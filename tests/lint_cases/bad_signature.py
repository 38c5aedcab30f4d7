# ruff: noqa
"""AX007, AX008, AX012: `signature=` against the function it describes."""

from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

import axischeck as ax


def dot(x, w):
    return x @ w


def norm(x: Annotated[jax.Array, "n d"]) -> Annotated[jax.Array, "n"]:
    return jnp.sqrt((x * x).sum(-1))


def case_more_inputs():
    return ax.vmap(dot, signature="(n),(n,m),(m)->(m)")  # expect: AX007


def case_unknown_name():
    return ax.vmap(dot, signature={"x": "n", "weights": "n m"})  # expect: AX007


def case_unreadable():
    return ax.vmap(dot, signature="(n,m),(m->(n)")  # expect: AX012


def case_unreadable_dims():
    return ax.vmap(dot, signature=("n", "n m!"))  # expect: AX012


def case_rank_against_annotation():
    # The annotation says x is (n, d) per example; the signature says rank 1.
    f = ax.vmap(norm, signature="(d)->()")  # expect: AX008
    return f(jnp.ones((4, 3, 2)))


@partial(ax.vmap, in_axes=(0, None), signature="(a,b),(b)->(a)")  # expect: AX008
def matvec(m: Float[Array, "a b"], v: Float[Array, "b c"]) -> Float[Array, "a"]:
    return m @ v


def case_decorated():
    return matvec(jnp.ones((5, 2, 3)), jnp.ones((3, 4)))


if __name__ == "__main__":
    case_more_inputs()
    case_unknown_name()
    case_unreadable()
    case_unreadable_dims()
    case_rank_against_annotation()
    case_decorated()
