"""`axischeck.eqx`: Equinox's filter_vmap / filter_pmap, checked, against Equinox's own."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

eqx = pytest.importorskip("equinox", reason="Equinox is not installed (the `equinox` extra)")

import axischeck as ax  # noqa: E402
import axischeck.eqx as axeqx  # noqa: E402
from jax_oracle import outcome, same_outcome  # noqa: E402

KEY = jax.random.key(0)


def apply(model: Any, x: jax.Array) -> jax.Array:
    return model(x)  # type: ignore[no-any-return]


IN_AXES: list[Any] = [None, (None, 0), (None, 1), (eqx.if_array(0), None), eqx.if_array(0), (0, 0), {"x": 0}]


@given(
    width=st.integers(1, 4),
    out=st.integers(1, 3),
    feature=st.integers(1, 4),
    batch=st.integers(1, 4),
    members=st.integers(1, 4),
    in_axes=st.sampled_from(IN_AXES),
    out_axes=st.sampled_from([0, 1, -1, eqx.if_array(0)]),
    x_batch_axis=st.integers(0, 1),
    ensemble=st.booleans(),
)
def test_filter_vmap_matches_equinox(
    width: int,
    out: int,
    feature: int,
    batch: int,
    members: int,
    in_axes: Any,
    out_axes: Any,
    x_batch_axis: int,
    ensemble: bool,
) -> None:
    """Same values, or the same exception type, as `equinox.filter_vmap` on drawn models,
    arguments and axes; a successful call's shape is what `predict` said."""
    if ensemble:
        model = eqx.filter_vmap(lambda k: eqx.nn.MLP(width, out, 3, 1, key=k))(jax.random.split(KEY, members))
    else:
        model = eqx.nn.MLP(width, out, 3, 1, key=KEY)
    shape = (batch, feature) if x_batch_axis == 0 else (feature, batch)
    x = jax.random.normal(KEY, shape)
    kwargs = {"out_axes": out_axes} if in_axes is None else {"in_axes": in_axes, "out_axes": out_axes}
    theirs = outcome(lambda: eqx.filter_vmap(apply, **kwargs)(model, x))
    wrapped = axeqx.filter_vmap(apply, **kwargs)
    ours = outcome(lambda: wrapped(model, x))
    same_outcome(ours, theirs)
    prediction = outcome(lambda: wrapped.predict(model, x))
    if theirs[0] == "ok":
        assert prediction[0] == "ok", prediction
        assert prediction[1].shapes == theirs[1].shape
    else:
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


def test_mistake_is_named_in_the_users_terms() -> None:
    """Issue #32: a per-example mistake names the parameters and pytree paths, not `_dynamic_args`."""
    model = eqx.nn.MLP(3, 2, 8, 2, key=KEY)
    f = axeqx.filter_vmap(apply, in_axes=(None, 0))
    with pytest.raises(ax.AxisCheckError) as info:
        f(model, jnp.ones((5, 4)))
    message = str(info.value)
    assert message.startswith("eqx.filter_vmap(apply, in_axes=(None, 0)")
    assert "model.layers[0].weight (size 3)" in message and "x (size 4)" in message
    assert "_dynamic_args" not in message and "_fun_wrapper" not in message
    assert isinstance(info.value, TypeError)  # JAX's own error type is kept


def test_batch_size_mistake_has_a_checked_fix() -> None:
    ensemble = eqx.filter_vmap(lambda k: eqx.nn.Linear(3, 2, key=k))(jax.random.split(KEY, 4))
    f = axeqx.filter_vmap(apply)
    with pytest.raises(ValueError, match="disagree on the batch size") as info:
        f(ensemble, jnp.ones((5, 3)))
    assert "Fix: in_axes=(eqx.if_array(0), None)" in str(info.value) or "in_axes=(None, eqx.if_array(0))" in str(
        info.value
    )
    assert "model.weight" in str(info.value)
    fixed = axeqx.filter_vmap(apply, in_axes=(eqx.if_array(0), None))
    assert fixed(ensemble, jnp.ones(3)).shape == (4, 2)


def test_equinox_900_out_axes_arrangement() -> None:
    """Equinox #900: out_axes=-1 arranged (4, 3, 2) where jax.vmap gives (3, 4, 2) (fixed in 0.11.9)."""
    x = jnp.arange(24.0).reshape((2, 3, 4))
    f = axeqx.filter_vmap(lambda x: x * 2.0, out_axes=-1)
    assert f(x).shape == jax.vmap(lambda x: x * 2.0, out_axes=-1)(x).shape == (3, 4, 2)
    assert f.predict(x).shapes == (3, 4, 2)


