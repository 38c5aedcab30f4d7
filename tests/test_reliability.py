"""Reliability: hostile inputs, no eval/exec, thread safety, bounded memory, error hygiene.

1. Hostile-input fuzzing of every public entry point (`ax.Signature`, `ax.vmap`,
   `ax.check`, `predict`, `explain`, `unify`, checked calls). The property: the only
   exceptions that escape are `ax.AxisCheckError`s. Every function handed to axischeck
   here cannot raise on its own (`lambda *a, **k: 0.0`, or one that returns its
   arguments), so any other exception is a library bug.
2. `eval(` / `exec(` appear nowhere in the package's code.
3. Eight threads share decorated functions and make thousands of mixed predictions
   (hits, misses, evictions, failures); every answer is checked against arithmetic or a
   `jax.eval_shape` oracle computed before the threads start.
4. The prediction cache stays at its bound under 100,000 distinct shapes.
5. Error hygiene: tracebacks point at the caller, JAX's error is chained where axischeck
   wraps one, and warnings raised by the user's function are not swallowed.
"""

from __future__ import annotations

import collections
import copy
import gc
import inspect
import io
import random
import re
import sys
import threading
import time
import tokenize
import traceback
import tracemalloc
import warnings
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core._keys import arrays_key

T = TypeVar("T")
AxisCheckError = ax.AxisCheckError

# The fuzz tests that run JAX (calls, traces) skip shrinking: while a bug is open, shrinking
# their examples would take minutes, and every failure message already names the exact
# entry point and inputs that leaked. Everything else comes from the active profile.
NO_SHRINK = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])
PACKAGE_DIR = Path(ax.__file__).resolve().parent


# =============================================================================== helpers


def const(*args: Any, **kwargs: Any) -> float:
    """A function that cannot raise, whatever it is given."""
    return 0.0


def echo(*args: Any, **kwargs: Any) -> Any:
    """Returns its arguments (cannot raise; JAX may reject non-array outputs)."""
    return args, kwargs


class Opaque:
    """A leaf without `.shape`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Opaque()"


class NT(NamedTuple):
    left: Any
    right: Any


@jax.tree_util.register_pytree_node_class
class Pair:
    """A custom pytree node with (hashable) metadata."""

    def __init__(self, left: Any, right: Any, tag: str = "pair") -> None:
        self.left, self.right, self.tag = left, right, tag

    def tree_flatten(self) -> tuple[tuple[Any, Any], str]:
        return (self.left, self.right), self.tag

    @classmethod
    def tree_unflatten(cls, tag: str, children: Any) -> Pair:
        return cls(*children, tag=tag)

    def __repr__(self) -> str:
        return f"Pair({self.left!r}, {self.right!r}, tag={self.tag!r})"


def _short(value: Any) -> str:
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = 80
    r.maxlevel = 4
    return r.repr(value)


def attempt(what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | AxisCheckError:
    """Run `fn`: its result, or the `AxisCheckError` it raised. Anything else is a bug."""
    try:
        return fn(*args, **kwargs)
    except AxisCheckError as err:
        text = str(err)  # rendering the message must work too
        assert isinstance(text, str) and text
        return err
    except Exception as err:
        raise AssertionError(f"{what} leaked {type(err).__name__} (not an AxisCheckError): {_short(err)}") from err


def must(what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn`, which must not raise at all."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:
        raise AssertionError(f"{what} raised {type(err).__name__}: {_short(err)}") from err


def check_prediction(what: str, pred: Any) -> None:
    """A successful prediction is well formed, and renders."""
    assert isinstance(pred, ax.Prediction), what
    leaves = jax.tree_util.tree_leaves(pred.shapes)
    for leaf in leaves:
        assert isinstance(leaf, ax.Shape), f"{what}: leaf {leaf!r} is not an ax.Shape"
        assert all(type(d) is int and d >= 0 for d in leaf), f"{what}: bad shape {leaf!r}"
    size = pred.axis_size
    assert size is None or (type(size) is int and size >= 0), f"{what}: axis_size {size!r}"
    must(f"str() of {what}", str, pred)
    must(f"repr() of {what}", repr, pred)
    must(f"hash() of {what}", hash, pred)
    assert pred == pred


def exercise(what: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """predict + explain on a transform (or a bound method); they must agree."""
    pred = attempt(f"{what}.predict{_short((args, kwargs))}", target.predict, *args, **kwargs)
    text = attempt(f"{what}.explain{_short((args, kwargs))}", target.explain, *args, **kwargs)
    if isinstance(text, AxisCheckError):
        raise AssertionError(f"{what}.explain raised {type(text).__name__} instead of returning the text")
    assert isinstance(text, str)
    if isinstance(pred, AxisCheckError):
        assert text.startswith(type(pred).__name__), f"{what}: explain and predict disagree"
    else:
        check_prediction(f"{what}.predict", pred)
        assert str(pred) in text
    return pred


def out_shapes(out: Any) -> list[tuple[int, ...]]:
    return [tuple(np.shape(leaf)) for leaf in jax.tree_util.tree_leaves(out)]


def _is_int_tuple(x: Any) -> bool:
    return type(x) is tuple and all(type(d) is int for d in x)


def has_int_tuples(tree: Any) -> bool:
    """Whether `tree` holds a plain tuple of ints (`()` included): `predict` reads those as
    shapes, while a call sees a tuple of Python ints (or an empty container)."""
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=_is_int_tuple)
    return any(_is_int_tuple(leaf) for leaf in leaves)


def call(what: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A checked call; when it succeeds, `predict` must agree with what JAX returned."""
    out = attempt(f"{what}{_short((args, kwargs))}", target, *args, **kwargs)
    if not isinstance(out, AxisCheckError) and not has_int_tuples((args, kwargs)):
        pred = attempt(f"{what}.predict after a successful call", target.predict, *args, **kwargs)
        assert not isinstance(pred, AxisCheckError), f"{what}: the call worked but predict says {pred}"
        assert out_shapes(out) == [tuple(s) for s in jax.tree_util.tree_leaves(pred.shapes)], what
    return out


def nest(depth: int, leaf: Any, kind: str = "list") -> Any:
    x = leaf
    for _ in range(depth):
        x = {"k": x} if kind == "dict" else (x,) if kind == "tuple" else Pair(x, None) if kind == "pair" else [x]
    return x


def cyclic(kind: str) -> Any:
    if kind == "list":
        a: list[Any] = [0]
        a.append(a)
        return a
    if kind == "dict":
        d: dict[str, Any] = {"a": 0}
        d["b"] = d
        return d
    inner: list[Any] = [0]
    outer = (inner, 0)
    inner.append(outer)  # a tuple that contains itself through a list
    return outer


# ============================================================================ strategies

_GRAMMAR = "()(),,->  *._#abn0123456789"
_UNICODE = "αβγ٣²\u200b\x00\t\n🙂ｎ"

dim_tokens = st.one_of(
    st.sampled_from(
        [
            "a",
            "b",
            "c",
            "n",
            "_",
            "...",
            "*b",
            "*_",
            "#a",
            "#3",
            "3",
            "0",
            "*",
            "**a",
            "*#a",
            "#",
            "a#",
            "*...",
            "...a",
            "-1",
            "1.5",
            "α",
            "٣",
            "²",
            "a-b",
            "None",
        ]
    ),
    st.integers(0, 10**40).map(str),
    st.text(alphabet=_GRAMMAR + _UNICODE, min_size=1, max_size=4),
)
_groups = st.lists(st.lists(dim_tokens, max_size=5), max_size=4)


def _gufunc(ins: list[list[str]], outs: list[list[str]] | None, spaces: bool) -> str:
    if spaces:
        text = ", ".join(" ".join(a) for a in ins)
        return text if outs is None else text + " -> " + ", ".join(" ".join(a) for a in outs)
    text = ",".join("(" + ",".join(a) + ")" for a in ins)
    return text if outs is None else text + "->" + ",".join("(" + ",".join(a) + ")" for a in outs)


signature_texts = st.one_of(
    st.text(alphabet=_GRAMMAR, max_size=40),
    st.text(alphabet=_GRAMMAR + _UNICODE, max_size=30),
    st.text(max_size=25),
    st.builds(_gufunc, _groups, st.none() | _groups, st.booleans()),
    st.integers(1, 400).map(lambda n: "(" * n + "a" + ")" * n + "->(a)"),  # deep nesting
    st.integers(1, 50).map(lambda n: "(a)" * n),  # groups without commas
    st.integers(1, 60).map(lambda n: ",".join(["(a,a)"] * n) + "->(a)"),  # duplicated names
    st.integers(10**18, 10**400).map(lambda n: f"({n},{n})->({n})"),  # huge integers
    st.sampled_from(
        [
            "",
            " ",
            "->",
            "->()",
            "()->",
            "(",
            ")",
            "((a))",
            "(a,b",
            "a,b)",
            "(a)->(b)->(c)",
            "(a,)->(a)",
            "(,)->()",
            "(a b)->(a)",
            "a b -> c",
            "(*a,*b)->()",
            "(...)->(...)",
            "(#a)->(#a)",
            "(_)->(_)",
            "(a)->()",
            "() ->()",
            "(\u00a0a)->(a)",
        ]
    ),
)

_shape_dims = st.integers(0, 4)
shape_tuples = st.lists(_shape_dims, max_size=10).map(tuple)
huge_shape_tuples = st.lists(st.one_of(st.integers(0, 4), st.integers(2**31, 2**80)), max_size=6).map(tuple)

_odd_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(-(2**100), 2**100),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(max_magnitude=1e6),
    st.sampled_from([np.float32(1.5), np.int64(3), np.bool_(True), np.uint8(7)]),
)
_junk = st.one_of(
    st.text(max_size=5),
    st.binary(max_size=3),
    st.builds(Opaque),
    st.builds(object),
    st.just(Ellipsis),
    st.frozensets(st.integers(0, 3), max_size=2),
    st.just(ax.Shape((2, 3))),
    st.just(int),
    st.just(const),
)
_NP_DTYPES = [np.float32, np.int32, np.bool_, np.complex64, np.float16, np.uint8, np.int8]


