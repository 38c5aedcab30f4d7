"""Hostile inputs, one by one: `Shape`, signature text and pytrees, shard_map specs,
annotations, arguments that are cyclic, very deep or that JAX refuses, and the command line
(`test_fuzz.py` fuzzes every entry point at once).

The property throughout: a bad input gets a clear `ax.AxisCheckError` (a `SpecError`
for a malformed spec, exit status 2 with one line on stderr for the CLI), never an
internal IndexError / KeyError / AttributeError / RecursionError / ValueError, and the
interpreter keeps working afterwards.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import io
import pickle
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Annotated, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax
import axischeck._advice as axischeck_advice
from axischeck._cli import main
from axischeck._core._annotations import core_from_annotations
from axischeck._core._dims import parse_array_spec


@pytest.fixture(autouse=True, scope="module")
def _advice_as_users_get_it() -> Iterator[None]:
    """Hostile objects raise inside the advice too (a flatten, a cycle): as for every user,
    the error advised on is what comes out (elsewhere the suite raises the advice's own
    errors, see conftest.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(axischeck_advice, "RAISE_OWN_ERRORS", False)
        patch.setenv("AXISCHECK_ADVICE_ERRORS", "")  # and in the child processes
        yield


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


@pytest.mark.slow
def test_deep_signature_through_the_decorators() -> None:
    # In a subprocess: if a RecursionError escapes inside jaxlib, the interpreter can be left
    # with a raised recursion counter, which would break every later test in this one.
    r = subprocess.run([sys.executable, "-c", _DEEP_DECORATOR_SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


_DEEP_NODE_SCRIPT = """
import sys
import jax, jax.numpy as jnp
import axischeck as ax

@jax.tree_util.register_pytree_node_class
class Node:
    def __init__(self, child):
        self.child = child
    def tree_flatten(self):
        return (self.child,), None
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

value = jnp.ones((3, 2))
for _ in range(DEPTH):
    value = Node(value)
body = lambda t: jax.tree_util.tree_leaves(t)[0].sum()
def outcome(run):
    try:
        return run()
    except RecursionError:
        return "RecursionError"
want = outcome(lambda: jax.vmap(body)(value).shape)
assert outcome(lambda: ax.vmap(body)(value).shape) == want, want
if want != "RecursionError":
    assert ax.vmap(body).predict(value).shapes == want
assert ax.vmap(lambda x: x.sum(), signature="(a)->()").predict((3, 4)).shapes == (3,)
print("ok", want)
"""


@pytest.mark.slow
@pytest.mark.parametrize("depth", [900])
def test_deep_custom_pytree_node_argument(depth: int) -> None:
    # A custom node JAX flattens by recursion, near the recursion limit: axischeck answers as
    # JAX does and the interpreter stays usable (in a subprocess, for the reason above).
    script = _DEEP_NODE_SCRIPT.replace("DEPTH", str(depth))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("ok (3,)"), r.stderr[-2000:]


def test_cyclic_signature_pytree() -> None:
    cyc: list[Any] = ["a"]
    cyc.append(cyc)
    with pytest.raises(ax.SpecError, match="contains itself"):
        ax.Signature((cyc,))
    _still_works()


@pytest.mark.devices(4)
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

    env = dict(os.environ, JAX_PLATFORMS="cpu")  # the fixture's AXISCHECK_ADVICE_ERRORS too
    proc = subprocess.run(
        [sys.executable, "-c", _CYCLIC_AND_DEEP], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Exception ignored" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.startswith("CLEAN"), proc.stdout


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


def test_predictions_pickle_and_copy_with_their_derivation() -> None:
    """A prediction from the compiled fast path derives its table only when asked, through
    the predictor (which is not pickled): pickling derives it first."""
    from jax.sharding import PartitionSpec as P

    f = ax.vmap(lambda a, b: a @ b, in_axes=(0, None), signature="(n,k),(k,m)->(n,m)")
    s = ax.shard_map(lambda a: a * 2, mesh={"x": 4}, in_specs=P("x"), out_specs=P("x"), signature="(n,k)->(n,k)")
    g = ax.vmap(lambda a: a.sum(0))
    for pred in (f.predict((8, 3, 4), (4, 5)), s.predict((16, 3)), g.predict((8, 3, 4))):
        for back in (pickle.loads(pickle.dumps(pred)), copy.deepcopy(pred), copy.copy(pred)):
            assert type(back) is type(pred) and back == pred and str(back) == str(pred)
            assert (back.shapes, back.axis_size, back.traced) == (pred.shapes, pred.axis_size, pred.traced)
    sharded = s.predict((16, 3))
    back = pickle.loads(pickle.dumps(sharded))
    assert (back.block_shapes, back.in_block_shapes) == (sharded.block_shapes, sharded.in_block_shapes)


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


# ---------------------------------------------------------------------------- CLI


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _assert_usage_error(argv: tuple[str, ...]) -> str:
    code, out, err = run_cli(*argv)
    assert code == 2, (argv, out, err)
    assert out == "", (argv, out)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("axischeck: error:"), (argv, err)
    assert "Traceback" not in err
    return lines[0]


HUGE = "9" * 5000
DEEP = "[" * 10_000 + "]" * 10_000

BASES = {
    "predict": ("predict", "(a,b)->(a)", "4x3x2"),
    "explain": ("explain", "(a,b)->(a)", "4x3x2"),
    "shard": ("shard", "(n)->(n)", "16", "--mesh", "x=4"),
}


@pytest.mark.parametrize("command", ["predict", "explain", "shard"])
@pytest.mark.parametrize(
    "extra",
    [
        (HUGE,),
        ("²x3",),
        ("٣x3",),
        ("３",),
        ("-3x3",),
        ("3.5",),
        ("",),
        ("3\x00x4",),
        (DEEP,),
        ("(((3)))",),
        ("[(3, 4)]",),
        ("--bogus",),
        ("--names", ""),
        ("--names", "\x00"),
        ("--names", "a" * 100_000 + ",b"),
    ],
    ids=lambda e: repr(e)[:40],
)
def test_hostile_shapes_and_options_exit_2(command: str, extra: tuple[str, ...]) -> None:
    _assert_usage_error(BASES[command] + extra)


@pytest.mark.parametrize("command", ["predict", "explain"])
@pytest.mark.parametrize(
    "option",
    [
        ("--in-axes", HUGE),
        ("--in-axes", DEEP),
        ("--in-axes", "{[1]: 0}"),
        ("--in-axes", "{1, [2]}"),
        ("--in-axes", "\x00"),
        ("--in-axes", ""),
        ("--in-axes", "10**100"),
        ("--in-axes", "1" + "0" * 100),
        ("--in-axes", "(0, 1e400)"),
        ("--in-axes", "b'x'"),
        ("--in-axes", "..."),
        ("--in-axes", "{1: 2}"),
        ("--in-axes", "(" * 150 + ")" * 150),
        ("--out-axes", HUGE),
        ("--out-axes", "{'a': 1" + "}"),
        ("--out-axes", "[" * 150 + "]" * 150),
        ("--out-axes", "1" + "0" * 100),
        ("--axis-size", HUGE),
        ("--axis-size", "٣"),
        ("--axis-size", "²"),
        ("--axis-size", "-1"),
        ("--axis-size", ""),
        ("--axis-name", "\x00"),
        ("--axis-name", ""),
    ],
    ids=lambda o: repr(o)[:40],
)
def test_hostile_vmap_options_exit_2(command: str, option: tuple[str, str]) -> None:
    code, out, err = run_cli(*BASES[command], *option)
    if code != 2:  # a few odd values are valid (an empty axis name): then no traceback either
        assert code in (0, 1) and err == "", (option, out, err)
    else:
        _assert_usage_error(BASES[command] + option)


@pytest.mark.parametrize(
    "option",
    [
        ("--mesh", f"x={HUGE}"),
        ("--mesh", "x=٣"),
        ("--mesh", "x=²"),
        ("--mesh", "x=-1"),
        ("--mesh", ""),
        ("--mesh", "\x00=4"),
        ("--mesh", "x=4" + ",y=2" * 10),
        ("--in-specs", DEEP),
        ("--in-specs", HUGE),
        ("--in-specs", "{[1]: 0}"),
        ("--in-specs", "[{'a': 1}]"),
        ("--in-specs", "(('x', 1),)"),
        ("--out-specs", DEEP),
        ("--out-specs", "[[None]]"),
        ("--out-specs", "b'x'"),
        ("--axis-names", "\x00"),
        ("--axis-names", "nope"),
    ],
    ids=lambda o: repr(o)[:40],
)
def test_hostile_shard_options_exit_2(option: tuple[str, str]) -> None:
    code, out, err = run_cli("shard", "(n)->(n)", "16", "--mesh", "x=4", *option)
    if code != 2:
        assert code in (0, 1) and err == "" and "Traceback" not in out, (option, out, err)
    else:
        _assert_usage_error(("shard", "(n)->(n)", "16", "--mesh", "x=4", *option))


@pytest.mark.parametrize("command", ["predict", "explain", "shard"])
@pytest.mark.parametrize(
    "signature",
    [
        HUGE,
        "(" + HUGE + ")->()",
        "(²)->()",
        "(٣)->()",
        "\x00",
        "(" * 10_000,
        DEEP,
        "->",
        "(a)->(b)->(c)",
        "x" * 1_200_000,
    ],
    ids=lambda s: repr(s[:20]),
)
def test_hostile_signatures_exit_2(command: str, signature: str) -> None:
    base = BASES[command]
    _assert_usage_error((base[0], signature, *base[2:]))


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("",),
        ("\x00",),
        ("bogus",),
        (HUGE,),
        ("predict",),
        ("shard", "(n)->(n)"),
        ("demo", "x"),
        ("--bogus",),
        ("-",),
        ("--in-axes",),
        ("predict", "(a)->(a)", "--in-axes"),
    ],
    ids=repr,
)
def test_hostile_commands_exit_2(argv: tuple[str, ...]) -> None:
    _assert_usage_error(argv)


def test_help_and_version_exit_0() -> None:
    code, out, err = run_cli("--help")
    assert code == 0 and "predict" in out and err == ""
    code, out, err = run_cli("predict", "--help")
    assert code == 0 and "--in-axes" in out
    code, out, err = run_cli("--version")
    assert code == 0 and out.strip() == f"axischeck {ax.__version__}" and err == ""


_TOKENS = st.one_of(
    st.sampled_from(
        [
            "predict",
            "explain",
            "shard",
            "--in-axes",
            "--out-axes",
            "--axis-size",
            "--axis-name",
            "--check",
            "--names",
            "--mesh",
            "--in-specs",
            "--out-specs",
            "--axis-names",
            "--version",
            "-h",
            "0",
            "(0, 1)",
            "None",
            "[0]",
            "16x8",
            "4x16x2",
            "()",
            "x=4",
            "data=2,model=2",
            "('x',)",
            "[('x',), None]",
            "(a,b)->(a)",
            "(a,b),(b,c)->(a,c)",
            "n f, f o -> n",
            "x,y",
            HUGE,
            "٣",
            "²",
            "\x00",
            "",
            DEEP[:400] + DEEP[-400:],
        ]
    ),
    st.text(max_size=30),
    st.text(alphabet="()[]{},:x0123456789-'\"ab .*#_>=N", max_size=30),
)


_SIGNATURES = st.one_of(
    st.sampled_from(["(a,b)->(a)", "(a,b),(b,c)->(a,c)", "n f, f o -> n", "(n)->(n)", "(n,k),(k,m)->(n,m)", "->()"]),
    st.text(alphabet="(),->abn_*#. 0123456789²٣", max_size=20),
)
_SHAPES = st.one_of(
    st.lists(st.integers(0, 20), max_size=4).map(lambda dims: "x".join(map(str, dims)) or "()"),
    st.sampled_from(["()", "scalar", "16x8", "(3, 4)", "[5]", "3,", HUGE, "٣x3", "-1x2", "1e3", ""]),
)
_OPTIONS = st.one_of(
    st.tuples(
        st.sampled_from(["--in-axes", "--out-axes", "--in-specs", "--out-specs"]),
        st.sampled_from(
            [
                "0",
                "1",
                "-1",
                "None",
                "(0, None)",
                "(0, 1)",
                "[0]",
                "{'a': 0}",
                "('x',)",
                "[('x',), None]",
                "()",
                "'x'",
                "[None, None]",
                "((0,),)",
                "2**8",
                "{1, 2}",
                HUGE,
                DEEP[:600],
            ]
        ),
    ),
    st.tuples(st.just("--axis-size"), st.sampled_from(["0", "3", "16", "-2", "٣", HUGE, ""])),
    st.tuples(st.just("--axis-name"), st.sampled_from(["i", "batch", "a", "", "\x00"])),
    st.tuples(st.just("--names"), st.sampled_from(["x", "x,y", "x,y,z", "", "1x", "\x00"])),
    st.tuples(st.just("--mesh"), st.sampled_from(["x=4", "x=2,y=2", "x=0", "x=", "=4", f"x={HUGE}"])),
    st.tuples(st.just("--axis-names"), st.sampled_from(["x", "y", "x,y", ""])),
    st.tuples(st.just("--check")),
)


@st.composite
def _command_lines(draw: st.DrawFn) -> list[str]:
    """A subcommand, a signature, shapes and options: mostly well-formed, with hostile parts."""
    argv = [draw(st.sampled_from(["predict", "explain", "shard"])), draw(_SIGNATURES)]
    argv += draw(st.lists(_SHAPES, max_size=3))
    for option in draw(st.lists(_OPTIONS, max_size=4)):
        argv += option
    return argv


@given(st.one_of(st.lists(_TOKENS, max_size=8), _command_lines()))
def test_fuzzed_argv_never_shows_a_traceback(argv: list[str]) -> None:
    if argv[:1] == ["demo"]:
        argv = argv[1:]  # the demo runs JAX; it has its own tests
    code, out, err = run_cli(*argv)
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    assert "internal error" not in err, (argv, err)
    if code == 2 and not (set(argv) & {"-h", "--help"}):
        assert len(err.strip().splitlines()) == 1 and out == "", (argv, out, err)
    _still_works_after_cli()


def _still_works_after_cli() -> None:
    assert ax.Signature("(a)->(a)").vmap().predict((2, 3)).shapes == (2, 3)


# ------------------------------------------------------------- ints past str's limit

HUGE_INT = 10**4400  # past Python's 4300-digit str limit, where str() raises ValueError


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda: ax.Signature(((HUGE_INT,),)), ax.SpecError),
        (lambda: ax.Signature(("n",), output=(HUGE_INT,)), ax.SpecError),
        (lambda: ax.vmap(lambda x: x, axis_size=-HUGE_INT).predict((2, 3)), ax.AxisCheckError),
        (lambda: ax.vmap(lambda x: x, out_axes=HUGE_INT).predict((2, 3)), ax.AxisCheckError),
        (lambda: ax.vmap(lambda x: x, in_axes=HUGE_INT).predict((2, 3)), ax.AxisCheckError),
    ],
    ids=["signature-dim", "signature-output", "axis_size", "out_axes", "in_axes"],
)
def test_huge_ints_are_reported_not_leaked(make: Any, kind: type[Exception]) -> None:
    with pytest.raises(kind, match="int of about 4400 digits"):
        make()


