"""Fix suggestions: concrete, and every one of them really works in JAX."""

from __future__ import annotations

import functools
import pickle
import warnings
from dataclasses import replace
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core._jax_compat import VMAP_MATCHES_CONTAINERS_BY_POSITION

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
    (suggestion,) = info.value.suggestions
    assert suggestion.as_kwargs() == {} and suggestion.transposes == ((1, (2, 1, 0)),)


def _apply(suggestion: Any, in_axes: Any, args: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    options = {"in_axes": in_axes}
    args = list(args)
    options.update(suggestion.as_kwargs())
    for i, perm in suggestion.transposes:
        args[i] = jax.ShapeDtypeStruct(tuple(args[i].shape[p] for p in perm), args[i].dtype)
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


# ------------------------------------------------ the mistakes users make most


def _loss(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ params["w"] + params["b"]).sum()


PARAMS = {"w": jnp.ones((3, 4)), "b": jnp.ones((4,))}
X = jnp.ones((8, 3))


def _refused(run: Any) -> ax.AxisCheckError:
    with pytest.raises(ax.AxisCheckError) as info:
        run()
    return info.value


def _fixes_work(err: ax.AxisCheckError, make: Any, *args: Any, **kwargs: Any) -> None:
    """Every suggestion is what its Fix line says, and JAX runs the call with it."""
    assert err.suggestions and err.fix == "; or ".join(s.text for s in err.suggestions)
    for s in err.suggestions:
        options = s.as_kwargs()
        jax.eval_shape(jax.vmap(make, **options), *args, **kwargs)


@pytest.mark.parametrize("path", ["call", "predict"])
def test_a_params_pytree_that_should_not_be_mapped(path: str) -> None:
    f = ax.vmap(_loss)
    err = _refused(lambda: f(PARAMS, X) if path == "call" else f.predict(PARAMS, X))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 0)}]
    _fixes_work(err, _loss, PARAMS, X)


def test_a_keyword_argument_is_passed_by_position_never_given_an_entry() -> None:
    err = _refused(lambda: ax.vmap(_loss, in_axes=(None, 1))(PARAMS, x=X.T))  # axischeck: ignore[AX003]
    assert "pass x by position" in err.fix and "keyword arguments over axis 0" in err.fix
    _fixes_work(err, _loss, PARAMS, X.T)  # by position, as the fix says


@pytest.mark.parametrize(
    ("in_axes", "want", "jax_runs_it"),
    [
        # a list inside where the argument is a tuple: jax.vmap matches containers by
        # position from 0.12.1 on, and runs it
        (([0, 1],), ((0, 1),), VMAP_MATCHES_CONTAINERS_BY_POSITION),
        ((0, 1), ((0, 1),), False),  # the axes of one tuple argument, not nested
    ],
)
def test_structural_in_axes_mistakes(in_axes: Any, want: Any, jax_runs_it: bool) -> None:
    def add(pair: tuple[jax.Array, jax.Array]) -> jax.Array:
        return pair[0] + pair[1].T

    pair = (jnp.arange(24.0).reshape(8, 3), jnp.arange(24.0).reshape(3, 8))
    if jax_runs_it:
        want_out = jax.vmap(add, in_axes=in_axes)(pair)
        assert ax.vmap(add, in_axes=in_axes).predict(pair).shapes == want_out.shape
        assert (ax.vmap(add, in_axes=in_axes)(pair) == want_out).all()
        return
    with pytest.raises(ValueError):
        jax.vmap(add, in_axes=in_axes)(pair)
    err = _refused(lambda: ax.vmap(add, in_axes=in_axes)(pair))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": want}]
    _fixes_work(err, add, pair)


def test_an_in_axes_tuple_one_entry_too_long() -> None:
    err = _refused(lambda: ax.vmap(_loss, in_axes=(None, 0, 0))(PARAMS, X))  # axischeck: ignore[AX001]
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 0)}]


def test_an_unbound_axis_name_is_bound_by_the_fix() -> None:
    def normalize(v: jax.Array) -> jax.Array:
        return v / jax.lax.psum(v, "batch")  # axischeck: ignore[AX005] - the mistake under test

    f = ax.vmap(normalize, axis_name="i")
    err = _refused(lambda: f.predict(X))
    assert [s.as_kwargs() for s in err.suggestions] == [{"axis_name": "batch"}]
    _fixes_work(err, normalize, X)
    with pytest.raises(NameError) as called:  # JAX's type; ours leads, JAX's misleading words follow
        f(X)
    assert isinstance(called.value, ax.FunctionError)
    head, *rest = str(called.value).splitlines()
    assert head.endswith(
        "normalize calls a collective over axis name 'batch', which no enclosing transform binds;"
        " fix: axis_name='batch'"
    )
    assert "  Fix: axis_name='batch' (this vmap has axis_name='i') binds the name the collective uses" in rest
    assert sum("unbound axis name: batch" in line for line in rest) == 1


def test_a_bare_signature_is_the_engine_and_the_command_advises_it() -> None:
    """`Signature.predict` is the engine's answer (the advice is a layer above it, which
    the engine never imports): its error has no Fix. The `axischeck` command, which
    predicts from a signature alone, asks the advice, whose candidate is checked against
    the declared signature (there is no function to run)."""
    from axischeck._advice import advise_signature

    lifted = ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(in_axes=(0, 0, 0))
    shapes = ((16, 8, 4), (4, 16, 2), (16, 8, 2))
    err = _refused(lambda: lifted.predict(*shapes))
    assert err.suggestions == () and err.fix is None
    advised = advise_signature(lifted.model(), lifted.labelled(shapes, {}), err)
    assert [s.as_kwargs() for s in advised.suggestions] == [{"in_axes": (0, 1, 0)}]
    fixed = ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(**advised.suggestions[0].as_kwargs())  # an option of .vmap
    assert fixed.predict(*shapes).shapes == (16, 8, 2)


# ------------------------- "batch size undetermined" only when it is (issue #14)


def _message(run: Any) -> str:
    with pytest.raises(ax.AxisCheckError) as info:
        run()
    return str(info.value)


S = jax.ShapeDtypeStruct


@pytest.mark.parametrize(
    ("label", "run", "size"),
    [
        (
            "a rank mistake while the other axes agree",
            lambda: ax.vmap(lambda a, b: a + b, in_axes=(0, 2)).predict(S((4, 3), jnp.float32), S((4, 3), jnp.float32)),
            "B=4",
        ),
        (
            "a str argument given an axis",
            lambda: ax.vmap(lambda a, s: a, in_axes=(0, 0)).predict(S((4, 3), jnp.float32), "s"),
            "B=4",
        ),
        (
            "pmap over more devices than there are",
            lambda: ax.pmap(lambda a: a).predict(S((len(jax.devices()) + 1, 3), jnp.float32)),
            f"B={len(jax.devices()) + 1}",
        ),
        (
            "all in_axes None with axis_size",
            lambda: ax.vmap(lambda a: a @ a, in_axes=None, axis_size=3).predict(S((4, 3), jnp.float32)),
            "B=3",
        ),
        (
            "the function fails with a known batch size",
            lambda: ax.vmap(lambda a, b: a @ b).predict(S((5, 4, 3), jnp.float32), S((5, 4, 3), jnp.float32)),
            "B=5",
        ),
    ],
)
def test_a_known_batch_size_is_shown(label: str, run: Any, size: str) -> None:
    text = _message(run)
    assert "undetermined" not in text and f"batch size {size}" in text, text


def test_a_nested_level_shows_the_outer_size_and_its_own_when_readable() -> None:
    # the inner level's axis is out of range: nothing sets its size; the outer one is known
    text = _message(lambda: ax.vmap(ax.vmap(lambda a: a, in_axes=3)).predict(S((5, 4, 3), jnp.float32)))
    assert "batch size B2=5" in text and "[2] vmap(<lambda>, in_axes=3, out_axes=0): batch size undetermined" in text
    # the inner function fails: both sizes known
    text = _message(
        lambda: ax.vmap(ax.vmap(lambda a, b: a @ b)).predict(S((5, 4, 3, 2), jnp.float32), S((5, 4, 3, 2), jnp.float32))
    )
    assert "undetermined" not in text


def test_undetermined_when_the_sizes_conflict() -> None:
    text = _message(lambda: ax.vmap(lambda a, b: a + b).predict(S((4, 3), jnp.float32), S((5, 3), jnp.float32)))
    assert "batch size undetermined" in text
    text = _message(
        lambda: ax.vmap(lambda a, b: a + b, axis_size=5, in_axes=(0, None)).predict(
            S((4, 3), jnp.float32), S((3,), jnp.float32)
        )
    )
    assert "batch size undetermined" in text


# ------------------------------------------- ranking: the most plausible fix first


def _mm(x: jax.Array, y: jax.Array) -> jax.Array:
    return x @ y


def test_the_fix_keeps_the_users_batch_size() -> None:
    # in_axes=(0, None) says the batch is x's axis 0 (size 5); mapping y's axis 1 (size 3)
    # instead also runs, but its batch size is one the user never pointed at: no fix
    x, y = S((5, 2), jnp.float32), S((2, 3, 5), jnp.float32)
    f = ax.vmap(_mm, in_axes=(0, None), signature="(n,k),(k,m)->(n,m)")
    err = _refused(lambda: f.predict(x, y))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 2)}]
    assert jax.eval_shape(jax.vmap(_mm, in_axes=(None, 1)), x, y).shape[0] == 3  # runs, but is no fix
    assert err.fix == err.suggestions[0].text


def test_many_equally_plausible_fixes_are_still_not_guessed() -> None:
    def total(x: jax.Array, y: jax.Array) -> jax.Array:
        return x.sum() + y.sum()

    # six single edits run, and each keeps one of the sizes the user's in_axes read
    x, y = S((2, 5, 5), jnp.float32), S((5, 2, 2), jnp.float32)
    f = ax.vmap(total, signature="(*a),(*b)->()")
    err = _refused(lambda: f.predict(x, y))
    assert err.suggestions == () and err.fix is None
    for in_axes in [(1, 0), (2, 0), (None, 0), (0, 1), (0, 2), (0, None)]:  # they do all run
        assert jax.eval_shape(jax.vmap(total, in_axes=in_axes), x, y).shape in ((2,), (5,))


def test_a_keyword_only_scalar_is_bound_never_given_an_entry() -> None:
    def kw(x: jax.Array, *, scale: float = 1.0) -> jax.Array:
        return x * scale

    with pytest.raises(ValueError) as jax_info:
        jax.vmap(kw)(jnp.ones((4, 3)), scale=2.0)
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(kw)(jnp.ones((4, 3)), scale=2.0)
    err = info.value
    assert isinstance(err, type(jax_info.value))
    assert err.problem.startswith("scale is passed by keyword, so vmap maps it over axis 0")
    assert err.hint == "bind scale before mapping, so it stays unmapped: functools.partial(kw, scale=...)"
    for suggestion in err.suggestions:  # none may give the keyword an entry
        jax.vmap(kw, **suggestion.as_kwargs())(jnp.ones((4, 3)), scale=2.0)


def test_a_scalar_inside_a_mapped_dict_gets_its_own_none_entry() -> None:
    """jax#3161: a dict of a scalar parameter and a vector mapped whole; the checked fix
    writes the entry out over the dict, and it computes what the per-leaf in_axes do."""

    def shift(params: dict[str, jax.Array], c: float) -> jax.Array:
        return params["a"] + params["b"] + c

    params = {"a": jnp.float32(5.0), "b": jnp.arange(5.0)}
    err = _refused(lambda: ax.vmap(shift, in_axes=(0, None))(params, 1.0))  # axischeck: ignore[AX014]
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": ({"a": None, "b": 0}, None)}]
    fixed = jax.vmap(shift, **err.suggestions[0].as_kwargs())(params, 1.0)
    assert jnp.array_equal(fixed, jnp.arange(5.0) + 6.0)


def test_a_stray_python_number_among_arrays_is_not_carried_along_unmapped() -> None:
    """jax#4563: `z + [0]` in a list of arrays is a mistake to drop; no fix keeps it."""
    z = [jnp.ones((4, n)) for n in range(1, 3)]
    err = _refused(lambda: ax.vmap(lambda x: x)([z, z + [0]]))
    assert not any("scalars inside" in s.text for s in err.suggestions)


# ------------------------------------- fixes the real-bug corpus asked for (issue #29)


def test_a_vmap_that_maps_nothing_gets_an_axis_size_that_cannot_change_the_result() -> None:
    """jax#5021: in_axes=None with out_axes=None needs axis_size; with every output
    unmapped any size computes the function once, so the checked fix names one."""

    def ident(x: jax.Array) -> jax.Array:
        return x * 2.0

    x = jnp.arange(3.0)
    err = _refused(lambda: ax.vmap(ident, in_axes=None, out_axes=None)(x))  # axischeck: ignore[AX015]
    assert [s.as_kwargs() for s in err.suggestions] == [{"axis_size": 1}]
    assert err.fix == err.suggestions[0].text
    fixed = jax.vmap(ident, in_axes=None, out_axes=None, **err.suggestions[0].as_kwargs())(x)
    assert jnp.array_equal(fixed, ident(x))


@pytest.mark.parametrize(
    "options",
    [
        {"out_axes": 0},  # the size is how many copies come out: the user's to say
        {"out_axes": None, "axis_name": "i"},  # a collective could count the size
    ],
)
def test_no_axis_size_is_guessed_where_the_size_would_change_the_result(options: dict[str, Any]) -> None:
    err = _refused(lambda: ax.vmap(lambda x: x * 2.0, in_axes=None, **options)(jnp.arange(3.0)))
    assert not any("axis_size" in s.as_kwargs() for s in err.suggestions)


def _mesh(size: int = 2) -> jax.sharding.Mesh:
    return jax.make_mesh((size,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))


