"""`axischeck.nnx`: Flax NNX's vmap / pmap, checked, against Flax's own."""

from __future__ import annotations

import doctest
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

nnx = pytest.importorskip("flax.nnx", reason="Flax is not installed (the `flax` extra)")

import axischeck as ax  # noqa: E402
import axischeck.nnx as axnnx  # noqa: E402
from jax_oracle import outcome, same_outcome  # noqa: E402


def apply(model: Any, x: jax.Array) -> jax.Array:
    return model(x)  # type: ignore[no-any-return]


def _ensemble(members: int, width: int, out: int) -> Any:
    @nnx.split_rngs(splits=members)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def make(rngs: Any) -> Any:
        return nnx.Linear(width, out, rngs=rngs)

    return make(nnx.Rngs(0))


PARAMS_ONLY = nnx.StateAxes({nnx.Param: 0, ...: None})


@given(
    width=st.integers(1, 4),
    out=st.integers(1, 3),
    feature=st.integers(1, 4),
    batch=st.integers(1, 4),
    members=st.integers(1, 4),
    in_axes=st.sampled_from([(None, 0), (None, 1), (PARAMS_ONLY, None), (PARAMS_ONLY, 0), (0, 0), 0]),
    out_axes=st.sampled_from([0, 1, -1]),
    x_batch_axis=st.integers(0, 1),
    ensemble=st.booleans(),
)
def test_vmap_matches_flax(
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
    """Same values, or the same exception type, as `flax.nnx.vmap` on drawn models, axes
    and shapes; a successful call's shape is what `predict` said."""
    model = _ensemble(members, width, out) if ensemble else nnx.Linear(width, out, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (batch, feature) if x_batch_axis == 0 else (feature, batch))
    theirs = outcome(lambda: nnx.vmap(apply, in_axes=in_axes, out_axes=out_axes)(model, x))
    wrapped = axnnx.vmap(apply, in_axes=in_axes, out_axes=out_axes)
    ours = outcome(lambda: wrapped(model, x))
    same_outcome(ours, theirs)
    prediction = outcome(lambda: wrapped.predict(model, x))
    if theirs[0] == "ok":
        assert prediction[0] == "ok", prediction
        assert prediction[1].shapes == theirs[1].shape
    else:
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


def test_state_axes_mistake_is_named_in_the_users_terms() -> None:
    ensemble = _ensemble(4, 3, 2)
    f = axnnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))
    with pytest.raises(ax.AxisCheckError) as info:
        f(ensemble, jnp.ones((5, 3)))
    message = str(info.value)
    assert message.startswith("nnx.vmap(apply, in_axes=(StateAxes({Param: 0, ...: None}), 0)")
    assert "model['kernel']" in message and "size 5 at axis 0 of x" in message
    assert "Fix: in_axes=(StateAxes({Param: 0, ...: None}), None)" in message
    assert axnnx.vmap(apply, in_axes=(PARAMS_ONLY, None))(ensemble, jnp.ones(3)).shape == (4, 2)


def test_flax_4589_split_rngs_gives_distinct_members() -> None:
    """Flax #4589: members made under split_rngs differ (so do their dropout masks)."""

    class Block(nnx.Module):  # type: ignore[misc]
        def __init__(self, rngs: Any) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.dropout(self.linear(x))  # type: ignore[no-any-return]

    @nnx.split_rngs(splits=3)
    @axnnx.vmap(in_axes=(0,), out_axes=0)
    def make(rngs: Any) -> Any:
        return Block(rngs)

    blocks = make(nnx.Rngs(0, dropout=1))
    kernels = blocks.linear.kernel[...]
    assert kernels.shape == (3, 3, 3)
    assert not np.array_equal(kernels[0], kernels[1])


def test_decorator_forms_and_pmap() -> None:
    @axnnx.vmap
    def double(x: jax.Array) -> jax.Array:
        return x * 2

    @axnnx.vmap(in_axes=1)
    def double1(x: jax.Array) -> jax.Array:
        return x * 2

    assert double(jnp.ones((3, 2))).shape == (3, 2)
    assert double1(jnp.ones((3, 2))).shape == (2, 3)
    n = jax.local_device_count()
    x = jnp.arange(n * 2.0).reshape(n, 2)
    ours = axnnx.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    np.testing.assert_array_equal(ours(x), nnx.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(x))
    with pytest.raises(ValueError, match=r"nnx\.pmap"):
        ours(jnp.ones((n + 1, 2)))


def test_patch_routes_flax_and_unpatch_restores() -> None:
    original = nnx.vmap
    with ax.patch():
        assert nnx.vmap is axnnx.vmap and nnx.pmap is axnnx.pmap
        with pytest.raises(ax.AxisCheckError, match=r"m\['kernel'\]"):
            nnx.vmap(lambda m, x: m(x), in_axes=(None, 0))(nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((5, 4)))
    assert nnx.vmap is original