def test_explain_of_a_huge_size_is_text() -> None:
    text = ax.vmap(lambda x: x, signature="(n)->(n)").explain((2, HUGE_INT))
    assert "int of about 4400 digits" in text


@pytest.mark.parametrize("axes", ["0x" + "f" * 5000, "(0, -" + "9" * 30 + ")"])
def test_cli_axes_past_int64_are_usage_errors(axes: str) -> None:
    _assert_usage_error(BASES["predict"] + ("--in-axes", axes))


def test_unreadable_jaxtyping_dim_text_is_refused_at_decoration() -> None:
    def f(x: "Float[Array, '\u00b2']") -> Any:  # noqa: F821  (text, never evaluated)
        return x

    with pytest.raises(ax.SpecError, match="is not a dimension"):
        ax.vmap(f)


def test_jaxtyping_expression_text_is_left_to_the_first_call() -> None:
    def f(x: "Float[Array, 'n+1']") -> Any:  # noqa: F821  (an expression jaxtyping evaluates)
        return x

    g = ax.vmap(f)  # not refused: axischeck does not model it, and traces f instead
    with pytest.warns(ax.AxisCheckWarning, match="traced instead"):
        assert g(jnp.ones((2, 3))).shape == (2, 3)


# ------------------------------------------------------------- user pytree nodes