@pytest.mark.devices(8)
def test_trailing_none_entries_past_an_arguments_rank_are_dropped() -> None:
    """jax#18951: `P(None)` for a scalar (of a function taking *args): None splits nothing,
    so the spec without it is the same split."""

    def add_all(*xs: jax.Array) -> jax.Array:
        return xs[0] + xs[1]

    f = ax.shard_map(add_all, mesh=_mesh(), in_specs=(P(), P(None)), out_specs=P())  # axischeck: ignore[AX011]
    err = _refused(lambda: f(jnp.float32(1.0), jnp.float32(2.0)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_specs": (P(), P())}]
    assert "xs[1] (rank 0)" in err.fix
    fixed = jax.shard_map(add_all, mesh=_mesh(), out_specs=P(), **err.suggestions[0].as_kwargs())
    assert fixed(jnp.float32(1.0), jnp.float32(2.0)) == 3.0


@pytest.mark.devices(8)
def test_a_spec_that_splits_an_axis_the_argument_lacks_is_not_trimmed() -> None:
    f = ax.shard_map(lambda x: x, mesh=_mesh(), in_specs=P(None, "x"), out_specs=P())
    err = _refused(lambda: f(jnp.ones(8)))
    assert not any("in_specs" in s.as_kwargs() for s in err.suggestions)


@pytest.mark.devices(8)
def test_a_scalar_given_a_split_gets_the_empty_spec() -> None:
    """jax#15602: a learning rate given the weights' `P('x')`. A scalar has no dim to
    split, so every device gets it whole: checked against the program on one device."""

    def sgd(w: jax.Array, lr: jax.Array) -> jax.Array:
        return w - lr * jnp.sign(w)

    f = ax.shard_map(sgd, mesh=_mesh(), in_specs=(P("x"), P("x")), out_specs=P("x"))  # axischeck: ignore[AX011]
    w = jnp.arange(16.0).reshape(8, 2) - 7.0
    err = _refused(lambda: f(w, jnp.float32(0.5)))
    assert err.suggestions[0].as_kwargs() == {"in_specs": (P("x"), P())}
    assert err.fix is not None and "lr is a scalar" in err.fix
    fixed = jax.shard_map(sgd, mesh=_mesh(), out_specs=P("x"), **err.suggestions[0].as_kwargs())
    assert (fixed(w, jnp.float32(0.5)) == sgd(w, jnp.float32(0.5))).all()


@pytest.mark.devices(8)
@pytest.mark.skipif(not hasattr(jax, "smap"), reason="this JAX has no jax.smap")
def test_a_failed_smap_call_gets_its_checked_out_axes_fix() -> None:
    """out_axes None on an output that varies over the mesh axis: the out_axes that
    concatenates the blocks is checked against the probe's record of the function, so a
    failed call (one trace for its fixes) offers it."""

    def double(x: jax.Array) -> jax.Array:
        return x * 2.0

    x = jnp.arange(8.0)
    with jax.set_mesh(_mesh(4)):
        err = _refused(lambda: ax.smap(double, in_axes=0, out_axes=None, axis_name="x")(x))  # axischeck: ignore[AX018]
        assert [s.as_kwargs() for s in err.suggestions] == [{"out_axes": 0}]
        fixed = jax.smap(double, in_axes=0, axis_name="x", **err.suggestions[0].as_kwargs())(x)
    assert jnp.array_equal(fixed, x * 2.0)


@pytest.mark.devices(8)
@pytest.mark.skipif(not hasattr(jax, "smap"), reason="this JAX has no jax.smap")
def test_a_negative_smap_axis_is_counted_from_the_front() -> None:
    """jax#5652's kind of data, stored batch-last, split with in_axes=-1, out_axes=-1:
    jax.smap splits axis 0 for a negative axis, whose 3 channels 4 devices do not
    divide. The fix counts both axes from the front, checked against the one-device
    program (each channel standardized over time, whatever the batch split)."""

    def normalize(x: jax.Array) -> jax.Array:
        return (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-6)

    x = jnp.sin(jnp.arange(120.0) * 0.13).reshape(3, 5, 8)
    with jax.set_mesh(_mesh(4)):
        with pytest.warns(ax.AxisCheckWarning, match="splits .* axis 0 for a negative axis"):
            f = ax.smap(normalize, in_axes=-1, out_axes=-1, axis_name="x")  # axischeck: ignore
        err = _refused(lambda: f(x))
        (fix,) = err.suggestions
        assert fix.as_kwargs() == {"in_axes": 2, "out_axes": 2} and fix.is_fix
        fixed = jax.smap(normalize, axis_name="x", **fix.as_kwargs())(x)
    np.testing.assert_allclose(fixed, normalize(x), rtol=1e-5, atol=1e-5)


@pytest.mark.devices(8)
def test_a_failed_shard_map_call_gets_its_checked_out_specs_fix() -> None:
    f = ax.shard_map(lambda x: x * 2.0, mesh=_mesh(4), in_specs=P("x"), out_specs=P())
    err = _refused(lambda: f(jnp.arange(8.0)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"out_specs": P("x")}]


@pytest.mark.devices(8)
def test_a_static_pmap_argument_passed_by_keyword_is_passed_by_position() -> None:
    """jax#3007: static_broadcasted_argnums counts positions; the checked fix moves the
    keyword argument to the position it names, where it is static."""

    def add(a: jax.Array, b: int) -> jax.Array:
        return a + b

    x = jnp.ones((4, 1))
    err = _refused(lambda: ax.pmap(add, static_broadcasted_argnums=(1,))(x, b=1))  # axischeck: ignore[AX003]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {} and fix.by_position == ("b",)
    assert (
        err.fix == "pass b by position, not by keyword: static_broadcasted_argnums counts positions (b is argument 1)"
    )
    assert jnp.array_equal(jax.pmap(add, static_broadcasted_argnums=(1,))(x, 1), x + 1)


def test_a_reading_the_shapes_support_as_well_is_shown_beside_the_fix_not_as_it() -> None:
    """JAX's SPMD MNIST example with the labels laid out (per device, devices): `(0, 1)`
    and `(1, 0)` are both supported by two arguments; the fix is one reading, the other
    is named for the user to choose, and only the fix is in `suggestions`."""

    def step(images: jax.Array, labels: jax.Array) -> jax.Array:
        return jnp.sum(images) + jnp.sum(labels)

    err = _refused(lambda: ax.vmap(step).predict(S((4, 2, 3), jnp.float32), S((2, 4), jnp.float32)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, 1)}]
    assert err.fix == (
        "in_axes=(0, 1) would map labels's axis 1 (size 4). The shapes fit another reading as well:"
        " in_axes=(1, 0) would map images's axis 1 (size 2); nothing in the call tells them apart:"
        " check which one you meant"
    )


def _squared_error(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.sum((x @ w - y) ** 2)


@pytest.mark.parametrize("in_axes", [(None, 0, 0), (None, 0, None), (0, 0, 0)])
def test_a_failed_call_offers_the_fixes_predict_offers(in_axes: tuple[int | None, ...]) -> None:
    """The same search with the same trace budget, whether the engine or JAX found the
    mistake (`(None, 0, None)` fails inside the function, whose labels y, laid out
    (outputs, batch), were left unmapped: both offer mapping y's axis of the batch size)."""
    w, x, y = jnp.ones((3, 2)), jnp.ones((8, 3)), jnp.ones((2, 8))
    predicted = _refused(lambda: ax.vmap(_squared_error, in_axes=in_axes).predict(w, x, y))
    with pytest.raises(ax.AxisCheckError) as called:
        ax.vmap(_squared_error, in_axes=in_axes)(w, x, y)
    assert called.value.suggestions == predicted.suggestions != ()
    if in_axes == (None, 0, None):
        with pytest.raises(Exception) as jax_raised:
            jax.vmap(_squared_error, in_axes=in_axes)(w, x, y)
        assert isinstance(called.value, type(jax_raised.value))  # JAX's own exception type, kept
        assert [s.as_kwargs() for s in called.value.suggestions] == [{"in_axes": (None, 0, 1)}]


def test_an_argument_left_unmapped_that_is_per_example_gets_its_entry() -> None:
    """A per-example noise vector given None: the function fails per example (its dot
    meets the whole batch), and mapping that argument alone, at its axis of the batch
    size, runs and keeps every other entry: the checked fix, which computes the per-example
    dot products; a shared scale stays unmapped."""

    def step(state: jax.Array, noise: jax.Array, scale: float) -> jax.Array:
        return jnp.dot(state, noise) * scale

    states = jax.random.normal(jax.random.key(0), (8, 3))
    noise = jax.random.normal(jax.random.key(1), (8, 3))
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions") as info:
        ax.vmap(step, in_axes=(0, None, None))(states, noise, 2.0)
    err = info.value
    assert isinstance(err, ax.FunctionError)
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, 0, None)}]
    assert err.fix == "in_axes=(0, 0, None) would map noise's axis 0 (size 8), the others as they are"
    fixed = jax.vmap(step, in_axes=(0, 0, None))(states, noise, 2.0)
    np.testing.assert_allclose(fixed, jnp.sum(states * noise, axis=1) * 2.0, rtol=1e-5)
    # The noise laid out (features, batch): its axis of the batch size.
    with pytest.raises(ax.FunctionError) as laid_out:
        ax.vmap(lambda s, n: s * n, in_axes=(0, None))(states, noise.T)
    assert [s.as_kwargs() for s in laid_out.value.suggestions] == [{"in_axes": (0, 1)}]


def test_a_vector_mapped_to_scalars_where_another_argument_was_the_batch_gets_the_swap_said() -> None:
    """diffrax 8b0c2e6's neural ODE: the times mapped (each example a scalar, which
    `jnp.diff` refuses) and the batch of initial states passed whole. The axes swapped run;
    nothing in the call says the batch is 3 rather than 6, so it is no Fix, but JAX's error
    gets it with what it changes ("Runs, but ..."), in place of no word at all."""

    def solve(ts: jax.Array, y0: jax.Array) -> jax.Array:
        def step(y: jax.Array, dt: jax.Array) -> tuple[jax.Array, jax.Array]:
            return y + dt * jnp.tanh(y), y

        _, ys = jax.lax.scan(step, y0, jnp.diff(ts))
        return ys

    ts, y0 = jnp.linspace(0.0, 1.0, 6), jnp.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match="diff requires input that is at least one dimensional") as info:
        ax.vmap(solve, in_axes=(0, None))(ts, y0)
    assert not isinstance(info.value, ax.AxisCheckError)  # JAX's own error, with axischeck's note
    (note,) = [n for n in info.value.__notes__ if n.startswith("axischeck:")]
    assert "Runs, but it unmaps ts" in note
    assert "in_axes=(None, 0) would map y0's axis 0 (size 3) and pass ts whole (the axes swapped)" in note
    assert jax.vmap(solve, in_axes=(None, 0))(ts, y0).shape == (3, 5, 2)


@pytest.mark.parametrize(
    ("fun", "args", "in_axes"),
    [
        (lambda x, y: jnp.linalg.norm(x - y, axis=1), (jnp.ones((4, 3)), jnp.zeros((4, 3))), 0),
        (
            lambda logits, label: -jnp.dot(jax.nn.log_softmax(logits), jax.nn.one_hot(label, 10)),
            (jnp.ones((64, 10)), jnp.arange(8)),
            0,
        ),
        (lambda x, t: x * jnp.exp(-t), (jnp.ones((4, 3)), jnp.ones(10)), 0),
        (
            lambda x, label: -jax.nn.log_softmax(jnp.arange(12.0).reshape(4, 3) @ x)[label],
            (jnp.ones((8, 3)), jnp.arange(7) % 4),
            0,
        ),
        (lambda x, t: jnp.concatenate([x, t]), (jnp.ones((5, 3)), jnp.linspace(0.0, 1.0, 5)), 0),
        (
            lambda x, train: jnp.dot(jnp.exp(-jnp.sum((train[0] - x) ** 2, axis=0)), train[1]),
            (jnp.ones((6, 3)), (jnp.ones((6, 3)), jnp.ones(6))),
            (0, None),
        ),
    ],
    ids=[
        "pairwise distance",
        "logits passed whole",
        "decay over times",
        "labels one short",
        "a time per example",
        "a training set passed whole",
    ],
)
def test_a_reading_that_only_runs_is_no_fix(fun: Any, args: Any, in_axes: Any) -> None:
    """Changes that run but pair each example with a whole batch, or map what was passed
    whole on purpose: an argument left whole runs where the function takes a batch on
    one side (a matrix-vector product, broadcasting, a concatenation), a training set
    mapped beside as many queries runs too. Neither the other side's failure, nor two
    batches of one size, nor a per-example scalar the function mishandles make one the
    fix."""
    with pytest.raises(Exception) as info:
        ax.vmap(fun, in_axes=in_axes)(*args)
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))


@pytest.mark.devices(8)
def test_a_fix_jax_would_refuse_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """JAX's own abstract evaluation of the fixed transform has the last word where the
    engine ruled by its own model (a pmap here): a fix the engine accepted but JAX refuses
    (one planted in the search) is dropped."""
    import axischeck._advice as advice
    from axischeck._advice import Suggestion

    planted = Suggestion("in_axes=(0, 3) would map b's axis 3", (("in_axes", (0, 3)),))
    monkeypatch.setattr(advice, "candidates", lambda *args: [planted])
    monkeypatch.setattr(advice, "judged", lambda found, *rest: found)  # the planted ones stand as found

    def total(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.sum(a) + jnp.sum(b)

    f = ax.pmap(total)
    err = _refused(lambda: f.predict(S((2, 3), jnp.float32), S((4, 3), jnp.float32)))
    assert err.suggestions == () and err.fix is None
    accepted = replace(planted, options=(("in_axes", (0, None)),))
    monkeypatch.setattr(advice, "candidates", lambda *args: [accepted])
    err = _refused(lambda: f.predict(S((2, 3), jnp.float32), S((4, 3), jnp.float32)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, None)}]  # JAX runs it


def test_a_declared_signature_needs_no_run_of_the_function_for_its_fix() -> None:
    """predict with a signature answers without running the function, whose body may be
    a stub: the fix it finds is not dropped because the stub cannot run."""

    def stub(a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
        raise NotImplementedError

    f = ax.vmap(stub, signature="(n),(n),(n)->()")
    err = _refused(lambda: f.predict(S((8, 2), jnp.float32), S((8, 2), jnp.float32), S((2, 8), jnp.float32)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, 0, 1)}]


def test_a_declared_signature_vouches_for_leaving_one_argument_unmapped() -> None:
    """One mapped argument on each side of a batch-size conflict says nothing about which
    batch was meant, unless a signature does: `(n),(n,m)->(m)` only fits y unmapped."""
    f = ax.vmap(lambda x, y: x @ y, signature="(n),(n,m)->(m)")
    err = _refused(lambda: f.predict(S((3, 4), jnp.float32), S((4, 5), jnp.float32)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, None)}]
    assert str(err).splitlines()[0].endswith("; fix: in_axes=(0, None)")


def test_a_batch_size_the_user_never_pointed_at_ranks_last_but_is_still_a_fix() -> None:
    """`in_axes=(1, 0)` reads a batch of 4 from both arguments, but the signature leaves
    only one reading: x mapped at axis 0 (size 3), y unmapped. It is the fix, not an
    option that only makes the shapes agree."""
    f = ax.vmap(lambda x, y: x @ y, in_axes=(1, 0), signature="(n),(n,m)->(m)")
    err = _refused(lambda: f.predict(S((3, 4), jnp.float32), S((4, 5), jnp.float32)))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (0, None)}]
    assert not any(n.startswith("Runs, but only") for n in err.notes)


def test_shapes_only_options_do_not_crowd_out_the_fix() -> None:
    """The one ranking rule: the first reading that does what the program means is the
    fix, the others that do as well are ties beside it, and those that only make the
    shapes agree come last and do not count against the limit; more equally good
    readings than `MAX_SHOWN`: none is the fix."""
    from axischeck._advice import Suggestion
    from axischeck._advice._rank import MAX_SHOWN, rank

    shard_like = object()  # a model other than a vmap or pmap level: no rule from in_axes applies
    fix = Suggestion("in_axes=(0, None)", (("in_axes", (0, None)),))
    others = [replace(fix, text=f"reading {i}") for i in range(MAX_SHOWN - 1)]
    only = [replace(fix, text=f"only {i}", shapes_only="why") for i in range(MAX_SHOWN)]
    ranked = rank(shard_like, None, [*only[:1], fix, *others, *only[1:]])  # type: ignore[arg-type]
    assert ranked == [fix, *(replace(o, tie=True) for o in others), *only]
    assert ranked[0].is_fix and not any(s.is_fix for s in ranked[1:])
    assert rank(shard_like, None, [fix, *others, replace(fix, text="one more")]) == []  # type: ignore[arg-type]


@pytest.mark.devices(4)
def test_an_indivisible_batch_gets_the_same_devices_in_another_mesh_shape() -> None:
    """LWM#39: a batch of one split over ('dp', 'fsdp') of 4 devices; the project's fix
    moved the devices to 'sp'. The checked fix is that mesh, over the same devices."""
    devices = jax.devices()[:4]
    mesh = jax.sharding.Mesh(np.array(devices).reshape(1, 4, 1), ("dp", "fsdp", "sp"))
    spec = P(("dp", "fsdp"), "sp", None)

    def attend(q: jax.Array) -> jax.Array:
        return q * 2.0

    q = jnp.ones((1, 8, 4))
    err = _refused(lambda: ax.shard_map(attend, mesh=mesh, in_specs=spec, out_specs=spec)(q))
    fix = err.suggestions[0]
    new = fix.as_kwargs()["mesh"]
    assert dict(new.shape) == {"dp": 1, "fsdp": 1, "sp": 4} and list(new.devices.flat) == devices
    assert str(err).splitlines()[0].endswith("; fix: the mesh reshaped to (1, 1, 4)")
    assert err.fix is not None and err.fix.startswith(
        "the mesh reshaped to (1, 1, 4) ({'dp': 1, 'fsdp': 1, 'sp': 4}), the same 4 devices, so that axis 0 of q"
        " (size 1) splits evenly: mesh=jax.sharding.Mesh(mesh.devices.reshape(1, 1, 4), ('dp', 'fsdp', 'sp'))"
    )
    out = jax.shard_map(attend, mesh=new, in_specs=spec, out_specs=spec)(q)
    assert jnp.array_equal(out, q * 2.0)
    built = jax.sharding.Mesh(mesh.devices.reshape(1, 1, 4), ("dp", "fsdp", "sp"))  # the code the fix shows
    assert jnp.array_equal(jax.shard_map(attend, mesh=built, in_specs=spec, out_specs=spec)(q), q * 2.0)