def _arrays_for(shape: tuple[int, ...], predict: bool) -> st.SearchStrategy[Any]:
    size = int(np.prod(shape, dtype=object)) if shape else 1
    options: list[st.SearchStrategy[Any]] = []
    if predict:
        options.append(st.just(shape))  # a plain tuple of ints stands for a shape
        options.append(st.sampled_from(_NP_DTYPES).map(lambda d: jax.ShapeDtypeStruct(shape, d)))
    if size <= 4096 and all(d <= 4096 for d in shape):  # numpy refuses huge dims even when empty
        options.append(st.sampled_from(_NP_DTYPES).map(lambda d: np.zeros(shape, d)))
        options.append(st.sampled_from([jnp.float32, jnp.int32, jnp.bool_]).map(lambda d: jnp.zeros(shape, d)))
    return st.one_of(*options)


def _containers(children: st.SearchStrategy[Any], mixed_keys: bool = False) -> st.SearchStrategy[Any]:
    """Every kind of pytree node; `mixed_keys` adds dicts like {1: ..., 'a': ...} (unsortable)."""
    mixed = st.dictionaries(st.one_of(st.text(max_size=2), st.integers(0, 3)), children, min_size=2, max_size=3)
    return st.one_of(
        *([mixed] if mixed_keys else []),
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=3),
        st.dictionaries(st.integers(-2, 5), children, max_size=3),
        st.builds(NT, children, children),
        st.builds(Pair, children, children),
        st.builds(collections.OrderedDict, st.dictionaries(st.text(max_size=2), children, max_size=2)),
    )


