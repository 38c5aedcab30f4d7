"""The drop-in promise: what works with `jax.*` works the same with `ax.*`, and no cache
ever hands out a stale or shared answer (the rule is in `axischeck._core._keys`)."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import functools
import gc
import inspect
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._debug import predictor_of, predictors_kept
from jax_oracle import counting


def sds(*shape: int, dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def double(x: jax.Array) -> jax.Array:
    return x * 2


# ------------------------------------------------------------------ JAX's objects


def test_jax_transform_api_is_reached_through_the_shell() -> None:
    x = jnp.ones((1, 3))
    compiled = ax.pmap(double).lower(x).compile()
    np.testing.assert_array_equal(compiled(x), jax.pmap(double)(x))
    assert "mul" in ax.pmap(double).lower(x).as_text()
    for transform in (ax.vmap, ax.pmap):
        jax_fn, ours = getattr(jax, transform.__name__)(double), transform(double)
        assert hasattr(ours, "lower") == hasattr(jax_fn, "lower")
        assert ours.__name__ == jax_fn.__name__ and ours.__doc__ == jax_fn.__doc__
        assert ours.__wrapped__ is double


@pytest.mark.devices(8)
def test_what_jax_copies_from_the_function_is_on_the_shell_and_the_shells_own_comes_first() -> None:
    """JAX's transforms carry what `functools.wraps` copied from the function (a snapshot,
    taken when the transform is made): the shell carries the same, except where it has an
    attribute of its own, which a lookup finds first."""

    def scaled(x: jax.Array) -> jax.Array:
        return x * 3

    scaled.units = "m"  # type: ignore[attr-defined]
    scaled.predict = "the user's"  # type: ignore[attr-defined]
    mesh = jax.make_mesh((8,), ("x",))
    spec = jax.sharding.PartitionSpec("x")
    made = {
        "vmap": (jax.vmap(scaled), ax.vmap(scaled)),
        "pmap": (jax.pmap(scaled), ax.pmap(scaled)),
        "shard_map": (
            jax.shard_map(scaled, mesh=mesh, in_specs=spec, out_specs=spec),
            ax.shard_map(scaled, mesh=mesh, in_specs=spec, out_specs=spec),
        ),
    }
    scaled.units = "km"  # after the transforms were made: neither sees it
    for name, (jax_fn, ours) in made.items():
        assert ours.units == jax_fn.units == "m", name  # type: ignore[attr-defined]
        assert jax_fn.predict == "the user's" and callable(ours.predict), name  # type: ignore[attr-defined]
        assert hasattr(ours, "lower") == hasattr(jax_fn, "lower"), name
        assert not hasattr(ours, "no_such_attribute") and not hasattr(jax_fn, "no_such_attribute")
    with pytest.raises(AttributeError, match="no attribute 'no_such_attribute'"):
        ax.vmap(scaled).no_such_attribute  # noqa: B018


def test_a_fresh_pmap_of_the_same_function_does_not_compile_again() -> None:
    """JAX's caches see the user's own function: a new `ax.pmap(f)` hits them."""
    runs: list[int] = []

    def f(x: jax.Array) -> jax.Array:
        runs.append(1)
        return x + 1

    x = jnp.ones((1, 3))
    for _ in range(3):
        jax.pmap(f)(x)
    jax_runs = len(runs)
    runs.clear()
    for _ in range(3):
        ax.pmap(f)(x)
    assert len(runs) <= jax_runs + 1  # at most one more run than JAX: axischeck's own check


def test_out_axes_none_takes_one_trace_for_every_output() -> None:
    runs: list[int] = []

    def f(x: jax.Array) -> dict[str, jax.Array]:
        runs.append(1)
        return {f"p{k}": jax.lax.psum(x, "i") * k for k in range(50)}

    shapes = ax.vmap(f, axis_name="i", out_axes=None).predict(sds(4, 3)).shapes
    assert shapes == {f"p{k}": (3,) for k in range(50)}
    assert len(runs) <= 3  # the trace, its silent-collective check and the out_axes probe


def test_the_leak_checker_does_not_run_the_function_again() -> None:
    leaked: list[Any] = []
    runs: list[int] = []

    def leaky(x: jax.Array) -> jax.Array:
        runs.append(1)
        leaked.append(x)
        return x

    with jax.checking_leaks():
        with pytest.raises(Exception) as plain:  # noqa: B017 - whatever JAX raises
            jax.vmap(leaky)(jnp.ones((2, 3)))
        jax_runs = len(runs)
        runs.clear()
        with pytest.raises(type(plain.value)):
            ax.vmap(leaky)(jnp.ones((2, 3)))
    assert len(runs) == jax_runs


def test_bound_methods_report_their_parameters_without_self() -> None:
    class Model:
        @ax.vmap  # axischeck: ignore[AX027] (never called: its signature is read)
        def f(self, x: jax.Array) -> jax.Array:
            return x

    assert list(inspect.signature(Model().f).parameters) == ["x"]


def test_transforms_copy_and_pickle() -> None:
    cases: list[tuple[Any, jax.ShapeDtypeStruct]] = [
        (ax.vmap(double, in_axes=0, signature="(n)->(n)"), sds(1, 3)),
        (ax.pmap(double), sds(1, 3)),
        (ax.check(double, signature="(n)->(n)"), sds(3)),
    ]
    for f, x in cases:
        for again in (copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
            assert type(again) is type(f)
            assert again.predict(x).shapes == f.predict(x).shapes


# ---------------------------------------------------------------------- caches


def test_predictions_handed_out_are_the_callers_own() -> None:
    sig = ax.Signature(("n k",), output={"mean": "k", "sum": "k"})
    f = ax.vmap(lambda x: {"mean": x.mean(0), "sum": x.sum(0)}, signature=sig)
    first = f.predict(sds(8, 4, 3)).shapes
    first.pop("mean")
    assert f.predict(sds(8, 4, 3)).shapes == {"mean": (8, 3), "sum": (8, 3)}
    out = f(jnp.ones((8, 4, 3)))  # and a call still agrees with the cache
    assert out["mean"].shape == (8, 3)


def test_an_output_sized_by_a_python_scalar_is_never_stale() -> None:
    f = ax.vmap(lambda x, n: jnp.zeros(n) + x.sum(), in_axes=(0, None))
    assert f.predict(sds(4, 2), 3).shapes == (4, 3)
    assert f.predict(sds(4, 2), 5).shapes == (4, 5)
    assert f(jnp.ones((4, 2)), 5).shape == (4, 5)


def test_dtypes_are_part_of_a_traced_answer() -> None:
    f = ax.vmap(lambda x: jnp.zeros(3) if x.dtype == jnp.int32 else jnp.zeros(5))
    assert f.predict(sds(2, 1, dtype=jnp.int32)).shapes == (2, 3)
    assert f.predict(sds(2, 1, dtype=jnp.float32)).shapes == (2, 5)


def test_predictors_are_shared_by_function_and_options_and_die_with_the_function() -> None:
    def make() -> Any:
        return lambda x: x * 3

    g = make()
    first = ax.vmap(g, in_axes=0)
    assert predictor_of(ax.vmap(g, in_axes=0)) is predictor_of(first)
    assert predictor_of(ax.vmap(g, in_axes=1)) is not predictor_of(first)
    assert predictor_of(ax.vmap(make(), in_axes=0)) is not predictor_of(first)
    before = predictors_kept()
    del g, first
    gc.collect()
    assert predictors_kept() < before


_FUNCTIONS = {
    "scalar-sized": (lambda x, n: jnp.zeros(n) + x.sum(), (0, None)),
    "dtype-branching": (lambda x, n: jnp.zeros(2) if x.dtype == jnp.int32 else x, (0, None)),
    "signature-free sum": (lambda x, n: x.sum(-1) * n, (0, None)),
}


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(sorted(_FUNCTIONS)),
            st.integers(1, 4),
            st.integers(1, 4),
            st.sampled_from([jnp.float32, jnp.int32]),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_random_call_histories_answer_as_a_fresh_transform(history: list[tuple[str, int, int, Any, int]]) -> None:
    """After any sequence of predictions and calls, each answer equals the answer of a
    transform built from scratch (a new function object: nothing cached)."""
    transforms = {name: ax.vmap(fn, in_axes=axes) for name, (fn, axes) in _FUNCTIONS.items()}
    for name, batch, k, dtype, n in history:
        fn, axes = _FUNCTIONS[name]
        fresh = ax.vmap(lambda *a, fn=fn: fn(*a), in_axes=axes)
        x = sds(batch, k, dtype=dtype)
        assert transforms[name].predict(x, n).shapes == fresh.predict(x, n).shapes
        real = transforms[name](jnp.ones((batch, k), dtype), n)
        assert real.shape == fresh.predict(x, n).shapes


def test_pmap_out_axes_none_in_a_training_step() -> None:
    """acme's `pmap(init_fn, out_axes=None)`: replicated parameters come back as JAX gives them."""

    def init(key: jax.Array) -> dict[str, jax.Array]:
        return {"w": jax.random.normal(key, (3, 2)), "b": jnp.zeros(2)}

    keys = jax.random.split(jax.random.key(0), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ax.AxisCheckWarning)
        ours = ax.pmap(init, out_axes=None)(keys)
    theirs = jax.pmap(init, out_axes=None)(keys)
    for k in theirs:
        np.testing.assert_array_equal(ours[k], theirs[k])


