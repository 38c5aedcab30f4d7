"""`ax.check`: a plain (unmapped) function checked against its signature.

The contract (API.md, `help(ax.check)`, docs/guide.md): `ax.check(fun, signature=...)` is the
identity transform of the signature algebra. A call returns what `fun` returns, bit for bit,
after checking the arguments against the signature (a mismatch is an `ArgumentError` before
the function runs on data, even where JAX's broadcasting would hide it) and the output
against the prediction (an `OutputError` naming the output leaf, declared vs actual); errors
that are not about shapes pass through untouched. `predict` answers from the signature
alone (no FLOPs), `explain` gives its table. The oracle is the plain function and JAX's own
`jax.eval_shape` / `jax.jit` of it.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax
from jax_oracle import Ok, Tracked, assert_call_agrees, assert_predict_agrees, concrete, counting, jax_eval_shape, sds

MATMUL = "n f, f o -> n o"


def matmul(X: jax.Array, W: jax.Array) -> jax.Array:
    return X @ W


def _plain_error(call: Any) -> Exception:
    """The exception the plain function raises."""
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("the plain function did not raise")


# ------------------------------------------------------------------------ forms


def test_every_form_checks_the_same_signature() -> None:
    """`ax.check(f, signature=...)`, `@ax.check(signature=...)` and a bare `@ax.check` that
    reads `Annotated` dims all give an `ax.Checked` of the function, named as it is."""

    @ax.check(signature=MATMUL)
    def called(X: jax.Array, W: jax.Array) -> jax.Array:
        return X @ W

    @ax.check
    def bare(X: Annotated[jax.Array, "n f"], W: Annotated[jax.Array, "f o"]) -> Annotated[jax.Array, "n o"]:
        return X @ W

    direct = ax.check(matmul, signature=MATMUL)
    decorator = ax.check(signature=MATMUL)
    assert not isinstance(decorator, ax.Checked) and callable(decorator)
    for checked, name in [(direct, "matmul"), (called, "called"), (bare, "bare")]:
        assert isinstance(checked, ax.Checked), name
        assert checked.__name__ == name
        assert str(checked.signature) == "(n, f), (f, o) -> (n, o)", name
        assert list(inspect.signature(checked).parameters) == ["X", "W"], name
    assert direct.__wrapped__ is matmul
    assert ax.check(matmul, signature="(n,f),(f,o)->(n,o)").signature == direct.signature  # gufunc text


def test_a_given_signature_replaces_the_annotations() -> None:
    def f(x: Annotated[jax.Array, "n"]) -> Annotated[jax.Array, "n"]:
        return x[:2]

    assert str(ax.check(f).signature) == "(n) -> (n)"
    replaced = ax.check(f, signature="(n)->(2)")
    assert str(replaced.signature) == "(n) -> (2)"
    assert replaced(jnp.ones(5)).shape == (2,)
    with pytest.raises(ax.OutputError):  # the annotations' own promise, which the function breaks
        ax.check(f)(jnp.ones(5))


def test_a_check_needs_a_callable_and_shapes_that_fit_it() -> None:
    """Refusals at decoration are `SpecError`s (also `TypeError`s), naming what is wrong."""
    with pytest.raises(ax.SpecError, match="check needs a callable, got int: 3") as info:
        ax.check(3, signature="()->()")  # type: ignore[call-overload]
    assert isinstance(info.value, TypeError)
    with pytest.raises(ax.SpecError, match=r"check\(<lambda>\) needs shapes to check: pass signature="):
        ax.check(lambda x: x)
    with pytest.raises(ax.SpecError, match="declares 2 inputs but <lambda> has only 1 parameters"):
        ax.check(lambda x: x, signature="(n),(n)->(n)")
    with pytest.raises(ax.SpecError):
        ax.check(lambda x: x, signature="(n->(n)")
    checked = ax.check(matmul, signature=MATMUL)
    with pytest.raises(ax.SpecError, match="already an axischeck transform"):
        ax.check(checked, signature=MATMUL)


# ------------------------------------------------------------------------ calls


def test_a_call_returns_what_the_function_returns() -> None:
    """Same values, dtypes, types and pytree structure as calling the function itself."""
    x, w = concrete((4, 3)), concrete((3, 2), seed=1)
    np.testing.assert_array_equal(ax.check(matmul, signature=MATMUL)(x, w), matmul(x, w))

    def stats(v: jax.Array) -> dict[str, Any]:
        return {"sum": v.sum(0), "rows": [v.astype(jnp.int32), v.max()]}

    spec = ax.Signature(("n k",), output={"sum": "k", "rows": ["n k", ""]})
    got, want = ax.check(stats, signature=spec)(x), stats(x)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w_ in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        assert type(g) is type(w_) and g.dtype == w_.dtype
        np.testing.assert_array_equal(g, w_)
    as_numpy = ax.check(lambda v: v, signature="(n)->(n)")(np.arange(3.0))
    assert type(as_numpy) is np.ndarray  # the function's own output, untouched


def test_keyword_arguments_and_python_scalars_are_checked_like_positional_ones() -> None:
    scaled = ax.check(lambda x, s: x * s, signature="(n),()->(n)")
    np.testing.assert_array_equal(scaled(jnp.arange(3.0), 2.0), jnp.arange(3.0) * 2.0)
    assert scaled.predict((3,), 2.0).shapes == (3,)
    checked = ax.check(matmul, signature=MATMUL)
    assert checked.predict((4, 3), W=(3, 2)).shapes == (4, 2)
    np.testing.assert_array_equal(checked(jnp.ones((4, 3)), W=jnp.ones((3, 2))), jnp.full((4, 2), 3.0))
    with pytest.raises(ax.ArgumentError, match="'f' disagrees: 3 from X, 5 from W"):
        checked(jnp.ones((4, 3)), W=jnp.ones((5, 2)))


def test_a_conflict_is_refused_before_the_function_runs_on_data() -> None:
    """The arguments are checked first: the function is traced abstractly once, for JAX's
    own verdict, whose type the error takes and whose message it keeps."""
    seen, runs = counting(lambda X, W: X @ W)
    kinds: list[type] = []

    def spy(X: jax.Array, W: jax.Array) -> jax.Array:
        kinds.append(type(X))
        return seen(X, W)

    checked = ax.check(spy, signature=MATMUL)
    x, bad = jnp.ones((32, 20)), jnp.ones((21, 1))
    jax_error = _plain_error(lambda: matmul(x, bad))
    with pytest.raises(ax.ArgumentError) as info:
        checked(x, bad)
    assert all(issubclass(k, jax.core.Tracer) for k in kinds) and runs[0] <= 1
    err = info.value
    assert isinstance(err, type(jax_error))  # TypeError, as JAX raises it
    assert f"  JAX: {type(jax_error).__name__}: {jax_error}" in str(err).splitlines()
    assert err.symbol == "f"
    assert [(p.arg, p.axis, p.size) for p in err.places] == [("X", 1, 20), ("W", 0, 21)]
    headline = str(err).splitlines()[0]
    assert headline == "check(spy, signature=(n, f), (f, o) -> (n, o)): dimension 'f' disagrees: 20 from X, 21 from W"


def test_a_size_jax_broadcasts_silently_is_refused() -> None:
    """`x + y` of shapes (3,) and (1,) runs in JAX (broadcasting); the signature says both
    are `n`, so the checked call refuses it, and `predict` says so too."""
    add = ax.check(lambda x, y: x + y, signature="(n),(n)->(n)")
    x, y = jnp.ones(3), jnp.ones(1)
    assert (x + y).shape == (3,)  # JAX's silent answer
    for attempt in (lambda: add(x, y), lambda: add.predict(x, y)):
        with pytest.raises(ax.ArgumentError, match="dimension 'n' disagrees: 3 from x, 1 from y"):
            attempt()
    assert add(x, jnp.ones(3)).shape == (3,)


@pytest.mark.parametrize(
    ("signature", "shape", "fragment"),
    [
        ("(n,m)->(n,m)", (3,), "x has per-example shape (3,) of rank 1, but its signature (n, m) needs rank 2"),
        ("(3)->(3)", (4,), "axis 0 of x has size 4, but the signature (3) fixes it to 3"),
    ],
    ids=["rank", "fixed-size"],
)
def test_ranks_and_fixed_sizes_are_checked(signature: str, shape: tuple[int, ...], fragment: str) -> None:
    checked = ax.check(lambda x: x, signature=signature)
    with pytest.raises(ax.ArgumentError) as predicted:
        checked.predict(shape)
    with pytest.raises(ax.ArgumentError) as called:
        checked(jnp.ones(shape))
    assert fragment in str(predicted.value) and fragment in str(called.value)


def test_check_catches_the_silent_broadcast_of_seed_example_5() -> None:
    forward = ax.check(lambda X, W: jnp.dot(X, W), signature="n f, f o -> n")
    with pytest.raises(ax.OutputError, match=r"output has shape \(32, 1\), but the signature predicts \(32,\)"):
        forward(jnp.ones((32, 20)), jnp.ones((20, 1)))
    good = ax.check(lambda X, W: jnp.dot(X, W)[:, 0], signature="n f, f o -> n")
    assert good(jnp.ones((32, 20)), jnp.ones((20, 1))).shape == (32,)
    assert good.predict((32, 20), (20, 1)).axis_size is None
    with pytest.raises(ax.SpecError, match="needs shapes to check"):
        ax.check(lambda X: X)


def test_an_output_that_contradicts_the_signature_names_its_leaf_eagerly_and_under_jit() -> None:
    spec = ax.Signature(("n k",), output={"mean": "k", "total": ""})
    lying = ax.check(lambda x: {"mean": x.mean(1), "total": x.sum()}, signature=spec)  # mean over k, not n
    x = jnp.ones((4, 3))
    for run in (lying, jax.jit(lying)):
        with pytest.raises(ax.OutputError) as info:
            run(x)
        text = str(info.value)
        assert "output['mean'] has shape (4,), but the signature predicts (3,) (declared (k))" in text
        assert "output['total']" in text  # the table shows every leaf
    honest = ax.check(lambda x: {"mean": x.mean(0), "total": x.sum()}, signature=spec)
    assert jax.tree.map(jnp.shape, honest(x)) == {"mean": (3,), "total": ()}


def test_errors_that_are_not_about_shapes_pass_through_untouched() -> None:
    class Boom(Exception):
        pass

    def boom(x: jax.Array) -> jax.Array:
        raise Boom("mine")

    with pytest.raises(Boom, match="mine"):
        ax.check(boom, signature="(n)->(n)")(jnp.ones(3))

    def picky(x: jax.Array) -> jax.Array:  # the signature allows any n; the function does not
        return x @ jnp.ones(7)

    x = jnp.ones(3)
    jax_error = _plain_error(lambda: picky(x))
    with pytest.raises(type(jax_error)) as info:
        ax.check(picky, signature="(n)->()")(x)
    assert not isinstance(info.value, ax.AxisCheckError)
    assert str(info.value) == str(jax_error)


def test_a_method_binds_self_as_a_function_would() -> None:
    class Layer:
        def __init__(self) -> None:
            self.w = concrete((3, 2))

        @ax.check(signature={"x": "n k", "return": "n o"})
        def apply(self, x: jax.Array) -> jax.Array:
            return x @ self.w

    layer, x = Layer(), concrete((4, 3), seed=2)
    np.testing.assert_array_equal(layer.apply(x), x @ layer.w)
    assert layer.apply.predict((4, 3)).shapes == (4, 2)
    assert Layer.apply.predict(layer, (4, 3)).shapes == (4, 2)
    assert list(inspect.signature(layer.apply).parameters) == ["x"]


# --------------------------------------------------------------- predict / explain


@pytest.mark.parametrize(
    ("fun", "signature", "args"),
    [
        (matmul, MATMUL, ((32, 20), (20, 1))),
        (lambda x: x.sum(-1), "*b n -> *b", ((2, 3, 4),)),
        (lambda x: x.sum(-1), "(*b, n) -> (*b)", ((5,),)),
        (
            lambda x, p: x @ p["W"] + p["b"],
            {"x": "i", "p": {"W": "i o", "b": "o"}, "return": "o"},
            ((3,), {"W": (3, 2), "b": (2,)}),
        ),
        (lambda x: (x, x.sum()), "(n, k) -> (n, k), ()", ((0, 4),)),
    ],
    ids=["matmul", "variadic", "variadic-gufunc", "pytree", "two-outputs"],
)
def test_predict_gives_jax_eval_shape_of_the_function(fun: Any, signature: Any, args: tuple[Any, ...]) -> None:
    """Leaves are `ax.Shape`s shaped like the function's output; no mapped size."""
    checked = ax.check(fun, signature=signature)
    structs = jax.tree.map(sds, args, is_leaf=lambda a: type(a) is tuple and all(type(d) is int for d in a))
    want = jax.eval_shape(fun, *structs)
    for given_as in (args, structs):
        pred = checked.predict(*given_as)
        assert jax.tree.map(tuple, pred.shapes) == jax.tree.map(lambda s: s.shape, want)
        assert all(type(leaf) is ax.Shape for leaf in jax.tree_util.tree_leaves(pred.shapes))
        assert pred.axis_size is None
    arrays = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), structs)
    assert checked.predict(*arrays).shapes == pred.shapes  # arrays too