@st.composite
def arguments(
    draw: Any, predict: bool, junk: bool = True, max_rank: int = 10, max_args: int = 4, max_leaves: int = 6
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Hostile positional and keyword arguments, biased so mapped sizes often agree."""
    b = draw(st.integers(0, 4))
    dims = st.one_of(st.just(b), st.just(b), st.integers(0, 4))
    if predict:
        dims = st.one_of(dims, st.integers(2**31, 2**70))
    shapes = st.lists(dims, max_size=max_rank).map(tuple)
    arrays = shapes.flatmap(lambda s: _arrays_for(s, predict))
    leaf = (
        st.one_of(arrays, arrays, _odd_scalars, _junk)
        if junk
        else st.one_of(arrays, arrays, st.none(), st.integers(-5, 5), st.floats(-1e3, 1e3), st.booleans())
    )
    tree = st.recursive(leaf, _containers, max_leaves=max_leaves)
    args = tuple(draw(st.lists(tree, max_size=max_args)))
    kwargs = draw(st.dictionaries(st.sampled_from(["x", "y", "w", "params", "kw", "a"]), tree, max_size=2))
    return args, kwargs


# in_axes / out_axes of every wrong type, and some right ones.
_axis_leaves = st.one_of(
    st.none(),
    st.integers(-4, 4),
    st.integers(-(2**80), 2**80),
    st.booleans(),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            np.int64(0),
            np.int32(1),
            np.uint8(0),
            np.float32(0),
            np.bool_(True),
            np.array(0),
            np.array([0, 1]),
            jnp.array(0),
            ax.Shape((0,)),
            Ellipsis,
            1j,
            b"0",
        ]
    ),
    st.text(max_size=3),
    st.sets(st.integers(0, 2), max_size=2),
    st.frozensets(st.integers(0, 2), max_size=2),
    st.builds(Opaque),
)
_axes_trees = st.recursive(_axis_leaves, lambda c: _containers(c, mixed_keys=True), max_leaves=8)
_valid_axes = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.lists(st.none() | st.integers(-3, 3), max_size=4).map(tuple),
    st.lists(st.none() | st.integers(-3, 3), max_size=4),
)
_special_containers = st.one_of(
    st.sampled_from(["list", "dict", "tuple"]).map(cyclic),
    st.builds(nest, st.integers(60, 400), st.sampled_from([0, None]), st.sampled_from(["list", "dict", "tuple"])),
    st.builds(nest, st.integers(1, 40), st.sampled_from([0, None]), st.just("pair")),
    st.sampled_from(["list", "dict"]).map(lambda k: (cyclic(k),)),
)
axes_values = st.one_of(_valid_axes, _valid_axes, _axes_trees, _special_containers)

axis_sizes = st.one_of(
    st.none(),
    st.none(),
    st.integers(0, 5),
    st.integers(-5, -1),
    st.integers(2**63, 2**80),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=2),
    st.sampled_from(
        [
            np.int64(3),
            np.uint8(2),
            np.array(3),
            np.array(2.5),
            np.array([3]),
            jnp.array(3),
            np.float32(3.0),
            3 + 0j,
            Opaque(),
            [3],
            (3,),
            {3},
        ]
    ),
)
axis_names = st.one_of(
    st.none(),
    st.sampled_from(["i", "n", "a", "B", "B2", "", " ", "(a)", "...", "*b", "_", "α"]),
    st.text(max_size=4),
    st.integers(-3, 3),
    st.tuples(st.text(max_size=2), st.integers()),
    st.frozensets(st.integers(0, 3), max_size=2),
    st.just(float("nan")),
    st.builds(Opaque),
    st.lists(st.integers(0, 2), max_size=2),  # unhashable
    st.dictionaries(st.text(max_size=1), st.integers(), max_size=1),  # unhashable
    st.sets(st.integers(0, 2), max_size=2),  # unhashable
)
spmd_names = st.one_of(
    st.none(),
    st.none(),
    st.sampled_from(["x", ("x", "y"), 3, ("x",)]),
    st.lists(st.text(max_size=2), max_size=2),  # unhashable
    st.sets(st.integers(0, 2), max_size=2),  # unhashable
    st.builds(Opaque),
)
sum_matches = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(0, 2),
    st.text(max_size=2),
    st.sampled_from([np.bool_(True), np.array(True), np.array([True, False]), jnp.array([1, 0]), Opaque()]),
)
_valid_signatures = st.sampled_from(
    [
        "(n)->(n)",
        "(a,b),(b,c)->(a,c)",
        "()->()",
        "n -> n",
        "(n)",
        "(n),(n)->()",
        "*b n -> *b",
        "... -> ()",
        "(i)->(i)",
        "(n)->(m)",
        "(3)->(3)",
    ]
)
signature_values = st.one_of(
    st.none(),
    st.none(),
    _valid_signatures,
    signature_texts,
    st.tuples(_valid_signatures | st.none()),
    st.integers(),
    st.builds(Opaque),
    st.dictionaries(st.sampled_from(["x", "return", "y"]), _valid_signatures, max_size=2),
)

# Shapes to try on every transform built by the construction fuzz.
ARG_SHAPES: list[tuple[tuple[int, ...], ...]] = [
    (),
    ((3,),),
    ((3,), (3,)),
    ((2, 3), (3, 2)),
    ((3, 4), (4, 5), (3, 5)),
    ((0, 2),),
]


# ==================================================== 1. hostile inputs: ax.Signature


def _exercise_signature(what: str, sig: ax.Signature, shapes: list[tuple[int, ...]], in_axes: Any) -> None:
    must(f"str({what})", str, sig)
    must(f"repr({what})", repr, sig)
    must(f"hash({what})", hash, sig)
    assert sig == sig
    assert must(f"{what}.symbols", lambda: sig.symbols) is not None
    targets = [sig]
    lifted = attempt(f"{what}.vmap({in_axes!r})", sig.vmap, in_axes)
    if isinstance(lifted, ax.Signature):
        must(f"str({what}.vmap)", str, lifted)
        must(f"hash({what}.vmap)", hash, lifted)
        targets.append(lifted)
    for target in targets:
        for k in range(len(shapes) + 1):
            args = tuple(shapes[:k])
            pred = attempt(f"{what}.predict{args}", target.predict, *args)
            if isinstance(pred, ax.Prediction):
                check_prediction(f"{what}.predict{args}", pred)
            bound = attempt(f"{what}.unify{args}", target.unify, *args)
            if not isinstance(bound, AxisCheckError):
                assert isinstance(bound, (ax.Bindings, ax.Conflict)), bound
                must(f"str({what}.unify)", str, bound)


@given(
    text=signature_texts,
    shapes=st.lists(st.one_of(shape_tuples, huge_shape_tuples), max_size=3),
    in_axes=st.one_of(st.integers(-2, 2), st.none(), st.tuples(st.integers(-1, 1), st.none())),
)
def test_signature_strings_fuzz(text: str, shapes: list[tuple[int, ...]], in_axes: Any) -> None:
    sig = attempt(f"Signature({text!r})", ax.Signature, text)
    if isinstance(sig, ax.Signature):
        again = must(f"Signature(str(Signature({text!r})))", ax.Signature, str(sig))
        assert again == sig and hash(again) == hash(sig)
        _exercise_signature(f"Signature({text!r})", sig, shapes, in_axes)
    attempt("Signature(text, output=...)", ax.Signature, text, output="a")
    for name, make in [
        ("vmap", lambda: ax.vmap(const, signature=text)),
        ("check", lambda: ax.check(const, signature=text)),
    ]:
        wrapped = attempt(f"ax.{name}(const, signature={text!r})", make)
        if isinstance(wrapped, AxisCheckError):
            continue
        for k in range(len(shapes) + 1):
            exercise(f"ax.{name}(signature={text!r})", wrapped, tuple(shapes[:k]), {})


_spec_leaves = st.one_of(
    st.none(),
    _valid_signatures.map(lambda s: s.split("->")[0]),
    st.sampled_from(["a b", "n", "", "*batch c", "... c", "_", "#a", "3 n", "o i", "o"]),
    dim_tokens,
    st.text(max_size=4),
    st.integers(-3, 10**30),
    st.floats(allow_nan=True),
    st.binary(max_size=2),
    st.booleans(),
    st.builds(Opaque),
    st.sets(st.integers(0, 2), max_size=2),
    st.sampled_from([np.int64(1), np.array(["a"]), np.str_("a b"), ax.Shape((2,)), Ellipsis, jnp.zeros(2)]),
)
spec_trees = st.one_of(
    st.recursive(_spec_leaves, lambda c: _containers(c, mixed_keys=True), max_leaves=8), _special_containers
)


def _matching_args(tree: Any, lead: tuple[int, ...] = (), depth: int = 0, seen: frozenset[int] = frozenset()) -> Any:
    """An argument shaped like a spec tree: each dim string gets a shape of its rank.

    Walks only plain containers, and gives up on cyclic or deep ones (JAX's own flatten
    must never see those: it can leave the interpreter's recursion counter raised).
    """
    if isinstance(tree, str):
        return lead + (2,) * len(tree.replace(",", " ").replace("(", " ").replace(")", " ").split())
    if not isinstance(tree, (list, tuple, dict, Pair)):
        return lead + (3,)
    if id(tree) in seen or depth > 30:
        return lead + (2,)
    inner = seen | {id(tree)}

    def go(x: Any) -> Any:
        return _matching_args(x, lead, depth + 1, inner)

    if isinstance(tree, dict):
        return (
            type(tree)({k: go(v) for k, v in tree.items()})
            if type(tree) in (dict, collections.OrderedDict)
            else lead + (2,)
        )
    if isinstance(tree, Pair):
        return Pair(go(tree.left), go(tree.right), tree.tag)
    if isinstance(tree, NT):
        return NT(go(tree.left), go(tree.right))
    return type(tree)(go(x) for x in tree) if type(tree) in (list, tuple) else lead + (2,)


@given(
    inputs=st.lists(spec_trees, max_size=3),
    output=spec_trees,
    form=st.sampled_from(["tuple", "tuple+output", "dict", "list", "bare"]),
)
def test_signature_pytrees_fuzz(inputs: list[Any], output: Any, form: str) -> None:
    if form == "tuple":
        make: Callable[[], ax.Signature] = lambda: ax.Signature(tuple(inputs))
    elif form == "tuple+output":
        make = lambda: ax.Signature(tuple(inputs), output=output)
    elif form == "dict":
        spec = {f"p{i}": t for i, t in enumerate(inputs)} | {"return": output}
        make = lambda: ax.Signature(spec)
    elif form == "list":
        make = lambda: ax.Signature(list(inputs), output=output)
    else:
        make = lambda: ax.Signature(output)
    sig = attempt(f"Signature[{form}]({_short(inputs)}, output={_short(output)})", make)
    args = tuple(_matching_args(t) for t in inputs)
    batched = tuple(_matching_args(t, (4,)) for t in inputs)
    if isinstance(sig, ax.Signature):
        _exercise_signature("Signature(pytree)", sig, [(2,), (2, 2)], 0)
        for target, xs in [(sig, args), (attempt("Signature.vmap()", sig.vmap), batched)]:
            if isinstance(target, ax.Signature):
                pred = attempt("Signature(pytree).predict", target.predict, *xs)
                if isinstance(pred, ax.Prediction):
                    check_prediction("Signature(pytree).predict", pred)
                attempt("Signature(pytree).unify", target.unify, *xs)
    for name, build in [
        ("vmap", lambda: ax.vmap(const, signature=tuple(inputs))),
        ("check", lambda: ax.check(const, signature=tuple(inputs))),
        ("vmap[sig]", lambda: ax.vmap(const, signature=sig)),
    ]:
        if name == "vmap[sig]" and not isinstance(sig, ax.Signature):
            continue
        wrapped = attempt(f"ax.{name}(const, signature=<pytree>)", build)
        if not isinstance(wrapped, AxisCheckError):
            exercise(f"ax.{name}(signature=<pytree>)", wrapped, batched if name != "check" else args, {})


# ======================================= 1. hostile inputs: ax.vmap / ax.check construction


def _small_axis_size(value: Any) -> bool:
    try:
        return value is None or 0 <= int(value) <= 8
    except Exception:
        return False


_construction = st.tuples(
    st.sampled_from(["vmap", "vmap", "vmap-positional", "decorator", "nested", "check", "Signature.vmap"]),
    st.sampled_from(["const", "const", "const", "noncallable", "string", "transform"]),
    st.fixed_dictionaries(
        {},
        optional={
            "in_axes": axes_values,
            "out_axes": axes_values,
            "axis_name": axis_names,
            "axis_size": axis_sizes,
            "spmd_axis_name": spmd_names,
            "sum_match": sum_matches,
            "signature": signature_values,
        },
    ),
)


def _construct(kind: str, fun: str, options: dict[str, Any]) -> tuple[str, Any]:
    f: Any = {"const": const, "noncallable": 3, "string": "f", "transform": ax.vmap(const)}[fun]
    opts = dict(options)
    what = f"{kind}({fun}, {_short(opts)})"
    if kind == "vmap":
        return what, attempt(what, lambda: ax.vmap(f, **opts))
    if kind == "vmap-positional":
        sig = opts.pop("signature", None)
        return what, attempt(
            what,
            lambda: ax.vmap(
                f,
                opts.get("in_axes", 0),
                opts.get("out_axes", 0),
                opts.get("axis_name"),
                opts.get("axis_size"),
                opts.get("spmd_axis_name"),
                opts.get("sum_match", False),
                signature=sig,
            ),
        )
    if kind == "decorator":
        decorator = attempt(what, lambda: ax.vmap(**opts))
        return what, decorator if isinstance(decorator, AxisCheckError) else attempt(what, decorator, f)
    if kind == "nested":
        inner_sig = opts.pop("signature", None)
        return what, attempt(what, lambda: ax.vmap(ax.vmap(f, signature=inner_sig), **opts))
    if kind == "check":
        return what, attempt(what, lambda: ax.check(f, signature=opts.get("signature")))
    sig = ax.Signature("(a,b),(b,c)->(a,c)")
    return what, attempt(
        what,
        lambda: sig.vmap(
            opts.get("in_axes", 0),
            opts.get("out_axes", 0),
            axis_size=opts.get("axis_size"),
            axis_name=opts.get("axis_name"),
        ),
    )


@NO_SHRINK
@given(
    constructions=st.lists(_construction, min_size=1, max_size=6),
    arg_sets=st.lists(st.sampled_from(ARG_SHAPES), min_size=1, max_size=4, unique=True),
)
def test_construction_fuzz(constructions: list[tuple[str, str, dict[str, Any]]], arg_sets: list[Any]) -> None:
    """Wrong types everywhere; whatever is accepted must then predict, explain and run."""
    for kind, fun, options in constructions:
        what, made = _construct(kind, fun, options)
        if isinstance(made, AxisCheckError):
            continue
        if isinstance(made, ax.Signature):
            _exercise_signature(what, made, [(3, 2, 3), (3, 3, 4)], 0)
            continue
        # Accepted: it must now behave, whatever the options were.
        runnable = fun in ("const", "transform") and _small_axis_size(options.get("axis_size"))
        for shapes in arg_sets:
            exercise(what, made, shapes, {})
        exercise(what, made, (), {"x": (3,)})
        if runnable:  # real calls are slower: one positional set, and one keyword call
            call(what, made, tuple(jnp.zeros(s) for s in arg_sets[0]), {})
            call(what, made, (), {"x": jnp.zeros(3)})


# ============================================ 1. hostile inputs: predict / explain / calls


_MESH = jax.sharding.Mesh(
    np.array(jax.devices()).reshape(4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2
)


class _Model:
    """A class with a decorated method (bound-method path)."""

    @ax.vmap(in_axes=(None, 0))
    def method(self, *args: Any, **kwargs: Any) -> float:
        return 0.0


def _roster() -> list[tuple[str, Any, bool]]:
    """(name, decorated target, whether it only ever returns 0.0)."""
    return [
        ("vmap(const)", ax.vmap(const), True),
        ("vmap(echo)", ax.vmap(echo), False),
        ("vmap(const, in_axes=None, axis_size=3)", ax.vmap(const, in_axes=None, axis_size=3), True),
        ("vmap(const, in_axes=(0, None, 1))", ax.vmap(const, in_axes=(0, None, 1)), True),
        ("vmap(echo, in_axes=-1, out_axes=-1)", ax.vmap(echo, in_axes=-1, out_axes=-1), False),
        (
            "vmap(echo, in_axes=None, out_axes=None, axis_size=2)",
            ax.vmap(echo, in_axes=None, out_axes=None, axis_size=2),
            False,
        ),
        ("vmap(const, out_axes=None, axis_name='i')", ax.vmap(const, out_axes=None, axis_name="i"), True),
        ("vmap(echo, out_axes=None, sum_match=True)", ax.vmap(echo, out_axes=None, sum_match=True), False),
        ("vmap(const, sig=(n),(n)->())", ax.vmap(const, signature="(n),(n)->()"), True),
        (
            "vmap(const, in_axes=(0,1), sig=einsum)",
            ax.vmap(const, in_axes=(0, 1), signature="(a,b),(b,c)->(a,c)"),
            True,
        ),
        (
            "vmap(echo, in_axes=-1, sig=*b n -> *b n)",
            ax.vmap(echo, in_axes=-1, out_axes=-1, signature="*b n -> *b n"),
            False,
        ),
        (
            "vmap(const, sig=pytree)",
            ax.vmap(const, signature=ax.Signature(("i", {"W": "o i", "b": "o"}), output="o")),
            True,
        ),
        ("vmap(const, sig=dict)", ax.vmap(const, signature={"x": "n", "y": None, "return": "()"}), True),
        ("vmap(const, axis_name='n', sig=(n)->(n))", ax.vmap(const, axis_name="n", signature="(n)->(n)"), True),
        ("check(const, sig=n f, f o -> n)", ax.check(const, signature="n f, f o -> n"), True),
        ("check(const, sig=... -> ())", ax.check(const, signature="... -> ()"), True),
        ("vmap(vmap(const, sig=(n)->()), in_axes=1)", ax.vmap(ax.vmap(const, signature="(n)->()"), in_axes=1), True),
        ("vmap(vmap(echo), axis_name='outer')", ax.vmap(ax.vmap(echo), axis_name="outer"), False),
        ("bound method", _Model().method, True),
        ("shard_map(const, P(), P())", ax.shard_map(const, mesh=_MESH, in_specs=P(), out_specs=P()), True),
        (
            "shard_map(echo, P('x'), P('x'), mesh=dict)",
            ax.shard_map(echo, mesh={"x": 2, "y": 64}, in_specs=P("x"), out_specs=P("x")),
            False,
        ),
        (
            "shard_map(const, (P('x', 'y'), None), sig)",
            ax.shard_map(const, mesh=_MESH, in_specs=(P("x", "y"), None), out_specs=P(), signature="(a,b),(...)->()"),
            False,
        ),
        ("vmap(shard_map(const))", ax.vmap(ax.shard_map(const, mesh=_MESH, in_specs=P(), out_specs=P())), True),
    ]


ROSTER = _roster()
SIGNATURE_TARGETS = [
    ("Signature(einsum).vmap((0, 1))", ax.Signature("(a,b),(b,c)->(a,c)").vmap(in_axes=(0, 1))),
    ("Signature(*b n -> *b)", ax.Signature("*b n -> *b")),
    ("Signature(pytree).vmap()", ax.Signature(("i", {"W": "o i", "b": "o"}), output="o").vmap()),
]


@NO_SHRINK
@given(arguments(predict=True))
def test_predict_and_explain_fuzz(call_args: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
    """Every kind of argument, to every kind of transform: only AxisCheckErrors escape."""
    args, kwargs = call_args
    for name, target, _ in ROSTER:
        exercise(name, target, args, kwargs)
    for name, sig in SIGNATURE_TARGETS:
        pred = attempt(f"{name}.predict", sig.predict, *args, **kwargs)
        if isinstance(pred, ax.Prediction):
            check_prediction(f"{name}.predict", pred)
        bound = attempt(f"{name}.unify", sig.unify, *args, **kwargs)
        if not isinstance(bound, AxisCheckError):
            must(f"str({name}.unify)", str, bound)


@NO_SHRINK
@given(arguments(predict=False))
def test_checked_calls_fuzz(call_args: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
    """Real calls of functions that cannot raise: only AxisCheckErrors escape."""
    args, kwargs = call_args
    for name, target, constant in ROSTER:
        if constant:
            call(name, target, args, kwargs)


@NO_SHRINK
@given(arguments(predict=False, junk=False, max_rank=10, max_args=3, max_leaves=3))
def test_checked_calls_of_functions_returning_their_arguments_fuzz(
    call_args: tuple[tuple[Any, ...], dict[str, Any]],
) -> None:
    """`echo` returns what it gets, so only valid JAX values (arrays, small numbers) go in."""
    args, kwargs = call_args
    for name, target, constant in ROSTER:
        if not constant:
            call(name, target, args, kwargs)


# Leaves that look like arrays but are not valid JAX values.
class Duck:
    """Has `.shape` and `.dtype`, but is not an array."""

    def __init__(self, shape: Any, dtype: Any = np.float32) -> None:
        self.shape, self.dtype = shape, dtype

    def __repr__(self) -> str:
        return f"Duck(shape={self.shape!r})"


EXOTIC_LEAVES: list[tuple[str, Any]] = [
    ("str-array", np.array(["a", "b", "c"])),
    ("object-array", np.array([object(), 1, 2], dtype=object)),
    ("datetime-array", np.array(["2020-01-01"] * 3, dtype="datetime64[D]")),
    ("void-array", np.zeros(3, dtype="V4")),
    ("duck-int-shape", Duck((3,))),
    ("duck-negative-shape", Duck((3, -1))),
    ("duck-str-shape", Duck(("a",))),
    ("duck-list-shape", Duck(([3],))),
    ("duck-float-shape", Duck((3.5,))),
    ("duck-none-shape", Duck(None)),
    ("shape-without-dtype", type("NoDtype", (), {"shape": (3,)})()),
]


@pytest.mark.parametrize(("label", "leaf"), EXOTIC_LEAVES, ids=[k for k, _ in EXOTIC_LEAVES])
def test_predict_on_array_lookalikes(label: str, leaf: Any) -> None:
    """Non-numeric numpy arrays and duck-typed objects (JAX rejects all of them as
    arguments): predict and explain raise only AxisCheckErrors, and never predict a
    malformed shape."""
    for name, target, _ in ROSTER:
        for args in [(leaf,), (leaf, leaf), ((3,), leaf)]:
            exercise(name, target, args, {})


@pytest.mark.parametrize(("label", "leaf"), EXOTIC_LEAVES, ids=[k for k, _ in EXOTIC_LEAVES])
def test_calls_with_array_lookalikes(label: str, leaf: Any) -> None:
    """The same leaves in real calls of a function that cannot raise: only AxisCheckErrors."""
    for name, target, constant in ROSTER:
        if constant:
            for args in [(leaf,), (leaf, leaf), (jnp.zeros(3), leaf)]:
                call(name, target, args, {})


_CYCLIC_AND_DEEP = """
import os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import axischeck as ax

def const(*a, **k):
    return 0.0

cyclic = [0]
cyclic.append(cyclic)
deep = (1.0,)
for _ in range(3000):
    deep = [deep]
leaked = []
for name, arg in [("cyclic", cyclic), ("deep", deep)]:
    for label, f in [("traced", ax.vmap(const)), ("signature", ax.vmap(const, signature="(n)->()"))]:
        for how in ("predict", "explain", "call"):
            try:
                {"predict": f.predict, "explain": f.explain, "call": f}[how](arg)
            except ax.AxisCheckError:
                pass
            except BaseException as err:
                leaked.append(f"{how} of {label} on a {name} argument: {type(err).__name__}: {str(err)[:80]}")
sys.setrecursionlimit(sys.getrecursionlimit())  # fails if the recursion counter was left raised
print("LEAKED" if leaked else "CLEAN")
for line in leaked:
    print(line)
"""


@pytest.mark.slow
def test_cyclic_and_very_deep_arguments_are_reported() -> None:
    """Run in a child process: a RecursionError inside JAX's C++ flatten can leave the
    interpreter's recursion counter raised, so it must not happen in this one."""
    import os
    import subprocess

    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", _CYCLIC_AND_DEEP], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Exception ignored" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.startswith("CLEAN"), proc.stdout


# --------------------------------------------------------- targeted hostile-input findings


def test_dicts_with_keys_of_mixed_types_are_reported() -> None:
    """JAX cannot sort {1: ..., 'a': ...}; axischeck must say so as an AxisCheckError."""
    mixed = {1: 0, "a": 0}
    for what, make in [
        ("out_axes", lambda: ax.vmap(const, out_axes=mixed)),
        ("in_axes", lambda: ax.vmap(const, in_axes=(mixed,))),
        ("Signature", lambda: ax.Signature(({1: "a", "b": "a"},))),
        ("Signature.vmap", lambda: ax.Signature("(a)->(a)").vmap(in_axes=(mixed,))),
        ("predict", lambda: ax.vmap(const).predict({1: (3,), "a": (3,)})),
        ("predict[signature]", lambda: ax.vmap(const, signature="(n)->()").predict({1: (3,), "a": (3,)})),
        ("call", lambda: ax.vmap(const, signature="(n)->()")({1: jnp.ones(3), "a": jnp.ones(3)})),
    ]:
        attempt(what, make)


def test_axis_size_arrays_are_rejected_or_work() -> None:
    """axis_size: anything accepted at construction must work in a call."""
    for size in [np.array([3]), np.array(3), np.array(3.5), jnp.array(3)]:
        f = attempt(f"vmap(axis_size={size!r})", ax.vmap, const, in_axes=None, axis_size=size)
        if isinstance(f, ax.Vmapped):
            call(f"vmap(axis_size={size!r})", f, (1.0,), {})


def test_unhashable_spmd_axis_name_is_rejected_or_works() -> None:
    for name in [["x"], {"x"}]:
        f = attempt(f"vmap(spmd_axis_name={name!r})", ax.vmap, const, spmd_axis_name=name)
        if isinstance(f, ax.Vmapped):
            call(f"vmap(spmd_axis_name={name!r})", f, (jnp.ones(3),), {})


def test_sum_match_that_is_not_a_bool() -> None:
    for value in [np.array([True, False]), jnp.array([1, 0])]:
        f = attempt(f"vmap(sum_match={value!r})", ax.vmap, const, sum_match=value)
        if isinstance(f, ax.Vmapped):
            call(f"vmap(sum_match={value!r})", f, (jnp.ones(3),), {})


def _annotated_inputs_only(x: Annotated[jax.Array, "n m"]) -> jax.Array:
    return x


@pytest.mark.parametrize(
    "make",
    [
        lambda: ax.vmap(lambda x: x, signature="(n, m)"),
        lambda: ax.vmap(_annotated_inputs_only),
        lambda: ax.check(lambda x: x, signature="n m k"),
        lambda: ax.vmap(const, signature=""),
    ],
    ids=["vmap-signature-without-output", "vmap-annotated-inputs", "check-signature-without-output", "empty"],
)
def test_calls_check_signatures_that_declare_no_output(make: Callable[[], Any]) -> None:
    """Found by the call fuzz: predict rejects these arguments, so the checked call must too
    (before JAX runs), not run the function on arguments its signature rules out."""
    f = make()
    x = jnp.ones((2, 3))
    with pytest.raises(ax.ArgumentError):
        f.predict(x)
    with pytest.raises(ax.ArgumentError):
        f(x)


def test_signature_vmap_validates_axis_name_like_vmap() -> None:
    """ax.vmap rejects an unhashable axis_name; Signature.vmap must too (a Signature is hashable)."""
    with pytest.raises(ax.SpecError):
        ax.vmap(const, axis_name=["i"])
    lifted = attempt("Signature.vmap(axis_name=['i'])", ax.Signature("(a)->(a)").vmap, axis_name=["i"])
    if isinstance(lifted, ax.Signature):
        must("hash(Signature.vmap(axis_name=['i']))", hash, lifted)


# ==================================================================== 2. no eval / exec

_EVAL_EXEC = re.compile(r"\b(?:eval|exec)\s*\(")


def _code_only(source: str) -> str:
    """The source without comments and string literals (docstrings included)."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            continue
        kept.append(tok.string)
    return " ".join(kept)


def test_the_eval_exec_pattern_itself() -> None:
    for bad in ["eval(x)", "exec (code)", "builtins.eval(s)", "y = eval(\n s)", "exec(compile(s, f, 'exec'))"]:
        assert _EVAL_EXEC.search(bad), bad
    for fine in [
        "jax.eval_shape(f)",
        "evaluate(x)",
        "ast.literal_eval(s)",
        "self.evaluation",
        "execute(x)",
        "eval_per_example(fn)",
        "retrieval(x)",
        "exec_time = 1",
    ]:
        assert not _EVAL_EXEC.search(fine), fine


def test_no_eval_or_exec_in_the_package() -> None:
    import ast

    files = sorted(PACKAGE_DIR.rglob("*.py"))
    assert len(files) > 10
    # `axischeck run` executes the program it is given, as `python prog.py` does: the code
    # object compiled from that file (or read from its .pyc), never a string of a user's.
    runs_programs = {"_run.py": 1}
    for path in files:
        source = path.read_text(encoding="utf-8")
        code = _code_only(source)
        allowed = runs_programs.get(path.name, 0)
        assert len(_EVAL_EXEC.findall(code)) == allowed, f"{path.name}: {_EVAL_EXEC.search(code)}"
        tree = ast.parse(source)
        uses = [
            node
            for node in ast.walk(tree)
            if (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None)
            in {"eval", "exec"}
        ]
        assert len(uses) == allowed, f"{path.name}:{[getattr(n, 'lineno', '?') for n in uses]} uses eval/exec"
        calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and c.func in uses]
        assert len(calls) == allowed  # called, never passed around
        for call in calls:  # `exec(code, namespace)` of a compiled code object only
            assert isinstance(call.args[0], ast.Name) and call.args[0].id == "code", ast.dump(call)


# ====================================================================== 3. thread safety


class Task(NamedTuple):
    target: str
    args: tuple[Any, ...]
    expected: Any  # an output shape (tuple), a dict of bindings, or an exception class
    axis_size: int | None = None
    symbol: str | None = None  # the conflicting symbol, for expected errors


def _traced_fn(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w).sum(0)


def _thread_targets() -> dict[str, Any]:
    return {
        "add": ax.vmap(lambda x, y: x + y, in_axes=(0, 1), signature="(n),(n)->(n)"),
        "mm": ax.vmap(lambda a, b: a @ b, in_axes=(None, 0), out_axes=1, signature="(a,b),(b,c)->(a,c)"),
        "var": ax.vmap(lambda x: x, in_axes=-1, signature="*s n -> *s n"),
        "chk": ax.check(lambda X, W: X @ W, signature="n f, f o -> n o"),
        "nested": ax.vmap(ax.vmap(lambda x: x.sum(), signature="(n)->()"), in_axes=1),
        "traced": ax.vmap(_traced_fn, in_axes=(0, None)),
        "sig": ax.Signature("(a,b),(b,c)->(a,c)").vmap(in_axes=(0, 1)),
        "shard": ax.shard_map(
            lambda a, b: a @ b,
            mesh={"x": 4, "y": 2},
            in_specs=(P("x", None), P(None, "y")),
            out_specs=P("x", "y"),
            signature="(n,k),(k,m)->(n,m)",
        ),
    }


_TRACED_POOL = [(b, k, m, p) for b in (1, 2, 3) for k in (1, 2) for m in (2, 3) for p in (1, 4)]


def _traced_oracle() -> dict[tuple[tuple[int, ...], tuple[int, ...]], Any]:
    """Before any thread starts: what plain JAX says for every traced case we will ask."""
    oracle: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}
    plain = jax.vmap(_traced_fn, in_axes=(0, None))
    for b, k, m, p in _TRACED_POOL:
        for wm in (m, m + 1):
            xs, ws = (b, k, m), (wm, p)
            try:
                out = jax.eval_shape(
                    plain, jax.ShapeDtypeStruct(xs, jnp.float32), jax.ShapeDtypeStruct(ws, jnp.float32)
                )
                oracle[xs, ws] = tuple(out.shape)
            except Exception:
                oracle[xs, ws] = ax.FunctionError
    return oracle


def _tasks(rng: random.Random, thread: int, count: int, oracle: dict[Any, Any]) -> Iterator[Task]:
    fresh = iter(range(100 + 1000 * thread, 10**9))
    for _ in range(count):

        def size() -> int:
            return next(fresh) if rng.random() < 0.15 else rng.randint(1, 5)  # misses, and many hits

        kinds = ["add", "add", "mm", "var", "chk", "nested", "sig", "sig-unify", "shard"]
        kind = "traced" if rng.random() < 0.006 else rng.choice(kinds)  # tracing is slow: a few
        bad = rng.random() < 0.2
        if kind == "add":
            b, n = size(), size()
            if not bad:
                yield Task("add", ((b, n), (n, b)), (b, n), b)
            elif rng.random() < 0.5:
                yield Task("add", ((b, n), (n + 1, b)), ax.ArgumentError, symbol="n")
            else:
                yield Task("add", ((b, n), (n, b + 1)), ax.ArgumentError, symbol="batch size B")
        elif kind == "mm":
            a, k, c, b = size(), size(), rng.randint(1, 4), size()
            if bad:
                yield Task("mm", ((a, k), (b, k + 1, c)), ax.ArgumentError, symbol="b")
            else:
                yield Task("mm", ((a, k), (b, k, c)), (a, b, c), b)
        elif kind == "var":
            s = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 3)))
            n, b = size(), size()
            if bad:
                yield Task("var", ((b,),), ax.ArgumentError)  # per-example () has no 'n'
            else:
                yield Task("var", (s + (n, b),), (b,) + s + (n,), b)
        elif kind == "chk":
            n, f, o = size(), size(), rng.randint(1, 4)
            if bad:
                yield Task("chk", ((n, f), (f + 1, o)), ax.ArgumentError, symbol="f")
            else:
                yield Task("chk", ((n, f), (f, o)), (n, o), None)
        elif kind == "nested":
            bi, bo, n = size(), size(), rng.randint(1, 4)
            if bad:
                yield Task("nested", ((bi, bo),), ax.ArgumentError)
            else:
                yield Task("nested", ((bi, bo, n),), (bo, bi), bo)
        elif kind == "shard":  # blocks (n, k) @ (k, m) on a 4 x 2 mesh
            n, k, m = size(), size(), size()
            if bad:
                yield Task("shard", ((4 * n + 1, k), (k, 2 * m)), ax.ArgumentError)
            else:
                yield Task("shard", ((4 * n, k), (k, 2 * m)), (4 * n, 2 * m), None)
        elif kind in ("sig", "sig-unify"):
            b, a, k, c = size(), size(), size(), size()
            args = ((b, a, k), (k + bad, b, c))
            if kind == "sig":
                yield Task(
                    "sig", args, ax.ArgumentError if bad else (b, a, c), None if bad else b, "b" if bad else None
                )
            else:
                yield Task("sig-unify", args, ax.Conflict if bad else {"a": a, "b": k, "c": c, "B": b})
        else:
            b, k, m, p = rng.choice(_TRACED_POOL)
            xs, ws = (b, k, m), (m + bad, p)
            expected = oracle[xs, ws]
            yield Task("traced", (xs, ws), expected, b if isinstance(expected, tuple) else None)


def _run_task(targets: dict[str, Any], task: Task, rng: random.Random) -> None:
    if task.target == "sig-unify":
        got = targets["sig"].unify(*task.args)
        if task.expected is ax.Conflict:
            assert isinstance(got, ax.Conflict) and got.symbol == "b", (task, got)
        else:
            assert isinstance(got, ax.Bindings) and dict(got.sizes) == task.expected, (task, got)
        return
    target = targets[task.target]
    if isinstance(task.expected, type):
        try:
            target.predict(*task.args)
        except task.expected as err:
            if task.symbol is not None:
                assert err.symbol == task.symbol, (task, err.symbol)
            if rng.random() < 0.2 and task.target != "sig":
                text = target.explain(*task.args)
                assert text.startswith(type(err).__name__), (task, text)
            return
        raise AssertionError(f"{task}: no {task.expected.__name__}")
    pred = target.predict(*task.args)
    assert pred.shapes == task.expected, (task, pred.shapes)
    assert type(pred.shapes) is ax.Shape
    assert pred.axis_size == task.axis_size, (task, pred.axis_size)
    if task.target == "shard":
        assert pred.block_shapes == (task.expected[0] // 4, task.expected[1] // 2), (task, pred)
    if rng.random() < 0.1:  # the lazy derivation table, replayed concurrently
        assert str(ax.Shape(task.expected)) in str(pred), (task, str(pred))
    if task.target == "add" and max(task.expected) <= 3 and rng.random() < 0.02:  # now and then, a real call
        x, y = (jnp.ones(s) for s in task.args)
        assert target(x, y).shape == task.expected


def test_threads_share_decorated_functions_without_wrong_answers() -> None:
    targets = _thread_targets()
    oracle = _traced_oracle()
    n_threads, per_thread = 8, 1250
    plans = [list(_tasks(random.Random(1000 + t), t, per_thread, oracle)) for t in range(n_threads)]
    failures: list[str] = []
    done = [0] * n_threads
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> None:
        rng = random.Random(t)
        try:
            barrier.wait(timeout=30)
            for task in plans[t]:
                try:
                    _run_task(targets, task, rng)
                except Exception as err:
                    failures.append(f"thread {t}: {type(err).__name__}: {str(err)[:400]}")
                done[t] += 1
        except Exception as err:
            failures.append(f"thread {t} died: {type(err).__name__}: {err}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings
    try:
        threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(n_threads)]
        for th in threads:
            th.start()
        deadline = time.monotonic() + 120
        for th in threads:
            th.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        sys.setswitchinterval(old)
    stuck = [i for i, th in enumerate(threads) if th.is_alive()]
    assert not stuck, f"threads {stuck} did not finish (deadlock?); progress {done}"
    assert not failures, f"{len(failures)} wrong answers, e.g.:\n" + "\n".join(failures[:10])
    assert done == [per_thread] * n_threads
    # The caches were hammered with misses: still at their bound.
    for name in ("add", "mm", "var", "chk", "nested"):
        assert len(targets[name]._predictor._predictions) <= targets[name]._predictor._predictions.maxsize


# ===================================================================== 4. bounded memory


def test_prediction_cache_stays_bounded_under_100k_distinct_shapes() -> None:
    f = ax.vmap(lambda x: x, signature="(n)->(n)")
    cache = f._predictor._predictions
    first = f.predict((1, 1))
    for i in range(100_000):
        b, n = divmod(i, 317)
        shape = (b + 1, n + 1)
        pred = f.predict(shape)
        if i % 4999 == 0:
            assert pred.shapes == shape
            assert len(cache) <= cache.maxsize
    assert len(cache) == cache.maxsize
    plans = f._predictor._plans  # the fast path's compiled plans
    assert len(plans) == 1  # one call structure, one plan
    newest = arrays_key((jax.ShapeDtypeStruct(shape, jnp.float32),), {})  # a struct by position
    oldest = arrays_key((jax.ShapeDtypeStruct((1, 1), jnp.float32),), {})
    assert cache.get(newest) is not None  # the newest entries are kept...
    assert cache.get(oldest) is None  # ...and the oldest evicted
    assert f.predict((1, 1)) == first


def test_memory_is_flat_once_the_cache_is_full() -> None:
    f = ax.vmap(lambda x: x, signature="(n)->(n)")
    shapes = ((i % 500 + 1, i // 500 + 1) for i in range(10**9))
    tracemalloc.start()
    try:
        for _ in range(3000):
            f.predict(next(shapes))
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5000):
            f.predict(next(shapes))
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024, f"grew by {after - before} bytes over 5000 new shapes"


def test_plan_cache_is_bounded_under_many_call_structures() -> None:
    f = ax.vmap(const, signature=ax.Signature((None,), output=""))
    for i in range(600):
        assert f.predict({f"k{i}": (2,)}).shapes == (2,)  # a new pytree structure each time
    plans = getattr(f, "_plans", None)
    assert plans is None or len(plans) <= plans.maxsize
    assert len(f._predictor._predictions) <= f._predictor._predictions.maxsize


def test_decorated_functions_do_not_leak() -> None:
    """No global registry: a transform and the user's function die with their last reference,
    and what was kept for the function goes with it."""
    import weakref

    from axischeck._engine._predictor import _DECLARES_NOTHING

    verdicts = len(_DECLARES_NOTHING)
    refs = []
    for i in range(20):

        def user(x: jax.Array, i: int = i) -> jax.Array:
            return x * i

        f = ax.vmap(user, signature="(n)->(n)")
        g = ax.vmap(user)
        f.predict((3, i + 1))
        g.predict((3, i + 1))
        f(jnp.ones((2, 3)))
        g(jnp.ones((2, 3)))  # reads whether its annotations declare dims (they do not)
        refs.append((weakref.ref(user), weakref.ref(f), weakref.ref(g)))
        del user, f, g
    gc.collect()
    alive = [k for k, r in enumerate(refs) if any(w() is not None for w in r)]
    assert not alive, f"still alive: {alive}"
    assert len(_DECLARES_NOTHING) <= verdicts


def test_calls_keep_few_users_pytree_metadata_alive() -> None:
    """A fresh model each step (static metadata compared by identity) is a new cache key
    each call: the caches keep only the newest few of them, never every step's."""

    class Meta:  # identity equality and hash, as a plain class has
        pass

    class Model:
        def __init__(self, w: jax.Array, meta: Meta) -> None:
            self.w, self.meta = w, meta

    jax.tree_util.register_pytree_node(Model, lambda m: ((m.w,), m.meta), lambda meta, ch: Model(ch[0], meta))
    f = ax.vmap(lambda m, x: x * m.w, in_axes=(None, 0), signature={"m": None, "x": "n", "return": "n"})
    alive = []
    for _ in range(30):
        meta = Meta()
        alive.append(weakref.ref(meta))
        f(Model(jnp.float32(2.0), meta), jnp.ones((4, 3)))
        del meta
    gc.collect()
    assert sum(ref() is not None for ref in alive) <= 4


# ====================================================================== 5. error hygiene

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


_X, _Y_BAD, _Z = jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2))


