"""Differential property tests: `axischeck.vmap` against real `jax.vmap`.

The oracle is always JAX itself (see `jax_oracle.py`): `jax.eval_shape` of the plain
`jax.vmap` for predictions, and a real eager run for checked calls. The property:

* if JAX succeeds, `ax.vmap(...).predict(...).shapes` equals JAX's output shapes
  (pytree structure included, leaves are `ax.Shape`);
* if JAX raises (any exception type), `predict` raises `ax.AxisCheckError`;
* a checked call returns what `jax.vmap` returns and raises where it raises;
* where `jax.vmap(...)` construction raises, `ax.vmap(...)` construction raises
  `ax.AxisCheckError`.

Functions under a declared signature are built so that they are exactly as strict as
the signature (einsum of every input, with constant operands pinning fixed sizes;
deliberately broken sizes avoid 1 there, since einsum/broadcasting accept size-1
labels). Without a signature (the inferred path) the function itself is the spec, so
broken sizes are unrestricted.

Run with `HYPOTHESIS_PROFILE=ci` (60 derandomized examples; tests that really execute
JAX use a third of the profile's count) or `dev` (400, random).
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from jax import lax

import axischeck as ax
from jax_oracle import (
    Raised,
    ShapeLeaf,
    Tracked,
    assert_call_agrees,
    assert_construct_agrees,
    assert_predict_agrees,
    concrete,
    jax_construct,
    jax_eval_shape,
    materialize,
    predict_under_jit,
    sds,
)

# Fewer examples for tests that really run JAX (eager vmap calls cost ~1 ms each).
_FEW = max(10, (settings.default.max_examples or 100) // 3)

POOL = "abcd"  # dimension symbols
FIXED_LETTERS = "pqrs"  # einsum letters for fixed-size (integer) signature dims
SIZES = st.integers(0, 5)


# `canon` / `insert` only *build* argument shapes from per-example ones (test input
# generation); expected outputs always come from JAX.
def canon(axis: int, n: int) -> int:
    return axis + n if axis < 0 else axis


def insert(shape: tuple[int, ...], axis: int | None, size: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(shape)
    c = canon(axis, len(shape) + 1)
    return tuple(shape[:c]) + (size,) + tuple(shape[c:])


def outcome_event(expected: Any) -> None:
    """Label the example for `--hypothesis-show-statistics` (how often JAX raised)."""
    event("JAX ok" if not isinstance(expected, Raised) else f"JAX raised {type(expected.exc).__name__}")


# ============================================================== gufunc-style problems


@dataclass(frozen=True)
class Tok:
    """One dimension of a signature: a symbol, or a fixed size (with its einsum letter)."""

    letter: str
    fixed: int | None = None

    def text(self) -> str:
        return str(self.fixed) if self.fixed is not None else self.letter


@dataclass
class Gufunc:
    """A per-example signature and a jnp function that honours it exactly."""

    ins: list[list[Tok]]
    outs: list[list[Tok]]
    multi: bool  # a tuple of outputs (else a single array)
    sizes: dict[str, int]

    # ---- the signature in its several accepted forms
    def gufunc_text(self) -> str:
        ins = ",".join("(" + ",".join(t.text() for t in dims) + ")" for dims in self.ins)
        outs = ",".join("(" + ",".join(t.text() for t in dims) + ")" for dims in self.outs)
        return f"{ins}->{outs}"

    def space_text(self) -> str | None:
        if any(not dims for dims in self.outs) or (len(self.ins) == 1 and not self.ins[0]):
            return None  # the space form cannot say these
        ins = ", ".join(" ".join(t.text() for t in dims) for dims in self.ins)
        outs = ", ".join(" ".join(t.text() for t in dims) for dims in self.outs)
        return f"{ins} -> {outs}"

    def dict_form(self) -> dict[str, Any]:
        d: dict[str, Any] = {f"x{i}": " ".join(t.text() for t in dims) for i, dims in enumerate(self.ins)}
        outs = [" ".join(t.text() for t in dims) for dims in self.outs]
        d["return"] = tuple(outs) if self.multi else outs[0]
        return d

    def one_tuple(self) -> bool:
        """A 1-tuple output: only the dict form (`"return": ("a",)`) can declare it."""
        return self.multi and len(self.outs) == 1

    def canonical(self) -> Any:
        """The gufunc string, or the dict form where a string cannot say it."""
        return self.dict_form() if self.one_tuple() else self.gufunc_text()

    def forms(self) -> list[tuple[str, Any]]:
        """(name, signature= value); "annotations" means `Annotated` hints on `fn` instead."""
        out: list[tuple[str, Any]] = [
            ("dict", self.dict_form()),
            ("Signature", ax.Signature(self.canonical())),
            ("annotations", None),
        ]
        if not self.one_tuple():
            out.append(("gufunc", self.gufunc_text()))
            space = self.space_text()
            if space is not None:
                out.append(("space", space))
        return out

    # ---- shapes
    def dim(self, t: Tok) -> int:
        return t.fixed if t.fixed is not None else self.sizes[t.letter]

    def in_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(self.dim(t) for t in dims) for dims in self.ins]

    def out_ranks(self) -> list[int]:
        return [len(d) for d in self.outs]

    # ---- the function
    def einsum_specs(self) -> tuple[list[str], list[int]]:
        consts = [(t.letter, t.fixed) for dims in self.ins for t in dims if t.fixed is not None]
        lhs = ",".join("".join(t.letter for t in dims) for dims in self.ins)
        lhs += "".join("," + letter for letter, _ in consts)
        return [f"{lhs}->{''.join(t.letter for t in dims)}" for dims in self.outs], [v for _, v in consts]

    def fn(self, annotate: bool = False) -> Any:
        """The function; with `annotate`, its parameters and return carry
        `Annotated[jax.Array, "a b"]` hints (a `tuple[...]` of them for several outputs)."""
        specs, consts = self.einsum_specs()
        multi = self.multi
        fn = self._fn(specs, consts, multi)
        if annotate:
            hints: dict[str, Any] = {
                f"x{i}": Annotated[jax.Array, " ".join(t.text() for t in dims)] for i, dims in enumerate(self.ins)
            }
            outs = [Annotated[jax.Array, " ".join(t.text() for t in dims)] for dims in self.outs]
            hints["return"] = tuple.__class_getitem__(tuple(outs)) if multi else outs[0]
            fn.__annotations__ = hints
        return fn

    def _fn(self, specs: list[str], consts: list[int], multi: bool) -> Any:

        def body(*xs: Any) -> Any:
            cs = [jnp.ones((v,), jnp.float32) for v in consts]
            outs = tuple(jnp.einsum(spec, *xs, *cs) for spec in specs)
            return outs if multi else outs[0]

        n = len(self.ins)
        if n == 1:
            return lambda x0: body(x0)
        if n == 2:
            return lambda x0, x1: body(x0, x1)
        return lambda x0, x1, x2: body(x0, x1, x2)

    def __repr__(self) -> str:
        specs, consts = self.einsum_specs()
        return f"Gufunc({self.canonical()!r}, sizes={self.sizes}, einsum={specs}, consts={consts})"


@st.composite
def gufuncs(draw: Any, max_rank: int = 3) -> Gufunc:
    n_in = draw(st.integers(1, 3))
    sizes = {s: draw(SIZES) for s in POOL}
    fixed_letters = iter(FIXED_LETTERS)
    ins: list[list[Tok]] = []
    for _ in range(n_in):
        syms = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=max_rank))
        dims = []
        for s in syms:
            letter = next(fixed_letters, None) if draw(st.integers(0, 7)) == 0 else None
            dims.append(Tok(letter, draw(st.sampled_from([2, 3]))) if letter else Tok(s))
        ins.append(dims)
    available = list(dict.fromkeys(t for dims in ins for t in dims))
    n_out = draw(st.integers(1, 2))
    multi = n_out > 1 or draw(st.integers(0, 5)) == 0  # sometimes a 1-tuple of outputs
    outs = []
    for _ in range(n_out):
        if available:
            outs.append(draw(st.lists(st.sampled_from(available), unique=True, max_size=min(max_rank, len(available)))))
        else:
            outs.append([])
    return Gufunc(ins, outs, multi, sizes)


def axis_or_none(lo: int, hi: int) -> Any:
    """An int axis in [lo, hi], or None about a quarter of the time (hypothesis favours
    the first choices, so None is not the simplest value here)."""
    return st.integers(0, 3).flatmap(lambda k: st.none() if k == 3 else st.integers(lo, hi))


def draw_in_axes(draw: Any, ranks: list[int]) -> tuple[Any, list[int | None]]:
    """An in_axes value (single int/None, tuple or top-level list) valid for `ranks`."""
    kind = draw(st.sampled_from(["tuple", "tuple", "list", "single"]))
    if kind == "single":
        lo = min(ranks) if ranks else 0
        a = draw(axis_or_none(-(lo + 1), lo))
        return a, [a] * len(ranks)
    axes = [draw(axis_or_none(-(r + 1), r)) for r in ranks]
    return (tuple(axes) if kind == "tuple" else list(axes)), axes


def draw_out_axes(draw: Any, out_ranks: list[int], multi: bool) -> tuple[Any, list[int | None]]:
    """An out_axes value (single or per-output tuple) valid for the per-example out ranks."""
    if multi and draw(st.booleans()):
        axes = [draw(axis_or_none(-(r + 1), r)) for r in out_ranks]
        return tuple(axes), axes
    lo = min(out_ranks)
    a = draw(axis_or_none(-(lo + 1), lo))
    return a, [a] * len(out_ranks)


BREAKS = ["none"] * 5 + [
    "batch",
    "dim",
    "dim",
    "rank",
    "in_range",
    "in_len",
    "axis_size",
    "out_range",
    "out_list",
    "all_none",
]


@dataclass
class Case:
    """One vmap level over a gufunc: the options, the batched argument shapes, the break.

    The last `n_kw` inputs are passed by keyword (JAX maps keyword arguments over axis 0
    whatever `in_axes` says; `in_axes` counts positional arguments only). Inputs listed
    in `py_scalars` (unmapped, per-example `()`) are passed as the Python float 1.5.
    """

    g: Gufunc
    in_axes: Any
    out_axes: Any
    axis_size: int | None
    sum_match: bool
    spmd_axis_name: str | None
    shapes: list[tuple[int, ...]]
    n_kw: int
    py_scalars: frozenset[int]
    brk: str
    axes: list[int | None] = field(default_factory=list)  # per input, as generated (before breaks)

    def jax_vmap(self, fn: Any) -> Any:
        return jax.vmap(
            fn,
            in_axes=self.in_axes,
            out_axes=self.out_axes,
            axis_size=self.axis_size,
            spmd_axis_name=self.spmd_axis_name,
            sum_match=self.sum_match,
        )

    def ax_vmap(self, fn: Any, signature: Any = None) -> Any:
        return ax.vmap(
            fn,
            in_axes=self.in_axes,
            out_axes=self.out_axes,
            axis_size=self.axis_size,
            spmd_axis_name=self.spmd_axis_name,
            sum_match=self.sum_match,
            signature=signature,
        )

    def split(self, leaves: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(positional args, keyword args) from one value per input."""
        leaves = [1.5 if i in self.py_scalars else v for i, v in enumerate(leaves)]
        p = len(leaves) - self.n_kw
        return tuple(leaves[:p]), {f"x{i}": leaves[i] for i in range(p, len(leaves))}

    def structs(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.split([sds(s) for s in self.shapes])

    def arrays(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.split([concrete(s, i) for i, s in enumerate(self.shapes)])


def break_dim(draw: Any, shape: tuple[int, ...], pos: int, strict: bool) -> tuple[int, ...] | None:
    """`shape` with dim `pos` changed. Strict (signature) mode never involves size 1,
    which einsum/broadcasting would silently accept."""
    old = shape[pos]
    if strict and old == 1:
        return None
    choices = [v for v in range(6) if v != old and not (strict and v == 1)]
    new = draw(st.sampled_from(choices))
    return shape[:pos] + (new,) + shape[pos + 1 :]


@st.composite
def gufunc_cases(draw: Any, strict: bool) -> Case:
    g = draw(gufuncs())
    n = len(g.ins)
    n_kw = draw(st.sampled_from([0, 0, 0, 1, 2]))
    n_kw = min(n_kw, n - 1)
    n_pos = n - n_kw
    ranks = [len(d) for d in g.ins]
    B = draw(SIZES)
    in_axes, pos_axes = draw_in_axes(draw, ranks[:n_pos])
    axes: list[int | None] = list(pos_axes) + [0] * n_kw
    out_axes, _ = draw_out_axes(draw, g.out_ranks(), g.multi)
    axis_size = draw(st.sampled_from([None, None, B]))
    if all(a is None for a in axes) and axis_size is None:
        axis_size = B
    if axis_size is not None and draw(st.integers(0, 4)) == 0:
        axis_size = np.int64(axis_size)  # JAX accepts any integer-like axis_size
    sum_match = draw(st.integers(0, 3)) == 0
    spmd_axis_name = draw(st.sampled_from([None, None, None, "data"]))
    shapes = [insert(s, a, B) for s, a in zip(g.in_shapes(), axes, strict=True)]
    brk = draw(st.sampled_from(BREAKS))
    if brk == "batch":
        mapped = [i for i, a in enumerate(axes) if a is not None]
        if mapped:
            i = draw(st.sampled_from(mapped))
            c = canon(axes[i], len(shapes[i]))  # type: ignore[arg-type]
            new = draw(st.sampled_from([v for v in range(6) if v != B]))
            shapes[i] = shapes[i][:c] + (new,) + shapes[i][c + 1 :]
    elif brk == "dim":
        cand = [i for i in range(n) if ranks[i] > 0]
        if cand:
            i = draw(st.sampled_from(cand))
            j = draw(st.integers(0, ranks[i] - 1))
            a = axes[i]
            pos = j if a is None or j < canon(a, ranks[i] + 1) else j + 1
            shapes[i] = break_dim(draw, shapes[i], pos, strict) or shapes[i]
    elif brk == "rank":
        i = draw(st.integers(0, n - 1))
        sh = shapes[i]
        if sh and draw(st.booleans()):
            p = draw(st.integers(0, len(sh) - 1))
            shapes[i] = sh[:p] + sh[p + 1 :]
        else:
            p = draw(st.integers(0, len(sh)))
            shapes[i] = sh[:p] + (draw(st.sampled_from([2, 3])),) + sh[p:]
    elif brk == "in_range":
        i = draw(st.integers(0, n_pos - 1))
        r = len(shapes[i])
        new_axes = list(pos_axes)
        new_axes[i] = draw(st.sampled_from([r, -(r + 1), r + 1]))
        in_axes = tuple(new_axes)
    elif brk == "in_len":
        t = tuple(pos_axes)
        in_axes = t + (None,) if (len(t) < 2 or draw(st.booleans())) else t[:-1]
    elif brk == "axis_size":
        axis_size = draw(st.sampled_from([v for v in range(6) if v != B]))
    elif brk == "out_range":
        r = max(g.out_ranks()) + 1
        out_axes = draw(st.sampled_from([r, -(r + 1)]))
    elif brk == "out_list":
        out_axes = list(out_axes) if isinstance(out_axes, tuple) else (out_axes,)
    elif brk == "all_none":
        in_axes, axis_size = None, None
    # unmapped scalar inputs may be Python floats (JAX passes them through untouched)
    scalar_ok = [
        i
        for i in range(n_pos)
        if shapes[i] == ()
        and (in_axes is None or (isinstance(in_axes, (tuple, list)) and i < len(in_axes) and in_axes[i] is None))
    ]
    py_scalars = frozenset(i for i in scalar_ok if draw(st.booleans()))
    return Case(g, in_axes, out_axes, axis_size, sum_match, spmd_axis_name, shapes, n_kw, py_scalars, brk, axes)


def draw_arg_forms(
    data: Any, case: Any, allow_arrays: bool = True, allow_tuples: bool = True
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The argument shapes as ShapeDtypeStructs, plain shape tuples, jax or numpy arrays."""
    out = []
    for i, s in enumerate(case.shapes):
        kinds = (
            ["sds", "sds"] + (["tuple"] if s and allow_tuples else []) + (["array", "numpy"] if allow_arrays else [])
        )
        kind = data.draw(st.sampled_from(kinds))
        leaf = materialize(ShapeLeaf(s), "array" if kind == "numpy" else kind, seed=i)
        out.append(np.asarray(leaf, dtype=np.float64) if kind == "numpy" else leaf)
    if isinstance(case, Case):
        return case.split(out)
    return tuple(out), {}


# --------------------------------------------------------------- 1. signature path


@given(case=gufunc_cases(strict=True), data=st.data())
def test_signature_path_predict_matches_jax(case: Case, data: Any) -> None:
    form_name, sig = data.draw(st.sampled_from(case.g.forms()))
    fn = case.g.fn(annotate=form_name == "annotations")
    jfn = jax_construct(lambda: case.jax_vmap(fn))
    expected = jax_eval_shape(jfn, *case.structs())
    outcome_event(expected)
    ctx = f"{case!r}\nsignature form {form_name}: {sig!r}"
    afn = assert_construct_agrees(lambda: case.ax_vmap(fn, signature=sig), jfn, ctx)
    if afn is None:
        return
    under_jit = data.draw(st.integers(0, 3)) == 0  # predict on tracers
    args, kwargs = draw_arg_forms(data, case, allow_tuples=not under_jit)
    predict = predict_under_jit(afn.predict) if under_jit else afn.predict
    assert_predict_agrees(predict, expected, args, kwargs, context=f"{ctx}\nunder_jit={under_jit}")

    # The signature algebra, one level: Signature(...).vmap(...).predict.
    # (a standalone gufunc-string Signature knows no parameter names: kwargs need the dict form)
    if (
        not case.sum_match
        and case.spmd_axis_name is None
        and form_name != "annotations"
        and (case.n_kw == 0 or form_name == "dict")
    ):
        text = sig if form_name in ("space", "dict") else case.g.canonical()
        try:
            lifted = ax.Signature(text).vmap(case.in_axes, case.out_axes, axis_size=case.axis_size)
        except ax.AxisCheckError as err:
            assert isinstance(expected, Raised), f"Signature.vmap raised {err} but JAX gives {expected}\n{ctx}"
            return
        assert_predict_agrees(lifted.predict, expected, args, kwargs, context=ctx + "\n(Signature.vmap)")


@given(strict=st.booleans(), data=st.data())
def test_reused_transform_matches_jax_on_many_shapes(strict: bool, data: Any) -> None:
    """One transform object, several argument shapes in a row (predictions are cached)."""
    case = data.draw(gufunc_cases(strict=strict))
    form_name, sig = data.draw(st.sampled_from(case.g.forms())) if strict else ("none", None)
    fn = case.g.fn(annotate=form_name == "annotations")
    jfn = jax_construct(lambda: case.jax_vmap(fn))
    afn = assert_construct_agrees(lambda: case.ax_vmap(fn, signature=sig), jfn, repr(case))
    if afn is None or case.brk not in ("none", "batch", "dim", "axis_size", "out_range", "sum_match"):
        return
    for _ in range(3):
        sizes = {k: data.draw(SIZES) for k in POOL}
        B = int(case.axis_size) if case.axis_size is not None and data.draw(st.integers(0, 3)) > 0 else data.draw(SIZES)
        g = dataclasses.replace(case.g, sizes=sizes)
        shapes = [insert(sh, a, B) for sh, a in zip(g.in_shapes(), case.axes, strict=True)]
        if data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(shapes) - 1))
            if shapes[i]:
                pos = data.draw(st.integers(0, len(shapes[i]) - 1))
                shapes[i] = break_dim(data.draw, shapes[i], pos, strict) or shapes[i]
        now = dataclasses.replace(case, g=g, shapes=shapes)
        expected = jax_eval_shape(jfn, *now.structs())
        outcome_event(expected)
        args, kwargs = draw_arg_forms(data, now)
        assert_predict_agrees(afn.predict, expected, args, kwargs, context=f"{now!r}\nsignature {form_name}: {sig!r}")


# ---------------------------------------------------------------- 2. inferred path


@given(case=gufunc_cases(strict=False), data=st.data())
def test_inferred_path_predict_matches_jax(case: Case, data: Any) -> None:
    fn = case.g.fn()
    jfn = jax_construct(lambda: case.jax_vmap(fn))
    expected = jax_eval_shape(jfn, *case.structs())
    outcome_event(expected)
    afn = assert_construct_agrees(lambda: case.ax_vmap(fn), jfn, repr(case))
    if afn is None:
        return
    under_jit = data.draw(st.integers(0, 3)) == 0  # predict on tracers
    args, kwargs = draw_arg_forms(data, case, allow_tuples=not under_jit)
    predict = predict_under_jit(afn.predict) if under_jit else afn.predict
    assert_predict_agrees(predict, expected, args, kwargs, context=f"{case!r}\nunder_jit={under_jit}")


@settings(max_examples=_FEW)
@given(use_signature=st.booleans(), use_jit=st.booleans(), data=st.data())
def test_checked_call_matches_jax(use_signature: bool, use_jit: bool, data: Any) -> None:
    case = data.draw(gufunc_cases(strict=use_signature))
    tracker = Tracked()
    fn = tracker.wrap(case.g.fn())
    sig = case.g.canonical() if use_signature else None
    jfn = jax_construct(lambda: case.jax_vmap(fn))
    afn = assert_construct_agrees(lambda: case.ax_vmap(fn, signature=sig), jfn, repr(case))
    if afn is None:
        return
    if use_jit:  # under jit the checks run at trace time, on tracers
        afn, jfn = jax.jit(afn), jax.jit(jfn)
    args, kwargs = case.arrays()
    assert_call_agrees(afn, jfn, tracker, args, kwargs, context=f"{case!r}\nsignature={sig!r} jit={use_jit}")


# ============================================================ 3. pytree arguments

NT = namedtuple("NT", ["p", "q"])


@dataclass
class TreeState:
    """Generation state for one pytree-argument case."""

    B: int
    brk: str
    broken: bool = False
    note: list[str] = field(default_factory=list)


def _take_break(draw: Any, state: TreeState, kind: str) -> bool:
    if state.brk == kind and not state.broken and draw(st.booleans()):
        state.broken = True
        return True
    return False


@st.composite
def pe_trees(draw: Any, depth: int, empty_tuples: bool = True, scalars: bool = True) -> Any:
    """A per-example argument pytree: ShapeLeaf / float / None / dict / tuple / list / NT.

    `empty_tuples=False` avoids `()` containers: `predict` reads a plain tuple of ints
    (vacuously, the empty one too) as a shape, so `()` is ambiguous there."""
    kinds = (
        ["leaf", "leaf", "leaf"]
        + (["scalar", "none"] if scalars else [])
        + (["dict", "tuple", "list", "nt"] if depth > 0 else [])
    )
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return ShapeLeaf(tuple(draw(st.lists(st.integers(0, 4), max_size=2))))
    if kind == "scalar":
        return 1.5
    if kind == "none":
        return None
    child = pe_trees(depth - 1, empty_tuples, scalars)
    if kind == "dict":
        keys = draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=2, unique=True))
        return {k: draw(child) for k in keys}
    if kind == "nt":
        return NT(draw(child), draw(child))
    items = draw(st.lists(child, min_size=0 if empty_tuples or kind == "list" else 1, max_size=2))
    return tuple(items) if kind == "tuple" else items


def is_shape(x: Any) -> bool:
    return isinstance(x, ShapeLeaf)


def _array_ranks(tree: Any) -> tuple[list[int], bool]:
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, ShapeLeaf))
    return [len(x.shape) for x in leaves if isinstance(x, ShapeLeaf)], any(isinstance(x, float) for x in leaves)


def _batch_subtree(tree: Any, axis: int | None, B: int) -> Any:
    return jax.tree_util.tree_map(
        lambda x: ShapeLeaf(insert(x.shape, axis, B)) if isinstance(x, ShapeLeaf) else x,
        tree,
        is_leaf=lambda x: isinstance(x, ShapeLeaf),
    )


def draw_spec_and_batch(draw: Any, tree: Any, state: TreeState) -> tuple[Any, Any]:
    """An in_axes prefix for the per-example `tree`, and the batched tree it implies."""
    is_container = isinstance(tree, (dict, list, tuple)) and not isinstance(tree, ShapeLeaf)
    if is_container and draw(st.booleans()):
        if isinstance(tree, dict):
            keys = sorted(tree)
            specs, batched = {}, {}
            for k in keys:
                specs[k], batched[k] = draw_spec_and_batch(draw, tree[k], state)
            if _take_break(draw, state, "container"):
                if len(specs) > 1 and draw(st.booleans()):
                    del specs[keys[0]]
                    state.note.append("dict spec missing a key")
                else:
                    specs["zz"] = 0
                    state.note.append("dict spec with an extra key")
            # shuffle key order: dict key order never matters to JAX
            items = list(specs.items())
            return dict(draw(st.permutations(items))), batched
        pairs = [draw_spec_and_batch(draw, c, state) for c in tree]
        specs_l = [p[0] for p in pairs]
        batched_l = [p[1] for p in pairs]
        if isinstance(tree, NT):
            spec: Any = NT(*specs_l)
            if _take_break(draw, state, "container"):
                spec = tuple(specs_l)
                state.note.append("tuple spec for a namedtuple")
            return spec, NT(*batched_l)
        if isinstance(tree, list):
            spec = list(specs_l)
            if _take_break(draw, state, "container"):
                spec = tuple(specs_l)
                state.note.append("tuple spec for a list")
            return spec, list(batched_l)
        spec = tuple(specs_l)
        if _take_break(draw, state, "container"):
            spec = list(specs_l) if draw(st.booleans()) else tuple(specs_l) + (0,)
            state.note.append("list spec / longer tuple for a tuple")
        return spec, tuple(batched_l)
    # a leaf spec covering the whole subtree
    ranks, has_scalar = _array_ranks(tree)
    if (tree is None or isinstance(tree, ShapeLeaf)) and _take_break(draw, state, "deeper"):
        state.note.append("spec deeper than the argument")
        return (0,), tree
    if has_scalar and not _take_break(draw, state, "scalar_int"):
        return None, tree
    lo = min(ranks) if ranks else 0
    axis = draw(axis_or_none(-(lo + 1), lo))
    if has_scalar and axis is None:
        axis = 0
    return axis, _batch_subtree(tree, axis, state.B)


def _tree_fn(n_args: int, varargs: bool = False) -> Any:
    def body(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        total = jnp.float32(0)
        for leaf in jax.tree_util.tree_leaves((args, kwargs)):
            total = total + jnp.sum(leaf)
        return {
            "args": jax.tree_util.tree_map(lambda v: v * 2, args),
            "total": total,
            "kw": jax.tree_util.tree_map(lambda v: -v, kwargs),
        }

    if varargs:
        return lambda *a, **kw: body(a, kw)
    if n_args == 1:
        return lambda a0, **kw: body((a0,), kw)
    if n_args == 2:
        return lambda a0, a1, **kw: body((a0, a1), kw)
    return lambda a0, a1, a2, **kw: body((a0, a1, a2), kw)


@dataclass
class TreeCase:
    args: tuple[Any, ...]  # batched, ShapeLeaf leaves
    kwargs: dict[str, Any]
    in_axes: Any
    out_axes: Any
    axis_size: int | None
    notes: list[str]
    varargs: bool = False  # the function takes `*args` (no parameter names)


@st.composite
def tree_cases(draw: Any, empty_tuples: bool) -> TreeCase:
    n_args = draw(st.integers(1, 3))
    B = draw(SIZES)
    state = TreeState(B, draw(st.sampled_from(["none", "none", "container", "deeper", "scalar_int", "batch"])))
    pe_args = [draw(pe_trees(2, empty_tuples)) for _ in range(n_args)]
    specs, batched = [], []
    for t in pe_args:
        s, b = draw_spec_and_batch(draw, t, state)
        specs.append(s)
        batched.append(b)
    kind = draw(st.sampled_from(["tuple", "tuple", "list", "single"]))
    if kind == "single":
        # one int/None for everything: rebatch from the per-example trees
        ranks = [r for t in pe_args for r in _array_ranks(t)[0]]
        scalars = any(_array_ranks(t)[1] for t in pe_args)
        lo = min(ranks) if ranks else 0
        in_axes: Any = None if scalars else draw(axis_or_none(-(lo + 1), lo))
        batched = [_batch_subtree(t, in_axes, B) for t in pe_args]
    else:
        in_axes = tuple(specs) if kind == "tuple" else list(specs)
    kwargs: dict[str, Any] = {}
    for k in draw(st.lists(st.sampled_from(["k0", "k1"]), unique=True, max_size=2)):
        # kwargs are always mapped over axis 0, whatever in_axes says
        # (a Python-scalar kwarg is always a rank error; one in 8 is enough)
        kwargs[k] = _batch_subtree(draw(pe_trees(1, empty_tuples, draw(st.integers(0, 7)) == 0)), 0, B)
    if state.brk == "batch":
        leaves, treedef = jax.tree_util.tree_flatten((batched, kwargs), is_leaf=lambda x: isinstance(x, ShapeLeaf))
        idx = [i for i, x in enumerate(leaves) if isinstance(x, ShapeLeaf) and x.shape]
        if idx:
            i = draw(st.sampled_from(idx))
            p = draw(st.integers(0, len(leaves[i].shape) - 1))
            s = leaves[i].shape
            leaves[i] = ShapeLeaf(s[:p] + (draw(SIZES),) + s[p + 1 :])
            state.note.append(f"leaf {i} dim {p} changed")
            batched, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
    n_mapped = sum(
        1
        for b, p in zip(
            jax.tree_util.tree_leaves((batched, kwargs), is_leaf=is_shape),
            jax.tree_util.tree_leaves((pe_args, kwargs), is_leaf=is_shape),
            strict=False,
        )
        if isinstance(b, ShapeLeaf) and b != p
    )
    axis_size = draw(st.sampled_from([None, B]) if n_mapped else st.sampled_from([B] * 7 + [None]))
    out_axes = draw(st.sampled_from([0, 0, -1]))
    return TreeCase(tuple(batched), kwargs, in_axes, out_axes, axis_size, state.note, draw(st.booleans()))


@given(case=tree_cases(empty_tuples=False), data=st.data())
def test_pytree_arguments_predict_matches_jax(case: TreeCase, data: Any) -> None:
    fn = _tree_fn(len(case.args), case.varargs)
    opts = dict(in_axes=case.in_axes, out_axes=case.out_axes, axis_size=case.axis_size)
    jfn = jax_construct(lambda: jax.vmap(fn, **opts))
    expected = jax_eval_shape(jfn, materialize(case.args, "sds"), materialize(case.kwargs, "sds"))
    outcome_event(expected)
    afn = assert_construct_agrees(lambda: ax.vmap(fn, **opts), jfn, repr(case))
    if afn is None:
        return
    how = data.draw(st.sampled_from(["sds", "sds", "array"]))
    assert_predict_agrees(
        afn.predict, expected, materialize(case.args, how), materialize(case.kwargs, how), context=repr(case)
    )


@settings(max_examples=_FEW)
@given(case=tree_cases(empty_tuples=True))
def test_pytree_arguments_checked_call_matches_jax(case: TreeCase) -> None:
    tracker = Tracked()
    fn = tracker.wrap(_tree_fn(len(case.args), case.varargs))
    opts = dict(in_axes=case.in_axes, out_axes=case.out_axes, axis_size=case.axis_size)
    jfn = jax_construct(lambda: jax.vmap(fn, **opts))
    afn = assert_construct_agrees(lambda: ax.vmap(fn, **opts), jfn, repr(case))
    if afn is None:
        return
    args, kwargs = materialize((case.args, case.kwargs), "array")
    assert_call_agrees(afn, jfn, tracker, args, kwargs, context=repr(case))


# Signature with pytree (dict) arguments: a dense layer, as in the seed's example 1.
def dense(params: dict[str, Any], x: Any) -> Any:
    return jnp.dot(params["W"], x) + params["b"]


DENSE_SIG = {"params": {"W": "o i", "b": "o"}, "x": "i", "return": "o"}


@given(data=st.data())
def test_pytree_signature_dense_layer_matches_jax(data: Any) -> None:
    o, i, B = data.draw(SIZES), data.draw(SIZES), data.draw(SIZES)
    pe = {"W": (o, i), "b": (o,), "x": (i,)}
    spec_p = data.draw(
        st.one_of(
            st.none(),
            st.integers(-3, 2),
            st.fixed_dictionaries(
                {"W": st.one_of(st.none(), st.integers(-3, 2)), "b": st.one_of(st.none(), st.integers(-2, 1))}
            ),
        )
    )
    spec_x = data.draw(st.one_of(st.none(), st.integers(-2, 1)))

    def axis_of(name: str) -> int | None:
        return spec_x if name == "x" else (spec_p if not isinstance(spec_p, dict) else spec_p[name])

    shapes = {}
    for name, s in pe.items():
        a = axis_of(name)
        shapes[name] = insert(s, a, B) if a is None or -(len(s) + 1) <= a <= len(s) else s + (B,)
    brk = data.draw(st.sampled_from(["none", "none", "b", "W", "x", "list"]))
    in_axes: Any = (spec_p, spec_x)
    if brk in pe:  # a per-example size, never involving 1 (broadcasting would accept it)
        shape = shapes[brk]
        shapes[brk] = break_dim(data.draw, shape, data.draw(st.integers(0, len(shape) - 1)), strict=True) or shape
    elif brk == "list":
        in_axes = [spec_p, spec_x]
    axis_size = None if any(axis_of(n) is not None for n in pe) else B
    params = {"W": ShapeLeaf(shapes["W"]), "b": ShapeLeaf(shapes["b"])}
    args = (params, ShapeLeaf(shapes["x"]))
    ctx = f"in_axes={in_axes!r} axis_size={axis_size} shapes={shapes}"
    jfn = jax_construct(lambda: jax.vmap(dense, in_axes=in_axes, axis_size=axis_size))
    expected = jax_eval_shape(jfn, materialize(args, "sds"))
    outcome_event(expected)
    for sig in (DENSE_SIG, None):
        afn = assert_construct_agrees(
            lambda sig=sig: ax.vmap(dense, in_axes=in_axes, axis_size=axis_size, signature=sig), jfn, ctx
        )
        assert afn is not None
        assert_predict_agrees(afn.predict, expected, materialize(args, "sds"), context=f"{ctx} signature={sig}")


# ============================================== 4. pytree outputs and out_axes


# Per-example output expressions of x (mapped or not) and y (never mapped), by name.
def _out_exprs(axis_name: str | None) -> dict[str, Any]:
    exprs: dict[str, Any] = {
        "x*2": lambda x, y: x * 2,
        "sum(x)": lambda x, y: jnp.sum(x),
        "x+sum(y)": lambda x, y: x + jnp.sum(y),
        "stop_gradient(x)": lambda x, y: lax.stop_gradient(x),
        "x*0": lambda x, y: x * 0,
        "zeros_like(x)": lambda x, y: jnp.zeros_like(x),
        "ones(x.shape)": lambda x, y: jnp.ones(x.shape),
        "full_like(x,3)": lambda x, y: jnp.full_like(x, 3),
        "const(2,)": lambda x, y: jnp.ones((2,)),
        "py 2.0": lambda x, y: 2.0,
        "y*3": lambda x, y: y * 3,
        "outer(y,x)": lambda x, y: jnp.multiply.outer(y, x),
        "x": lambda x, y: x,
        "y": lambda x, y: y,
        "x.ndim": lambda x, y: x.ndim,
        "astype(int)*0": lambda x, y: x.astype(jnp.int32) * 0,
        "where(x>0)": lambda x, y: jnp.where(x > 0, 1.0, 0.0),
        "cond(x) consts": lambda x, y: lax.cond(jnp.sum(x) > 0, lambda: jnp.ones(2), lambda: jnp.zeros(2)),
        "cond(y) consts": lambda x, y: lax.cond(jnp.sum(y) > 0, lambda: jnp.ones(2), lambda: jnp.zeros(2)),
        "random(closed key)": lambda x, y: jax.random.normal(jax.random.key(0), (3,)),
        "scan carry x": lambda x, y: lax.scan(lambda c, _: (c + jnp.sum(x), None), jnp.float32(0), None, length=2)[0],
        "scan carry y": lambda x, y: lax.scan(lambda c, _: (c + jnp.sum(y), None), jnp.float32(0), None, length=2)[0],
        "while(x)": lambda x, y: lax.while_loop(
            lambda c: c[0] < jnp.sum(x), lambda c: (c[0] + 1, c[1] * 2), (0.0, jnp.ones(2))
        )[1],
    }
    if axis_name is not None:
        exprs["psum(x)"] = lambda x, y: lax.psum(x, axis_name)
        exprs["pmean(x)"] = lambda x, y: lax.pmean(x, axis_name)
        exprs["all_gather(x)"] = lambda x, y: lax.all_gather(x, axis_name)
        exprs["axis_index"] = lambda x, y: lax.axis_index(axis_name)
    return exprs


@dataclass
class OutNode:
    kind: str  # leaf / none / dict / tuple / list / nt
    expr: str | None = None
    children: Any = None


@st.composite
def out_trees(draw: Any, names: list[str], depth: int) -> OutNode:
    kinds = ["leaf", "leaf", "none"] + (["dict", "tuple", "list", "nt"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return OutNode("leaf", draw(st.sampled_from(names)))
    if kind == "none":
        return OutNode("none")
    child = out_trees(names, depth - 1)
    if kind == "dict":
        keys = draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=2, unique=True))
        return OutNode("dict", children={k: draw(child) for k in keys})
    if kind == "nt":
        return OutNode("nt", children=[draw(child), draw(child)])
    return OutNode(kind, children=draw(st.lists(child, max_size=2)))


def build_output(node: OutNode, exprs: dict[str, Any], x: Any, y: Any) -> Any:
    if node.kind == "leaf":
        return exprs[node.expr](x, y)  # type: ignore[index]
    if node.kind == "none":
        return None
    if node.kind == "dict":
        return {k: build_output(c, exprs, x, y) for k, c in node.children.items()}
    kids = [build_output(c, exprs, x, y) for c in node.children]
    if node.kind == "nt":
        return NT(*kids)
    return tuple(kids) if node.kind == "tuple" else kids


def draw_out_spec(draw: Any, node: OutNode, brk: list[str]) -> Any:
    """An out_axes prefix for the output tree: int/None leaves over whole subtrees,
    containers matching exactly, or (when `brk` asks) a structural mistake."""
    containers = ("dict", "tuple", "list", "nt")
    if node.kind in containers and draw(st.booleans()):
        if node.kind == "dict":
            spec: Any = {k: draw_out_spec(draw, c, brk) for k, c in node.children.items()}
            if brk and brk[0] == "container" and draw(st.booleans()):
                brk.clear()
                spec["zz"] = 0
            return spec
        kids = [draw_out_spec(draw, c, brk) for c in node.children]
        if brk and brk[0] == "container" and draw(st.booleans()):
            brk.clear()
            return list(kids) if node.kind != "list" else tuple(kids)  # list<->tuple, tuple for NT
        return NT(*kids) if node.kind == "nt" else (tuple(kids) if node.kind == "tuple" else list(kids))
    if node.kind in ("leaf", "none") and brk and brk[0] == "deeper" and draw(st.booleans()):
        brk.clear()
        return (0,)
    return draw(st.one_of(st.none(), st.none(), st.integers(-3, 2)))


@dataclass
class OutCase:
    tree: OutNode
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    x_axis: int | None
    axis_size: int | None
    axis_name: str | None
    out_axes: Any
    sum_match: bool


@st.composite
def out_cases(draw: Any) -> OutCase:
    axis_name = draw(st.sampled_from([None, "i"]))
    names = sorted(_out_exprs(axis_name))
    tree = draw(out_trees(names, 2))
    pe_x = tuple(draw(st.lists(st.integers(0, 4), max_size=2)))
    y_shape = tuple(draw(st.lists(st.integers(0, 4), max_size=1)))
    B = draw(SIZES)
    x_axis = draw(st.one_of(st.none(), st.integers(-(len(pe_x) + 1), len(pe_x))))
    axis_size = B if x_axis is None or draw(st.integers(0, 3)) == 0 else None
    brk = [draw(st.sampled_from(["none", "none", "container", "deeper"]))]
    out_axes = draw_out_spec(draw, tree, brk)
    return OutCase(tree, insert(pe_x, x_axis, B), y_shape, x_axis, axis_size, axis_name, out_axes, draw(st.booleans()))


def _out_fn(case: OutCase) -> Any:
    exprs = _out_exprs(case.axis_name)
    return lambda x, y: build_output(case.tree, exprs, x, y)


@given(case=out_cases())
def test_pytree_outputs_and_out_axes_match_jax(case: OutCase) -> None:
    fn = _out_fn(case)
    opts = dict(
        in_axes=(case.x_axis, None),
        out_axes=case.out_axes,
        axis_size=case.axis_size,
        axis_name=case.axis_name,
        sum_match=case.sum_match,
    )
    jfn = jax_construct(lambda: jax.vmap(fn, **opts))
    args = (sds(case.x_shape), sds(case.y_shape))
    expected = jax_eval_shape(jfn, args)
    outcome_event(expected)
    afn = assert_construct_agrees(lambda: ax.vmap(fn, **opts), jfn, repr(case))
    if afn is None:
        return
    assert_predict_agrees(afn.predict, expected, args, context=repr(case))


@settings(max_examples=_FEW)
@given(case=out_cases())
def test_pytree_outputs_checked_call_matches_jax(case: OutCase) -> None:
    tracker = Tracked()
    fn = tracker.wrap(_out_fn(case))
    opts = dict(
        in_axes=(case.x_axis, None),
        out_axes=case.out_axes,
        axis_size=case.axis_size,
        axis_name=case.axis_name,
        sum_match=case.sum_match,
    )
    jfn = jax_construct(lambda: jax.vmap(fn, **opts))
    afn = assert_construct_agrees(lambda: ax.vmap(fn, **opts), jfn, repr(case))
    if afn is None:
        return
    assert_call_agrees(afn, jfn, tracker, (concrete(case.x_shape, 1), concrete(case.y_shape, 2)), context=repr(case))


# ======================================================================= 5. nesting


@dataclass
class Level:
    in_axes: Any
    out_axes: Any
    axis_size: int | None
    axis_name: str | None


@dataclass
class NestedCase:
    g: Gufunc
    levels: list[Level]  # innermost first
    shapes: list[tuple[int, ...]]
    brk: str

    def jax_fn(self, fn: Any) -> Any:
        for lv in self.levels:
            fn = jax.vmap(fn, in_axes=lv.in_axes, out_axes=lv.out_axes, axis_size=lv.axis_size, axis_name=lv.axis_name)
        return fn

    def ax_fn(self, fn: Any, signature: Any) -> Any:
        for k, lv in enumerate(self.levels):
            fn = ax.vmap(
                fn,
                in_axes=lv.in_axes,
                out_axes=lv.out_axes,
                axis_size=lv.axis_size,
                axis_name=lv.axis_name,
                signature=signature if k == 0 else None,
            )
        return fn

    def lifted(self) -> Any:
        sig = ax.Signature(self.g.canonical())
        for lv in self.levels:
            sig = sig.vmap(lv.in_axes, lv.out_axes, axis_size=lv.axis_size, axis_name=lv.axis_name)
        return sig


@st.composite
def nested_cases(draw: Any, strict: bool) -> NestedCase:
    depth = draw(st.integers(1, 3))
    g = draw(gufuncs(max_rank=4 - depth))
    shapes = g.in_shapes()
    out_ranks = g.out_ranks()
    levels = []
    for _ in range(depth):
        B = draw(SIZES)
        in_axes, axes = draw_in_axes(draw, [len(s) for s in shapes])
        out_axes, oaxes = draw_out_axes(draw, out_ranks, g.multi)
        axis_size = draw(st.sampled_from([None, None, B]))
        if all(a is None for a in axes) and axis_size is None and draw(st.integers(0, 5)) > 0:
            axis_size = B
        shapes = [insert(s, a, B) for s, a in zip(shapes, axes, strict=True)]
        out_ranks = [r + (o is not None) for r, o in zip(out_ranks, oaxes, strict=True)]
        levels.append(Level(in_axes, out_axes, axis_size, draw(st.sampled_from([None, None, "i", "j"]))))
    brk = draw(st.sampled_from(["none", "none", "none", "dim", "dim", "in_range", "axis_size", "out_range"]))
    if brk == "dim":
        cand = [i for i, s in enumerate(shapes) if s]
        if cand:
            i = draw(st.sampled_from(cand))
            shapes[i] = break_dim(draw, shapes[i], draw(st.integers(0, len(shapes[i]) - 1)), strict) or shapes[i]
    elif brk in ("in_range", "axis_size", "out_range"):
        k = draw(st.integers(0, depth - 1))
        lv = levels[k]
        if brk == "in_range":
            lv.in_axes = draw(st.sampled_from([5, -6]))
        elif brk == "axis_size":
            lv.axis_size = draw(SIZES)
        else:
            lv.out_axes = draw(st.sampled_from([5, -6]))
    return NestedCase(g, levels, shapes, brk)


# Drawn nests may bind one axis name at two levels, which JAX accepts (and axischeck warns
# about): these tests compare the answers, not the warning (tests/test_dropin.py has that).
SHADOWED_NAME_WARNING = "ignore:.*which a transform around it binds too:axischeck.AxisCheckWarning"


@pytest.mark.filterwarnings(SHADOWED_NAME_WARNING)
@given(case=nested_cases(strict=True), data=st.data())
def test_nested_vmap_predict_matches_jax(case: NestedCase, data: Any) -> None:
    fn = case.g.fn()
    jfn = jax_construct(lambda: case.jax_fn(fn))
    expected = jax_eval_shape(jfn, tuple(sds(s) for s in case.shapes))
    outcome_event(expected)
    args, _ = draw_arg_forms(data, case, allow_arrays=False)
    for sig in (case.g.canonical(), None):
        ctx = f"{case!r}\nsignature={sig!r}"
        afn = assert_construct_agrees(lambda: case.ax_fn(fn, sig), jfn, ctx)  # noqa: B023
        if afn is None:
            return
        assert_predict_agrees(afn.predict, expected, args, context=ctx)
    try:
        lifted = case.lifted()
    except ax.AxisCheckError as err:
        assert isinstance(expected, Raised), f"Signature.vmap raised {err} but JAX gives {expected}\n{case!r}"
        return
    assert_predict_agrees(lifted.predict, expected, args, context=f"{case!r}\nSignature(...).vmap(...)...: {lifted}")


@pytest.mark.filterwarnings(SHADOWED_NAME_WARNING)
@given(case=nested_cases(strict=False), data=st.data())
def test_nested_vmap_inferred_predict_matches_jax(case: NestedCase, data: Any) -> None:
    fn = case.g.fn()
    jfn = jax_construct(lambda: case.jax_fn(fn))
    expected = jax_eval_shape(jfn, tuple(sds(s) for s in case.shapes))
    outcome_event(expected)
    afn = assert_construct_agrees(lambda: case.ax_fn(fn, None), jfn, repr(case))
    if afn is None:
        return
    assert_predict_agrees(afn.predict, expected, draw_arg_forms(data, case, allow_arrays=False)[0], context=repr(case))


@pytest.mark.filterwarnings(SHADOWED_NAME_WARNING)
@settings(max_examples=_FEW)
@given(case=nested_cases(strict=True), use_signature=st.booleans())
def test_nested_vmap_checked_call_matches_jax(case: NestedCase, use_signature: bool) -> None:
    tracker = Tracked()
    fn = tracker.wrap(case.g.fn())
    sig = case.g.canonical() if use_signature else None
    jfn = jax_construct(lambda: case.jax_fn(fn))
    afn = assert_construct_agrees(lambda: case.ax_fn(fn, sig), jfn, repr(case))
    if afn is None:
        return
    args = tuple(concrete(s, i) for i, s in enumerate(case.shapes))
    assert_call_agrees(afn, jfn, tracker, args, context=f"{case!r}\nsignature={sig!r}")


# An inner vmap called *inside* the outer function, closing over an outer argument.
CLOSURE_EXPRS: dict[str, Any] = {
    "a+sum(y)": lambda a, y: a + jnp.sum(y),  # batched for both levels
    "a": lambda a, y: a,
    "zeros_like(a)": lambda a, y: jnp.zeros_like(a),  # batched for neither
    "y*2": lambda a, y: y * 2,  # unbatched for the inner level, batched for the outer one
    "sum(a)*y": lambda a, y: jnp.sum(a) * y,
    "(a, y)": lambda a, y: (a, y),
}


@dataclass
class ClosureCase:
    expr: str
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    inner: Level
    outer: Level


@st.composite
def closure_cases(draw: Any) -> ClosureCase:
    pe_a = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    pe_y = tuple(draw(st.lists(st.integers(0, 3), max_size=1)))
    b_in, b_out = draw(SIZES), draw(SIZES)
    ia = draw(axis_or_none(-(len(pe_a) + 1), len(pe_a)))
    x_inner = insert(pe_a, ia, b_in)
    ix = draw(axis_or_none(-(len(x_inner) + 1), len(x_inner)))
    iy = draw(axis_or_none(-(len(pe_y) + 1), len(pe_y)))
    outs = st.sampled_from([0, -1, None, 1])
    inner = Level(
        ia, draw(outs), b_in if ia is None or draw(st.integers(0, 3)) == 0 else None, draw(st.sampled_from([None, "i"]))
    )
    outer = Level(
        (ix, iy), draw(outs), b_out if (ix is None and iy is None) or draw(st.integers(0, 3)) == 0 else None, None
    )
    expr = draw(st.sampled_from(sorted(CLOSURE_EXPRS)))
    return ClosureCase(expr, insert(x_inner, ix, b_out), insert(pe_y, iy, b_out), inner, outer)


def _closure_fn(case: ClosureCase, vmap: Any) -> Any:
    expr, lv = CLOSURE_EXPRS[case.expr], case.inner

    def outer_fn(x: Any, y: Any) -> Any:
        inner = vmap(
            lambda a: expr(a, y),
            in_axes=lv.in_axes,
            out_axes=lv.out_axes,
            axis_size=lv.axis_size,
            axis_name=lv.axis_name,
        )
        return inner(x)

    lo = case.outer
    return vmap(outer_fn, in_axes=lo.in_axes, out_axes=lo.out_axes, axis_size=lo.axis_size)


@given(case=closure_cases(), run=st.integers(0, 3))
def test_inner_vmap_inside_function_matches_jax(case: ClosureCase, run: int) -> None:
    jfn = jax_construct(lambda: _closure_fn(case, jax.vmap))
    args = (sds(case.x_shape), sds(case.y_shape))
    expected = jax_eval_shape(jfn, args)
    outcome_event(expected)
    afn = assert_construct_agrees(lambda: _closure_fn(case, ax.vmap), jfn, repr(case))
    if afn is None:
        return
    assert_predict_agrees(afn.predict, expected, args, context=repr(case))
    if run == 0 and data_is_small(case.x_shape, case.y_shape):  # a real run, for a quarter
        assert_call_agrees(
            afn, jfn, Tracked(), (concrete(case.x_shape, 1), concrete(case.y_shape, 2)), context=repr(case)
        )


def data_is_small(*shapes: tuple[int, ...]) -> bool:
    return sum(int(np.prod(s)) for s in shapes) <= 64


def test_unmapped_python_values_pass_through_untouched() -> None:
    """in_axes=None leaves reach the function as they are (a Python int can size an
    array, a str has a len). `jax.eval_shape` would trace them, so the oracle here is a
    real `jax.vmap` call."""
    x = concrete((4, 3))
    cases = [
        (lambda x, n: jnp.zeros(n) + x.sum(), (x, 3)),
        (lambda x, s: x * len(s), (x, "abc")),
        (lambda x, seq: x * seq[0], (x, [1.0, 2.0])),
        (lambda x, s: x * s, (x, np.float32(2))),
    ]
    for fun, args in cases:
        want = jax.tree_util.tree_map(np.shape, jax.vmap(fun, in_axes=(0, None))(*args))
        f = ax.vmap(fun, in_axes=(0, None))
        assert f.predict(*args).shapes == want
        np.testing.assert_array_equal(np.asarray(f(*args)), np.asarray(jax.vmap(fun, in_axes=(0, None))(*args)))


# ============================================= 6. axis_name and collectives


@dataclass
class CollCase:
    x_shape: tuple[int, ...]
    levels: list[Level]  # innermost first
    ops: list[tuple[Any, ...]]


def _collective(op: tuple[Any, ...], x: Any) -> Any:
    kind = op[0]
    if kind in ("psum", "pmean", "pmax", "pmin"):
        return getattr(lax, kind)(x, op[1])
    if kind == "x*psum":
        return x * lax.psum(x, op[1])
    if kind == "psum+pos":  # an int in the axis tuple is a positional array axis
        return lax.psum(x, (op[1], 0))
    if kind == "all_gather":
        return lax.all_gather(x, op[1], axis=op[2], tiled=op[3])
    if kind == "axis_index":
        return lax.axis_index(op[1])
    if kind == "axis_size":
        return x * lax.axis_size(op[1])
    if kind == "all_to_all":
        return lax.all_to_all(x, op[1], op[2], op[3], tiled=op[4])
    if kind == "psum_scatter_tiled":
        return lax.psum_scatter(x, op[1], scatter_dimension=op[2], tiled=True)
    if kind == "psum_scatter":
        return lax.psum_scatter(x, op[1], scatter_dimension=op[2], tiled=False)
    if kind == "ppermute":
        return lax.ppermute(x, op[1], op[2])
    raise AssertionError(kind)


COLLECTIVES = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "x*psum",
    "psum+pos",
    "all_gather",
    "axis_index",
    "axis_size",
    "all_to_all",
    "psum_scatter_tiled",
    "psum_scatter",
    "ppermute",
]


@st.composite
def coll_cases(draw: Any) -> CollCase:
    """Nested named vmaps over x and a function of collectives over those names.

    Generation knows each name's size only to make valid cases likely (e.g. sizing the
    all_to_all split axis to the named axis); JAX alone decides the outcome.
    Non-tiled psum_scatter is kept only where the scatter dimension equals the axis
    size: otherwise JAX's vmap rule silently accepts it (docs/jax-semantics.md#the-vmap-psum_scatter-hole),
    which axischeck reports as an error on purpose.
    """
    depth = draw(st.integers(1, 2))
    names = [draw(st.sampled_from(["i", "j"])) for _ in range(depth)]  # innermost first
    sizes = [draw(st.integers(0, 4)) for _ in range(depth)]
    size_of: dict[str, int] = {}
    for name, size in reversed(list(zip(names, sizes, strict=True))):
        size_of[name] = size  # the innermost binding of a repeated name wins
    pe = list(draw(st.lists(st.integers(1, 4), max_size=3)))
    bound = list(dict.fromkeys(names))
    name_refs: list[Any] = bound + ["k"] + ([tuple(bound)] if len(bound) > 1 else [])
    ops: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(COLLECTIVES))
        name = draw(st.sampled_from(name_refs))
        n = size_of.get(name, 2) if isinstance(name, str) else 2
        r = len(pe)
        if kind == "all_gather":
            rr = r + depth  # generous: out-of-range axes are part of the space
            ops.append((kind, name, draw(st.integers(-(rr + 1), rr)), draw(st.booleans())))
        elif kind == "psum_scatter":
            if isinstance(name, str) and name in size_of:
                if r == 0:
                    pe.append(1)
                d = draw(st.integers(0, len(pe) - 1))
                pe[d] = n
                ops.append((kind, name, d))
        elif kind in ("all_to_all", "psum_scatter_tiled"):
            if r == 0:
                pe.append(1)
                r = 1
            split = draw(st.integers(0, r))  # r itself is out of range
            concat = draw(st.integers(0, r))
            tiled = kind == "psum_scatter_tiled" or draw(st.booleans())
            if split < r and draw(st.integers(0, 3)) > 0:
                pe[split] = n * draw(st.integers(1, 2)) if tiled else n
            ops.append((kind, name, split, concat, tiled) if kind == "all_to_all" else (kind, name, split))
        elif kind == "ppermute":
            m = n if draw(st.integers(0, 3)) > 0 else n + 1
            ops.append((kind, name, tuple((j, (j + 1) % m) for j in range(m))))
        else:
            ops.append((kind, name))
    # a later op may have resized a non-tiled psum_scatter's dimension: drop it then
    ops = [op for op in ops if op[0] != "psum_scatter" or pe[op[2]] == size_of[op[1]]] or [("psum", bound[0])]
    levels = []
    shape = tuple(pe)
    for k in range(depth):
        a = draw(axis_or_none(-(len(shape) + 1), len(shape)))
        axis_size = sizes[k] if a is None or draw(st.integers(0, 3)) == 0 else None
        shape = insert(shape, a, sizes[k])
        out_axes = draw(
            st.one_of(st.sampled_from([0, -1, None]), st.tuples(*[st.sampled_from([0, None, 1]) for _ in ops]))
        )
        levels.append(Level((a,), out_axes, axis_size, names[k]))
    return CollCase(shape, levels, ops)


def _coll_fns(case: CollCase, wrap: Any = lambda f: f) -> tuple[Any, Any]:
    ops = case.ops

    def fn(x: Any) -> Any:
        return tuple(_collective(op, x) for op in ops)

    def build(vmap: Any) -> Any:
        f = wrap(fn)
        for lv in case.levels:
            f = vmap(f, in_axes=lv.in_axes, out_axes=lv.out_axes, axis_size=lv.axis_size, axis_name=lv.axis_name)
        return f

    return jax_construct(lambda: build(jax.vmap)), lambda: build(ax.vmap)


@pytest.mark.filterwarnings(SHADOWED_NAME_WARNING)
@given(case=coll_cases())
def test_collectives_over_vmap_axes_match_jax(case: CollCase) -> None:
    jfn, make_ax = _coll_fns(case)
    expected = jax_eval_shape(jfn, (sds(case.x_shape),))
    outcome_event(expected)
    afn = assert_construct_agrees(make_ax, jfn, repr(case))
    if afn is None:
        return
    assert_predict_agrees(afn.predict, expected, (sds(case.x_shape),), context=repr(case))


@pytest.mark.filterwarnings(SHADOWED_NAME_WARNING)
@settings(max_examples=_FEW)
@given(case=coll_cases())
def test_collectives_checked_call_matches_jax(case: CollCase) -> None:
    tracker = Tracked()
    jfn, make_ax = _coll_fns(case, tracker.wrap)
    afn = assert_construct_agrees(make_ax, jfn, repr(case))
    if afn is None:
        return
    assert_call_agrees(afn, jfn, tracker, (concrete(case.x_shape, 1),), context=repr(case))


@pytest.mark.parametrize(
    ("shape", "split", "concat", "tiled"),
    [
        ((3, 3), 0, 0, False),
        ((3, 3, 4), 0, 1, False),
        ((3, 4, 3), 1, 0, False),
        ((3, 6, 2), 0, 1, True),
        ((2, 4), 0, 1, True),  # concat_axis 1 is out of range for per-example rank 1: JAX raises IndexError
    ],
)
def test_all_to_all_over_vmap_axis_matches_jax(shape: tuple[int, ...], split: int, concat: int, tiled: bool) -> None:
    """all_to_all under a named vmap (the split dim equals, or is divisible by, the axis size)."""
    fun = lambda x: lax.all_to_all(x, "i", split, concat, tiled=tiled)
    args = (sds(shape),)
    expected = jax_eval_shape(jax.vmap(fun, axis_name="i"), args)
    assert_predict_agrees(ax.vmap(fun, axis_name="i").predict, expected, args)
    x = concrete(shape)
    tracker = Tracked()
    tracked = tracker.wrap(fun)
    assert_call_agrees(ax.vmap(tracked, axis_name="i"), jax.vmap(tracked, axis_name="i"), tracker, (x,))


@pytest.mark.parametrize("out_axes", [(0,), [0], {"a": 0}])
def test_container_out_axes_on_a_none_output_raises(out_axes: Any) -> None:
    """A None output has no leaves, but a container out_axes still fails JAX's prefix check."""
    fun = lambda x: None
    args = (sds((3,)),)
    expected = jax_eval_shape(jax.vmap(fun, out_axes=out_axes), args)
    assert isinstance(expected, Raised)
    assert_predict_agrees(ax.vmap(fun, out_axes=out_axes).predict, expected, args)
    tracker = Tracked()
    f = tracker.wrap(fun)
    assert_call_agrees(ax.vmap(f, out_axes=out_axes), jax.vmap(f, out_axes=out_axes), tracker, (concrete((3,)),))


# ===================================================== construction-time errors

_GOOD_LEAVES = st.one_of(st.none(), st.integers(-3, 3))
_BAD_LEAVES = st.sampled_from([True, False, np.int64(0), np.int32(1), 0.0, "a", 1.5])


def _axes_trees(leaves: Any) -> Any:
    return st.recursive(
        leaves,
        lambda c: st.one_of(
            st.lists(c, max_size=2).map(tuple),
            st.lists(c, max_size=2),
            st.dictionaries(st.sampled_from("uv"), c, max_size=2),
        ),
        max_leaves=4,
    )


@given(
    in_axes=_axes_trees(st.one_of(_GOOD_LEAVES, _BAD_LEAVES)),
    out_axes=_axes_trees(st.one_of(_GOOD_LEAVES, _BAD_LEAVES)),
)
def test_construction_errors_match_jax(in_axes: Any, out_axes: Any) -> None:
    fn = lambda x: x
    jfn = jax_construct(lambda: jax.vmap(fn, in_axes=in_axes, out_axes=out_axes))
    ctx = f"in_axes={in_axes!r} out_axes={out_axes!r}"
    afn = assert_construct_agrees(lambda: ax.vmap(fn, in_axes=in_axes, out_axes=out_axes), jfn, ctx)
    if afn is not None:  # both constructed: the call must still agree
        assert_predict_agrees(afn.predict, jax_eval_shape(jfn, (sds((3, 2)),)), (sds((3, 2)),), context=ctx)


# ====================================================== 7. explicit examples


def complex_operation(x: Any, y: Any, z: Any) -> Any:
    return jnp.einsum("ab,bc->ac", x, y) + z


EINSUM_SIG = "(a,b),(b,c),(a,c)->(a,c)"


@pytest.mark.parametrize("signature", [None, EINSUM_SIG, "a b, b c, a c -> a c"])
def test_seed_einsum_example(signature: str | None) -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0, signature=signature)
    jf = jax.vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0)
    shapes = [(16, 8, 4), (4, 16, 2), (16, 8, 2)]
    assert f.predict(*shapes).shapes == (16, 8, 2)
    assert isinstance(f.predict(*shapes).shapes, ax.Shape)
    assert f.predict(*shapes).axis_size == 16
    assert_predict_agrees(f.predict, jax_eval_shape(jf, tuple(sds(s) for s in shapes)), tuple(sds(s) for s in shapes))
    args = tuple(concrete(s, i) for i, s in enumerate(shapes))
    out = f(*args)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jf(*args)))
    assert out.shape == (16, 8, 2)

    bad = (16, 8, 4), (5, 16, 2), (16, 8, 2)
    assert isinstance(jax_eval_shape(jf, tuple(sds(s) for s in bad)), Raised)
    with pytest.raises(ax.AxisCheckError):
        f.predict(*bad)
    # the call: checked up front with a signature; without one, JAX's own einsum error
    # from inside the function may pass through (AxisCheckError is a ValueError too)
    with pytest.raises(ax.AxisCheckError if signature is not None else ValueError):
        f(*(concrete(s) for s in bad))
    if signature is not None:  # only the declared signature can name the conflicting symbol
        with pytest.raises(ax.AxisCheckError, match="'b'"):
            f.predict(*bad)


