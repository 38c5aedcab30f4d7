"""`infer_signature`: a per-example signature read from example arguments, every name
verified with JAX.

Sizes alone cannot name dimensions: two axes of size 4 may be one symbol or two. So each
naming is a question put to JAX: `jax.eval_shape` of JAX's own transform (the one a call
runs) on arguments whose per-example dims are re-sized, with the mapped axes (or the
device split) put back as the example had them. A dim that can change alone gets its own
name; dims that change only together share one (equal-sized dims are asked in pairs, so
`(x * y).sum() + (z * w).sum()` gives two names); a dim that never changes is a number,
unless it changes with another at a fixed offset (`n` and `n + 1`), which a signature
cannot write: it is then `_`, with a note. Output dims are named by following the input
names, and the batch size of a vmap with an axis name (a collective can put it into an
example's shape), over fresh draws of all of them; the signature is declared on a rebuilt
transform and compared with JAX before it is returned.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from string import ascii_lowercase
from typing import Any

import jax
import jax.numpy as jnp

from .._core._errors import AxisCheckError, AxisCheckWarning, with_jax_error
from .._core._leaves import flatten_call, label_call, parameter_names, resharded, shape_of, shapes_as_structs
from .._core._prediction import Prediction
from .._core._shape import Shape
from .._core._steps import ArgRow, MapStep, OutRow, ShardRow, ShardStep
from .._core._text import format_shape
from ._signature import Inference, Signature
from ._trace import substituting

DimId = tuple[int, int]
"""One per-example input dim: (flat argument leaf, axis)."""

DRAWS = 3  # fresh draws of every name: two name the outputs, all three check the result
ROUNDS = 3  # draws restarted after JAX refuses one and names are fixed
MAX_PAIRED = 12  # equal-sized dims tied together: pairs asked of JAX up to this many dims
MAX_TIED = 8  # fixed sizes: pairs asked of JAX for an offset tie (n, n + 1) up to this many


@dataclass(frozen=True, slots=True)
class Subject:
    """What inference needs of a transform (`Transformed.infer_signature` builds it)."""

    describe: str  # how messages name the transform
    fun: Callable[..., Any]  # the innermost user function: its name and parameters
    predict: Callable[..., Prediction]
    jax_fn: Callable[..., Any]  # JAX's own transform: the oracle
    rebuild: Callable[[Signature], Any]  # the same transform declaring a signature (has `.predict`)
    tuple_dtypes: Mapping[int | str, Any]  # what `predict` makes of a plain tuple of ints


class _Unreadable(Exception):
    """A shape the example's levels cannot map back (its rank or a mapped size changed)."""


