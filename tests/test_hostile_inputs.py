"""Hostile inputs to the spec side of axischeck: `Shape`, signature text and pytrees,
annotations, and the command line.

The property throughout: a bad input gets a clear `ax.AxisCheckError` (a `SpecError`
for a malformed spec, exit status 2 with one line on stderr for the CLI), never an
internal IndexError / KeyError / AttributeError / RecursionError / ValueError, and the
interpreter keeps working afterwards.
"""

from __future__ import annotations

import collections
import copy
import pickle
import subprocess
import sys
import time
from typing import Annotated, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import axischeck as ax
from axischeck._annotations import core_from_annotations
from axischeck._dims import parse_array_spec

# --------------------------------------------------------------------------- Shape


@pytest.mark.parametrize(
    "dims",
    [(1.5,), ("3",), (-1,), (True,), (np.bool_(True),), (None,), (3.0,), ((2,),), (np.float32(2),), (1j,)],
    ids=repr,
)
def test_shape_refuses_junk_sizes(dims: tuple[Any, ...]) -> None:
    with pytest.raises(ax.SpecError, match=r"Shape sizes must be ints >= 0"):
        ax.Shape(dims)


@pytest.mark.parametrize("dims", [5, None, 2.5, object()], ids=repr)
def test_shape_refuses_a_non_sequence(dims: Any) -> None:
    with pytest.raises(ax.SpecError, match=r"Shape takes a sequence of sizes"):
        ax.Shape(dims)


def test_shape_refuses_a_string() -> None:
    with pytest.raises(ax.SpecError):
        ax.Shape("12")  # type: ignore[arg-type]


def test_shape_accepts_ints_and_numpy_integers_as_ints() -> None:
    s = ax.Shape((np.int64(3), np.int32(0), 7, np.uint8(2)))
    assert s == (3, 0, 7, 2) and all(type(d) is int for d in s)
    assert ax.Shape([4, 5]) == (4, 5)
    assert ax.Shape() == ()
    assert ax.Shape((16, 8)).insert(0, 2) == (2, 16, 8)
    with pytest.raises(ax.SpecError):
        ax.Shape((16, 8)).insert(0, -2)


def test_shape_round_trips_through_pickle_and_copy() -> None:
    s = ax.Shape((16, 8, 2))
    for t in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert t == s and type(t) is ax.Shape


# ------------------------------------------------------------------ signature text


@pytest.mark.parametrize(
    "text",
    [
        "(" + "9" * 5000 + ")->()",  # past Python's 4300-digit int conversion limit
        "(" + "9" * 30 + ")->()",  # far past any array size
        "(²)->()",  # isdigit() but int() fails
        "(٣)->()",  # int() reads it as 3: not what the grammar says
        "(３)->()",  # fullwidth digit
        "(a²)->()",
        "(a\x00)->()",
        "(#٣)->()",
    ],
    ids=lambda t: repr(t[:20]),
)
def test_bad_numbers_in_signatures_are_spec_errors(text: str) -> None:
    with pytest.raises(ax.SpecError):
        ax.Signature(text)
    with pytest.raises(ax.SpecError):
        parse_array_spec(text.split("->")[0])


def test_big_ints_in_batched_signatures() -> None:
    with pytest.raises(ax.SpecError):
        ax.Signature.batched("(n," + "9" * 5000 + ")->(n)", over="n")


def test_large_but_sane_fixed_sizes_still_parse() -> None:
    assert str(ax.Signature("(4096, 1000000)->()")) == "(4096, 1000000) -> ()"
    assert str(ax.Signature("(α, β)->(α)")) == "(α, β) -> (α)"  # unicode identifiers are names


class _Hostile:
    """Every dunder a library might touch raises."""

    def __repr__(self) -> str:
        raise RuntimeError("repr boom")

    def __str__(self) -> str:
        raise RuntimeError("str boom")

    def __hash__(self) -> int:
        raise RuntimeError("hash boom")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq boom")


class _HostileStr(str):
    def __repr__(self) -> str:
        raise RuntimeError("repr boom")

    def __hash__(self) -> int:
        raise RuntimeError("hash boom")


