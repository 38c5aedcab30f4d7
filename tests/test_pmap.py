"""axischeck.pmap: the seed's multi-device examples and pmap's own rules (8 CPU devices)."""

from __future__ import annotations

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from jax import lax

import axischeck as ax
from conftest import cpu_devices


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def complex_parallel_computation(x: jax.Array) -> jax.Array:
    """Seed example 6: only works on exactly as many devices as x has elements per device."""
    local = x**2
    reduced = lax.psum_scatter(local, axis_name="devices")
    gathered = lax.all_gather(reduced, axis_name="devices")
    return jnp.mean(gathered, axis=0)


def test_the_suite_runs_on_the_cpu_devices_it_forces() -> None:
    """8, or the count the run's XLA_FLAGS asks for; the CPU is the default backend."""
    asked = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ["XLA_FLAGS"])
    assert asked is not None
    devices = cpu_devices(1)
    assert len(jax.devices("cpu")) == int(asked.group(1)) and jax.devices()[0] == devices[0]


@pytest.mark.devices(8)
def test_seed_collective_example_fails_before_anything_compiles() -> None:
    f = ax.pmap(complex_parallel_computation, axis_name="devices")
    x = jnp.arange(16 * 8.0).reshape(8, 16)
    with pytest.raises(ValueError, match="must match shard count 8"):
        jax.eval_shape(jax.pmap(complex_parallel_computation, axis_name="devices"), x)
    with pytest.raises(ax.CollectiveError) as info:
        f.predict(x)
    text = str(info.value)
    assert "size 16 must match shard count 8" in text and "tiled=True" in (info.value.hint or "")
    with pytest.raises(ax.CollectiveError):
        f(x)  # the checked call stops it too, before JAX compiles
    # On 16 devices it would work: per device (16,) -> psum_scatter () -> all_gather (16,) -> mean ().
    assert f.predict_with_devices(16, sds(16, 16)).shapes == (16,)


def test_seed_training_step_shapes() -> None:
    n = jax.device_count()

    def parallel_training_step(
        params: dict[str, jax.Array], batch: tuple[jax.Array, jax.Array]
    ) -> tuple[dict[str, jax.Array], jax.Array]:
        X, y = batch
        forward = lambda p, X: jnp.dot(X, p["W"])[:, 0] + p["b"]
        loss_fn = lambda p, X, y: -jnp.mean(jax.nn.log_sigmoid(y * forward(p, X)))
        grads = lax.pmean(jax.grad(loss_fn)(params, X, y), "devices")
        return {k: params[k] - 0.01 * grads[k] for k in params}, loss_fn(params, X, y)

    params = {"W": jnp.ones((n, 20, 1)), "b": jnp.zeros((n,))}
    batch = (jnp.ones((n, 32, 20)), jnp.ones((n, 32)))
    f = ax.pmap(parallel_training_step, axis_name="devices")
    want = jax.eval_shape(jax.pmap(parallel_training_step, axis_name="devices"), params, batch)
    got = f.predict(params, batch).shapes
    assert jax.tree_util.tree_map(lambda s: s.shape, want) == got
    out = f(params, batch)
    assert jax.tree_util.tree_map(lambda a: a.shape, out) == got


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("kwargs", "shape", "fragment"),
    [
        ({}, (9, 3), r"size 9 over devices, but 8 device\(s\)"),
        ({}, (0, 3), "size 0 over devices"),
        ({"in_axes": [0]}, (8, 3), "pmap does not read a top-level list as a tuple"),
        ({"axis_size": 4}, (8, 3), "axis_size=4"),
    ],
)
def test_what_jax_rejects_is_explained(kwargs: dict[str, object], shape: tuple[int, ...], fragment: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - JAX's own error types vary
        jax.eval_shape(jax.pmap(lambda v: v * 2, **kwargs), sds(*shape))  # type: ignore[arg-type]
    with pytest.raises(ax.AxisCheckError, match=fragment):
        ax.pmap(lambda v: v * 2, **kwargs).predict(sds(*shape))  # type: ignore[arg-type]


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("kwargs", "shape", "jax_answer"),
    [({"in_axes": -1}, (4, 1), (1, 4)), ({"out_axes": -1}, (8, 3), (24, 1))],
)
def test_jax_silent_accidents_are_reported(
    kwargs: dict[str, object], shape: tuple[int, ...], jax_answer: tuple[int, ...]
) -> None:
    """docs/jax-semantics.md#pmap: JAX returns these shapes silently; they are bugs, so axischeck raises."""
    assert jax.eval_shape(jax.pmap(lambda v: v * 2, **kwargs), sds(*shape)).shape == jax_answer  # type: ignore[arg-type]
    with pytest.raises(ax.AxisCheckError):
        ax.pmap(lambda v: v * 2, **kwargs).predict(sds(*shape))  # type: ignore[arg-type]