@dataclass(frozen=True, slots=True)
class _Insert:
    """A vmap/pmap level: the mapped axis of `size` at `axis`, written as in_axes/out_axes
    write it (negative counts from the end of the batched array)."""

    axis: int
    size: int
    level: int = -1  # which vmap/pmap level (outermost 0): draws may re-size its batch

    def up(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        p = self.axis if self.axis >= 0 else self.axis + len(shape) + 1
        if not 0 <= p <= len(shape):
            raise _Unreadable
        return shape[:p] + (self.size,) + shape[p:]

    def down(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        p = self.axis if self.axis >= 0 else self.axis + len(shape)
        if not 0 <= p < len(shape) or shape[p] != self.size:
            raise _Unreadable
        return shape[:p] + shape[p + 1 :]


@dataclass(frozen=True, slots=True)
class _Split:
    """A shard_map level: dim `i` of the global array is `factors[i]` device blocks."""

    factors: tuple[int, ...]

    def up(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) != len(self.factors):
            raise _Unreadable
        return tuple(d * f for d, f in zip(shape, self.factors, strict=True))

    def down(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) != len(self.factors) or any(d % f for d, f in zip(shape, self.factors, strict=True)):
            raise _Unreadable
        return tuple(d // f for d, f in zip(shape, self.factors, strict=True))


Op = _Insert | _Split


@dataclass(frozen=True, slots=True)
class _Note:
    """A note for `Signature.notes`; `{names}` in it becomes the names `dims` get."""

    text: str
    dims: tuple[DimId, ...] = ()

    def render(self, named: Mapping[DimId, str]) -> str:
        return self.text.replace("{names}", _listed([named[d] for d in self.dims])) if self.dims else self.text


@dataclass(frozen=True, slots=True)
class _Class:
    """Input dims that share one size: a name (free), a number (fixed), or `_` when they
    follow another class's size at an offset (`follows` is that class's first dim): the
    signature language has no `n + 1`."""

    dims: tuple[DimId, ...]
    size: int
    fixed: bool = False
    follows: DimId | None = None
    offset: int = 0

    @property
    def drawn(self) -> bool:
        """Whether the draws give it sizes of its own (a name)."""
        return not self.fixed and self.follows is None

    def token(self, name: str | None) -> str:
        return str(self.size) if self.fixed else "_" if self.follows is not None else str(name)


@dataclass(frozen=True, slots=True)
class _Verdict:
    """JAX's answer for one set of per-example sizes."""

    accepted: bool
    call: tuple[tuple[Any, ...], dict[str, Any]]  # the arguments tried
    out_def: Any = None  # JAX's output structure
    batched: tuple[Any, ...] = ()  # JAX's output leaves (ShapeDtypeStructs)
    outs: tuple[tuple[int, ...], ...] | None = None  # per-example outputs; None: not readable
    error: Exception | None = None


class _Oracle:
    """Runs JAX's transform abstractly on re-sized arguments, mapping through the levels."""

    def __init__(
        self,
        subject: Subject,
        leaves: list[Any],
        treedef: Any,
        per: list[tuple[int, ...] | None],
        ops_in: list[list[Op]],
        ops_out: list[list[Op]],
    ) -> None:
        self.subject = subject
        self.leaves = leaves
        self.treedef = treedef
        self.per = per
        self.ops_in = ops_in  # per leaf, innermost level first
        self.ops_out = ops_out  # per output leaf, outermost level first
        self.calls = 0

    def run(self, moves: Mapping[DimId, int], batch: Mapping[int, int] | None = None) -> _Verdict:
        """JAX's answer with the per-example dims in `moves` re-sized, and the batch size of
        each level in `batch` (level -> size) too."""
        batch = batch or {}
        values = list(self.leaves)
        for i, shape in enumerate(self.per):
            resized = any(isinstance(op, _Insert) and op.level in batch for op in self.ops_in[i])
            if shape is None or not (resized or any((i, a) in moves for a in range(len(shape)))):
                continue  # unchanged: the argument as given
            new = tuple(moves.get((i, a), d) for a, d in enumerate(shape))
            for op in self.ops_in[i]:
                new = _batched(op, batch).up(new)
            leaf = self.leaves[i]
            values[i] = resharded(leaf, new, leaf.dtype)
        args, kwargs = jax.tree_util.tree_unflatten(self.treedef, values)
        call = (tuple(args), dict(kwargs))
        dyn = [i for i, v in enumerate(values) if _traced(v)]
        self.calls += 1
        try:
            out = jax.eval_shape(
                substituting(self.subject.jax_fn, self.treedef, values, dyn), *[values[i] for i in dyn]
            )
        except Exception as err:  # any refusal, JAX's or an inner axischeck transform's
            return _Verdict(False, call, error=err)
        got, out_def = jax.tree_util.tree_flatten(out)
        outs: tuple[tuple[int, ...], ...] | None
        try:
            if len(got) != len(self.ops_out):
                raise _Unreadable
            lowered = []
            for leaf_out, ops in zip(got, self.ops_out, strict=True):
                shape = tuple(leaf_out.shape)
                for op in ops:
                    shape = _batched(op, batch).down(shape)
                lowered.append(shape)
            outs = tuple(lowered)
        except _Unreadable:
            outs = None
        return _Verdict(True, call, out_def, tuple(got), outs)


def _batched(op: Op, batch: Mapping[int, int]) -> Op:
    if isinstance(op, _Insert) and op.level in batch:
        return _Insert(op.axis, batch[op.level], op.level)
    return op


def _traced(value: Any) -> bool:
    """Arrays are traced; Python scalars and non-array leaves are passed as given (as a
    real call passes them)."""
    return shape_of(value) is not None and not isinstance(value, (bool, int, float, complex))


def _is_shape_tuple(x: object) -> bool:
    return type(x) is tuple and all(type(d) is int and d >= 0 for d in x)


def infer_signature(subject: Subject, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Signature:
    """The per-example signature of `subject`'s function, inferred from one call's
    arguments and checked against JAX (see `Transformed.infer_signature`)."""
    try:
        flat, _ = flatten_call(args, kwargs)
        known = [True] * len(flat)
        if int in map(type, flat):  # plain tuples of ints stand for shapes, as in predict
            marks = jax.tree_util.tree_map(_is_shape_tuple, (args, kwargs), is_leaf=_is_shape_tuple)
            known = [not m for m in jax.tree_util.tree_leaves(marks)]
            args, kwargs = shapes_as_structs(args, kwargs, subject.tuple_dtypes)
        leaves, treedef = flatten_call(args, kwargs)
    except AxisCheckError as err:
        raise err from None
    pred = subject.predict(*args, **kwargs)
    return _Inference(subject, args, kwargs, leaves, treedef, known, pred).run()


class _Inference:
    """One inference: the levels read from the prediction, then the questions to JAX."""

    def __init__(
        self,
        subject: Subject,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        leaves: list[Any],
        treedef: Any,
        known: list[bool],
        pred: Prediction,
    ) -> None:
        self.subject = subject
        self.args = args
        self.kwargs = kwargs
        self.known = known
        self.notes: list[_Note] = []
        if not pred.steps:
            raise self._error(
                "JAX alone answers for these arguments (a type registered with register_vmappable,"
                " or symbolic sizes), so axischeck cannot strip the mapped axes"
            )
        self.labels = [leaf.label for leaf in label_call(args, kwargs, parameter_names(subject.fun)).flat()[0]]
        levels = [s for s in pred.steps if isinstance(s, (MapStep, ShardStep))]
        self.levels = levels
        per, ops_in, reserved = self._inputs(levels, leaves)
        out_leaves = jax.tree_util.tree_leaves(pred.shapes)
        ops_out = self._outputs(levels, len(out_leaves))
        self.reserved = reserved
        self.oracle = _Oracle(subject, leaves, treedef, per, ops_in, ops_out)
        self.per = per
        self.dims: list[DimId] = [(i, a) for i, s in enumerate(per) if s is not None for a in range(len(s))]

    # ------------------------------------------------------------ the levels

    def _error(self, problem: str, hint: str | None = None) -> AxisCheckError:
        return AxisCheckError(f"cannot infer a signature: {problem}", transform=self.subject.describe, hint=hint)

    def _inputs(
        self, levels: list[MapStep | ShardStep], leaves: list[Any]
    ) -> tuple[list[tuple[int, ...] | None], list[list[Op]], set[str]]:
        """Per leaf: the per-example shape and how it is lifted back to the argument."""
        shapes: list[tuple[int, ...] | None] = [None if (s := shape_of(x)) is None else tuple(s) for x in leaves]
        ops: list[list[Op]] = [[] for _ in leaves]
        reserved: set[str] = set()
        for k, level in enumerate(levels):
            if isinstance(level, MapStep):
                reserved.add(level.symbol)
            else:
                reserved.update(name for name, _ in level.mesh)
            if len(level.args) != len(leaves):
                raise self._error(f"{level.transform} has {len(level.args)} argument rows for {len(leaves)} leaves")
            rows: Sequence[ArgRow | ShardRow] = level.args
            for i, row in enumerate(rows):
                if row.shape is not None and shapes[i] is not None and tuple(row.shape) != shapes[i]:
                    raise self._error(f"{row.label} is {format_shape(row.shape)} at {level.transform}, not as passed")
                op, inner = self._arg_op(row, k)
                if op is not None:
                    ops[i].insert(0, op)  # innermost first
                if shapes[i] is not None:
                    shapes[i] = inner
        for i, x in enumerate(leaves):  # the lift must give back the example exactly
            shape = shapes[i]
            if shape is None:
                continue
            back = shape
            for op in ops[i]:
                back = op.up(back)
            if back != tuple(shape_of(x) or ()):
                raise self._error(f"{self.labels[i]}'s per-example shape does not map back to the argument")
        return shapes, ops, reserved

    def _arg_op(self, row: ArgRow | ShardRow, level: int) -> tuple[Op | None, tuple[int, ...] | None]:
        if isinstance(row, ArgRow):
            inner = None if row.per_example is None else tuple(row.per_example)
            if row.shape is None or row.axis is None:
                return None, inner
            if type(row.axis) is not int:
                raise self._error(f"the in_axes entry of {row.label} is not an int")
            shape = tuple(row.shape)
            p = row.axis if row.axis >= 0 else row.axis + len(shape)
            return _Insert(row.axis, shape[p], level), inner
        block = None if row.block is None else tuple(row.block)
        if row.shape is None or block is None:
            return None, block
        return self._split(row.label, tuple(row.shape), block), block

    def _split(self, label: str, shape: tuple[int, ...], block: tuple[int, ...]) -> _Split:
        if len(shape) != len(block) or any(
            (b == 0) != (g == 0) or (b and g % b) for g, b in zip(shape, block, strict=True)
        ):
            raise self._error(f"{label}'s block {format_shape(block)} does not divide {format_shape(shape)}")
        if any(b == 0 and g == 0 for g, b in zip(shape, block, strict=True)):
            raise self._error(
                f"{label} has an empty dimension, so its device split cannot be read",
                hint="give example arguments without size-0 dimensions",
            )
        return _Split(tuple(g // b for g, b in zip(shape, block, strict=True)))

    def _outputs(self, levels: list[MapStep | ShardStep], n: int) -> list[list[Op]]:
        ops: list[list[Op]] = [[] for _ in range(n)]
        for k, level in enumerate(levels):
            if len(level.outs) != n:
                raise self._error(f"{level.transform} has {len(level.outs)} output rows for {n} outputs")
            outs: Sequence[OutRow | ShardRow] = level.outs
            for j, row in enumerate(outs):
                op = self._out_op(row, k)
                if op is not None:
                    ops[j].append(op)  # outermost first
        return ops

    def _out_op(self, row: OutRow | ShardRow, level: int) -> Op | None:
        if isinstance(row, OutRow):
            if row.axis is None:
                return None
            shape = tuple(row.shape)
            p = row.axis if row.axis >= 0 else row.axis + len(shape)
            return _Insert(row.axis, shape[p], level)
        if row.shape is None or row.block is None:
            return None
        return self._split(row.label, tuple(row.shape), tuple(row.block))

    # ---------------------------------------------------------- the questions

    def run(self) -> Signature:
        example = self.oracle.run({})
        if not example.accepted:
            err = self._error("JAX refuses the example arguments that axischeck predicts")
            raise with_jax_error(err, example.error or RuntimeError()) from example.error
        if example.outs is None:
            raise self._error("the outputs JAX gives do not map back through the transform's out_axes")
        self.example = example
        self.taken = {d for s in self.per if s is not None for d in s}
        self.taken |= {d for x in example.batched for d in x.shape} | {d for s in example.outs for d in s}
        self.taken |= {d for x in self.oracle.leaves if (s := shape_of(x)) is not None for d in s}
        classes: list[_Class] = []
        for size, group in self._groups().items():
            classes += self._classify(size, group)
        classes.sort(key=lambda c: min(c.dims))
        classes = self._ties(classes)
        self.batches = self._batch_sizes()
        classes, draws = self._draw(classes)
        names = self._names(classes)
        out_specs = self._output_dims(classes, names, draws)
        sig = self._signature(classes, names, out_specs)
        samples = [example] + [v for _, v in draws]
        problem = self._disagreement(sig, samples)
        if problem is not None and out_specs is not None:
            sig = self._signature(classes, names, None)
            self.notes.append(_Note(f"the output is left undeclared: declared, {problem}"))
            problem = self._disagreement(sig, samples)
        if problem is not None:
            raise self._error(problem)
        named = {d: c.token(names.get(k)) for k, c in enumerate(classes) for d in c.dims}
        return Signature._make(sig.core, (), self._inference(sig, tuple(note.render(named) for note in self.notes)))

    def _ties(self, classes: list[_Class]) -> list[_Class]:
        """Fixed sizes that change together at an offset (a trajectory of n steps and its
        n + 1 values): the smallest gets a name and the others, which a signature cannot
        write as `n + 1`, are written `_` (any size), with a note naming the tie, so the
        pasted signature takes other lengths and JAX still checks the tie when it runs.
        At most one evaluation per pair of fixed classes, for up to `MAX_TIED` of them."""
        fixed = sorted((k for k, c in enumerate(classes) if c.fixed), key=lambda k: classes[k].size)
        if not 2 <= len(fixed) <= MAX_TIED:
            return classes
        out = list(classes)
        for n, i in enumerate(fixed):
            base = classes[i]
            if not out[i].fixed:
                continue  # already tied to a smaller one
            partners: list[int] = []
            for j in fixed[n + 1 :]:
                if not out[j].fixed or classes[j].size == base.size:
                    continue
                new = self._fresh(base.size)
                moves = dict.fromkeys(base.dims, new)
                for k in [*partners, j]:
                    moves.update(dict.fromkeys(classes[k].dims, new + classes[k].size - base.size))
                if self._ok(moves):
                    partners.append(j)
            if not partners:
                continue
            out[i] = _Class(base.dims, base.size)
            tied = set(base.dims)
            for j in partners:
                c = classes[j]
                out[j] = _Class(c.dims, c.size, follows=base.dims[0], offset=c.size - base.size)
                tied.update(c.dims)
                one = len(c.dims) == 1
                self.notes.append(
                    _Note(
                        f"{self._where(c.dims)} (size {c.size}) {'changes' if one else 'change'} with"
                        f" {self._where(base.dims)} (size {base.size}) as {{names}} + {c.size - base.size}:"
                        f" a signature cannot write that, so {'it is' if one else 'they are'} written '_'"
                        " (any size; JAX checks the tie when the function runs)",
                        base.dims[:1],
                    )
                )
            self.notes[:] = [note for note in self.notes if not tied & set(note.dims) or "{names}" in note.text]
        return out

    def _batch_sizes(self) -> dict[int, int]:
        """The vmap levels whose batch size the draws change too (level -> the example's
        size): with an axis name, a collective puts the batch size into per-example shapes
        (`all_gather(x, "i")` is `(i, ...)`), and a signature names it by the axis name
        (the level's symbol). One evaluation per vmap level with an axis name; pmap's batch
        is the device count, which stays."""
        sizes: dict[int, int] = {}
        for k, level in enumerate(self.levels):
            if not (isinstance(level, MapStep) and level.transform.startswith("vmap(") and level.axis_size):
                continue
            if f"axis_name={level.symbol!r}" not in level.transform:
                continue  # no axis name: no collective can see the batch size
            if not any(isinstance(op, _Insert) and op.level == k for ops in self.oracle.ops_in for op in ops):
                continue  # no argument is mapped at this level: its size comes from axis_size
            new = self._fresh(level.axis_size)
            if self.oracle.run({}, {k: new}).accepted:
                sizes[k] = level.axis_size
            else:
                self.notes.append(
                    _Note(
                        f"the batch size of {level.transform} is {level.axis_size} in the example and JAX refused"
                        f" {new}: a signature does not record that (JAX refuses other batch sizes when it runs)"
                    )
                )
        return sizes

    def _groups(self) -> dict[int, list[DimId]]:
        """Dims of equal size: each group is one name candidate."""
        groups: dict[int, list[DimId]] = {}
        for i, a in self.dims:
            shape = self.per[i]
            assert shape is not None
            groups.setdefault(shape[a], []).append((i, a))
        return groups

    def _fresh(self, size: int) -> int:
        """A size no dim has had: a multiple of `size`, so the divisibility the function
        may need (an even size for `reshape(2, -1)`) still holds."""
        for m in count(2):
            new = size * m if size > 1 else m
            if new not in self.taken:
                self.taken.add(new)
                return new
        raise AssertionError("unreachable")

    def _ok(self, moves: Mapping[DimId, int]) -> bool:
        return self.oracle.run(moves).accepted

    def _where(self, dims: Sequence[DimId]) -> str:
        places = [f"axis {a} of {self.labels[i]}" for i, a in dims]
        return places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]

    def _classify(self, size: int, group: list[DimId]) -> list[_Class]:
        """Name one size group: at most 3 + len(group) evaluations, usually 1 or 2."""
        if len(group) > 1:
            apart = {d: self._fresh(size) for d in group}
            if self._ok(apart):
                self.notes.append(
                    _Note(
                        f"{self._where(group)} {'both' if len(group) == 2 else 'all'} have size {size} in the"
                        " example, but JAX accepts them apart: {names}",
                        tuple(group),
                    )
                )
                return [_Class((d,), size) for d in group]
        tried = []
        for _ in range(2):
            new = self._fresh(size)
            tried.append(new)
            if self._ok(dict.fromkeys(group, new)):
                if len(group) <= 2:
                    return [_Class(tuple(group), size)]
                alone = [d for d in group if self._ok({d: self._fresh(size)})]
                rest = [d for d in group if d not in alone]
                if alone:
                    one = len(alone) == 1
                    self.notes.append(
                        _Note(
                            f"{self._where(alone)} {'has' if one else 'have'} size {size} like {self._where(rest)},"
                            f" but JAX accepts {'it' if one else 'each'} changed alone: {{names}}",
                            tuple(alone),
                        )
                    )
                blocks = self._blocks(size, rest) if len(rest) > 2 else [rest] if rest else []
                if len(blocks) > 1:
                    self.notes.append(
                        _Note(
                            f"{self._where(rest)} have size {size} in the example, but JAX accepts them changed"
                            f" in {len(blocks)} groups that each change together: {{names}}",
                            tuple(sorted(min(b) for b in blocks)),
                        )
                    )
                return [_Class((d,), size) for d in alone] + [_Class(tuple(b), size) for b in blocks]
        alone = [d for d in group if len(group) > 1 and self._ok({d: self._fresh(size)})]
        fixed = tuple(d for d in group if d not in alone)
        self.notes.append(
            _Note(
                f"{self._where(fixed)} {'is' if len(fixed) == 1 else 'are'} fixed at {size}: JAX refused"
                f" {' and '.join(map(str, tried))} (no other sizes were tried)",
                fixed,  # (no names in it: the dims let _ties take the note back)
            )
        )
        return [_Class((d,), size) for d in alone] + [_Class(fixed, size, fixed=True)]

    def _blocks(self, size: int, dims: list[DimId]) -> list[list[DimId]]:
        """Split equal-sized dims, none of which changes alone, into the pairs that must
        stay equal (`(x * y).sum() + (z * w).sum()`: x with y, z with w); the dims in no
        such pair stay one group.

        A pair is asked of JAX with the pair at one fresh size and the other dims at
        another: JAX accepts it when the pair is tied to nothing else. One evaluation per
        pair of dims not yet placed, so only for up to `MAX_PAIRED` dims; past that they
        stay one group (a note says so).
        """
        if len(dims) > MAX_PAIRED:
            self.notes.append(
                _Note(
                    f"{self._where(dims)} (size {size}) share the name {{names}}: none changes alone and"
                    f" all change together; with more than {MAX_PAIRED} of them, pairs that JAX may accept"
                    " apart were not tried",
                    tuple(dims[:1]),
                )
            )
            return [dims]
        blocks: list[list[DimId]] = []
        unpaired: list[DimId] = []
        left = list(dims)
        while left:
            d = left.pop(0)
            for e in left:
                new = self._fresh(size)
                others = dict.fromkeys((x for x in dims if x not in (d, e)), self._fresh(size))
                if self._ok({**others, d: new, e: new}):
                    blocks.append([d, e])
                    left.remove(e)
                    break
            else:
                unpaired.append(d)
        return blocks + [unpaired] if unpaired else blocks

    def _draw(self, classes: list[_Class]) -> tuple[list[_Class], list[tuple[dict[int, int], _Verdict]]]:
        """Fresh sizes for every name at once. Where JAX refuses a draw although each name
        changes alone, the names that cannot join the others are kept fixed (one
        evaluation per name) and the draws start again."""
        for _ in range(ROUNDS):
            free = [k for k, c in enumerate(classes) if c.drawn]
            draws: list[tuple[dict[int, int], _Verdict]] = []
            for _ in range(DRAWS if free or self.batches else 0):
                sizes = {k: self._fresh(classes[k].size) for k in free}
                batch = {k: self._fresh(size) for k, size in self.batches.items()}
                verdict = self.oracle.run(self._moves(classes, sizes), batch)
                if not verdict.accepted:
                    if batch and self._ok(self._moves(classes, sizes)):
                        self.notes.append(
                            _Note(
                                "JAX refuses the batch size changed together with the dimensions, so the"
                                " outputs are not followed over the batch size"
                            )
                        )
                        self.batches = {}
                    else:
                        classes = self._fix_clashing(classes, sizes)
                    break
                # A level's batch sizes are kept under key -1 - level, beside the names'.
                draws.append(({**sizes, **{-1 - k: b for k, b in batch.items()}}, verdict))
            else:
                return classes, draws
        raise self._error(
            "JAX accepts each dimension changed alone but refuses them changed together, even after"
            f" fixing some ({ROUNDS} rounds): the function constrains sizes beyond what a signature can say"
        )

    def _moves(self, classes: list[_Class], sizes: Mapping[int, int]) -> dict[DimId, int]:
        moves = {d: new for k, new in sizes.items() if k >= 0 for d in classes[k].dims}
        for c in classes:  # n + 1 moves with n
            if c.follows in moves:
                moves.update(dict.fromkeys(c.dims, moves[c.follows] + c.offset))
        return moves

    def _fix_clashing(self, classes: list[_Class], sizes: Mapping[int, int]) -> list[_Class]:
        kept: dict[int, int] = {}
        out = list(classes)
        for k, new in sizes.items():
            if self._ok(self._moves(classes, {**kept, k: new})):
                kept[k] = new
            else:
                c = classes[k]
                out[k] = _Class(c.dims, c.size, fixed=True)
                self.notes.append(
                    _Note(
                        f"{self._where(c.dims)} (size {c.size}) {'is' if len(c.dims) == 1 else 'are'} kept fixed:"
                        f" JAX accepts {'it' if len(c.dims) == 1 else 'them'} changed alone but not at {new} with the"
                        " other dimensions changed too"
                    )
                )
        return out

    def _names(self, classes: list[_Class]) -> dict[int, str]:
        """Names for the free classes, in order of first appearance (never a batch or mesh
        axis name, which the transform binds itself)."""
        pool = (f"{c}{n}" if n else c for n in count() for c in ascii_lowercase)
        names: dict[int, str] = {}
        for k, c in enumerate(classes):
            if c.drawn:
                names[k] = next(x for x in pool if x not in self.reserved)
        return names

    def _output_dims(
        self, classes: list[_Class], names: dict[int, str], draws: list[tuple[dict[int, int], _Verdict]]
    ) -> list[str | None] | None:
        """Per output leaf, its dims: each the name it follows over every draw, or the
        number it stays. A leaf with a dim that follows no name is left unchecked (None);
        the output is undeclared (None) when its structure changes or no leaf is left."""
        example = self.example.outs
        assert example is not None
        if any(v.outs is None or v.out_def != self.example.out_def for _, v in draws):
            self.notes.append(_Note("the output is left undeclared: its structure changes with the input sizes"))
            return None
        follows: dict[tuple[int, ...], str] = {
            (classes[k].size, *(sizes[k] for sizes, _ in draws)): name for k, name in names.items()
        }
        for k, size in self.batches.items():  # a dim that follows the batch size: the level's symbol
            level = self.levels[k]
            assert isinstance(level, MapStep)
            follows.setdefault((size, *(sizes[-1 - k] for sizes, _ in draws)), level.symbol)
        specs: list[str | None] = []
        for j, shape in enumerate(example):
            label = "output" + _out_path(self.example.out_def, j)
            what = "the output is left undeclared" if len(example) == 1 else f"{label} is left unchecked"
            seen_shapes = [shape] + [v.outs[j] for _, v in draws if v.outs is not None]
            if len({len(s) for s in seen_shapes}) > 1:
                specs.append(None)
                self.notes.append(_Note(f"{what}: its rank changes with the input sizes"))
                continue
            dims = []
            for a, size in enumerate(shape):
                seen = tuple(s[a] for s in seen_shapes)
                if len(set(seen)) == 1:
                    dims.append(str(size))
                elif seen in follows:
                    dims.append(follows[seen])
                else:
                    self.notes.append(
                        _Note(
                            f"{what}: its axis {a} has sizes {', '.join(map(str, seen))} over"
                            " the example and the draws, which follow no input dimension (like n + 1 or 2 n)"
                        )
                    )
                    break
            else:
                specs.append(" ".join(dims))
                continue
            specs.append(None)
        if all(s is None for s in specs):
            if len(specs) > 1:
                self.notes.append(_Note("no output leaf could be declared: the output is left undeclared"))
            return None
        return specs

    # ------------------------------------------------------------ the result

    def _spec_texts(self, classes: list[_Class], names: dict[int, str]) -> list[str | None]:
        token: dict[DimId, str] = {}
        for k, c in enumerate(classes):
            for d in c.dims:
                token[d] = c.token(names.get(k))
        texts: list[str | None] = []
        for i, shape in enumerate(self.per):
            texts.append(None if shape is None else " ".join(token[(i, a)] for a in range(len(shape))))
        return texts

    def _signature(self, classes: list[_Class], names: dict[int, str], out_specs: list[str | None] | None) -> Signature:
        texts = self._spec_texts(classes, names)
        pos = 0
        inputs: list[Any] = []
        trees: list[tuple[str, Any]] = [(str(i), a) for i, a in enumerate(self.args)]
        trees += [(k, self.kwargs[k]) for k in sorted(self.kwargs)]
        for where, tree in trees:
            leaves, treedef = jax.tree_util.tree_flatten(tree)
            mine = texts[pos : pos + len(leaves)]
            pos += len(leaves)
            try:
                inputs.append(jax.tree_util.tree_unflatten(treedef, mine))
            except Exception:  # a pytree node that will not hold dim strings: unchecked
                self.notes.append(_Note(f"argument {where} is left unchecked: its pytree type cannot hold dim strings"))
                inputs.append(None)
        output: Any = None
        if out_specs is not None:
            output = jax.tree_util.tree_unflatten(self.example.out_def, out_specs)
        if not self.kwargs:
            spec = tuple(inputs)
            return Signature(spec, output=output) if out_specs is not None else Signature(spec)
        params = self._params()
        if params is None:
            raise self._error(
                "keyword arguments need parameter names, and the function's positional ones cannot be read",
                hint="pass the arguments positionally",
            )
        named: dict[str, Any] = dict(zip(params + sorted(self.kwargs), inputs, strict=True))
        if out_specs is not None:
            named["return"] = output
        return Signature(named)

    def _params(self) -> list[str] | None:
        found = parameter_names(self.subject.fun)
        if found is None or len(found[0]) < len(self.args):
            return None
        return found[0][: len(self.args)]

    def _disagreement(self, sig: Signature, samples: Sequence[_Verdict]) -> str | None:
        """Why the transform declaring `sig` predicts otherwise than JAX on a sample (None: it agrees)."""
        with warnings.catch_warnings():  # e.g. smap's negative-axis warning, said once already
            warnings.simplefilter("ignore", AxisCheckWarning)
            try:
                declared = self.subject.rebuild(sig)
            except AxisCheckError as err:
                return f"declaring {sig} fails: {err.problem}"
            for v in samples:
                args, kwargs = v.call
                try:
                    got = declared.predict(*args, **kwargs).shapes
                except AxisCheckError as err:
                    return f"with {sig} axischeck refuses arguments JAX accepts: {err.problem}"
                leaves, out_def = jax.tree_util.tree_flatten(got)
                want = [Shape(x.shape) for x in v.batched]
                if out_def != v.out_def or list(leaves) != want:
                    return (
                        f"with {sig} axischeck predicts {', '.join(map(format_shape, leaves))}"
                        f" where JAX gives {', '.join(map(format_shape, want))}"
                    )
        return None

    def _inference(self, sig: Signature, notes: tuple[str, ...]) -> Inference:
        fun = self.subject.fun
        name = getattr(fun, "__name__", None)
        kinds_flat = [_kind(x, k) for x, k in zip(self.oracle.leaves, self.known, strict=True)]
        kinds: list[tuple[str, ...]] = []
        pos = 0
        for tree in sig.core.inputs:
            n = len(tree.leaves)
            kinds.append(tuple(kinds_flat[pos : pos + n]))
            pos += n
        all_known = all(self.known)
        out_kinds = tuple(_kind(x, all_known) for x in self.example.batched) if sig.core.output is not None else ()
        params = self._params() if sig.core.params is None else None
        return Inference(
            notes,
            name if isinstance(name, str) else "f",
            tuple(params) if params is not None else None,
            tuple(kinds),
            out_kinds,
        )


def _kind(x: Any, known: bool) -> str:
    """jaxtyping's dtype kind of an example leaf (`Shaped` when its dtype is not known)."""
    if not known:
        return "Shaped"
    for py, kind in ((bool, "Bool"), (int, "Int"), (float, "Float"), (complex, "Complex")):
        if isinstance(x, py):  # a Python scalar (bool before int: a bool is an int)
            return kind
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return "Shaped"
    for base, kind in (
        (jax.dtypes.prng_key, "Key"),
        (jnp.bool_, "Bool"),
        (jnp.unsignedinteger, "UInt"),
        (jnp.signedinteger, "Int"),
        (jnp.floating, "Float"),
        (jnp.complexfloating, "Complex"),
    ):
        try:
            if jnp.issubdtype(dtype, base):
                return kind
        except TypeError:
            return "Shaped"
    return "Shaped"


def _listed(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _out_path(treedef: Any, j: int) -> str:
    """The pytree path of output leaf `j` (`""` for a single array, `[0]`, `['y']`, ...)."""
    paths = jax.tree_util.tree_flatten_with_path(jax.tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves))[0]
    return jax.tree_util.keystr(paths[j][0]) if j < len(paths) else f"[{j}]"
