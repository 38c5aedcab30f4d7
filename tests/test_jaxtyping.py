"""jaxtyping interop, both ways: its annotations are read as signatures when it is
installed, and nothing needs it (or hypothesis) when it is not.

The oracle is JAX: every prediction read from jaxtyping annotations must equal
`jax.eval_shape` of the plain `jax.vmap` (`assert_predicts_jax`) and a real call.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import Array, ArrayLike, Float, Float64, Int, Key, PyTree, Shaped, UInt8

import axischeck as ax
from axischeck._debug import predictor_of
from axischeck.testing import assert_predicts_jax, check_against_jax

# ------------------------------------------------------------ annotated functions


def matmul(x: Float[Array, "a b"], w: Float[Array, "b c"]) -> Float[Array, "a c"]:
    return x @ w


def last_sum(x: Shaped[Array, "*batch c"]) -> Float[Array, "*batch"]:
    return x.sum(-1)


def broadcast_add(x: Float[Array, "#b c"], y: Float[Array, "b c"]) -> Float[Array, "b c"]:
    return x + y


def scale_any(x: Shaped[Array, "..."], k: Int[Array, ""]) -> Shaped[Array, "..."]:
    return x * k


def rows3(w: Float[Array, "3 n"], x: Float[Array, " n"]) -> Float[Array, " 3"]:
    return w @ x


def documented(x: Float[Array, "rows=3 cols"]) -> Float[Array, " cols"]:
    return x.sum(0)


def like(x: Float[ArrayLike, "n"], y: Float[ArrayLike, "n"]) -> Float[Array, ""]:
    return jnp.dot(x, y)


def tree_sum(p: PyTree[Float[Array, " n"]]) -> Float[Array, " n"]:
    return sum(jax.tree_util.tree_leaves(p), jnp.zeros(()))  # type: ignore[no-any-return]


def struct(shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)  # type: ignore[no-untyped-call]


# name -> (function, in_axes, signature read, batched arguments that agree)
CASES: dict[str, tuple[Callable[..., Any], Any, str, tuple[Any, ...]]] = {
    "Float a b": (matmul, (0, None), "(a, b), (b, c) -> (a, c)", ((7, 3, 4), (4, 2))),
    "Shaped *batch c": (last_sum, 0, "(*batch, c) -> (*batch)", ((7, 2, 5, 3),)),
    "#b broadcast, size 1": (broadcast_add, 0, "(#b, c), (b, c) -> (b, c)", ((7, 1, 3), (7, 4, 3))),
    "#b broadcast, equal": (broadcast_add, 0, "(#b, c), (b, c) -> (b, c)", ((7, 4, 3), (7, 4, 3))),
    "... and Int scalar": (scale_any, (0, None), "(...), () -> (...)", ((7, 2, 3), struct((), jnp.int32))),
    "fixed 3 n": (rows3, (None, 0), "(3, n), (n) -> (3)", ((3, 4), (7, 4))),
    "name=3 documents a 3": (documented, 1, "(3, cols) -> (cols)", ((3, 7, 5),)),
    "Float[ArrayLike]": (like, (0, None), "(n), (n) -> ()", ((7, 4), (4,))),
    "PyTree[Float]": (tree_sum, 0, "(n) -> (n)", ({"u": (7, 4), "v": (7, 4)},)),
}


def _ones(arg: Any) -> Any:
    def one(leaf: Any) -> Any:
        if isinstance(leaf, jax.ShapeDtypeStruct):
            return jnp.ones(leaf.shape, leaf.dtype)
        return jnp.ones(leaf)

    return jax.tree_util.tree_map(one, arg, is_leaf=lambda x: isinstance(x, tuple) and all(type(d) is int for d in x))


@pytest.mark.parametrize("case", sorted(CASES))
def test_annotations_are_the_signature_and_predict_like_jax(case: str) -> None:
    fn, in_axes, sig, args = CASES[case]
    f = ax.vmap(fn, in_axes=in_axes)
    assert str(f.signature) == sig
    pred = assert_predicts_jax(f, *args)
    assert pred is not None, "JAX refuses shapes chosen to agree"
    out = f(*[_ones(a) for a in args])  # the checked call verifies the output too
    assert out.shape == pred.shapes


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_reads_them_unmapped(case: str) -> None:
    fn, in_axes, sig, args = CASES[case]
    c = ax.check(fn)
    assert str(c.signature) == sig
    one = ax.vmap(fn, in_axes=in_axes)
    per_example = [_ones(a) for a in args]
    # The first example of the batch, as the unmapped function sees it.
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    first = [
        x if a is None else jax.tree_util.tree_map(lambda v, a=a: jnp.take(v, 0, axis=a), x)
        for x, a in zip(per_example, axes, strict=False)
    ]
    assert c(*first).shape == c.predict(*first).shapes == one(*per_example)[0].shape


# (function, in_axes, batched arguments, message fragment naming the argument)
MISMATCHES: list[tuple[Callable[..., Any], Any, tuple[Any, ...], str]] = [
    (matmul, (0, None), ((7, 3, 4), (5, 2)), r"dimension 'b' disagrees: 4 from x, 5 from w"),
    (rows3, (None, 0), ((2, 4), (7, 4)), r"axis 0 of w has size 2, but the signature \(3, n\) fixes it to 3"),
    (rows3, (None, 0), ((3, 4), (7, 5)), r"dimension 'n' disagrees: 4 from w, 5 from x"),
    (broadcast_add, 0, ((7, 3, 3), (7, 4, 3)), r"dimension 'b' disagrees: 3 from x, 4 from y"),
    (last_sum, 0, ((7,),), r"x has per-example shape \(\) of rank 0"),
    (like, (0, None), ((7, 4), (3,)), r"dimension 'n' disagrees: 4 from x, 3 from y"),
    (tree_sum, 0, ({"u": (7, 4), "v": (7, 5)},), r"dimension 'n' disagrees: 4 from p\['u'\], 5 from p\['v'\]"),
]


@pytest.mark.parametrize("fn, in_axes, args, fragment", MISMATCHES, ids=lambda v: getattr(v, "__name__", None))
def test_a_mismatch_names_the_argument(
    fn: Callable[..., Any], in_axes: Any, args: tuple[Any, ...], fragment: str
) -> None:
    f = ax.vmap(fn, in_axes=in_axes)
    with pytest.raises(ax.AxisCheckError, match=fragment):
        f.predict(*args)
    with pytest.raises(ax.AxisCheckError, match=fragment):
        f(*[_ones(a) for a in args])  # before JAX runs


def test_a_lying_return_annotation_is_reported() -> None:
    def transpose_liar(x: Float[Array, "a b"]) -> Float[Array, "a b"]:
        return x.T

    with pytest.raises(ax.OutputError, match=r"output has shape \(7, 4, 3\), but the signature predicts \(7, 3, 4\)"):
        ax.vmap(transpose_liar)(jnp.ones((7, 3, 4)))


def test_property_helper_on_jaxtyping_functions() -> None:
    check_against_jax(ax.vmap(matmul, in_axes=(0, None)), max_examples=8)
    check_against_jax(ax.vmap(last_sum, in_axes=-1), max_examples=8)


def test_method_self_is_unchecked() -> None:
    class Layer:
        def __init__(self) -> None:
            self.w = jnp.ones((3, 4))

        @ax.vmap(in_axes=(None, 0))
        def apply(self, x: Float[Array, " i"]) -> Float[Array, " o"]:
            return self.w @ x

    assert str(Layer.apply.signature) == "(...), (i) -> (o)"
    assert Layer().apply(jnp.ones((5, 4))).shape == (5, 3)


def test_string_annotations_with_unresolvable_names_are_parsed_not_evaluated() -> None:
    def f(x, w):  # type: ignore[no-untyped-def]
        return x @ w

    # As `from __future__ import annotations` leaves them when `jt` is a local name.
    f.__annotations__ = {
        "x": 'jt.Float[jt.Array, "a b"]',
        "w": 'jt.Float[jt.Array, "b c"]',
        "return": 'jt.Float[jt.Array, "a c"]',
    }
    g = ax.vmap(f, in_axes=(0, None))
    assert str(g.signature) == "(a, b), (b, c) -> (a, c)"
    assert assert_predicts_jax(g, (7, 3, 4), (4, 2)) is not None

    def k(p):  # type: ignore[no-untyped-def]
        return jnp.zeros(())

    k.__annotations__ = {"p": 'jt.PyTree[jt.Float[jt.Array, "?n"]]', "return": 'jt.Float[jt.Array, ""]'}
    assert str(ax.check(k).signature) == "(_) -> ()"  # ?n may differ from leaf to leaf: unchecked


def test_an_alias_named_before_it_is_defined_is_read_at_the_call() -> None:
    """The annotations are read at the first call, not when the transform is made: a
    string naming an alias defined after the decorator still declares its dims."""
    namespace: dict[str, Any] = {"ax": ax}
    exec(  # a module whose alias follows the decorated function
        textwrap.dedent(
            """
            from jaxtyping import Array, Float

            @ax.vmap
            def f(x: "Row") -> "Row":
                return x[:2]

            Row = Float[Array, "n"]
            """
        ),
        namespace,
    )
    with pytest.raises(ax.OutputError, match=r"output has shape \(3, 2\), but the signature predicts \(3, 4\)"):
        namespace["f"](jnp.ones((3, 4)))


def test_tree_path_dims() -> None:
    def per_leaf(p: PyTree[Float[Array, "?n"]]) -> Float[Array, ""]:
        return jnp.zeros(())

    def plain(x: Float[Array, "?n"], y: Float[Array, "?n"]) -> Float[Array, "?n"]:
        return x + y

    assert str(ax.check(per_leaf).signature) == "(_) -> ()"
    assert ax.check(per_leaf).predict({"u": (3,), "v": (4,)}).shapes == ()
    assert str(ax.check(plain).signature) == "(n), (n) -> (n)"  # outside a PyTree, ?n is n


def test_what_is_not_read() -> None:
    def optional(x: Float[Array, "n"] | None) -> Float[Array, "n"] | None:
        return x

    assert ax.vmap(optional).signature is None  # None is a valid argument: traced instead

    def symbolic(x: Float[Array, "n"]) -> Float[Array, "n+1"]:
        return jnp.pad(x, (0, 1))

    # An annotation axischeck cannot read never stops a function JAX runs: it is traced,
    # and a warning says why (at first use: annotations are read lazily).
    with pytest.warns(ax.AxisCheckWarning, match=r"jaxtyping dimension 'n\+1'.*return annotation.*signature="):
        assert ax.vmap(symbolic).predict((7, 4)).shapes == (7, 5)
    f = ax.vmap(symbolic, signature="(n)->(_)")  # a declared signature takes over
    assert assert_predicts_jax(f, (7, 4)) is not None

    def broadcast_run(x: Float[Array, "*#b c"]) -> Float[Array, "*#b"]:
        return x.sum(-1)

    with pytest.warns(ax.AxisCheckWarning, match="broadcastable run"):
        ax.vmap(broadcast_run).predict((3, 4))


def test_numpy_arrays_annotated_with_jaxtyping() -> None:
    def total(x: Float[np.ndarray, "a b"]) -> Float[np.ndarray, " a"]:
        return x.sum(-1)  # type: ignore[no-any-return]

    f = ax.vmap(total)
    assert str(f.signature) == "(a, b) -> (a)"
    assert f(np.ones((7, 3, 4), np.float32)).shape == (7, 3)


# ---------------------------------------------------------- without the extras

_BLOCKED = textwrap.dedent(
    """
    import sys

    class Blocked:
        '''Makes the optional packages look uninstalled.'''

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("jaxtyping", "hypothesis"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    """
)


def _run_blocked(body: str) -> subprocess.CompletedProcess[str]:
    code = _BLOCKED + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)


@pytest.mark.slow
def test_everything_but_the_extras_works_without_jaxtyping_and_hypothesis() -> None:
    proc = _run_blocked(
        """
        from typing import Annotated

        import jax
        import jax.numpy as jnp

        import axischeck as ax
        import axischeck.testing

        @ax.vmap(in_axes=(0, None))
        def project(x: Annotated[jax.Array, "i"], w: Annotated[jax.Array, "i o"]) -> Annotated[jax.Array, "o"]:
            return x @ w

        assert project(jnp.ones((5, 3)), jnp.ones((3, 2))).shape == (5, 2)
        assert project.predict((5, 3), (3, 2)).shapes == (5, 2)
        try:
            project(jnp.ones((5, 3)), jnp.ones((4, 2)))
        except ax.AxisCheckError as err:
            assert "3 from x, 4 from w" in str(err), err
        else:
            raise AssertionError("no AxisCheckError")
        sig = ax.Signature("(a,b),(b,c)->(a,c)").vmap(in_axes=(0, 1))
        assert sig.predict((16, 8, 4), (4, 16, 2)).shapes == (16, 8, 2)
        assert axischeck.testing.assert_predicts_jax(project, (5, 3), (3, 2)) is not None
        try:
            axischeck.testing.check_against_jax(project)
        except ImportError as err:
            print("testing:", err)
        try:
            import axischeck.strategies
        except ImportError as err:
            print("strategies:", err)
        assert "jaxtyping" not in sys.modules and "hypothesis" not in sys.modules, sorted(sys.modules)
        print("ok")
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "ok"
    for what in ("testing:", "strategies:"):
        (message,) = [line for line in lines if line.startswith(what)]
        assert "needs hypothesis" in message and "pip install 'axischeck[strategies]'" in message


@pytest.mark.slow
def test_the_blocker_blocks() -> None:
    proc = _run_blocked("import jaxtyping\n")
    assert proc.returncode != 0 and "No module named 'jaxtyping'" in proc.stderr


# ------------------------------------------------- dtypes of plain tuples in predict


def noisy(key: Key[Array, ""], scale: Float[Array, "n"]) -> Float[Array, "n"]:
    return jax.random.normal(key, scale.shape) * scale


def histogram(counts: UInt8[Array, "n"], weights: Float64[Array, "n"]) -> Float[Array, ""]:
    return (counts * weights).sum()


def test_plain_tuples_take_the_dtype_the_annotations_name() -> None:
    # A key annotation makes (4,) four typed PRNG keys: as float32 JAX would refuse them.
    f = ax.vmap(noisy, in_axes=(0, None))
    assert f.predict((4,), (3,)).shapes == (4, 3)
    keys = jax.random.split(jax.random.key(0), 4)
    assert f(keys, jnp.ones(3)).shape == (4, 3)
    with pytest.raises(TypeError):  # what a float32 stand-in would meet
        jax.eval_shape(jax.vmap(noisy, in_axes=(0, None)), jax.ShapeDtypeStruct((4,), jnp.float32), jnp.ones(3))
    dtypes = predictor_of(ax.vmap(histogram)).tuple_dtypes
    assert dtypes[0] == dtypes["counts"] == np.uint8
    assert dtypes[1] == np.float64  # what the annotation says; JAX computes in float32 without x64
    assert predictor_of(ax.vmap(matmul, in_axes=(0, None))).tuple_dtypes == {
        0: np.float32,
        1: np.float32,
        "x": np.float32,
        "w": np.float32,
    }
    assert predictor_of(ax.vmap(last_sum)).tuple_dtypes == {}  # Shaped: any dtype, so float32


def scaled_tree(tree: PyTree[Float[Array, " n"]]) -> PyTree[Float[Array, " n"]]:
    return jax.tree_util.tree_map(lambda v: v * 2, tree)  # type: ignore[no-any-return]


def with_tree(x: Float[Array, " n"]) -> tuple[Float[Array, " n"], PyTree[Float[Array, " n"]]]:
    return x, {"a": x, "b": x}


def test_a_pytree_return_annotation_leaves_the_outputs_structure_to_the_trace() -> None:
    """`PyTree[Float[Array, "n"]]` says the dims of every leaf of a structure it does not
    say: for an argument the argument says it, for the output the trace does (the output
    was taken for one array, and a call returning a dict refused)."""

    def unresolvable(tree: Any) -> Any:
        return jax.tree_util.tree_map(lambda v: v * 2, tree)

    unresolvable.__annotations__ = {
        "tree": 'jt.PyTree[jt.Float[jt.Array, "n"]]',
        "return": 'jt.PyTree[jt.Float[jt.Array, "n"]]',
    }
    batch = {"a": jnp.ones((3, 4)), "b": jnp.ones((3, 4))}
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (scaled_tree, (batch,)),
        (unresolvable, (batch,)),
        (with_tree, (jnp.ones((3, 4)),)),
    ]
    for fn, args in cases:
        want = jax.tree_util.tree_map(lambda v: v.shape, jax.vmap(fn)(*args))
        assert jax.tree_util.tree_map(lambda v: v.shape, ax.vmap(fn)(*args)) == want
        assert ax.vmap(fn).predict(*args).shapes == want
    with pytest.raises(ax.ArgumentError, match="'n'"):
        ax.vmap(scaled_tree)({"a": jnp.ones((3, 4)), "b": jnp.ones((3, 5))})  # the argument's dims still count
