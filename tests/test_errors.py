"""Every failure kind: the right error class, a message naming the user's facts, and the
exception it explains (JAX's or the user's) kept as its cause or context."""

from __future__ import annotations

import pickle
import re
import traceback
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import axischeck as ax
from jax_oracle import axischeck_frames


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def _message(fn: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(ax.AxisCheckError) as info:
        fn.predict(*args, **kwargs)  # type: ignore[attr-defined]
    return str(info.value)


def test_einsum_conflict_names_symbol_axes_and_true_sizes() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    err = info.value
    assert err.symbol == "b"
    x_place, y_place = err.places
    assert (x_place.arg, x_place.batched_axis, x_place.size) == ("x", 2, 4)
    assert (y_place.arg, y_place.batched_axis, y_place.size) == ("y", 0, 5)
    text = str(err)
    assert "vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0)" in text
    assert re.search(r"'b' is axis 2 of x \(size 4\).* but axis 0 of y \(size 5\)", text)
    assert re.search(r"y\s+\(5, 16, 2\)\s+1\s+\(5, 2\)\s+\(b, c\)", text)
    assert "conflicts with b=4 from x" in text
    assert err.fix is None  # nothing is suggested that would not work


def test_the_same_conflict_raises_before_jax_runs_in_a_call() -> None:
    """The call never runs on data: JAX only traces it once, abstractly, for its own
    verdict, whose type and message the error keeps."""
    calls = []

    def spy(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
        calls.append(isinstance(x, jax.core.Tracer))
        return complex_operation(x, y, z)

    f = ax.vmap(spy, in_axes=(0, 1, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError, match="'b' disagrees") as caught:
        f(jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2)))
    assert calls == [True]
    assert "JAX: ValueError: Size of label 'b' for operand 1" in str(caught.value)


@pytest.mark.parametrize("signature", [EINSUM, None])
def test_inconsistent_batch_sizes(signature: str | None) -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=signature)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (4, 16, 2), (15, 8, 2))
    text = str(info.value)
    assert "size 16 at axis 0 of x, axis 1 of y; size 15 at axis 0 of z" in text
    assert info.value.symbol == "batch size B"


def test_inconsistent_with_axis_size() -> None:
    f = ax.vmap(lambda x: x, axis_size=5)
    text = _message(f, (3, 2))
    assert "axis_size=5" in text and "size 3 at axis 0 of x" in text


def test_negative_axis_is_reported_as_the_users_axis() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, -2, 0))
    text = _message(f, (16, 8, 4), (4, 15, 2), (16, 8, 2))
    assert "size 15 at axis 1 of y" in text


