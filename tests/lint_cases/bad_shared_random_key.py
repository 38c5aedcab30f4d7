# ruff: noqa
"""AX022: a mapped function draws from a random key that is the same along the map.

A key passed with None in in_axes (or P() in in_specs), closed over, or made inside from a
constant seed gives every example (or device) the same draws: JAX runs, silently.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

KEY = jax.random.key(0)


def noisy(x, key):
    return x + jax.random.normal(key, x.shape)  # expect: AX022


def dropout(x, rng):
    k1, k2 = jax.random.split(rng)
    keep = jax.random.bernoulli(k2, 0.9, x.shape)  # expect: AX022
    return jnp.where(keep, x / 0.9, 0.0)


def case_in_axes_none(xs):
    return jax.vmap(noisy, in_axes=(0, None))(xs, KEY)


def case_split_unmapped(xs):
    return jax.vmap(dropout, in_axes=(0, None))(xs, KEY)


def case_closure(xs, key):
    return jax.vmap(lambda x: x + jax.random.uniform(key, x.shape))(xs)  # expect: AX022


def case_seed(xs):
    return jax.vmap(lambda x: x * jax.random.normal(jax.random.key(0), x.shape))(xs)  # expect: AX022


def case_pmap(xs):
    return jax.pmap(lambda x, k: x + jax.random.normal(k, x.shape), in_axes=(0, None))(xs, KEY)  # expect: AX022


def block(x, key):
    return x + jax.random.normal(key, x.shape)  # expect: AX022


def case_shard_map(xs, mesh):
    return jax.shard_map(block, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(xs, KEY)


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 3, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(self.linear(x))


def case_nnx(model, xs):
    return nnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({...: None}), 0))(model, xs)  # expect: AX022


class AugmentedModel(nnx.Module):
    def __init__(self, rngs):
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(x)


def augment(x, *, rngs):
    return x + jax.random.normal(rngs.noise(), x.shape)


def forward_augmented(model, x, rngs):
    x = augment(x, rngs=rngs)  # the mapped Rngs go to augment, not to the broadcast model
    return model(x)


def case_nnx_mapped_rngs_passed_elsewhere(model, xs):
    return nnx.vmap(forward_augmented, in_axes=(None, 0, 0))(model, xs, nnx.Rngs(noise=1).split(4))  # expect: AX022