@pytest.mark.parametrize(
    "make",
    [
        lambda: ax.Signature(_Hostile()),
        lambda: ax.Signature((_Hostile(),)),
        lambda: ax.Signature(("a", [_Hostile()])),
        lambda: ax.Signature({"x": _Hostile()}),
        lambda: ax.Signature(("a",), output=_Hostile()),
        lambda: ax.Signature((set(),)),
        lambda: ax.Signature(({"a": [bytearray(b"x")]},)),
        lambda: ax.Signature(({1: "a", "b": "c"},)),
        lambda: ax.Signature(_HostileStr("(a")),
        lambda: ax.Signature((_HostileStr("a ²"),)),
    ],
    ids=[
        "object",
        "tuple-leaf",
        "nested-leaf",
        "dict-value",
        "output",
        "set",
        "bytearray",
        "mixed-keys",
        "str-subclass",
        "str-subclass-leaf",
    ],
)
def test_hostile_objects_in_signatures_are_spec_errors(make: Any) -> None:
    with pytest.raises(ax.SpecError):
        make()


def test_a_str_subclass_signature_that_parses_is_fine() -> None:
    assert ax.Signature(_HostileStr("(a)->(a)")) == ax.Signature("(a)->(a)")
    hash(ax.Signature((_HostileStr("a b"),)))


class _BadMapping(dict[str, Any]):
    def __iter__(self) -> Any:
        raise RuntimeError("iteration boom")

    def keys(self) -> Any:
        raise RuntimeError("keys boom")

    def items(self) -> Any:
        raise RuntimeError("items boom")


def test_a_mapping_that_cannot_be_read_is_a_spec_error() -> None:
    with pytest.raises(ax.SpecError):
        ax.Signature(_BadMapping(x="a"))


def _nested(kind: str, depth: int) -> Any:
    value: Any = "a b"
    for _ in range(depth):
        value = {"k": value} if kind == "dict" else [value] if kind == "list" else (value,)
    return value


def _still_works() -> None:
    assert ax.Signature("(a,b)->(a)").predict((3, 4)).shapes == (3,)
    assert ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o").predict({"W": (3, 4), "b": (3,)}, (4,)).shapes == (
        3,
    )

    def deep(n: int) -> int:
        return 0 if n == 0 else 1 + deep(n - 1)

    assert deep(sys.getrecursionlimit() - 100) == sys.getrecursionlimit() - 100
    assert jax.tree_util.tree_leaves(_nested("list", 50)) == ["a b"]


@pytest.mark.parametrize("kind", ["dict", "list", "tuple"])
@pytest.mark.parametrize("where", ["input", "output", "param", "return"])
def test_deeply_nested_signature_pytrees(kind: str, where: str) -> None:
    limit = sys.getrecursionlimit()
    deep = _nested(kind, 2000)
    make = {
        "input": lambda: ax.Signature((deep,)),
        "output": lambda: ax.Signature(("a",), output=deep),
        "param": lambda: ax.Signature({"x": deep}),
        "return": lambda: ax.Signature({"x": "a", "return": deep}),
    }[where]
    with pytest.raises(ax.SpecError, match="nested"):
        make()
    assert sys.getrecursionlimit() == limit
    _still_works()


class _Pair(NamedTuple):
    left: Any
    right: Any


@pytest.mark.parametrize("kind", ["namedtuple", "OrderedDict"])
def test_deeply_nested_non_builtin_containers(kind: str) -> None:
    deep: Any = "a"
    for _ in range(2000):
        deep = _Pair(deep, None) if kind == "namedtuple" else collections.OrderedDict(k=deep)
    with pytest.raises(ax.SpecError, match="nested"):
        ax.Signature((deep,))
    _still_works()
    assert str(ax.Signature((_Pair("a", "b"),))) == "_Pair(left=(a), right=(b))"