def _node_whose_flatten_raises(kind: type[Exception]) -> Any:
    cls = type(f"Raises{kind.__name__}", (), {})

    def flatten(_: Any) -> Any:
        raise kind("cannot flatten this")

    jax.tree_util.register_pytree_node(cls, flatten, lambda aux, children: cls())
    return cls()


@pytest.mark.parametrize("kind", [TypeError, KeyError, RuntimeError])
def test_a_flatten_error_keeps_the_type_jax_gives_it(kind: type[Exception]) -> None:
    arg = _node_whose_flatten_raises(kind)
    with pytest.raises(kind):
        jax.vmap(lambda t: 0.0)(arg)
    with pytest.raises(kind) as called:
        ax.vmap(lambda t: 0.0)(arg)
    with pytest.raises(kind) as predicted:
        ax.vmap(lambda t: 0.0).predict(arg)
    for err in (called.value, predicted.value):
        assert isinstance(err, ax.ArgumentError) and "cannot flatten this" in str(err)


def test_a_flatten_that_answers_differently_each_time_works_as_under_jax() -> None:
    """JAX flattens an argument once; a node whose flatten alternates its children must
    work under axischeck too, with JAX's value and shape."""
    calls = iter(range(1_000_000))

    class Flaky:
        def __init__(self, *children: Any) -> None:
            self.children = children

    jax.tree_util.register_pytree_node(
        Flaky, lambda f: (f.children[: 1 + next(calls) % 2], None), lambda aux, ch: Flaky(*ch)
    )

    def fn(t: Flaky) -> jax.Array:
        return t.children[0].sum(axis=-1)

    arg = Flaky(jnp.arange(6.0).reshape(2, 3), jnp.ones((2, 3)))
    want = jax.vmap(fn)(arg)
    np.testing.assert_array_equal(ax.vmap(fn)(arg), want)
    assert ax.vmap(fn).predict(arg).shapes == want.shape