@pytest.mark.parametrize("name", axnnx.__all__)
def test_docstring_examples(name: str) -> None:
    doc = re.sub(r"^[ \t]*```.*$", "", getattr(axnnx, name).__doc__ or "", flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(doc, {"ax": ax, "jax": jax, "jnp": jnp}, name, None, 0)
    assert test.examples, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_trace_counts_and_state_updates_match_flax() -> None:
    counts = {"ours": 0, "theirs": 0}

    def make(which: str) -> Any:
        def f(m: Any, x: jax.Array) -> jax.Array:
            counts[which] += 1
            return m(x)  # type: ignore[no-any-return]

        return f

    model, x = nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((5, 3))
    ours = nnx.jit(axnnx.vmap(make("ours"), in_axes=(None, 0)))
    theirs = nnx.jit(nnx.vmap(make("theirs"), in_axes=(None, 0)))
    for _ in range(3):
        np.testing.assert_array_equal(ours(model, x), theirs(model, x))
    assert counts["ours"] == counts["theirs"]

    class Counter(nnx.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            self.n = nnx.BatchStat(jnp.zeros(()))

        def __call__(self, x: jax.Array) -> jax.Array:
            self.n[...] += 1
            return x

    a, b = Counter(), Counter()
    axnnx.vmap(lambda c, x: c(x), in_axes=(None, 0))(a, x)
    nnx.vmap(lambda c, x: c(x), in_axes=(None, 0))(b, x)
    assert a.n[...] == b.n[...] == 1


@pytest.mark.slow
def test_flax_imported_while_patched_is_routed() -> None:
    import subprocess
    import sys

    code = (
        "import jax, axischeck as ax; ax.patch()\n"
        "from flax import nnx\n"
        "import axischeck.nnx as axnnx\n"
        "print(nnx.vmap is axnnx.vmap, nnx.pmap is axnnx.pmap)\n"
        "ax.unpatch(); print(nnx.vmap is axnnx.vmap)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.split() == ["True", "True", "False"]


def test_in_axes_that_do_not_fit_the_arguments_fail_as_in_flax() -> None:
    """In the spirit of Flax #4355 (a docs example failing deep inside nnx.vmap): in_axes of
    the wrong length fail as Flax fails; a rank mistake is named by the argument."""
    model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
    for args in [(model, jnp.ones((5, 2)), jnp.ones(5)), (jnp.ones((5, 2)),)]:
        same_outcome(
            outcome(lambda args=args: axnnx.vmap(lambda *a: a[0], in_axes=(None, 0))(*args)),
            outcome(lambda args=args: nnx.vmap(lambda *a: a[0], in_axes=(None, 0))(*args)),
        )
    with pytest.raises(ValueError, match=r"x has shape \(\) of rank 0"):
        axnnx.vmap(apply, in_axes=(None, 0))(model, jnp.ones(()))


def test_predict_of_a_call_flax_runs_unchecked_says_so_as_an_axischeck_error() -> None:
    """A call Flax refuses whatever the shapes (a keyword-only parameter, which graph-mode
    nnx.vmap cannot bind to a position) is passed to Flax unchecked; its `predict` is a
    clear `SpecError`, not an internal exception."""
    wrapped = axnnx.vmap(_keyword_only, in_axes=(None, 0))
    with pytest.raises(ax.SpecError, match="does not model this call"):
        wrapped.predict(MODEL, jnp.ones((4, 3)))


def test_a_returned_module_is_predicted_as_its_state() -> None:
    model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    wrapped = axnnx.vmap(lambda m, x: m, in_axes=(None, 0), out_axes=None)
    assert wrapped.predict(model, jnp.ones((4, 3))).shapes == {"bias": (2,), "kernel": (3, 2)}


def _scaled(m: Any, x: jax.Array, scale: float = 2.0) -> jax.Array:
    return m(x) * scale  # type: ignore[no-any-return]


def _added(m: Any, x: jax.Array, y: jax.Array) -> jax.Array:
    return m(x) + y  # type: ignore[no-any-return]


def _keyword_only(m: Any, x: jax.Array, *, bias: Any = None) -> jax.Array:
    return m(x)  # type: ignore[no-any-return]


MODEL = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
KEYWORD_CALLS: list[Any] = [
    (apply, {"in_axes": (None, 0)}, (MODEL,), {"x": jnp.ones((5, 3))}),
    (apply, {"in_axes": (None, 0)}, (), {"model": MODEL, "x": jnp.ones((5, 3))}),
    (apply, {"in_axes": (None, 0)}, (MODEL,), {"x": jnp.ones((5, 4))}),
    (apply, {"in_axes": (None, 1)}, (MODEL,), {"x": jnp.ones((3, 6))}),
    (_added, {"in_axes": (None, 0, 0)}, (MODEL, jnp.ones((5, 3))), {"y": jnp.ones((4, 2))}),
    (_added, {"in_axes": (None, 0, None)}, (MODEL,), {"x": jnp.ones((5, 3)), "y": jnp.ones(2)}),
    (_scaled, {"in_axes": (None, 0, None)}, (MODEL, jnp.ones((5, 3))), {}),
    (_scaled, {"in_axes": (None, 0, 0)}, (MODEL, jnp.ones((5, 3))), {"scale": jnp.ones((5, 1))}),
    (_scaled, {"in_axes": 0}, (MODEL, jnp.ones((5, 3))), {}),
    (_keyword_only, {"in_axes": (None, 0)}, (MODEL, jnp.ones((5, 3))), {}),
    (lambda x, y: x + y, {"in_axes": (None,), "graph_updates": False}, (jnp.ones(3),), {"y": jnp.ones((5, 3))}),
    (lambda x, y: x + y, {"in_axes": (None,), "graph_updates": False}, (jnp.ones(3),), {"y": jnp.ones((5, 4))}),
    (lambda x, y: x + y, {"in_axes": (0,), "graph": False}, (jnp.ones((5, 3)),), {"y": jnp.ones((4, 3))}),
]


@pytest.mark.parametrize("case", range(len(KEYWORD_CALLS)))
def test_keyword_arguments_are_checked_as_flax_treats_them(case: int) -> None:
    """Graph-mode nnx.vmap binds keyword arguments and defaults to positions (Flax's
    `resolve_kwargs`); the tree mode maps them at axis 0 as jax.vmap does. Same outcome as
    Flax, a mistake is an `AxisCheckError` naming the parameter, and `predict` agrees."""
    fun, options, args, kwargs = KEYWORD_CALLS[case]
    theirs = outcome(lambda: nnx.vmap(fun, **options)(*args, **kwargs))
    wrapped = axnnx.vmap(fun, **options)
    ours = outcome(lambda: wrapped(*args, **kwargs))
    same_outcome(ours, theirs)
    prediction = outcome(lambda: wrapped.predict(*args, **kwargs))
    if theirs[0] == "ok":
        assert prediction[0] == "ok" and prediction[1].shapes == theirs[1].shape, prediction
    elif fun is not _keyword_only:  # Flax refuses a keyword-only parameter whatever the shapes
        assert isinstance(ours[1], ax.AxisCheckError), ours
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


def test_a_keyword_argument_mistake_names_the_parameter() -> None:
    with pytest.raises(ax.AxisCheckError, match=r"x \(size 4\)") as info:
        axnnx.vmap(apply, in_axes=(None, 0))(MODEL, x=jnp.ones((5, 4)))
    assert isinstance(info.value, TypeError)  # Flax's own type for this mistake


def test_graph_mode_pmap_refuses_keyword_arguments_as_flax_does() -> None:
    n = jax.local_device_count()
    args, kwargs = (jnp.ones((n, 3)),), {"y": jnp.ones((n, 3))}
    same_outcome(
        outcome(lambda: axnnx.pmap(lambda x, y: x + y, in_axes=(0,))(*args, **kwargs)),
        outcome(lambda: nnx.pmap(lambda x, y: x + y, in_axes=(0,))(*args, **kwargs)),
    )
    with pytest.raises(ax.SpecError, match="does not model"):
        axnnx.pmap(lambda x, y: x + y, in_axes=(0,)).predict(*args, **kwargs)


def test_a_default_left_out_of_in_axes_is_explained_with_a_checked_fix() -> None:
    """Flax passes `scale`'s default as a third argument, so in_axes=(None, 0) fails with a
    pytree structure error; axischeck says why, and its fix runs as Flax's does."""
    x = jnp.ones((5, 3))
    theirs = outcome(lambda: nnx.vmap(_scaled, in_axes=(None, 0))(MODEL, x))
    with pytest.raises(ax.SpecError) as info:
        axnnx.vmap(_scaled, in_axes=(None, 0))(MODEL, x)
    same_outcome(("err", info.value), theirs)
    assert "the default scale=2.0 is an argument too" in str(info.value)
    assert info.value.fix is not None and info.value.fix.startswith("in_axes=(None, 0, None)")
    with pytest.raises(ax.SpecError, match="scale=2.0"):
        axnnx.vmap(_scaled, in_axes=(None, 0)).predict(MODEL, x)
    np.testing.assert_array_equal(
        axnnx.vmap(_scaled, in_axes=(None, 0, None))(MODEL, x), nnx.vmap(_scaled, in_axes=(None, 0, None))(MODEL, x)
    )


class _Pair(nnx.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        self.a = nnx.Param(jnp.arange(4.0))
        self.b = nnx.BatchStat(jnp.arange(4.0))


def _module_shapes(out: Any) -> Any:
    """A module as the shapes of its state (as `predict` shows it), arrays as their shapes."""
    return jax.tree.map(
        lambda n: (
            jax.tree.map(lambda a: a.shape, nnx.to_pure_dict(nnx.state(n))) if nnx.graph.is_graph_node(n) else n.shape
        ),
        out,
        is_leaf=nnx.graph.is_graph_node,
    )


PARAM_MAPPED = nnx.StateAxes({nnx.Param: 0, nnx.BatchStat: None})
STAT_MAPPED = nnx.StateAxes({nnx.Param: None, nnx.BatchStat: 0})


@pytest.mark.parametrize("in_state", [PARAM_MAPPED, STAT_MAPPED])
@pytest.mark.parametrize(
    "fun, out_axes",
    [
        (lambda p: p, "same"),
        (lambda p: (p, p.a * p.b), ("same", 0)),
        (lambda p: p, 0),
        (lambda p: p, nnx.StateAxes({nnx.Param: 0, ...: 1})),
        (lambda p: _Pair(), nnx.StateAxes({nnx.Param: None, ...: None})),
        (lambda p: p.a * p.b, 1),
    ],
)
def test_modules_and_state_axes_among_the_outputs_match_flax(in_state: Any, fun: Any, out_axes: Any) -> None:
    """out_axes with `StateAxes`, and modules among the outputs, are modelled: the call is
    checked, its outcome is Flax's, and `predict` gives the shapes of the returned state."""
    out_axes = jax.tree.map(lambda a: in_state if a == "same" else a, out_axes)
    theirs = outcome(lambda: nnx.vmap(fun, in_axes=(in_state,), out_axes=out_axes)(_Pair()))
    wrapped = axnnx.vmap(fun, in_axes=(in_state,), out_axes=out_axes)
    ours = outcome(lambda: wrapped(_Pair()))
    assert ours[0] == theirs[0], (ours, theirs)
    prediction = outcome(lambda: wrapped.predict(_Pair()))
    if theirs[0] == "err":
        assert isinstance(ours[1], ax.AxisCheckError) and isinstance(ours[1], type(theirs[1])), ours
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction
        return
    assert _module_shapes(ours[1]) == _module_shapes(theirs[1])

    def values(out: Any) -> Any:
        return jax.tree.map(
            lambda n: nnx.to_pure_dict(nnx.state(n)) if nnx.graph.is_graph_node(n) else n,
            out,
            is_leaf=nnx.graph.is_graph_node,
        )

    jax.tree.map(np.testing.assert_array_equal, values(ours[1]), values(theirs[1]))
    predicted = jax.tree.map(tuple, prediction[1].shapes, is_leaf=lambda s: isinstance(s, ax.Shape))
    merged = jax.tree.map(
        lambda s: (
            {k: v for part in s for k, v in part.items()}
            if isinstance(s, tuple) and all(isinstance(p, dict) for p in s)
            else s
        ),
        predicted,
        is_leaf=lambda s: isinstance(s, tuple) and all(isinstance(p, dict) for p in s),
    )
    assert merged == _module_shapes(theirs[1])


def test_a_module_returned_with_other_axes_is_explained() -> None:
    """Flax refuses out_axes that give a returned input variable another axis ("Inconsistent
    aliasing detected"): axischeck names the variable and both axes."""
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(lambda p: p, in_axes=(PARAM_MAPPED,), out_axes=0)(_Pair())
    assert isinstance(info.value, ValueError)
    assert "p['b'] is returned by the function as it was passed in" in str(info.value)
    assert "in_axes gives it None, out_axes 0" in str(info.value)


def test_an_int_out_axes_over_a_module_handed_back_gets_one_entry_per_output() -> None:
    """flax#4421's kind of call: predictions laid out at axis 1 by a single out_axes=1,
    beside the ensemble returned as it came in at 0. The int kept for the predictions and
    the module's own axis for the module is the fix, checked by the call it makes."""

    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(rngs: nnx.Rngs) -> nnx.Linear:
        return nnx.Linear(4, 2, rngs=rngs)

    def predict_and_return(member: nnx.Linear, x: jax.Array) -> tuple[jax.Array, nnx.Linear]:
        return member(x), member

    members, x = make(nnx.Rngs(0)), jnp.ones((5, 4))
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(predict_and_return, in_axes=(0, None), out_axes=1)(members, x)
    assert info.value.fix == "out_axes=(1, 0)"
    preds, back = axnnx.vmap(predict_and_return, in_axes=(0, None), out_axes=(1, 0))(members, x)
    assert preds.shape == (5, 3, 2) and back.kernel[...].shape == (3, 4, 2)


def test_a_string_filter_naming_a_variable_type_gets_the_type_as_the_fix() -> None:
    """Linen's collection name as a StateAxes filter: `'params'` is a tag filter in NNX (it
    matches RNG streams by name), so it maps none of the ensemble's parameters, and every
    entry is None. The type Flax registers under that name, `nnx.Param`, is the fix."""

    @nnx.split_rngs(splits=4)
    @nnx.vmap(in_axes=(0,))
    def make(rngs: nnx.Rngs) -> nnx.Linear:
        return nnx.Linear(2, 3, rngs=rngs)

    members, x = make(nnx.Rngs(0)), jnp.ones(2)
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({"params": 0, ...: None}), None))(members, x)
    assert "m's StateAxes filter 'params' matches none of its variables" in str(info.value)
    assert info.value.fix == "in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), None)"
    out = nnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), None))(members, x)
    assert out.shape == (4, 3)


