"""Differential tests: `axischeck.smap` against real `jax.smap` (JAX 0.10.2).

`jax.smap` is a shard_map over one axis of the context mesh, with specs made from
`in_axes`/`out_axes`. The oracle is JAX itself: real runs on the 8 forced CPU devices
(values, shapes, exception types), and `jax.eval_shape` under
`jax.sharding.use_abstract_mesh` for meshes larger than the machine, with every axis type
given explicitly (Auto, Explicit, and Manual, which smap accepts as a context too).

What JAX 0.10.2 does with a negative axis: `P(*[None] * axis + [axis_name])` has no Nones
for `axis < 0`, so `in_axes=-1` splits axis 0 and `out_axes=-1` concatenates along axis 0,
silently. axischeck predicts exactly that, and warns (`AxisCheckWarning`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import pickle
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import axischeck as ax
import axischeck.strategies as axst
from axischeck._core._jax_compat import JAX_SMAP
from axischeck._debug import predictor_of
from conftest import cpu_mesh
from test_shard_map_vs_jax import Body, bodies, verdicts_agree

pytestmark = pytest.mark.skipif(JAX_SMAP is None, reason="this JAX has no jax.smap")

INFER = "Infer"  # a case that leaves in_axes out (JAX's default, jax.sharding.Infer)
AUTO, EXPLICIT, MANUAL = AxisType.Auto, AxisType.Explicit, AxisType.Manual
F32 = jnp.float32


def mesh8(kind: AxisType = AUTO) -> jax.sharding.Mesh:
    return cpu_mesh((8,), ("x",), (kind,))


def mesh42(kind: AxisType = AUTO) -> jax.sharding.Mesh:
    return cpu_mesh((4, 2), ("x", "y"), (kind, kind))


def abstract(sizes: tuple[int, ...], names: tuple[str, ...], kinds: tuple[AxisType, ...]) -> AbstractMesh:
    return AbstractMesh(sizes, names, axis_types=kinds)


def options(in_axes: Any, out_axes: Any, axis_name: Any) -> dict[str, Any]:
    given_axes = {} if isinstance(in_axes, str) and in_axes == INFER else {"in_axes": in_axes}
    return {**given_axes, "out_axes": out_axes, "axis_name": axis_name}


@contextlib.contextmanager
def quietly() -> Iterator[list[warnings.WarningMessage]]:
    """Records axischeck's warnings instead of raising them (the suite makes warnings errors)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ax.AxisCheckWarning)
        yield caught


def struct(shape: tuple[int, ...], sharding: Any = None) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, F32, sharding=sharding)


def values(shape: tuple[int, ...], seed: int = 0) -> jax.Array:
    n = int(np.prod(shape))
    return jnp.asarray(((np.arange(n, dtype=np.float32) * 0.25 + seed) % 7.0).reshape(shape))


def shapes_of(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda s: tuple(s.shape), tree)


# ------------------------------------------------------------------ real runs (8 CPUs)


def double_plus(a: jax.Array, b: jax.Array) -> jax.Array:
    return a * 2 + b.sum()


REAL_CASES: list[tuple[str, Callable[..., Any], Any, Any, tuple[tuple[int, ...], ...]]] = [
    ("elementwise", lambda a: a * 2 + 1, 0, 0, ((16, 3),)),
    ("axis 1 in and out", lambda a: jnp.sin(a), 1, 1, ((3, 16),)),
    ("axis 1 in, 0 out", lambda a: a.T, 1, 0, ((3, 16),)),
    ("replicated second arg", double_plus, (0, None), 0, ((16, 3), (5,))),
    ("psum to replicated", lambda a: lax.psum(a.sum(0), "x"), 0, None, ((16, 3),)),
    ("all_gather", lambda a: lax.all_gather(a, "x", tiled=True), 0, 1, ((16, 3),)),
    ("axis_index", lambda a: a + lax.axis_index("x"), 0, 0, ((8, 2),)),
    ("pytree out", lambda a: {"u": a, "s": lax.pmean(a.sum(), "x")}, 0, {"u": 0, "s": None}, ((16,),)),
    ("nested in_axes", lambda t: t[0] + t[1].sum(), ((0, None),), 0, ((16, 2), (3,))),
    ("negative in_axes", lambda a: a * 3, -1, 0, ((8, 16),)),
    ("negative out_axes", lambda a: a.T, 1, -1, ((3, 16),)),
]