def test_axis_out_of_range_in() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 3, 0))
    text = _message(f, (16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert "in_axes entry 3 for y" in text and "rank 3" in text and "rank >= 4" in text


def test_scalar_cannot_be_mapped() -> None:
    f = ax.vmap(lambda x, s: x * s)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((3,), 2.0)
    assert info.value.fix == "in_axes=(0, None) would leave s unmapped"  # checked by the engine


def test_axis_out_of_range_out() -> None:
    f = ax.vmap(lambda x: x, out_axes=3)
    text = _message(f, (5, 2, 3))
    assert "out_axes entry 3 for output is out of range" in text and "rank 3" in text


def test_out_axes_none_on_batched_output() -> None:
    f = ax.vmap(lambda x: x * 2, out_axes=None)
    with pytest.raises(
        ax.OutputError, match="out_axes is None for output, but output depends on x, which in_axes maps"
    ):
        f.predict((5, 3))
    # ...but None is fine for an output that does not depend on the mapped input.
    g = ax.vmap(lambda x: (x * 2, jnp.zeros(3)), out_axes=(0, None))
    assert g.predict((5, 4)).shapes == ((5, 4), (3,))


def test_in_axes_tuple_length() -> None:
    f = ax.vmap(lambda pair: pair[0] + pair[1], in_axes=(0, 1))
    with pytest.raises(ax.ArgumentError) as info:
        f.predict(((3, 4), (4, 3)))
    assert "in_axes has 2 entries but the function got 1 positional argument" in str(info.value)
    assert info.value.fix == "in_axes=((0, 1),) (nests the axes of the one tuple argument)"
    assert [s.as_kwargs() for s in info.value.suggestions] == [{"in_axes": ((0, 1),)}]


def test_a_short_in_axes_names_the_arguments_it_leaves_without_an_entry() -> None:
    """jax#9928: the argument without an entry is named, not only counted."""

    def scale(x: jax.Array, y: jax.Array, param: float) -> jax.Array:
        return (x + y) * param

    f = ax.vmap(scale, in_axes=(0, 0))
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((3, 2), (3, 2), ())
    assert "in_axes has 2 entries but the function got 3 positional arguments (param has no entry)" in str(info.value)


def test_in_axes_structure_mismatch() -> None:
    """A container of axes that no JAX release matches to the argument (another length)."""
    f = ax.vmap(lambda d: d["a"], in_axes=((0, 1, 0),))
    text = _message(f, {"a": (3,), "b": (3,)})
    assert "in_axes[0] is a tuple of length 3, but argument d is a dict with keys ['a', 'b']" in text
    g = ax.vmap(lambda p: p[0], in_axes=((0, 1, 0),))
    assert "is a tuple of length 3, but argument p is a list of length 2" in _message(g, [(3,), (4, 3)])
    pmapped = ax.pmap(lambda p: p[0], in_axes=((0, 0),))  # pmap: another type on every release
    assert "lists and tuples differ" in _message(pmapped, [(2,), (2, 3)])


def test_dict_in_axes_keys_must_match() -> None:
    f = ax.vmap(lambda d: d["a"], in_axes=({"a": 0},))
    text = _message(f, {"a": (3,), "b": (3,)})
    assert "keys missing from the spec: ['b']" in text


def test_kwargs_are_always_mapped_on_axis_zero() -> None:
    f = ax.vmap(lambda x, scale: x * scale, in_axes=(0,))
    assert f.predict((4, 3), scale=(4, 3)).shapes == (4, 3)
    text = _message(f, (4, 3), scale=(5, 3))
    assert "size 4 at axis 0 of x; size 5 at axis 0 of scale" in text


def test_nested_vmap_error_names_both_levels() -> None:
    f = ax.vmap(ax.vmap(lambda a, b: a + b))
    text = _message(f, (2, 3), (2, 4))
    assert "[1] vmap(" in text and "size 3 at axis 1 of a; size 4 at axis 1 of b" in text


def test_lying_signature_is_reported_with_the_output_leaf() -> None:
    f = ax.vmap(lambda x: jnp.sum(x, axis=0), signature="(n,k)->(n)")
    with pytest.raises(ax.OutputError) as info:
        f(jnp.ones((5, 3, 2)))
    text = str(info.value)
    assert "output has shape (5, 2), but the signature predicts (5, 3) (declared (n))" in text


def test_unannotated_per_example_failure() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0))
    with pytest.raises(ax.FunctionError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    text = str(info.value)
    # Blame without a signature: JAX's two sizes, each found in one argument axis only.
    assert "dimension 'b' disagrees, 4 from x vs 5 from y" in text.splitlines()[0]
    assert [(p.arg, p.batched_axis, p.size) for p in info.value.places] == [("x", 2, 4), ("y", 0, 5)]
    assert isinstance(info.value.__cause__, ValueError)
    # In a call, the function's own error passes through untouched.
    with pytest.raises(ValueError, match="Size of label 'b'") as call_info:
        f(jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2)))
    assert not isinstance(call_info.value, ax.AxisCheckError)


def test_jax_s_message_from_the_per_example_trace_names_the_user_s_function_and_argument() -> None:
    def branchy(scale: jax.Array, params: dict[str, jax.Array]) -> jax.Array:
        if params["b"].sum() > 0:  # a Python branch on a traced value
            return scale * params["a"]
        return scale

    line = branchy.__code__.co_firstlineno
    f = ax.vmap(branchy, in_axes=(None, 0))
    with pytest.raises(ax.FunctionError) as info:
        f.predict(jnp.ones(()), {"a": jnp.ones((4, 3)), "b": jnp.ones((4, 3))})
    text = str(info.value)
    assert isinstance(info.value.__cause__, jax.errors.TracerBoolConversionError)
    # As JAX's own eval_shape of the function would say it, not of axischeck's wrapper.
    assert f"tracing the function branchy at {__file__}:{line} for jit" in text
    assert "depends on the value of the argument params['b']" in text
    assert "_trace.py" not in text and "traced[" not in text