def test_flax_4355_the_nnx_vmap_docstring_examples() -> None:
    """Flax #4355 (https://github.com/google/flax/issues/4355): the examples of the
    `nnx.vmap` docstring (Flax 0.10.x) raised an IndexError from JAX's batching for a user.
    Rebuilt here: the three examples through axischeck give Flax's values (and the
    documented ones), and `predict` their shapes; the ensemble example with the model's
    axis given to x instead is explained by the module's state path."""
    model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
    forward = axnnx.vmap(apply, in_axes=(None, 0), out_axes=0)
    x = jnp.ones((5, 2))
    np.testing.assert_array_equal(forward(model, x), nnx.vmap(apply, in_axes=(None, 0), out_axes=0)(model, x))
    assert forward.predict(model, x).shapes == (5, 3)

    class LinearEnsemble(nnx.Module):  # type: ignore[misc]
        def __init__(self, num: int, rngs: Any) -> None:
            self.w = nnx.Param(jax.random.uniform(rngs(), (num, 2, 3)))

    def ensemble_forward(model: Any, x: jax.Array) -> jax.Array:
        return jnp.dot(x, model.w[...])

    ensemble = LinearEnsemble(5, rngs=nnx.Rngs(0))
    ours = axnnx.vmap(ensemble_forward, in_axes=(0, None), out_axes=0)
    theirs = nnx.vmap(ensemble_forward, in_axes=(0, None), out_axes=0)
    np.testing.assert_array_equal(ours(ensemble, jnp.ones(2)), theirs(ensemble, jnp.ones(2)))
    assert ours.predict(ensemble, jnp.ones(2)).shapes == (5, 3)
    with pytest.raises(ax.AxisCheckError, match=r"model\['w'\]"):
        axnnx.vmap(ensemble_forward, in_axes=(0, 0))(ensemble, jnp.ones(2))

    mul = axnnx.vmap(lambda foo: foo.a * foo.b, in_axes=(PARAM_MAPPED,), out_axes=0)
    expected = np.arange(4.0)[:, None] * np.arange(4.0)[None, :]
    np.testing.assert_array_equal(mul(_Pair()), expected)
    np.testing.assert_array_equal(
        nnx.vmap(lambda foo: foo.a * foo.b, in_axes=(PARAM_MAPPED,), out_axes=0)(_Pair()), expected
    )
    assert mul.predict(_Pair()).shapes == (4, 4)