def test_out_axes_none_on_a_mapped_output_is_device_0s_block_with_a_warning() -> None:
    """What JAX returns (device 0's block), in predict and in calls, and a warning saying so."""
    f = ax.pmap(lambda v: v * 2, out_axes=None)
    want = jax.eval_shape(jax.pmap(lambda v: v * 2, out_axes=None), sds(1, 3))
    with pytest.warns(ax.AxisCheckWarning, match="device 0's block"):
        assert f.predict(sds(1, 3)).shapes == want.shape == (3,)
    x = jnp.arange(3.0).reshape(1, 3)
    with pytest.warns(ax.AxisCheckWarning, match=r"Hint: reduce over the devices first \(give the pmap") as record:
        out = f(x)
    assert record[0].filename == __file__  # the user's line, not axischeck's or JAX's
    assert str(record[0].message).endswith("; or out_axes=0 to get every device's block")
    np.testing.assert_array_equal(out, jax.pmap(lambda v: v * 2, out_axes=None)(x))
    g = ax.pmap(lambda v: (v * 2, v.sum()), axis_name="i", out_axes=(0, None))  # axischeck: ignore[AX018]
    with pytest.warns(ax.AxisCheckWarning, match=r"jax.lax.pmean or psum over 'i'\) if one value") as record:
        g(x)
    assert str(record[0].message).endswith("; or out_axes=(0, 0) to get every device's block")


@pytest.mark.devices(8)
def test_out_axes_none_over_a_reduced_and_a_mapped_output_names_the_entry_of_each() -> None:
    """jax#14296: a pmean'd loss and per-device predictions under out_axes=None: JAX returns
    device 0's predictions; the hint keeps None for the loss and maps the predictions
    (out_axes=0 for both would stack copies of the loss)."""

    def loss_and_preds(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        preds = x * 2.0
        return lax.pmean(jnp.mean(preds), "d"), preds

    x = jnp.arange(24.0).reshape(8, 3)
    with pytest.warns(ax.AxisCheckWarning, match="out_axes is None for output\\[1\\]") as record:
        ax.pmap(loss_and_preds, axis_name="d", out_axes=None)(x)
    assert str(record[0].message).endswith("; or out_axes=(None, 0) to get every device's block")
    loss, preds = jax.pmap(loss_and_preds, axis_name="d", out_axes=(None, 0))(x)
    assert loss.shape == () and preds.shape == (8, 3)


@pytest.mark.devices(8)
def test_out_axes_none_on_a_reduced_output_is_the_per_device_value() -> None:
    f = ax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)
    want = jax.eval_shape(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None), sds(8, 3))
    assert f.predict(sds(8, 3)).shapes == want.shape == (3,)


@pytest.mark.devices(8)
def test_static_broadcasted_argnums() -> None:
    f = ax.pmap(lambda v, n: v * n, in_axes=(0, None), static_broadcasted_argnums=1)
    x = jnp.ones((8, 3))
    np.testing.assert_array_equal(
        f(x, 3), jax.pmap(lambda v, n: v * n, in_axes=(0, None), static_broadcasted_argnums=1)(x, 3)
    )
    assert f.predict(x, 3).shapes == (8, 3)
    with pytest.raises(ax.ArgumentError, match="passed positionally"):
        f.predict(x, n=3)