def test_a_per_example_trace_needs_no_naming_from_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    """Naming the trace uses JAX's private hook: if a JAX release moves it, traces still
    answer (JAX names what it traces itself), and no error blames the user's function."""
    from jax._src import api_util

    def moved(*args: object) -> None:
        raise AttributeError("save_wrapped_fun_debug_info moved")

    monkeypatch.setattr(api_util, "save_wrapped_fun_debug_info", moved)
    assert ax.vmap(lambda x, w: x @ w, in_axes=(0, None)).predict((4, 3), (3, 2)).shapes == (4, 2)
    with pytest.raises(ax.ArgumentError, match="batch size"):
        ax.vmap(lambda x, y: x + y).predict((4, 3), (5, 3))


def test_user_exceptions_pass_through_calls() -> None:
    class Boom(Exception):
        pass

    def f(x: jax.Array) -> jax.Array:
        raise Boom("mine")

    with pytest.raises(Boom):
        ax.vmap(f)(jnp.ones(3))
    with pytest.raises(Boom):
        ax.vmap(f, signature="()->()")(jnp.ones(3))


def test_predict_chains_jaxs_error_for_a_per_example_failure() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0))  # no signature: traced per example
    with pytest.raises(ValueError) as jax_info:  # what JAX says for one example
        jax.eval_shape(complex_operation, *(jax.ShapeDtypeStruct(s, jnp.float32) for s in [(8, 4), (5, 2), (8, 2)]))
    with pytest.raises(ax.FunctionError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    cause = info.value.__cause__
    assert cause is not None and not isinstance(cause, ax.AxisCheckError)
    assert type(cause) is type(jax_info.value) and str(cause) == str(jax_info.value)
    assert str(jax_info.value) in str(info.value)
    assert len(axischeck_frames(traceback.extract_tb(info.value.__traceback__))) <= 2


def test_predict_chains_the_users_own_exception() -> None:
    class Boom(Exception):
        pass

    def f(x: jax.Array) -> jax.Array:
        raise Boom("mine")

    for wrapped in (ax.vmap(f), ax.vmap(f, signature="(n)"), ax.vmap(f, out_axes=None)):
        with pytest.raises(ax.FunctionError) as info:
            wrapped.predict((2, 3))
        assert isinstance(info.value.__cause__, Boom)
        # and in a call, the user's exception itself, raised from the user's line
        with pytest.raises(Boom) as call_info:
            wrapped(jnp.ones((2, 3)))
        names = [fr.name for fr in traceback.extract_tb(call_info.value.__traceback__)]
        assert names[-1] == "f"


def test_a_wrapped_jax_error_in_a_call_keeps_jaxs_error_as_its_context() -> None:
    """out_axes=None on a batched output: JAX raises, axischeck explains. The explanation
    is an instance of JAX's exception type and carries JAX's message; JAX's own
    exception is kept as its context, not printed above the user's traceback."""

    def ident(v: jax.Array) -> jax.Array:
        return v

    x = jnp.ones((2, 3))
    with pytest.raises(ValueError) as jax_info:
        jax.vmap(ident, out_axes=None)(x)
    with pytest.raises(ax.OutputError) as info:
        ax.vmap(ident, out_axes=None)(x)
    assert isinstance(info.value, type(jax_info.value))
    assert f"  JAX: {type(jax_info.value).__name__}: {jax_info.value}" in str(info.value).splitlines()
    context = info.value.__context__
    assert type(context) is type(jax_info.value) and str(context) == str(jax_info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_precheck_errors_carry_no_stale_context() -> None:
    """A pre-check error raised before JAX runs has no cause and no implicit context."""
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    x, y_bad, z = jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2))
    for attempt_ in (lambda: f(x, y_bad, z), lambda: f.predict(x, y_bad, z)):
        with pytest.raises(ax.ArgumentError) as info:
            attempt_()
        assert info.value.__cause__ is None
        assert info.value.__context__ is None or info.value.__suppress_context__


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"in_axes": True}, "must be an int, None, or a tuple"),
        ({"in_axes": {"x": 0}}, "in_axes=({'x': 0},) gives the axes inside x, the dict argument"),
        ({"in_axes": 0.0}, "must be an int, None, or a tuple"),
        ({"in_axes": (0, "a")}, "'a' (of type str)"),
        ({"in_axes": (np.int64(0),)}, "JAX accepts only Python ints"),
        ({"out_axes": "a"}, "out_axes must be an int, None"),
        ({"axis_size": -1}, "axis_size must be >= 0"),
        ({"axis_size": 2.5}, "axis_size must be an int"),
    ],
)
def test_construction_errors_are_spec_errors_and_type_errors(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ax.SpecError, match=re.escape(fragment)) as info:
        ax.vmap(lambda x: x, **kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_signature_with_too_many_inputs_for_the_function() -> None:
    with pytest.raises(ax.SpecError, match="declares 3 inputs but <lambda> has only 2 parameters"):
        ax.vmap(lambda x, y: x, signature=EINSUM)


def test_a_signature_is_checked_against_each_function_at_decoration() -> None:
    """The check is cached per code object: a lambda written inline is refused every time,
    in its own name, and the same code with a signature that fits is not refused."""

    def inline() -> Callable[[jax.Array, jax.Array], jax.Array]:
        return lambda x, y: x

    mesh = {"x": 2}
    for _ in range(2):
        for make in (ax.vmap, ax.pmap, partial(ax.shard_map, mesh=mesh, in_specs=P(), out_specs=P())):
            with pytest.raises(ax.SpecError, match="declares 3 inputs but <lambda> has only 2 parameters"):
                make(inline(), signature=EINSUM)
    renamed = inline()
    renamed.__name__ = "renamed"
    with pytest.raises(ax.SpecError, match="but renamed has only 2 parameters"):
        ax.vmap(renamed, signature=EINSUM)
    fits = ax.vmap(inline(), signature="(a),(a)->(a)")
    assert fits.predict((4, 3), (4, 3)).shapes == (4, 3)
    with pytest.raises(ax.SpecError, match="already an axischeck transform"):
        ax.vmap(fits, signature="(a),(a)->(a)")


def test_errors_pickle_with_their_facts() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value) and again.places == info.value.places