def test_flax_5589_axis_metadata_under_vmap() -> None:
    """Flax #5589 (https://github.com/google/flax/issues/5589): under Linen's `nn.vmap`, a
    bridged NNX variable's partition names do not gain the vmapped axis (`NNXMeta.add_axis`
    returns itself), while a Linen variable's do. axischeck does not wrap Linen's vmap: this
    records Flax's behaviour (see docs/limitations.md). Through `axischeck.nnx.vmap`, NNX's
    own `transform_metadata` adds the axis exactly as `nnx.vmap` does."""
    nn = pytest.importorskip("flax.linen")
    from flax.nnx import bridge

    names = ("in", "out")

    class Bridged(nn.Module):  # type: ignore[misc]
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            init = nnx.with_partitioning(nnx.initializers.lecun_normal(), names)
            return bridge.to_linen(nnx.Linear, 3, 4, kernel_init=init)(x)  # type: ignore[no-any-return]

    class Dense(nn.Module):  # type: ignore[misc]
        @nn.compact
        def __call__(self, x: jax.Array) -> jax.Array:
            return nn.Dense(4, kernel_init=nn.with_partitioning(nn.initializers.lecun_normal(), names))(x)  # type: ignore[no-any-return]

    def specs(module: Any) -> Any:
        mapped = nn.vmap(
            module,
            variable_axes={"params": 0},
            split_rngs={"params": True},
            metadata_params={nn.PARTITION_NAME: "ens"},
        )
        variables = mapped().init(jax.random.key(0), jnp.ones((2, 3)))
        kernel = next(iter(variables["params"].values()))["kernel"]
        return nn.get_partition_spec(variables), nn.unbox(kernel).shape

    with nnx.use_eager_sharding(False):
        bridged_spec, bridged_shape = specs(Bridged)
        dense_spec, dense_shape = specs(Dense)
    assert bridged_shape == dense_shape == (2, 3, 4)
    assert tuple(next(iter(dense_spec["params"].values()))["kernel"]) == ("ens", *names)
    assert tuple(next(iter(bridged_spec["params"].values()))["kernel"]) == names  # the axis is dropped

    def make(which: Any) -> Any:
        @nnx.split_rngs(splits=2)
        @which(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: "ens"})
        def build(rngs: Any) -> Any:
            return nnx.Linear(
                3, 4, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), names), rngs=rngs
            )

        with nnx.use_eager_sharding(False):
            return build(nnx.Rngs(0))

    ours, theirs = make(axnnx.vmap), make(nnx.vmap)
    assert ours.kernel.get_metadata()["out_sharding"] == theirs.kernel.get_metadata()["out_sharding"]
    assert tuple(ours.kernel.get_metadata()["out_sharding"]) == ("ens", *names)
    np.testing.assert_array_equal(ours.kernel[...], theirs.kernel[...])


def test_a_vmap_of_a_vmap_maps_twice_as_flax_does() -> None:
    """Wrapping a wrapper takes its name, not its transform and options: the outer vmap
    maps axis 1, the inner axis 0, as `nnx.vmap(nnx.vmap(f, in_axes=0), in_axes=1)`."""

    def f(x: jax.Array) -> jax.Array:
        return x.sum()

    x = jnp.arange(24.0).reshape(2, 3, 4)
    ours = axnnx.vmap(axnnx.vmap(f, in_axes=0), in_axes=1)
    theirs = nnx.vmap(nnx.vmap(f, in_axes=0), in_axes=1)
    np.testing.assert_array_equal(ours(x), theirs(x))
    assert ours(x).shape == (3, 2)
    assert ours.predict(x).shapes == (3, 2)
    assert repr(ours).startswith("<axischeck nnx.vmap(f, in_axes=1")


@pytest.mark.parametrize("patched", [False, True])
def test_a_module_method_binds_self_as_flax_does(patched: bool) -> None:
    """`axischeck.nnx.vmap` as a method's decorator binds the instance, as Flax's (a
    function) is bound; so under `ax.patch()`, where `nnx.vmap` is axischeck's; the
    bound method predicts and explains with the instance passed first."""

    def make_model(vmap: Any) -> Any:
        class Model(nnx.Module):
            def __init__(self) -> None:
                self.w = nnx.Param(jnp.arange(6.0).reshape(3, 2))

            @vmap(in_axes=(None, 0))
            def apply(self, x: jax.Array) -> jax.Array:
                return x @ self.w

        return Model()

    x = jnp.arange(12.0).reshape(4, 3)
    want = make_model(nnx.vmap).apply(x)
    if patched:
        with ax.patch():
            model = make_model(nnx.vmap)
    else:
        model = make_model(axnnx.vmap)
    np.testing.assert_array_equal(model.apply(x), want)
    assert model.apply.predict(x).shapes == want.shape
    assert "(4, 2)" in model.apply.explain(x) or "4, 2" in model.apply.explain(x)