def test_devices_argument_sets_the_device_count() -> None:
    f = ax.pmap(lambda v: v, devices=cpu_devices(2))
    assert f.predict(sds(2, 3)).shapes == (2, 3)
    with pytest.raises(ax.ArgumentError, match=r"2 device\(s\) are available"):
        f.predict(sds(4, 3))
    assert f.predict_with_devices(64, sds(64, 3)).shapes == (64, 3)


@pytest.mark.devices(8)
def test_nesting_with_vmap_and_nested_pmap() -> None:
    psum = lambda v: lax.psum(v, "i")
    assert ax.vmap(ax.pmap(psum, axis_name="i")).predict(sds(2, 8, 3)).shapes == (2, 8, 3)
    assert ax.pmap(ax.vmap(psum), axis_name="i").predict(sds(8, 2, 3)).shapes == (8, 2, 3)
    with pytest.raises(ax.ArgumentError, match="nested pmap"):
        ax.pmap(ax.pmap(lambda v: v, axis_name="j"), axis_name="i").predict(sds(2, 2, 3))


@pytest.mark.devices(8)
def test_signature_path_and_explain() -> None:
    f = ax.pmap(lambda v, w: v @ w, in_axes=(0, None), signature="(n,k),(k,m)->(n,m)")
    assert f.predict(sds(8, 4, 5), sds(5, 2)).shapes == (8, 4, 2)
    text = f.explain(sds(8, 4, 6), sds(5, 2))
    assert "dimension 'k' disagrees" in text and "pmap(<lambda>, in_axes=(0, None), out_axes=0)" in text
    np.testing.assert_allclose(f(jnp.ones((8, 4, 5)), jnp.ones((5, 2))), jnp.full((8, 4, 2), 5.0))


_garbage = st.one_of(
    st.none(),
    st.integers(-3, 9),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.tuples(st.integers(-2, 3)),
    st.lists(st.integers(-1, 2), max_size=3),
    st.just({"a": 0}),
    st.just(np.int64(1)),
    st.just(object()),
)
_args = st.one_of(
    st.tuples(st.integers(0, 10), st.integers(0, 3)).map(lambda s: sds(*s)),
    st.just(None),
    st.just("s"),
    st.floats(allow_nan=False),
    st.just(np.ones((8, 2))),
    st.just({"a": sds(8, 2)}),
    st.just((sds(8, 1), sds(4, 1))),
)


@given(
    option=st.sampled_from(
        ["in_axes", "out_axes", "axis_name", "axis_size", "static_broadcasted_argnums", "devices", "donate_argnums"]
    ),
    value=_garbage,
    args=st.lists(_args, max_size=3),
)
@example(option="in_axes", value=[-1], args=[sds(0, 0)])  # the advice once met a list entry it could not hash
def test_pmap_hostile_input_only_raises_axischeck_errors(option: str, value: object, args: list[object]) -> None:
    """Only AxisCheckError may escape construction and predict (issue 7, for pmap)."""
    try:
        f = ax.pmap(lambda *a: 0.0, **{option: value})  # type: ignore[arg-type]
        f.predict(*args)
        f.explain(*args)
    except ax.AxisCheckError:
        pass
    finally:
        # JAX's pmap makes `P(axis_name)` (here `P(np.int64(1))`) and its caches keep it.
        # JAX 0.10.2 interns specs, and a lookup may compare a new spec's entries with
        # that one's: `np.int64(1) == ("x", "y")` is an array, so a later P(("x", "y"))
        # raises (or not, by hash) in whatever test comes next. Drop JAX's caches.
        jax.clear_caches()


def _double_n_times(a: jax.Array, n: int) -> jax.Array:
    for _ in range(n):  # needs n as a Python int
        a = a + a
    return a