def test_predict_runs_none_of_the_functions_flops() -> None:
    """From the signature alone: the function never sees data, is not traced again for new
    shapes, and need not even work."""
    fun, runs = counting(matmul)
    kinds: list[type] = []

    def spy(X: jax.Array, W: jax.Array) -> jax.Array:
        kinds.append(type(X))
        return fun(X, W)

    checked = ax.check(spy, signature=MATMUL)
    assert checked.predict((1, 3), (3, 2)).shapes == (1, 2)
    first = runs[0]
    for n in range(2, 30):
        assert checked.predict((n, 3), (3, n)).shapes == (n, n)
    assert runs[0] == first <= 1
    assert all(issubclass(k, jax.core.Tracer) for k in kinds)

    def broken(x: jax.Array) -> jax.Array:
        raise RuntimeError("never called by predict")

    assert ax.check(broken, signature="(n)->(n)").predict((3,)).shapes == (3,)


def test_predict_on_tracers_inside_a_jit_trace() -> None:
    checked = ax.check(matmul, signature=MATMUL)
    seen: list[Any] = []

    def traced(x: jax.Array, w: jax.Array) -> jax.Array:
        seen.append(checked.predict(x, w).shapes)
        return checked(x, w)

    out = jax.jit(traced)(jnp.ones((5, 3)), jnp.ones((3, 4)))
    assert seen == [(5, 4)] and out.shape == (5, 4)