Case = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Hyg:
    @ax.vmap(in_axes=(None, 0), signature={"x": "(n, m)", "return": "(n)"})
    def apply(self, x: jax.Array) -> jax.Array:
        return x.sum(-1)


HYGIENE_CASES: dict[str, Callable[[], Case]] = {
    "signature": lambda: (ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM), (_X, _Y_BAD, _Z), {}),
    "no-signature-rank": lambda: (ax.vmap(complex_operation, in_axes=(0, 3, 0)), (_X, _Y_BAD, _Z), {}),
    "no-signature-batch": lambda: (ax.vmap(complex_operation, in_axes=(0, 0, 0)), (_X, _Y_BAD, _Z), {}),
    "check": lambda: (
        ax.check(lambda X, W: X @ W, signature="n f, f o -> n"),
        (jnp.ones((4, 3)), jnp.ones((2, 1))),
        {},
    ),
    "jit": lambda: (jax.jit(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)), (_X, _Y_BAD, _Z), {}),
    "nested": lambda: (ax.vmap(ax.vmap(lambda x: x.sum(), signature="(n)->()"), in_axes=1), (jnp.ones((2, 3)),), {}),
    "out_axes-none": lambda: (ax.vmap(_ident, out_axes=None), (jnp.ones((2, 3)),), {}),
    "kwargs": lambda: (
        ax.vmap(lambda x, y: x + y, signature="(n),(n)->(n)"),
        (jnp.ones((2, 3)),),
        {"y": jnp.ones((3, 4))},
    ),
    "predict": lambda: (ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM).predict, (_X, _Y_BAD, _Z), {}),
    "bound-method": lambda: (_Hyg().apply, (jnp.ones((2, 3)),), {}),
}