def test_vmap_psum_scatter_hole_is_reported_not_copied() -> None:
    """docs/jax-semantics.md#the-vmap-psum_scatter-hole: under vmap, non-tiled psum_scatter whose scattered dimension
    differs from the axis size silently returns a mislabelled batch sum. axischeck raises."""
    from jax import lax

    f = lambda v: lax.psum_scatter(v, "i", scatter_dimension=0)
    x = jax.ShapeDtypeStruct((8, 16, 3), jnp.float32)
    assert jax.eval_shape(jax.vmap(f, axis_name="i"), x).shape == (16, 3)  # JAX's accident
    with pytest.raises(ax.CollectiveError, match="size 16 must match shard count 8") as info:
        ax.vmap(f, axis_name="i").predict(x)
    assert "tiled=True" in (info.value.hint or "")
    # With matching sizes it is the real collective, predicted like JAX.
    ok = jax.ShapeDtypeStruct((8, 8, 3), jnp.float32)
    assert ax.vmap(f, axis_name="i").predict(ok).shapes == jax.eval_shape(jax.vmap(f, axis_name="i"), ok).shape


def test_batched_signature_catches_the_silent_wrong_axis_bug() -> None:
    """x:(16,8,16), y:(16,16,2): n == b == 16, so wrong in_axes run and give wrong numbers."""
    s = ax.Signature.batched("(n,a,b),(b,n,c),(n,a,c)->(n,a,c)", over="n")
    assert s.levels[0].in_axes.value == (0, 1, 0) and str(s.core) == "(a, b), (b, c), (a, c) -> (a, c)"
    x, y, z = jnp.ones((16, 8, 16)), jnp.arange(16 * 16 * 2.0).reshape(16, 16, 2), jnp.ones((16, 8, 2))
    derived = ax.vmap(complex_operation, signature=s)
    np.testing.assert_array_equal(derived(x, y, z), jax.vmap(complex_operation, in_axes=(0, 1, 0))(x, y, z))
    jax.vmap(complex_operation, in_axes=(0, 0, 0))(x, y, z)  # plain JAX runs the wrong axes silently
    with pytest.raises(ax.SpecError, match=r"contradict the batched signature") as info:
        ax.vmap(complex_operation, in_axes=(0, 0, 0), signature=s)
    assert "in_axes=(0, 1, 0)" in (info.value.hint or "")
    assert ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=s).predict(x, y, z).shapes == (16, 8, 2)
    # Variadics: the batch axis is counted from the side that does not move.
    v = ax.Signature.batched("(*s, n, c) -> (n, *s)", over="n")
    assert v.levels[0].in_axes.value == (-2,) and v.levels[0].out_axes.value == 0
    with pytest.raises(ax.SpecError, match="appears 2 times"):
        ax.Signature.batched("(n, n) -> (n)", over="n")


