"""Oracle helpers for the differential tests: real JAX decides, axischeck must agree.

Nothing here models vmap. Every expected outcome comes from running JAX itself:
`jax.eval_shape` of the plain `jax.vmap` (shapes or an exception), or a real eager run
for the checked-call tests. The last section holds the few other helpers that several
test files share.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np

import axischeck as ax

F32 = np.float32


# --------------------------------------------------------------------------- arguments


def sds(shape: tuple[int, ...]) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(shape), F32)


def concrete(shape: tuple[int, ...], seed: int = 0) -> jax.Array:
    """A small deterministic float32 array (distinct values, so transposes show)."""
    n = int(np.prod(shape, dtype=np.int64))
    values = (np.arange(n, dtype=np.float32) * 0.25 + seed) % 7.0 - 3.0
    return jax.numpy.asarray(values.reshape(shape))


def counting(fn: Any) -> tuple[Any, list[int]]:
    """`fn` and a one-item list counting its runs: how often a transform traces it, to
    compare with JAX's own count."""
    runs = [0]

    def counted(*args: Any) -> Any:
        runs[0] += 1
        return fn(*args)

    return counted, runs


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", the result) or ("err", the exception) of `call()`, to compare two runs."""
    try:
        return "ok", call()
    except Exception as err:  # any failure is compared by type
        return "err", err


def same_outcome(ours: tuple[str, Any], theirs: tuple[str, Any]) -> None:
    """Both ran to equal values, or both raised, axischeck's a subclass of JAX's type."""
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        jax.tree.map(np.testing.assert_array_equal, ours[1], theirs[1])
    else:
        assert isinstance(ours[1], type(theirs[1])), (ours[1], theirs[1])


def is_shape_leaf(x: Any) -> bool:
    return isinstance(x, ShapeLeaf)


@dataclass(frozen=True)
class ShapeLeaf:
    """An array argument leaf, by its (batched) shape, in a test's argument pytree."""

    shape: tuple[int, ...]


def materialize(tree: Any, how: str, seed: int = 0) -> Any:
    """Turn `ShapeLeaf`s into `ShapeDtypeStruct`s ("sds"), arrays ("array") or plain
    shape tuples ("tuple", only meaningful for a top-level argument)."""
    counter = [seed]

    def one(leaf: Any) -> Any:
        if not isinstance(leaf, ShapeLeaf):
            return leaf
        if how == "sds":
            return sds(leaf.shape)
        if how == "tuple":
            return tuple(leaf.shape)
        counter[0] += 1
        return concrete(leaf.shape, counter[0])

    return jax.tree_util.tree_map(one, tree, is_leaf=is_shape_leaf)


# ---------------------------------------------------------------------------- outcomes


@dataclass
class Ok:
    treedef: Any
    shapes: list[tuple[int, ...]]

    def __str__(self) -> str:
        return f"shapes {jax.tree_util.tree_unflatten(self.treedef, [_T(s) for s in self.shapes])}"


@dataclass
class Raised:
    exc: BaseException

    def __str__(self) -> str:
        return f"{type(self.exc).__name__}: {self.exc}"


class _T:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def __repr__(self) -> str:
        return str(self.shape)


def jax_construct(make: Callable[[], Any]) -> Any | Raised:
    """Build the plain-JAX transform, or the exception its construction raises."""
    try:
        return make()
    except Exception as err:
        return Raised(err)


def as_lowered(expected: Ok | Raised, negative_axis: bool) -> Ok | Raised:
    """`jax.eval_shape`'s answer as a real run gives it: JAX before 0.11 traces a negative
    psum_scatter / all_to_all axis but cannot lower it (`_jax_compat`), and axischeck
    answers as the run does."""
    from axischeck._core._jax_compat import NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING

    if negative_axis and NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING and isinstance(expected, Ok):
        return Raised(ValueError("JAX cannot lower a negative collective axis"))
    return expected