def test_explain_is_the_table_or_the_errors_text() -> None:
    checked = ax.check(matmul, signature=MATMUL)
    text = checked.explain((32, 20), (20, 1))
    pred = checked.predict((32, 20), (20, 1))
    assert text.splitlines()[0] == "check(matmul, signature=(n, f), (f, o) -> (n, o)) -> (32, 1)"
    assert text == f"{text.splitlines()[0]}\n{pred}"
    assert "X    (32, 20)  (n, f)     n=32  f=20" in text
    with pytest.raises(ax.ArgumentError) as info:
        checked.predict((32, 20), (21, 1))
    assert checked.explain((32, 20), (21, 1)) == f"ArgumentError: {info.value}"


def test_infer_signature_of_a_check_predicts_like_jax() -> None:
    sig = ax.check(matmul, signature=MATMUL).infer_signature((4, 3), (3, 2))
    assert str(sig) == "(a, b), (b, c) -> (a, c)"
    again = ax.check(matmul, signature=sig)
    assert again.predict((7, 5), (5, 1)).shapes == jax.eval_shape(matmul, sds((7, 5)), sds((5, 1))).shape


# ------------------------------------------------------------- agreement with JAX


@given(n=st.integers(0, 4), f=st.integers(0, 4), g=st.integers(0, 4), o=st.integers(0, 4))
def test_matmul_predict_and_call_agree_with_jax(n: int, f: int, g: int, o: int) -> None:
    """The signature is exactly as strict as `X @ W`: `predict` raises where JAX raises and
    gives its shapes elsewhere; a call returns JAX's values or raises where JAX does."""
    checked = ax.check(matmul, signature=MATMUL)
    args = (sds((n, f)), sds((g, o)))
    assert_predict_agrees(checked.predict, jax_eval_shape(matmul, args), args, context=f"{args}")
    tracker = Tracked()
    values = (concrete((n, f)), concrete((g, o), seed=1))
    assert_call_agrees(checked, tracker.wrap(matmul), tracker, values, context=f"{args}")