def _real_args(shapes: tuple[tuple[int, ...], ...], nested: bool) -> tuple[Any, ...]:
    arrays = tuple(values(s, seed=i) for i, s in enumerate(shapes))
    return (arrays,) if nested else arrays


@pytest.mark.parametrize(("label", "fn", "in_axes", "out_axes", "shapes"), REAL_CASES, ids=[c[0] for c in REAL_CASES])
def test_real_runs_give_jax_values_shapes_and_predictions(
    label: str, fn: Callable[..., Any], in_axes: Any, out_axes: Any, shapes: tuple[tuple[int, ...], ...]
) -> None:
    args = _real_args(shapes, nested=label == "nested in_axes")
    negative = any(a < 0 for a in jax.tree_util.tree_leaves((in_axes, out_axes)))
    with jax.set_mesh(mesh8()), quietly() as caught:
        want = jax.smap(fn, in_axes=in_axes, out_axes=out_axes, axis_name="x")(*args)
        f = ax.smap(fn, in_axes=in_axes, out_axes=out_axes, axis_name="x")
        got = f(*args)
        jitted = jax.jit(f)(*args)
        pred = f.predict(*args)
    assert [w.category for w in caught] == ([ax.AxisCheckWarning] if negative else [])
    assert shapes_of(got) == shapes_of(want) == shapes_of(jitted) == pred.shapes
    for g, w, j in zip(
        jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(jitted), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        np.testing.assert_array_equal(np.asarray(j), np.asarray(w))


def test_negative_axes_map_axis_zero_as_jax_does() -> None:
    """JAX 0.10.2: in_axes=-1 splits axis 0 (not the last axis), out_axes=-1 concatenates
    along axis 0: a silently different answer, which axischeck predicts and warns about."""
    x = values((8, 16))
    with jax.set_mesh(mesh8()):
        want = jax.smap(lambda a: a, in_axes=-1, out_axes=0, axis_name="x")(x)
        as_zero = jax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x")(x)
        np.testing.assert_array_equal(np.asarray(want), np.asarray(as_zero))
        seen: list[tuple[int, ...]] = []
        jax.smap(lambda a: seen.append(a.shape) or a, in_axes=-1, out_axes=-1, axis_name="x")(x)
        assert seen == [(1, 16)]  # axis 0 was split, 8 ways
        transposed = jax.smap(lambda a: a.T, in_axes=1, out_axes=-1, axis_name="x")(values((3, 16)))
        assert transposed.shape == (16, 3)  # blocks (2, 3) concatenated along axis 0, not (2, 24)
        with pytest.warns(ax.AxisCheckWarning, match=r"in_axes=-1.*axis 0") as record:
            f = ax.smap(lambda a: a, in_axes=-1, out_axes=0, axis_name="x")
        assert record[0].filename == __file__  # points at the user's line
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(want))
        assert f.predict(x).block_shapes == (1, 16)
        with pytest.warns(ax.AxisCheckWarning, match=r"out_axes\['u'\]=-2"):
            ax.smap(lambda a: {"u": a}, in_axes=0, out_axes={"u": -2}, axis_name="x")
        with pytest.raises(ax.ArgumentError, match=r"in_axes entry of a is -1 \(which jax.smap reads as axis 0\)"):
            with pytest.warns(ax.AxisCheckWarning):
                ax.smap(lambda a: a, in_axes=-1, out_axes=0, axis_name="x").predict((12, 16))


def test_explicit_mesh_real_runs_infer_in_axes_from_shardings() -> None:
    mesh = mesh8(EXPLICIT)
    x = jax.device_put(values((16, 3)), NamedSharding(mesh, P("x")))
    with jax.set_mesh(mesh):
        want = jax.smap(lambda a: a * 2, out_axes=0, axis_name="x")(x)
        f = ax.smap(lambda a: a * 2, out_axes=0, axis_name="x")
        got = f(x)
        assert f.predict(x).block_shapes == (2, 3)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert got.sharding.spec == want.sharding.spec
        given_axes = ax.smap(lambda a: a * 2, in_axes=0, out_axes=0, axis_name="x")
        np.testing.assert_array_equal(np.asarray(given_axes(x)), np.asarray(want))
        unsharded = values((16, 3))
        with pytest.raises(ValueError, match="does not match") as jax_err:
            jax.smap(lambda a: a * 2, in_axes=0, out_axes=0, axis_name="x")(unsharded)
        with pytest.raises(type(jax_err.value)) as ours:
            given_axes(unsharded)
        assert isinstance(ours.value, ax.ArgumentError)
        assert "in_axes entry of a is 0, but a is sharded as P()" in str(ours.value)