@pytest.mark.devices(8)
def test_pmap_static_broadcasted_argnums_are_passed_whole_as_flax_passes_them() -> None:
    """A static argument is given to every device as it is: neither mapped nor refused."""
    x = jnp.arange(24.0).reshape(8, 3)
    want = nnx.pmap(lambda v, n: v * n, static_broadcasted_argnums=(1,))(x, 3)
    f = axnnx.pmap(lambda v, n: v * n, static_broadcasted_argnums=(1,))
    np.testing.assert_array_equal(f(x, 3), want)
    assert f.predict(x, 3).shapes == want.shape


class _Normed(nnx.Module):
    def __init__(self, rngs: Any, *, frozen: bool = False) -> None:
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.bn = nnx.BatchNorm(4, use_running_average=frozen, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.bn(self.linear(x))  # type: ignore[no-any-return]


def _normed_ensemble(frozen: bool = False) -> Any:
    @nnx.split_rngs(splits=2)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(rngs: Any) -> Any:
        return _Normed(rngs, frozen=frozen)

    return make(nnx.Rngs(0))


def test_batch_statistics_left_unmapped_and_updated_are_explained_in_nnx_terms_with_a_checked_state_axes_fix() -> None:
    # The Flax NNX transforms guide's ensemble with BatchNorm, its statistics left out of
    # the StateAxes: Flax hands the updated statistics back at axis None, and raises on
    # the output side ("got axis spec None but output was batched").
    x = jnp.arange(2 * 5 * 3.0).reshape(2, 5, 3) / 10.0
    with jax.numpy_rank_promotion("allow"):  # as by default; this suite raises on it
        with pytest.raises(ValueError, match="got axis spec None but output was batched"):
            nnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))(_normed_ensemble(), x)
        checked = axnnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))
        with pytest.raises(ax.OutputError) as caught:
            checked(_normed_ensemble(), x)
    err = caught.value
    assert isinstance(err, ValueError)  # JAX's (Flax's) exception type, kept
    first = str(err).splitlines()[0]
    assert "model['bn']['mean'] and model['bn']['var'] (nnx.BatchStat, shape (2, 4)" in first
    assert "out_axes[0][0].states" not in first  # Flax's inner path is JAX's line, not ours
    assert err.fix == "in_axes=(nnx.StateAxes({nnx.Param: 0, nnx.BatchStat: 0, ...: None}), 0)"
    with jax.numpy_rank_promotion("allow"), pytest.raises(ax.OutputError, match="nnx.BatchStat"):
        checked.predict(_normed_ensemble(), x)
    # The fix computes what Flax computes with it, statistics updated per member.
    fixed_axes = nnx.StateAxes({nnx.Param: 0, nnx.BatchStat: 0, ...: None})
    ours, theirs = _normed_ensemble(), _normed_ensemble()
    got = axnnx.vmap(apply, in_axes=(fixed_axes, 0))(ours, x)
    want = nnx.vmap(apply, in_axes=(fixed_axes, 0))(theirs, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ours.bn.mean[...], theirs.bn.mean[...])
    assert not np.array_equal(ours.bn.mean[...][0], ours.bn.mean[...][1])


def test_batch_statistics_read_whole_by_every_member_are_explained_in_nnx_terms() -> None:
    # Evaluation mode reads the statistics: each member gets all of them (2, 4) and the
    # normalisation fails per example, in Flax as here; mapping them is the fix.
    x = jnp.ones((2, 5, 3))
    with pytest.raises(TypeError, match="cannot reshape"):
        nnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))(_normed_ensemble(frozen=True), x)
    with pytest.raises(ax.ArgumentError) as caught:
        axnnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))(_normed_ensemble(frozen=True), x)
    assert isinstance(caught.value, TypeError)
    assert "model['bn']['mean'] and model['bn']['var'] (nnx.BatchStat" in str(caught.value).splitlines()[0]
    assert caught.value.fix == "in_axes=(nnx.StateAxes({nnx.Param: 0, nnx.BatchStat: 0, ...: None}), 0)"


def test_batch_statistics_shared_and_only_read_are_no_mistake() -> None:
    # One model over a batch, its statistics read (not updated): None is right, as in Flax.
    model = _Normed(nnx.Rngs(0), frozen=True)
    x = jnp.ones((6, 3))
    got = axnnx.vmap(apply, in_axes=(None, 0))(model, x)
    want = nnx.vmap(apply, in_axes=(None, 0))(model, x)
    np.testing.assert_array_equal(got, want)
    assert axnnx.vmap(apply, in_axes=(None, 0)).predict(model, x).shapes == (6, 4)


def test_batch_statistics_of_one_model_updated_under_a_map_get_a_hint_not_a_fix() -> None:
    # One model in training mode under a map of its batch: every example updates the
    # statistics (Flax raises: "got axis spec None but output was batched"); nothing of
    # the mapped size to map them along, so no option fix.
    model = _Normed(nnx.Rngs(0))
    with pytest.raises(ValueError, match="got axis spec None"):
        nnx.vmap(apply, in_axes=(None, 0))(model, jnp.ones((6, 3)))
    with pytest.raises(ax.OutputError) as caught:
        axnnx.vmap(apply, in_axes=(None, 0))(model, jnp.ones((6, 3)))
    assert caught.value.fix is None and caught.value.hint is not None and "nnx.BatchStat" in str(caught.value)


def test_split_rngs_passed_whole_are_mapped_by_the_fix() -> None:
    """Flax's randomness guide: dropout `Rngs` forked into 5 keys, one per input, but
    given the in_axes entry None, so every example gets all 5 and Dropout's `fold_in`
    refuses them. Mapping the Rngs at axis 0 like the inputs is the checked fix."""

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(6, 4, rngs=rngs)
            self.drop = nnx.Dropout(0.5)

        def __call__(self, x: jax.Array, *, rngs: nnx.Rngs) -> jax.Array:
            return self.drop(self.linear(x), rngs=rngs, deterministic=False)  # type: ignore[no-any-return]

    def forward(model: Model, x: jax.Array, rngs: nnx.Rngs) -> jax.Array:
        return model(x, rngs=rngs)

    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(forward, in_axes=(None, 0, None))(Model(nnx.Rngs(0)), jnp.ones((5, 6)), nnx.Rngs(dropout=1).split(5))
    (fix,) = info.value.suggestions
    assert fix.as_kwargs() == {"in_axes": (None, 0, 0)} and fix.is_fix
    out = nnx.vmap(forward, **fix.as_kwargs())(Model(nnx.Rngs(0)), jnp.ones((5, 6)), nnx.Rngs(dropout=1).split(5))
    assert out.shape == (5, 4) and len({tuple(np.asarray(row != 0)) for row in out}) > 1


