# ruff: noqa
"""Correct collectives and axis names: no findings."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.lax import psum
from jax.sharding import PartitionSpec as P

import axischeck as ax


@partial(jax.pmap, axis_name="batch")
def normalize(x):
    return x / lax.psum(x, "batch")


def mean_grad(g):
    return lax.pmean(g, axis_name="devices")


@partial(jax.pmap, axis_name="devices")
def train_step(x):
    def body(carry, xi):
        return carry + psum(xi, "devices"), None

    total, _ = lax.scan(body, 0.0, x)
    return mean_grad(total)


def nested(x):
    # Two axes, both bound: the inner vmap over rows inside the outer over cols.
    inner = jax.vmap(lambda v: jax.lax.psum(v, ("rows", "cols")), axis_name="rows")
    return jax.vmap(inner, axis_name="cols")(x)


def indices(x):
    return ax.vmap(lambda v: v + lax.axis_index("i"), axis_name="i")(x)


def helper(x):
    # Used in this file only under a transform that binds "model" and from outside
    # (unknown callers): never reported.
    return lax.all_gather(x, "model")


def exported(x):
    return jax.vmap(helper, axis_name="model")(x)


def axis_from_a_variable(x, name):
    return jax.vmap(lambda v: lax.psum(v, name), axis_name=name)(x)


def under_shard_map(mesh, x):
    # shard_map binds the mesh's axes, which the source does not show.
    f = jax.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
    return f(x)


def ppermute_ring(x):
    perm = [(i, (i + 1) % 2) for i in range(2)]
    return jax.pmap(lambda v: lax.ppermute(v, "ring", perm), axis_name="ring")(x)


def different_names(x):
    return jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="j")(x)


def sums_over_two_axes(x):
    # Summing over another axis, or a psum of a psum's *input*, is not a sum counted twice.
    inner = jax.vmap(lambda v: lax.psum(lax.psum(v, "i"), "j") + lax.psum(v * 2, "i"), axis_name="i")
    return jax.vmap(inner, axis_name="j")(x)


def shared_outputs(x):
    # out_axes=None where the output is the same for every example: a psum, a constant,
    # an unmapped argument, or a value the linter cannot read.
    a = jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(x)
    b = jax.vmap(lambda v, w: w * 2.0, in_axes=(0, None), out_axes=None)(x, 3.0)
    c = jax.vmap(lambda v: jnp.zeros(3), out_axes=None)(x)
    d = jax.vmap(lambda v: jnp.zeros_like(v), out_axes=None)(x)
    e = jax.vmap(lambda v, s=1.0: s * 2, out_axes=None)(x)
    return a, b, c, d, e


if __name__ == "__main__":
    sums_over_two_axes(jnp.ones((2, 3, 4)))
    shared_outputs(jnp.ones((2, 3)))
    normalize(jnp.ones((2, 3)))
    train_step(jnp.ones((2, 3)))
    nested(jnp.ones((2, 3, 4)))
    indices(jnp.ones(3))
    exported(jnp.ones(3))
    ppermute_ring(jnp.ones((2, 3)))
    different_names(jnp.ones((2, 3)))