@pytest.mark.devices(4)
def test_a_mesh_fix_keeps_the_axis_types_and_the_outputs_shapes() -> None:
    """The reshaped mesh is written with the mesh's own axis types (jax.make_mesh would
    make Explicit axes), and is no fix where it would change an output's shape: a
    per-device sum stacked over ('dp', 'fsdp') has one row per device of those axes."""
    from axischeck._advice._candidates import _mesh_code

    devices = jax.devices()[:4]
    explicit = (jax.sharding.AxisType.Explicit,) * 3
    mesh = jax.sharding.Mesh(np.array(devices).reshape(1, 4, 1), ("dp", "fsdp", "sp"), axis_types=explicit)
    code = _mesh_code(mesh, (1, 1, 4))
    assert code == (
        "jax.sharding.Mesh(mesh.devices.reshape(1, 1, 4), ('dp', 'fsdp', 'sp'), axis_types=(jax.sharding.AxisType"
        ".Explicit, jax.sharding.AxisType.Explicit, jax.sharding.AxisType.Explicit,))"
    )
    built = jax.sharding.Mesh(mesh.devices.reshape(1, 1, 4), ("dp", "fsdp", "sp"), axis_types=explicit)
    assert built.axis_types == mesh.axis_types and dict(built.shape) == {"dp": 1, "fsdp": 1, "sp": 4}
    spec = P(("dp", "fsdp"), "sp", None)
    q = jnp.ones((1, 8, 4))

    def block_sum(q: jax.Array) -> jax.Array:
        return jnp.sum(q, keepdims=True)[0]  # one (1, 1) block per device

    auto = jax.sharding.Mesh(np.array(devices).reshape(1, 4, 1), ("dp", "fsdp", "sp"))
    err = _refused(lambda: ax.shard_map(block_sum, mesh=auto, in_specs=spec, out_specs=P(("dp", "fsdp"), "sp"))(q))
    assert not any("mesh" in s.as_kwargs() for s in err.suggestions)


def test_unmapping_the_data_to_make_the_shapes_agree_is_no_fix() -> None:
    """Flax's VAE example with labels of batch 8 against logits of batch 64: either
    argument left unmapped runs, but one mapped argument stands on each side, so neither
    is what was meant: both are shown as only making the shapes agree, and none is a fix."""

    def xent(logits: jax.Array, labels: jax.Array) -> jax.Array:
        return -jnp.sum(jax.nn.log_softmax(logits)) * jnp.sum(jax.nn.one_hot(labels, 10))

    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(xent)(jnp.ones((64, 10)), jnp.ones((8,), jnp.int32))
    err = info.value
    assert err.suggestions == () and err.fix is None and "fix:" not in str(err).splitlines()[0]
    assert [n.split(": in_axes=")[1] for n in err.notes if n.startswith("Runs, but ")] == [
        "(0, None) would leave labels unmapped",
        "(None, 0) would leave logits unmapped",
    ]
    assert "nothing says which batch you meant" in str(err)


def test_one_side_left_unmapped_runs_but_the_shapes_do_not_say_which() -> None:
    """JAX's vmap tutorial: a convolution's kernel of 3 mapped beside signals of 2. The
    kernel passed whole runs, and the signals passed whole fail, but that failure says
    only that the signals must be mapped, not that the kernel must not be (8 inputs
    beside 7 labels fail the same way): "Runs, but ...", never a Fix."""

    def smooth(signal: jax.Array, kernel: jax.Array) -> jax.Array:
        return jnp.convolve(signal, kernel, mode="same")

    signal, kernel = jnp.arange(10.0).reshape(2, 5), jnp.array([0.25, 0.5, 0.25])
    err = _refused(lambda: ax.vmap(smooth)(signal, kernel))
    assert err.fix is None and not any(s.is_fix for s in err.suggestions)
    assert "Runs, but it unmaps kernel" in str(err) and "in_axes=(0, None) would leave kernel unmapped" in str(err)


def test_a_stack_of_keys_never_outvotes_the_data_it_was_split_for() -> None:
    """DeepONet: 10 keys split for 4 initial conditions. Passed whole, the 10 keys fail,
    but that says the keys' count is wrong, not that the data was meant whole: no fix."""

    def sample(key: jax.Array, u0: jax.Array) -> jax.Array:
        return u0[jax.random.randint(key, (3,), 0, 6)]

    err = _refused(lambda: ax.vmap(sample)(jax.random.split(jax.random.PRNGKey(0), 10), jnp.ones((4, 6))))
    assert err.fix is None and not any(s.is_fix for s in err.suggestions)


def test_an_argument_that_may_be_meant_whole_is_said_never_fixed() -> None:
    """An ensemble of 2 weight matrices and one input of 2 features, both mapped by the
    default in_axes: each example gets a scalar input, which the matmul refuses. The
    input passed whole runs and is said with what it changes, but nothing in the call
    tells it from a per-example value the function mishandles (a diffusion step's
    timestep per image, of a batch as long as the images are wide): no Fix."""

    def predict(w: jax.Array, x: jax.Array) -> jax.Array:
        return jnp.tanh(w @ x)

    w, x = jnp.arange(12.0).reshape(2, 3, 2) / 10, jnp.array([1.0, -1.0])
    with pytest.raises(ValueError, match="matmul input operand 1 must have ndim at least 1") as info:
        ax.vmap(predict)(w, x)
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    (note,) = [n for n in info.value.__notes__ if n.startswith("axischeck:")]
    assert "Runs, but it passes x whole to every example" in note and "in_axes=(0, None)" in note


@pytest.mark.devices(8)
def test_an_argument_passed_whole_beside_split_ones_is_split_like_them() -> None:
    """tpu-inference#681: a KV cache passed whole (`P()`) beside keys split over 'model'
    along their heads. Split along its dim of the heads' global size, the cache's update
    runs per device; the updated cache, now split too, is assembled along that dim. The
    split checked against the program on one device."""

    def update(k_new: jax.Array, cache: jax.Array) -> jax.Array:
        return cache.at[0].set(k_new)

    k_new, cache = jnp.arange(4.0), jnp.zeros((3, 4))
    f = ax.shard_map(update, mesh=_mesh(), in_specs=(P("x"), P()), out_specs=P())
    err = _refused(lambda: f(k_new, cache))
    assert err.suggestions[0].as_kwargs() == {"in_specs": (P("x"), P(None, "x")), "out_specs": P(None, "x")}
    assert err.suggestions[0].is_fix
    fixed = jax.shard_map(update, mesh=_mesh(), **err.suggestions[0].as_kwargs())
    assert (fixed(k_new, cache) == update(k_new, cache)).all()


def test_the_fix_search_counts_every_run_of_the_function() -> None:
    """A failed call runs the function at most three times to find its fixes, counted
    where it runs (a candidate traced twice, a collective's record and then the real
    nesting, costs two; a nested transform's inner level tries no fixes of its own while
    JAX's verdict on the whole nest is asked), and at most `RUNS` more to check them
    against what the program means."""
    from axischeck._advice._meaning import RUNS

    runs = [0]

    def summed(x: jax.Array, w: jax.Array) -> jax.Array:
        runs[0] += 1
        return jax.lax.psum(x @ w, "i")

    def inner(x: jax.Array, w: jax.Array) -> jax.Array:
        runs[0] += 1
        return x @ w

    x, w = jnp.ones((4, 3)), jnp.ones((3, 2))  # batch sizes 4 and 3: the mistake under test
    calls = {
        "named": lambda: ax.vmap(summed, in_axes=(0, 0), axis_name="i")(x, w),
        "nested": lambda: ax.vmap(ax.vmap(inner, in_axes=(0, 0)), in_axes=(0, None))(
            jnp.ones((2, 4, 3)), jnp.ones((3, 2))
        ),
    }
    for why, call in calls.items():
        runs[0] = 0
        with pytest.raises(ax.ArgumentError):
            call()
        assert runs[0] <= 3 + RUNS, (why, runs[0])


def test_a_collective_over_an_unbound_name_is_traced_once_per_question() -> None:
    """A name no level binds fails the record with the names bound as devices' the same
    way it would fail under the real nesting: the check asks once, not twice. Nested
    named vmaps: JAX's own run (the record fails, so the function runs as JAX runs it),
    the diagnosis, and one candidate fix: four runs."""
    runs = [0]

    def stray(x: jax.Array, w: jax.Array) -> jax.Array:
        runs[0] += 1
        return jax.lax.psum(x @ w, "k")  # axischeck: ignore[AX005] - the mistake under test

    inner = ax.vmap(stray, in_axes=(0, None), axis_name="j")
    with pytest.raises(ax.FunctionError) as info:
        ax.vmap(inner, in_axes=(0, None), axis_name="i")(jnp.ones((2, 4, 3)), jnp.ones((3, 2)))
    assert isinstance(info.value, NameError) and info.value.fix is not None and "axis_name='k'" in info.value.fix
    assert runs[0] <= 4, runs[0]