def test_a_misspelled_keyword_is_refused_as_flax_does_with_the_option_meant() -> None:
    """flax#5310: `nnx.vmap(in_axis=...)` is Flax's TypeError, with `in_axes` named
    (Python 3.13 adds its own "Did you mean" to Flax's message)."""
    with pytest.raises(TypeError) as flax_error:
        nnx.vmap(lambda x: x, in_axis=0)  # type: ignore[call-overload]
    with pytest.raises(TypeError) as ours:
        axnnx.vmap(lambda x: x, in_axis=0)
    assert str(flax_error.value).startswith(str(ours.value).splitlines()[0])
    assert isinstance(ours.value, ax.SpecError) and "did you mean in_axes?" in str(ours.value)


def test_a_modules_split_rng_stream_given_none_is_mapped_by_state_axes() -> None:
    """A module holding parameters and a noise stream of one key per example (seeded with
    `jax.random.split`), given the in_axes entry None: every example gets all the keys, and
    `fold_in` refuses them. The stream's key and count mapped together, the parameters
    shared: `StateAxes({nnx.RngState: 0, ...: None})`, checked."""

    class Noisy(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(2, 3, rngs=rngs)
            self.rngs = nnx.Rngs(noise=jax.random.split(jax.random.key(1), 6))

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.linear(x) + jax.random.normal(self.rngs.noise(), (3,))  # type: ignore[no-any-return]

    def apply(model: Noisy, x: jax.Array) -> jax.Array:
        return model(x)

    model, x = Noisy(nnx.Rngs(0)), jnp.ones((6, 2))
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(apply, in_axes=(None, 0))(model, x)
    text = str(info.value)
    assert "model['rngs']['noise']['count'] and model['rngs']['noise']['key'] (nnx.RngState" in text
    assert "Fix: in_axes=(nnx.StateAxes({nnx.RngState: 0, ...: None}), 0)" in text
    out = nnx.vmap(apply, in_axes=(nnx.StateAxes({nnx.RngState: 0, ...: None}), 0))(Noisy(nnx.Rngs(0)), x)
    assert out.shape == (6, 3) and len({tuple(np.asarray(row)) for row in out}) == 6


@pytest.mark.parametrize("transform", ["vmap", "pmap"])
def test_the_first_misspelled_keyword_as_written_is_named_as_flax_and_jax_name_it(transform: str) -> None:
    theirs, ours = (
        (getattr(nnx, transform), getattr(jax, transform)),
        (getattr(axnnx, transform), getattr(ax, transform)),
    )
    for library, checked in zip(theirs, ours, strict=True):
        with pytest.raises(TypeError) as expected:
            library(lambda x: x, out_axis=0, axis_nam="i")
        with pytest.raises(TypeError) as got:
            checked(lambda x: x, out_axis=0, axis_nam="i")
        assert str(expected.value).startswith(str(got.value).splitlines()[0]), (expected.value, got.value)


def test_an_ensemble_of_parameters_alone_given_none_keeps_its_state_axes_fix() -> None:
    """A stack of 6 `Linear` layers made by `nnx.vmap` (Params alone) given in_axes None:
    its Params mapped is still the fix (the skip for a node of one kind of variable is for
    RNG streams alone), by the plain entry 0, which maps every variable it has."""

    @nnx.vmap
    def make(key: jax.Array) -> Any:
        return nnx.Linear(2, 3, rngs=nnx.Rngs(key))

    ensemble = make(jax.random.split(jax.random.key(0), 6))
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(lambda m, x: m(x), in_axes=(None, 0))(ensemble, jnp.ones((6, 2)))
    assert "Fix: in_axes=(0, 0)" in str(info.value)
    assert nnx.vmap(lambda m, x: m(x), in_axes=(0, 0))(ensemble, jnp.ones((6, 2))).shape == (6, 3)


class _Weights(nnx.Module):
    def __init__(self, seed: jax.Array) -> None:
        self.kernel = nnx.Param(jax.random.uniform(jax.random.key(seed), (2, 3)))
        self.bias = nnx.Param(jnp.zeros((3,)))


def _dot(weights: _Weights, x: jax.Array) -> jax.Array:
    assert weights.kernel.ndim == 2, "Batch dimensions not allowed"
    return x @ weights.kernel + weights.bias


def test_stacked_weights_given_none_fail_the_users_assert_and_are_mapped_by_the_fix() -> None:
    """Flax's "why NNX" guide: weights made by an nnx.vmap over 10 seeds, then passed
    whole (in_axes None) beside 10 inputs; the function's own assert refuses the stacked
    kernel. The exception stays an AssertionError, said in NNX's terms, and the module,
    all of whose variables are parameters, is mapped by the plain entry 0."""
    weights = nnx.vmap(_Weights, in_axes=0, out_axes=0)(jnp.arange(10))
    x = jax.random.normal(jax.random.key(1), (10, 2))
    with pytest.raises(AssertionError, match="Batch dimensions not allowed"):
        nnx.vmap(_dot, in_axes=(None, 0))(weights, x)
    with pytest.raises(ax.ArgumentError) as caught:
        axnnx.vmap(_dot, in_axes=(None, 0))(weights, x)
    err = caught.value
    assert isinstance(err, AssertionError) and err.fix == "in_axes=(0, 0)"
    assert "weights['bias'] and weights['kernel'] (nnx.Param, shapes (10, 3), (10, 2, 3)" in str(err)
    fixed = nnx.vmap(_dot, in_axes=(0, 0))(weights, x)
    expected = jnp.einsum("bi,bij->bj", x, weights.kernel[...]) + weights.bias[...]
    np.testing.assert_allclose(fixed, expected, rtol=1e-6)


def test_an_assert_of_the_users_that_no_option_change_fixes_stays_theirs() -> None:
    """A function's own `assert` on a dtype fails whatever the axes: the AssertionError is
    re-raised as Flax raised it, not wrapped in an explanation with no change to make."""

    def needs_ints(weights: _Weights, x: jax.Array) -> jax.Array:
        assert x.dtype == jnp.int32, "token ids must be int32"
        return x @ weights.kernel

    weights = _Weights(jnp.int32(0))
    with pytest.raises(AssertionError, match="token ids must be int32") as caught:
        axnnx.vmap(needs_ints, in_axes=(None, 0))(weights, jnp.ones((4, 2)))
    assert not isinstance(caught.value, ax.AxisCheckError)


def test_a_constructor_over_split_streams_given_out_axes_none_is_told_out_axes_0() -> None:
    """`@nnx.split_rngs(splits=3)` over a constructor mapped over its streams alone: the
    split is the map's size (Flax's ensemble pattern), so nothing asks for a size. The
    layers drawn from 3 keys differ, so out_axes None cannot hold them: out_axes 0 stacks
    them, one per key."""

    @nnx.split_rngs(splits=3)
    @axnnx.vmap(in_axes=(0,), out_axes=None)
    def make(rngs: Any) -> Any:
        return nnx.Linear(4, 4, rngs=rngs)

    with pytest.raises(ax.OutputError) as info:
        make(nnx.Rngs(0))
    assert "nothing else mapped" not in str(info.value)
    (fix,) = info.value.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"out_axes": 0}

    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=(0,), **fix.as_kwargs())
    def fixed(rngs: Any) -> Any:
        return nnx.Linear(4, 4, rngs=rngs)

    kernel = fixed(nnx.Rngs(0)).kernel[...]
    assert kernel.shape == (3, 4, 4) and not jnp.allclose(kernel[0], kernel[1])