# ------------------------------------------------------------- inputs JAX refuses


class _HasJaxArray:
    shape, dtype = (2, 3), np.dtype("float32")

    def __jax_array__(self) -> jax.Array:
        return jnp.ones((2, 3))


@pytest.mark.parametrize(
    "make", [lambda: np.ma.array(np.ones((2, 3), np.float32)), _HasJaxArray], ids=["masked", "__jax_array__"]
)
@pytest.mark.parametrize("signature", [None, "*s -> *s"], ids=["traced", "signature"])
def test_predict_refuses_what_jax_refuses(make: Any, signature: str | None) -> None:
    x = make()
    try:
        jax.eval_shape(jax.vmap(lambda v: v), x)
    except ValueError:
        pass
    else:  # a JAX that abstracts it: predict answers as JAX does
        assert ax.vmap(lambda v: v, signature=signature).predict(x).shapes == (2, 3)
        return
    with pytest.raises(ax.AxisCheckError):
        ax.vmap(lambda v: v, signature=signature).predict(x)
    with pytest.raises(ValueError):
        ax.vmap(lambda v: v, signature=signature)(x)


class _RaisingEq:
    """A shape entry whose `__eq__` raises (a struct keeps whatever its shape holds)."""

    def __index__(self) -> int:
        return 3

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("user __eq__ ran")

    def __hash__(self) -> int:
        return hash(3)


def test_a_struct_whose_shape_compares_badly_gets_jax_error_at_a_checked_call() -> None:
    """A checked call looks its prediction up by the arguments' shapes: a shape entry whose
    comparison raises is a miss there, and the call gets JAX's own refusal."""
    f = ax.vmap(lambda x: x * 2, signature="(a)->(a)")
    f(jnp.ones((2, 3)))  # a stored prediction under shape (2, 3), hashing like the struct's
    struct = jax.ShapeDtypeStruct((2, _RaisingEq()), jnp.float32)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a valid JAX type"):
        f(struct)
