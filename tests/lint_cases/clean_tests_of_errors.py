# ruff: noqa
"""Tests of JAX's errors: the failing code runs only inside `pytest.raises`, through
helpers a call or two away, and lint stays silent."""

import jax
import jax.numpy as jnp
import pytest


def add(x, y):
    return x + y


def run(f, x, y, axes):
    return jax.vmap(f, in_axes=axes)(x, y)


def test_too_few_axes():
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1"):
        run(add, jnp.ones(3), jnp.ones(3), (0,))


def double(v):
    return v * 2.0


def apply(x):
    return jax.vmap(double, in_axes=1)(x)


def check(x):
    return apply(x)


def test_rank_error():
    with pytest.raises(ValueError, match="rank should be at least 2"):
        check(jnp.ones(3))
