"""The signature grammar, its algebra (vmap lifts a signature) and unification."""

from __future__ import annotations

import re
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(a,b),(b,c)->(a,c)", "(a, b), (b, c) -> (a, c)"),
        ("(a, b), (b, c) -> (a, c)", "(a, b), (b, c) -> (a, c)"),
        ("()->()", "() -> ()"),
        ("(n,3),(3)->(n),(n)", "(n, 3), (3) -> (n), (n)"),
        ("n f, f o -> n", "(n, f), (f, o) -> (n)"),
        ("*batch c, c -> *batch", "(*batch, c), (c) -> (*batch)"),
        ("... c -> c", "(..., c) -> (c)"),
        ("_ c, #c -> c", "(_, c), (#c) -> (c)"),
        ("(a,b),(b,c)", "(a, b), (b, c)"),
    ],
)
def test_parse_and_print(text: str, expected: str) -> None:
    assert str(ax.Signature(text)) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("(a,b", "unbalanced"),
        ("(a,b)->(a)->(b)", "more than one '->'"),
        ("(a,b)->", "declares no output"),
        ("(a b)x,(c)", "cannot parse"),
        ("(*a, *b)", "more than one variadic"),
        ("(a-b)", "bad dimension"),
        ("(#3)", "'#' needs a name"),
        ("(*#a)", "broadcastable variadic"),
        ("((a))", "unbalanced"),
    ],
)
def test_bad_signature_strings_raise_spec_error(text: str, fragment: str) -> None:
    with pytest.raises(ax.SpecError, match=re.escape(fragment)):
        ax.Signature(text)


def test_pytree_and_dict_forms() -> None:
    sig = ax.Signature(("i", {"W": "o i", "b": "o"}), output="o")
    assert str(sig) == "(i), {'W': (o, i), 'b': (o)} -> (o)"
    pred = sig.predict((784,), {"W": (256, 784), "b": (256,)})
    assert pred.shapes == (256,)
    named = ax.Signature({"x": "i", "params": {"W": "o i", "b": "o"}, "return": "o"})
    assert named.core.params == ("x", "params")
    assert named.predict(x=(784,), params={"W": (256, 784), "b": (256,)}).shapes == (256,)


def test_non_string_leaves_are_rejected() -> None:
    with pytest.raises(ax.SpecError, match="dim strings"):
        ax.Signature(("a", 3))
    with pytest.raises(ax.SpecError, match="a signature is a string"):
        ax.Signature(42)


def test_vmap_inserts_batch_symbol_where_axes_say() -> None:
    s = ax.Signature(EINSUM).vmap(in_axes=(0, 1, 0))
    assert str(s) == "(B, a, b), (b, B, c), (B, a, c) -> (B, a, c)"
    s2 = s.vmap(in_axes=(2, 0, None), out_axes=1)
    assert str(s2) == "(B, a, B2, b), (B2, b, B, c), (B, a, c) -> (B, B2, a, c)"
    named = ax.Signature("(n)->(n)").vmap(axis_name="devices")
    assert str(named) == "(devices, n) -> (devices, n)"


def test_vmap_negative_axes_and_variadics() -> None:
    assert str(ax.Signature("(a,b)->(a)").vmap(in_axes=-1, out_axes=-1)) == "(a, b, B) -> (a, B)"
    # A variadic before the insertion point makes the position depend on the rank.
    ambiguous = ax.Signature("(*s,c)->(c)").vmap(in_axes=1)
    assert "vmap[B]" in str(ambiguous)
    assert ambiguous.predict((2, 5, 3)).shapes == (5, 3)
    assert ambiguous.predict((2, 5, 7, 3)).shapes == (5, 3)


def test_signature_predict_agrees_with_jax_on_the_seed_example() -> None:
    f = lambda x, y, z: jnp.einsum("ab,bc->ac", x, y) + z
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in [(16, 8, 4), (4, 16, 2), (16, 8, 2)]]
    want = jax.eval_shape(jax.vmap(f, in_axes=(0, 1, 0)), *args).shape
    pred = ax.Signature(EINSUM).vmap(in_axes=(0, 1, 0)).predict(*args)
    assert pred.shapes == want == (16, 8, 2)
    assert pred.axis_size == 16