def test_nested_smaps_over_two_mesh_axes() -> None:
    """Nesting is how smap covers several axes: the inner one sees the outer's mesh."""

    def inner(a: jax.Array) -> jax.Array:
        return lax.psum(a, "y")

    x = values((16, 6))
    with jax.set_mesh(mesh42()):
        want = jax.smap(jax.smap(inner, in_axes=1, out_axes=None, axis_name="y"), in_axes=0, out_axes=0, axis_name="x")(
            x
        )
        f = ax.smap(ax.smap(inner, in_axes=1, out_axes=None, axis_name="y"), in_axes=0, out_axes=0, axis_name="x")
        pred = f.predict(x)
        got = f(x)
    assert pred.shapes == got.shape == want.shape == (16, 3)
    assert pred.block_shapes == (4, 3)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_vmap_of_smap_and_smap_of_vmap() -> None:
    x = values((5, 16, 3))
    with jax.set_mesh(mesh8()):
        plain = jax.vmap(jax.smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x"))
        ours = ax.vmap(ax.smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x"))
        assert ours.predict(x).shapes == plain(x).shape == ours(x).shape == (5, 2, 3)
        inner = ax.smap(ax.vmap(lambda a: a.sum(-1)), in_axes=1, out_axes=1, axis_name="x")
        want = jax.smap(jax.vmap(lambda a: a.sum(-1)), in_axes=1, out_axes=1, axis_name="x")(x)
        assert inner.predict(x).shapes == want.shape == inner(x).shape == (5, 16)


# ------------------------------------------------------------------ failures: JAX's types

BAD_OPTIONS: list[dict[str, Any]] = [
    {"axis_name": ["x"], "out_axes": 0},
    {"axis_name": ("x",), "out_axes": 0},
    {"axis_name": {"x": 1}, "out_axes": 0},
    {"axis_name": "x", "in_axes": "0", "out_axes": 0},
    {"axis_name": "x", "in_axes": [0], "out_axes": 0},
    {"axis_name": "x", "in_axes": 1.0, "out_axes": 0},
    {"axis_name": "x", "in_axes": np.int64(0), "out_axes": 0},
    {"axis_name": "x", "in_axes": (0, "a"), "out_axes": 0},
    {"axis_name": "x", "in_axes": (np.int32(0),), "out_axes": 0},
    {"axis_name": "x", "out_axes": "0"},
    {"axis_name": "x", "out_axes": (0, 1.5)},
    {"axis_name": "x", "in_axes": jax.sharding.PartitionSpec("x"), "out_axes": 0},
]


@pytest.mark.parametrize("bad", BAD_OPTIONS, ids=repr)
def test_bad_options_raise_jaxs_type_error_with_jaxs_text(bad: dict[str, Any]) -> None:
    with pytest.raises(Exception) as jax_err:
        jax.smap(lambda a: a, **bad)
    with pytest.raises(type(jax_err.value)) as ours:
        ax.smap(lambda a: a, **bad)
    assert isinstance(ours.value, ax.SpecError)
    assert str(jax_err.value) in str(ours.value)
    assert str(ours.value).startswith("smap ")


def test_a_non_callable_and_missing_options_fail_as_in_jax() -> None:
    with pytest.raises(TypeError, match="shard_map requires a callable"):
        jax.smap(3, out_axes=0, axis_name="x")  # type: ignore[call-overload]
    with pytest.raises(TypeError) as ours:
        ax.smap(3, out_axes=0, axis_name="x")  # type: ignore[call-overload]
    assert isinstance(ours.value, ax.SpecError) and "shard_map requires a callable" in str(ours.value)
    with pytest.raises(TypeError, match="out_axes"):
        ax.smap(lambda a: a, axis_name="x")  # type: ignore[call-overload]
    with pytest.raises(ax.SpecError, match="no array has"):
        ax.smap(lambda a: a, in_axes=10**12, out_axes=0, axis_name="x")  # JAX would build a list of 10**12 Nones


def _call_cases() -> list[tuple[str, Callable[..., Any], dict[str, Any], Callable[[], tuple[Any, ...]]]]:
    return [
        ("indivisible", lambda a: a, options(0, 0, "x"), lambda: (values((10, 3)),)),
        ("rank", lambda a: a, options(2, 0, "x"), lambda: (values((16, 3)),)),
        ("out rank", lambda a: a.sum(), options(0, 0, "x"), lambda: (values((16, 3)),)),
        ("replication", lambda a: a.sum(0), options(0, None, "x"), lambda: (values((16, 3)),)),
        ("axis not in mesh", lambda a: a, options(0, 0, "q"), lambda: (values((16, 3)),)),
        ("Infer on Auto", lambda a: a, options(INFER, 0, "x"), lambda: (values((16, 3)),)),
        ("in_axes too short", lambda a, b: a, options((0,), 0, "x"), lambda: (values((16, 3)), values((8,)))),
        ("a str argument", lambda a, s: a, options((0, None), 0, "x"), lambda: (values((16, 3)), "text")),
        ("collective over another name", lambda a: lax.psum(a, "i"), options(0, 0, "x"), lambda: (values((16,)),)),
    ]


@pytest.mark.parametrize(("label", "fn", "opts", "make_args"), _call_cases(), ids=[c[0] for c in _call_cases()])
def test_bad_calls_raise_jaxs_exception_type(
    label: str, fn: Callable[..., Any], opts: dict[str, Any], make_args: Callable[[], tuple[Any, ...]]
) -> None:
    args = make_args()
    with jax.set_mesh(mesh8()):
        with pytest.raises(Exception) as jax_err:
            jax.smap(fn, **opts)(*args)
        f = ax.smap(fn, **opts)
        with pytest.raises(type(jax_err.value)) as ours:
            f(*args)
        with pytest.raises(ax.AxisCheckError):
            f.predict(*args)
    if isinstance(ours.value, ax.AxisCheckError):
        assert str(ours.value).startswith("smap(<lambda>, "), str(ours.value)


def test_no_context_mesh_is_explained() -> None:
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        jax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x")(values((16,)))
    f = ax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x")
    with pytest.raises(ValueError) as ours:
        f(values((16,)))
    assert isinstance(ours.value, ax.SpecError) and "no mesh is set" in str(ours.value)
    with pytest.raises(ax.SpecError, match=r"smap\(<lambda>, in_axes=0, out_axes=0, axis_name='x'\) has mesh=None"):
        f.predict((16,))


# ------------------------------------------------------- signatures and explanations


def test_signature_predicts_symbolically_and_explains_conflicts() -> None:
    f = ax.smap(lambda a: a.sum(1), in_axes=0, out_axes=0, axis_name="x", signature="(n,d)->(n)")
    assert str(f.signature) == "(n, d) -> (n)"
    big = abstract((64,), ("x",), (AUTO,))
    with jax.sharding.use_abstract_mesh(big):
        pred = f.predict((256, 5))
        want = jax.eval_shape(jax.smap(lambda a: a.sum(1), in_axes=0, out_axes=0, axis_name="x"), struct((256, 5)))
        assert pred.shapes == want.shape == (256,) and pred.block_shapes == (4,)
    fixed = ax.smap(lambda a: a.sum(1), in_axes=0, out_axes=0, axis_name="x", signature="(n,3)->(n)")
    with jax.set_mesh(mesh8()):
        with pytest.raises(ax.ArgumentError) as info:
            fixed.predict((16, 4))
        with pytest.raises(ax.ArgumentError):  # the checked call refuses before JAX runs
            fixed(values((16, 4)))
    msg = str(info.value)
    assert msg.startswith("smap(<lambda>, in_axes=0, out_axes=0, axis_name='x'): ")
    for fact in ["a", "axis 1", "(2, 4)", "3", "4"]:
        assert fact in msg, (fact, msg)
    liar = ax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x", signature="(n,d)->(n)")
    with jax.set_mesh(mesh8()), pytest.raises(ax.OutputError, match="contradicts its signature"):
        liar(values((16, 4)))


def test_indivisible_batch_names_argument_axis_and_mesh_axis() -> None:
    f = ax.smap(lambda w, b: w + b, in_axes=(1, None), out_axes=1, axis_name="x", signature="(n,k),(k)->(n,k)")
    with jax.set_mesh(mesh8()):
        with pytest.raises(ax.ArgumentError) as info:
            f.predict((4, 12), (12,))
    msg = str(info.value)
    for fact in [
        "smap(<lambda>, in_axes=(1, None), out_axes=1, axis_name='x')",
        "the in_axes entry of w is 1",
        "splits axis 1 of w (size 12",
        "mesh axis 'x' (size 8)",
        "8 does not divide 12",
        "Mesh('x': 8)",
    ]:
        assert fact in msg, (fact, msg)


def test_explain_and_describe_speak_smaps_terms() -> None:
    f = ax.smap(lambda a, b: a + b[None], in_axes=(0, None), out_axes=0, axis_name="x")
    with jax.set_mesh(mesh8()):
        text = f.explain((16, 3), (3,))
    assert text.startswith("smap(<lambda>, in_axes=(0, None), out_axes=0, axis_name='x') -> (16, 3)")
    assert "in_specs" not in text.splitlines()[0]
    g = ax.smap(lambda a: a, out_axes=0, axis_name="x")
    assert g._describe() == "smap(<lambda>, in_axes=Infer, out_axes=0, axis_name='x')"
    with jax.set_mesh(mesh8()):
        with pytest.raises(TypeError, match="in_axes was not specified") as jax_err:
            jax.smap(lambda a: a, out_axes=0, axis_name="x")(values((16,)))
        with pytest.raises(type(jax_err.value), match="in_axes was omitted") as ours:
            g(values((16,)))
    assert "Fix: in_axes=0 splits every argument along its axis 0" in str(ours.value)
    with jax.set_mesh(mesh8()), pytest.raises(ax.OutputError, match="out_axes None promises") as rep:
        ax.smap(lambda a: a.sum(0), in_axes=0, out_axes=None, axis_name="x").predict((16, 3))
    assert "check_vma" not in (rep.value.fix or "")  # smap has no such option


# --------------------------------------------------------------- the object as JAX's


def module_level(a: jax.Array) -> jax.Array:
    return a * 2


def test_wrapped_pickle_copy_jit_and_attributes() -> None:
    f = ax.smap(module_level, in_axes=0, out_axes=0, axis_name="x", signature="(n)->(n)")
    assert f.__wrapped__ is module_level and f.__name__ == "module_level"
    assert isinstance(f, ax.ShardMapped) and (f.in_axes, f.out_axes, f.axis_name) == (0, 0, "x")
    g = ax.smap(module_level, out_axes=0, axis_name="x")
    for h in (f, g):
        for clone in (pickle.loads(pickle.dumps(h)), copy.copy(h), copy.deepcopy(h)):
            assert type(clone) is ax.Smapped and clone._describe() == h._describe()
            assert clone.signature == h.signature
    assert hasattr(f, "lower") == hasattr(jax.smap(module_level, in_axes=0, out_axes=0, axis_name="x"), "lower")
    x = values((16,))
    with jax.set_mesh(mesh8()):
        plain = jax.jit(jax.smap(module_level, in_axes=0, out_axes=0, axis_name="x"))
        ours = jax.jit(f)
        assert ours.lower(x).as_text() == plain.lower(x).as_text()
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(plain(x)))
        assert ours._cache_size() == plain._cache_size() == 1  # the same number of compilations


def test_decorator_and_partial_forms() -> None:
    @ax.smap(in_axes=0, out_axes=0, axis_name="x")
    def twice(a: jax.Array) -> jax.Array:
        return a * 2

    thrice = functools.partial(ax.smap, in_axes=0, out_axes=0, axis_name="x")(lambda a: a * 3)

    @functools.partial(ax.smap, in_axes=1, out_axes=1, axis_name="x")
    def neg(a: jax.Array) -> jax.Array:
        return -a

    with jax.set_mesh(mesh8()):
        np.testing.assert_array_equal(np.asarray(twice(values((16,)))), np.asarray(values((16,)) * 2))
        assert thrice.predict((8, 2)).shapes == (8, 2)
        assert neg.predict((3, 16)).block_shapes == (3, 2)


def test_predictors_are_shared_per_function_and_every_option() -> None:
    def fn(a: jax.Array) -> jax.Array:
        return a

    base = {"in_axes": 0, "out_axes": 0, "axis_name": "x"}
    assert predictor_of(ax.smap(fn, **base)) is predictor_of(ax.smap(fn, **base))
    for change in [{"in_axes": 1}, {"out_axes": 1}, {"axis_name": "y"}, {"in_axes": (0,)}, {"in_axes": True}]:
        assert predictor_of(ax.smap(fn, **{**base, **change})) is not predictor_of(ax.smap(fn, **base)), change
    signed = ax.smap(fn, **base, signature="(n)->(n)")
    assert predictor_of(signed) is not predictor_of(ax.smap(fn, **base))
    assert predictor_of(ax.smap(fn, **base)) is not predictor_of(ax.shard_map(fn, in_specs=P("x"), out_specs=P("x")))


@pytest.mark.parametrize("signature", [None, "(n,k)->(n,k)"])
def test_the_context_mesh_is_part_of_every_prediction(signature: str | None) -> None:
    """Predicting under mesh A, then B, gives B's answer (nothing cached across meshes)."""
    f = ax.smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x", signature=signature)
    x = struct((256, 3))
    for size in (64, 16, 64, 128):
        mesh = abstract((size,), ("x",), (AUTO,))
        with jax.sharding.use_abstract_mesh(mesh):
            want = jax.eval_shape(jax.smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x"), x)
            assert f.predict(x).shapes == want.shape == (256 // size, 3), size
    with jax.set_mesh(mesh8()):
        assert f.predict(x).shapes == (32, 3)
    nested = ax.vmap(f)
    for size in (64, 16):
        with jax.sharding.use_abstract_mesh(abstract((size,), ("x",), (AUTO,))):
            assert nested.predict((2, 256, 3)).shapes == (2, 256 // size, 3)
    with pytest.raises(ax.SpecError, match="no mesh is set"):
        f.predict(x)


# ------------------------------------------------ abstract meshes larger than the machine


@pytest.mark.parametrize("kind", [AUTO, EXPLICIT, MANUAL])
def test_abstract_64_device_meshes_of_every_axis_type(kind: AxisType) -> None:
    mesh = abstract((64,), ("x",), (kind,))
    sharded = struct((256, 3), NamedSharding(mesh, P("x"))) if kind == EXPLICIT else struct((256, 3))
    for opts in [options(0, 0, "x"), options(INFER, 0, "x"), options(None, None, "x"), options(0, None, "x")]:
        fn = lambda a: a * 2  # noqa: E731
        with jax.sharding.use_abstract_mesh(mesh):
            try:
                want: Any = jax.eval_shape(jax.smap(fn, **opts), sharded)
            except Exception as err:
                want = err
            pred = verdicts_agree(f"{kind} {opts}", want, lambda: ax.smap(fn, **opts).predict(sharded))  # noqa: B023
        if pred is not None:
            assert pred.shapes == want.shape, (kind, opts)


MESHES = [
    ((2,), ("x",)),
    ((16,), ("x",)),
    ((64,), ("x",)),
    ((128,), ("x",)),
    ((16, 4), ("x", "y")),
    ((64, 2), ("data", "model")),
]
KINDS = [AUTO, AUTO, EXPLICIT, MANUAL]


@dataclass(frozen=True)
class Case:
    mesh: AbstractMesh
    axis_name: str
    args: tuple[jax.ShapeDtypeStruct, ...]
    in_axes: Any
    out_axes: Any
    body: Body

    def __repr__(self) -> str:
        layout = [(a.shape, getattr(a.sharding, "spec", None)) for a in self.args]
        return (
            f"Case(mesh={dict(self.mesh.shape)} {self.mesh.axis_types}, axis_name={self.axis_name!r}, args={layout},"
            f" in_axes={self.in_axes!r}, out_axes={self.out_axes!r}, body={self.body.text})"
        )


def _axis(draw: st.DrawFn, rank: int, none_ok: bool = True) -> int | None:
    """Mostly an axis of the array; sometimes one past the end, or negative (axis 0 in JAX)."""
    pool: list[int | None] = [*range(rank), *range(rank), *range(rank), rank, -1, -2] if rank else [0, -1]
    return draw(st.sampled_from(pool + ([None] if none_ok else [])))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    sizes, names = draw(st.sampled_from(MESHES))
    kinds = tuple(draw(st.sampled_from(KINDS)) for _ in names)
    mesh = abstract(sizes, names, kinds)
    axis_name = draw(st.sampled_from([*names, *names, "z"] if draw(st.integers(0, 9)) == 0 else names))
    n = dict(zip(names, sizes, strict=True)).get(axis_name, 1)
    nargs = draw(st.integers(1, 2))
    form = draw(st.sampled_from(["tuple", "tuple", "tuple", "single", "infer" if EXPLICIT in kinds else "single"]))
    per_arg: list[int | None] = []
    args: list[jax.ShapeDtypeStruct] = []
    for k in range(nargs):
        rank = draw(st.integers(1 if k == 0 else 0, 3))
        axis = per_arg[0] if k and form == "single" else _axis(draw, rank, none_ok=k > 0)
        split = 0 if axis is not None and axis < 0 else axis
        shape = [
            n * draw(st.sampled_from([1, 1, 2, 3]))
            if d == split and draw(st.sampled_from(["fits", "fits", "fits", "fits", "uneven"])) == "fits"
            else draw(st.sampled_from([1, 2, 3, 4, 6, 8]))
            for d in range(rank)
        ]
        sharding = None
        if EXPLICIT in kinds and rank:
            held = draw(st.sampled_from(["as in_axes", "as in_axes", "unsharded", "other dim"]))
            dim = split if held == "as in_axes" else draw(st.integers(0, rank - 1))
            if (
                held != "unsharded"
                and dim is not None
                and axis_name in names
                and kinds[names.index(axis_name)] == EXPLICIT
            ):
                spec = P(*(None,) * dim, axis_name)
                try:
                    NamedSharding(mesh, spec).shard_shape(tuple(shape))
                    sharding = NamedSharding(mesh, spec)
                except Exception:
                    sharding = None
        args.append(struct(tuple(shape), sharding))
        per_arg.append(axis)
    in_axes: Any = tuple(per_arg) if form == "tuple" else per_arg[0] if form == "single" else INFER
    body = draw(bodies(dict(zip(names, sizes, strict=True)), len(args[0].shape), nargs))
    out_rank = len(args[0].shape)
    out_axes = draw(st.sampled_from([None, *range(out_rank), *range(out_rank), out_rank, -1]))
    return Case(mesh, axis_name, tuple(args), in_axes, out_axes, body)


def jax_answer(case: Case) -> Any:
    try:
        with jax.sharding.use_abstract_mesh(case.mesh):
            return jax.eval_shape(
                jax.smap(case.body.fn, **options(case.in_axes, case.out_axes, case.axis_name)), *case.args
            )
    except Exception as err:  # any type: JAX's verdict is "raises"
        return err


@given(cases())
def test_smap_predict_agrees_with_jax_on_abstract_meshes(case: Case) -> None:
    want = jax_answer(case)
    with quietly() as caught, jax.sharding.use_abstract_mesh(case.mesh):
        f = ax.smap(case.body.fn, **options(case.in_axes, case.out_axes, case.axis_name))
        pred = verdicts_agree(repr(case), want, lambda: f.predict(*case.args))
    negative = any(isinstance(a, int) and a < 0 for a in jax.tree_util.tree_leaves((case.in_axes, case.out_axes)))
    assert any(w.category is ax.AxisCheckWarning for w in caught) == negative, case
    if pred is not None:
        assert pred.shapes == tuple(want.shape), case


@given(st.data())
def test_smap_with_signature_agrees_with_jax(data: st.DataObject) -> None:
    """Signatures predict by unification alone; in_axes drawn by axischeck.strategies."""
    sig = data.draw(st.sampled_from(["(n,k),(k)->(n,k)", "(n,k),(n,k)->(n,k)"]))
    in_axes = data.draw(axst.in_axes_for(sig, allow_negative=False))
    size = data.draw(st.sampled_from([2, 16, 64]))
    mesh = abstract((size,), ("x",), (AUTO,))
    # no size-1 dims: JAX would broadcast them where the signature (rightly) insists on equal sizes
    dims = {"n": data.draw(st.sampled_from([2, 3])), "k": data.draw(st.sampled_from([2, 3]))}
    shapes = []
    for spec, axis in zip(["nk", "k" if sig.startswith("(n,k),(k)") else "nk"], in_axes, strict=True):
        shape = [dims[c] for c in spec]
        if axis is not None and axis < len(shape):
            shape[axis] *= size * data.draw(st.sampled_from([1, 1, 2]))  # split this one
        shapes.append(struct(tuple(shape)))
    out_axes = data.draw(st.sampled_from([0, 1, 2]))
    fn = (lambda a, b: a * b[None]) if sig.startswith("(n,k),(k)") else (lambda a, b: a + b)
    with jax.sharding.use_abstract_mesh(mesh):
        try:
            want: Any = jax.eval_shape(jax.smap(fn, in_axes=in_axes, out_axes=out_axes, axis_name="x"), *shapes)
        except Exception as err:
            want = err
        f = ax.smap(fn, in_axes=in_axes, out_axes=out_axes, axis_name="x", signature=sig)
        pred = verdicts_agree(f"{sig} in_axes={in_axes} out_axes={out_axes} {shapes}", want, lambda: f.predict(*shapes))
    if pred is not None:
        assert pred.shapes == tuple(want.shape)


@pytest.fixture(autouse=True)
def _no_mesh_leaks() -> Iterator[None]:
    yield
    assert jax.sharding.get_abstract_mesh().empty


@pytest.mark.slow
def test_a_jax_without_smap_imports_and_refuses_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    code = (
        "import jax; del jax.smap\n"
        "import axischeck as ax\n"
        "try:\n"
        "    ax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name='x')\n"
        "except ax.AxisCheckError as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.startswith("AxisCheckError axischeck.smap runs jax.smap, which JAX "), done.stdout
    assert "does not have" in done.stdout and "ax.shard_map" in done.stdout


@pytest.mark.devices(8)
@pytest.mark.parametrize("kind", ["smap", "shard_map"])
def test_planning_on_an_abstract_mesh_leaves_later_real_calls_alone(kind: str) -> None:
    """JAX keys a context-mesh transform's traces by the function alone: axischeck's own
    questions to JAX (under `use_abstract_mesh`, while planning) go to a fresh transform,
    so the kept one answers later calls under the real mesh as JAX's own would."""
    from jax.sharding import AbstractMesh, AxisType
    from jax.sharding import PartitionSpec as P

    if kind == "smap":
        f = ax.smap(lambda a: a * 2, in_axes=0, out_axes=0, axis_name="x", signature="(n)->(n)")
    else:
        f = ax.shard_map(lambda a: a * 2, in_specs=P("x"), out_specs=P("x"), signature="(n)->(n)")
    with jax.sharding.use_abstract_mesh(AbstractMesh((8,), ("x",), axis_types=(AxisType.Auto,))):
        assert f.predict(jax.ShapeDtypeStruct((16,), jnp.float32)).shapes == (16,)
        f.infer_signature((16,))
    with jax.set_mesh(jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))):
        np.testing.assert_array_equal(f(jnp.arange(16.0)), jnp.arange(16.0) * 2)


def test_a_python_scalar_given_an_axis_gets_the_in_axes_entry_none_as_a_checked_fix() -> None:
    """A Python number mapped by smap has no axis to split: the fix is data (in_axes with
    None for it), and JAX runs the call with it to the same values as the scalar inline."""

    def scale(x: jax.Array, n: int) -> jax.Array:
        return x * n

    with jax.set_mesh(mesh8()):
        with pytest.raises(ax.AxisCheckError) as info:
            ax.smap(scale, in_axes=(0, 0), out_axes=0, axis_name="x")(jnp.arange(8.0), 3)
        (fix,) = info.value.suggestions
        assert fix.as_kwargs() == {"in_axes": (0, None)}
        out = jax.smap(scale, out_axes=0, axis_name="x", **fix.as_kwargs())(jnp.arange(8.0), 3)
    np.testing.assert_array_equal(out, jnp.arange(8.0) * 3)
