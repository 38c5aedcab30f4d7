"""Fix suggestions: concrete, and every one of them really works in JAX."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def _insert(shape: tuple[int, ...], axis: int | None, size: int) -> tuple[int, ...]:
    if axis is None:
        return shape
    return shape[:axis] + (size,) + shape[axis:]


def test_the_issue_example() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 0, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert info.value.fix == "in_axes=(0, 1, 0) would map y's axis 1 (size 16)"
    (only,) = info.value.suggestions
    assert only.as_kwargs() == {"in_axes": (0, 1, 0)}


def test_no_suggestion_when_nothing_works() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    assert info.value.fix is None and info.value.suggestions == ()


def test_axis_size_suggestion() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), axis_size=5, signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert info.value.suggestions[0].as_kwargs() == {"axis_size": 16}


def test_transpose_suggestion() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (2, 16, 4), (16, 8, 2))
    assert info.value.fix == "passing jnp.transpose(y, (2, 1, 0)) (shape (4, 16, 2)) instead of y would agree"


def _apply(suggestion: Any, in_axes: Any, args: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    options = {"in_axes": in_axes}
    args = list(args)
    for key, value in suggestion.options:
        if key == "transpose":
            i, perm = value
            args[i] = jax.ShapeDtypeStruct(tuple(args[i].shape[p] for p in perm), args[i].dtype)
        else:
            options[key] = value
    return options, args


@st.composite
def broken_configs(draw: Any) -> tuple[tuple[int | None, ...], tuple[tuple[int, ...], ...], bool]:
    a, b, c, n = (draw(st.integers(1, 5)) for _ in range(4))
    true_axes = tuple(draw(st.sampled_from([0, 1, 2, None])) for _ in range(3))
    if all(t is None for t in true_axes):
        true_axes = (0,) + true_axes[1:]
    per_example = [(a, b), (b, c), (a, c)]
    shapes = tuple(
        _insert(s, min(t, 2) if t is not None else None, n) for s, t in zip(per_example, true_axes, strict=True)
    )
    if draw(st.booleans()):  # sometimes hand over one argument with its axes reversed
        k = draw(st.integers(0, 2))
        shapes = shapes[:k] + (shapes[k][::-1],) + shapes[k + 1 :]
    given_axes = tuple(draw(st.sampled_from([0, 1, -1, None])) for _ in range(3))
    return given_axes, shapes, draw(st.booleans())


@given(broken_configs())
def test_every_suggestion_makes_jax_succeed(
    config: tuple[tuple[int | None, ...], tuple[tuple[int, ...], ...], bool],
) -> None:
    in_axes, shapes, with_signature = config
    f = ax.vmap(complex_operation, in_axes=in_axes, signature=EINSUM if with_signature else None)
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    try:
        f.predict(*args)
    except ax.AxisCheckError as err:
        for suggestion in err.suggestions:
            options, fixed = _apply(suggestion, in_axes, args)
            jax.eval_shape(jax.vmap(complex_operation, **options), *fixed)  # must not raise
            assert ax.vmap(complex_operation, **options).predict(*fixed).shapes is not None