_DEEP_DECORATOR_SCRIPT = """
import sys
import axischeck as ax

deep = "a"
for _ in range(2000):
    deep = {"k": deep}
for make in (lambda: ax.vmap(lambda x: x, signature=(deep,)), lambda: ax.check(lambda x: x, signature=(deep,))):
    try:
        make()
    except ax.SpecError:
        pass
    else:
        sys.exit("no SpecError")
assert ax.vmap(lambda x: x.sum(), signature="(a)->()").predict((3, 4)).shapes == (3,)
def deep_call(n):
    return 0 if n == 0 else 1 + deep_call(n - 1)
assert deep_call(900) == 900
print("ok")
"""


def test_deep_signature_through_the_decorators() -> None:
    # In a subprocess: if a RecursionError escapes inside jaxlib, the interpreter can be left
    # with a raised recursion counter, which would break every later test in this one.
    r = subprocess.run([sys.executable, "-c", _DEEP_DECORATOR_SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_cyclic_signature_pytree() -> None:
    cyc: list[Any] = ["a"]
    cyc.append(cyc)
    with pytest.raises(ax.SpecError, match="contains itself"):
        ax.Signature((cyc,))
    _still_works()


@pytest.mark.parametrize(
    "text",
    [
        "(" + ",".join(["a"] * 600_000) + ")->()",
        "a " * 600_000,
        "(a)," * 300_000 + "->()",
        "(" * 600_000 + ")" * 600_000,
        "x" * 1_200_000,
    ],
    ids=["one-group", "space-form", "many-groups", "parens", "one-name"],
)
def test_megabyte_signatures_are_refused_quickly(text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ax.SpecError, match="characters") as info:
        ax.Signature(text)
    assert time.perf_counter() - start < 0.5
    assert len(str(info.value)) < 500  # the message does not echo a megabyte back
    with pytest.raises(ax.SpecError, match="characters"):
        parse_array_spec(text)


def test_error_messages_quote_long_signatures_briefly() -> None:
    with pytest.raises(ax.SpecError) as info:
        ax.Signature("(a)," * 2000 + "(b")
    assert len(str(info.value)) < 500


def test_parsing_time_is_linear_in_length() -> None:
    def timed(n: int) -> float:
        text = ",".join(f"(a{i},b)" for i in range(n)) + "->()"
        start = time.perf_counter()
        ax.Signature(text)
        return time.perf_counter() - start

    timed(100)
    small, large = timed(500), timed(5000)
    assert large < 40 * small + 0.05


# ---------------------------------------------------------------- Signature values


SIGNATURES = [
    ax.Signature("(a,b),(b,c)->(a,c)"),
    ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(in_axes=(0, 1, 0)),
    ax.Signature("n f, f o -> n").vmap(in_axes=(0, None), axis_name="batch").vmap(axis_size=3),
    ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o"),
    ax.Signature({"x": "a b", "return": "a"}),
    ax.Signature.batched("(n,a,b),(b,n,c)->(n,a,c)", over="n"),
    ax.Signature("(a)->(a),(b)"),
]


@pytest.mark.parametrize("sig", SIGNATURES, ids=str)
def test_signatures_copy_deepcopy_and_pickle(sig: ax.Signature) -> None:
    for other in (copy.copy(sig), copy.deepcopy(sig), pickle.loads(pickle.dumps(sig))):
        assert other == sig and hash(other) == hash(sig) and str(other) == str(sig)
        assert type(other) is ax.Signature
        with pytest.raises(AttributeError):
            other._core = sig._core  # type: ignore[misc]
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):  # JAX's PyTreeDef needs protocol 2+
        assert pickle.loads(pickle.dumps(sig, protocol=protocol)) == sig


def test_a_signature_stays_frozen() -> None:
    sig = SIGNATURES[1]
    with pytest.raises(AttributeError):
        sig.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del sig._core
    assert {sig: 1}[copy.deepcopy(sig)] == 1


def test_a_pickled_signature_still_predicts() -> None:
    sig = pickle.loads(pickle.dumps(SIGNATURES[1]))
    assert sig.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)).shapes == (16, 8, 2)


# ------------------------------------------------------------------- annotations


Vec = Annotated[jax.Array, "n"]  # an alias: only evaluation reads its dims


