"""Symbolic shapes (`jax.export`): axischeck predicts them and lets export trace through it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import axischeck as ax

B, N = export.symbolic_shape("b, n")


def struct(*shape: object) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def row_sums(v: jax.Array) -> jax.Array:
    return v.sum()


@pytest.mark.parametrize("signature", [None, "(n)->()"])
def test_predict_returns_the_symbolic_shape_jax_gives(signature: str | None) -> None:
    f = ax.vmap(row_sums, signature=signature)
    want = jax.eval_shape(jax.vmap(row_sums), struct(B, 3))
    assert f.predict(struct(B, 3)).shapes == want.shape == (B,)
    g = ax.vmap(jnp.outer, in_axes=(0, None), signature=None if signature is None else "(a),(c)->(a,c)")
    assert g.predict(struct(B, N), struct(4)).shapes == (B, N, 4)


@pytest.mark.parametrize("signature", [None, "(n)->()"])
def test_export_with_a_symbolic_batch_runs_like_jax(signature: str | None) -> None:
    f = ax.vmap(row_sums, signature=signature)
    exported = export.export(jax.jit(f))(struct(B, 3))
    reference = export.export(jax.jit(jax.vmap(row_sums)))(struct(B, 3))
    assert exported.out_avals == reference.out_avals
    x = jnp.arange(15.0).reshape(5, 3)
    np.testing.assert_array_equal(exported.call(x), reference.call(x))
    np.testing.assert_array_equal(exported.call(x[:2]), jax.vmap(row_sums)(x[:2]))


def test_a_symbolic_mismatch_is_refused_as_jax_refuses_it() -> None:
    dot = ax.vmap(jnp.dot, signature="(n),(n)->()")
    with pytest.raises(ax.AxisCheckError):
        dot.predict(struct(B, 3), struct(B, 4))
    with pytest.raises(ValueError):  # JAX's own refusal
        jax.eval_shape(jax.vmap(jnp.dot), struct(B, 3), struct(2 * B, 3))
    with pytest.raises(ValueError):
        dot.predict(struct(B, 3), struct(2 * B, 3))


def test_a_symbolic_leaf_after_static_ones_of_its_rank_is_still_left_to_jax() -> None:
    # Leaves of one static shape are read once; a symbolic leaf later in the tree is not one of them.
    f = ax.vmap(lambda tree: tree["z"].sum(axis=-1))
    tree = {"a": struct(4, 3), "b": struct(4, 3), "z": struct(4, N)}
    want = jax.eval_shape(jax.vmap(lambda t: t["z"].sum(axis=-1)), tree)
    assert f.predict(tree).shapes == want.shape == (4,)