def _ident(x: jax.Array) -> jax.Array:
    return x


def _library_frames(frames: traceback.StackSummary) -> list[traceback.FrameSummary]:
    return [f for f in frames if Path(f.filename).resolve().is_relative_to(PACKAGE_DIR)]


@pytest.mark.parametrize("case", list(HYGIENE_CASES.values()), ids=list(HYGIENE_CASES))
def test_errors_from_decorated_calls_point_at_the_callers_line(case: Callable[[], Case]) -> None:
    target, args, kwargs = case()
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    try:
        target(*args, **kwargs)
    except AxisCheckError as err:
        error = err
    else:
        pytest.fail("no AxisCheckError")
    frames = traceback.extract_tb(error.__traceback__)
    assert Path(frames[0].filename).resolve() == Path(__file__).resolve() and frames[0].lineno == line, frames[0]
    assert frames[0].name == "test_errors_from_decorated_calls_point_at_the_callers_line"
    ours = _library_frames(frames)
    assert len(ours) <= 3, "\n" + "".join(traceback.format_list(frames))
    others = [f for f in frames[1:] if f not in ours]
    assert not others, "frames outside the caller and axischeck:\n" + "".join(traceback.format_list(others))
    # No noisy "During handling of the above exception, another exception occurred".
    rendered = "".join(traceback.format_exception(error))
    assert "During handling of the above exception" not in rendered, rendered


