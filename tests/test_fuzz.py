"""Hostile-input fuzzing of every public entry point: only `ax.AxisCheckError`s escape.

`ax.Signature` (text and pytrees), the construction of `ax.vmap` / `ax.check` /
`ax.shard_map` and `Signature.vmap` with options of every wrong type, `predict`,
`explain`, `unify` and checked calls, given arguments of every kind (odd scalars, junk
leaves, array lookalikes, custom pytree nodes, dicts with unsortable keys). Every function
handed to axischeck here cannot raise on its own (`lambda *a, **k: 0.0`, or one that
returns its arguments), so any other exception is a library bug. Whatever is accepted
must then predict, explain and run, and a call that succeeds must agree with `predict`.
The last section keeps the fuzz's findings as targeted tests.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

import axischeck as ax
from conftest import cpu_mesh_or_none
from jax_oracle import const

T = TypeVar("T")
AxisCheckError = ax.AxisCheckError

# The fuzz tests that run JAX (calls, traces) skip shrinking: while a bug is open, shrinking
# their examples would take minutes, and every failure message already names the exact
# entry point and inputs that leaked. Everything else comes from the active profile.
NO_SHRINK = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])


# =============================================================================== helpers


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


# ============================================================== ax.Signature


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
@example(
    text="", shapes=[(2, 3, 0, 591604993315, 8045727881846040035328), (2,)], in_axes=2
)  # an empty stand-in no allocation takes
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


# ======================================================== construction


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


# ============================================== predict / explain / calls


_MESH = cpu_mesh_or_none((4, 2), ("x", "y"), (jax.sharding.AxisType.Auto,) * 2)


class _Model:
    """A class with a decorated method (bound-method path)."""

    @ax.vmap(in_axes=(None, 0))
    def method(self, *args: Any, **kwargs: Any) -> float:
        return 0.0


def _roster() -> list[tuple[str, Any, bool]]:
    """(name, decorated target, whether it only ever returns 0.0). The shard_maps on a real
    mesh need 8 devices: a run with fewer fuzzes the rest (its mesh of sizes still runs)."""
    return [*_plain_roster(), *(_mesh_roster(_MESH) if _MESH is not None else [])]


def _plain_roster() -> list[tuple[str, Any, bool]]:
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
        (
            "shard_map(echo, P('x'), P('x'), mesh=dict)",
            ax.shard_map(echo, mesh={"x": 2, "y": 64}, in_specs=P("x"), out_specs=P("x")),
            False,
        ),
    ]


def _mesh_roster(mesh: Any) -> list[tuple[str, Any, bool]]:
    return [
        ("shard_map(const, P(), P())", ax.shard_map(const, mesh=mesh, in_specs=P(), out_specs=P()), True),
        (
            "shard_map(const, (P('x', 'y'), None), sig)",
            ax.shard_map(const, mesh=mesh, in_specs=(P("x", "y"), None), out_specs=P(), signature="(a,b),(...)->()"),
            False,
        ),
        ("vmap(shard_map(const))", ax.vmap(ax.shard_map(const, mesh=mesh, in_specs=P(), out_specs=P())), True),
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


# ==================================================== findings of the fuzz, kept


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
