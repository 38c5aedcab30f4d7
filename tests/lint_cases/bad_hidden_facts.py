# ruff: noqa
"""Mistakes one step away from the transform: in_axes in a constant, a partial that binds
an argument, a default parameter, a collective under a transform that binds no name."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

IN = [None, 0]


def affine(w, x):
    return w * x


def pair_loss(pair):
    prediction, target = pair
    return ((prediction - target) ** 2).sum()


def case_pmap_list_in_a_constant():
    return jax.pmap(affine, in_axes=IN)(1.0, jnp.ones((2, 3)))  # expect: AX002


def case_partial_binds_by_keyword():
    run = partial(jax.vmap(affine, in_axes=(None, 0)), w=2.0)
    return run(jnp.ones((4, 3)))  # expect: AX003


def mse(model, data, batch_axis=(0, 0)):
    return jax.vmap(model, in_axes=batch_axis)(data)  # expect: AX001


def case_default_parameter():
    return mse(pair_loss, (jnp.ones((4, 3)), jnp.ones((4, 3))))


def apply_pairwise(model, x, y, axes=(0, 0)):
    # model is pair_loss at the only call: it takes one (tuple) argument, not two.
    return jax.vmap(model, in_axes=axes)(x, y)  # expect: AX001


def case_parameter_holds_one_function():
    return apply_pairwise(pair_loss, jnp.ones((4, 3)), jnp.ones((4, 3)))


def case_collective_without_a_name():
    return jax.pmap(lambda x: lax.psum(x, "batch"))(jnp.ones((2, 3)))  # expect: AX005


if __name__ == "__main__":
    case_pmap_list_in_a_constant()
    case_partial_binds_by_keyword()
    case_default_parameter()
    case_parameter_holds_one_function()
    case_collective_without_a_name()