def test_predict_chains_jaxs_error_for_a_per_example_failure() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0))  # no signature: traced per example
    with pytest.raises(ValueError) as jax_info:  # what JAX says for one example
        jax.eval_shape(complex_operation, *(jax.ShapeDtypeStruct(s, jnp.float32) for s in [(8, 4), (5, 2), (8, 2)]))
    with pytest.raises(ax.FunctionError) as info:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    cause = info.value.__cause__
    assert cause is not None and not isinstance(cause, AxisCheckError)
    assert type(cause) is type(jax_info.value) and str(cause) == str(jax_info.value)
    assert str(jax_info.value) in str(info.value)
    assert len(_library_frames(traceback.extract_tb(info.value.__traceback__))) <= 2


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
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError) as jax_info:
        jax.vmap(_ident, out_axes=None)(x)
    with pytest.raises(ax.OutputError) as info:
        ax.vmap(_ident, out_axes=None)(x)
    assert isinstance(info.value, type(jax_info.value))
    assert f"  JAX: {type(jax_info.value).__name__}: {jax_info.value}" in str(info.value).splitlines()
    context = info.value.__context__
    assert type(context) is type(jax_info.value) and str(context) == str(jax_info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_precheck_errors_carry_no_stale_context() -> None:
    """A pre-check error raised before JAX runs has no cause and no implicit context."""
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    for attempt_ in (lambda: f(_X, _Y_BAD, _Z), lambda: f.predict(_X, _Y_BAD, _Z)):
        with pytest.raises(ax.ArgumentError) as info:
            attempt_()
        assert info.value.__cause__ is None
        assert info.value.__context__ is None or info.value.__suppress_context__


def _warns(x: jax.Array) -> jax.Array:
    warnings.warn("a warning from the user's function", UserWarning, stacklevel=1)
    return x * 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: ax.vmap(_warns, signature="(n)->(n)"),
        lambda: ax.vmap(_warns),
        lambda: ax.check(_warns, signature="b n -> b n"),
        lambda: jax.jit(ax.vmap(_warns, signature="(n)->(n)")),
        lambda: jax.jit(ax.vmap(_warns)),
        lambda: ax.vmap(ax.vmap(_warns), in_axes=1),
        lambda: ax.vmap(_warns, in_axes=None, out_axes=None, axis_size=2),
    ],
    ids=["signature", "traced", "check", "jit-signature", "jit-traced", "nested", "out_axes-none"],
)
def test_warnings_from_the_users_function_are_not_swallowed(make: Callable[[], Any]) -> None:
    f = make()
    x = jnp.ones((2, 3))
    with pytest.warns(UserWarning, match="a warning from the user's function") as record:
        out = f(x)
    assert out.shape == (2, 3) or out.shape == (3, 2)
    assert all(w.category is UserWarning for w in record)


def test_warnings_survive_a_failing_check() -> None:
    """A warning issued before the function's own error is still emitted."""

    def f(x: jax.Array) -> jax.Array:
        warnings.warn("about to fail", RuntimeWarning, stacklevel=1)
        return jnp.dot(x, jnp.ones(7))

    with pytest.warns(RuntimeWarning, match="about to fail"), pytest.raises(TypeError):
        ax.vmap(f)(jnp.ones((2, 3)))