def test_unify_returns_bindings_or_conflict() -> None:
    s = ax.Signature(EINSUM).vmap(in_axes=(0, 1, 0))
    ok = s.unify((16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert isinstance(ok, ax.Bindings)
    assert dict(ok.sizes) == {"a": 8, "b": 4, "c": 2, "B": 16}
    bad = s.unify((16, 8, 4), (5, 16, 2), (16, 8, 2))
    assert isinstance(bad, ax.Conflict)
    assert bad.symbol == "b"
    first, second = bad.places
    assert (first.batched_axis, first.size, second.batched_axis, second.size) == (2, 4, 0, 5)


def test_variadic_binds_a_tuple() -> None:
    s = ax.Signature("*batch c, c -> *batch")
    b = s.unify((2, 3, 4), (4,))
    assert isinstance(b, ax.Bindings) and b.sizes["batch"] == (2, 3)
    assert s.predict((2, 3, 4), (4,)).shapes == (2, 3)
    conflict = ax.Signature("*s c, *s c -> c").unify((2, 3, 4), (2, 5, 4))
    assert isinstance(conflict, ax.Conflict) and conflict.symbol == "s"


def test_fixed_anonymous_and_broadcast_dims() -> None:
    assert ax.Signature("(n,3)->(n)").predict((5, 3)).shapes == (5,)
    with pytest.raises(ax.ArgumentError, match="fixes it to 3"):
        ax.Signature("(n,3)->(n)").predict((5, 4))
    assert ax.Signature("_ n -> n").predict((7, 2)).shapes == (2,)
    assert ax.Signature("n, #n -> n").predict((4,), (1,)).shapes == (4,)
    with pytest.raises(ax.ArgumentError, match="'n' disagrees"):
        ax.Signature("n, #n -> n").predict((4,), (3,))


def test_output_symbols_must_be_bound() -> None:
    with pytest.raises(ax.SpecError, match="k is not bound"):
        ax.Signature("(n)->(k)").predict((3,))


def test_axis_name_is_a_dimension_symbol() -> None:
    s = ax.Signature("(n)->(i,n)").vmap(axis_name="i")
    assert s.predict((4, 3)).shapes == (4, 4, 3)


def test_signatures_are_values() -> None:
    a = ax.Signature(EINSUM)
    assert a == ax.Signature("(a, b), (b, c), (a, c) -> (a, c)")
    assert hash(a.vmap(in_axes=(0, 1, 0))) == hash(ax.Signature(EINSUM).vmap(in_axes=(0, 1, 0)))
    with pytest.raises(AttributeError):
        a.foo = 1  # type: ignore[attr-defined]


def test_annotations_give_the_signature() -> None:
    Array = jax.Array

    def f(x: Annotated[Array, "a b"], y: Annotated[Array, "b c"]) -> Annotated[Array, "a c"]:
        return x @ y

    g = ax.vmap(f, in_axes=(0, None))
    assert g.signature is not None and str(g.signature) == "(a, b), (b, c) -> (a, c)"
    assert g.predict((5, 2, 3), (3, 4)).shapes == (5, 2, 4)
    with pytest.raises(ax.ArgumentError, match="'b' disagrees"):
        g.predict((5, 2, 3), (6, 4))


_names = st.sampled_from(["a", "b", "c", "n"])
_dim = st.one_of(_names, st.integers(0, 9).map(str), st.just("_"))


@given(st.lists(st.lists(_dim, max_size=4), min_size=1, max_size=3))
def test_gufunc_round_trip(arrays: list[list[str]]) -> None:
    text = ",".join("(" + ",".join(a) + ")" for a in arrays) + "->()"
    sig = ax.Signature(text)
    assert ax.Signature(str(sig)) == sig


@given(st.text(max_size=30))
def test_garbage_never_escapes_as_another_exception(text: str) -> None:
    try:
        ax.Signature(text)
    except ax.AxisCheckError:
        pass


@pytest.mark.parametrize("name", ["é", "e\u0301", "A\u030a", "\u0e01\u0e31", "\ufb01", "α", "a\u0661", "n", "x\u00b2"])
def test_a_name_read_from_an_annotation_prints_back_or_is_refused(name: str) -> None:
    """A name accepted from an annotation (text, never evaluated) prints a signature that
    parses back to itself; one no reader accepts (`x²`) is refused at decoration."""
    namespace: dict[str, Any] = {}
    exec(f"def f(x: \"Float[Array, '{name}']\") -> \"Float[Array, '{name}']\":\n    return x", namespace)
    try:
        sig = ax.vmap(namespace["f"]).signature
    except ax.SpecError:
        assert not name.isidentifier()
        return
    assert sig is not None and str(ax.Signature(str(sig))) == str(sig)