def test_an_out_axes_none_entry_for_an_output_that_differs_per_example_is_never_the_fix() -> None:
    """jax#21766: out_axes (0, None) where the second output depends on the mapped data.
    The entry 0 runs, but None said one value for the batch (a pmean, or an argument meant
    unmapped, may be what is missing): it is said as what it changes, not as the fix."""

    def normalize(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return x / jnp.sum(x), jnp.sum(x)

    x = jnp.arange(12.0).reshape(3, 4) + 1.0
    err = _refused(lambda: ax.vmap(normalize, out_axes=(0, None))(x))  # axischeck: ignore[AX018]
    assert err.suggestions == () and err.fix is None
    assert (
        "Runs, but output[1] then has a value per example, where out_axes None said one for the whole batch:"
        " out_axes=(0, 0) stacks output[1] along a new axis 0, one row per example"
    ) in err.notes


@pytest.mark.devices(8)
def test_pmap_passes_an_argument_that_is_no_array_as_static() -> None:
    """jax#9248: pmap decorating a method maps `self`; in_axes None would still trace it,
    so the fix is static_broadcasted_argnums, checked against vmap of the method."""

    class Scaler:
        def __init__(self, factor: float) -> None:
            self.factor = factor

        def apply(self, x: jax.Array) -> jax.Array:
            return x * self.factor

    scaler, x = Scaler(3.0), jnp.arange(4.0)
    err = _refused(lambda: ax.pmap(Scaler.apply)(scaler, x))
    assert [s.as_kwargs() for s in err.suggestions] == [{"static_broadcasted_argnums": (0,)}]
    assert jnp.array_equal(jax.pmap(Scaler.apply, **err.suggestions[0].as_kwargs())(scaler, x), x * 3.0)


@pytest.mark.devices(8)
def test_a_spec_over_a_size_one_axis_moves_to_the_axis_it_divides() -> None:
    """tpu-inference#2988: a (1, n, h) scale written with the spec of an (n, h) array; the
    mesh axis moves to the axis it divides, checked against the program on one device."""

    def apply_scale(out: jax.Array, scale: jax.Array) -> jax.Array:
        return out * scale

    out, scale = jnp.ones((4, 4, 3)), jnp.arange(12.0).reshape(1, 4, 3)
    f = ax.shard_map(apply_scale, mesh=_mesh(), in_specs=(P(None, "x"), P("x")), out_specs=P(None, "x"))
    err = _refused(lambda: f(out, scale))
    assert err.suggestions[0].as_kwargs() == {"in_specs": (P(None, "x"), P(None, "x"))}
    assert "splits axis 1 of scale (size 4) over 'x' instead of axis 0 (size 1)" in err.fix


@pytest.mark.devices(8)
def test_out_specs_written_in_another_order_are_reordered() -> None:
    """tpu-inference#2265: two outputs' out_specs swapped; the one order in which every
    output's entry holds it is offered (here the body is the same on one device)."""
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def step(q: jax.Array, cache: jax.Array) -> tuple[jax.Array, jax.Array]:
        return cache * 2.0, q + 1.0

    f = ax.shard_map(
        step,
        mesh=mesh,
        in_specs=(P("data", "model"), P("data")),
        out_specs=(P("data", "model"), P("data")),
    )
    q, cache = jnp.arange(16.0).reshape(4, 4), jnp.arange(12.0).reshape(4, 3)
    err = _refused(lambda: f(q, cache))
    assert err.suggestions[0].as_kwargs() == {"out_specs": (P("data"), P("data", "model"))}
    assert "in the order of the outputs" in err.fix


@pytest.mark.devices(8)
def test_a_partial_sum_promised_replicated_is_named_with_psum() -> None:
    """jax#31800: A.T @ A with A's rows split: each device's block already has the whole
    result's shape, so no out_specs assembles it (each candidate runs, with another
    shape): the hint names the partial result and the psum, and nothing is a Fix."""

    def gram(rows: jax.Array) -> jax.Array:
        return rows.T @ rows

    f = ax.shard_map(gram, mesh=_mesh(), in_specs=P("x"), out_specs=P())
    err = _refused(lambda: f(jnp.arange(32.0).reshape(8, 4)))
    assert err.fix is None
    assert err.hint is not None and "already has the shape the program gives the whole (4, 4)" in err.hint
    assert "jax.lax.psum" in err.hint


def test_a_call_short_of_an_argument_is_named_not_in_axes() -> None:
    """pymob#161: in_axes has one entry per parameter, the call passes one argument fewer
    (a list unpacked with * came out empty): the parameter left without one is named."""

    def decay(y0: jax.Array, k: jax.Array, t: jax.Array) -> jax.Array:
        return y0 * jnp.exp(-k * t)

    err = _refused(lambda: ax.vmap(decay, in_axes=(0, 0, 0))(*[], jnp.ones(4), jnp.ones((4, 3))))
    assert err.hint is not None and "(y0, k, t)" in err.hint and "so t gets no argument" in err.hint


def test_a_stacked_python_value_the_function_branches_on_is_named() -> None:
    """equinox#180: a model replicated with tree_map stacks its Python flags too; the
    function branches on one, which is then traced: the flag is named, and the remedy is
    to stack only the arrays."""

    def step(net: dict[str, Any], x: jax.Array) -> jax.Array:
        return x * net["w"] if net["training"] else x

    net = {"w": jnp.ones((4, 3)), "training": jnp.array([True] * 4)}
    err = _refused(lambda: ax.vmap(step)(net, jnp.ones((4, 3))))
    assert err.hint is not None
    assert err.hint.startswith("net['training'] is an array mapped by vmap, the same value for every example")
    assert "stack only the arrays" in err.hint


def test_a_per_example_value_the_function_branches_on_gets_no_stacking_hint() -> None:
    """A flag that differs per example is data, not a stacked Python value: no hint to
    keep it a Python value (jnp.where is what it needs)."""

    def step(x: jax.Array, n: jax.Array) -> jax.Array:
        return x * 2 if n > 1 else x

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        ax.vmap(step)(jnp.ones(4), jnp.arange(4))
    assert not any("Python value" in note for note in getattr(info.value, "__notes__", ()))


def test_a_tree_of_one_replica_per_device_is_named_where_the_function_fails() -> None:
    """jaxpi#3: parameters returned by a one-device pmap keep a leading axis of size 1 on
    every leaf; a vmap over the data that passes them whole fails in the function."""

    def net(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
        return jnp.einsum("i,ij->j", x, params["kernel"]) @ params["head"]

    params = {"kernel": jnp.ones((1, 3, 4)), "head": jnp.ones((1, 4))}
    err = _refused(lambda: ax.vmap(net, in_axes=(None, 0))(params, jnp.ones((5, 3))))
    assert err.hint is not None and "leading axis of size 1" in err.hint
    assert "jax.tree.map(lambda p: p[0], params)" in err.hint


@pytest.mark.devices(8)
def test_a_spec_over_a_size_one_mesh_axis_is_dropped_from_the_in_specs() -> None:
    """A spec written for a larger mesh keeps a size-1 axis: the blocks are whole along it,
    yet JAX's types say the output varies along it, so out_specs P() is refused; the
    in_specs without that axis compute the same."""
    mesh = jax.make_mesh((1, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def total(x: jax.Array, w: jax.Array) -> jax.Array:
        return jax.lax.psum(jnp.sum(x @ w), "model")

    x, w = jnp.arange(128.0).reshape(8, 16) / 100.0, jnp.ones((16, 4))
    f = ax.shard_map(total, mesh=mesh, in_specs=(P("data", "model"), P("model")), out_specs=P())
    err = _refused(lambda: f(x, w))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_specs": (P(None, "model"), P("model"))}]
    fixed = jax.shard_map(total, mesh=mesh, out_specs=P(), **err.suggestions[0].as_kwargs())
    assert jnp.allclose(fixed(x, w), jnp.sum(x @ w))


def test_a_leaf_shaped_like_one_example_of_another_is_named_as_shared() -> None:
    """equinox#952: a (6,) time grid beside (5, 6) values in one argument, both mapped by
    its one entry: the grid looks like one example's, the same for every example, and
    the hint says to leave it unmapped with an entry per leaf."""

    def weighted_mean(series: dict[str, jax.Array]) -> jax.Array:
        return jnp.sum(series["value"] * series["time"]) / jnp.sum(series["time"])

    series = {"value": jnp.ones((5, 6)), "time": jnp.arange(1.0, 7.0)}
    err = _refused(lambda: ax.vmap(weighted_mean)(series))  # axischeck: ignore[AX013]
    assert err.hint is not None
    assert err.hint.startswith("series['time'] (6,) has the shape of one example of series['value'] (5, 6)")
    fixed = jax.vmap(weighted_mean, in_axes=({"value": 0, "time": None},))(series)
    assert fixed.shape == (5,)


def test_a_tuple_of_arrays_refused_by_an_operator_is_named_with_the_stack() -> None:
    """jax#17747: a tuple of 5 points mapped as one batch: each example gets a tuple of
    scalars, which `-` refuses; the hint names the tuple and jnp.stack."""

    def distance(point: jax.Array, centre: jax.Array) -> jax.Array:
        return jnp.sqrt(jnp.sum((point - centre) ** 2))

    points = tuple(jnp.arange(3.0) * (i + 1) for i in range(5))
    with pytest.raises(TypeError) as info:
        ax.vmap(distance, in_axes=(0, None))(points, jnp.ones(3))
    assert isinstance(info.value, ax.AxisCheckError)
    assert "point is a Python tuple of 5 arrays of shape (3,)" in str(info.value)
    assert "jnp.stack(point) (shape (5, 3))" in str(info.value)


@pytest.mark.devices(8)
def test_in_specs_with_an_entry_fewer_than_the_arguments_get_one_per_argument() -> None:
    """A tuple of in_specs one short: padded with the last entry (checked against the body
    on the whole arrays; P() for the second argument does not even fit the shapes)."""
    f = ax.shard_map(lambda a, b: a + b, mesh=_mesh(), in_specs=(P("x"),), out_specs=P("x"))  # axischeck: ignore[AX010]
    x = jnp.arange(12.0).reshape(4, 3)
    err = _refused(lambda: f(x, x))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_specs": (P("x"), P("x"))}]
    fixed = jax.shard_map(lambda a, b: a + b, mesh=_mesh(), out_specs=P("x"), **err.suggestions[0].as_kwargs())
    assert jnp.array_equal(fixed(x, x), x + x)


@pytest.mark.devices(8)
def test_an_out_spec_longer_than_the_outputs_rank_is_cut_to_it() -> None:
    """out_specs P('x', 'y') for a rank-1 output (the body reduced a dim): the entry cut to
    the rank, checked against the body on the whole array."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    f = ax.shard_map(lambda a: a.sum(1), mesh=mesh, in_specs=P("x"), out_specs=P("x", "y"))
    a = jnp.arange(32.0).reshape(8, 4)
    err = _refused(lambda: f(a))
    assert err.suggestions[0].as_kwargs() == {"out_specs": P("x")}
    assert err.fix is not None and err.fix.startswith("out_specs=P('x') (one entry per dim: the output has rank 1)")


def test_a_keyword_argument_a_tuple_in_axes_left_out_is_passed_by_position_unmapped() -> None:
    """in_axes=(0,) for x, and w passed by keyword: JAX maps w over axis 0 (size 2 against
    4). Passed by position with the entry None, the shared weight reaches every example."""

    def apply(x: jax.Array, w: jax.Array) -> jax.Array:
        return w @ x

    x, w = jnp.ones((4, 3)), jnp.arange(6.0).reshape(2, 3)
    err = _refused(lambda: ax.vmap(apply, in_axes=(0,))(x, w=w))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, None)} and fix.by_position == ("w",)
    assert jnp.allclose(jax.vmap(apply, in_axes=(0, None))(x, w), x @ w.T)


@pytest.mark.devices(8)
def test_an_out_spec_that_repeats_one_block_is_no_fix() -> None:
    """A tiled all_gather's result is the same on every device, but JAX's types say it
    varies: naming the axis in out_specs runs and repeats the gathered array per device,
    which no Fix may do: the one-device program (a tiled gather of its one block is the
    block) gives the (8, 4) array itself."""
    mesh = jax.make_mesh((2, 4), ("dcn", "ici"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def gather(block: jax.Array) -> jax.Array:
        return jax.lax.all_gather(block, "dcn", axis=0, tiled=True)

    f = ax.shard_map(gather, mesh=mesh, in_specs=P("dcn", None), out_specs=P(None, None))
    err = _refused(lambda: f(jnp.arange(32.0).reshape(8, 4)))
    assert err.suggestions == ()
    runs_but = (
        "Runs, but its output has shape (16, 4), where the program on one device gives (8, 4): out_specs=P('dcn', None)"
    )
    assert any(n.startswith(runs_but) for n in err.notes)


def _step(w: jax.Array, batch: jax.Array) -> jax.Array:
    """A pmap step that averages the weights' update over the devices: its output is the
    same on every device."""
    return w - 0.1 * jax.lax.pmean(batch[:, :3].T @ (batch[:, :3] @ w), "batch")


@pytest.mark.devices(8)
def test_identical_copies_a_pmap_passed_whole_before_are_never_mapped_as_the_fix() -> None:
    """The pmap migration guide: weights given in_axes None come back from the step
    stacked 8 times by the default out_axes=0, and the next call gets the 8 copies. Mapping
    them runs, but the first call, which passed one copy whole, would fail with it
    (out_axes=None on the step is the remedy): no Fix, and the note says so."""
    step = ax.pmap(_step, axis_name="batch", in_axes=(None, 0))
    data = jnp.arange(8 * 4 * 4, dtype=jnp.float32).reshape(8, 4, 4) / 100
    w = step(jnp.ones(3), data)
    assert w.shape == (8, 3)
    with pytest.raises(TypeError) as info:
        step(w, data)
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    (note,) = [n for n in info.value.__notes__ if n.startswith("axischeck:")]
    assert "Runs, but w's 8 slices along axis 0 are identical" in note and "out_axes=None" in note


@pytest.mark.devices(8)
def test_copies_a_pmap_returns_stacked_from_one_copy_are_never_mapped_as_the_fix() -> None:
    """The step made inline on every pass of a training loop, over a fresh partial each
    time: nothing is kept between the passes, but the step given one copy of w returns
    w stacked as the copies are, so they may be its own output fed back (out_axes=None
    is the remedy then): no Fix."""
    data = jnp.arange(8 * 4 * 4, dtype=jnp.float32).reshape(8, 4, 4) / 100
    w = jnp.ones(3)
    with pytest.raises(TypeError) as info:
        for _ in range(2):
            w = ax.pmap(functools.partial(_step), axis_name="batch", in_axes=(None, 0))(w, data)
    assert w.shape == (8, 3)  # the first pass ran
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    assert any("Runs, but w's 8 slices along axis 0 are identical copies" in n for n in info.value.__notes__)


@pytest.mark.devices(8)
def test_copies_in_two_arguments_are_mapped_together_even_where_one_alone_runs() -> None:
    """Mapping one of two replicated arguments runs (the other's whole stack broadcasts
    against the blocks) but computes an (8, 8, 2, 3) stack of the wrong sums: both are
    mapped, which computes the step on one copy of each."""

    def step(w: jax.Array, v: jax.Array, x: jax.Array) -> jax.Array:
        return x @ w + v[0]

    w, v = jnp.arange(12.0).reshape(4, 3), jnp.arange(12.0).reshape(4, 3) + 1
    x = jnp.arange(8 * 2 * 4, dtype=jnp.float32).reshape(8, 2, 4)
    with jax.numpy_rank_promotion("allow"):  # a single mapping then runs, broadcasting the other's stack
        err = _refused(lambda: ax.pmap(step, in_axes=(None, None, 0))(jnp.stack([w] * 8), jnp.stack([v] * 8), x))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, 0, 0)}
    with jax.numpy_rank_promotion("allow"):
        fixed = jax.pmap(step, **fix.as_kwargs())(jnp.stack([w] * 8), jnp.stack([v] * 8), x)
        assert jnp.allclose(fixed, jax.vmap(lambda xi: step(w, v, xi))(x))


@pytest.mark.devices(8)
def test_copies_along_another_axis_than_a_pmap_stacks_are_never_mapped_as_the_fix() -> None:
    """Slices along axis 1 repeat one column: no pmap stacks so, and mapping them changes
    what each device gets."""
    tiled = jnp.tile(jnp.arange(4.0)[:, None], (1, 8))
    with pytest.raises(ValueError) as info:
        ax.pmap(lambda w, x: x @ w + jnp.ones(3), in_axes=(None, 0))(tiled, jnp.ones((8, 2, 4)))
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))


@pytest.mark.devices(8)
def test_an_unmapped_argument_whose_slices_differ_is_still_mapped_by_the_fix() -> None:
    """Per-device weights that differ, given in_axes None by mistake: mapping them is the fix."""
    data = jnp.arange(8 * 4 * 4, dtype=jnp.float32).reshape(8, 4, 4) / 100
    w = jnp.arange(24.0).reshape(8, 3)
    err = _refused(lambda: ax.pmap(_step, axis_name="batch", in_axes=(None, 0))(w, data))
    assert err.suggestions[0].as_kwargs() == {"in_axes": (0, 0)} and err.suggestions[0].is_fix


def test_a_tuple_whose_in_axes_entry_is_a_tuple_of_the_wrong_length_is_not_called_ragged() -> None:
    """Equinox cc90d59: a function of one tuple argument that grew from two items to three,
    its nested in_axes left at two entries. The items have different shapes, but the
    entry gives them their own axes: the mistake is the entry's length, not a ragged
    container mapped as one array."""

    def run(arg: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        a, b, w = arg
        return jnp.sum(a @ w) + jnp.sum(b @ w)

    f = ax.vmap(run, in_axes=((0, None),))
    err = _refused(lambda: f((jnp.ones((4, 3)), jnp.ones((4, 3)), jnp.eye(3))))  # axischeck: ignore[AX017]
    assert "tuple of length 2, but argument arg is a tuple of length 3" in str(err)
    assert "ragged" not in str(err) and (err.hint is None or "different shapes" not in err.hint)


@pytest.mark.devices(8)
def test_trailing_none_entries_written_in_and_out_are_dropped_from_both() -> None:
    """A vector given `P('x', None)` in and out, as for a matrix: the Nones split nothing,
    so both specs without them are the same split, and the fix drops them from both."""

    def double(block: jax.Array) -> jax.Array:
        return block * 2.0

    x = jnp.arange(4.0)
    err = _refused(lambda: ax.shard_map(double, mesh=_mesh(), in_specs=P("x", None), out_specs=P("x", None))(x))
    assert err.suggestions[0].as_kwargs() == {"in_specs": P("x"), "out_specs": P("x")}
    assert err.suggestions[0].is_fix
    fixed = jax.shard_map(double, mesh=_mesh(), **err.suggestions[0].as_kwargs())
    assert (fixed(x) == double(x)).all()


@pytest.mark.devices(8)
def test_an_argument_split_where_it_is_meant_whole_is_passed_whole() -> None:
    """The pmap migration guide: `pmap(add_bias, in_axes=(0, None))` rewritten as a
    shard_map whose in_specs split the bias like the rows. Each device then adds 2 of the
    bias's 4 values to a row of 4: passed whole (`P()`), the bias is added to every row,
    which the program on one device computes too (the check the fix passed)."""

    def add_bias(x: jax.Array, bias: jax.Array) -> jax.Array:
        return jnp.tanh(x + bias[None, :])

    x, bias = jnp.arange(8.0).reshape(2, 4) / 10, jnp.linspace(-1.0, 1.0, 4)
    f = ax.shard_map(add_bias, mesh=_mesh(), in_specs=(P("x"), P("x")), out_specs=P("x"))
    with pytest.raises(TypeError) as info:
        f(x, bias)
    (fix,) = info.value.suggestions  # type: ignore[attr-defined]
    assert fix.as_kwargs() == {"in_specs": (P("x"), P())} and fix.is_fix
    fixed = jax.shard_map(add_bias, mesh=_mesh(), out_specs=P("x"), **fix.as_kwargs())
    assert jnp.allclose(fixed(x, bias), add_bias(x, bias))


def test_parameters_with_a_dim_of_the_batch_size_are_still_left_whole_by_the_fix() -> None:
    """An MLP's layers as (W, b) pairs mapped by the default in_axes, a hidden width of
    128 beside a batch of 128: every array of params has an axis 0, so nothing says part
    of it is per example (a State beside a scalar does), and leaving it whole is the fix.
    Nor are the layers, of other shapes, a list of trees to stack."""

    def predict(params: list[tuple[jax.Array, jax.Array]], x: jax.Array) -> jax.Array:
        (w1, b1), (w2, b2) = params
        return jax.nn.relu(x @ w1 + b1) @ w2 + b2

    params = [(jnp.ones((16, 8)), jnp.zeros(8)), (jnp.ones((8, 3)), jnp.zeros(3))]
    err = _refused(lambda: ax.vmap(predict)(params, jnp.ones((8, 16))))  # axischeck: ignore[AX013]
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 0)}]
    assert err.hint is None or "stack" not in err.hint


def test_per_example_labels_with_identical_rows_are_still_mapped_by_the_fix() -> None:
    """One-hot labels of one class, given None by mistake: their rows are identical, but
    under vmap that is per-example data as often as copies, and mapping them is the fix."""

    def loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
        return -jnp.dot(jax.nn.log_softmax(x @ w), y)

    w, x = jnp.arange(12.0).reshape(4, 3) / 10, jnp.arange(32.0).reshape(8, 4) / 10
    y = jax.nn.one_hot(jnp.full(8, 2), 3)
    err = _refused(lambda: ax.vmap(loss, in_axes=(None, 0, None))(w, x, y))
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 0, 0)}]


def test_a_mapped_argument_the_function_needs_as_a_python_value_is_named() -> None:
    """jax#10493: the axes of a sum passed beside the data and mapped with it by the
    default in_axes: each example gets one traced axis, where jnp.sum needs Python ints.
    The hint names the argument and the entry None that passes it whole."""

    def reduce_block(x: jax.Array, axes: jax.Array) -> jax.Array:
        return jnp.sum(x, axes)

    with pytest.raises(jax.errors.ConcretizationTypeError) as info:
        ax.vmap(reduce_block)(jnp.ones((2, 3, 4)), jnp.array([0, 1]))
    assert "axes holds integers that the in_axes entry 0 maps" in str(info.value.hint)  # type: ignore[attr-defined]
    assert "the in_axes entry None" in str(info.value.hint)  # type: ignore[attr-defined]


@pytest.mark.devices(8)
def test_a_split_confirmed_only_by_rows_of_ones_is_no_fix() -> None:
    """Data of identical rows normalised over the split batch axis: each device's max is
    the global one by chance, so a bias passed whole matches the program on one device on
    these values, and on no others. Confirmed on other values of the same shapes, it is
    no fix."""

    def normalise(x: jax.Array, b: jax.Array) -> jax.Array:
        return x / x.max(0, keepdims=True) + b[None, :]

    f = ax.shard_map(normalise, mesh=_mesh(), in_specs=(P("x"), P("x")), out_specs=P("x"))
    with pytest.raises(TypeError) as info:
        f(jnp.ones((8, 4)), jnp.arange(4.0))
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    assert "on other values of these shapes" in str(info.value.__notes__)


def test_an_if_on_a_float_is_never_blamed_on_a_mapped_integer_argument() -> None:
    """A Python `if` on a mapped float beside per-example integer labels: the value needed
    concrete is a float, not the labels, which no hint names (they are per example)."""

    def loss(x: jax.Array, label: jax.Array) -> jax.Array:
        return x[label] if x.sum() > 0 else -x[label]

    with pytest.raises(jax.errors.ConcretizationTypeError) as info:
        ax.vmap(loss)(jnp.ones((4, 3)), jnp.arange(4) % 3)
    assert "label holds integers" not in str(getattr(info.value, "hint", None))


def test_a_mapped_key_is_never_passed_whole_by_the_fix() -> None:
    """One typed key mapped with the data by the default in_axes: it has no axis. Passed
    whole, it runs, but every example draws the same noise, which mapping the key said
    was not meant: "Runs, but ...", with the split that gives one key per example."""

    def reparameterize(key: jax.Array, mean: jax.Array) -> jax.Array:
        return mean + jax.random.normal(key, mean.shape)

    with pytest.raises(ValueError) as info:
        ax.vmap(reparameterize)(jax.random.key(0), jnp.zeros((4, 3)))
    assert not any(s.is_fix for s in getattr(info.value, "suggestions", ()))
    assert "jax.random.split(key, 4)" in str(info.value)


@pytest.mark.devices(8)
@pytest.mark.skipif(not hasattr(jax, "smap"), reason="this JAX has no jax.smap")
def test_a_psummed_scalar_given_an_out_axis_is_returned_whole() -> None:
    """A mean squared error whose total is psum'd over the instances, given smap's
    `out_axes=0`: a scalar has no axis to split, and the total is the same on every
    instance, so `out_axes=None` is the fix. Without the psum it is no fix: the
    instances' partial sums differ."""

    def mse(pred: jax.Array, target: jax.Array) -> jax.Array:
        return jax.lax.psum(jnp.sum((pred - target) ** 2), "x") / jax.lax.psum(pred.size, "x")

    def partial(pred: jax.Array, target: jax.Array) -> jax.Array:
        return jnp.sum((pred - target) ** 2)

    pred, target = jnp.sin(jnp.arange(8.0)), jnp.cos(jnp.arange(8.0))
    with jax.set_mesh(_mesh(4)):
        err = _refused(lambda: ax.smap(mse, in_axes=0, out_axes=0, axis_name="x")(pred, target))
        (fix,) = err.suggestions
        assert fix.as_kwargs() == {"out_axes": None} and fix.is_fix
        fixed = jax.smap(mse, in_axes=0, axis_name="x", **fix.as_kwargs())(pred, target)
        assert jnp.allclose(fixed, jnp.mean((pred - target) ** 2))
        err = _refused(lambda: ax.smap(partial, in_axes=0, out_axes=0, axis_name="x")(pred, target))
        assert not [s for s in err.suggestions if s.as_kwargs() == {"out_axes": None}]


def test_an_int_out_axes_that_fits_some_outputs_keeps_them_with_one_entry_per_output() -> None:
    """Deep Learning with JAX's `out_axes=1` for vectors, here beside their norms: the
    norms are scalars, with no axis 1 to stack along. `(1, 0)` keeps the vectors in
    columns and is the fix; `out_axes=0` also runs, but stacks them as rows: said as what
    it changes, never the fix."""

    def scale(v: jax.Array, k: jax.Array) -> tuple[jax.Array, jax.Array]:
        return k * v, jnp.linalg.norm(k * v)

    v = jnp.arange(24.0).reshape(8, 3)
    err = _refused(lambda: ax.vmap(scale, in_axes=(0, None), out_axes=1)(v, 2.0))  # axischeck: ignore
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"out_axes": (1, 0)} and fix.is_fix
    assert "Runs, but it moves output[0]'s examples from axis 1 to axis 0" in str(err)
    columns, norms = jax.vmap(scale, in_axes=(0, None), **fix.as_kwargs())(v, 2.0)
    assert columns.shape == (3, 8) and norms.shape == (8,)


def test_a_tuple_out_axes_for_a_dict_output_is_written_per_key() -> None:
    """NumPyro#1529's distributions as pytrees: a function returning a dict, given the
    tuple out_axes `(None, 0)` in the order the dict was built. Given to the keys, only
    `{'loc': 0, 'scale_tril': None}` runs (the mapped mean needs its axis): the fix.
    Where both orders run (both outputs mapped), neither is (from jax 0.12.1 vmap pairs
    them by position and runs that program)."""

    def gaussian(loc: jax.Array, cov: jax.Array) -> dict[str, jax.Array]:
        return {"scale_tril": jnp.linalg.cholesky(cov), "loc": loc * 2.0}

    loc, cov = jnp.arange(12.0).reshape(4, 3), jnp.eye(3) * 2.0
    err = _refused(lambda: ax.vmap(gaussian, in_axes=(0, None), out_axes=(None, 0))(loc, cov))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"out_axes": {"loc": 0, "scale_tril": None}} and fix.is_fix
    fixed = jax.vmap(gaussian, in_axes=(0, None), **fix.as_kwargs())(loc, cov)
    assert jnp.array_equal(fixed["loc"], loc * 2.0) and fixed["scale_tril"].shape == (3, 3)

    def pair(x: jax.Array) -> dict[str, jax.Array]:
        return {"a": x, "b": x + 1.0}

    if VMAP_MATCHES_CONTAINERS_BY_POSITION:
        return

    def nested(x: jax.Array) -> dict[str, Any]:
        return {"stats": {"mean": x.mean(), "max": x.max()}, "y": x * 2.0}

    err = _refused(lambda: ax.vmap(nested, out_axes=({"mean": 0, "max": 0}, 0))(loc))
    (fix,) = err.suggestions  # entries that are dicts themselves are given to the keys too
    assert fix.as_kwargs() == {"out_axes": {"stats": {"max": 0, "mean": 0}, "y": 0}} and fix.is_fix

    err = _refused(lambda: ax.vmap(pair, out_axes=(0, 1))(jnp.ones((4, 3))))
    assert err.fix is None and str(err).count("Runs, but") == 2, str(err)

    def six(x: jax.Array) -> dict[str, jax.Array]:
        return {"attn": x, "hidden": x, "a": x, "b": x, "c": x, "d": x}

    # Every place of the 1 runs: the first orders the search tries must not make one the fix.
    err = _refused(lambda: ax.vmap(six, out_axes=(1, 0, 0, 0, 0, 0))(jnp.ones((4, 3))))
    assert err.fix is None and "Runs, but" in str(err)


def test_an_out_axes_tuple_short_of_the_outputs_names_the_output_left_without_one() -> None:
    """Attention returning (context, weights, entropy) given `out_axes=(0, 1)`: the fix
    pads the tuple and says which output had no entry."""

    def attend(tokens: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        weights = jax.nn.softmax(tokens @ tokens.T)
        return weights @ tokens, weights, -jnp.sum(weights * jnp.log(weights))

    err = _refused(lambda: ax.vmap(attend, out_axes=(0, 1))(jnp.ones((2, 5, 4))))  # axischeck: ignore[AX004]
    assert err.suggestions[0].as_kwargs() == {"out_axes": (0, 1, 0)}
    assert "the function returns a tuple of 3, and output[2] had none" in str(err)


@pytest.mark.devices(8)
def test_an_activation_split_where_the_weight_it_meets_is_not_has_the_split_moved() -> None:
    """A row-parallel projection of a 3-D activation given the spec of a 2-D one: its
    sequence axis is split over 'x' where the weight splits the features it contracts
    with. The split moves to the features (the one-device program agrees: the fix)."""

    def project(hidden: jax.Array, w: jax.Array) -> jax.Array:
        return jax.lax.psum(jnp.einsum("bsd,dk->bsk", hidden, w), "x")

    hidden = jnp.sin(jnp.arange(2 * 4 * 6.0)).reshape(2, 4, 6)
    w = jnp.cos(jnp.arange(6 * 3.0)).reshape(6, 3)
    f = ax.shard_map(project, mesh=_mesh(), in_specs=(P(None, "x"), P("x", None)), out_specs=P())
    err = _refused(lambda: f(hidden, w))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (P(None, None, "x"), P("x", None))} and fix.is_fix
    assert "splits axis 2 of hidden (size 6) over 'x' instead of axis 1" in str(err)
    fixed = jax.shard_map(project, mesh=_mesh(), out_specs=P(), **fix.as_kwargs())
    assert jnp.allclose(fixed(hidden, w), jnp.einsum("bsd,dk->bsk", hidden, w), atol=1e-5)


@pytest.mark.devices(8)
def test_a_spec_naming_an_axis_the_mesh_lacks_gets_the_mesh_axis_in_its_place() -> None:
    """A dense layer's specs written for a mesh of 'batch' and 'model', run on one of
    'data' and 'model': 'data' in place of 'batch', in every spec alike, is the only
    renaming that runs and computes the layer (the one-device program agrees)."""

    def dense(x: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w)

    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x, w = jnp.sin(jnp.arange(40.0)).reshape(8, 5), jnp.cos(jnp.arange(60.0)).reshape(5, 12)
    specs = {"in_specs": (P("batch", None), P(None, "model")), "out_specs": P("batch", "model")}
    err = _refused(lambda: ax.shard_map(dense, mesh=mesh, **specs)(x, w))  # type: ignore[arg-type]
    (fix,) = err.suggestions
    assert fix.is_fix and fix.as_kwargs() == {
        "in_specs": (P("data", None), P(None, "model")),
        "out_specs": P("data", "model"),
    }
    assert "'data' in place of 'batch' (the mesh's axes are 'data' and 'model')" in str(err)
    assert jnp.allclose(jax.shard_map(dense, mesh=mesh, **fix.as_kwargs())(x, w), dense(x, w))


def test_data_stored_features_first_is_mapped_over_its_other_axis_as_what_it_changes() -> None:
    """The Equinox FAQ's `jax.vmap(linear)(x)` with `x` stored features-first, `(3, 5)` for
    5 examples of 3 features: the layer of 3 inputs fails on rows of 5. Only axis 1 runs,
    but it is no fix: `W @ x` with a weight built for `x @ W`, a batch of 128 as large as
    the hidden layer, runs over the 784 pixels just as well. So it is "Runs, but ...",
    saying the batch size it changes."""
    w = jnp.arange(6.0).reshape(3, 2)

    def layer(x: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w)

    x = jnp.arange(15.0).reshape(3, 5) / 10
    with pytest.raises(TypeError) as info:
        ax.vmap(layer)(x)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Fix:" not in notes and "it changes the batch size from 3 to 5" in notes, notes
    assert "in_axes=1 would map x's axis 1 (size 5) instead of axis 0" in notes

    w_in_out = jnp.ones((784, 128))  # built for x @ W, used as W @ x

    def mlp(x: jax.Array) -> jax.Array:
        return jnp.tanh(w_in_out @ x)

    with pytest.raises(TypeError) as info:
        ax.vmap(mlp)(jnp.ones((128, 784)))
    assert "Fix:" not in "\n".join(info.value.__notes__)

    def mix(x: jax.Array) -> jax.Array:
        return jnp.ones(5) @ x  # examples of 5 rows: (5, 2) and (5, 3) both run

    with pytest.raises(TypeError) as info:
        ax.vmap(mix)(jnp.ones((5, 3, 2)))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Fix:" not in notes and notes.count("Runs, but") == 2, notes


def test_raw_keys_mapped_along_their_words_get_the_one_other_axis_that_runs_as_the_fix() -> None:
    """BlackJAX 931's grid of raw keys, (chains, steps, 2), mapped with in_axes=-1: each
    example gets one uint32 word of every key, never a key, so the batch of 2 was never
    meant, and the one other axis that runs (the 5 steps) is the fix, checked against the
    program under `jax.jit` too (where the meaning check reads stand-ins of the keys)."""
    keys = jax.random.split(jax.random.PRNGKey(0), 15).reshape(3, 5, 2)
    positions = jnp.arange(3.0)

    def step_all_chains(step_keys: jax.Array, positions: jax.Array) -> jax.Array:
        return positions + jax.vmap(jax.random.normal)(step_keys)

    for wrap in (lambda f: f, jax.jit):
        with pytest.raises(TypeError) as info:
            wrap(lambda k, p: ax.vmap(step_all_chains, in_axes=(-1, None))(k, p))(keys, positions)
        (fix,) = info.value.suggestions  # type: ignore[attr-defined]
        assert fix.is_fix and fix.as_kwargs() == {"in_axes": (1, None)}, info.value
        assert "axis -1, which holds the words of its raw keys" in str(info.value)
    fixed = jax.vmap(step_all_chains, **fix.as_kwargs())(keys, positions)
    assert fixed.shape == (5, 3)

    with pytest.raises(TypeError) as info:  # two other axes run: which holds the examples is the user's to say
        ax.vmap(jax.vmap(jax.random.normal), in_axes=-1)(jax.random.split(jax.random.PRNGKey(0), 16).reshape(4, 4, 2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Fix:" not in notes and notes.count("Runs, but") == 2, notes


@pytest.mark.devices(8)
def test_a_tree_of_parameters_replicated_to_the_devices_and_given_none_is_mapped_as_copies() -> None:
    """Parameters replicated to the 8 devices (a dict of a weight and a zero bias, each
    stacked 8 times) given in_axes None by a pmap's first call: mapping them gives each
    device one copy, which computes what one copy passed whole means (the Manning book's
    evaluation pmap fed the training pmap's stacked weights): the fix, with the other
    remedy (out_axes=None where they were stacked) said beside it."""

    def predict(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
        return x @ params["w"] + params["b"][None, :]

    params = {"w": jnp.linspace(-1.0, 1.0, 12).reshape(4, 3), "b": jnp.zeros(3)}
    replicated = jax.tree.map(lambda a: jnp.stack([a] * 8), params)
    x = jnp.ones((8, 2, 4))
    with pytest.raises(TypeError) as info:
        ax.pmap(predict, in_axes=(None, 0))(replicated, x)
    (fix,) = info.value.suggestions  # type: ignore[attr-defined]
    assert fix.as_kwargs() == {"in_axes": (0, 0)}
    assert "params's 8 slices along axis 0 are identical copies" in fix.text and "out_axes=None" in fix.text
    fixed = jax.pmap(predict, **fix.as_kwargs())(replicated, x)
    assert jnp.array_equal(fixed, jax.vmap(lambda xi: predict(params, xi))(x))


@pytest.mark.devices(8)
def test_two_arguments_replicated_to_the_devices_and_given_none_are_mapped_together() -> None:
    """nequix's data-parallel step: the model and its optimizer state replicated to the
    devices up front, given in_axes None. Mapping either alone still hands the other's
    whole stack to every device; mapping both computes the step on one copy of each."""

    def step(w: jax.Array, velocity: jax.Array, x: jax.Array) -> jax.Array:
        return jnp.einsum("bi,io->bo", x, w + 0.9 * velocity)

    w, velocity = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3), jnp.full((4, 3), 0.5)
    stacked_w, stacked_v = jnp.stack([w] * 8), jnp.stack([velocity] * 8)
    x = jnp.arange(8 * 2 * 4, dtype=jnp.float32).reshape(8, 2, 4)
    err = _refused(lambda: ax.pmap(step, in_axes=(None, None, 0))(stacked_w, stacked_v, x))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, 0, 0)} and "identical copies" in fix.text
    fixed = jax.pmap(step, **fix.as_kwargs())(stacked_w, stacked_v, x)
    assert jnp.allclose(fixed, jax.vmap(lambda xi: step(w, velocity, xi))(x))


@pytest.mark.devices(8)
def test_a_python_int_a_pmap_traces_where_the_function_needs_a_size_is_made_static() -> None:
    """A Python int given in_axes None is traced by pmap all the same, and `jnp.arange(n)`
    cannot take a traced size: static_broadcasted_argnums passes it as a Python value."""

    def scale(x: jax.Array, n: int) -> jax.Array:
        return x * jnp.arange(n)

    x = jnp.ones((8, 3))
    err = _refused(lambda: ax.pmap(scale, in_axes=(0, None))(x, 3))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"static_broadcasted_argnums": (1,)} and fix.is_fix
    assert "pass n to every device as a Python value (pmap traces an argument it does not map, and the function" in (
        str(err)
    )

    def step(x: jax.Array, n: int, lr: float) -> jax.Array:
        return x * jnp.arange(n) * lr

    # Only the size is made static: a learning rate made static too would compile anew on each value.
    err = _refused(lambda: ax.pmap(step, in_axes=(0, None, None))(x, 3, 0.1))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"static_broadcasted_argnums": (1,)} and fix.is_fix
    assert jnp.array_equal(jax.pmap(scale, **fix.as_kwargs())(x, 3), x * jnp.arange(3)[None, :])