def test_state_axes_whose_filters_miss_a_variable_name_it_with_the_rest_passed_whole() -> None:
    """flax#5307's StateAxes guide: a module with a call counter of its own Variable type,
    given `StateAxes({nnx.Param: 0})`. Flax fails the call ("No axis found for path") and
    `predict` read Flax's split ("Non-exhaustive filters") as it was; both now name the
    counter, with `...: None` as the fix where nothing else could be meant (a scalar has no
    axis to map), and only as a hint beside a variable with an axis of the batch size."""

    class Count(nnx.Variable[jax.Array]):
        pass

    class Weights(nnx.Module):
        def __init__(self, count: jax.Array) -> None:
            self.kernel = nnx.Param(jnp.arange(60.0).reshape(10, 2, 3))
            self.count = Count(count)

    def forward(weights: Weights, x: jax.Array) -> jax.Array:
        return x @ weights.kernel[...]

    x = jnp.ones((10, 2))
    f = axnnx.vmap(forward, in_axes=(nnx.StateAxes({nnx.Param: 0}), 0))
    with pytest.raises(ValueError, match="No axis found") as flax_error:
        nnx.vmap(forward, in_axes=(nnx.StateAxes({nnx.Param: 0}), 0))(Weights(jnp.array(0)), x)
    for run in (f, f.predict):
        with pytest.raises(type(flax_error.value)) as info:
            run(Weights(jnp.array(0)), x)
        assert isinstance(info.value, ax.AxisCheckError)
        assert "weights['count'] (Count, shape ())" in str(info.value)
        assert "Fix: in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), 0)" in str(info.value)
    fixed = nnx.vmap(forward, in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), 0))(Weights(jnp.array(0)), x)
    assert fixed.shape == (10, 3)

    with pytest.raises(ax.AxisCheckError) as info:  # one count per member, or one shared: the user's to say
        f(Weights(jnp.zeros(10)), x)
    assert "Fix:" not in str(info.value)
    assert "Hint: in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), 0) passes it whole" in str(info.value)


def test_a_batch_of_one_module_call_gets_the_axis_that_runs_in_the_users_terms() -> None:
    """Flax's NNX transforms guide maps a batch of 10 stored on axis 2 of x (1, 3, 10);
    written with in_axes (None, 0), each example of (3, 10) fails the layer. The fix maps
    axis 2, in the terms nnx.vmap takes (the module's None, not its state's tree), in the
    text and the suggestion alike."""

    class Linear(nnx.Module):
        def __init__(self) -> None:
            self.w = nnx.Param(jnp.arange(9.0).reshape(3, 3))

        def __call__(self, x: jax.Array) -> jax.Array:
            return x @ self.w[...]

    def forward(model: Linear, x: jax.Array) -> jax.Array:
        return model(x)

    x = jnp.linspace(-1.0, 1.0, 30).reshape(1, 3, 10)
    with pytest.raises(TypeError) as info:
        axnnx.vmap(forward, in_axes=(None, 0))(Linear(), x)
    assert isinstance(info.value, ax.AxisCheckError)
    (fix,) = info.value.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"in_axes": (None, 2)}
    assert fix.text.startswith("in_axes=(None, 2) would map x's axis 2 (size 10)"), fix.text
    assert nnx.vmap(forward, **fix.as_kwargs())(Linear(), x).shape == (10, 1, 3)


def test_an_int_entry_for_a_module_whose_statistics_lack_the_axis_maps_by_variable_type() -> None:
    """flax#4107: a module of 4 members stacked along axis 1 of its weight, beside a
    statistic of rank 1 shared by all, given the int entry 1, which maps every variable:
    the statistic has no axis 1. The StateAxes mapping the parameters at 1 and passing
    the rest whole is the one reading the shapes allow, checked; where a type holds both
    kinds of variable, no StateAxes by type tells them apart, and there is no fix."""

    class Scaled(nnx.Module):
        def __init__(self, scale: jax.Array) -> None:
            self.w = nnx.Param(jnp.arange(12.0).reshape(3, 4))
            self.scale = nnx.BatchStat(scale)

    class Shift(nnx.Module):
        def __init__(self) -> None:
            self.v = nnx.Param(jnp.arange(12.0).reshape(4, 3) / 10.0)

    def score(m1: Scaled, m2: Shift) -> jax.Array:
        return jnp.sum(m1.w[...] * m1.scale[...] * m2.v[...])

    f = axnnx.vmap(score, in_axes=(1, 0))
    for run in (f, f.predict):
        with pytest.raises(ValueError) as info:
            run(Scaled(jnp.array([1.0, 2.0, 3.0])), Shift())
        assert isinstance(info.value, ax.AxisCheckError)
        assert "m1['scale'] (BatchStat, shape (3,)) has no axis of the batch size 4" in str(info.value)
        assert "Fix: in_axes=(nnx.StateAxes({nnx.Param: 1, ...: None}), 0)" in str(info.value)
    fixed = nnx.vmap(score, in_axes=(nnx.StateAxes({nnx.Param: 1, ...: None}), 0))
    assert fixed(Scaled(jnp.array([1.0, 2.0, 3.0])), Shift()).shape == (4,)

    class Counted(Scaled):
        def __init__(self) -> None:
            super().__init__(jnp.array([1.0, 2.0, 3.0]))
            self.seen = nnx.Intermediate(jnp.zeros((4, 3)))  # the members' size 4, on another axis than 1

    with pytest.raises(ValueError) as info:  # one type whose axis of the batch size is elsewhere: no reading by type
        f(Counted(), Shift())
    assert "Fix:" not in str(info.value)


