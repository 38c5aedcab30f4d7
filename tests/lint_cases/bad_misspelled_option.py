# ruff: noqa
"""AX023: a keyword the transform does not take, most often an option's name misspelled
(in the singular, or from another transform): JAX raises TypeError before anything runs."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def scale(x, w):
    return x * w


def case_axis_for_in_axes():
    return jax.vmap(scale, axis=(0, None))(jnp.ones((3, 2)), jnp.ones(2))  # expect: AX023


def case_in_axis():
    return jax.vmap(scale, in_axis=(0, None))(jnp.ones((3, 2)), jnp.ones(2))  # expect: AX023


def case_torch_in_dims():
    return jax.vmap(scale, in_dims=(0, None))(jnp.ones((3, 2)), jnp.ones(2))  # expect: AX023


def case_pmap_out_axis():
    return jax.pmap(scale, out_axis=0)(jnp.ones((1, 2)), jnp.ones((1, 2)))  # expect: AX023


def case_shard_map_check_rep(mesh):
    f = jax.shard_map(scale, mesh=mesh, in_specs=P(), out_specs=P(), check_rep=False)  # expect: AX023
    return f(jnp.ones(2), jnp.ones(2))


def case_vmap_static_argnums():
    return jax.vmap(scale, static_argnums=(1,))(jnp.ones((3, 2)), 2.0)  # expect: AX023


if __name__ == "__main__":
    case_axis_for_in_axes()
