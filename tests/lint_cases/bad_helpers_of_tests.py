# ruff: noqa
"""A test's helper that also runs outside `pytest.raises`: its failing call is a bug."""

import jax
import jax.numpy as jnp
import pytest


def double(v):
    return v * 2.0


def apply(x):
    return jax.vmap(double, in_axes=1)(x)  # expect: AX014


def check(x):
    return apply(x)


def test_rank_error():
    with pytest.raises(ValueError, match="rank should be at least 2"):
        check(jnp.ones(3))


result = check(jnp.ones(3))
