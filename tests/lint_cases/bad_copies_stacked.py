# ruff: noqa
"""AX028: a shard_map or smap that splits no argument but splits its output.

jax's smap commit: None in in_axes means replicated, and a bare None applies to every
argument, so `in_axes=None` written for the weights replicates the batch too. Every
device then computes the same output, and `out_axes=0` stacks the copies, silently. A
buffer made from nothing, or a block that reads the device's index, is per device on
purpose and is not reported.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def forward(w, x):
    return jnp.tanh(x @ w)


def per_device_row(w):
    return w * jax.lax.axis_index("x")


def case_smap_in_axes_none_for_the_weights():
    return jax.smap(forward, in_axes=None, out_axes=0, axis_name="x")  # expect: AX028


def case_shard_map_every_argument_whole(mesh):
    return jax.shard_map(forward, mesh=mesh, in_specs=(P(), P()), out_specs=P("x"))  # expect: AX028


def case_split_batch_is_fine(mesh):
    return jax.shard_map(forward, mesh=mesh, in_specs=(P(), P("x")), out_specs=P("x"))


def case_fresh_buffer_is_fine(mesh):
    return jax.shard_map(lambda w: jnp.zeros((4,)), mesh=mesh, in_specs=P(), out_specs=P("x"))


def case_device_index_is_fine(mesh):
    return jax.shard_map(per_device_row, mesh=mesh, in_specs=P(), out_specs=P("x"))


def shifted(x):
    return x + jax.lax.ppermute(x, "x", perm=[(0, 1)])


def scattered(x):
    return x * 2.0 + jax.lax.psum_scatter(x, "x", tiled=True)


def case_collectives_that_differ_per_device_are_fine(mesh):
    a = jax.shard_map(shifted, mesh=mesh, in_specs=P(), out_specs=P("x"))
    b = jax.shard_map(scattered, mesh=mesh, in_specs=P(), out_specs=P("x"))
    return a, b


def case_replicated_output_is_fine(mesh):
    return jax.shard_map(forward, mesh=mesh, in_specs=(P(), P()), out_specs=P())