def test_streams_split_only_in_part_under_an_int_entry_map_the_split_ones_by_tag() -> None:
    """Flax's RNG guide: `nnx.split_rngs(splits=4, only='params')` over an `nnx.vmap` with
    in_axes 0 of an Rngs: the 'dropout' stream, left whole by `only`, is mapped too and has
    no axis. The split streams mapped by their tag and the rest passed whole is the reading
    the `only` states, checked, and written as Flax takes it (a StateAxes inside a tuple,
    for a function of one argument too)."""

    class Member(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(2, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def create(rngs: nnx.Rngs) -> Member:
        return Member(rngs)

    def made(vmap: Any, **options: Any) -> Any:
        return nnx.split_rngs(splits=4, only="params")(
            vmap(create, out_axes=nnx.StateAxes({nnx.Param: 0, ...: None}), **options)
        )

    with pytest.raises(ValueError) as info:
        made(axnnx.vmap, in_axes=0)(nnx.Rngs(params=0, dropout=1))
    assert isinstance(info.value, ax.AxisCheckError)
    assert "while the stream 'params' was split into 4" in str(info.value)
    assert "Fix: in_axes=(nnx.StateAxes({'params': 0, ...: None}),)" in str(info.value)
    members = made(nnx.vmap, in_axes=(nnx.StateAxes({"params": 0, ...: None}),))(nnx.Rngs(params=0, dropout=1))
    kernels = np.asarray(members.linear.kernel[...])
    assert kernels.shape == (4, 2, 3) and len({k.tobytes() for k in kernels}) == 4


def test_a_vmapped_init_with_self_left_unmapped_maps_the_module_it_builds() -> None:
    """Flax's migration guide stacks layers by decorating `__init__` with
    `nnx.split_rngs(splits=n)` and `nnx.vmap(in_axes=(0, 0))`. With `self` given None, the
    layers built from the split keys differ along the map and Flax refuses them on the way
    out ("got axis spec None but output was batched"): axischeck names the variables the
    function creates and maps the module, checked with its state handed back."""

    class LayerStack(nnx.Module):
        @nnx.split_rngs(splits=4)
        @axnnx.vmap(in_axes=(None, 0))
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)

    with pytest.raises(ValueError, match="got axis spec None") as info:
        LayerStack(nnx.Rngs(0))
    assert isinstance(info.value, ax.AxisCheckError)
    assert "__init__ creates self['linear']['kernel'] from what in_axes maps" in str(info.value)
    assert "along the map of size 4" in str(info.value) and "Fix: in_axes=(0, 0)" in str(info.value)

    class Fixed(nnx.Module):
        @nnx.split_rngs(splits=4)
        @nnx.vmap(in_axes=(0, 0))
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)

    kernels = np.asarray(Fixed(nnx.Rngs(0)).linear.kernel[...])
    assert kernels.shape == (4, 3, 3) and len({k.tobytes() for k in kernels}) == 4


def test_a_module_handed_back_under_a_tuple_out_axes_gets_its_in_axes_entry_there() -> None:
    """Flax's pmap data-parallel guide (flax#4105's example): the model, whose dropout stream
    `StateAxes({'dropout': 0, ...: None})` maps, is returned beside the loss with out_axes
    (None, 0): Flax refuses the returned streams' other axis ("Inconsistent aliasing"). The
    module's output entry given its in_axes entry as written is the fix, checked."""

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.linear = nnx.Linear(3, 2, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.linear(self.dropout(x))  # type: ignore[no-any-return]

    def step(model: Model, x: jax.Array) -> tuple[Model, jax.Array]:
        return model, jnp.mean(model(x) ** 2)

    state_axes = nnx.StateAxes({"dropout": 0, ...: None})
    x = jnp.linspace(-1.0, 1.0, 24).reshape(4, 2, 3)

    def made(vmap: Any, **options: Any) -> Any:
        return nnx.split_rngs(splits=4, only="dropout")(vmap(step, in_axes=(state_axes, 0), **options))

    with pytest.raises(ValueError, match="Inconsistent aliasing") as info:
        made(axnnx.vmap, out_axes=(None, 0))(Model(nnx.Rngs(params=0, dropout=1)), x)
    assert isinstance(info.value, ax.AxisCheckError)
    assert "Fix: out_axes=(nnx.StateAxes({'dropout': 0, ...: None}), 0)" in str(info.value)
    _, losses = made(nnx.vmap, out_axes=(state_axes, 0))(Model(nnx.Rngs(params=0, dropout=1)), x)
    assert losses.shape == (4,)


def test_a_variable_stored_in_a_shared_model_is_named_without_mapping_the_model() -> None:
    """A model of shared weights given None that stores an activation per example: the new
    variable comes back batched where Flax expects the model unmapped. Mapping the model
    would map its shared kernel too (each example one row of it): the remedy is a hint,
    and `predict` says what the call says."""

    class Net(nnx.Module):
        def __init__(self) -> None:
            self.lin = nnx.Linear(4, 4, rngs=nnx.Rngs(0))

        def __call__(self, x: jax.Array) -> jax.Array:
            h = self.lin(x)
            self.h = nnx.Intermediate(h)
            return h

    def fwd(m: Net, x: jax.Array) -> jax.Array:
        return m(x)

    x = jnp.arange(16.0).reshape(4, 4)
    f = axnnx.vmap(fwd, in_axes=(None, 0))
    for run in (f, f.predict):
        with pytest.raises(ValueError) as info:
            run(Net(), x)
        assert isinstance(info.value, ax.AxisCheckError)
        assert "fwd creates m['h'] from what in_axes maps" in str(info.value), str(info.value)
        assert "Fix:" not in str(info.value) and "Hint: create it before the map" in str(info.value)


def test_state_axes_that_leave_out_rng_streams_or_a_mappable_variable_get_no_fix() -> None:
    """`...: None` for the variables a StateAxes leaves out is the fix only where nothing
    else could be meant: an RNG stream passed whole draws the same on every member, and a
    counter with an axis of the members' size (read from the variables the filters map,
    where nothing else is mapped) may be one per member. A string filter Flax reads as a
    tag is said as that first, with its Variable type in its place."""

    class Noisy(nnx.Module):
        def __init__(self) -> None:
            self.kernel = nnx.Param(jnp.ones((10, 2, 3)))
            self.dropout = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=0))

    class Counted(nnx.Module):
        def __init__(self) -> None:
            self.kernel = nnx.Param(jnp.ones((10, 2, 3)))
            self.count = nnx.BatchStat(jnp.zeros(10))

    def total(w: Any) -> jax.Array:
        return jnp.sum(w.kernel[...])

    for module in (Noisy(), Counted()):
        with pytest.raises(ValueError) as info:
            axnnx.vmap(total, in_axes=(nnx.StateAxes({nnx.Param: 0}),))(module)
        assert isinstance(info.value, ax.AxisCheckError) and "gives no axis to" in str(info.value)
        assert "Fix:" not in str(info.value) and "Hint: in_axes=(nnx.StateAxes" in str(info.value)

    with pytest.raises(ValueError) as info:
        axnnx.vmap(total, in_axes=(nnx.StateAxes({"params": 0}),)).predict(Counted())
    assert "StateAxes filter 'params' matches none of its variables" in str(info.value)