@given(n=st.integers(0, 4), m=st.integers(0, 4))
def test_elementwise_sizes_must_be_equal_where_jax_would_broadcast(n: int, m: int) -> None:
    add = ax.check(lambda x, y: x + y, signature="(n),(n)->(n)")
    jax_says = jax_eval_shape(lambda x, y: x + y, (sds((n,)), sds((m,))))
    if n == m:
        assert add.predict((n,), (m,)).shapes == (n,)
        np.testing.assert_array_equal(add(concrete((n,)), concrete((m,))), concrete((n,)) + concrete((m,)))
    else:  # JAX broadcasts a size 1 and refuses the rest: the signature refuses both
        assert isinstance(jax_says, Ok) == (1 in (n, m)), jax_says
        with pytest.raises(ax.ArgumentError):
            add.predict((n,), (m,))
        with pytest.raises(ax.ArgumentError):
            add(concrete((n,)), concrete((m,)))


def test_jit_compiles_to_the_functions_own_program_and_checks_once_per_trace() -> None:
    plain = jax.jit(matmul)
    x, w = concrete((4, 3)), concrete((3, 2), seed=1)
    assert jax.jit(ax.check(matmul, signature=MATMUL)).lower(x, w).as_text() == plain.lower(x, w).as_text()
    fun, runs = counting(matmul)
    checked = jax.jit(ax.check(fun, signature=MATMUL))
    for _ in range(3):
        np.testing.assert_array_equal(checked(x, w), plain(x, w))
    assert runs[0] == 1  # one trace, the checks inside it; the compiled steady state runs nothing more
    checked(concrete((5, 3)), w)
    assert runs[0] == 2
    with pytest.raises(ax.ArgumentError, match="'f' disagrees"):
        checked(x, concrete((4, 2)))