def test_a_function_collected_while_the_predictor_table_is_locked_does_not_deadlock() -> None:
    # The garbage collector may run a weakref callback inside any allocation, including one
    # made while the table's lock is held (it hung a pmap test on Python 3.13 once).
    from axischeck._core._cache import PerFunction

    table: PerFunction[object] = PerFunction()

    def scenario() -> None:
        def fun() -> None: ...

        table.get_or_make(fun, "options", object)
        with table._lock:
            del fun
            gc.collect()  # runs the callback for fun right here

    worker = threading.Thread(target=scenario, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the weakref callback waited for the lock its own thread holds"
    assert len(table) == 0


def test_functions_built_with_the_same_options_keep_their_own_names_and_parameters() -> None:
    """What a transform makes of its options is shared by every function given them (a
    lambda written inline is a new function each time): the function's own name and
    parameters must still be its own, including for wrappers that share one code object."""
    import functools

    from jax.sharding import PartitionSpec as P

    def first(a: jax.Array, b: jax.Array) -> jax.Array:
        return a

    def second(x: jax.Array, y: jax.Array) -> jax.Array:
        return x

    def wrapped(g: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
        @functools.wraps(g)
        def call(*args: jax.Array) -> jax.Array:
            return g(*args)

        return call

    builds: list[Callable[[Callable[..., jax.Array]], Any]] = [
        lambda f: ax.vmap(f, in_axes=(0, 0)),
        lambda f: ax.vmap(f, in_axes=(0, 0), signature="(n),(n)->(n)"),
        lambda f: ax.shard_map(f, mesh={"x": 2}, in_specs=(P("x"), P("x")), out_specs=P("x")),
        lambda f: ax.smap(f, in_axes=(0, 0), out_axes=0, axis_name="x"),  # the context mesh: not in its key
    ]
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,), devices=jax.devices()[:2])
    for build in builds:
        for f, name, param in [(first, "first", "b"), (second, "second", "y")] * 2:
            for g in (f, wrapped(f)):
                with pytest.raises(ax.AxisCheckError) as info, jax.set_mesh(mesh):
                    build(g).predict((4, 3), (5, 3))
                text = str(info.value)
                assert name in text and param in text, (name, text)


def test_shard_map_options_never_share_what_they_were_validated_into() -> None:
    """shard_map validates its options once per (options, function name): options that
    differ, hashable or not (a dict inside in_specs), must each get their own."""
    from jax.sharding import PartitionSpec as P

    x = {"w": jax.ShapeDtypeStruct((16,), jnp.float32)}
    cases = [
        ({"x": 8}, ({"w": P("x")},), (2,)),
        ({"x": 8}, ({"w": P()},), (16,)),
        ({"x": 4}, ({"w": P("x")},), (4,)),
        ({"x": 8}, (P("x"),), (2,)),
        ({"x": 4}, (P("x"),), (4,)),
        ({"x": 8}, (P(),), (16,)),
    ]
    for mesh, in_specs, block in cases * 2:
        f = ax.shard_map(lambda d: d["w"], mesh=mesh, in_specs=in_specs, out_specs=P(), check_vma=False)
        assert f.predict(x).in_block_shapes[0]["w"] == block, (mesh, in_specs)


def test_a_call_with_nothing_to_check_is_jaxs_own_and_builds_nothing() -> None:
    """A vmap of a plain function whose annotations declare no dims, without a signature or
    an axis name, has nothing to check before JAX runs: the call is JAX's, and the shared
    predictor is found only when something asks for it. Annotations that declare dims are
    still checked before JAX runs."""

    def typed(x: jax.Array) -> jax.Array:
        return x * 2

    def dims(x: Annotated[jax.Array, "n"], y: Annotated[jax.Array, "n"]) -> jax.Array:
        return x.sum() + y.sum()  # JAX runs it happily on sizes its annotations rule out

    x = jnp.ones((2, 3))
    for fun in (lambda v: v * 2, typed):
        f = ax.vmap(fun)
        assert np.array_equal(np.asarray(f(x)), np.asarray(jax.vmap(fun)(x)))
        assert f._shared is None  # no predictor was needed
        assert f.predict(x).shapes == (2, 3) and f._shared is not None
    with pytest.raises(ax.ArgumentError, match="dimension 'n' disagrees"):  # the annotations' own check
        ax.vmap(dims)(x, jnp.ones((2, 4)))


def _sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def test_options_changed_after_construction_change_no_answer() -> None:
    """What a transform's options mean is derived (lazily) from the options as given, never
    from what the shown attributes or a list given as in_axes say later: otherwise one
    transform's edit would be cached under its options for every function built with them."""

    def total(x: jax.Array) -> jax.Array:
        return x.sum(0)

    def other(x: jax.Array) -> jax.Array:
        return x.sum(0)

    x = jnp.ones((2, 5, 7))
    want = jax.eval_shape(jax.vmap(total), x).shape
    edited = ax.vmap(lambda v: v.sum(0), in_axes=0, signature="(n,m)->(m)")
    edited.in_axes, edited.out_axes = 1, 1  # before its first use
    assert edited.predict(x).shapes == want
    assert ax.vmap(other, in_axes=0, signature="(n,m)->(m)")(x).shape == want
    assert ax.vmap(other, in_axes=0).predict(x).shapes == want
    # A list given as in_axes, changed later, with the options' cache emptied meanwhile.
    axes: list[Any] = [0, None]
    listed = ax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=axes)
    axes[0] = 1
    for k in range(300):  # more option sets than the cache of what options mean holds
        ax.vmap(lambda v: v, in_axes=[0], axis_name=f"n{k}")
    pair = (_sds(2, 5, 7), _sds(3))
    want_pair = jax.eval_shape(jax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=(0, None)), *pair).shape
    assert listed.predict(*pair).shapes == want_pair
    assert ax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=[0, None]).predict(*pair).shapes == want_pair
    # shard_map: its shown options are not what it predicts from.
    mesh = {"x": 8}
    split = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    whole = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=P())

    def block(a: jax.Array) -> jax.Array:
        return a

    split.options = whole.options
    assert split.predict((16, 3)).block_shapes == (2, 3)
    assert ax.shard_map(block, mesh=mesh, in_specs=P("x"), out_specs=P("x")).predict((16, 3)).block_shapes == (2, 3)