@pytest.mark.devices(2)
def test_size_one_mesh_axes_left_out_of_types_are_accepted() -> None:
    """With `jax_remove_size_one_mesh_axis_from_type`, an argument's type never names a
    size-1 mesh axis that its in_spec names; JAX accepts that, so axischeck does."""
    from jax._src import config
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 1), ("x", "y"), axis_types=(AxisType.Explicit,) * 2, devices=jax.devices()[:2])
    with config.remove_size_one_mesh_axis_from_type(True), jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.0).reshape(8, 2), P("x", "y"))
        f = jax.jit(ax.shard_map(lambda x: jax.lax.psum(x, "x"), in_specs=P("x", "y"), out_specs=P()))
        np.testing.assert_array_equal(f(arr), np.arange(16.0).reshape(8, 2)[:4] + np.arange(16.0).reshape(8, 2)[4:])


def test_a_structured_in_axes_is_not_mistaken_for_an_equal_tuple() -> None:
    import collections

    Point = collections.namedtuple("Point", "x y")
    f = lambda a, p: a + p.x + p.y
    point = Point(jnp.ones((2, 3)), jnp.ones((3, 2)))
    ax.vmap(f, in_axes=((0, (1, 0)),))  # a plain tuple first: a different option
    got = ax.vmap(lambda args: f(*args), in_axes=((0, Point(0, 1)),))((jnp.ones((2, 3)), point))
    want = jax.vmap(lambda args: f(*args), in_axes=((0, Point(0, 1)),))((jnp.ones((2, 3)), point))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", [np.array([0, 1]), np.array(0), np.int64(0)])
