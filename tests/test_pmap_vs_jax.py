"""Differential property tests: `axischeck.pmap` against real `jax.pmap` (JAX 0.10.2).

The oracle is JAX itself (see `jax_oracle.py`): `jax.eval_shape` of the plain `jax.pmap`
for predictions, and a real eager run for a smaller sample of checked calls. `conftest.py`
forces 8 CPU devices, so mapped sizes 9 (and `devices=jax.devices()[:k]` with k < size)
exercise JAX's device-count failures.

The property (API.md, "Agreement with JAX"):

* if `jax.eval_shape(jax.pmap(f, ...), *args)` succeeds, `ax.pmap(f, ...).predict(*args)`
  returns exactly its shapes (pytree structure included, leaves `ax.Shape`);
* if JAX raises (any exception type, at construction or at trace time), constructing
  `ax.pmap(...)` or calling `predict` raises `ax.AxisCheckError`.

Documented deliberate deviations (docs/jax-semantics.md#pmap, #where-jax-answers-silently):
JAX returns *silently*, but axischeck raises `AxisCheckError`, because JAX's answer is a bug:

* negative `in_axes` (JAX shards dim 0 but squeezes dim `axis`);
* negative `out_axes` (silently wrong shapes).

`out_axes=None` on an output that depends on the mapped input is answered as JAX answers
it (device 0's block), with an `ax.AxisCheckWarning` saying so.

`out_axes=None` on a device-invariant output (a `psum`/`pmean`/`all_gather` result, or a
constant, or a function of unmapped inputs only) is legitimate and must be predicted as
JAX does. The deviation tests assert both halves: axischeck raises AND JAX really returns.

Run with `HYPOTHESIS_PROFILE=ci` (60 derandomized examples; tests that execute JAX
eagerly use a third of that).
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from jax import lax

import axischeck as ax
from jax_oracle import (
    Ok,
    Raised,
    ShapeLeaf,
    Tracked,
    as_lowered,
    assert_call_agrees,
    assert_predict_agrees,
    concrete,
    jax_construct,
    jax_eval_shape,
    materialize,
    predict_under_jit,
    sds,
)

NDEV = len(jax.devices())
_FEW = max(10, (settings.default.max_examples or 100) // 3)

# mapped sizes: 0 (JAX raises), 1..8 (fit), 9 (too many devices); small ones more often
MAPPED = st.sampled_from([1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 0, 9])
DIM = st.integers(1, 3)


def insert(shape: tuple[int, ...], axis: int | None, size: int) -> tuple[int, ...]:
    """Build a batched argument shape (test input generation only; never an expectation)."""
    if axis is None:
        return tuple(shape)
    return tuple(shape[:axis]) + (size,) + tuple(shape[axis:])


def outcome_event(expected: Any) -> None:
    event("JAX ok" if not isinstance(expected, Raised) else f"JAX raised {type(expected.exc).__name__}")


def ax_predictor(make: Any) -> Any:
    """`predict` through a fresh `ax.pmap(...)`: an `AxisCheckError` at construction
    counts as "predict raised" (JAX may raise at construction or at trace time)."""

    def run(*args: Any, **kwargs: Any) -> Any:
        return make().predict(*args, **kwargs)

    return run


def ax_predictor_with_devices(make: Any, n: int) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        return make().predict_with_devices(n, *args, **kwargs)

    return run


def _jax_returns(jfn: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Ok:
    got = jax_eval_shape(jfn, args, kwargs)
    assert isinstance(got, Ok), f"the documented JAX accident no longer happens: {got}"
    return got


def device_0s_block(deviates: bool) -> Any:
    """pmap's out_axes=None on a mapped output: axischeck answers as JAX does (device 0's
    block) and warns; the agreement checks here compare the answers, with the warning off."""
    if not deviates:
        return contextlib.nullcontext()
    manager = warnings.catch_warnings()

    class _Quiet:
        def __enter__(self) -> None:
            manager.__enter__()
            warnings.simplefilter("ignore", ax.AxisCheckWarning)

        def __exit__(self, *exc: Any) -> None:
            manager.__exit__(*exc)

    return _Quiet()


def _assert_ax_raises(make: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> ax.AxisCheckError:
    with pytest.raises(ax.AxisCheckError) as info:
        make().predict(*args, **(kwargs or {}))
    return info.value


# ================================================================ 1. in_axes / out_axes / sizes


@dataclass
class Problem:
    args: tuple[Any, ...]  # pytrees of ShapeLeaf (batched shapes)
    kwargs: dict[str, Any]  # pytrees of ShapeLeaf, always mapped on axis 0
    in_axes: Any
    out_axes: Any
    axis_size: int | None
    ndev: int | None  # devices=jax.devices()[:ndev]
    mapped_out: Any  # pytree like the output: does the leaf depend on a mapped input?
    size: int
    irregular: bool  # some mapped leaf has another size, or an out-of-range in_axis
    max_size: int

    def fun(self, *args: Any, **kwargs: Any) -> Any:
        g = lambda a: a * 2.0 + 1.0  # per-leaf, shape preserving
        return (jax.tree.map(g, args), jax.tree.map(g, kwargs))

    def pmap_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"in_axes": self.in_axes, "out_axes": self.out_axes}
        if self.axis_size is not None:
            kw["axis_size"] = self.axis_size
        if self.ndev is not None:
            kw["devices"] = jax.devices()[: self.ndev]
        return kw

    def deviates(self) -> bool:
        """out_axes=None on an output leaf that depends on a mapped input (documented deviation)."""
        hits: list[bool] = []

        def visit(oa: Any, sub: Any) -> None:
            if oa is None:
                hits.extend(bool(m) for m in jax.tree.leaves(sub))

        try:
            jax.tree.map(visit, self.out_axes, self.mapped_out, is_leaf=lambda x: x is None)
        except Exception:
            return False
        return any(hits)

    def __repr__(self) -> str:
        shape = lambda t: jax.tree.map(lambda leaf: leaf.shape, t, is_leaf=lambda x: isinstance(x, ShapeLeaf))
        return (
            f"Problem(args={shape(self.args)}, kwargs={shape(self.kwargs)}, in_axes={self.in_axes!r},"
            f" out_axes={self.out_axes!r}, axis_size={self.axis_size}, ndev={self.ndev}, size={self.size})"
        )


@st.composite
def problems(draw: Any, allow_out_none: bool = True) -> Problem:
    n = draw(MAPPED)
    nargs = draw(st.integers(1, 3))
    form = draw(st.sampled_from(["int"] * 3 + ["tuple"] * 5 + ["none", "list"]))
    int_axis = draw(st.integers(0, 1))
    mismatch_budget = [draw(st.integers(0, 9)) == 0]  # rarely: one mapped leaf of another size
    bad_axis_budget = [draw(st.integers(0, 14)) == 0]  # rarely: one in_axis out of range

    irregular = [False]
    sizes: list[int] = []

    def leaf(axis: int | None) -> tuple[ShapeLeaf, bool]:
        rank = draw(st.integers(0 if axis is None else max(0, axis), 2))
        per = tuple(draw(DIM) for _ in range(rank))
        size = n
        if axis is not None and mismatch_budget[0] and draw(st.booleans()):
            mismatch_budget[0] = False
            size = draw(st.integers(0, 9).filter(lambda s: s != n))
        if axis is not None and bad_axis_budget[0] and draw(st.booleans()):
            bad_axis_budget[0] = False
            irregular[0] = True
            return ShapeLeaf(per[:axis]), True  # rank == axis: the in_axis is out of range
        if size != n:
            irregular[0] = True
        if axis is not None:
            sizes.append(size)
        return ShapeLeaf(insert(per, axis, size)), axis is not None

    args: list[Any] = []
    specs: list[Any] = []
    mapped: list[Any] = []
    for _ in range(nargs):
        kind = draw(st.sampled_from(["array", "array", "dict", "tuple"]))
        if form == "int":
            entry: Any = int_axis
        elif form == "none":
            entry = None
        else:
            entry = draw(st.sampled_from([0, 0, 1, None, "nested"]))
        if kind == "array":
            spec = 0 if entry == "nested" else entry
            a, m = leaf(spec)
            args.append(a)
            specs.append(spec)
            mapped.append(m)
            continue
        keys = ["a", "b"][: draw(st.integers(1, 2))]
        if entry == "nested":
            sub_axes = [draw(st.sampled_from([0, 1, None])) for _ in keys]
        else:
            sub_axes = [entry for _ in keys]
        built = [leaf(s) for s in sub_axes]
        if kind == "dict":
            args.append({k: b[0] for k, b in zip(keys, built, strict=False)})
            mapped.append({k: b[1] for k, b in zip(keys, built, strict=False)})
            specs.append({k: s for k, s in zip(keys, sub_axes, strict=False)} if entry == "nested" else entry)
        else:
            args.append(tuple(b[0] for b in built))
            mapped.append(tuple(b[1] for b in built))
            specs.append(tuple(sub_axes) if entry == "nested" else entry)

    kwargs: dict[str, Any] = {}
    kw_mapped: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        per = tuple(draw(DIM) for _ in range(draw(st.integers(0, 2))))
        ksize = n if draw(st.integers(0, 4)) else draw(st.integers(0, 9))
        kwargs["k"] = ShapeLeaf((ksize, *per))
        sizes.append(ksize)
        irregular[0] |= ksize != n
        kw_mapped["k"] = True

    if form == "int":
        in_axes: Any = int_axis
    elif form == "none":
        in_axes = None
    elif form == "list":
        in_axes = list(specs)
    else:
        in_axes = tuple(specs)

    out_choices = ["zero"] * 4 + ["one", "tuple", "tuple"] + (["none", "prefix_none"] if allow_out_none else [])
    out_form = draw(st.sampled_from(out_choices))
    if out_form == "zero":
        out_axes: Any = 0
    elif out_form == "one":
        out_axes = 1
    elif out_form == "none":
        out_axes = None
    else:
        leaf_choices = [0, 1] + ([None] if out_form == "prefix_none" else [])
        out_axes = (
            tuple(draw(st.sampled_from(leaf_choices)) for _ in args),
            draw(st.sampled_from(leaf_choices)),
        )
    axis_size = draw(st.sampled_from([None] * 5 + [n, n + 1]))
    ndev = draw(st.sampled_from([None] * 6 + [1, 2, 4, 8]))
    return Problem(
        tuple(args),
        kwargs,
        in_axes,
        out_axes,
        axis_size,
        ndev,
        (tuple(mapped), kw_mapped),
        n,
        irregular[0],
        max(sizes, default=0),
    )


def _expected(p: Problem, how: str = "sds", devices: int | None = None) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    args = materialize(p.args, how)
    kwargs = materialize(p.kwargs, how)
    kw = p.pmap_kwargs()
    if devices is not None:
        kw["devices"] = jax.devices()[:devices]
    jfn = jax_construct(lambda: jax.pmap(p.fun, **kw))
    return jfn, args, kwargs


@settings(deadline=None)
@given(problems())
def test_pmap_predict_agrees_with_eval_shape(p: Problem) -> None:
    jfn, args, kwargs = _expected(p)
    expected = jax_eval_shape(jfn, args, kwargs)
    deviates = isinstance(expected, Ok) and p.deviates()
    if deviates:
        event("out_axes=None on a mapped output: device 0's block, with a warning")
    outcome_event(expected)
    make = lambda: ax.pmap(p.fun, **p.pmap_kwargs())
    with device_0s_block(deviates):
        assert_predict_agrees(ax_predictor(make), expected, args, kwargs, context=repr(p))
        if isinstance(expected, Ok) and not p.irregular:
            assert make().predict(*args, **kwargs).axis_size == p.size, repr(p)


@settings(deadline=None)
@given(problems(), st.sampled_from([1, 2, 3, 8, 9, 16]))
def test_pmap_predict_with_devices_matches_a_device_subset(p: Problem, ndev: int) -> None:
    """`predict_with_devices(k, ...)` on a pmap without `devices=` predicts what JAX does
    with k devices. For k <= 8 the oracle is `jax.pmap(..., devices=jax.devices()[:k])`;
    for k > 8 it equals the 8-device answer whenever the mapped size fits in 8."""
    p.ndev = None
    if ndev <= NDEV:
        jfn, args, kwargs = _expected(p, devices=ndev)
        expected = jax_eval_shape(jfn, args, kwargs)
    else:
        if p.max_size > NDEV:
            return  # no oracle on this machine
        jfn, args, kwargs = _expected(p)
        expected = jax_eval_shape(jfn, args, kwargs)
    outcome_event(expected)
    make = lambda: ax.pmap(p.fun, **p.pmap_kwargs())
    with device_0s_block(isinstance(expected, Ok) and p.deviates()):
        assert_predict_agrees(
            ax_predictor_with_devices(make, ndev),
            expected,
            args,
            kwargs,
            context=f"{p!r}, predict_with_devices({ndev})",
        )


@settings(deadline=None, max_examples=_FEW)
@given(problems())
def test_pmap_checked_call_agrees_with_jax(p: Problem) -> None:
    args = materialize(p.args, "array")
    kwargs = materialize(p.kwargs, "array", seed=100)
    tracker = Tracked()
    fun = tracker.wrap(p.fun)
    jfn = jax_construct(lambda: jax.pmap(fun, **p.pmap_kwargs()))
    try:
        afn = ax.pmap(fun, **p.pmap_kwargs())
    except ax.AxisCheckError:
        assert isinstance(jfn, Raised), f"ax.pmap construction raised, jax.pmap's did not\n{p!r}"
        return
    if isinstance(jfn, Raised):
        with pytest.raises(ax.AxisCheckError):
            afn(*args, **kwargs)
        return
    with device_0s_block(p.deviates()):  # JAX returns device 0's block: so does axischeck
        assert_call_agrees(afn, jfn, tracker, args, kwargs, context=repr(p))


# --------------------------------------------------------------- fixed in_axes / out_axes cases


@pytest.mark.devices(8)
def test_top_level_list_in_axes_is_a_prefix_error() -> None:
    f = lambda x, y: x + y
    args = (sds((4, 3)), sds((4, 3)))
    assert isinstance(jax_eval_shape(jax_construct(lambda: jax.pmap(f, in_axes=[0, 0])), args), Raised)
    assert isinstance(jax_eval_shape(jax.pmap(f, in_axes=(0, 0)), args), Ok)  # the tuple works
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=[0, 0])), Raised(ValueError()), args)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=(0, 0))), jax_eval_shape(jax.pmap(f), args), args)


@pytest.mark.parametrize("bad", [True, np.int64(0), 0.0, "0", {"x": 0}])
def test_non_int_in_axes_leaves_are_rejected(bad: Any) -> None:
    f = lambda x: x * 2
    jfn = jax_construct(lambda: jax.pmap(f, in_axes=bad))
    expected = jax_eval_shape(jfn, (sds((4, 3)),))
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=bad)), expected, (sds((4, 3)),))


def test_kwargs_are_always_mapped_on_axis_0() -> None:
    f = lambda x, y: x + y
    for y in [sds((4, 3)), sds((3, 4))]:
        expected = jax_eval_shape(jax.pmap(f, in_axes=(1,)), (sds((3, 4)),), {"y": y})
        assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=(1,))), expected, (sds((3, 4)),), {"y": y})


@pytest.mark.parametrize(
    ("in_axes", "axis_size", "shapes"),
    [
        (None, 4, [(4, 3)]),  # axis_size cannot stand in for a mapped argument
        (0, 8, [(4, 3)]),  # axis_size only compared with the inferred size
        (0, 4, [(4, 3)]),
        (0, None, [(0, 3)]),  # size 0
        (0, None, [(9, 3)]),  # 9 > 8 devices
        (0, None, [(16, 3)]),
        (0, None, [(4, 3), (2, 3)]),  # inconsistent sizes, no "inconsistent" message in JAX
        (0, None, [(2, 3), (4, 3)]),
        (0, None, [(4, 3), (8, 3)]),
        (0, None, [(4,), (4,)]),
        ((0, 1), None, [(4, 3), (3, 4)]),
        ((0, 2), None, [(4, 3), (3, 4)]),  # in_axis out of range
    ],
)
def test_sizes_and_axis_size(in_axes: Any, axis_size: int | None, shapes: list[tuple[int, ...]]) -> None:
    f = lambda *xs: sum(x.sum() for x in xs)
    args = tuple(sds(s) for s in shapes)
    kw = {} if axis_size is None else {"axis_size": axis_size}
    expected = jax_eval_shape(jax_construct(lambda: jax.pmap(f, in_axes=in_axes, **kw)), args)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=in_axes, **kw)), expected, args)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0), 0, (0, None)])
def test_python_scalar_arguments(in_axes: Any) -> None:
    """Size inference skips leaves without `.shape` (Python scalars)."""
    f = lambda s, x: x * s
    args = (2.0, sds((4, 3)))
    expected = jax_eval_shape(jax.pmap(f, in_axes=in_axes), args)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, in_axes=in_axes)), expected, args, context=str(in_axes))


def test_rank0_mapped_leaf_after_a_good_one() -> None:
    f = lambda x, y: x.sum() + y
    args = (sds((4, 3)), sds(()))
    expected = jax_eval_shape(jax.pmap(f), args)
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f)), expected, args)


@pytest.mark.devices(8)
@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_devices_subset(k: int, n: int) -> None:
    f = lambda x: x * 2
    expected = jax_eval_shape(jax.pmap(f, devices=jax.devices()[:k]), (sds((n, 3)),))
    assert isinstance(expected, Raised) == (n > k)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, devices=jax.devices()[:k])), expected, (sds((n, 3)),))
    assert_predict_agrees(ax_predictor_with_devices(lambda: ax.pmap(f), k), expected, (sds((n, 3)),))


def test_empty_devices_list_raises() -> None:
    f = lambda x: x
    expected = jax_eval_shape(jax_construct(lambda: jax.pmap(f, devices=[])), (sds((1, 3)),))
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, devices=[])), expected, (sds((1, 3)),))


# ------------------------------------------------------------------ documented deviations


@pytest.mark.parametrize(
    ("in_axes", "shapes"),
    [(-1, [(4, 1)]), ((0, -1), [(2, 3), (3, 2)]), ((0, -2), [(4, 3), (4, 1, 5)])],
)
def test_negative_in_axes_raise_although_jax_may_return(in_axes: Any, shapes: list[tuple[int, ...]]) -> None:
    f = lambda *xs: tuple(x * 2 for x in xs)
    args = tuple(sds(s) for s in shapes)
    _assert_ax_raises(lambda: ax.pmap(f, in_axes=in_axes), args)


def test_negative_in_axis_jax_accident_is_real() -> None:
    got = _jax_returns(jax.pmap(lambda x: x * 2, in_axes=-1), (sds((4, 1)),))
    assert got.shapes == [(1, 4)]  # JAX sharded axis 0, squeezed axis -1: a silent transpose


@given(st.integers(1, 8), st.lists(DIM, min_size=1, max_size=2), st.integers(-3, -1))
@settings(deadline=None, max_examples=_FEW)
def test_negative_in_axes_always_raise(n: int, per: list[int], axis: int) -> None:
    f = lambda x: x * 2
    shape = tuple(per) + (n,)
    _assert_ax_raises(lambda: ax.pmap(f, in_axes=axis), (sds(shape),))
    _assert_ax_raises(lambda: ax.pmap(f, in_axes=(axis,)), (sds(shape),))


@pytest.mark.devices(8)
@pytest.mark.parametrize("out_axes", [-1, -2, (-1,), (0, -1)])
def test_negative_out_axes_raise_although_jax_returns(out_axes: Any) -> None:
    if isinstance(out_axes, tuple) and len(out_axes) == 2:
        f: Any = lambda x: (x * 2, x + 1)
    elif isinstance(out_axes, tuple):
        f = lambda x: (x * 2,)
    else:
        f = lambda x: x * 2
    args = (sds((4, 3, 5)),)
    _jax_returns(jax.pmap(f, out_axes=out_axes), args)
    _assert_ax_raises(lambda: ax.pmap(f, out_axes=out_axes), args)


@pytest.mark.devices(8)
def test_negative_out_axis_jax_accident_is_real() -> None:
    got = _jax_returns(jax.pmap(lambda x: x * 2, out_axes=-1), (sds((4, 3, 5)),))
    assert got.shapes == [(12, 5, 1)]  # vmap would give (3, 5, 4)


@pytest.mark.devices(8)
def test_out_axes_none_on_mapped_output_is_device_0s_block_with_a_warning() -> None:
    f = lambda x: x * 2
    got = _jax_returns(jax.pmap(f, out_axes=None), (sds((4, 3)),))
    assert got.shapes == [(3,)]
    values = jax.pmap(lambda x: x, out_axes=None)(jnp.arange(12.0).reshape(4, 3))
    np.testing.assert_array_equal(np.asarray(values), [0.0, 1.0, 2.0])  # device 0's block
    with pytest.warns(ax.AxisCheckWarning, match="device 0's block"):
        assert ax.pmap(f, out_axes=None).predict(sds((4, 3))).shapes == (3,)
    with pytest.warns(ax.AxisCheckWarning):
        pair = ax.pmap(lambda x: (x, x.sum()), out_axes=(0, None)).predict(sds((4, 3))).shapes
    assert pair == ((4, 3), ())
    with pytest.warns(ax.AxisCheckWarning):
        ours = ax.pmap(lambda x: x, out_axes=None)(jnp.arange(12.0).reshape(4, 3))
    np.testing.assert_array_equal(np.asarray(ours), [0.0, 1.0, 2.0])


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("fun", "axis_name", "in_axes", "out_axes", "shapes"),
    [
        (lambda x: lax.psum(x, "i"), "i", 0, None, [(4, 3)]),
        (lambda x: lax.pmean(x, "i"), "i", 0, None, [(4, 3)]),
        (lambda x: lax.all_gather(x, "i"), "i", 0, None, [(4, 3)]),
        (lambda x: (x * 2, lax.psum(x, "i")), "i", 0, (0, None), [(4, 3)]),
        (lambda x: (x * 2, jnp.ones(5)), None, 0, (0, None), [(4, 3)]),
        (lambda x: jnp.zeros((2, 2)), None, 0, None, [(4, 3)]),
        (lambda x, w: (x @ w, w * 2), None, (0, None), (0, None), [(4, 3), (3, 2)]),
        (lambda x, w: {"y": x @ w, "w": w + 1}, None, (0, None), {"y": 0, "w": None}, [(4, 3), (3, 2)]),
    ],
)
def test_out_axes_none_on_invariant_outputs_is_predicted(
    fun: Any, axis_name: Any, in_axes: Any, out_axes: Any, shapes: list[tuple[int, ...]]
) -> None:
    args = tuple(sds(s) for s in shapes)
    expected = jax_eval_shape(jax.pmap(fun, axis_name, in_axes=in_axes, out_axes=out_axes), args)
    assert isinstance(expected, Ok)
    assert_predict_agrees(
        ax_predictor(lambda: ax.pmap(fun, axis_name, in_axes=in_axes, out_axes=out_axes)), expected, args
    )
    arrays = tuple(concrete(s, i) for i, s in enumerate(shapes))
    tracker = Tracked()
    assert_call_agrees(
        ax.pmap(fun, axis_name, in_axes=in_axes, out_axes=out_axes),
        jax.pmap(fun, axis_name, in_axes=in_axes, out_axes=out_axes),
        tracker,
        arrays,
    )


def test_out_axis_out_of_range_raises() -> None:
    f = lambda x: x * 2
    expected = jax_eval_shape(jax.pmap(f, out_axes=3), (sds((4, 3, 5)),))
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, out_axes=3)), expected, (sds((4, 3, 5)),))


# ================================================================ 2. static_broadcasted_argnums


def _static_fun(x: Any, s: float, y: Any) -> Any:
    return x * s + y


def _eval_static(jfn: Any, x: Any, s: float, y: Any) -> Ok | Raised:
    """eval_shape would abstract the static float into a tracer (unhashable), so close over it."""
    if isinstance(jfn, Raised):
        return jfn
    return jax_eval_shape(lambda a, b: jfn(a, s, b), (x, y))


@settings(deadline=None)
@given(
    n=st.integers(1, 9),
    d=DIM,
    x_axis=st.sampled_from([0, 1]),
    y_axis=st.sampled_from([0, 1, None]),
    static_entry=st.sampled_from([0, 1, 5, None]),
    cover=st.sampled_from(["all", "all", "dynamic_only", "int"]),
)
def test_static_broadcasted_argnums(
    n: int, d: int, x_axis: int, y_axis: int | None, static_entry: int | None, cover: str
) -> None:
    x = sds(insert((d,), x_axis, n))
    y = sds(insert((d,), y_axis, n))
    if cover == "all":
        in_axes: Any = (x_axis, static_entry, y_axis)  # the static entry is ignored, even a "bad" one
    elif cover == "dynamic_only":
        in_axes = (x_axis, y_axis)  # JAX: IndexError
    else:
        in_axes = x_axis
        y = sds(insert((d,), x_axis, n))
    kw = {"in_axes": in_axes, "static_broadcasted_argnums": (1,)}
    expected = _eval_static(jax_construct(lambda: jax.pmap(_static_fun, **kw)), x, 2.0, y)
    if cover == "dynamic_only":
        assert isinstance(expected, Raised), expected
    outcome_event(expected)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(_static_fun, **kw)), expected, (x, 2.0, y), context=str(kw))


@pytest.mark.devices(8)
def test_static_entry_in_in_axes_is_ignored() -> None:
    kw = {"in_axes": (0, 7, 1), "static_broadcasted_argnums": 1}
    x, y = sds((4, 3)), sds((3, 4))
    expected = _eval_static(jax.pmap(_static_fun, **kw), x, 2.0, y)
    assert isinstance(expected, Ok) and expected.shapes == [(4, 3)]
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(_static_fun, **kw)), expected, (x, 2.0, y))
    arrays = (concrete((4, 3)), 2.0, concrete((3, 4), 1))
    assert_call_agrees(ax.pmap(_static_fun, **kw), jax.pmap(_static_fun, **kw), Tracked(), arrays)


def test_static_in_axes_covering_only_dynamic_args_raises() -> None:
    kw = {"in_axes": (0, 1), "static_broadcasted_argnums": (1,)}
    x, y = sds((4, 3)), sds((3, 4))
    expected = _eval_static(jax.pmap(_static_fun, **kw), x, 2.0, y)
    assert isinstance(expected, Raised) and isinstance(expected.exc, IndexError)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(_static_fun, **kw)), expected, (x, 2.0, y))


def test_static_passed_by_keyword_raises() -> None:
    kw = {"static_broadcasted_argnums": (1,)}
    x, y = sds((4, 3)), sds((4, 3))
    jfn = jax.pmap(_static_fun, **kw)
    expected = jax_eval_shape(lambda a, b: jfn(a, s=2.0, y=b), (x, y))
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(_static_fun, **kw)), expected, (x,), {"s": 2.0, "y": y})
    with pytest.raises(ax.AxisCheckError):
        ax.pmap(_static_fun, **kw)(concrete((4, 3)), s=2.0, y=concrete((4, 3)))


def test_static_value_changes_shapes() -> None:
    """A static argument is a Python value the function may use for shapes."""
    f = lambda x, k: jnp.tile(x, k)
    for k in (1, 3):
        jfn = jax.pmap(f, static_broadcasted_argnums=1)
        expected = jax_eval_shape(lambda a, k=k, jfn=jfn: jfn(a, k), (sds((4, 2)),))
        assert_predict_agrees(
            ax_predictor(lambda: ax.pmap(f, static_broadcasted_argnums=1)), expected, (sds((4, 2)), k)
        )


# ================================================================ 3. collectives


@dataclass
class Coll:
    op: str
    params: dict[str, Any]
    per: tuple[int, ...]
    n: int
    in_axis: int
    out_axes: Any
    name: str  # the name the collective uses ('i' is the pmap's axis_name)

    def fun(self, x: Any) -> Any:
        nm, p = self.name, self.params
        if self.op in ("psum", "pmean", "pmax", "pmin"):
            names = (nm, *p["positional"]) if p["positional"] else nm
            return getattr(lax, self.op)(x, names)
        if self.op == "all_gather":
            return lax.all_gather(x, nm, axis=p["axis"], tiled=p["tiled"])
        if self.op == "psum_scatter":
            return lax.psum_scatter(x, nm, scatter_dimension=p["d"], tiled=p["tiled"])
        if self.op == "all_to_all":
            return lax.all_to_all(x, nm, p["split"], p["concat"], tiled=p["tiled"])
        if self.op == "ppermute":
            return lax.ppermute(x, nm, perm=p["perm"])
        if self.op == "axis_index":
            return (x * 2.0, lax.axis_index(nm))
        raise AssertionError(self.op)

    def invariant(self) -> bool:
        """The output is the same on every device (out_axes=None is legitimate)."""
        return self.op in ("psum", "pmean", "pmax", "pmin", "all_gather")


@st.composite
def collectives(draw: Any) -> Coll:
    n = draw(st.integers(1, 9))
    op = draw(
        st.sampled_from(["psum", "pmean", "pmax", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index"])
    )
    low = 1 if op in ("psum_scatter", "all_to_all") and draw(st.integers(0, 5)) else 0
    rank = draw(st.integers(low, 2))
    per = [draw(st.sampled_from([1, 2, 3, n, n, 2 * n])) for _ in range(rank)]
    params: dict[str, Any] = {}
    fit = draw(st.integers(0, 3)) > 0  # usually make the scattered/split dim fit the axis size

    def fit_dim(d: int, tiled: bool) -> None:
        if fit and rank:
            per[d] = n * (draw(st.integers(1, 2)) if tiled else 1)

    if op in ("psum", "pmean", "pmax"):
        params["positional"] = (draw(st.integers(0, rank - 1)),) if rank and draw(st.integers(0, 3)) == 0 else ()
    elif op == "all_gather":
        params["axis"] = draw(st.integers(-rank - 1, rank + 1))
        params["tiled"] = draw(st.booleans())
    elif op == "psum_scatter":
        params["d"] = draw(st.integers(-rank, rank)) if rank else 0
        params["tiled"] = draw(st.booleans())
        if -rank <= params["d"] < rank:
            fit_dim(params["d"], params["tiled"])
    elif op == "all_to_all":
        params["split"] = draw(st.integers(0, rank))
        params["concat"] = draw(st.integers(0, rank))
        params["tiled"] = draw(st.booleans())
        if params["split"] < rank:
            fit_dim(params["split"], params["tiled"])
    elif op == "ppermute":
        k = draw(st.integers(0, n))
        srcs = draw(st.permutations(range(n)))[:k]
        dsts = draw(st.permutations(range(n)))[:k]
        params["perm"] = tuple(zip(srcs, dsts, strict=False))
    in_axis = draw(st.sampled_from([0, 1] if rank >= 1 else [0]))
    out_axes = draw(st.sampled_from([0, 0, 0, 1, None]))
    if op == "axis_index" and out_axes is None:
        out_axes = (0, 0)
    name = draw(st.sampled_from(["i"] * 12 + ["j"]))  # rarely an unbound name
    return Coll(op, params, tuple(per), n, in_axis, out_axes, name)


@settings(deadline=None)
@given(collectives())
def test_collectives_agree_with_eval_shape(c: Coll) -> None:
    args = (sds(insert(c.per, c.in_axis, c.n)),)
    make_kw = {"in_axes": c.in_axis, "out_axes": c.out_axes}
    expected = jax_eval_shape(jax_construct(lambda: jax.pmap(c.fun, "i", **make_kw)), args)
    expected = as_lowered(expected, c.op == "psum_scatter" and c.params["d"] < 0)
    event(f"{c.op}: {'ok' if isinstance(expected, Ok) else 'raises'}")
    with device_0s_block(isinstance(expected, Ok) and c.out_axes is None and not c.invariant()):
        assert_predict_agrees(ax_predictor(lambda: ax.pmap(c.fun, "i", **make_kw)), expected, args, context=repr(c))


@settings(deadline=None, max_examples=_FEW)
@given(collectives())
def test_collectives_checked_call(c: Coll) -> None:
    if c.out_axes is None and not c.invariant():
        c.out_axes = 0
    x = concrete(insert(c.per, c.in_axis, c.n))
    kw = {"in_axes": c.in_axis, "out_axes": c.out_axes}
    tracker = Tracked()
    fun = tracker.wrap(c.fun)
    jfn = jax.pmap(fun, "i", **kw)
    try:
        afn = ax.pmap(fun, "i", **kw)
    except ax.AxisCheckError as err:
        raise AssertionError(f"ax.pmap construction raised: {err}\n{c!r}") from err
    assert_call_agrees(afn, jfn, tracker, (x,), context=repr(c))


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("fun", "per", "n", "ok"),
    [
        (lambda x: lax.psum_scatter(x, "i"), (8,), 8, True),
        (lambda x: lax.psum_scatter(x, "i"), (16,), 8, False),  # non-tiled: S[d] must equal N
        (lambda x: lax.psum_scatter(x, "i"), (4, 3), 4, True),
        (lambda x: lax.psum_scatter(x, "i", scatter_dimension=1), (3, 4), 4, True),
        (lambda x: lax.psum_scatter(x, "i", scatter_dimension=-1), (3, 4), 4, "negative"),
        (lambda x: lax.psum_scatter(x, "i", tiled=True), (16,), 8, True),
        (lambda x: lax.psum_scatter(x, "i", tiled=True), (3,), 8, False),
        (lambda x: lax.all_to_all(x, "i", 0, 0), (4, 3), 4, True),
        (lambda x: lax.all_to_all(x, "i", 0, 1), (4, 3), 4, True),
        (lambda x: lax.all_to_all(x, "i", 0, 1), (6, 3), 4, False),
        (lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True), (8, 3), 4, True),
        (lambda x: lax.ppermute(x, "i", [(0, 1)]), (3,), 4, True),  # partial perm OK under pmap
        (lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]), (3,), 4, True),
        (lambda x: lax.axis_index("i"), (3,), 4, True),
        (lambda x: lax.all_gather(x, "i", axis=1), (3, 2), 4, True),
        (lambda x: lax.all_gather(x, "i", tiled=True), (3,), 4, True),
        (lambda x: lax.all_gather(x, "i", tiled=True), (), 4, False),
        (lambda x: lax.psum(x, ("i", 0)), (3, 2), 4, True),
        (lambda x: lax.psum(x, "k"), (3,), 4, False),  # unbound name
    ],
)
def test_collective_fixed_cases(fun: Any, per: tuple[int, ...], n: int, ok: bool | str) -> None:
    args = (sds((n, *per)),)
    expected = jax_eval_shape(jax.pmap(fun, "i"), args)
    assert isinstance(expected, Ok) == bool(ok), expected
    expected = as_lowered(expected, ok == "negative")
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(fun, "i")), expected, args)


# ================================================================ 4. nesting


@st.composite
def nestings(draw: Any) -> dict[str, Any]:
    return {
        "b": draw(st.integers(0, 4)),
        "n": draw(st.integers(1, 9)),
        "d": draw(DIM),
        "outer_in": draw(st.sampled_from([0, 1])),
        "inner_in": draw(st.sampled_from([0, 1])),
        "inner_out": draw(st.sampled_from([0, 1])),
        "body": draw(st.sampled_from(["scale", "psum_p", "psum_v", "psum_both", "gather_p", "axis_index_p"])),
    }


def _body(kind: str) -> Any:
    return {
        "scale": lambda x: x * 2.0,
        "psum_p": lambda x: lax.psum(x, "p"),
        "psum_v": lambda x: lax.psum(x, "v"),
        "psum_both": lambda x: lax.psum(x, ("p", "v")),
        "gather_p": lambda x: lax.all_gather(x, "p"),
        "axis_index_p": lambda x: x * lax.axis_index("p"),
    }[kind]


@settings(deadline=None)
@given(nestings(), st.sampled_from(["vmap_of_pmap", "pmap_of_vmap"]))
def test_nested_vmap_pmap_agree_with_jax(nz: dict[str, Any], order: str) -> None:
    body = _body(nz["body"])
    b, n, d = nz["b"], nz["n"], nz["d"]
    if order == "vmap_of_pmap":
        # the inner pmap maps n (per vmap example); the outer vmap maps b
        inner_shape = insert((d,), nz["inner_in"], n)
        shape = insert(inner_shape, nz["outer_in"], b)

        def build(vm: Any, pm: Any) -> Any:
            return vm(
                pm(body, "p", in_axes=nz["inner_in"], out_axes=nz["inner_out"]), in_axes=nz["outer_in"], axis_name="v"
            )
    else:
        inner_shape = insert((d,), nz["inner_in"], b)
        shape = insert(inner_shape, nz["outer_in"], n)

        def build(vm: Any, pm: Any) -> Any:
            return pm(
                vm(body, in_axes=nz["inner_in"], out_axes=nz["inner_out"], axis_name="v"), "p", in_axes=nz["outer_in"]
            )

    args = (sds(shape),)
    expected = jax_eval_shape(jax_construct(lambda: build(jax.vmap, jax.pmap)), args)
    outcome_event(expected)
    assert_predict_agrees(ax_predictor(lambda: build(ax.vmap, ax.pmap)), expected, args, context=f"{order} {nz}")


def test_nested_checked_calls() -> None:
    x = concrete((3, 4, 2))
    for build in (
        lambda vm, pm: vm(pm(lambda a: lax.psum(a, "p"), "p")),
        lambda vm, pm: pm(vm(lambda a: a * 2.0, in_axes=1), "p", in_axes=1),
    ):
        assert_call_agrees(build(ax.vmap, ax.pmap), build(jax.vmap, jax.pmap), Tracked(), (x,))


@settings(deadline=None, max_examples=_FEW)
@given(st.integers(1, 4), st.integers(1, 4), DIM)
def test_nested_pmap_raises(n_outer: int, n_inner: int, d: int) -> None:
    args = (sds((n_outer, n_inner, d)),)
    f = lambda x: x * 2.0
    expected = jax_eval_shape(jax.pmap(jax.pmap(f, axis_name="j"), axis_name="i"), args)
    assert isinstance(expected, Raised), f"nested pmap works now in JAX: {expected}"
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(ax.pmap(f, axis_name="j"), axis_name="i")), expected, args)


# ================================================================ 5. seed §6: collectives example


def complex_parallel_computation(x: Any) -> Any:  # x: (16,) per device
    local = x**2
    reduced = lax.psum_scatter(local, axis_name="devices")
    gathered = lax.all_gather(reduced, axis_name="devices")
    return jnp.mean(gathered, axis=0)


@pytest.mark.devices(8)
def test_seed_collectives_example_on_8_devices() -> None:
    x = jnp.arange(16 * NDEV, dtype=jnp.float32).reshape(NDEV, 16)
    expected = jax_eval_shape(jax.pmap(complex_parallel_computation, axis_name="devices"), (x,))
    assert isinstance(expected, Raised)
    assert "16" in str(expected.exc) and "8" in str(expected.exc)
    p = ax.pmap(complex_parallel_computation, axis_name="devices")
    with pytest.raises(ax.AxisCheckError) as info:
        p.predict(x)
    msg = str(info.value)
    assert "16" in msg and "8" in msg, msg
    with pytest.raises(ax.AxisCheckError):
        p(x)  # the checked call refuses before compiling
    assert isinstance(p.explain(sds((NDEV, NDEV))), str)  # a passing case explains too


def test_seed_collectives_example_on_16_devices_predicted() -> None:
    p = ax.pmap(complex_parallel_computation, axis_name="devices")
    x16 = sds((16, 16))
    pred = p.predict_with_devices(16, x16)
    # per device x: (16,); psum_scatter over 16 devices -> (); all_gather -> (16,);
    # mean over axis 0 -> (); stacked over 16 devices -> (16,)
    assert pred.shapes == (16,)
    assert isinstance(pred.shapes, ax.Shape)
    assert pred.axis_size == 16
    # and on 8 devices, the version with per-device (8,) works: cross-check with JAX
    expected = jax_eval_shape(jax.pmap(complex_parallel_computation, axis_name="devices"), (sds((NDEV, NDEV)),))
    assert_predict_agrees(p.predict, expected, (sds((NDEV, NDEV)),))
    assert_predict_agrees(lambda *a: p.predict_with_devices(NDEV, *a), expected, (sds((NDEV, NDEV)),))
    # 16 devices, 16 per device but only 8 mapped: psum_scatter needs 16 == 8
    with pytest.raises(ax.AxisCheckError):
        p.predict_with_devices(16, sds((8, 16)))
    # the 16-device answer is not available on 8 devices
    with pytest.raises(ax.AxisCheckError):
        p.predict(x16)


# ================================================================ 6. seed §5: training step


def parallel_training_step(params: Any, batch: Any, learning_rate: float = 0.01) -> Any:
    X, y = batch
    forward = lambda p, X: jnp.dot(X, p["W"]) + p["b"]  # (32, 1)
    loss_fn = lambda p, X, y: -jnp.mean(jax.nn.log_sigmoid(y * forward(p, X)))
    grads = jax.grad(loss_fn)(params, X, y)
    return {k: params[k] - learning_rate * grads[k] for k in params}, loss_fn(params, X, y)


@pytest.mark.parametrize("n", [NDEV, 4, 9])
def test_seed_training_step(n: int) -> None:
    params = {"W": sds((n, 20, 1)), "b": sds((n,))}
    batch = (sds((n, 32, 20)), jax.ShapeDtypeStruct((n, 32), np.bool_))
    with jax.numpy_rank_promotion("allow"):  # the seed relies on (32,) * (32, 1) broadcasting
        expected = jax_eval_shape(jax.pmap(parallel_training_step), (params, batch))
        if n <= NDEV:
            assert isinstance(expected, Ok)
            assert expected.shapes == [(n, 20, 1), (n,), (n,)]
        assert_predict_agrees(ax_predictor(lambda: ax.pmap(parallel_training_step)), expected, (params, batch))


def test_seed_training_step_real_call() -> None:
    key = jax.random.PRNGKey(0)
    params = {"W": jax.random.normal(key, (20, 1)), "b": jnp.zeros(())}
    replicated = jax.tree.map(lambda x: jnp.stack([x] * NDEV), params)

    def create_device_data(device_key: Any) -> Any:
        k1, k2 = jax.random.split(device_key)
        return jax.random.normal(k1, (32, 20)), jax.random.bernoulli(k2, 0.5, (32,))

    data = jax.pmap(create_device_data)(jax.random.split(key, NDEV))
    with jax.numpy_rank_promotion("allow"):
        assert_call_agrees(
            ax.pmap(parallel_training_step), jax.pmap(parallel_training_step), Tracked(), (replicated, data)
        )

        # data-parallel with a gradient all-reduce, params unmapped
        def step(params: Any, batch: Any) -> Any:
            new, loss = parallel_training_step(params, batch)
            return lax.pmean(new, "devices"), lax.pmean(loss, "devices")

        jfn = jax.pmap(step, "devices", in_axes=(None, 0), out_axes=(None, 0))
        afn = ax.pmap(step, "devices", in_axes=(None, 0), out_axes=(None, 0))
        expected = jax_eval_shape(jfn, (params, data))
        assert isinstance(expected, Ok)
        assert_predict_agrees(afn.predict, expected, (params, data))
        assert_call_agrees(afn, jfn, Tracked(), (params, data))


# ================================================================ extra: dependence, structure, jit


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("fun", "invariant"),
    [
        (lambda x, w: lax.psum(x, "i") + w, True),
        (lambda x, w: lax.pmax(x, "i") * 2, True),
        (lambda x, w: lax.all_gather(lax.psum_scatter(jnp.ones(4) * x[0], "i"), "i"), True),
        (lambda x, w: lax.psum(jnp.ones(3), "i"), True),
        (lambda x, w: w, True),
        (lambda x, w: w * lax.axis_index("i"), False),  # varies per device without touching x
        (lambda x, w: lax.pmean(x, "i") + x[0], False),
        (lambda x, w: lax.all_gather(x, "i")[lax.axis_index("i")][0], False),
    ],
)
def test_out_axes_none_follows_device_variance(fun: Any, invariant: bool) -> None:
    args = (sds((4, 3)), sds((3,)))
    jfn = jax.pmap(fun, "i", in_axes=(0, None), out_axes=None)
    expected = _jax_returns(jfn, args)
    make = lambda: ax.pmap(fun, "i", in_axes=(0, None), out_axes=None)
    if invariant:
        assert_predict_agrees(ax_predictor(make), expected, args)
    else:  # device 0's block, as JAX answers, with a warning
        with pytest.warns(ax.AxisCheckWarning, match="device 0's block"):
            assert_predict_agrees(ax_predictor(make), expected, args)


@pytest.mark.devices(8)
def test_ppermute_duplicate_destinations() -> None:
    """eval_shape misses it (a lowering-time check); the real call raises; axischeck raises."""
    f = lambda x: lax.ppermute(x, "i", [(0, 1), (1, 1)])
    _jax_returns(jax.pmap(f, "i"), (sds((4, 3)),))
    with pytest.raises(ValueError, match="unique"):
        jax.pmap(f, "i")(concrete((4, 3)))
    _assert_ax_raises(lambda: ax.pmap(f, "i"), (sds((4, 3)),))


@pytest.mark.parametrize(
    ("fun", "in_axes", "out_axes", "args"),
    [
        (lambda x, w: x["a"] + w, ({"b": 0}, None), 0, ({"a": (4, 3)}, (3,))),
        (lambda x, w: x["a"] + w, ({"a": 0}, None), 0, ({"a": (4, 3)}, (3,))),
        (lambda x, w: x[0] + w, ((0,), None), 0, (((4, 3), (4, 3)), (3,))),
        (lambda x, w: x * w, (0,), 0, ((4, 3), (3,))),  # tuple shorter than the args
        (lambda x, w: x * w, (0, None, None), 0, ((4, 3), (3,))),
        (lambda x, w: (x, w), (0, None), (0, 0, 0), ((4, 3), (3,))),
        (lambda x, w: {"a": x}, (0, None), {"b": 0}, ((4, 3), (3,))),
        (lambda x, w: {"a": x, "b": w}, (0, None), {"a": 1, "b": 0}, ((4, 3), (3,))),
        (lambda x, w: [x, w], (0, None), [0, None], ((4, 3), (3,))),
        (lambda x, w: [x, w], (0, None), (0, None), ((4, 3), (3,))),
    ],
)
def test_pytree_prefix_structures(fun: Any, in_axes: Any, out_axes: Any, args: Any) -> None:
    args = jax.tree.map(sds, args, is_leaf=lambda t: isinstance(t, tuple) and all(isinstance(d, int) for d in t))
    expected = jax_eval_shape(jax_construct(lambda: jax.pmap(fun, "i", in_axes=in_axes, out_axes=out_axes)), args)
    assert_predict_agrees(
        ax_predictor(lambda: ax.pmap(fun, "i", in_axes=in_axes, out_axes=out_axes)),
        expected,
        args,
        context=f"in_axes={in_axes} out_axes={out_axes}",
    )


@settings(deadline=None)
@given(problems(allow_out_none=False))
def test_pmap_predict_on_tracers_under_jit(p: Problem) -> None:
    jfn, args, kwargs = _expected(p)
    expected = jax_eval_shape(jfn, args, kwargs)
    make = lambda: ax.pmap(p.fun, **p.pmap_kwargs())
    assert_predict_agrees(predict_under_jit(ax_predictor(make)), expected, args, kwargs, context=repr(p))


def test_other_jax_parameters_are_accepted() -> None:
    f = lambda x, y: x * y
    args = (sds((4, 3)), sds((4, 3)))
    for kw in ({"backend": "cpu"}, {"donate_argnums": (0,)}, {"axis_size": 4, "devices": jax.devices()[:4]}):
        expected = jax_eval_shape(jax.pmap(f, "i", **kw), args)
        assert_predict_agrees(ax_predictor(lambda kw=kw: ax.pmap(f, "i", **kw)), expected, args, context=str(kw))
    arrays = (concrete((4, 3)), concrete((4, 3), 1))
    assert_call_agrees(ax.pmap(f, "i", backend="cpu"), jax.pmap(f, "i", backend="cpu"), Tracked(), arrays)


def test_decorator_forms() -> None:
    def raw(x: Any, w: Any) -> Any:
        return lax.psum(x, "i") * w

    args = (sds((4, 3)), sds((3,)))
    expected = jax_eval_shape(jax.pmap(raw, "i", in_axes=(0, None)), args)
    assert_predict_agrees(ax.pmap(axis_name="i", in_axes=(0, None))(raw).predict, expected, args)
    assert_predict_agrees(ax.pmap(in_axes=(0, None), axis_name="i")(raw).predict, expected, args)
    expected = jax_eval_shape(jax.pmap(lambda x: x * 2), (sds((4, 3)),))
    assert_predict_agrees(ax.pmap(lambda x: x * 2).predict, expected, (sds((4, 3)),))


def test_unhashable_static_argument_raises() -> None:
    f = lambda x, s: x * len(s)
    jfn = jax.pmap(f, static_broadcasted_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable"):
        jfn(concrete((4, 3)), [1, 2])
    expected = jax_eval_shape(lambda x: jfn(x, [1, 2]), (sds((4, 3)),))
    assert isinstance(expected, Raised)
    assert_predict_agrees(
        ax_predictor(lambda: ax.pmap(f, static_broadcasted_argnums=1)), expected, (sds((4, 3)), [1, 2])
    )


@pytest.mark.parametrize("body", ["scale", "psum"])
def test_int_axis_name_zero(body: str) -> None:
    """`axis_name=0`: JAX 0.10.2 raises (a squeeze error) even without a collective."""
    f = (lambda x: x * 2) if body == "scale" else (lambda x: lax.psum(x, 0))
    expected = jax_eval_shape(jax.pmap(f, axis_name=0), (sds((4, 3)),))
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, axis_name=0)), expected, (sds((4, 3)),))


@pytest.mark.devices(8)
def test_int_axis_name_real_call_fails() -> None:
    """`axis_name=1`: eval_shape succeeds but the real call raises TypeError; the checked
    call must raise AxisCheckError (an int name is read as a positional axis, §5.1)."""
    f = lambda x: x * 2
    _jax_returns(jax.pmap(f, axis_name=1), (sds((4, 3)),))
    with pytest.raises(TypeError):
        jax.pmap(f, axis_name=1)(concrete((4, 3)))
    with pytest.raises(ax.AxisCheckError):
        ax.pmap(f, axis_name=1)(concrete((4, 3)))


def test_jit_of_checked_pmap() -> None:
    f = lambda x, w: lax.psum(x, "i") @ w
    args = (concrete((4, 3)), concrete((3, 2), 1))
    afn = jax.jit(ax.pmap(f, "i", in_axes=(0, None)))
    jfn = jax.jit(jax.pmap(f, "i", in_axes=(0, None)))
    assert_call_agrees(afn, jfn, Tracked(), args)


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("sig", "shapes", "ok"),
    [
        ("(a,b),(b,c)->(a,c)", [(4, 2, 3), (4, 3, 5)], True),
        ("(a,b),(b,c)->(a,c)", [(4, 2, 3), (4, 4, 5)], False),
        ("(a,b),(b,c)->(a,c)", [(9, 2, 3), (9, 3, 5)], False),  # 9 > 8 devices, even symbolically
        ("(a,b),(b,c)->(a,c)", [(0, 2, 3), (0, 3, 5)], False),
    ],
)
def test_signature_predictions(sig: str, shapes: list[tuple[int, ...]], ok: bool) -> None:
    f = lambda x, y: x @ y
    args = tuple(sds(s) for s in shapes)
    expected = jax_eval_shape(jax.pmap(f), args)
    assert isinstance(expected, Ok) == ok
    assert_predict_agrees(ax_predictor(lambda: ax.pmap(f, signature=sig)), expected, args)