def test_an_out_axes_tuple_for_one_output_becomes_its_one_axis() -> None:
    """`out_axes=(0, 0)` written for a function that returns one array: `out_axes=0`."""

    def double(x: jax.Array) -> jax.Array:
        return x * 2.0

    x = jnp.ones((4, 3))
    err = _refused(lambda: ax.vmap(double, out_axes=(0, 0))(x))  # axischeck: ignore[AX004]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"out_axes": 0} and fix.is_fix
    assert "the function returns one array, not a tuple" in str(err)


def test_in_axes_copied_to_out_axes_for_one_output_becomes_its_batched_entry() -> None:
    """`out_axes=(0, None)`, the in_axes copied, for a function that returns one array
    that varies per example (jax#2530): the entry 0, alone. Entries that both run say
    nothing of which was meant, so neither is the fix."""

    def center(x: jax.Array, mean: jax.Array) -> jax.Array:
        return x - mean

    x, mean = jnp.arange(15.0).reshape(5, 3), jnp.ones(3)
    err = _refused(lambda: ax.vmap(center, in_axes=(0, None), out_axes=(0, None))(x, mean))  # axischeck: ignore[AX004]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"out_axes": 0} and fix.is_fix
    assert jnp.array_equal(jax.vmap(center, in_axes=(0, None), **fix.as_kwargs())(x, mean), x - mean[None, :])

    err = _refused(lambda: ax.vmap(center, in_axes=(0, None), out_axes=(0, 1))(x, mean))  # axischeck: ignore[AX004]
    assert not err.suggestions and "Fix:" not in str(err)
    assert str(err).count("Runs, but the tuple's entries do not say which axis the one array was meant") == 2