def test_array_axes_get_jax_s_error_with_our_explanation(bad: Any) -> None:
    with pytest.raises(TypeError) as plain:
        jax.vmap(double, in_axes=bad)
    with pytest.raises(ax.SpecError) as ours:
        ax.vmap(double, in_axes=bad)
    assert isinstance(ours.value, TypeError) and str(plain.value) in str(ours.value)


def test_jax_s_message_is_kept_for_unmapped_non_array_arguments() -> None:
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped:"):
        ax.vmap(lambda a, b, g: g(a, b), (0, 0, None))(jnp.ones(2), jnp.ones(3), jnp.add)


def test_a_signature_does_not_hide_an_unbound_collective_axis() -> None:
    traces = []

    def total(x: jax.Array) -> jax.Array:
        traces.append(x.shape)
        return jax.lax.psum(x, "j")  # axischeck: ignore[AX005] - the mistake under test

    f = ax.vmap(total, axis_name="i", signature="(n)->(n)")
    with pytest.raises(NameError) as predicted:  # JAX's type, as jax.eval_shape raises it
        f.predict((8, 5))
    assert isinstance(predicted.value, ax.FunctionError) and "unbound axis name: j" in str(predicted.value)
    with pytest.raises(NameError):  # the shapes' answer is cached now: it must not stand without the names
        f.predict((8, 5))
    with pytest.raises(NameError):
        jax.eval_shape(jax.vmap(total, axis_name="i"), jax.ShapeDtypeStruct((8, 5), jnp.float32))
    # Bound, the signature answers; one trace of the function per axis environment, not per shape.
    g = ax.vmap(total, axis_name="j", signature="(n)->(n)")
    traces.clear()
    for b in range(1, 6):
        assert g.predict((b, 5)).shapes == (b, 5)
    assert len(traces) == 1


def test_a_signature_does_not_hide_a_spmd_axis_an_inner_shard_map_uses() -> None:
    from jax.sharding import AxisType, Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:2]), ("i",), axis_types=(AxisType.Auto,))
    inner = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(ValueError, match="spmd_axis_name cannot appear"):
        jax.eval_shape(jax.vmap(inner, spmd_axis_name="i"), jax.ShapeDtypeStruct((3, 4), jnp.float32))
    f = ax.vmap(inner, spmd_axis_name="i", signature="(n)->(n)")
    with pytest.raises(ValueError, match="spmd_axis_name cannot appear") as predicted:
        f.predict((3, 4))
    assert isinstance(predicted.value, ax.SpecError)
    assert ax.vmap(inner, signature="(n)->(n)").predict((3, 4)).shapes == (3, 4)


@pytest.mark.parametrize(("in_specs", "out_specs"), [("i", "i"), ("j", ("i", "j"))])
def test_without_a_signature_a_spmd_axis_an_inner_shard_map_uses_is_refused(in_specs: Any, out_specs: Any) -> None:
    """The per-example trace maps the function under a vmap with the same spmd_axis_name,
    so JAX's own rule for the shard_map inside refuses it, planned on an abstract mesh."""
    from jax.sharding import PartitionSpec as P

    mesh = jax.sharding.AbstractMesh((4, 2), ("i", "j"))
    inner = jax.shard_map(jnp.sin, mesh=mesh, in_specs=P(in_specs), out_specs=P(out_specs), check_vma=False)
    x = jax.ShapeDtypeStruct((4, 16), jnp.float32)
    with pytest.raises(ValueError) as jax_err:  # the words differ between JAX versions
        jax.eval_shape(jax.vmap(inner, spmd_axis_name="i"), x)
    with pytest.raises(ax.AxisCheckError) as ours:
        ax.vmap(inner, spmd_axis_name="i").predict(x)
    if "spmd_axis_name cannot appear" in str(jax_err.value):
        assert isinstance(ours.value, ax.SpecError) and "spmd_axis_name is also a mesh axis" in str(ours.value)
    try:
        want = jax.eval_shape(jax.vmap(inner), x).shape
    except ValueError:  # JAX 0.12 refuses the unsharded argument itself
        with pytest.raises(ax.AxisCheckError):
            ax.vmap(inner).predict(x)
    else:
        assert ax.vmap(inner).predict(x).shapes == want


# ------------------------------------------------- how often the function is traced