def test_an_unmapped_python_scalar_is_traced_as_pmap_traces_it() -> None:
    """pmap is a jit: what it does not map reaches the function as a tracer, a Python int
    too, so `range(n)` fails in JAX and in predict alike (jax#1991)."""
    x = jnp.ones((1, 5))
    f = ax.pmap(_double_n_times, in_axes=(0, None))
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        jax.pmap(_double_n_times, in_axes=(0, None))(x, 3)
    with pytest.raises(ax.FunctionError, match="TracerIntegerConversionError"):
        f.predict(x, 3)
    scaled = ax.pmap(lambda a, s: a * s, in_axes=(0, None))  # a traced scalar is fine elsewhere
    assert scaled.predict(x, 3).shapes == (1, 5)


@pytest.mark.parametrize("path", ["call", "predict"])
def test_a_python_int_a_pmap_needs_concrete_is_made_static_by_the_fix(path: str) -> None:
    x = jnp.ones((1, 5))
    f = ax.pmap(_double_n_times)
    with pytest.raises(ax.ArgumentError) as info:
        f(x, 3) if path == "call" else f.predict(x, 3)
    assert [s.as_kwargs() for s in info.value.suggestions] == [{"static_broadcasted_argnums": (1,)}]
    assert info.value.fix is not None and info.value.fix.startswith("static_broadcasted_argnums=(1,) would pass n")
    fixed = jax.pmap(_double_n_times, **info.value.suggestions[0].as_kwargs())
    np.testing.assert_array_equal(fixed(x, 3), x * 8)


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("shape", "options", "error"),
    [
        ((8, 24, 5), {"out_axes": -1}, ax.OutputError),  # JAX returns (192, 5, 1)
        ((8, 5, 24), {"out_axes": -2}, ax.OutputError),  # JAX returns (40, 1, 24)
        ((8, 5, 1), {"in_axes": -1}, ax.ArgumentError),  # JAX returns (1, 8, 5)
    ],
)
def test_a_call_with_negative_axes_is_refused_as_predict_refuses_it(
    shape: tuple[int, ...], options: dict[str, int], error: type[ax.AxisCheckError]
) -> None:
    """JAX's pmap shards axis 0 and squeezes or inserts the negative axis, returning a
    wrongly shaped result with no error: a call is checked before JAX runs it, as
    `predict` is (docs/jax-semantics.md#pmap)."""
    x = jnp.arange(float(np.prod(shape))).reshape(shape)
    jax_out = jax.pmap(lambda v: v * 2, **options)(x)  # JAX answers silently
    assert jax_out.shape != x.shape
    f = ax.pmap(lambda v: v * 2, **options)
    with pytest.raises(error) as predicted:
        f.predict(x)
    with pytest.raises(error) as called:
        f(x)
    assert str(called.value) == str(predicted.value)
    assert "negative" in str(called.value)