def test_a_list_inside_in_axes_written_for_one_layer_is_repeated_for_each() -> None:
    """jax#9372: an ensemble's in_axes `{'layers': [(0, 0)], ...}` written for one layer of
    a list of two: the entry repeated for each layer, the rest as written."""

    def mlp(params: dict[str, Any], x: jax.Array) -> jax.Array:
        (w1, b1), (w2, b2) = params["layers"]
        return jnp.tanh(x @ w1 + b1) @ w2 / params["temperature"] + b2

    params = {
        "layers": [(jnp.ones((3, 2, 4)), jnp.zeros((3, 4))), (jnp.ones((3, 4, 1)), jnp.zeros((3, 1)))],
        "temperature": jnp.float32(2.0),
    }
    x = jnp.array([0.3, -0.7])
    written = ({"layers": [(0, 0)], "temperature": None}, None)
    err = _refused(lambda: ax.vmap(mlp, in_axes=written)(params, x))  # axischeck: ignore[AX017]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": ({"layers": [(0, 0), (0, 0)], "temperature": None}, None)} and fix.is_fix
    want = jax.vmap(mlp, in_axes=({"layers": 0, "temperature": None}, None))(params, x)
    assert jnp.array_equal(jax.vmap(mlp, **fix.as_kwargs())(params, x), want)


class _Affine(NamedTuple):
    w: jax.Array
    b: jax.Array


def test_entries_inside_a_namedtuple_or_a_tuple_of_fields_are_never_repeated() -> None:
    """The repetition is for a list of alike items (layers): a namedtuple's entries are
    kept as it is built (the advice used to fail on rebuilding one), and a tuple's fields,
    a shared projection beside stacked weights, get no entry copied from another field."""

    def affine(p: _Affine, x: jax.Array) -> jax.Array:
        return x @ p.w + p.b

    p, x = _Affine(jnp.ones((3, 2)), jnp.zeros(2)), jnp.ones((5, 3))
    err = _refused(lambda: ax.vmap(affine, in_axes=(_Affine(0, 0), 0))(p, x))  # type: ignore[arg-type]
    assert [s.as_kwargs() for s in err.suggestions] == [{"in_axes": (None, 0)}]

    def members(params: tuple[jax.Array, jax.Array, jax.Array], x: jax.Array) -> jax.Array:
        w, b, projection = params
        return (x @ w + b) @ projection

    params = (jnp.ones((4, 4, 4)), jnp.ones((4, 4)), jnp.ones((4, 4)))
    err = _refused(lambda: ax.vmap(members, in_axes=((0, 0), None))(params, jnp.ones(4)))  # axischeck: ignore
    assert not any(s.as_kwargs() == {"in_axes": ((0, 0, 0), None)} for s in err.suggestions)


def test_the_advice_keeps_the_processs_warnings_as_they_were() -> None:
    """The fix search holds axischeck's own warnings without touching Python's filters: a
    warning the user's code issues at one place is still shown once, however many failed
    calls the advice searched between."""
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, category, *rest, **kw: shown.append(category)
        for _ in range(3):
            warnings.warn("a schedule is deprecated", UserWarning, stacklevel=1)
            with pytest.raises(ValueError):
                ax.vmap(lambda x, y: x + y)(jnp.ones((4, 3)), jnp.ones((3,)))  # axischeck: ignore
    assert shown == [UserWarning]


def test_an_error_with_advice_pickles_with_its_words() -> None:
    """Errors cross process boundaries (a pool's worker): the suggestions and the changes
    that only run travel as text and options, without the engine's records of them."""
    err = _refused(lambda: ax.vmap(lambda w, x: w @ x)(jnp.ones((2, 3, 4)), jnp.ones((4,))))  # axischeck: ignore
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.readings and again.readings[0].text == err.readings[0].text
    assert again.readings[0].outcome is None and err.readings[0].outcome is not None


def test_an_entry_0_for_a_keyword_argument_is_dropped_and_the_call_kept() -> None:
    """`in_axes=(None, 0)` with the batch passed as `y=` (jax#39450): JAX maps a keyword
    argument over axis 0 already, so `in_axes=(None,)` runs the call as written."""

    def score(prototype: jax.Array, y: jax.Array) -> jax.Array:
        return -jnp.sum((y - prototype) ** 2)

    prototype, queries = jnp.array([1.0, -1.0, 0.5]), jnp.arange(15.0).reshape(5, 3)
    err = _refused(lambda: ax.vmap(score, in_axes=(None, 0))(prototype, y=queries))  # axischeck: ignore[AX003]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (None,)} and fix.is_fix and not fix.by_position
    assert "or pass y by position with in_axes=(None, 0)" in fix.text
    expected = jax.vmap(score, in_axes=(None, 0))(prototype, queries)
    assert jnp.array_equal(jax.vmap(score, **fix.as_kwargs())(prototype, y=queries), expected)


def test_a_list_of_functions_mapped_beside_typed_keys_is_left_unmapped() -> None:
    """One in_axes 0 for keys, images and a list of augmentations to choose from: the
    functions cannot be mapped, and the fix leaves the list whole. The meaning check
    reads the typed keys' examples by their key data (it used to fail on them, and the
    fix was lost)."""

    def noise(key: jax.Array, image: jax.Array) -> jax.Array:
        return image + 0.1 * jax.random.normal(key, image.shape)

    def flip(key: jax.Array, image: jax.Array) -> jax.Array:
        return image[:, ::-1]

    def augment(key: jax.Array, image: jax.Array, choices: list[Any]) -> jax.Array:
        pick, draw = jax.random.split(key)
        return jax.lax.switch(jax.random.randint(pick, (), 0, len(choices)), choices, draw, image)

    keys, images = jax.random.split(jax.random.key(7), 4), jnp.arange(36.0).reshape(4, 3, 3)
    err = _refused(lambda: ax.vmap(augment)(keys, images, [noise, flip]))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, 0, None)} and fix.is_fix
    assert jax.vmap(augment, **fix.as_kwargs())(keys, images, [noise, flip]).shape == (4, 3, 3)


def _offset_rows(x: jax.Array, offsets: jax.Array) -> jax.Array:
    return x + offsets[:, None]


@pytest.mark.devices(8)
def test_an_argument_left_without_an_in_spec_gets_the_split_the_body_needs() -> None:
    """A per-row offset added to rows split over the mesh, given no in_spec (jax's
    shard_map docs add a bias so). Passed whole (P()) it does not fit a block of rows;
    split over the mesh axis it does, and the one-device program confirms it: the fix,
    which names the argument it is for."""
    x, offsets = jnp.arange(128.0).reshape(8, 16), jnp.arange(8.0)
    mesh = _mesh(8)
    one_spec_for_two = (P("x", None),)
    f = ax.shard_map(
        _offset_rows, mesh=mesh, in_specs=one_spec_for_two, out_specs=P("x", None)
    )  # axischeck: ignore[AX010]
    err = _refused(lambda: f(x, offsets))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_specs": (P("x", None), P("x"))} and fix.is_fix
    assert "offsets gets P('x')" in fix.text and "P('x', None))" not in fix.text  # one split, said once
    fixed = jax.shard_map(_offset_rows, mesh=mesh, out_specs=P("x", None), **fix.as_kwargs())
    assert jnp.array_equal(fixed(x, offsets), x + offsets[:, None])


@pytest.mark.devices(8)
def test_an_untiled_gather_leaves_the_one_device_program_no_reference() -> None:
    """An untiled all_gather stacks one block per device: one device stacks one, so the
    one-device program is no reference, and no candidate is called the fix."""

    def gathered_sum(x: jax.Array, b: jax.Array) -> jax.Array:
        return jax.lax.all_gather(x, "x").sum(axis=0) + b

    mesh = _mesh(8)
    f = ax.shard_map(gathered_sum, mesh=mesh, in_specs=(P("x"),), out_specs=P("x"))  # axischeck: ignore[AX010]
    err = _refused(lambda: f(jnp.arange(16.0), jnp.ones(2)))
    assert not any(s.is_fix for s in err.suggestions) and "Fix:" not in str(err)
    assert "could not be checked against what the program means" in str(err)


@pytest.mark.devices(8)
def test_two_axis_names_the_mesh_lacks_are_renamed_only_as_what_it_changes() -> None:
    """Specs written with 'batch' and 'tp' on a mesh of 'data' (2) and 'model' (4): the
    obvious renaming fails (6 columns over 4 devices), and the one that runs puts the
    data parallelism on 'model'. Nothing says which axis each name stands for: no fix."""

    def dense(x: jax.Array, w: jax.Array) -> jax.Array:
        return x @ w

    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x, w = jnp.ones((8, 5)), jnp.ones((5, 6))
    specs = {"in_specs": (P("batch", None), P(None, "tp")), "out_specs": P("batch", "tp")}
    err = _refused(lambda: ax.shard_map(dense, mesh=mesh, **specs)(x, w))  # type: ignore[arg-type]
    assert err.fix is None and not any(s.is_fix for s in err.suggestions)
    assert "nothing in the program says which mesh axis each of 'batch' and 'tp' stands for" in str(err)


@pytest.mark.devices(8)
def test_keys_split_for_another_device_count_never_unmap_the_data_as_the_fix() -> None:
    """diffusers#1451: prompts and replicated parameters of 8 beside keys split into 4
    (a count written for another host). Unmapping the prompts and the parameters runs on
    4 devices, but an array of data is unmapped beside the tree: "Runs, but ...", no fix."""

    def generate(prompt: jax.Array, params: dict[str, jax.Array], rng: jax.Array) -> jax.Array:
        return prompt @ params["embed"] + jax.random.normal(rng, prompt.shape[:-1] + (4,))

    prompts, params = jnp.ones((8, 1, 6)), {"embed": jnp.ones((8, 6, 4))}
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    err = _refused(lambda: ax.pmap(generate)(prompts, params, keys))
    assert err.fix is None and not any(s.is_fix for s in err.suggestions)
    assert "Runs, but it unmaps prompt" in str(err), str(err)


def test_a_mapped_state_handed_back_with_out_axes_none_is_returned_mapped() -> None:
    """A step over an ensemble's members, each with its weights and its cache, the cache
    updated from the member's weights and given out_axes None: it came in one per member
    and each member's data changed it, so it goes out one per member (the fix); an output
    that is no argument handed back keeps None as what it changes only."""

    def step(w: jax.Array, cache: dict[str, jax.Array], x: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        y = w @ x + cache["last"]
        return y, {"last": y}

    w, cache, x = jnp.ones((3, 4, 4)), {"last": jnp.zeros((3, 4))}, jnp.ones(4)
    run = ax.vmap(step, in_axes=(0, 0, None), out_axes=(0, None))  # axischeck: ignore[AX004]
    err = _refused(lambda: run(w, cache, x))
    (fix,) = err.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"out_axes": (0, 0)}
    assert "output[1] is cache as each example left it" in str(err)

    def norm(w: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return w @ x, jnp.linalg.norm(w)

    err = _refused(lambda: ax.vmap(norm, in_axes=(0, None), out_axes=(0, None))(jnp.ones((3, 4, 4)), x))
    assert not err.suggestions and "Runs, but output[1] then has a value per example" in str(err)


@pytest.mark.devices(8)
def test_a_spec_naming_one_mesh_axis_twice_keeps_it_at_the_dim_that_computes_the_program() -> None:
    """A bias's spec written from both of its sequence dims, `P(None, 'x', 'x')`: 'x' kept
    at the dim the scores it is added to split (the other does not run)."""

    def add_bias(scores: jax.Array, bias: jax.Array) -> jax.Array:
        return jax.nn.softmax(scores + bias, axis=-1)

    scores = jnp.sin(jnp.arange(2 * 4 * 4.0)).reshape(2, 4, 4)
    bias = jnp.cos(jnp.arange(2 * 4 * 4.0)).reshape(2, 4, 4)
    spec = P(None, "x", None)
    f = ax.shard_map(add_bias, mesh=_mesh(), in_specs=(spec, P(None, "x", "x")), out_specs=spec)
    err = _refused(lambda: f(scores, bias))
    (fix,) = err.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"in_specs": (spec, P(None, "x", None))}
    assert "splits bias's axis 1 over 'x' (its spec named it at axes 1 and 2)" in str(err)
    fixed = jax.shard_map(add_bias, mesh=_mesh(), out_specs=spec, **fix.as_kwargs())
    assert jnp.allclose(fixed(scores, bias), add_bias(scores, bias))


@pytest.mark.devices(8)
def test_a_shared_mask_split_like_the_data_is_passed_whole_before_the_data() -> None:
    """A mask shared by every batch and head, given a spec that splits it as the data:
    the per-device blocks clash. Passing the mask whole (tried before the arguments of
    more dims, which the trace budget might not reach) computes the one-device program."""

    def masked(q: jax.Array, k: jax.Array, v: jax.Array, mask: jax.Array) -> jax.Array:
        return jnp.where(mask, q * k, 0.0) + v

    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    q, k, v = (jnp.sin(jnp.arange(2 * 4 * 8.0) + i).reshape(2, 4, 8) for i in range(3))
    mask = jnp.arange(8) % 3 != 0
    spec = P("data", "model", None)
    f = ax.shard_map(masked, mesh=mesh, in_specs=(spec, spec, spec, P("data")), out_specs=spec)
    err = _refused(lambda: f(q, k, v, mask))
    (fix,) = err.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"in_specs": (spec, spec, spec, P())}
    assert jnp.allclose(
        jax.shard_map(masked, mesh=mesh, out_specs=spec, **fix.as_kwargs())(q, k, v, mask), masked(q, k, v, mask)
    )


@pytest.mark.devices(8)
@pytest.mark.skipif(not hasattr(jax, "smap"), reason="this JAX has no jax.smap")
def test_an_smap_weight_split_with_the_data_is_passed_whole() -> None:
    """smap's in_axes=0 splits the weight with the rows it multiplies: each shard then
    contracts a block of x with a slice of w. The entry None for w (each shard gets it
    whole) computes the layer."""

    def layer(x: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w)

    x, w = jnp.sin(jnp.arange(16 * 8.0)).reshape(16, 8), jnp.cos(jnp.arange(64.0)).reshape(8, 8)
    with jax.set_mesh(jax.make_mesh((8,), ("batch",), axis_types=(jax.sharding.AxisType.Auto,))):
        err = _refused(lambda: ax.smap(layer, in_axes=0, out_axes=0, axis_name="batch")(x, w))
        (fix,) = err.suggestions
        assert fix.is_fix and fix.as_kwargs() == {"in_axes": (0, None)}
        assert "passes w whole to every shard (its entry 0 split it)" in str(err)
        assert jnp.allclose(jax.smap(layer, out_axes=0, axis_name="batch", **fix.as_kwargs())(x, w), layer(x, w))


def test_a_function_of_one_scalar_mapped_over_rows_is_told_to_nest_a_vmap_per_axis() -> None:
    """A function written for one scalar (a `lax.cond` on it), given a (batch, seq) array:
    its examples are rows. It runs on scalars, so the hint nests one vmap per axis."""

    def activate(x: jax.Array) -> jax.Array:
        return jax.lax.cond(x > 1.0, lambda v: v**2, lambda v: -v, x)

    readings = jnp.arange(12.0).reshape(3, 4) / 4.0
    err = _refused(lambda: ax.vmap(activate)(readings))
    assert not err.suggestions
    assert err.hint is not None and "runs on examples of x of shape ()" in err.hint
    assert "jax.vmap(jax.vmap(activate))" in err.hint
    assert jnp.allclose(jax.vmap(jax.vmap(activate))(readings), jnp.where(readings > 1.0, readings**2, -readings))