def jax_eval_shape(jfn: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Ok | Raised:
    """What `jax.eval_shape` says about the plain-JAX transform."""
    if isinstance(jfn, Raised):
        return jfn
    try:
        out = jax.eval_shape(jfn, *args, **(kwargs or {}))
    except Exception as err:
        return Raised(err)
    leaves, treedef = jax.tree_util.tree_flatten(out)
    return Ok(treedef, [tuple(int(d) for d in leaf.shape) for leaf in leaves])


def _describe_predict(pred: Any) -> str:
    try:
        return repr(pred.shapes)
    except Exception:  # pragma: no cover
        return "<prediction>"


def predict_under_jit(predict: Callable[..., Any]) -> Callable[..., Any]:
    """`predict` called on tracers: inside a `jax.jit` trace of the given arguments."""

    def run(*args: Any, **kwargs: Any) -> Any:
        box: dict[str, Any] = {}

        def traced(*a: Any, **k: Any) -> int:
            box["pred"] = predict(*a, **k)
            return 0

        jax.jit(traced).trace(*args, **kwargs)
        return box["pred"]

    return run


def assert_predict_agrees(
    predict: Callable[..., Any],
    expected: Ok | Raised,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    context: str = "",
) -> None:
    """`predict(*args, **kwargs)` must raise `AxisCheckError` iff JAX raised, and
    otherwise return exactly JAX's output shapes (pytree structure included)."""
    kwargs = kwargs or {}
    try:
        pred = predict(*args, **kwargs)
    except ax.AxisCheckError as err:
        if isinstance(expected, Raised):
            return
        raise AssertionError(
            f"axischeck raised but JAX succeeds with {expected}\n  axischeck: {type(err).__name__}: {err}\n{context}"
        ) from err
    if isinstance(expected, Raised):
        raise AssertionError(
            f"JAX raised but axischeck predicted {_describe_predict(pred)}\n  JAX: {expected}\n{context}"
        )
    leaves, treedef = jax.tree_util.tree_flatten(pred.shapes)
    assert all(isinstance(leaf, ax.Shape) for leaf in leaves), (
        f"prediction leaves must be ax.Shape, got {pred.shapes!r}\n{context}"
    )
    got = [tuple(leaf) for leaf in leaves]
    assert treedef == expected.treedef and got == expected.shapes, (
        f"axischeck predicted {pred.shapes!r} (structure {treedef}) but JAX gives {expected}"
        f" (structure {expected.treedef})\n{context}"
    )


def assert_construct_agrees(make_ax: Callable[[], Any], jfn: Any, context: str = "") -> Any | None:
    """If the JAX construction raised, the axischeck one must raise `AxisCheckError`.

    Returns the axischeck transform (None when both raised)."""
    try:
        afn = make_ax()
    except ax.AxisCheckError as err:
        if isinstance(jfn, Raised):
            return None
        raise AssertionError(
            f"axischeck construction raised but jax.vmap construction succeeds\n"
            f"  axischeck: {type(err).__name__}: {err}\n{context}"
        ) from err
    if isinstance(jfn, Raised):
        raise AssertionError(f"jax.vmap construction raised but axischeck's did not\n  JAX: {jfn}\n{context}")
    return afn


# ------------------------------------------------------------------------ real calls


class Tracked:
    """Wraps a user function and records whether an exception left *it* (as opposed to
    the vmap machinery around it), so a call test knows which exception types are fair."""

    def __init__(self) -> None:
        self.raised = False

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                self.raised = True
                raise

        return wrapper


def assert_call_agrees(
    afn: Callable[..., Any],
    jfn: Callable[..., Any],
    tracker: Tracked,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    context: str = "",
) -> None:
    """The checked call returns what `jax.vmap` returns (structure, types, dtypes, values)
    and raises where it raises: `AxisCheckError`, or JAX's own exception type (a drop-in
    lets JAX's errors through where it has nothing to add)."""
    kwargs = kwargs or {}
    tracker.raised = False
    try:
        want = jfn(*args, **kwargs)
    except Exception as jerr:
        inside = tracker.raised
        try:
            got = afn(*args, **kwargs)
        except ax.AxisCheckError:
            return
        except Exception as aerr:
            if isinstance(aerr, type(jerr)):
                return
            raise AssertionError(
                f"JAX raised {type(jerr).__name__}: {jerr}\n(from inside the user function: {inside});"
                f" axischeck's call raised {type(aerr).__name__}: {aerr}\n{context}"
            ) from aerr
        raise AssertionError(
            f"JAX raised {type(jerr).__name__}: {jerr}\nbut axischeck's call returned {got!r}\n{context}"
        ) from None
    try:
        got = afn(*args, **kwargs)
    except Exception as aerr:
        raise AssertionError(
            f"jax.vmap returned {jax.tree_util.tree_map(np.shape, want)} but axischeck's call raised"
            f" {type(aerr).__name__}: {aerr}\n{context}"
        ) from aerr
    want_leaves, want_def = jax.tree_util.tree_flatten(want)
    got_leaves, got_def = jax.tree_util.tree_flatten(got)
    assert got_def == want_def, f"output structure {got_def} != JAX's {want_def}\n{context}"
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert type(g) is type(w), f"output leaf type {type(g)} != JAX's {type(w)}\n{context}"
        assert np.shape(g) == np.shape(w), f"output shape {np.shape(g)} != JAX's {np.shape(w)}\n{context}"
        gd, wd = np.asarray(g).dtype, np.asarray(w).dtype
        assert gd == wd, f"dtype {gd} != JAX's {wd}\n{context}"
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=context)


# ------------------------------------------------------- shared by several test files

PACKAGE_DIR = Path(ax.__file__).resolve().parent


def const(*args: Any, **kwargs: Any) -> float:
    """A function that cannot raise, whatever it is given."""
    return 0.0


def axischeck_frames(frames: traceback.StackSummary) -> list[traceback.FrameSummary]:
    """The frames of a traceback that lie in axischeck's own files."""
    return [f for f in frames if Path(f.filename).resolve().is_relative_to(PACKAGE_DIR)]