def test_unannotated_failure_in_a_call_keeps_its_type_and_gains_a_note() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0))
    with pytest.raises(ValueError, match="Size of label 'b'") as info:
        f(jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2)))
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "y    (5, 16, 2)     1        (5, 2)" in note
    assert "operand 1 has 'b' of size 5, and the earlier operands have 4" in note


def test_vmap_ppermute_duplicates_are_reported_not_copied() -> None:
    """docs/jax-semantics.md#ppermute-duplicates: under vmap, ppermute accepts duplicate destinations silently."""
    from jax import lax

    bad = lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1), (2, 0)])
    x = jax.ShapeDtypeStruct((3, 2), jnp.float32)
    assert jax.eval_shape(jax.vmap(bad, axis_name="i"), x).shape == (3, 2)  # JAX's accident
    with pytest.raises(ax.CollectiveError, match=r"sources and destinations must be unique"):
        ax.vmap(bad, axis_name="i").predict(x)
    good = lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
    assert ax.vmap(good, axis_name="i").predict(x).shapes == (3, 2)


def test_silent_collectives_are_caught_in_calls_too() -> None:
    from jax import lax

    f = ax.vmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0), axis_name="i")
    with pytest.raises(ax.CollectiveError):
        f(jnp.ones((8, 16, 3)))
    assert f(jnp.ones((8, 8, 3))).shape == (8, 3)
    with pytest.raises(ax.CollectiveError):
        jax.jit(f)(jnp.ones((8, 16, 3)))


def test_an_error_about_one_leaf_among_thousands_stays_short() -> None:
    params = {f"w{k:04d}": (4, 3) for k in range(2000)}
    f = ax.vmap(
        lambda x, p: x, in_axes=(0, None), signature={"x": "i", "p": dict.fromkeys(params, "o i"), "return": "i"}
    )
    assert len(str(f.predict((9, 3), params)).splitlines()) > 2000  # a prediction's table has every row
    bad = {**params, "w1234": (4, 5)}
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((9, 3), bad)
    message = str(info.value)
    assert len(message) < 8000 and "more rows" in message
    assert "p['w1234'] (size 5)" in message  # the conflict is still named


@pytest.mark.devices(8)
def test_per_example_failure_notes_are_said_once_and_in_the_right_unit() -> None:
    body = lambda x: x @ jnp.ones((3, 3))  # noqa: E731 - fails for rows of 4
    with pytest.raises(TypeError) as nested:
        ax.vmap(ax.vmap(body))(jnp.ones((2, 5, 4)))
    ours = [n for n in nested.value.__notes__ if n.startswith("axischeck: ")]
    assert len(ours) == 1 and "[1] vmap" in ours[0] and "[2] vmap" in ours[0]  # the outer note, whole nest
    with pytest.raises(TypeError) as per_device:
        ax.pmap(body)(jnp.ones((8, 4)))
    (note,) = [n for n in per_device.value.__notes__ if n.startswith("axischeck: ")]
    assert "happens per device" in note and "per-device" in note and "per-example" not in note