def test_composes_with_jax_transforms_as_the_function_does() -> None:
    loss = ax.check(lambda v: (v**2).sum(), signature="(n)->()")
    x = concrete((5,))
    np.testing.assert_array_equal(jax.grad(loss)(x), jax.grad(lambda v: (v**2).sum())(x))
    checked = ax.check(matmul, signature=MATMUL)
    xs, w = concrete((2, 4, 3)), concrete((3, 2), seed=1)
    np.testing.assert_array_equal(
        jax.vmap(checked, in_axes=(0, None))(xs, w), jax.vmap(matmul, in_axes=(0, None))(xs, w)
    )
    assert jax.eval_shape(checked, sds((4, 3)), sds((3, 2))) == jax.eval_shape(matmul, sds((4, 3)), sds((3, 2)))
    with pytest.raises(ax.ArgumentError):  # checked per example, inside JAX's vmap
        jax.vmap(checked, in_axes=(0, None))(xs, concrete((2, 2)))


def test_an_axischeck_vmap_of_a_check_lifts_its_signature() -> None:
    batched = ax.vmap(ax.check(matmul, signature=MATMUL), in_axes=(0, None))
    assert str(batched.batched_signature) == "(B, n, f), (f, o) -> (B, n, o)"
    want = jax.eval_shape(jax.vmap(matmul, in_axes=(0, None)), sds((5, 4, 3)), sds((3, 2)))
    assert batched.predict((5, 4, 3), (3, 2)).shapes == want.shape
    with pytest.raises(ax.ArgumentError, match="'f'"):
        batched.predict((5, 4, 3), (2, 2))


def test_with_the_checks_off_a_check_is_the_function_itself() -> None:
    """Made inside `checks_disabled()`, in every form, it is the function; made before, its
    calls are the function's own, unchecked, while predict still answers."""
    add = ax.check(lambda x, y: x + y, signature="(n),(n)->(n)")
    x, y = jnp.ones(3), jnp.ones(1)
    with ax.checks_disabled():
        assert ax.check(signature="(n)->(n)")(jnp.sin) is jnp.sin
        assert ax.check(jnp.cos, signature="(n)->(n)") is jnp.cos
        np.testing.assert_array_equal(add(x, y), x + y)  # JAX's broadcast, unchecked
        assert add.predict((3,), (3,)).shapes == (3,)
    with pytest.raises(ax.ArgumentError):
        add(x, y)
