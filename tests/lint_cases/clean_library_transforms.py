# ruff: noqa
"""Equinox and Flax NNX transforms used as their libraries allow: nothing to report.

Equinox's default in_axes is `if_array(0)`, so Python scalars are not mapped; a dict
in_axes names parameters; `eqx.if_array(k)` and `nnx.StateAxes` leaves are read as unknown.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from flax import nnx


def scale(x, w, b):
    return x * w + b


@eqx.filter_vmap
def rows(x, w, b):
    return x * w + b


@eqx.filter_vmap(in_axes=(eqx.if_array(0), None, None), axis_name="batch")
def centred(x, w, b):
    return x - jax.lax.pmean(x, "batch") + w * b


rows(jnp.ones((3, 2)), 2.0, 1.0)
centred(jnp.ones((3, 2)), 2.0, 1.0)
eqx.filter_vmap(scale, in_axes=dict(x=0, w=None))(jnp.ones((3, 2)), jnp.ones(2), 1.0)
eqx.filter_vmap(lambda x, n: n * 2, out_axes=None)(jnp.ones((3, 2)), 2.0)
eqx.filter_pmap(lambda x: jax.lax.psum(x, "d"), axis_name="d")(jnp.ones((2, 3)))
nnx.vmap(scale, in_axes=(0, None, None))(jnp.ones((3, 2)), 2.0, 1.0)
model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
nnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({...: None}), 0))(model, jnp.ones((4, 2)))
nnx.vmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(jnp.ones((3, 2)))