def test_a_failing_function_s_headline_names_a_few_leaves() -> None:
    params = {f"w{i:02d}": jnp.ones((3, 3)) for i in range(40)}
    f = ax.vmap(lambda p, x: x @ p["w00"], in_axes=(None, 0))
    with pytest.raises(ax.FunctionError) as info:
        f.predict(params, jnp.ones((5, 4)))
    headline = str(info.value).splitlines()[0]
    assert "and 37 more" in headline and headline.count("p['w") == 4  # of 40 params and x


# ----------------------------------------------- one-line heads


def test_the_first_line_names_the_conflicting_pair_and_the_checked_fix() -> None:
    """jax#705: a log that keeps one line still says what disagrees and what would work."""

    def h(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.sum(a) + jnp.sum(b)

    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(h, in_axes=(0, 1))(jnp.ones((10, 4)), jnp.ones((10, 2)))
    head = str(info.value).splitlines()[0]
    assert "size 10 at axis 0 of a; size 2 at axis 1 of b" in head
    assert head.endswith("; fix: in_axes=(0, 0)")
    assert "Fix: in_axes=(0, 0) would map b's axis 0 (size 10)" in str(info.value)  # the fix in full, below


def test_a_fix_that_only_the_full_text_can_say_leaves_the_head_alone() -> None:
    """An unchecked hint is no headline fix."""
    err = ax.SpecError("in_axes is odd", transform="vmap(f)", fix="look again")
    assert str(err).splitlines()[0] == "vmap(f): in_axes is odd"


def test_a_long_table_shows_only_the_rows_the_error_is_about() -> None:
    """jax#4563: one stray scalar among 13 leaves; the table collapses to its row."""
    tree = [[jnp.ones((4, k)) for k in (1, 2, 3)] for _ in range(4)]
    tree[2].append(jnp.float32(1.0))
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(lambda t: t).predict(tree)
    lines = str(info.value).splitlines()
    rows = [line.split()[0] for line in lines if line.startswith("  t[")]
    assert rows == ["t[2][3]"]
    assert "  ... and 12 more rows (the prediction's table has them all)" in lines


def test_a_short_table_stays_whole() -> None:
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(lambda a, b: a + b).predict((3, 2), (4, 2))
    assert [line.split()[0] for line in str(info.value).splitlines() if line.startswith(("  a ", "  b "))] == ["a", "b"]


@pytest.mark.devices(8)
def test_a_collective_over_a_name_smap_does_not_bind_is_explained_as_jaxs_error() -> None:
    """jax#3120 written with jax.smap: JAX raises a bare AssertionError; axischeck names
    the axis, says what the smap binds, and is still an AssertionError."""
    mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))

    def total(x: jax.Array) -> jax.Array:
        return jax.lax.psum(x, "batch")  # axischeck: ignore[AX005] - the mistake under test

    with jax.set_mesh(mesh), pytest.raises(AssertionError) as info:
        ax.smap(total, in_axes=0, out_axes=0, axis_name="x")(jnp.arange(8.0))
    assert isinstance(info.value, ax.FunctionError)
    text = str(info.value)
    assert text.splitlines()[0].endswith(
        "total calls a collective over axis name 'batch', which no enclosing transform binds"
    )
    assert "Hint: call the collective over an axis this smap binds ('x')" in text
    assert "JAX: NameError" not in text  # the engine's probe, not what JAX raised
    assert text.count("JAX: ") == 1 and "JAX: AssertionError (with no message)" in text