def test_a_single_example_given_without_its_batch_axis_is_told_to_get_one() -> None:
    """A per-example function vmapped over one example of 3 features: it gets scalars. It
    runs on the example as a batch of one, so the hint gives it a batch axis."""

    def predict(x: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w)

    example, w = jnp.array([0.5, -1.0, 2.0]), jnp.ones((3, 2))
    err = _refused(lambda: ax.vmap(predict, in_axes=(0, None))(example, w))
    assert err.hint is not None and "give it a batch axis, x[None] (shape (1, 3))" in err.hint
    assert jax.vmap(predict, in_axes=(0, None))(example[None], w).shape == (1, 2)


def test_an_input_read_only_for_its_size_beside_a_key_per_member_is_passed_whole() -> None:
    """An initialiser mapped over 4 keys and a sample input of 3 features that it reads
    only for its size: as many arrays on each side, but the function reads no value of
    the sample, so it is no example's data, and passing it whole is the fix. A sample it
    reads (scaled into the weights) leaves the readings tied, as before."""

    def init(key: jax.Array, sample: jax.Array) -> jax.Array:
        return jax.random.normal(key, (sample.shape[-1], 2))

    keys, sample = jax.random.split(jax.random.key(0), 4), jnp.ones(3)
    err = _refused(lambda: ax.vmap(init)(keys, sample))
    (fix,) = err.suggestions
    assert fix.is_fix and fix.as_kwargs() == {"in_axes": (0, None)}
    assert jax.vmap(init, **fix.as_kwargs())(keys, sample).shape == (4, 3, 2)

    def init_scaled(key: jax.Array, sample: jax.Array) -> jax.Array:
        return jax.random.normal(key, (sample.shape[-1], 2)) * sample[:, None]

    err = _refused(lambda: ax.vmap(init_scaled)(keys, sample))
    assert not any(s.is_fix for s in err.suggestions)
    assert "nothing says which batch you meant" in str(err)


def test_a_state_reduced_over_an_axis_name_or_passed_through_is_never_stacked_as_the_fix() -> None:
    """Outputs shaped like a mapped argument that out_axes None may rightly call one
    value: parameters updated under an axis name (federated averaging, where the pmean of
    the update is what is missing), and parameters returned as they came in or changed
    alike on every example (None says they were meant whole). Stacking them runs: said as
    what it changes, never the fix."""

    def local_step(p: dict[str, jax.Array], x: jax.Array) -> tuple[dict[str, jax.Array], jax.Array]:
        loss = jax.lax.pmean(jnp.sum((x @ p["w"]) ** 2), "clients")
        return {"w": p["w"] - 0.1 * x[:, None]}, loss

    params, xs = {"w": jnp.ones((3, 4, 1))}, jnp.ones((3, 4))
    run = ax.vmap(local_step, out_axes=(None, None), axis_name="clients")  # axischeck: ignore[AX004]
    err = _refused(lambda: run(params, xs))
    assert not any(s.is_fix for s in err.suggestions)

    def apply(p: dict[str, jax.Array], x: jax.Array) -> tuple[dict[str, jax.Array], jax.Array]:
        return p, p["w"] @ x

    square = {"w": jnp.ones((4, 4))}
    err = _refused(lambda: ax.vmap(apply, out_axes=(None, 0))(square, jnp.ones((4, 4))))  # axischeck: ignore[AX004]
    assert not any(s.is_fix for s in err.suggestions)

    def decay(p: dict[str, jax.Array], x: jax.Array) -> tuple[dict[str, jax.Array], jax.Array]:
        return {"w": p["w"] * 0.9}, p["w"] @ x

    err = _refused(lambda: ax.vmap(decay, out_axes=(None, 0))(square, jnp.ones((4, 4))))  # axischeck: ignore[AX004]
    assert not any(s.is_fix for s in err.suggestions)


def test_noise_drawn_in_each_examples_shape_beside_stale_keys_is_no_fix() -> None:
    """Noise drawn in the shape of each image, with keys split for another count: the
    function reads only the images' shapes, but it takes each image as mapped, so the
    images may be per-example as well: no reading is the fix."""

    def noise(key: jax.Array, image: jax.Array) -> jax.Array:
        return jax.random.normal(key, image.shape)

    keys, images = jax.random.split(jax.random.key(0), 4), jnp.zeros((8, 3, 2))
    err = _refused(lambda: ax.vmap(noise)(keys, images))
    assert not any(s.is_fix for s in err.suggestions)


def test_the_nested_vmap_hint_passes_the_other_arguments_whole() -> None:
    """A function of one scalar beside a weight passed whole: the inner vmap of the hint
    maps the scalar's axis alone (it runs as written). With the weight mapped too, the
    examples are no longer one array's: no hint (each question of the engine would
    run the function once more)."""

    def gate(x: jax.Array, w: jax.Array) -> jax.Array:
        return jax.lax.cond(x > 0.5, lambda: x * w, lambda: -x)

    x, w = jnp.arange(12.0).reshape(3, 4) / 10, jnp.asarray(2.0)
    err = _refused(lambda: ax.vmap(gate, in_axes=(0, None))(x, w))
    nested = "jax.vmap(jax.vmap(gate, in_axes=(0, None)), in_axes=(0, None))"
    assert err.hint is not None and nested in err.hint
    assert jax.vmap(jax.vmap(gate, in_axes=(0, None)), in_axes=(0, None))(x, w).shape == (3, 4)

    with pytest.raises(TypeError) as info:
        ax.vmap(gate)(x, jnp.ones(3))
    assert "jax.vmap(jax.vmap(" not in "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])


def test_keys_split_for_another_count_never_move_the_datas_axis_as_the_fix() -> None:
    """4 keys beside 8 images of 4 x 4: mapping the images' rows runs, and matches the
    keys' count, but keys split for another count do not say which axis holds the
    examples: said as what it changes, never the fix."""

    def noise(key: jax.Array, image: jax.Array) -> jax.Array:
        return jax.random.normal(key, image.shape)

    keys, images = jax.random.split(jax.random.key(0), 4), jnp.zeros((8, 4, 4))
    err = _refused(lambda: ax.vmap(noise)(keys, images))
    assert not any(s.is_fix for s in err.suggestions)
    assert "to match the 4 keys, where in_axes mapped its axis 0" in str(err)


def test_a_key_grid_split_in_another_order_than_the_data_is_never_remapped_as_the_fix() -> None:
    """jax.random.split's shape argument, written (4, 3) for a (3, 4) grid under a nested
    vmap: mapping the keys' axis 1 runs, but gives each value the key of the transposed
    place. The remedy is to split in the grid's own shape: said, never the fix."""

    def perturb(key: jax.Array, value: jax.Array) -> jax.Array:
        return value + jax.random.normal(key)

    keys, grid = jax.random.split(jax.random.key(0), (4, 3)), jnp.zeros((3, 4))
    err = _refused(lambda: ax.vmap(ax.vmap(perturb))(keys, grid))
    assert not any(s.is_fix for s in err.suggestions)
    assert "key was split in the shape (4, 3), where value's dims are (3, 4)" in str(err)
    assert "jax.random.split(key, (3, 4))" in str(err)


def test_vmap_given_static_argnums_is_told_to_give_the_argument_in_axes_none() -> None:
    """jax#5617: static_argnums handed to vmap, which keeps no argument static. The
    TypeError stays Python's; the hint names the argument and the in_axes entry None."""
    with pytest.raises(TypeError) as plain:
        jax.vmap(jnp.add, static_argnums=(2,))  # type: ignore[call-arg]
    with pytest.raises(ax.SpecError) as info:
        ax.vmap(jnp.add, static_argnums=(2,))  # type: ignore[call-arg]  # axischeck: ignore
    assert isinstance(info.value, TypeError) and str(info.value).startswith(str(plain.value))
    assert "vmap keeps no argument static: give argument 2 the in_axes entry None" in str(info.value)


def test_a_negative_entry_written_for_raw_keys_says_the_keys_are_typed() -> None:
    """in_axes -2 skipped a raw key's uint32 words (keys (8, 2)); typed keys from
    jax.random.key are (8,): the fix maps axis 0 and says why -2 no longer fits."""

    def augment(key: jax.Array, column: jax.Array) -> jax.Array:
        return jax.random.uniform(key) * column

    keys, features = jax.random.split(jax.random.key(0), 8), jnp.ones((3, 8))
    err = _refused(lambda: ax.vmap(augment, in_axes=(-2, -1), out_axes=-1)(keys, features))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, -1)} and fix.is_fix
    assert "key holds typed keys (jax.random.key), with no trailing axis of key data for in_axes -2" in str(err)


def test_a_shape_tuple_mapped_by_the_default_in_axes_is_said_to_be_a_tuple() -> None:
    """jax.random.normal vmapped over keys with its shape tuple passed along: the default
    in_axes 0 reaches each int of the tuple. The fix leaves it unmapped and says why."""
    keys = jax.random.split(jax.random.key(7), 4)
    err = _refused(lambda: ax.vmap(jax.random.normal)(keys, (3,)))  # axischeck: ignore[AX016]
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (0, None)} and fix.is_fix
    assert "leave shape unmapped (a tuple: in_axes 0 reached each of its leaves)" in str(err)


def test_a_dict_whose_arrays_hold_their_examples_along_different_axes_gets_an_entry_per_key() -> None:
    """Deep Learning with JAX's dict in_axes: vectors stored as rows beside vectors stored
    as columns, mapped by one entry 0. An entry per key maps each along its axis of the
    batch size: the fix where one size moves the fewest arrays; with one array on each
    side, both are said as what they change."""

    def scaled_dot(pair: dict[str, jax.Array], k: float) -> jax.Array:
        return k * jnp.dot(pair["u"], pair["v"] + pair.get("w", 0.0))

    rows, columns = jnp.arange(12.0).reshape(4, 3), jnp.arange(12.0).reshape(3, 4)
    err = _refused(lambda: ax.vmap(scaled_dot, in_axes=(0, None))({"u": rows, "v": rows, "w": columns}, 0.5))
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": ({"u": 0, "v": 0, "w": 1}, None)} and fix.is_fix
    out = jax.vmap(scaled_dot, **fix.as_kwargs())({"u": rows, "v": rows, "w": columns}, 0.5)
    assert out.shape == (4,)

    err = _refused(lambda: ax.vmap(scaled_dot, in_axes=(0, None))({"u": rows, "v": columns}, 0.5))
    assert not err.suggestions
    assert "in_axes=({'u': 0, 'v': 1}, None) would map pair['v'] along axis 1" in str(err)
    assert "in_axes=({'u': 1, 'v': 0}, None) would map pair['u'] along axis 1" in str(err)


def test_a_key_mapped_by_mistake_and_folded_with_each_example_is_passed_whole_as_the_fix() -> None:
    """A root key folded with each step (`fold_in(key, step)`), mapped with the steps by the
    default in_axes: the raw key's 2 words are key data, not a batch, and passed whole it
    still gives each example its own draws: `in_axes=(None, 0)` is the fix. Drawn from
    directly, the same key passed whole would give every example the same draws: never
    the fix there."""

    def step_noise(key: jax.Array, step: jax.Array) -> jax.Array:
        return jax.random.normal(jax.random.fold_in(key, step), (3,))

    key, steps = jax.random.PRNGKey(42), jnp.arange(5)
    err = _refused(lambda: ax.vmap(step_noise)(key, steps))  # axischeck: ignore
    (fix,) = err.suggestions
    assert fix.as_kwargs() == {"in_axes": (None, 0)} and fix.is_fix
    assert jax.vmap(step_noise, **fix.as_kwargs())(key, steps).shape == (5, 3)

    def noisy(key: jax.Array, step: jax.Array) -> jax.Array:
        return jax.random.normal(key, (3,)) + step

    err = _refused(lambda: ax.vmap(noisy)(key, steps))  # axischeck: ignore
    assert not err.suggestions and "a random key you mapped, whole: every example would draw the same" in str(err)


def test_raw_keys_returned_words_first_are_never_remapped_as_the_fix() -> None:
    """Chains stored (dim, chains), stepped with in_axes=(0, -1) and a single out_axes=-1
    that also places the returned raw keys: they come back (2, 4), words first. Mapping
    their axis 1 runs this call but not the first one: said as what it is, with the keys'
    own out_axes entry as the remedy."""

    def step(key: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        key, sub = jax.random.split(key)
        return key, x + jax.random.normal(sub, x.shape)

    keys, x = jax.random.split(jax.random.PRNGKey(0), 4), jnp.zeros((3, 4))
    chains = ax.vmap(step, in_axes=(0, -1), out_axes=-1)  # axischeck: ignore
    keys, x = chains(keys, x)
    err = _refused(lambda: chains(keys, x))
    assert not any(s.is_fix for s in err.suggestions)
    assert "key holds raw keys with their two uint32 words first, (2, 4)" in str(err)
    fixed = jax.vmap(step, in_axes=(0, -1), out_axes=(0, -1))
    keys, x = fixed(*fixed(jax.random.split(jax.random.PRNGKey(0), 4), jnp.zeros((3, 4))))
    assert keys.shape == (4, 2) and x.shape == (3, 4)


def test_no_rank_hint_where_a_negative_axis_or_a_keyword_argument_would_move_what_it_maps() -> None:
    """A negative in_axes counts from the end and a keyword argument is mapped at axis 0
    whatever in_axes says: examples of another rank, or a nested vmap, would map other
    axes than the hint says, so none is given."""

    def gate(x: jax.Array, y: jax.Array) -> jax.Array:
        return jax.lax.cond(x > 0.5, lambda: x * y, lambda: -x)

    x, y = jnp.arange(12.0).reshape(3, 4) / 10, jnp.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError) as info:  # JAX's own error, with axischeck's note
        ax.vmap(gate, in_axes=(0,))(x, y=y)
    assert "jax.vmap(jax.vmap(" not in "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])

    def predict(x: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(x @ w)

    with pytest.raises(ValueError) as raised:
        ax.vmap(predict, in_axes=(-1, None))(jnp.ones(3), jnp.ones((3, 2)))
    assert "give it a batch axis" not in "\n".join([str(raised.value), *getattr(raised.value, "__notes__", [])])


def test_a_batch_of_one_on_which_the_function_fails_gets_the_one_other_axis_that_runs_as_the_fix() -> None:
    """Flax's NNX transforms guide: a batch of 10 stored last, x of shape (1, 3, 10), given
    in_axes 0 as batch-first data would be: one example of (3, 10), on which a layer of 3
    inputs fails. Axis 2 alone runs, and is the fix, for nnx.vmap (with the module's state
    written as the user wrote its entry) as for jax.vmap; where two axes run, neither is."""
    w = jnp.arange(9.0).reshape(3, 3)
    x = jnp.linspace(-1.0, 1.0, 30).reshape(1, 3, 10)

    def layer(w: jax.Array, x: jax.Array) -> jax.Array:
        return x @ w

    with pytest.raises(TypeError) as info:
        ax.vmap(layer, in_axes=(None, 0))(w, x)
    (fix,) = info.value.suggestions  # type: ignore[attr-defined]
    assert fix.is_fix and fix.as_kwargs() == {"in_axes": (None, 2)}
    assert "instead of axis 0, of size 1 (a batch of one example" in str(info.value)
    assert jax.vmap(layer, **fix.as_kwargs())(w, x).shape == (10, 1, 3)

    with pytest.raises(TypeError) as info:  # axes 1 and 2 both give examples of 3 values: which is meant is unsaid
        ax.vmap(lambda x: x.reshape(3) * 2.0)(jnp.ones((1, 3, 3)))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Fix:" not in notes and notes.count("Runs, but") == 2, notes

    with pytest.raises(TypeError) as info:  # 4 values against 3 weights: a bug of the function's, not an axis
        ax.vmap(lambda x: x * jnp.array([1.0, 2.0, 3.0]))(jnp.arange(4.0).reshape(1, 4))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "Fix:" not in text and "in_axes=1 would map" in text, text  # its examples (1,) broadcast: no evidence


@pytest.mark.filterwarnings("ignore:Python iterable type 'generator' is treated as a leaf:DeprecationWarning")
def test_torch_option_names_and_iterators_are_named_in_jax_terms() -> None:
    """PyTorch's `in_dims`/`out_dims` (torch.func.vmap) are refused as JAX refuses them,
    with JAX's option and the same value written out (pytorch#40717); a generator mapped is
    named for what it is not: an array, or a pytree of arrays."""
    w = jnp.ones(3)

    def predict(w: jax.Array, x: jax.Array) -> jax.Array:
        return w @ x

    with pytest.raises(TypeError, match="unexpected keyword argument 'in_dims'") as info:
        ax.vmap(predict, in_dims=(None, 0))  # type: ignore[call-arg]
    assert "write in_axes=(None, 0) (did you mean in_axes?)" in str(info.value)
    with pytest.raises(TypeError, match="write out_axes=1"):
        ax.vmap(predict, out_dims=1)  # type: ignore[call-arg]

    batches = (jnp.ones(3) * i for i in range(2))
    with pytest.raises(TypeError, match="is a generator, not an array or a pytree of arrays"):
        ax.vmap(predict, in_axes=(None, 0))(w, batches)


def test_a_raw_key_mapped_over_its_words_is_said_as_a_key_passed_whole_or_split() -> None:
    """jax#181's ADVI example: one raw `PRNGKey(0)` mapped by the default in_axes beside 2
    variational settings gives each setting one uint32 word. Passing it whole runs, with
    the same draws for both settings (common random numbers), and a split gives each its
    own: no check tells them apart, so no Fix, and both are said."""

    def elbo(rng: jax.Array, mean: jax.Array) -> jax.Array:
        return jnp.mean(mean[None, :] + jax.random.normal(rng, (8, 2)))

    with pytest.raises(TypeError) as info:
        ax.vmap(elbo)(jax.random.PRNGKey(0), jnp.zeros((2, 2)))
    assert not getattr(info.value, "suggestions", ())
    (note,) = [n for n in info.value.__notes__ if n.startswith("axischeck:")]
    assert "rng is a raw key, and in_axes mapped its uint32 words" in note
    assert "jax.random.split(rng, 2)" in note and "in_axes=(None, 0)" in note


@pytest.mark.devices(8)
def test_a_row_parallel_weight_given_the_column_spec_gets_its_split_moved_to_its_rows() -> None:
    """MaxText's tutorial feed-forward: the second kernel given the first one's spec
    P(None, 'model') splits its output columns where the matmul contracts over the hidden
    rows. Of the splits tried, the one that turns the 16 rows JAX's failure names into the
    8 hidden units per device is the fix, and computes the one-device result."""
    mesh = jax.make_mesh((4, 2), ("batch", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def feed_forward(x: jax.Array, w_in: jax.Array, w_out: jax.Array) -> jax.Array:
        return jax.lax.psum(jnp.tanh(x @ w_in) @ w_out, "model")

    x = jnp.arange(8 * 8, dtype=jnp.float32).reshape(8, 8) / 64
    w_in = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32)).reshape(8, 16)
    w_out = jnp.sin(jnp.arange(16 * 8, dtype=jnp.float32)).reshape(16, 8)
    specs = (P("batch", None), P(None, "model"), P(None, "model"))
    f = ax.shard_map(feed_forward, mesh=mesh, in_specs=specs, out_specs=P("batch", None))
    err = _refused(lambda: f(x, w_in, w_out))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (P("batch", None), P(None, "model"), P("model"))}
    fixed = jax.shard_map(feed_forward, mesh=mesh, out_specs=P("batch", None), **fix.as_kwargs())
    assert jnp.allclose(fixed(x, w_in, w_out), jnp.tanh(x @ w_in) @ w_out, atol=1e-5)


