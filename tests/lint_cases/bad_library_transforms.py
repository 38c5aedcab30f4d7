# ruff: noqa
"""Equinox's filter_vmap / filter_pmap and Flax NNX's vmap / pmap: the checks their
semantics share with JAX's transforms.

AX001: a tuple in_axes is a tree prefix of the positional arguments, one entry each.
AX002: an axis that is not an int or None. AX003: Equinox refuses keyword arguments at a
call. AX005: a collective over a name the transform does not bind.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from flax import nnx


def scale(x, w, b):
    return x * w + b


def normalize(x):
    return x / jax.lax.psum(x, "devices")  # expect: AX005


@eqx.filter_vmap(in_axes=(0, None))  # expect: AX001
def rows(x, w, b):
    return x * w + b


def case_filter_vmap_short_in_axes():
    return rows(jnp.ones((3, 2)), jnp.ones(2), 1.0)


def case_nnx_vmap_long_in_axes():
    return nnx.vmap(scale, in_axes=(0, None, None, 0))(jnp.ones((3, 2)), 2.0, 1.0)  # expect: AX001


def case_filter_vmap_bad_axis():
    return eqx.filter_vmap(scale, in_axes=(0, "w", None))(jnp.ones((3, 2)), 2.0, 1.0)  # expect: AX002


def case_filter_vmap_keyword_call():
    f = eqx.filter_vmap(scale)
    return f(jnp.ones((3, 2)), w=2.0, b=1.0)  # expect: AX003


def case_filter_pmap_unbound_name():
    return eqx.filter_pmap(normalize, axis_name="batch")(jnp.ones((2, 3)))


def case_nnx_vmap_binds_no_name():
    return nnx.vmap(lambda x: jax.lax.pmean(x, "i"))(jnp.ones((3, 2)))  # expect: AX005


if __name__ == "__main__":
    case_filter_vmap_short_in_axes()
    case_nnx_vmap_long_in_axes()
    case_filter_vmap_bad_axis()
    case_filter_vmap_keyword_call()
    case_filter_pmap_unbound_name()
    case_nnx_vmap_binds_no_name()
