# ruff: noqa
"""No AX022: keys that are mapped, split per example, folded with the axis index or with
mapped data, and draws that only reach unmapped outputs (common random numbers)."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

KEY = jax.random.key(0)


def noisy(x, key):
    return x + jax.random.normal(key, x.shape)


def case_mapped(xs):
    return jax.vmap(noisy)(xs, jax.random.split(KEY, xs.shape[0]))


def case_folded(xs):
    def f(x, key):
        return noisy(x, jax.random.fold_in(key, jax.lax.axis_index("batch")))

    return jax.vmap(f, in_axes=(0, None), axis_name="batch")(xs, KEY)


def case_folded_data(xs, ids):
    return jax.vmap(lambda x, i, k: noisy(x, jax.random.fold_in(k, i)), in_axes=(0, 0, None))(xs, ids, KEY)


def case_common_random_numbers(xs):
    return jax.vmap(lambda x, k: jax.random.normal(k, (3,)), in_axes=(0, None), out_axes=None)(xs, KEY)


def block(x, key):
    return noisy(x, jax.random.fold_in(key, jax.lax.axis_index("x")))


def case_shard_map(xs, mesh):
    return jax.shard_map(block, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(xs, KEY)


class Model(nnx.Module):
    def __init__(self, rngs):
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(x)


@nnx.split_rngs(splits=4)
def case_nnx(model, xs):
    return nnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({nnx.RngState: 0, ...: None}), 0))(model, xs)


class ExplicitRngsModel(nnx.Module):
    def __init__(self, rngs):
        self.dropout = nnx.Dropout(0.5)

    def __call__(self, x, *, rngs):
        return self.dropout(x, rngs=rngs)


def forward(model, x, rngs):
    return model(x, rngs=rngs)


def case_nnx_explicit_rngs_mapped(model, xs):
    # Flax's randomness guide: the module broadcast, the Rngs split per example and mapped.
    return nnx.vmap(forward, in_axes=(None, 0, 0))(model, xs, nnx.Rngs(dropout=1).split(4))


def case_parameter_drawn_once_for_the_batch(xs):
    # dm-haiku#458's init: one draw for the batch, returned with out_axes None.
    def init(x, key):
        w = jax.random.normal(key, (2,))
        return x * w.sum(), w

    return jax.vmap(init, in_axes=(0, None), out_axes=(0, None))(xs, KEY)