def test_equinox_952_in_axes_tree_is_a_prefix_of_the_args_tuple() -> None:
    """Equinox #952: for a single argument, in_axes is a prefix of the tuple of arguments."""

    class Series(eqx.Module):  # type: ignore[misc]
        value: jax.Array
        time: jax.Array
        name: str

    s = Series(jnp.ones((10, 20)), jnp.arange(20.0), "ts")
    axes = eqx.tree_at(lambda t: t.value, eqx.filter(s, False), 0, is_leaf=lambda v: v is None)
    f = axeqx.filter_vmap(lambda t: jnp.mean(t.value), in_axes=(axes,))
    assert f(s).shape == (10,)
    assert f.predict(s).shapes == (10,)
    # Without the tuple the structure does not match: Equinox's own error, unchanged.
    same_outcome(
        outcome(lambda: axeqx.filter_vmap(lambda t: jnp.mean(t.value), in_axes=axes)(s)),
        outcome(lambda: eqx.filter_vmap(lambda t: jnp.mean(t.value), in_axes=axes)(s)),
    )


def test_decorator_forms_methods_and_keywords() -> None:
    @axeqx.filter_vmap
    def add(x: jax.Array, y: Any) -> jax.Array:
        return x + y

    @axeqx.filter_vmap(in_axes=(None, 1))
    def add2(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    np.testing.assert_array_equal(add(jnp.array([1, 2]), 3), jnp.array([4, 5]))
    assert add2(jnp.array(1), jnp.array([[2, 3]])).shape == (2, 1)
    with pytest.raises(RuntimeError, match="keyword arguments"):
        add(jnp.ones(2), y=jnp.ones(2))

    class Model(eqx.Module):  # type: ignore[misc]
        w: jax.Array

        @axeqx.filter_vmap(in_axes=(None, 0))
        def __call__(self, x: jax.Array) -> jax.Array:
            return self.w @ x

    assert Model(jnp.ones((2, 3)))(jnp.ones((5, 3))).shape == (5, 2)


def test_trace_counts_match_equinox() -> None:
    counts = {"ours": 0, "theirs": 0}

    def make(which: str) -> Any:
        def f(x: jax.Array) -> jax.Array:
            counts[which] += 1
            return x * 2

        return f

    x = jnp.ones((4, 3))
    ours, theirs = axeqx.filter_vmap(make("ours")), eqx.filter_vmap(make("theirs"))
    for _ in range(2):
        ours(x)
        theirs(x)
    eqx.filter_jit(ours)(x)
    eqx.filter_jit(theirs)(x)
    assert counts["ours"] == counts["theirs"]


def test_a_filter_vmap_made_anew_is_found_in_equinoxs_pmap_cache() -> None:
    """Equinox's filter_pmap caches its traces by the function it maps: an
    `axischeck.eqx.filter_vmap(f)` made again equals the first, as two
    `eqx.filter_vmap(f)` do, so a step written inline traces as often as with Equinox."""
    counts = {"ours": 0, "theirs": 0}

    def make(which: str) -> Any:
        def f(x: jax.Array) -> jax.Array:
            counts[which] += 1
            return x + 1

        return f

    ours_f, theirs_f = make("ours"), make("theirs")
    assert axeqx.filter_vmap(ours_f) == axeqx.filter_vmap(ours_f)
    assert hash(axeqx.filter_vmap(ours_f)) == hash(axeqx.filter_vmap(ours_f))
    assert axeqx.filter_vmap(ours_f) != axeqx.filter_vmap(theirs_f)
    assert axeqx.filter_vmap(ours_f) != axeqx.filter_vmap(ours_f, in_axes=1)
    for x in (jnp.array([[1, 2]]), jnp.array([[2, 3]])):
        np.testing.assert_array_equal(
            eqx.filter_pmap(axeqx.filter_vmap(ours_f))(x), eqx.filter_pmap(eqx.filter_vmap(theirs_f))(x)
        )
    assert counts["ours"] == counts["theirs"] == 2  # eval_shape and pmap, then both cached


def test_filter_pmap_offers_equinoxs_lower() -> None:
    """Ahead-of-time compilation through Equinox's own `.lower` (Equinox's test_pmap)."""

    def f(x: jax.Array, y: int) -> jax.Array:
        return 2 * x + y

    x = jnp.array([3])
    compiled = axeqx.filter_pmap(f, donate="none").lower(x, 4).compile()
    np.testing.assert_array_equal(compiled(x, 4), eqx.filter_pmap(f, donate="none").lower(x, 4).compile()(x, 4))
    with pytest.raises(AttributeError):
        axeqx.filter_pmap(f).no_such_attribute  # noqa: B018


def test_filter_pmap_matches_equinox_and_names_the_axis() -> None:
    n = jax.local_device_count()
    x = jnp.arange(n * 3.0).reshape(n, 3)
    ours = axeqx.filter_pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    theirs = eqx.filter_pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    np.testing.assert_array_equal(ours(x), theirs(x))
    assert ours.predict(x).shapes == (n, 3)
    # Equinox #111: a collective over an axis name the transform was not given.
    unbound = outcome(lambda: axeqx.filter_pmap(lambda x: jax.lax.pmean(x, "i"))(x))
    same_outcome(unbound, outcome(lambda: eqx.filter_pmap(lambda x: jax.lax.pmean(x, "i"))(x)))
    assert isinstance(unbound[1], ax.AxisCheckError) and "Fix: axis_name='i'" in str(unbound[1])
    # Too many rows for the devices: named by the argument.
    with pytest.raises(ValueError) as info:
        ours(jnp.ones((n + 1, 3)))
    assert "filter_pmap" in str(info.value)


def test_patch_routes_equinox_and_unpatch_restores() -> None:
    original = eqx.filter_vmap
    with ax.patch():
        assert eqx.filter_vmap is axeqx.filter_vmap and eqx.filter_pmap is axeqx.filter_pmap
        with pytest.raises(ax.AxisCheckError, match=r"m\.weight"):
            eqx.filter_vmap(lambda m, x: m(x), in_axes=(None, 0))(eqx.nn.Linear(3, 2, key=KEY), jnp.ones((5, 4)))
    assert eqx.filter_vmap is original


@given(
    rows=st.integers(1, 9),
    cols=st.integers(1, 3),
    other=st.integers(1, 9),
    in_axes=st.sampled_from([0, (0, None), (0, 0)]),
)
def test_filter_pmap_matches_equinox(rows: int, cols: int, other: int, in_axes: Any) -> None:
    """Same values or exception type as `equinox.filter_pmap` on drawn row counts (some
    above the device count) and axes; `predict` agrees."""
    x = jnp.arange(rows * cols, dtype=jnp.float32).reshape(rows, cols)
    y = jnp.ones((other, cols))

    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        return jax.lax.psum(x, "i") + y.sum()

    theirs = outcome(lambda: eqx.filter_pmap(f, in_axes=in_axes, axis_name="i")(x, y))
    wrapped = axeqx.filter_pmap(f, in_axes=in_axes, axis_name="i")
    same_outcome(outcome(lambda: wrapped(x, y)), theirs)
    prediction = outcome(lambda: wrapped.predict(x, y))
    if theirs[0] == "ok":
        assert prediction[0] == "ok" and prediction[1].shapes == theirs[1].shape, prediction
    else:
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


@pytest.mark.slow
def test_import_axischeck_does_not_import_equinox() -> None:
    code = "import sys, axischeck; axischeck.vmap; print('equinox' in sys.modules, 'flax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.slow
def test_equinox_imported_while_patched_is_routed() -> None:
    code = (
        "import jax, axischeck as ax; ax.patch()\n"
        "import equinox as eqx, axischeck.eqx as axeqx\n"
        "from equinox import filter_vmap\n"
        "print(eqx.filter_vmap is axeqx.filter_vmap, filter_vmap is axeqx.filter_vmap)\n"
        "ax.unpatch(); print(eqx.filter_vmap is axeqx.filter_vmap)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "False"]


@pytest.mark.parametrize("name", axeqx.__all__)
def test_docstring_examples(name: str) -> None:
    """The public functions' examples run (as tests/test_docstrings.py runs axischeck's)."""
    import doctest
    import re

    doc = re.sub(r"^[ \t]*```.*$", "", getattr(axeqx, name).__doc__ or "", flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(doc, {"ax": ax, "jax": jax, "jnp": jnp}, name, None, 0)
    assert test.examples, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


@pytest.mark.slow
def test_axischeck_run_routes_equinox(tmp_path: Any) -> None:
    """`axischeck run prog.py`: the program's `eqx.filter_vmap` mistake is axischeck's report."""
    (tmp_path / "prog.py").write_text(
        "import jax, jax.numpy as jnp, equinox as eqx\n"
        "m = eqx.nn.Linear(3, 2, key=jax.random.key(0))\n"
        "eqx.filter_vmap(lambda m, x: m(x), in_axes=(None, 0))(m, jnp.ones((5, 4)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "axischeck", "run", "prog.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode != 0
    assert "eqx.filter_vmap(<lambda>, in_axes=(None, 0)" in out.stderr and "m.weight" in out.stderr, out.stderr


def _add(x: jax.Array, y: jax.Array) -> jax.Array:
    return x + y


LINEAR = eqx.nn.Linear(3, 2, key=KEY)
FIXES: list[Any] = [
    # (function, in_axes given, arguments, the fix as written, the fix as an object)
    (apply, eqx.if_array(0), (LINEAR, jnp.ones((5, 3))), "(None, eqx.if_array(0))", (None, eqx.if_array(0))),
    (apply, (0, 0), (LINEAR, jnp.ones((5, 3))), "(None, 0)", (None, 0)),
    (apply, (None, None), (LINEAR, jnp.ones((5, 3))), "(None, 0)", (None, 0)),
    (_add, eqx.if_array(0), (jnp.ones((5, 3)), jnp.ones(3)), "(1, eqx.if_array(0))", (1, eqx.if_array(0))),
]


@pytest.mark.parametrize("case", range(len(FIXES)))
def test_common_mistakes_get_a_fix_in_equinox_terms_that_runs(case: int) -> None:
    """In_axes mapping a module's weights, an unmapped batch, the wrong axis, mismatched
    batch sizes: the `Fix:` gives in_axes per argument (None, an int, `eqx.if_array(k)`, or
    the entry as written), not over the arrays inside a module, and the fixed wrapper runs
    as Equinox's does."""
    fun, in_axes, args, written, fixed = FIXES[case]
    with pytest.raises(ax.AxisCheckError) as info:
        axeqx.filter_vmap(fun, in_axes=in_axes)(*args)
    assert info.value.fix is not None and info.value.fix.startswith(f"in_axes={written} "), info.value.fix
    np.testing.assert_array_equal(
        axeqx.filter_vmap(fun, in_axes=fixed)(*args), eqx.filter_vmap(fun, in_axes=fixed)(*args)
    )


def test_a_failure_inside_the_function_gets_no_guessed_fix() -> None:
    """The wrong axis of x makes the layer's matmul fail per example: as for `ax.vmap`, the
    facts are named but no in_axes is offered as the fix (one that makes it run is a guess)."""
    with pytest.raises(ax.AxisCheckError) as info:
        axeqx.filter_vmap(apply, in_axes=(None, 1))(LINEAR, jnp.ones((5, 3)))
    assert info.value.fix is None
    assert "eqx.filter_vmap(apply, in_axes=(None, 1)" in str(info.value)
    assert "dot_general requires contracting dimensions" in str(info.value)


class _Field(eqx.Module):
    w: jax.Array
    out_scale: jax.Array

    def __call__(self, t: jax.Array, y: jax.Array) -> jax.Array:
        return self.out_scale * jnp.tanh(self.w @ y) * t


def test_a_model_mapped_by_the_default_is_left_whole_before_the_data() -> None:
    """filter_vmap's default maps every array: a model and a state of 4 against times of
    8. The fix leaves the model (and the state) whole and maps the times, the model
    evaluated at each time; mapping the model's weight rows instead (the only reading that
    keeps the 4) is not offered as the fix."""

    def evolve(model: _Field, y0: jax.Array, t: jax.Array) -> jax.Array:
        return model(t, y0)

    model = _Field(jax.random.normal(jax.random.key(0), (4, 4)), jax.random.normal(jax.random.key(1), (4,)))
    y0, ts = jax.random.normal(jax.random.key(2), (4,)), jnp.linspace(0.0, 1.0, 8)
    with pytest.raises(ax.ArgumentError) as info:
        axeqx.filter_vmap(evolve)(model, y0, ts)
    err = info.value
    assert err.fix is not None and err.fix.startswith("in_axes=(None, None, eqx.if_array(0))")
    (fix,) = err.suggestions
    fixed = eqx.filter_vmap(evolve, in_axes=dict(fix.options)["in_axes"])(model, y0, ts)
    np.testing.assert_allclose(fixed, jnp.stack([evolve(model, y0, t) for t in ts]), rtol=1e-5)


def _by_rank(leaf: Any) -> int | None:
    """An out_axes callable as Equinox's docs describe: it sees one example's output leaf."""
    return 1 if eqx.is_array(leaf) and leaf.ndim >= 1 else None


def _mixed(x: jax.Array, y: jax.Array) -> Any:
    return {"a": x * 2.0, "b": (x.sum(), 3.0, y), "c": "label", "d": None}


CALLABLE_OUT_AXES: list[Any] = [
    _by_rank,
    lambda leaf: 0 if eqx.is_array(leaf) else None,
    {"a": _by_rank, "b": (0, None, eqx.if_array(-1)), "c": None, "d": None},
    {"a": eqx.if_array(-1), "b": lambda leaf: 0 if eqx.is_array(leaf) else None, "c": None, "d": 0},
    {"a": lambda leaf: -1, "b": (lambda leaf: 0, 0, None), "c": None, "d": None},  # 3.0 mapped: an array
    {"a": lambda leaf: 2, "b": None, "c": None, "d": None},  # axis 2 of a rank-2 result: both raise
    {"a": lambda leaf: "x", "b": None, "c": None, "d": None},  # not an axis: both raise
    lambda leaf: leaf.ndim,  # a float leaf has no ndim: both raise
]


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
@pytest.mark.parametrize("case", range(len(CALLABLE_OUT_AXES)))
def test_callable_out_axes_match_equinox(case: int, in_axes: Any) -> None:
    """out_axes with callables (bare or inside a pytree prefix, beside ints, None and
    `eqx.if_array`) are read as Equinox reads them, on one example's outputs: the same
    values, or the same exception type; `predict` gives the shapes of Equinox's array
    outputs, or raises `AxisCheckError` where Equinox raises."""
    out_axes = CALLABLE_OUT_AXES[case]
    x, y = jnp.arange(15.0).reshape(5, 3), jnp.arange(20.0).reshape(5, 4)
    theirs = outcome(lambda: eqx.filter_vmap(_mixed, in_axes=in_axes, out_axes=out_axes)(x, y))
    wrapped = axeqx.filter_vmap(_mixed, in_axes=in_axes, out_axes=out_axes)
    same_outcome(outcome(lambda: wrapped(x, y)), theirs)
    prediction = outcome(lambda: wrapped.predict(x, y))
    if theirs[0] == "ok":
        assert prediction[0] == "ok", prediction
        expected = jax.tree.map(lambda leaf: leaf.shape if eqx.is_array(leaf) else None, theirs[1])
        assert prediction[1].shapes == expected
    else:
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


def test_callable_out_axes_keep_the_size_explanation() -> None:
    """A batch-size mistake with callable out_axes is explained as the batch-size mistake it
    is, with the out_axes shown as written."""
    f = axeqx.filter_vmap(_mixed, in_axes=(0, 0), out_axes={"a": _by_rank, "b": 0, "c": None, "d": None})
    with pytest.raises(ax.AxisCheckError, match="disagree on the batch size") as info:
        f(jnp.ones((5, 3)), jnp.ones((4, 2)))
    assert str(info.value).startswith(
        "eqx.filter_vmap(_mixed, in_axes=(0, 0), out_axes={'a': _by_rank, 'b': 0, 'c': None, 'd': None})"
    )
    assert "size 5 at axis 0 of x" in str(info.value) and "size 4 at axis 0 of y" in str(info.value)


def test_a_failing_out_axes_callable_is_named() -> None:
    f = axeqx.filter_vmap(_mixed, in_axes=(0, None), out_axes=lambda leaf: leaf.ndim)
    with pytest.raises(ax.AxisCheckError, match=r"out_axes=<lambda> cannot be read on the output: AttributeError"):
        f.predict(jnp.ones((5, 3)), jnp.ones(4))


def test_filter_pmap_callable_out_axes_match_equinox() -> None:
    n = jax.local_device_count()
    x = jnp.arange(n * 3.0).reshape(n, 3)

    def f(x: jax.Array) -> Any:
        return x * 2.0, jax.lax.psum(x, "i"), 1.0

    out_axes = (lambda leaf: 1, lambda leaf: None if eqx.is_array(leaf) else None, None)
    theirs = outcome(lambda: eqx.filter_pmap(f, axis_name="i", out_axes=out_axes)(x))
    wrapped = axeqx.filter_pmap(f, axis_name="i", out_axes=out_axes)
    same_outcome(outcome(lambda: wrapped(x)), theirs)
    assert theirs[0] == "ok"
    assert wrapped.predict(x).shapes == ((3, n), (3,), None)


def test_filter_pmap_of_filter_vmap_maps_twice_and_traces_as_equinox() -> None:
    """Wrapping a wrapper takes its name, not its transform: `filter_pmap(filter_vmap(f))`
    is a pmap of a vmap (both axis names bound), and, as Equinox's test_pmap_vmap counts,
    traces `f` twice at the first call (Equinox's eval_shape, then pmap) and never again;
    the same under `ax.patch()`, which routes Equinox's names through these wrappers."""
    n = min(2, jax.local_device_count())
    x = jnp.arange(n * 3 * 2.0).reshape(n, 3, 2)

    def run(filter_pmap: Any, filter_vmap: Any) -> tuple[list[Any], list[int]]:
        counts = [0]

        def f(v: jax.Array) -> jax.Array:
            counts[0] += 1
            return v + jax.lax.axis_index("p") + jax.lax.psum(v, "v")

        g = filter_pmap(filter_vmap(f, axis_name="v"), axis_name="p")
        outs, seen = [], []
        for k in range(2):
            outs.append(g(x + k))
            seen.append(counts[0])
        return outs, seen

    theirs = run(eqx.filter_pmap, eqx.filter_vmap)
    ours = run(axeqx.filter_pmap, axeqx.filter_vmap)
    with ax.patch():
        patched = run(eqx.filter_pmap, eqx.filter_vmap)
    assert theirs[1] == ours[1] == patched[1] == [2, 2]
    for got in (ours[0], patched[0]):
        jax.tree.map(np.testing.assert_array_equal, got, theirs[0])
    assert repr(axeqx.filter_pmap(axeqx.filter_vmap(jnp.sin))).startswith("<axischeck eqx.filter_pmap(sin")


@pytest.mark.parametrize("transform", ["filter_vmap", "filter_pmap"])
def test_a_wrapped_model_is_a_pytree_of_its_arrays_as_equinox_wraps_it(transform: str) -> None:
    """Equinox's wrapper is a Module: `eqx.filter_jit` traces the model's arrays in it and
    `eqx.filter_grad` differentiates them. The checked wrapper is a pytree with the same
    arrays (it was a static leaf: filter_jit hashed the model's arrays and refused it, and
    filter_grad answered with no gradient at all)."""
    model = eqx.nn.Linear(3, 2, key=KEY)
    n = jax.local_device_count() if transform == "filter_pmap" else 5
    x = jnp.arange(n * 3.0).reshape(n, 3)

    def loss(mapped: Any, x: jax.Array) -> jax.Array:
        return mapped(x).sum()  # type: ignore[no-any-return]

    ours, theirs = getattr(axeqx, transform)(model), getattr(eqx, transform)(model)
    assert eqx.filter_jit(ours)(x).tolist() == eqx.filter_jit(theirs)(x).tolist()
    grads = [jax.tree_util.tree_leaves(eqx.filter_grad(loss)(m, x)) for m in (ours, theirs)]
    assert [g.tolist() for g in grads[0]] == [g.tolist() for g in grads[1]] and len(grads[0]) == 2
    arrays = [jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_array)) for m in (ours, theirs)]
    assert [a is b for a, b in zip(*arrays, strict=True)] == [True, True]
    rebuilt = jax.tree_util.tree_map(lambda a: a, ours)
    assert type(rebuilt) is type(ours) and rebuilt(x).tolist() == ours(x).tolist()
    assert rebuilt.predict(x).shapes == ours.predict(x).shapes
    assert rebuilt.weight is model.weight  # the model's fields, shown as when it was made
    # The options are the static part, held once: a leaf holds only what Equinox's wrapper holds.
    assert len(jax.tree_util.tree_leaves(ours)) == len(jax.tree_util.tree_leaves(theirs))


def test_filter_jit_of_a_wrapped_model_traces_as_equinox() -> None:
    traces: dict[str, int] = {"equinox": 0, "axischeck": 0}

    class Counted(eqx.Module):
        weight: jax.Array
        name: str = eqx.field(static=True)

        def __call__(self, x: jax.Array) -> jax.Array:
            traces[self.name] += 1
            return self.weight @ x

    for name, lib in (("equinox", eqx), ("axischeck", axeqx)):
        step = eqx.filter_jit(lib.filter_vmap(Counted(jnp.ones((2, 3)), name)))
        for batch in (4, 4, 5):
            step(jnp.ones((batch, 3)))
    assert traces["axischeck"] == traces["equinox"] == 2


def test_a_wrapper_used_as_a_method_predicts_with_the_instance() -> None:
    """Bound as Equinox binds its own wrapper (an `eqx.Partial`: a pytree), with
    `predict` and `explain` that pass the instance first."""
    import equinox as eqx

    class Model(eqx.Module):
        w: jax.Array

        @axeqx.filter_vmap(in_axes=(None, 0))
        def apply(self, x: jax.Array) -> jax.Array:
            return x @ self.w

    model = Model(jnp.arange(6.0).reshape(3, 2))
    x = jnp.arange(12.0).reshape(4, 3)
    assert isinstance(model.apply, eqx.Partial)
    np.testing.assert_array_equal(model.apply(x), x @ model.w)
    assert model.apply.predict(x).shapes == (4, 2)
    assert "4, 2" in model.apply.explain(x)


@pytest.mark.parametrize(
    ("options", "args"),
    [
        ({"in_axes": None, "out_axes": None}, (jnp.arange(3.0), 2)),
        ({}, (2, 3.0)),  # no arrays among the arguments: if_array(0) maps nothing
        ({"in_axes": None, "out_axes": None}, (2, 3)),
    ],
)
def test_nothing_mapped_is_called_as_it_is_as_equinox_calls_it(options: dict[str, Any], args: tuple[Any, ...]) -> None:
    """With nothing mapped and no axis_size, Equinox calls the function without vmap:
    predict answers with the outputs' shapes (not "nothing to map", not axis_size=1)."""
    import equinox as eqx

    f = lambda x, n: x * 2  # noqa: E731
    want = eqx.filter_vmap(f, **options)(*args)
    wrapped = axeqx.filter_vmap(f, **options)
    np.testing.assert_array_equal(wrapped(*args), want)
    shapes = wrapped.predict(*args).shapes
    assert shapes == (np.shape(want) if isinstance(want, jax.Array) else None)


def test_nothing_mapped_with_a_mapped_output_is_refused_as_equinox_refuses_it() -> None:
    import equinox as eqx

    f = lambda x, n: x * 2  # noqa: E731
    with pytest.raises(ValueError, match="Cannot resolve batch dimension"):
        eqx.filter_vmap(f, in_axes=None)(jnp.arange(3.0), 2)
    wrapped = axeqx.filter_vmap(f, in_axes=None)
    with pytest.raises(ax.SpecError, match="nothing is mapped") as predicted:
        wrapped.predict(jnp.arange(3.0), 2)
    assert "out_axes=None" in (predicted.value.hint or "")
    with pytest.raises(ax.SpecError, match="Cannot resolve batch dimension"):
        wrapped(jnp.arange(3.0), 2)


def test_an_int_entry_over_a_single_model_gets_none_where_if_array_does_not_check() -> None:
    """An int in_axes entry over one model (not a stacked ensemble) reaches its activation:
    eqx.if_array(0) would map its weights of sizes 8 and 2 against a batch of 5, so the
    checked fix passes the model whole."""
    model = eqx.nn.MLP(3, 2, 8, 1, key=KEY)
    with pytest.raises(ax.AxisCheckError) as info:
        axeqx.filter_vmap(apply, in_axes=(0, 0))(model, jnp.ones((5, 3)))
    assert info.value.fix == "in_axes=(None, 0) passes model whole to every example"
    assert axeqx.filter_vmap(apply, in_axes=(None, 0))(model, jnp.ones((5, 3))).shape == (5, 2)


def test_a_library_layers_unbound_axis_name_gets_no_fix_on_the_layers_own_map() -> None:
    """Equinox's BatchNorm maps its statistics over channels with jax.vmap and means them
    over the axis name it is given: under an eqx.filter_vmap without that name, binding it
    on BatchNorm's own vmap would be a change inside Equinox (and computes something
    else). The hint goes to the user's map, which binds no axis name."""
    norm, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, "batch", mode="batch")

    def forward(x: jax.Array, state: Any) -> Any:
        return norm(x, state)

    with ax.patch(), pytest.raises(ax.AxisCheckError) as info:
        eqx.filter_vmap(forward, in_axes=(0, None), out_axes=(0, None))(jnp.ones((4, 3)), state)
    err = info.value
    assert err.fix is None and err.suggestions == ()
    notes = "\n".join(getattr(err, "__notes__", ()))
    assert "axischeck: raised inside eqx.filter_vmap(forward" in notes
    assert (
        "binds no axis name: if the collective over 'batch' is meant over its map, give it axis_name='batch'" in notes
    )


def test_a_batch_norm_state_mapped_over_the_batch_is_unmapped_by_the_fix() -> None:
    """equinox#592: a BatchNorm's State given in_axes 0 beside the batch it normalises
    (out_axes None keeps one State). Its scalar leaf cannot be mapped; the State's own
    repr fails on axes for leaves, and the message still names it and unmaps it."""
    norm = eqx.nn.BatchNorm(3, axis_name="batch", mode="ema")
    state = eqx.nn.State(norm)

    def normalise(bn: Any, x: jax.Array, state: Any) -> Any:
        return bn(x, state)

    xs = jnp.arange(15.0).reshape(5, 3) / 7.0
    with ax.patch(), pytest.raises(ValueError) as info:
        eqx.filter_vmap(normalise, in_axes=(None, 0, 0), out_axes=(0, None), axis_name="batch")(norm, xs, state)
    err = info.value
    assert isinstance(err, ax.AxisCheckError)
    assert "state[<flat index 0>] has shape () of rank 0" in str(err)
    assert [s.as_kwargs() for s in err.suggestions if s.is_fix] == [{"in_axes": (None, 0, None)}]
    ys, _ = eqx.filter_vmap(normalise, in_axes=(None, 0, None), out_axes=(0, None), axis_name="batch")(norm, xs, state)
    assert ys.shape == (5, 3)


def test_an_input_shared_by_an_ensemble_is_said_never_fixed() -> None:
    """An ensemble of 2 MLPs built by `filter_vmap` and applied with the default
    `if_array(0)`, which maps the shared input of 2 features too: each member gets a
    scalar. The input passed whole runs, and is said as what it changes, in Equinox's
    terms: nothing in the call tells it from a per-member value."""
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    models = eqx.filter_vmap(lambda k: eqx.nn.MLP(2, 2, 3, 1, key=k))(keys)
    x = jnp.array([0.5, -1.0])

    def evaluate(model: Any, x: jax.Array) -> jax.Array:
        return model(x)  # type: ignore[no-any-return]

    with pytest.raises(Exception) as info:
        axeqx.filter_vmap(evaluate)(models, x)
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    said = str(info.value) + "".join(getattr(info.value, "__notes__", ()))
    assert "Runs, but it passes x whole to every example" in said
    assert "in_axes=(eqx.if_array(0), None) would leave x unmapped" in said  # in Equinox's terms
    assert "Linear(weight=0" not in said
    assert eqx.filter_vmap(evaluate, in_axes=(eqx.if_array(0), None))(models, x).shape == (2, 2)


class _Counter(eqx.Module):
    index: Any

    def __init__(self) -> None:
        self.index = eqx.nn.StateIndex(jnp.array(0.0))

    def __call__(self, x: jax.Array, state: Any) -> tuple[jax.Array, Any]:
        calls = state.get(self.index)
        return x + calls, state.set(self.index, calls + 1)


def test_a_state_only_part_of_which_is_per_member_is_never_left_whole_by_the_fix() -> None:
    """Equinox's stateful docs: a State holding a vmapped counter's count per member
    beside a plain counter's scalar, passed whole to the vmapped counter, whose default
    `if_array(0)` maps the scalar too. Left whole, each member would get every member's
    count: said with what it changes, never the fix (the docs pass `state.substate`)."""

    class Model(eqx.Module):
        counter: _Counter
        members: _Counter

        def __init__(self) -> None:
            self.counter = _Counter()
            self.members = eqx.filter_vmap(_Counter, axis_size=2)()

    model, state = eqx.nn.make_with_state(Model)()
    with pytest.raises(Exception) as info:
        axeqx.filter_vmap(model.members)(jnp.ones(2), state)
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    assert "it leaves state unmapped whole, where state[<flat index 1>] (2,) has the batch size 2" in str(info.value)
    substate = state.substate(model.members)
    assert eqx.filter_vmap(model.members)(jnp.ones(2), substate)[0].shape == (2,)


class _Offset(eqx.Module):
    index: eqx.nn.StateIndex

    def __init__(self) -> None:
        self.index = eqx.nn.StateIndex(jnp.zeros(3))

    def __call__(self, x: jax.Array, state: eqx.nn.State) -> tuple[jax.Array, eqx.nn.State]:
        return x + state.get(self.index), state


def test_a_state_passed_whole_runs_as_equinox_runs_it() -> None:
    """A stateful layer's `State` given None: Equinox's own vmap, routed through
    axischeck's, has an in_axes holding the State, whose repr fails; nothing may print
    it on a call that raises nothing."""
    layer, x = _Offset(), jnp.ones((4, 3))
    want, _ = eqx.filter_vmap(layer, in_axes=(0, None), out_axes=(0, None))(x, eqx.nn.State(layer))
    got, _ = axeqx.filter_vmap(layer, in_axes=(0, None), out_axes=(0, None))(x, eqx.nn.State(layer))
    assert jnp.array_equal(got, want)


def test_a_dict_in_axes_naming_a_renamed_parameter_gets_the_key_renamed() -> None:
    """Equinox reads a dict in_axes by the function's parameter names: a key left from
    before a rename (`model` for `member`) matches nothing. Said with the parameters,
    the key renamed as the fix (the call then checks), Equinox's exception type kept."""

    def evaluate(member: Any, x: jax.Array) -> jax.Array:
        return member(x)  # type: ignore[no-any-return]

    ensemble = eqx.filter_vmap(lambda k: eqx.nn.Linear(2, 1, key=k))(jax.random.split(KEY, 3))
    x = jnp.ones(2)
    with pytest.raises(ax.SpecError) as info:
        axeqx.filter_vmap(evaluate, in_axes={"model": eqx.if_array(0), "x": None})(ensemble, x)
    err = info.value
    assert isinstance(err, ValueError) and "its parameters: member, x" in str(err)
    assert err.fix == "in_axes={'member': eqx.if_array(0), 'x': None} (the key 'model' renamed 'member')"
    fixed = eqx.filter_vmap(evaluate, in_axes={"member": eqx.if_array(0), "x": None})
    assert fixed(ensemble, x).shape == (3, 1)


def test_a_dict_in_axes_naming_a_parameter_the_call_leaves_at_its_default_is_said_so() -> None:
    """Equinox reads a dict in_axes for the arguments passed: a key for a parameter the
    call leaves at its default is refused. Nothing was renamed, so no key is renamed."""

    def scaled(x: jax.Array, y: jax.Array, scale: float = 1.0) -> jax.Array:
        return x * y * scale

    x = jnp.ones((3, 4))
    with pytest.raises(ax.SpecError) as info:
        axeqx.filter_vmap(scaled, in_axes={"x": 0, "scale": None})(x, x)
    assert isinstance(info.value, ValueError) and info.value.fix is None
    assert "'scale', a parameter of scaled this call does not pass" in str(info.value)


def test_a_state_made_one_for_all_members_is_never_passed_whole_as_the_fix() -> None:
    """equinox#466's stateful ensembles: the constructor's out_axes None made one running
    mean for 4 members, and the forward pass maps it with them. Passing it whole runs, but
    the map returns it stacked, one per member: the next call fails. Said as that, never
    the fix (the constructor's out_axes is the mistake)."""

    class Running(eqx.Module):
        linear: eqx.nn.Linear
        mean: eqx.nn.StateIndex

        def __init__(self, key: jax.Array) -> None:
            self.linear = eqx.nn.Linear(2, 3, key=key)
            self.mean = eqx.nn.StateIndex(jnp.zeros(3))

        def __call__(self, x: jax.Array, state: eqx.nn.State) -> tuple[jax.Array, eqx.nn.State]:
            mean = 0.9 * state.get(self.mean) + 0.1 * self.linear(x)
            return mean, state.set(self.mean, mean)

    def make(key: jax.Array) -> tuple[Running, eqx.nn.State]:
        return eqx.nn.make_with_state(Running)(key)  # type: ignore[no-any-return]

    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    members, state = eqx.filter_vmap(make, out_axes=(eqx.if_array(0), None))(keys)
    forward = axeqx.filter_vmap(lambda m, s, x: m(x, s), in_axes=(eqx.if_array(0), 0, None))
    with pytest.raises(ax.AxisCheckError) as info:
        forward(members, state, jnp.ones(2))
    assert not info.value.suggestions
    assert "it passes s, a state threaded from call to call, whole" in str(info.value)


def test_a_fixs_options_are_the_in_axes_its_text_writes() -> None:
    """equinox#1046's stacked samples mapped beside the model: the fix reads
    `in_axes=(None, eqx.if_array(0))`, and its options are those same objects (not the
    engine's per-leaf tree), so applying them computes the fixed program."""

    class Sample(eqx.Module):
        value: jax.Array
        name: str

    def loss(model: eqx.nn.Linear, sample: Sample) -> jax.Array:
        return jnp.sum(model(sample.value) ** 2)

    model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))
    xs = Sample(jnp.ones((5, 3)), "train")
    with pytest.raises(ax.AxisCheckError) as info:
        axeqx.filter_vmap(loss)(model, xs)
    (fix,) = info.value.suggestions
    assert "in_axes=(None, eqx.if_array(0))" in fix.text
    (none, mapped) = fix.as_kwargs()["in_axes"]
    assert none is None and isinstance(mapped, eqx.if_array) and mapped.axis == 0
    np.testing.assert_array_equal(
        eqx.filter_vmap(loss, **fix.as_kwargs())(model, xs),
        eqx.filter_vmap(loss, in_axes=(None, eqx.if_array(0)))(model, xs),
    )