@pytest.mark.devices(8)
def test_a_split_aimed_at_the_sizes_that_computes_something_else_leaves_room_for_the_fix() -> None:
    """tpu-inference#507's down projection, `einsum('tk,nk->tn', x, w2)` with w2 stored
    transposed: moving w2's split onto its contracted dim meets the sizes JAX names and
    runs, but sums over half the features on each device. It is tried first and judged,
    and x passed whole, which computes the one-device result, is still tried: the fix."""

    def down_proj(x: jax.Array, w2: jax.Array) -> jax.Array:
        return jnp.einsum("tk,nk->tn", x, w2)

    mesh = _mesh()
    x, w2 = jnp.arange(24.0).reshape(3, 8) / 24.0, jnp.cos(jnp.arange(48.0)).reshape(6, 8)
    f = ax.shard_map(
        down_proj, mesh=mesh, in_specs=(P(None, "x"), P("x", None)), out_specs=P(None, "x"), check_vma=False
    )
    err = _refused(lambda: f(x, w2))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (P(), P("x", None))}
    fixed = jax.shard_map(down_proj, mesh=mesh, out_specs=P(None, "x"), check_vma=False, **fix.as_kwargs())
    assert jnp.allclose(fixed(x, w2), down_proj(x, w2), atol=1e-6)


@pytest.mark.devices(8)
def test_a_per_head_argument_passed_as_a_constant_gets_the_heads_split() -> None:
    """MaxText's attention sinks (one logit per head) given in_specs None beside queries
    whose heads are split over 'x': each device adds all 8 logits to its 2 heads. Split
    like the heads, the blocks compute the one-device result: the fix, written as the
    user writes a spec (`P('x')`, not JAX's repr `P('x',)`)."""

    def with_sinks(q: jax.Array, sinks: jax.Array) -> jax.Array:
        return q - sinks[None, :, None]

    heads = P(None, "x", None)
    f = ax.shard_map(with_sinks, mesh=_mesh(), in_specs=(heads, None), out_specs=heads)
    q, sinks = jnp.arange(48.0).reshape(2, 8, 3), jnp.linspace(-1.0, 1.0, 8)
    err = _refused(lambda: f(q, sinks))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (heads, P("x"))} and fix.is_fix
    assert "Fix: in_specs=(P(None, 'x', None), P('x'))" in str(err)
    fixed = jax.shard_map(with_sinks, mesh=_mesh(), out_specs=heads, **fix.as_kwargs())
    assert jnp.array_equal(fixed(q, sinks), with_sinks(q, sinks))


@pytest.mark.devices(8)
def test_in_specs_missing_a_middle_entry_get_it_beside_the_argument_of_its_shape() -> None:
    """MaxText's MoE layer gained `pre_bias_logits` beside `gate_logits` and kept four
    in_specs for five arguments. Appended at the end, the missing entry splits nothing
    that fits; copied from the entry before the argument of the same shape, it computes
    the one-device result, and the message names the argument it is for."""

    def routed(x: jax.Array, gate: jax.Array, pre_bias: jax.Array, w: jax.Array) -> jax.Array:
        top = jnp.argmax(gate, axis=-1)
        weight = jnp.take_along_axis(jax.nn.softmax(pre_bias, axis=-1), top[:, None], axis=-1)
        return jnp.take_along_axis(x @ w, top[:, None], axis=-1) * weight

    rows = P("x", None)
    specs = (rows, rows, P(None, None))  # none for pre_bias
    f = ax.shard_map(routed, mesh=_mesh(), in_specs=specs, out_specs=rows)  # axischeck: ignore[AX010]
    x, w = jnp.cos(jnp.arange(32.0)).reshape(8, 4), jnp.sin(jnp.arange(8.0)).reshape(4, 2)
    pre_bias = jnp.sin(jnp.arange(16.0)).reshape(8, 2)
    gate = pre_bias + jnp.array([0.3, -0.3])[None]
    err = _refused(lambda: f(x, gate, pre_bias, w))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (rows, rows, rows, P(None, None))} and fix.is_fix
    assert "pre_bias gets P('x', None)" in fix.text
    fixed = jax.shard_map(routed, mesh=_mesh(), out_specs=rows, **fix.as_kwargs())
    assert jnp.allclose(fixed(x, gate, pre_bias, w), routed(x, gate, pre_bias, w))


def test_one_raw_key_mapped_over_its_words_is_told_to_split() -> None:
    """brax#8: a batched reset vmapped over its rng and given one `PRNGKey(0)`: each
    example gets one uint32 word, which JAX refuses as key data. The hint says so and
    names the split that gives each example a key, not a batch axis for one example."""

    def reset(rng: jax.Array) -> jax.Array:
        return jax.random.normal(rng, (4,))

    err = _refused(lambda: ax.vmap(reset)(jax.random.PRNGKey(0)))
    assert err.hint is not None and "as one raw PRNG key" in err.hint
    assert "each example gets one of its uint32 words, not a key" in err.hint
    assert "map jax.random.split(rng, n)" in err.hint and "rng[None]" not in err.hint
    assert jax.vmap(reset)(jax.random.split(jax.random.PRNGKey(0), 6)).shape == (6, 4)


@pytest.mark.devices(8)
def test_a_tiled_psum_scatter_keeps_the_one_device_program_as_the_reference() -> None:
    """jax's shard_map docs' tensor-parallel layer: `psum_scatter(x @ w, tiled=True)` and a
    bias the in_specs leave without an entry. Tiled, the scatter of one device's block is
    the block, so the one-device program computes `x @ w + b`, and the bias split over
    'x' is checked against it: the fix, not "could not be checked"."""

    def gemm(x: jax.Array, w: jax.Array, b: jax.Array) -> jax.Array:
        return jax.lax.psum_scatter(x @ w, "x", scatter_dimension=1, tiled=True) + b[None, :]

    mesh = _mesh(8)
    specs = (P(None, "x"), P("x", None))  # no entry for the bias
    f = ax.shard_map(gemm, mesh=mesh, in_specs=specs, out_specs=P(None, "x"))  # axischeck: ignore[AX010]
    x, w = jnp.sin(jnp.arange(64.0)).reshape(4, 16), jnp.cos(jnp.arange(256.0)).reshape(16, 16)
    b = jnp.linspace(-1.0, 1.0, 16)
    err = _refused(lambda: f(x, w, b))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (P(None, "x"), P("x", None), P("x"))} and fix.is_fix
    fixed = jax.shard_map(gemm, mesh=mesh, out_specs=P(None, "x"), **fix.as_kwargs())
    assert jnp.allclose(fixed(x, w, b), x @ w + b[None, :], atol=1e-4)


def test_false_in_in_axes_gets_none_as_the_fix() -> None:
    """jax#6372: `in_axes=[False, 0]` written for "do not map the first argument". JAX
    refuses a bool (it used to read False as axis 0); the fix writes None, and True,
    whose intent is unclear, keeps only the hint."""
    add = lambda a, b: a + b  # noqa: E731
    with pytest.raises(TypeError) as info:
        ax.vmap(add, in_axes=[False, 0])  # axischeck: ignore[AX002]
    err = info.value
    assert isinstance(err, ax.AxisCheckError) and err.fix is not None
    assert "Fix: in_axes=(None, 0)" in str(err)
    x, batch = jnp.ones((2, 3)), jnp.arange(24.0).reshape(4, 2, 3)
    assert jnp.array_equal(jax.vmap(add, in_axes=(None, 0))(x, batch), batch + x[None])
    with pytest.raises(TypeError) as info:
        ax.vmap(add, in_axes=(True, 0))  # axischeck: ignore[AX002]
    assert info.value.fix is None and "Hint: write 0 or None instead of True" in str(info.value)  # type: ignore[attr-defined]


@pytest.mark.devices(8)
def test_an_array_marked_static_for_pmap_is_left_to_in_axes_by_the_fix() -> None:
    """numpyro#494: `pmap(get_samples, static_broadcasted_argnums=0)(jnp.arange(n))`, one
    index per device marked static. pmap cannot hash an array; the options then mean no
    program, so there is no vmap reference to hold the fix to, and the one candidate
    (the index left to in_axes, a slice per device) runs: the fix."""
    n = 4
    shards = jnp.arange(n * 6.0).reshape(n, 3, 2)

    def get_samples(i: jax.Array) -> jax.Array:
        return shards[i] * 2.0

    err = _refused(lambda: ax.pmap(get_samples, static_broadcasted_argnums=0)(jnp.arange(n)))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"static_broadcasted_argnums": ()} and fix.is_fix
    assert "leaves i to in_axes" in fix.text
    assert jnp.array_equal(jax.pmap(get_samples, **fix.as_kwargs())(jnp.arange(n)), shards * 2.0)


@pytest.mark.devices(8)
def test_a_model_tuple_split_like_the_batch_is_passed_whole_by_the_fix() -> None:
    """A data-parallel loss whose in_specs give the model's `(w, b)` the batch's
    P('batch') (one spec stands for the tuple): each device gets a slice of the weights.
    Passed whole, the model computes the one-device loss: the fix, for a tuple argument
    as for one array."""
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(jax.sharding.AxisType.Auto,))

    def loss(params: tuple[jax.Array, jax.Array], x: jax.Array) -> jax.Array:
        w, b = params
        return jax.lax.pmean(jnp.mean(jnp.tanh(x @ w + b[None, :])), "batch")

    params = (jnp.arange(16.0).reshape(4, 4) / 20.0, jnp.linspace(-0.5, 0.5, 4))
    x = jnp.arange(32.0).reshape(8, 4) / 10.0
    f = ax.shard_map(loss, mesh=mesh, in_specs=(P("batch"), P("batch")), out_specs=P())
    err = _refused(lambda: f(params, x))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_specs": (P(), P("batch"))} and fix.is_fix
    assert "passes params whole to every device" in fix.text
    fixed = jax.shard_map(loss, mesh=mesh, out_specs=P(), **fix.as_kwargs())
    assert jnp.allclose(fixed(params, x), jnp.mean(jnp.tanh(x @ params[0] + params[1][None, :])), atol=1e-6)


@pytest.mark.devices(8)
def test_an_smap_without_in_axes_on_an_auto_mesh_gets_the_axis_it_stacks_along() -> None:
    """jax's smap test: in_axes left out is inferred only on Explicit mesh axes. On an
    Auto mesh, in_axes=0 (the axis out_axes stacks the rows along) computes the
    one-device result: the fix."""
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    x = jnp.arange(8.0).reshape(4, 2)
    with jax.set_mesh(mesh):
        err = _refused(lambda: ax.smap(lambda block: block * 2.0, out_axes=0, axis_name="x")(x))
        fix = err.suggestions[0]
        assert fix.as_kwargs() == {"in_axes": 0} and fix.is_fix
        assert jnp.array_equal(
            jax.smap(lambda block: block * 2.0, out_axes=0, axis_name="x", **fix.as_kwargs())(x), x * 2.0
        )


@pytest.mark.devices(8)
def test_a_key_folded_with_the_device_index_is_passed_whole_by_the_fix() -> None:
    """alphagrad's evaluation: `fold_in(key, axis_index('devices'))` gives each device its
    own draws from one key, which the default in_axes maps beside the games (2 words
    against 4 devices). Passed whole, the key still varies along the named map: the fix,
    not "every example would draw the same random numbers"."""

    def evaluate(key: jax.Array, games: jax.Array) -> jax.Array:
        device_key = jax.random.fold_in(key, jax.lax.axis_index("devices"))
        return games + 0.01 * jax.random.uniform(device_key, games.shape)

    key, games = jax.random.PRNGKey(1), jnp.arange(12.0).reshape(4, 3)
    err = _refused(lambda: ax.pmap(evaluate, axis_name="devices")(key, games))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_axes": (None, 0)} and fix.is_fix
    assert "draw the same random numbers" not in str(err)
    assert jax.pmap(evaluate, axis_name="devices", **fix.as_kwargs())(key, games).shape == (4, 3)


def test_one_sample_input_beside_split_keys_is_passed_whole_by_the_fix() -> None:
    """An ensemble initialised by vmapping `init` over 4 split keys, given the sample
    input `x` of one example, (1, 2), which the default in_axes maps too (dm-haiku's
    ensemble question). A batch of one beside a batch of keys is the initialiser's
    sample input, not a competing batch size: passing it whole is the fix."""

    def init(key: jax.Array, x: jax.Array) -> jax.Array:
        return jax.random.normal(key, (x.shape[-1], 3))

    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    x = jnp.array([[1.0, 2.0]])
    err = _refused(lambda: ax.vmap(init)(keys, x))
    fix = err.suggestions[0]
    assert fix.as_kwargs() == {"in_axes": (0, None)} and fix.is_fix
    assert jax.vmap(init, **fix.as_kwargs())(keys, x).shape == (4, 2, 3)