def test_two_axes_of_one_array_in_one_vmap_get_nested_vmaps() -> None:
    """jax#1168: `in_axes=((0, 1), (0, 1))` meant to map two axes of each array; one vmap
    maps one axis, and the fix nests two (the later axis moves down once the first is gone)."""

    def solve(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.linalg.solve(a, b)

    a, b = jnp.ones((3, 2, 2, 2)) + jnp.eye(2)[None, None], jnp.ones((3, 2, 2))
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(solve, in_axes=((0, 1), (0, 1)))(a, b)
    err = info.value
    assert "in_axes[0] is (0, 1), several axes for a, an array; one vmap maps one axis of each argument" in err.problem
    nested = "jax.vmap(jax.vmap(solve, in_axes=(0, 0)), in_axes=(0, 0))"
    assert err.hint == f"nest one vmap per axis, the outermost mapping the first: {nested}"
    assert jax.vmap(jax.vmap(solve, in_axes=(0, 0)), in_axes=(0, 0))(a, b).shape == (3, 2, 2)
    c = jnp.ones((2, 2, 3))
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(solve, in_axes=((1, 0), (0, 2)))(a, c)  # later axes first: nothing moves down
    assert info.value.hint is not None and info.value.hint.endswith(
        "jax.vmap(jax.vmap(solve, in_axes=(0, 1)), in_axes=(1, 0))"
    )
    assert jax.vmap(jax.vmap(solve, in_axes=(0, 1)), in_axes=(1, 0))(a, c).shape == (2, 3, 2)


def test_nested_vmaps_are_offered_only_as_jax_runs_them() -> None:
    """The nest for several axes per argument: negative axes counted from the end; none
    where the levels' sizes disagree (JAX would refuse the nest), for pmap (a pmap in a
    pmap is rarely meant), or for a Python scalar, which is called one."""

    def solve(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.linalg.solve(a, b)

    a, b = jnp.ones((3, 2, 2, 2)) + jnp.eye(2)[None, None], jnp.ones((3, 2, 2))
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(solve, in_axes=((0, -3), (0, -2)))(a, b)
    nested = "jax.vmap(jax.vmap(solve, in_axes=(0, 0)), in_axes=(0, 0))"
    assert info.value.hint is not None and info.value.hint.endswith(nested)
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(solve, in_axes=((1, 0), (0, 2)))(a, b)  # a's axis 1 has 2, b's axis 0 has 3
    assert info.value.fix is None
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(solve, in_axes=((0, 0), (0, 1)))(a, b)  # one axis twice
    assert info.value.fix is None
    with pytest.raises(ax.ArgumentError) as info:
        ax.pmap(solve, in_axes=((0, 1), (0, 1)))(jnp.ones((2, 2, 2, 2)), jnp.ones((2, 2, 2)))
    assert info.value.fix is None and "pmap" in info.value.problem
    with pytest.raises(ax.ArgumentError) as info:
        ax.vmap(lambda x, s: x * s, in_axes=(0, (0, 1)))(jnp.ones(3), 2.0)
    assert "several axes for s, a Python scalar" in info.value.problem


def test_a_shard_map_call_missing_an_argument_names_it() -> None:
    """jax#15728: in_specs has an entry for x and y; the call passed x alone."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))

    def add(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    f = ax.shard_map(add, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    with pytest.raises(ax.SpecError) as info:
        f(jnp.arange(8.0))  # axischeck: ignore
    assert info.value.problem.startswith("add takes x and y, but y was not passed; in_specs is a tuple of length 2")

    def add3(x: jax.Array, y: jax.Array, z: jax.Array | None = None) -> jax.Array:
        return x + y if z is None else x + y + z

    f = ax.shard_map(add3, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    with pytest.raises(ax.SpecError) as info:
        f(jnp.arange(8.0))  # axischeck: ignore
    assert info.value.problem.startswith("in_specs' entries stand for add3's x and y, but y was not passed;")


def test_a_dict_in_axes_for_a_one_argument_function_names_the_argument() -> None:
    """jax#18548: the dict was meant for x, the function's one positional argument."""

    def pick(x: dict[str, jax.Array]) -> jax.Array:
        return x["a"]

    with pytest.raises(ax.SpecError) as info:
        ax.vmap(pick, in_axes={"a": 0})  # type: ignore[arg-type]  # axischeck: ignore
    assert isinstance(info.value, TypeError)  # JAX's type
    assert info.value.hint == (
        "in_axes is matched to the positional arguments: in_axes=({'a': 0},) gives the axes inside x, the dict argument"
    )
    assert ax.vmap(pick, in_axes=({"a": 0},))({"a": jnp.ones((3, 2))}).shape == (3, 2)


def test_an_unmapped_output_names_the_mapped_arguments_it_comes_from() -> None:
    """haiku#458: parameters made from a key split per example cannot be shared
    (out_axes None); the message says the output comes from key, and the first remedy is
    to leave key unmapped."""

    def init(x: jax.Array, params: dict[str, jax.Array]) -> tuple[jax.Array, jax.Array]:
        w = params["key"] * 2.0
        return x * params["scale"], w

    f = ax.vmap(init, in_axes=(0, {"key": 0, "scale": None}), out_axes=(0, None))
    with pytest.raises(ax.OutputError) as info:
        f.predict(jnp.ones(3), {"key": jnp.ones(3), "scale": jnp.float32(2.0)})
    err = info.value
    assert "output[1] depends on params['key'], which in_axes maps" in err.problem
    assert err.hint is not None and err.hint.startswith(
        "leave params['key'] unmapped (in_axes entry None) if output[1]"
    )


def test_an_unmapped_output_names_only_the_arguments_the_record_shows_it_comes_from() -> None:
    """An equation with several outputs (a jit returning a tuple, a scan) is followed
    inside, not blamed on all of its inputs; a keyword argument's remedy is one JAX
    accepts (functools.partial, or passing it by position), not an in_axes entry."""

    def via_jit(x: jax.Array, w: jax.Array) -> jax.Array:
        _, total = jax.jit(lambda x, w: (x * 2.0, w.sum()))(x, w)
        return total

    def via_scan(x: jax.Array, w: jax.Array) -> jax.Array:
        (_, last), _ = jax.lax.scan(lambda cd, t: ((cd[1], t), None), (x[0], 1.0), w)
        return last

    x, w = jnp.ones((4, 3)), jnp.ones((4, 3))
    for fn in (via_jit, via_scan):
        with pytest.raises(ax.OutputError) as info:
            ax.vmap(fn, in_axes=(0, 0), out_axes=None).predict(x, w)
        assert "output depends on w, which in_axes maps" in info.value.problem, fn.__name__

    def carried(x: jax.Array, w: jax.Array) -> jax.Array:  # x reaches `last` on the second step
        (_, last), _ = jax.lax.scan(lambda cd, t: ((t, cd[0]), None), (x[0], 1.0), w)
        return last

    with pytest.raises(ax.OutputError) as info:
        ax.vmap(carried, in_axes=(0, 0), out_axes=None).predict(x, w)
    assert "output depends on x and w, which in_axes maps" in info.value.problem

    from axischeck._engine._levels import Sources

    assert Sources(["x"], ["scale"]).unmapping() == (
        "leave x unmapped (in_axes entry None) and bind scale with functools.partial or pass it by"
        " position with the in_axes entry None (a keyword argument is always mapped)"
    )
    with pytest.raises(ax.OutputError) as info:
        ax.vmap(lambda x, *, s: x.sum() * s, in_axes=(None,), out_axes=None).predict(jnp.ones(3), s=jnp.ones(4))
    assert "output depends on s, which is mapped" in info.value.problem


def test_an_error_that_is_also_jaxs_keeps_jaxs_attributes_and_its_own_text() -> None:
    """JAX's DuplicateSpecError builds its text from attributes of its own: the error
    axischeck raises in its place is one too, prints its own text, and carries JAX's
    attributes for code that reads them."""
    mesh = jax.make_mesh((jax.device_count(),), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    raised: dict[str, BaseException] = {}
    for name, transform in (("jax", jax.shard_map), ("ax", ax.shard_map)):
        mapped = transform(lambda a: a, mesh=mesh, in_specs=P("x", "x"), out_specs=P("x"))  # type: ignore[no-untyped-call]
        with pytest.raises(Exception) as caught:
            mapped(jnp.ones((8, 8)))
        raised[name] = caught.value
    ours, theirs = raised["ax"], raised["jax"]
    assert isinstance(ours, ax.AxisCheckError) and isinstance(ours, type(theirs))
    assert str(ours).startswith("shard_map(") and str(theirs) in str(ours)
    assert (ours.mesh, ours.pspec, ours.message) == (theirs.mesh, theirs.pspec, theirs.message)  # type: ignore[attr-defined]