@pytest.mark.parametrize("signature", [None, EINSUM_SIG])
def test_nested_einsum_example_from_semantics(signature: str | None) -> None:
    inner = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=signature)
    outer = ax.vmap(inner, in_axes=(2, 0, None), out_axes=1)
    jouter = jax.vmap(jax.vmap(complex_operation, in_axes=(0, 1, 0)), in_axes=(2, 0, None), out_axes=1)
    shapes = [(16, 8, 7, 4), (7, 4, 16, 2), (16, 8, 2)]
    pred = outer.predict(*shapes)
    assert pred.shapes == (16, 7, 8, 2)
    assert pred.axis_size == 7
    assert_predict_agrees(
        outer.predict, jax_eval_shape(jouter, tuple(sds(s) for s in shapes)), tuple(sds(s) for s in shapes)
    )
    lifted = ax.Signature(EINSUM_SIG).vmap(in_axes=(0, 1, 0)).vmap(in_axes=(2, 0, None), out_axes=1)
    assert lifted.predict(*shapes).shapes == (16, 7, 8, 2)
    args = tuple(concrete(s, i) for i, s in enumerate(shapes))
    np.testing.assert_array_equal(np.asarray(outer(*args)), np.asarray(jouter(*args)))


def process_single(x: Any, params: dict[str, Any]) -> Any:
    return jnp.dot(params["W"], x) + params["b"]