def test_a_pmap_is_made_without_asking_jax_for_its_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking starts JAX's backends, after which `jax.distributed.initialize` refuses to
    run: a pmap decorated at import, before a job of several processes starts, must not
    ask. It asks at first use."""

    def started(*args: object, **kwargs: object) -> object:
        raise AssertionError("asked JAX for its devices")

    for name in ("devices", "local_devices", "device_count", "local_device_count", "process_count", "process_index"):
        monkeypatch.setattr(jax, name, started)
    made = [
        ax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i"),
        ax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i", in_axes=(0,), signature="(a)->(a)"),
        ax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i", backend="cpu", axis_size=2, out_axes=None),
    ]
    monkeypatch.undo()
    assert made[1].predict((1, 3)).shapes == (1, 3)
    with pytest.raises(ax.SpecError, match="pmap backend 'nope' is not available"):
        ax.pmap(lambda x: x, backend="nope", signature="(a)->(a)").predict((1, 3))


@pytest.mark.devices(8)
def test_another_pmaps_output_given_in_axes_none_is_named_as_split_over_the_devices() -> None:
    """An array a pmap returned is split over the devices along axis 0; given in_axes None
    by the next pmap, JAX refuses it with "Sharding passed to jit does not match". The
    exception is JAX's, with a note naming the argument and the ways out."""

    def step(w: jax.Array, x: jax.Array) -> jax.Array:
        return lax.pmean(w * x.sum(), "d")

    w = jax.pmap(lambda w: w * 2.0, axis_name="d")(jnp.ones((8, 3)))
    x = jnp.ones((8, 5, 3))
    with pytest.raises(ValueError) as theirs:
        jax.pmap(step, axis_name="d", in_axes=(None, 0))(w, x)
    with pytest.raises(ValueError) as ours:
        ax.pmap(step, axis_name="d", in_axes=(None, 0))(w, x)
    assert str(ours.value) == str(theirs.value) and type(ours.value) is type(theirs.value)
    note = "\n".join(ours.value.__notes__)
    assert "w (in_axes None, shape (8, 3)) is split over 8 devices along axis 0" in note
    assert "map w (its in_axes entry 0)" in note and "out_axes=None" in note

    # Over 4 of the devices, the 8 rows are not one per device: mapping is not offered.
    four = jax.devices()[:4]
    with pytest.raises(ValueError) as ours:
        ax.pmap(step, axis_name="d", in_axes=(None, 0), devices=four)(w, x[:4])
    note = "\n".join(ours.value.__notes__)
    assert "is split over 8 devices along axis 0" in note and "map w" not in note


@pytest.mark.devices(8)
def test_another_pmaps_output_split_along_its_out_axes_is_mapped_along_that_axis() -> None:
    """jax's pmap migration guide: a pmap with out_axes=1 returns (5, 8) split over the
    8 devices along axis 1; the next pmap's default in_axes 0 asks for 5 slices along
    axis 0, which JAX refuses. The note names the axis the array is split along."""

    def spread(column: jax.Array) -> jax.Array:
        return jnp.max(column) - jnp.min(column)

    table = jnp.sin(jnp.arange(40.0)).reshape(8, 5)
    features = jax.pmap(lambda row: row - row.mean(), out_axes=1)(table)
    with pytest.raises(ValueError) as theirs:
        jax.pmap(spread)(features)
    with pytest.raises(ValueError) as ours:
        ax.pmap(spread)(features)
    assert str(ours.value) == str(theirs.value) and type(ours.value) is type(theirs.value)
    note = "\n".join(ours.value.__notes__)
    assert "column (in_axes 0, shape (5, 8)) is split over 8 devices along axis 1" in note
    assert "map column along axis 1, the axis it is split along (its in_axes entry 1)" in note
    assert "out_axes=None" not in note  # nothing here is given in_axes None
    assert jax.pmap(spread, in_axes=1)(features).shape == (8,)

    # Over 4 of the devices, the 8 columns cannot be one per device: mapping is not offered.
    with pytest.raises(ValueError) as ours:
        ax.pmap(spread, devices=jax.devices()[:4])(features[:4])
    note = "\n".join(ours.value.__notes__)
    assert "is split over 8 devices along axis 1" in note and "map column" not in note


@pytest.mark.devices(8)
def test_a_top_level_list_of_in_axes_gets_the_tuple_as_the_fix_beside_an_unmapped_array() -> None:
    """pmap reads a top-level list as one entry (jax#13214): the tuple of the same entries
    is the fix, with arrays it leaves unmapped beside the mapped ones, one of them never
    read (the advice's later questions read only int entries: a list entry is none)."""

    def second(a: jax.Array, b: jax.Array, c: jax.Array, d: jax.Array) -> jax.Array:
        return b + d[0]

    a, d = jnp.asarray([4.0, 5.0]), jnp.zeros((2, 10))
    with pytest.raises(ax.AxisCheckError) as info:
        ax.pmap(second, in_axes=[None, 0, None, 0])(a, a, a, d)
    (fix,) = info.value.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"in_axes": (None, 0, None, 0)}
