# ruff: noqa
"""Correct versions of the bad_hidden_facts cases, and collectives the linter cannot be
sure run: it stays silent."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

IN = (None, 0)


def affine(w, x):
    return w * x


def pair_loss(pair):
    prediction, target = pair
    return ((prediction - target) ** 2).sum()


def mse(model, data, batch_axis=((0, 0),)):
    return jax.vmap(model, in_axes=batch_axis)(data)


def maybe_synced(x, sync=False):
    if sync:
        x = lax.pmean(x, "i")  # off on the vmap path below: never reached there
    return x


def early_exit(x, reduce=False):
    if not reduce:
        return x
    return lax.psum(x, "i")


def main():
    jax.pmap(affine, in_axes=IN)(1.0, jnp.ones((2, 3)))
    partial(jax.vmap(affine, in_axes=(None, 0)), 2.0)(jnp.ones((4, 3)))
    mse(pair_loss, (jnp.ones((4, 3)), jnp.ones((4, 3))))
    jax.pmap(lambda x: lax.psum(x, "batch"), axis_name="batch")(jnp.ones((2, 3)))
    jax.vmap(maybe_synced)(jnp.ones(3))
    jax.vmap(maybe_synced, axis_name="batch")(jnp.ones(3))  # binds "batch", never "i": sync is off
    jax.vmap(early_exit)(jnp.ones(3))
    jax.vmap(lambda x: lax.psum(x, "i") if x.ndim > 5 else x)(jnp.ones(3))


def test_the_unbound_name_raises():
    import pytest

    def summed(x):
        return lax.psum(x, "batch")  # a test of JAX's error: the pmap runs in pytest.raises

    with pytest.raises(NameError, match="unbound axis name"):
        jax.pmap(summed)(jnp.ones((2, 3)))


if __name__ == "__main__":
    main()