def test_a_checked_calls_shape_lookup_answers_only_where_the_full_one_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept eager call with a signature finds its cached prediction by the arrays' shapes
    alone (`arrays_key`), so the engine never runs again for shapes seen; a transform whose
    answers depend on more (the context mesh) or that defers to JAX never takes it, and
    the flat options key shares predictors only between equal options."""
    from axischeck._engine._predictor import Predictor

    x = jnp.ones((4, 3))
    f = ax.vmap(lambda v: v.sum(0), signature="(n)->()")
    f(x)
    table = f._predictor.by_shapes
    assert table is not None and table.get(arrays_key((x,), {})) is f._predictor.hit((x,), {}) is not None
    checks: list[object] = []
    full_checks = Predictor.answer

    def counted(self: Predictor, *args: Any) -> Any:
        checks.append(args)
        return full_checks(self, *args)

    monkeypatch.setattr(Predictor, "answer", counted)
    assert f(jnp.zeros((4, 3))).shape == (4,) and not checks  # found by shapes
    assert f(jnp.zeros((5, 3))).shape == (5,) and len(checks) == 1  # new shapes: the engine
    assert f(v=x).shape == (4,) and len(checks) == 2  # by keyword: keyed by its tree, a new key
    assert f(v=x).shape == (4,) and len(checks) == 2  # and found by it after
    monkeypatch.undo()
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"), signature="(n)->(n)")
    sharded(jnp.ones(16))
    assert sharded._predictor.by_shapes is None  # its answers depend on the context mesh
    # Flat options: equal options share one predictor, different ones never do.
    fun = lambda v: v  # noqa: E731
    assert ax.vmap(fun, in_axes=(0,))._predictor is ax.vmap(fun, in_axes=(0,))._predictor
    found = {id(ax.vmap(fun, in_axes=a)._predictor) for a in (0, (0,), 1, -1, None, [0])}
    assert len(found) == 6


def test_a_function_whose_code_is_replaced_is_answered_for_its_new_code() -> None:
    """IPython's autoreload replaces a function's `__code__` in place: what axischeck
    keeps per function (its predictor, the signature's check against its parameters)
    must follow, for new transforms and for ones already made, as `jax.vmap` does."""
    import functools

    def f(x: jax.Array) -> jax.Array:
        return x.sum()

    def g(x: jax.Array) -> jax.Array:
        return x

    kept = ax.vmap(f)
    assert kept.predict(_sds(4, 3)).shapes == (4,)
    f.__code__ = g.__code__
    want = jax.eval_shape(jax.vmap(f), _sds(4, 3)).shape
    assert want == (4, 3)
    assert ax.vmap(f).predict(_sds(4, 3)).shapes == want
    assert kept.predict(_sds(4, 3)).shapes == want
    assert kept(jnp.ones((4, 3))).shape == want

    # A signature checked against the old parameters is checked again against the new.
    def h(x: jax.Array, y: jax.Array) -> jax.Array:
        return x

    def one(x: jax.Array) -> jax.Array:
        return x

    sig = "(n),(m)->(n)"
    used = ax.vmap(h, signature=sig)
    assert used(jnp.ones((2, 3)), jnp.ones((2, 5))).shape == (2, 3)  # its predictor is made
    unused = ax.vmap(h, signature=sig)
    bound = functools.partial(h)
    assert ax.vmap(bound, signature=sig).predict((2, 3), (2, 5)).shapes == (2, 3)
    h.__code__ = one.__code__
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        ax.vmap(h, signature=sig)
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        ax.vmap(bound, signature=sig)
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        unused.predict((2, 3), (2, 5))
    # The kept transform answers for the new code too: JAX's own error, explained.
    with pytest.raises(TypeError):
        used(jnp.ones((2, 3)), jnp.ones((2, 5)))


@pytest.mark.parametrize(
    "wrapping", ["partial", "bound method", "callable object", "nested", "nested inline", "wraps", "wrapper"]
)
def test_a_wrapped_function_whose_code_is_replaced_is_answered_for_its_new_code(wrapping: str) -> None:
    """The code that runs is found through `functools.partial`, bound methods, objects
    whose class defines `__call__`, wrappers that set `__wrapped__` and axischeck's own
    transforms: a kept transform of any of them answers for the new code, as JAX does."""
    import functools

    def f(x: jax.Array) -> jax.Array:
        return x.sum()

    def g(x: jax.Array) -> jax.Array:
        return x

    class Holder:
        def method(self, x: jax.Array) -> jax.Array:
            return x.sum()

        def __call__(self, x: jax.Array) -> jax.Array:
            return x.sum()

    @functools.wraps(f)
    def wrapper(*args: Any) -> jax.Array:
        return f(*args)

    target: Any
    shape: tuple[int, ...] = (4, 3)
    if wrapping == "partial":
        target, plain = functools.partial(f), lambda: jax.vmap(functools.partial(f))
    elif wrapping == "bound method":
        target, plain = Holder().method, lambda: jax.vmap(Holder().method)
    elif wrapping == "callable object":
        held = Holder()
        target, plain = held, lambda: jax.vmap(held)
    elif wrapping in ("wraps", "wrapper"):
        target, plain = wrapper, lambda: jax.vmap(wrapper)
    else:
        target, plain, shape = ax.vmap(f), lambda: jax.vmap(jax.vmap(f)), (2, 4, 3)
    kept = ax.vmap(ax.vmap(f)) if wrapping == "nested inline" else ax.vmap(target)
    before = kept.predict(shape).shapes
    assert before == jax.eval_shape(plain(), _sds(*shape)).shape
    if wrapping == "bound method":
        Holder.method.__code__ = (lambda self, x: x).__code__
    elif wrapping == "callable object":
        Holder.__call__.__code__ = (lambda self, x: x).__code__
    elif wrapping == "wrapper":  # the wrapper's own code, not the wrapped function's
        wrapper.__code__ = (lambda *args: jnp.stack([g(*args)] * 2, -1)).__code__
    else:
        f.__code__ = g.__code__
    want = jax.eval_shape(plain(), _sds(*shape)).shape
    assert want != before
    assert kept.predict(shape).shapes == want
    assert kept(jnp.ones(shape)).shape == want


def test_a_transform_written_inline_finds_the_predictor_its_function_and_options_share() -> None:
    """With flat options and a signature, a new transform of a function finds at
    construction the predictor an earlier transform of them made: only then, and only
    that one. A signature written as text is keyed by its text (hashed in C): the same
    text shares, as equal `Signature` objects do, but a text and a `Signature` do not."""

    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    sig = ax.Signature("(n),(n)->(n)")
    first = ax.vmap(f, in_axes=(0, None), signature=sig)
    assert first._shared is None  # nothing made yet: found at first use
    predictor = first._predictor
    assert ax.vmap(f, in_axes=(0, None), signature=sig)._shared is predictor
    assert ax.vmap(f, in_axes=(0, None), signature=ax.Signature("(n),(n)->(n)"))._shared is predictor  # equal
    as_text = ax.vmap(f, in_axes=(0, None), signature="(n),(n)->(n)")
    assert as_text._shared is None
    text_predictor = as_text._predictor
    assert text_predictor is not predictor and text_predictor.models.signature == predictor.models.signature
    found = ax.vmap(f, in_axes=(0, None), signature="(n),(n)->(n)")  # its text is not parsed again
    assert found._shared is text_predictor
    assert found.signature == first.signature and found.batched_signature == first.batched_signature
    assert copy.copy(found).predict((4, 3), (3,)).shapes == (4, 3)
    with pytest.raises(ax.ArgumentError, match="'n'"):
        found(jnp.ones((4, 3)), jnp.ones(2))
    assert ax.vmap(f, in_axes=(0, None), signature="(n), (n) -> (n)")._shared is None  # another text
    assert ax.vmap(f, in_axes=(0, 0), signature=sig)._shared is None
    assert ax.vmap(f, in_axes=(0, None), signature="(m),(m)->(m)")._shared is None
    assert ax.vmap(lambda x, y: x + y, in_axes=(0, None), signature=sig)._shared is None
    assert ax.vmap(f, in_axes=(0, None))._shared is None


def test_looking_for_a_callables_code_runs_none_of_its_code() -> None:
    """Which code a callable runs is read only from the types that hold it (functions,
    partials, bound methods, axischeck's transforms, an object's class): an object's own
    `__dict__`, which may be a property that raises, is never asked for it, and the
    transforms of such an object work as JAX's do."""

    class Strange:
        reads = 0

        @property  # type: ignore[misc]
        def __dict__(self) -> dict[str, Any]:  # noqa: PLW3201
            Strange.reads += 1
            raise RuntimeError("__dict__ read")

        def __call__(self, x: jax.Array) -> jax.Array:
            return x * 2

    from axischeck._core._cache import code_of

    fun = Strange()
    want = jax.vmap(fun)(jnp.ones((4, 3))).shape
    assert ax.vmap(fun)(jnp.ones((4, 3))).shape == want
    assert ax.vmap(fun).predict((4, 3)).shapes == want
    assert ax.vmap(fun, signature="(n)->(n)")(jnp.ones((4, 3))).shape == want
    Strange.reads = 0
    assert code_of(fun) is Strange.__call__.__code__  # its class's
    assert Strange.reads == 0


def test_shard_map_options_that_compare_equal_but_differ_share_nothing() -> None:
    """shard_map's options key types what it holds, not only the top level: specs in two
    namedtuple types, in pytree nodes whose `__eq__` says equal whatever they hold, and
    mesh sizes given as True or as a tuple of items are told apart."""
    import collections

    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, value: Any) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Box)

        def __hash__(self) -> int:
            return 0

        def tree_flatten(self) -> tuple[tuple[Any], None]:
            return (self.value,), None

        @classmethod
        def tree_unflatten(cls, aux: None, children: Any) -> Box:
            return cls(*children)

    x = jnp.ones((8, 4))
    split = ax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P("i")),), out_specs=P("i"))
    assert split.predict(Box((8, 4))).shapes == (8, 4)
    whole = ax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P()),), out_specs=P("i"))
    want = jax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P()),), out_specs=P("i"))(Box(x)).shape
    assert whole.predict(Box((8, 4))).shapes == want == whole(Box(x)).shape == (64, 4)

    first = collections.namedtuple("first", "a")  # noqa: PYI024
    second = collections.namedtuple("second", "a")  # noqa: PYI024

    def unwrap(pair: Any) -> jax.Array:
        return pair.a * 2

    assert ax.shard_map(unwrap, mesh=mesh, in_specs=(first(P("i")),), out_specs=P("i"))(first(x)).shape == (8, 4)
    assert ax.shard_map(unwrap, mesh=mesh, in_specs=(second(P("i")),), out_specs=P("i"))(second(x)).shape == (8, 4)

    block = ax.shard_map(lambda a: a, mesh={"i": 8}, in_specs=P("i"), out_specs=P("i"))
    assert block.predict((8, 4)).block_shapes == (1, 4)
    with pytest.raises(ax.SpecError):
        ax.shard_map(lambda a: a, mesh=(("i", 8),), in_specs=P("i"), out_specs=P("i"))
    ax.shard_map(lambda a: a, mesh={"i": 1}, in_specs=P("i"), out_specs=P("i")).predict((8, 4))
    with pytest.raises(ax.SpecError):
        ax.shard_map(lambda a: a, mesh={"i": True}, in_specs=P("i"), out_specs=P("i"))


@pytest.mark.parametrize("check_vma", [True, False, 1, 0, None])
def test_shard_map_hands_jax_check_vma_as_given(check_vma: Any) -> None:
    """JAX records check_vma as it was given (its jaxpr shows `check_vma=1`): the drop-in
    hands it over unchanged, so the lowered program is JAX's own."""
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    x = jnp.ones((8, 4))
    options: dict[str, Any] = {"mesh": mesh, "in_specs": P("i"), "out_specs": P("i"), "check_vma": check_vma}
    ours = jax.make_jaxpr(ax.shard_map(lambda a: a * 2, **options))(x)
    theirs = jax.make_jaxpr(jax.shard_map(lambda a: a * 2, **options))(x)
    assert str(ours) == str(theirs)
    with pytest.raises(ax.SpecError, match="check_vma"):
        ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=np.array([1, 1]))


def test_code_compiled_anew_equal_by_value_is_new_code() -> None:
    """Autoreload gives every function newly compiled code, which may equal the old by value
    (only a default changed): a wrapper's codes are compared object by object."""
    import functools

    def inner(v: jax.Array, k: int = 2) -> jax.Array:
        return v[:k]

    @functools.wraps(inner)
    def wrapper(v: jax.Array) -> jax.Array:
        return inner(v)

    kept = ax.vmap(wrapper)
    assert kept.predict((3, 4)).shapes == (3, 2)
    fresh = inner.__code__.replace()
    assert fresh is not inner.__code__ and fresh == inner.__code__
    inner.__code__, inner.__defaults__ = fresh, (1,)
    want = jax.eval_shape(jax.vmap(wrapper), _sds(3, 4)).shape
    assert want == (3, 1)
    assert kept.predict((3, 4)).shapes == want
    assert ax.vmap(wrapper).predict((3, 4)).shapes == want


def test_shard_map_check_vma_and_axis_names_are_keyed_by_type() -> None:
    """A check_vma object whose `__eq__` says equal to any other of its kind, and axis names
    of another str type, share nothing: each transform answers, and hands JAX, its own."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    class Flag:
        def __init__(self, value: bool) -> None:
            self.value = value

        def __bool__(self) -> bool:
            return self.value

        def __eq__(self, other: object) -> bool:
            return type(other) is Flag

        def __hash__(self) -> int:
            return 0

    def total(a: jax.Array) -> jax.Array:
        return a.sum(0, keepdims=True)  # varies by device: fine only with check_vma off

    x = jax.device_put(jnp.ones((8, 2)), NamedSharding(mesh, P("i")))
    ax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(True))
    relaxed = ax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(False))
    want = jax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(False))(x).shape
    assert relaxed.predict(x).shapes == want == relaxed(x).shape

    def double(a: jax.Array) -> jax.Array:
        return a * 2

    for names in ({np.str_("i")}, {"i"}):
        options: dict[str, Any] = {"mesh": mesh, "in_specs": P("i"), "out_specs": P("i"), "axis_names": names}
        ours = jax.make_jaxpr(ax.shard_map(double, **options))(x)
        assert str(ours) == str(jax.make_jaxpr(jax.shard_map(double, **options))(x))


def test_cyclic_shard_map_specs_are_refused_before_anything_flattens_them() -> None:
    """jaxlib's flatten of a cycle raises RecursionError from C++ and can leave the
    interpreter unable to recurse: specs that contain themselves are a SpecError."""
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    cyclic: list[Any] = [P("i")]
    cyclic.append(cyclic)
    with pytest.raises(ax.SpecError, match="contains itself"):
        ax.shard_map(lambda a: a, mesh=mesh, in_specs=cyclic, out_specs=P("i"))
    with pytest.raises(ax.SpecError, match="contains itself"):
        ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("i"), out_specs=cyclic)

    def depth(k: int) -> int:
        return 0 if k == 0 else 1 + depth(k - 1)

    assert depth(200) == 200  # the interpreter still recurses