@pytest.mark.parametrize("signature", [None, {"x": "i", "params": {"W": "o i", "b": "o"}, "return": "o"}])
def test_seed_example_1_dense_layer(signature: Any) -> None:
    f = ax.vmap(process_single, in_axes=(0, None), signature=signature)
    jf = jax.vmap(process_single, in_axes=(0, None))
    x = jnp.ones((128, 784))
    params = {"W": jnp.ones((256, 784)), "b": jnp.ones((256,))}
    assert f.predict(x, params).shapes == (128, 256)
    assert f.predict((128, 784), {"W": (256, 784), "b": (256,)}).shapes == (128, 256)
    assert_predict_agrees(f.predict, jax_eval_shape(jf, (x, params)), (x, params))
    np.testing.assert_array_equal(np.asarray(f(x, params)), np.asarray(jf(x, params)))
    # params mapped by mistake: JAX raises (size 256 vs 128), so must axischeck
    wrong = ax.vmap(process_single, in_axes=0, signature=signature)
    assert isinstance(jax_eval_shape(jax.vmap(process_single, in_axes=0), (x, params)), Raised)
    with pytest.raises(ax.AxisCheckError):
        wrong.predict(x, params)


def process_sequence(seq: Any, params: dict[str, Any]) -> Any:
    return jnp.tanh(jnp.dot(seq, params["W_seq"]) + params["b_seq"])