def _group_norm(x: jax.Array, w: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A batch norm over a named axis, as Flax NNX's BatchNorm(axis_name=...) computes it."""
    y = x @ w + b[None, :]
    stats = jax.lax.pmean(jnp.stack([jnp.mean(y, axis=0), jnp.mean(jnp.square(y), axis=0)]), "groups")
    mean, var = stats[0], jnp.maximum(0.0, stats[1] - jnp.square(stats[0]))
    return (y - mean[None, :]) * jax.lax.rsqrt(var + 1e-5)[None, :], mean


def test_a_checked_named_vmap_computes_jaxs_bits_eagerly_and_stages_jaxs_program() -> None:
    """The check of a named vmap rides JAX's trace and hands JAX the function's record:
    eagerly, JAX runs jax.numpy's jits (`jnp.mean`) as compiled calls, whose numerics can
    differ from their operations run one by one (one unit in the last place on jax 0.12),
    so the record keeps them as calls; under jit, the staged program is JAX's own."""
    x = jax.random.normal(jax.random.key(1), (5, 6, 3))
    w, b = jax.random.normal(jax.random.key(2), (3, 4)), jax.random.normal(jax.random.key(3), (4,))
    options: dict[str, Any] = {"in_axes": (1, None, None), "axis_name": "groups"}
    theirs = jax.vmap(_group_norm, **options)(x, w, b)
    ours = ax.vmap(_group_norm, **options)(x, w, b)
    for mine, jaxs in zip(ours, theirs, strict=True):
        assert np.asarray(mine).tobytes() == np.asarray(jaxs).tobytes()
    lowered = [jax.jit(lib.vmap(_group_norm, **options)).lower(x, w, b).as_text() for lib in (jax, ax)]
    assert lowered[0] == lowered[1]


@pytest.mark.devices(8)
@pytest.mark.parametrize("transform", ["vmap", "pmap"])
def test_a_collective_step_runs_the_function_as_often_as_jax(transform: str) -> None:
    """Eager calls with a named axis: JAX's vmap traces every call, pmap once per shapes;
    the check of the first call rides JAX's own trace of it (the record keeps the
    function's collectives for the checks JAX's vmap skips, and is replayed for the
    shapes), so the function runs exactly as often as under JAX."""
    x = jnp.arange(24.0).reshape(8, 3)
    counts = {}
    for name, make in (("jax", getattr(jax, transform)), ("ax", getattr(ax, transform))):
        f, runs = counting(lambda v: v - jax.lax.pmean(v, "i"))
        g = make(f, axis_name="i")
        outs = [g(x) for _ in range(3)]
        counts[name] = runs[0]
        np.testing.assert_array_equal(outs[-1], jax.vmap(lambda v: v - jax.lax.pmean(v, "i"), axis_name="i")(x))
    assert counts["ax"] == counts["jax"], counts


@pytest.mark.parametrize("inner_name", ["j", "i"])
def test_nested_named_vmaps_run_the_function_as_often_as_jax(inner_name: str) -> None:
    """The outer of nested vmaps with axis names checks its collectives from the record
    the inner one makes of JAX's own trace, not from a trace of its own before JAX runs:
    two or three levels, another name or the same one, the function runs as under JAX."""

    def step(x: jax.Array, w: jax.Array) -> jax.Array:
        return jax.lax.psum(x @ w, "i")

    x, w = jnp.ones((2, 2, 4, 3)), jnp.ones((3, 2))
    counts, outs = {}, {}
    for name, vmap in (("jax", jax.vmap), ("ax", ax.vmap)):
        f, runs = counting(step)
        inner = vmap(f, in_axes=(0, None), axis_name=inner_name)
        two = vmap(inner, in_axes=(0, None), axis_name="i")
        three = vmap(vmap(inner, in_axes=(0, None), axis_name="k"), in_axes=(0, None), axis_name="i")
        with warnings.catch_warnings():  # the same name twice is warned of (equinox#49): not the point here
            warnings.simplefilter("ignore", ax.AxisCheckWarning)
            outs[name] = [two(x[0], w) for _ in range(3)] + [three(x, w) for _ in range(3)]
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"], counts
    for ours, theirs in zip(outs["ax"], outs["jax"], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def _nest(lib: Any, kind: str, f: Callable[..., Any]) -> tuple[Callable[..., Any], jax.Array]:
    """One of the nests whose checks ride JAX's trace, built from `lib` (jax or ax) around
    `f`, and an argument for it."""
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((8,), ("d",), axis_types=(auto,), devices=jax.devices("cpu")[:8])
    x = jnp.arange(32 * 3.0).reshape(32, 3)
    if kind == "named vmap in shard_map":
        return lib.shard_map(lib.vmap(f, axis_name="i"), mesh=mesh, in_specs=P("d"), out_specs=P("d")), x
    if kind == "named vmap in smap":
        return lib.smap(lib.vmap(f, axis_name="i"), in_axes=0, out_axes=0, axis_name="d"), x
    if kind == "vmap in named vmap":
        return lib.vmap(lib.vmap(f), axis_name="j"), x
    if kind == "vmap in named vmap, out_axes None":
        return lib.vmap(lib.vmap(lambda v: jnp.zeros_like(f(v)).sum() + 1.0), axis_name="j", out_axes=None), x
    if kind == "shard_map in named vmap":
        return lib.vmap(lib.shard_map(f, mesh=mesh, in_specs=P("d"), out_specs=P("d")), axis_name="j"), x.T
    assert kind == "vmap in pmap, out_axes None"
    return lib.pmap(lib.vmap(lambda v: jnp.zeros_like(f(v)).sum() + 1.0), axis_name="p", out_axes=None), x[:24].reshape(
        8, 3, 3
    )


NESTS = (  # (nest, whether the function calls a collective over the shard_map's mesh axis)
    ("named vmap in shard_map", False),
    ("named vmap in shard_map", True),
    ("named vmap in smap", False),
    ("named vmap in smap", True),
    ("vmap in named vmap", False),
    ("vmap in named vmap, out_axes None", False),
    ("shard_map in named vmap", False),
    ("shard_map in named vmap", True),
    ("vmap in pmap, out_axes None", False),
)


@pytest.mark.devices(8)
@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize(("kind", "collective"), NESTS)
def test_nests_run_the_function_as_often_as_jax(kind: str, collective: bool, jit: bool) -> None:
    """The checks of a nest ride the one trace JAX makes of the innermost function, on
    the first call and later ones, eager and under jit: an inner check asks JAX's record
    made inside the shard_map (typed with the mesh axes it varies over), and an inner
    transform without a check of its own records the function for the one around it."""
    auto = jax.sharding.AxisType.Auto
    context = jax.make_mesh((8,), ("d",), axis_types=(auto,), devices=jax.devices("cpu")[:8])
    counts, outs = {}, {}
    for name, lib in (("jax", jax), ("ax", ax)):
        f, runs = counting(lambda v: jax.lax.psum(v * 2.0, "d") if collective else v * 2.0)
        g, x = _nest(lib, kind, f)
        g = jax.jit(g) if jit else g
        with jax.set_mesh(context) if "smap" in kind else contextlib.nullcontext():  # smap's mesh is the context's
            outs[name] = [g(x) for _ in range(3)]
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"], counts
    for ours, theirs in zip(outs["ax"], outs["jax"], strict=True):
        np.testing.assert_array_equal(ours, theirs)


@dataclasses.dataclass(frozen=True)
class _Settings:
    scale: float = 2.0


class _Mode(enum.Enum):
    TRAIN = 2.0
    EVAL = 3.0


@pytest.mark.devices(8)
@pytest.mark.parametrize("setting", [_Settings(), _Mode.TRAIN], ids=["frozen dataclass", "enum"])
@pytest.mark.parametrize("transform", ["named vmap", "pmap with out_axes None"])
def test_settings_among_the_arguments_run_the_function_as_often_as_jax(transform: str, setting: Any) -> None:
    """A hashable argument that is neither an array nor a scalar (a frozen dataclass of
    settings, an enum) keys JAX's record of the function by its value, as JAX keys a
    static argument: the check asks the record instead of tracing the function again."""

    def step(x: jax.Array, s: Any) -> jax.Array:
        scale = s.scale if isinstance(s, _Settings) else s.value
        return jax.lax.psum(x * scale, "i")

    x = jnp.arange(24.0).reshape(8, 3)
    counts, outs = {}, {}
    for name, lib in (("jax", jax), ("ax", ax)):
        f, runs = counting(step)
        if transform == "pmap with out_axes None":
            g = lib.pmap(f, axis_name="i", static_broadcasted_argnums=(1,), out_axes=None)
        else:
            g = lib.vmap(f, axis_name="i", in_axes=(0, None))
        outs[name] = [g(x, setting) for _ in range(7)]
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"], counts
    for ours, theirs in zip(outs["ax"], outs["jax"], strict=True):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.devices(8)
@pytest.mark.parametrize("transform", ["vmap", "pmap"])
def test_a_data_parallel_step_with_out_axes_none_traces_once(transform: str) -> None:
    """pmean of a gradient pytree and out_axes=None: which outputs are batched is asked of
    JAX's own trace of the call, recorded, not of the function once more per output."""
    params = {f"w{i:02d}": jnp.ones(3) for i in range(20)}

    def grads(p: dict[str, jax.Array], x: jax.Array) -> Any:
        loss = lambda p: sum(jnp.dot(w, x) for w in p.values())  # noqa: E731
        return jax.lax.pmean(jax.grad(loss)(p), "batch")

    f, runs = counting(grads)
    out = getattr(ax, transform)(f, in_axes=(None, 0), out_axes=None, axis_name="batch")(params, jnp.ones((8, 3)))
    assert runs[0] == 1
    assert jax.tree_util.tree_map(jnp.shape, out) == {k: (3,) for k in params}


def test_a_psum_scatter_of_the_wrong_size_is_still_caught() -> None:
    """The record of JAX's trace keeps the collective whose vmap rule answers silently
    and wrongly (a psum_scatter whose scattered size is not the axis size)."""
    f = ax.vmap(lambda v: jax.lax.psum_scatter(v, "i"), axis_name="i")
    with pytest.raises(ax.CollectiveError, match="psum_scatter"):
        f(jnp.ones((4, 6)))


def test_a_signature_predict_tells_a_missing_python_name_from_an_unbound_axis_name() -> None:
    f = ax.vmap(lambda x: x * undefined_scale, signature="(n)->(n)")  # type: ignore[name-defined]  # noqa: F821
    with pytest.raises(NameError) as info:
        f.predict((3, 2))
    assert isinstance(info.value, ax.FunctionError)
    assert "undefined_scale" in str(info.value) and "collective" not in str(info.value)
    assert "axis_name" not in (info.value.fix or "")


def test_attributes_reach_through_nested_transforms_as_through_jaxs() -> None:
    """functools.wraps copies a callable object's attributes onto JAX's function, and each
    nesting level copies them again: `jax.vmap(jax.vmap(obj)).index` is obj's."""

    class Model:
        index = 7

        def __call__(self, x: jax.Array) -> jax.Array:
            return x

    model = Model()
    model.scale = 2  # type: ignore[attr-defined]
    want = jax.vmap(jax.vmap(model))
    got = ax.vmap(ax.vmap(model))
    assert got.scale == want.scale == 2  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = got.missing  # type: ignore[attr-defined]


@pytest.mark.parametrize("axis_name", [None, "i"])
def test_a_pmap_without_out_axes_none_traces_as_often_as_jaxs(axis_name: str | None) -> None:
    """Nothing a pmap answers silently needs a trace of axischeck's unless an out_axes
    entry is None: a call (and a later eval_shape) traces the function as JAX does."""
    counts = {}
    for name, make in (("jax", jax.pmap), ("ax", ax.pmap)):
        f, runs = counting(lambda v: v * 2)
        g = make(f, axis_name=axis_name)
        g(jnp.ones((1, 3)))
        jax.eval_shape(g, jax.ShapeDtypeStruct((1, 3), jnp.float32))
        g(jnp.ones((1, 3)))
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"], counts


@pytest.mark.parametrize("axis_name", [None, "i"])
def test_a_pmap_with_out_axes_none_traces_as_often_as_jaxs(axis_name: str | None) -> None:
    """Which output varies over the devices is read from JAX's own trace of the call
    (equinox's filter_pmap passes out_axes with None entries, and its tests count): an
    eval_shape, a call, a transform made again inline and a jit trace the function as
    JAX does (once: JAX's cache answers the rest, and the check asks JAX's record), with
    the same values."""
    x = jnp.arange(3.0).reshape(1, 3)
    counts, outs = {}, {}
    for name, make in (("jax", jax.pmap), ("ax", ax.pmap)):
        f, runs = counting(lambda v, s: (v * s, s + 1))
        options = {"axis_name": axis_name, "in_axes": (0, None), "out_axes": (0, None)}
        g = make(f, **options)
        jax.eval_shape(g, jax.ShapeDtypeStruct((1, 3), jnp.float32), 2.0)
        outs[name] = g(x, 2.0)
        make(f, **options)(x, 3.0)  # another Python scalar: the same abstract value
        jax.jit(make(f, **options))(x, 2.0)
        jax.eval_shape(g, jax.ShapeDtypeStruct((1, 3), jnp.float32), 2.0)
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"] == 1, counts
    for got, want in zip(outs["ax"], outs["jax"], strict=True):
        np.testing.assert_array_equal(got, want)


def test_an_unmapped_tracer_argument_is_not_taken_for_a_mapped_one() -> None:
    """Under eval_shape or jit an unmapped argument is a tracer of the trace around the
    pmap: the record of the per-device function then takes it as one more input, and is
    not asked with fewer (which failed, and every output was assumed to vary)."""
    g = ax.pmap(lambda v, s: (v * s, s + 1), in_axes=(0, None), out_axes=(0, None))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jax.eval_shape(g, jax.ShapeDtypeStruct((1, 3), jnp.float32), 2.0)
    assert [o.shape for o in out] == [(1, 3), ()]


def test_a_pmap_output_that_varies_under_out_axes_none_warns_from_jaxs_own_trace() -> None:
    """The warning for device 0's block of a per-device value needs no trace of its own:
    the function runs once, the warning points at the user's line, and a call JAX answers
    from its cache (the same shapes again) says nothing new."""
    f, runs = counting(lambda v: v * 2)
    g = ax.pmap(f, out_axes=None)
    with pytest.warns(ax.AxisCheckWarning, match="returns device 0's block") as rec:
        out = g(jnp.ones((1, 3)))
    assert rec[0].filename == __file__
    assert runs[0] == 1
    np.testing.assert_array_equal(out, jnp.full(3, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g(jnp.ones((1, 3)))
    assert runs[0] == 1


def test_nested_transforms_binding_one_axis_name_warn_at_the_users_line() -> None:
    """JAX accepts it, silently: the inner binding hides the outer, so the pmean inside
    averages each row alone (equinox#49). axischeck answers as JAX does, and says so."""

    def center(x: jax.Array) -> jax.Array:
        return x - jax.lax.pmean(x, "batch")

    x = jnp.arange(12.0).reshape(3, 4)
    with pytest.warns(ax.AxisCheckWarning, match="binds axis_name='batch', which a transform around it binds") as rec:
        out = ax.vmap(ax.vmap(center, axis_name="batch"), axis_name="batch")(x)  # axischeck: ignore[AX006]
    assert rec[0].filename == __file__
    plain = jax.vmap(jax.vmap(center, axis_name="batch"), axis_name="batch")  # axischeck: ignore[AX006]
    np.testing.assert_array_equal(out, plain(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # distinct names: nothing to say
        ax.vmap(ax.vmap(center, axis_name="batch"), axis_name="rows")(x)


@pytest.mark.parametrize("depth", [2, 3])
def test_one_axis_name_bound_twice_without_a_collective_over_it_says_nothing(depth: int) -> None:
    """The shadowing changes a result only where a collective reduces over the name: a
    nest that binds one name twice around a function with none runs under
    `filterwarnings = error` (a project's pytest setting), as under JAX."""

    def scale(x: jax.Array) -> jax.Array:
        return x * 2.0

    x = jnp.arange(24.0).reshape(2, 3, 4)
    nest: Any = scale
    names = ["batch", "batch"] if depth == 2 else ["batch", "rows", "batch"]
    for name in names:
        nest = ax.vmap(nest, axis_name=name)
    plain: Any = scale
    for name in names:
        plain = jax.vmap(plain, axis_name=name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = nest(x if depth == 3 else x[0])
    np.testing.assert_array_equal(out, plain(x if depth == 3 else x[0]))


def test_a_collective_under_a_name_bound_two_levels_up_is_warned_of() -> None:
    """Three levels, the innermost and outermost binding one name: the pmean inside sees
    the innermost axis only, and the level that hides the outer one says so."""

    def center(x: jax.Array) -> jax.Array:
        return x - jax.lax.pmean(x, "batch")

    inner = ax.vmap(center, axis_name="batch")  # axischeck: ignore[AX006] - the mistake under test
    nest = ax.vmap(ax.vmap(inner, axis_name="rows"), axis_name="batch")
    with pytest.warns(ax.AxisCheckWarning, match="binds axis_name='batch', which a transform around it binds"):
        nest(jnp.arange(24.0).reshape(2, 3, 4))


def test_axischeck_leaves_jaxs_trace_context_as_it_found_it() -> None:
    """A first checked call imports nothing that joins JAX's trace context (the public
    jax.extend.core pulls Pallas in, whose settings do on JAX 0.12): every cache key taken
    before it stays valid, so the second call traces nothing again."""
    program = (
        "import jax, jax.numpy as jnp, axischeck as ax\n"
        "from axischeck._core._jax_compat import trace_context\n"
        "x = jnp.ones((8, 3))\n"
        "before = len(trace_context())\n"
        "ax.vmap(lambda v: v - jax.lax.pmean(v, 'i'), axis_name='i')(x)\n"
        "print(before == len(trace_context()))\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True"]


def _static_method_traces(transform: Any) -> int:
    import functools

    class Model:
        w = 2.0

        @functools.partial(transform, in_axes=(None, 0))
        def apply(self, x: jax.Array) -> jax.Array:
            return x * self.w

    model = Model()
    assert model.apply.__name__ == "apply"
    assert model.apply == model.apply and hash(model.apply) == hash(model.apply)
    assert model.apply != Model().apply
    runs = [0]

    @functools.partial(jax.jit, static_argnums=0)
    def step(fn: Any, x: jax.Array) -> jax.Array:
        runs[0] += 1
        return fn(x)

    for _ in range(3):
        np.testing.assert_array_equal(step(model.apply, jnp.ones((4, 3))), jnp.full((4, 3), 2.0))
    return runs[0]


def test_a_transformed_method_bound_to_an_instance_is_a_stable_static_argument() -> None:
    """A method decorated with `partial(ax.vmap, in_axes=(None, 0))` binds like a method:
    named as the function, and equal (and equally hashed) each time it is looked up, so
    `jax.jit` keying a static argument by it traces once, as with `jax.vmap`."""
    assert _static_method_traces(ax.vmap) == _static_method_traces(jax.vmap) == 1


NESTS: dict[str, Any] = {
    # (how to nest two transforms of a module like jax or ax, the input)
    "vmap(vmap(f, 'i'))": lambda t, f: t.vmap(t.vmap(f, axis_name="i")),
    "vmap(vmap(f, 'i'), 'j')": lambda t, f: t.vmap(t.vmap(f, axis_name="i"), axis_name="j"),
    "pmap(vmap(f, 'i'))": lambda t, f: t.pmap(t.vmap(f, axis_name="i")),
    "pmap(vmap(f, 'i'), 'j')": lambda t, f: t.pmap(t.vmap(f, axis_name="i"), axis_name="j"),
    "jit(vmap(vmap(f, 'i')))": lambda t, f: jax.jit(t.vmap(t.vmap(f, axis_name="i"))),
}


@pytest.mark.devices(8)
@pytest.mark.parametrize("nest", NESTS)
def test_a_nest_with_a_named_inner_vmap_traces_as_often_as_jaxs(nest: str) -> None:
    """The outer transform's check traces the function per example before JAX runs the
    call; the inner transform's check, which rides JAX's trace of the same call, takes
    that record rather than tracing the function again: two calls trace it as often as
    the same nest of JAX's transforms, with the same values."""
    x = jnp.arange(12.0).reshape(2, 2, 3)
    counts, outs = {}, {}
    for name, module in (("jax", jax), ("ax", ax)):
        f, runs = counting(lambda v: v * 2 + jax.lax.axis_index("i") + jax.lax.psum(v, "i"))
        g = NESTS[nest](module, f)
        outs[name] = (g(x), g(x + 1))
        counts[name] = runs[0]
    assert counts["ax"] == counts["jax"], counts
    jax.tree.map(np.testing.assert_array_equal, outs["ax"], outs["jax"])


@pytest.mark.parametrize("order", [("eager", "jit", "jit"), ("jit", "eager", "eager")])
@pytest.mark.parametrize("nest", [n for n in NESTS if not n.startswith("jit")])
def test_a_nest_called_eagerly_and_under_jit_traces_as_often_as_jaxs(nest: str, order: tuple[str, ...]) -> None:
    """The same nest called eagerly and under `jax.jit`: where JAX's pmap answers from its
    cache of traces, the outer check reads the record kept from the earlier call (an outer
    pmap kept none and traced the function once or twice more)."""
    x = jnp.arange(6.0).reshape(1, 2, 3).repeat(jax.local_device_count() if "pmap" in nest else 2, axis=0)
    per_call: dict[str, list[int]] = {}
    for name, module in (("jax", jax), ("ax", ax)):
        f, runs = counting(lambda v: v * 2 + jax.lax.axis_index("i") + jax.lax.psum(v, "i"))
        g = NESTS[nest](module, f)
        per_call[name] = []
        for how in order:
            before = runs[0]
            (g if how == "eager" else jax.jit(g))(x)
            per_call[name].append(runs[0] - before)
    assert per_call["ax"] == per_call["jax"], per_call


def test_a_nest_whose_inner_call_differs_traces_the_inner_function_itself() -> None:
    """A record offered by the outer check serves only a call of the same structure and
    abstract values: an outer function that calls the inner transform on other values
    gets the inner function traced for them, and JAX's values."""
    inner_jax = jax.vmap(lambda v: v + jax.lax.axis_index("i"), axis_name="i")
    inner_ax = ax.vmap(lambda v: v + jax.lax.axis_index("i"), axis_name="i")
    x = jnp.arange(12.0).reshape(2, 2, 3)
    want = jax.vmap(lambda v: inner_jax(v[:, :2]) * 2)(x)
    got = ax.vmap(lambda v: inner_ax(v[:, :2]) * 2)(x)
    np.testing.assert_array_equal(got, want)


@pytest.mark.devices(8)
@pytest.mark.parametrize("outer", ["vmap", "pmap"])
def test_an_inner_transform_called_twice_with_other_static_values_gets_each_its_own(outer: str) -> None:
    """Records offered by the outer check close over the inner call's unmapped Python
    scalars: a call with another scalar (even -0.0 for 0.0) is traced for its own."""
    x = jnp.arange(12.0).reshape(2, 2, 3) + 1
    outs = {}
    for name, module in (("jax", jax), ("ax", ax)):
        inner = module.vmap(lambda v, s: v / s + jax.lax.axis_index("i"), in_axes=(0, None), axis_name="i")
        g = getattr(module, outer)(
            lambda v, inner=inner: (inner(v, 2.0) - inner(v, 3.0), inner(v, 0.0), inner(v, -0.0))
        )
        outs[name] = g(x)
    jax.tree.map(np.testing.assert_array_equal, outs["ax"], outs["jax"])


def test_a_function_wrapping_a_checked_transform_is_itself_mapped() -> None:
    """A user's `functools.wraps` around a checked vmap copies its attributes; mapping that
    wrapper runs it (and the vmap inside), as with JAX's vmap, not what the copied
    attributes point to."""
    import functools

    def f(v: jax.Array) -> jax.Array:
        return v * 2 + jax.lax.axis_index("i")

    results = {}
    for name, module in (("jax", jax), ("ax", ax)):
        inner = module.vmap(f, axis_name="i")
        calls: list[int] = []

        @functools.wraps(inner)
        def outer(v: jax.Array, inner: Any = inner, calls: list[int] = calls) -> jax.Array:
            calls.append(1)
            return inner(v) + 1  # type: ignore[no-any-return]

        results[name] = (module.vmap(outer, axis_name="j")(jnp.ones((2, 4, 3))), len(calls))
    assert results["ax"][1] == results["jax"][1] == 1
    np.testing.assert_array_equal(results["ax"][0], results["jax"][0])


def test_a_copy_is_the_transform_itself_as_with_jax() -> None:
    """`copy` gives back the function JAX returns: so `jax.jit` of a copy finds what JAX
    cached for the original, and traces nothing again."""
    traces = {"jax": 0, "ax": 0}
    for name, transform in (("jax", jax.vmap), ("ax", ax.vmap)):

        def f(x: jax.Array, name: str = name) -> jax.Array:
            traces[name] += 1
            return x * 2

        g = transform(f)
        jax.jit(g)(jnp.ones((8, 2)))
        for again in (copy.copy(g), copy.deepcopy(g)):
            assert again is g
            jax.jit(again)(jnp.ones((8, 2)))
    assert traces == {"jax": 1, "ax": 1}


def test_the_transform_shows_the_functions_annotations_as_jax_does() -> None:
    import typing

    def f(x: jax.Array, n: int = 3) -> jax.Array:
        return x * n

    for made in (ax.vmap(f), ax.pmap(f)):
        assert made.__annotations__ == jax.vmap(f).__annotations__ == f.__annotations__
        assert typing.get_type_hints(made) == typing.get_type_hints(f)


def test_annotations_of_a_mapped_function_are_not_its_per_example_dims() -> None:
    """JAX's `wraps` copies the mapped function's annotations onto `jax.vmap(f)` (and an
    axischeck transform shows them): they describe f's arguments, not the batched ones."""
    from typing import Annotated

    def f(x: Annotated[jax.Array, "n"]) -> Annotated[jax.Array, "n"]:
        return x * 2

    x = jnp.ones((3, 4, 5))
    assert ax.vmap(jax.vmap(f))(x).shape == jax.vmap(jax.vmap(f))(x).shape == (3, 4, 5)
    assert ax.vmap(ax.vmap(f))(x).shape == (3, 4, 5)
    # ... nor of a layer that copies them again: jit, checkpoint, a decorator
    for layer in (jax.jit, jax.checkpoint, lambda g: functools.wraps(g)(lambda *a: g(*a))):
        for inner in (jax.vmap, ax.vmap):
            assert ax.vmap(layer(inner(f)))(x).shape == (3, 4, 5)
        with ax.patch():
            assert jax.vmap(layer(jax.vmap(f)))(x).shape == (3, 4, 5)
    assert ax.vmap(ax.vmap(f)).predict((3, 4, 5)).shapes == (3, 4, 5)
    with pytest.raises(ax.ArgumentError, match="rank 1"):
        ax.vmap(f)(x)  # f's own dims still count where f is mapped once


@pytest.mark.parametrize(
    "make",
    [
        lambda fun: ax.vmap(fun),
        lambda fun: ax.vmap(fun, axis_name="i"),  # JAX is then given the recorder of the function
        lambda fun: ax.pmap(fun),
    ],
    ids=["vmap", "vmap with axis_name", "pmap"],
)
def test_what_is_not_a_function_is_refused_as_jax_refuses_it(make: Callable[[Any], object]) -> None:
    """JAX's own exception type and message, with axischeck's account, however the
    transform holds the function."""
    with pytest.raises(TypeError, match="Expected a callable value, got 3") as info:
        make(3)
    assert isinstance(info.value, ax.SpecError)
    assert "vmap needs a callable" in str(info.value) or "pmap needs a callable" in str(info.value)
