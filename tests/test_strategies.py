"""axischeck.strategies: drawn shapes agree with JAX and with axischeck's predictions."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, reject
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import axischeck as ax
import axischeck.strategies as axst

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"
DOT = "(n),(n)->()"
VARIADIC = "(*s,3)->(*s)"

CASES: dict[str, tuple[str, Callable[..., Any], tuple[axst.Kind, ...]]] = {
    "einsum": (
        EINSUM,
        lambda x, y, z: jnp.einsum("ab,bc->ac", x, y) + z,
        ("batch", "symbol", "rank"),
    ),
    # jnp.dot accepts a scalar or a matrix where a vector is declared: leave out "rank".
    "dot": (DOT, lambda x, y: jnp.dot(x, y), ("batch", "symbol")),
    "variadic": (VARIADIC, lambda x: x.sum(-1), ("batch", "symbol", "rank")),
}


def _structs(shapes: tuple[tuple[int, ...], ...]) -> list[jax.ShapeDtypeStruct]:
    return [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]


@st.composite
def _axes_and_size(draw: st.DrawFn, sig: str) -> tuple[tuple[int | None, ...], int | None]:
    in_axes = draw(axst.in_axes_for(sig))
    axis_size = draw(st.none() | st.integers(1, 4))
    return in_axes, axis_size


@pytest.mark.parametrize("case", sorted(CASES))
@given(data=st.data())
def test_consistent_shapes_agree_with_jax(case: str, data: st.DataObject) -> None:
    sig, fn, _ = CASES[case]
    in_axes, axis_size = data.draw(_axes_and_size(sig))
    shapes = data.draw(axst.shapes_for(sig, in_axes=in_axes, axis_size=axis_size))
    structs = _structs(shapes)
    expected = jax.eval_shape(jax.vmap(fn, in_axes=in_axes, axis_size=axis_size), *structs)
    f = ax.vmap(fn, in_axes=in_axes, axis_size=axis_size, signature=sig)
    assert f.predict(*structs).shapes == expected.shape


@pytest.mark.parametrize("case", sorted(CASES))
@given(data=st.data())
def test_inconsistent_shapes_are_rejected(case: str, data: st.DataObject) -> None:
    sig, fn, kinds = CASES[case]
    in_axes, axis_size = data.draw(_axes_and_size(sig))
    try:
        strategy = axst.inconsistent_shapes_for(sig, in_axes=in_axes, axis_size=axis_size, kinds=kinds)
    except InvalidArgument:
        reject()  # e.g. a single mapped input and no axis_size: nothing to break
    structs = _structs(data.draw(strategy))
    with pytest.raises(Exception):  # noqa: B017 - JAX raises several types
        jax.eval_shape(jax.vmap(fn, in_axes=in_axes, axis_size=axis_size), *structs)
    f = ax.vmap(fn, in_axes=in_axes, axis_size=axis_size, signature=sig)
    with pytest.raises(ax.AxisCheckError):
        f.predict(*structs)


@given(axst.arrays_for(EINSUM, in_axes=(0, 1, -1), sizes={"b": 4, "a": 2}))
def test_pinned_sizes_are_respected(args: tuple[Any, ...]) -> None:
    x, y, z = (a.shape for a in args)
    batch = x[0]
    assert x == (batch, 2, 4)
    assert y[0] == 4 and y[1] == batch
    assert z[0] == 2 and z[2] == batch
    assert y[2] == z[1]


@given(axst.shapes_for(VARIADIC, in_axes=-1, sizes={"s": (2, 3)}, axis_size=7))
def test_pinned_run_and_axis_size(shapes: tuple[tuple[int, ...], ...]) -> None:
    assert shapes == ((2, 3, 3, 7),)


@given(axst.shapes_for("(*s,a),(*s,a),(...)->()", in_axes=(-1, None, 0)))
def test_named_run_is_shared_and_anonymous_run_is_free(
    shapes: tuple[tuple[int, ...], ...],
) -> None:
    x, y, w = shapes
    assert x[:-1] == y  # x is y with the batch axis last
    assert len(w) in (1, 2, 3)


@given(axst.arrays_for(DOT, in_axes=(0, None), real=True, axis_size=3))
def test_real_arrays(args: tuple[Any, ...]) -> None:
    x, y = args
    assert isinstance(x, jax.Array) and x.shape == (3, y.shape[0])


@given(st.data())
def test_out_axes_for_is_valid(data: st.DataObject) -> None:
    sig, fn, _ = CASES["einsum"]
    in_axes = data.draw(axst.in_axes_for(sig, allow_none=False, allow_negative=False))
    assert all(isinstance(a, int) and a >= 0 for a in in_axes)
    out_axes = data.draw(axst.out_axes_for(sig))
    structs = _structs(data.draw(axst.shapes_for(sig, in_axes=in_axes)))
    expected = jax.eval_shape(jax.vmap(fn, in_axes=in_axes, out_axes=out_axes), *structs)
    f = ax.vmap(fn, in_axes=in_axes, out_axes=out_axes, signature=sig)
    assert f.predict(*structs).shapes == expected.shape


def test_errors() -> None:
    pytree = ax.Signature(("i", {"W": "o i", "b": "o"}), output="o")
    with pytest.raises(ax.SpecError, match="flat signatures"):
        axst.shapes_for(pytree)
    with pytest.raises(ax.SpecError, match="flat signatures"):
        axst.in_axes_for(pytree)
    with pytest.raises(ax.SpecError, match="single array output"):
        axst.out_axes_for("(n)->(n),(n)")
    with pytest.raises(InvalidArgument, match="3 inputs"):
        axst.shapes_for(EINSUM, in_axes=(0, 1))
    with pytest.raises(InvalidArgument, match="out of range"):
        axst.shapes_for(DOT, in_axes=(2, 0))
    with pytest.raises(InvalidArgument, match="no input"):
        axst.shapes_for(DOT, sizes={"zz": 3})
    with pytest.raises(InvalidArgument, match="no inconsistency"):
        axst.inconsistent_shapes_for("(n)->(n)", kinds=("batch", "symbol"))


@pytest.mark.slow
def test_import_axischeck_does_not_import_hypothesis() -> None:
    code = "import sys, axischeck; assert 'hypothesis' not in sys.modules, 'hypothesis imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_shard_map_without_in_specs_is_refused_clearly() -> None:
    from jax.sharding import PartitionSpec as P

    f = ax.shard_map(lambda a: a, mesh={"x": 4}, out_specs=P("x"), signature="(n)->(n)")
    with pytest.raises(ax.SpecError, match="needs in_specs"):
        axst.arguments_for(f).example()