@pytest.mark.parametrize("signature", [None, {"seq": "d", "params": {"W_seq": "d h", "b_seq": "h"}, "return": "h"}])
def test_seed_example_2_nested_batch_time(signature: Any) -> None:
    f = ax.vmap(ax.vmap(process_sequence, in_axes=(0, None), signature=signature), in_axes=(0, None))
    jf = jax.vmap(jax.vmap(process_sequence, in_axes=(0, None)), in_axes=(0, None))
    x = jnp.ones((32, 100, 64))
    params = {"W_seq": jnp.ones((64, 128)), "b_seq": jnp.ones((128,))}
    assert f.predict(x, params).shapes == (32, 100, 128)
    assert_predict_agrees(f.predict, jax_eval_shape(jf, (x, params)), (x, params))
    np.testing.assert_array_equal(np.asarray(f(x, params)), np.asarray(jf(x, params)))
    bad = {"W_seq": jnp.ones((63, 128)), "b_seq": jnp.ones((128,))}
    assert isinstance(jax_eval_shape(jf, (x, bad)), Raised)
    with pytest.raises(ax.AxisCheckError):
        f.predict(x, bad)


def test_out_axes_none_on_unbatched_outputs_is_accepted() -> None:
    # JAX accepts out_axes=None where the output does not depend on batched data.
    x = sds((5, 3))
    for fun in (lambda a: jnp.zeros_like(a), lambda a: 2.0, lambda a: jnp.ones(a.shape), lambda a: jnp.ones(4)):
        jf = jax.vmap(fun, out_axes=None)
        assert_predict_agrees(ax.vmap(fun, out_axes=None).predict, jax_eval_shape(jf, (x,)), (x,))
    # ... and rejects it on a batched one, unless sum_match sums over the batch
    for fun in (lambda a: a * 0, lambda a: lax.stop_gradient(a)):
        assert isinstance(jax_eval_shape(jax.vmap(fun, out_axes=None), (x,)), Raised)
        with pytest.raises(ax.AxisCheckError):
            ax.vmap(fun, out_axes=None).predict(x)
        jf = jax.vmap(fun, out_axes=None, sum_match=True)
        assert_predict_agrees(ax.vmap(fun, out_axes=None, sum_match=True).predict, jax_eval_shape(jf, (x,)), (x,))


def test_predict_keeps_the_weak_type_jax_keeps_per_example() -> None:
    """JAX's vmap hands the function weakly typed examples of a weakly typed argument: a
    function whose shapes depend on it is predicted as JAX evaluates it."""

    def by_weak_type(x: jax.Array) -> jax.Array:
        return jnp.zeros((2,)) if x.aval.weak_type else jnp.zeros((5,))  # type: ignore[attr-defined]

    weak = jax.jit(lambda: jnp.broadcast_to(1.0, (4,)))()
    strong = jnp.ones((4,), jnp.float32)
    assert weak.aval.weak_type and not strong.aval.weak_type  # type: ignore[attr-defined]
    for arg in (weak, strong, jax.ShapeDtypeStruct((4,), jnp.float32, weak_type=True)):
        want = jax.eval_shape(jax.vmap(by_weak_type), arg).shape
        assert ax.vmap(by_weak_type).predict(arg).shapes == want
        assert ax.vmap(by_weak_type)(arg).shape == want == jax.vmap(by_weak_type)(arg).shape