def test_a_forward_reference_to_a_later_class() -> None:
    def f(x: Annotated[Later, "a b"], y: Annotated[jax.Array, "b"]) -> Annotated[jax.Array, "a"]:
        return x @ y

    core = core_from_annotations(f)
    assert core is not None and str(core) == "(a, b), (b) -> (a)"


class Later:
    pass


def test_one_unresolvable_annotation_does_not_lose_the_others() -> None:
    def f(x, y, z):  # type: ignore[no-untyped-def]
        return x

    f.__annotations__ = {
        "x": "Annotated[jax.Array, 'a b']",
        "y": "NoSuchName",
        "z": "1 +",  # not even an expression
        "return": "Annotated[jax.Array, 'a']",
    }
    core = core_from_annotations(f)
    assert core is not None and str(core) == "(a, b), (...), (...) -> (a)"


def test_a_resolvable_alias_survives_a_neighbour_that_fails() -> None:
    def f(x, y):  # type: ignore[no-untyped-def]
        return x

    f.__annotations__ = {"x": "Vec", "y": "NoSuchName", "return": "Vec"}
    core = core_from_annotations(f)
    assert core is not None and str(core) == "(n), (...) -> (n)"


def test_an_annotation_that_raises_when_evaluated_is_unchecked() -> None:
    def f(x, y):  # type: ignore[no-untyped-def]
        return x

    f.__annotations__ = {"x": "1 / 0", "y": "Annotated[jax.Array, 'n']", "return": "undefined()"}
    core = core_from_annotations(f)
    assert core is not None and str(core) == "(...), (n)"


def test_annotation_texts_that_break_the_parser() -> None:
    def f(x, y, z, w):  # type: ignore[no-untyped-def]
        return x

    f.__annotations__ = {
        "x": "[" * 10_000 + "]" * 10_000,
        "y": "Annotated[X, {[1]: 'a'}]",  # literal_eval: unhashable key
        "z": "Annotated[X, 'a\x00']",
        "w": "Annotated[jax.Array, 'w']",
    }
    core = core_from_annotations(f)
    assert core is not None and str(core) == "(...), (...), (...), (w)"
    _still_works()


def test_hostile_annotation_objects() -> None:
    def f(x, y):  # type: ignore[no-untyped-def]
        return x

    f.__annotations__ = {"x": _Hostile(), "y": Annotated[jax.Array, "n"]}
    core = core_from_annotations(f)
    assert core is not None and str(core) == "(...), (n)"

    def g(x):  # type: ignore[no-untyped-def]
        return x

    g.__annotations__ = {1: "a", "x": Annotated[jax.Array, "n"]}  # a non-str key
    core = core_from_annotations(g)
    assert core is not None and str(core) == "(n)"


class _NoAnnotations:
    @property
    def __annotations__(self) -> Any:  # type: ignore[override]
        raise RuntimeError("annotations boom")

    def __call__(self, x: Any) -> Any:
        return x


class _BadSignature:
    @property
    def __signature__(self) -> Any:
        raise RuntimeError("signature boom")

    def __call__(self, x: Any) -> Any:
        return x


@pytest.mark.parametrize("fn", [_NoAnnotations(), _BadSignature(), len, jnp.sin, print], ids=repr)
def test_callables_without_readable_annotations(fn: Any) -> None:
    assert core_from_annotations(fn) is None


def test_malformed_dims_in_a_resolved_annotation_are_still_spec_errors() -> None:
    def f(x: Annotated[jax.Array, "a ²"]) -> jax.Array:
        return x

    with pytest.raises(ax.SpecError):
        core_from_annotations(f)


def test_wrapped_functions_resolve_against_the_wrapped_globals() -> None:
    import functools

    def f(x: Annotated[jax.Array, "a b"]) -> Annotated[jax.Array, "a"]:
        return x.sum(-1)

    @functools.wraps(f)
    def g(*args: Any) -> Any:
        return f(*args)

    core = core_from_annotations(g)
    assert core is not None and str(core) == "(a, b) -> (a)"
