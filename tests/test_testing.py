"""axischeck.testing: assert_predicts_jax and set_n_cpu_devices."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import axischeck as ax
from axischeck.testing import assert_predicts_jax, set_n_cpu_devices

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def test_agreement_and_both_raising() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    pred = assert_predicts_jax(f, (16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert pred is not None and pred.shapes == (16, 8, 2)
    assert assert_predicts_jax(f, (16, 8, 4), (5, 16, 2), (16, 8, 2)) is None
    g = ax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    assert assert_predicts_jax(g, (8, 3)) is not None


def test_a_lying_signature_is_shown_as_a_diff() -> None:
    f = ax.vmap(lambda x: x.sum(0), signature="(n,k)->(k)")  # the truth is (k,) ... unless n != k
    assert_predicts_jax(f, (5, 3, 2))
    liar = ax.vmap(lambda x: x.sum(1), signature="(n,k)->(k)")
    with pytest.raises(AssertionError, match=r"output: JAX \(5, 3\), axischeck \(5, 2\)"):
        assert_predicts_jax(liar, (5, 3, 2))


def test_set_n_cpu_devices() -> None:
    assert jax.device_count() == 8
    set_n_cpu_devices(8)  # already so: nothing to do
    with pytest.raises(ax.SpecError, match="already created its backends"):
        set_n_cpu_devices(4)
    code = (
        "from axischeck.testing import set_n_cpu_devices; set_n_cpu_devices(3); import jax;"
        " print(jax.device_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "3"
