"""Fix suggestions: search the small space of nearby options with the engine itself.

Only options the engine accepts are suggested (so JAX accepts them too), and nothing is
suggested when no option works or too many do to tell which was meant.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec

from .._core._axes import freeze_in_axes, freeze_out_axes
from .._core._dims import ArraySpec, Variadic
from .._core._errors import AxisCheckError, FunctionError, OutputError
from .._core._explain import tables_unread
from .._core._jax_compat import INFER_SPECS, spec_entries, unbound_axis_name, varying_axes
from .._core._leaves import Call, Leaf, abstract, struct
from .._core._shape import Shape
from .._core._steps import MapStep
from .._core._text import and_list
from .._core._trees import PrefixMismatch, broadcast_prefix, seq_repr
from ._levels import MapLevel, read_sizes, resolve_in_axes, takes
from ._models import MapModel, Model, Outcome, SignatureModel, TraceModel, chain, is_symbolic, run
from ._shard_model import ShardModel
from ._trace import Replay, replay_of

MAX_TRIES = 48
MAX_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One change that makes every check pass, as text and as data: transform options to
    pass again, and changes to the call (an argument passed transposed, padded along one
    axis, or keyword arguments passed by position instead), which `as_kwargs()` leaves
    out: the options alone are the fix only where the call needs no change.

    ```python
    >>> f = ax.vmap(lambda x, s: x * s)
    >>> try:
    ...     f.predict((4, 3), ())
    ... except ax.AxisCheckError as err:
    ...     print(err.suggestions[0].as_kwargs())
    {'in_axes': (0, None)}
    ```
    """

    text: str
    options: tuple[tuple[str, Any], ...]  # e.g. (("in_axes", (0, 1, 0)),)
    transposes: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (argument position, axis order)
    pads: tuple[tuple[int, int, int], ...] = ()  # (argument position, axis, padded size)
    by_position: tuple[str, ...] = ()  # keyword arguments to pass next by position, in this order
    # Another reading the engine checked and the arguments support as well as the fix's:
    # shown beside the fix for the user to choose, never as the fix itself.
    tie: bool = False
    # Why it runs without doing what was meant (a batch size none of the user's in_axes
    # read, say): shown as such, never as the fix.
    shapes_only: str | None = None
    head: str | None = None  # the change in a few words, where the options' reprs are long (a mesh)

    def as_kwargs(self) -> dict[str, Any]:
        """The transform options to pass again ({} when the change is to the arguments)."""
        return dict(self.options)

    def headline(self) -> str | None:
        """The change in a few words for a message's first line (`in_axes=(0, 0)`,
        `pass b by position`), or None when only the full text says it (a transposed or
        padded argument)."""
        if self.head is not None or self.transposes or self.pads:
            return self.head
        options = ", ".join(f"{k}={seq_repr(v) if isinstance(v, tuple) else repr(v)}" for k, v in self.options)
        if self.by_position:
            moved = f"pass {', '.join(self.by_position)} by position"
            return f"{moved}, with {options}" if options else moved
        return options or None


class _Budget:
    """How many more times the fix search may run the user's function (a trace each).
    Every run is counted where it happens (see `counted`), so a candidate that traces
    twice (a record that fails, then the function under the real nesting) costs two, and
    a run past the budget fails its candidate."""

    def __init__(self, traces: int) -> None:
        self.traces = traces

    def allows(self, model: Model) -> bool:
        """Whether trying `model` is worth starting: it runs no user code, or some runs are left."""
        return self.traces > 0 or is_symbolic(model) or _replayed(model)

    def counted(self, model: Model) -> Model:
        """`model` with each of its functions counting its runs against this budget."""
        fn = getattr(model, "fn", None)
        changes: dict[str, Any] = {}
        if fn is not None and not isinstance(fn, Replay):
            changes["fn"] = self._counting(fn)
        if model.inner is not None:
            changes["inner"] = self.counted(model.inner)
        return replace(model, **changes) if changes else model  # type: ignore[type-var]

    def _counting(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run_counted(*args: Any, **kwargs: Any) -> Any:
            if self.traces <= 0:
                raise _OutOfTraces
            self.traces -= 1
            return fn(*args, **kwargs)

        return run_counted


class _OutOfTraces(Exception):
    """The fix search has run the user's function as often as its budget allows."""


def _replayed(model: Model) -> bool:
    """Whether every function in `model` is a record of one trace (runs no user code)."""
    fns = [fn for fn in (getattr(m, "fn", None) for m in chain(model)) if fn is not None]
    return bool(fns) and all(isinstance(fn, Replay) for fn in fns)


def _with_replay(model: ShardModel, replay: Replay) -> ShardModel:
    """`model` asking `replay` (the user's function as one trace recorded it) in place of
    the function: a candidate checked by the engine and JAX without another trace."""
    inner = replace(model.inner, fn=replay) if isinstance(model.inner, TraceModel) else model.inner
    return replace(model, fn=replay, inner=inner)


def _works(model: Model, call: Call, budget: _Budget) -> Outcome | None:
    """The engine's outcome with this candidate, or None when it fails too."""
    if isinstance(model, MapModel) and not is_symbolic(model):
        try:  # the level's own checks run no user code: they spare the trace budget
            with tables_unread():
                if not takes(model.level, call):
                    return None
        except Exception:
            return None
    if not budget.allows(model):
        return None
    try:
        with tables_unread():
            return run(model, call)
    except AxisCheckError:
        return None
    except Exception:  # a trace that fails for other reasons is no fix either
        return None


# ------------------------------------------------------------------------ ranking


def _declared_ranks(model: Model) -> list[int | None] | None:
    """The per-example rank of each declared output leaf (None: a variadic or any-shape
    leaf), when the innermost model declares its output."""
    *_, innermost = chain(model)
    if not isinstance(innermost, SignatureModel) or innermost.core.output is None:
        return None
    return [
        len(spec.dims) if isinstance(spec, ArraySpec) and not any(isinstance(d, Variadic) for d in spec.dims) else None
        for spec in innermost.core.output.leaves
    ]


def _given_sizes(model: MapModel, call: Call) -> frozenset[int]:
    """The batch sizes the user's own in_axes read (and axis_size): a fix whose batch size
    is none of them maps an axis the user never pointed at."""
    try:
        with tables_unread():
            axes = resolve_in_axes(model.level, call, ())
    except AxisCheckError:  # the structure itself is wrong: nothing to go by
        return frozenset()
    leaves, _ = call.flat()
    return read_sizes(model.level, leaves, axes)


def _shapes_only(model: MapModel, call: Call, s: Suggestion, outcome: Outcome) -> str | None:
    """Why a working candidate only makes the shapes agree, if it does: an output rank
    other than the declared one; or, with no declared inputs to vouch for the per-example
    shapes, mapped arguments of another size left unmapped where no more of the mapped
    arrays share the size it keeps (Flax's per-example gradients keep x and y's 8 and
    unmap w's 3: a fix; Flax's VAE example, logits of batch 64 against labels of 8, has
    one on each side: nothing says which batch was meant)."""
    if _wrong_rank(model, outcome):
        return "its output rank is not the one the signature declares"
    size = _batch_size(outcome)
    if size is None or _declares_inputs(model):
        return None
    axes = dict(s.options).get("in_axes")
    before = _per_argument(model.level.in_axes.value, len(call.args))
    if not isinstance(axes, tuple) or before is None or len(axes) != len(before):
        return None
    dissent = [
        call.arg_labels[i]
        for i, (b, a) in enumerate(zip(before, axes, strict=True))
        if a is None and _size_at(call.args[i], b) not in (None, size)
    ]
    kept = sum(len(jax.tree_util.tree_leaves(arg)) for arg, a in zip(call.args, axes, strict=True) if a is not None)
    if dissent and kept <= len(dissent):
        return (
            f"it unmaps {and_list(dissent)}: as many mapped arrays have another size as keep its batch"
            f" size, {size}, so nothing says which batch you meant"
        )
    return None


def _size_at(arg: Any, axis: Any) -> int | None:
    """The size of an array argument along its in_axes entry (None: not one array, or no such axis)."""
    if not isinstance(arg, Leaf) or arg.shape is None or type(axis) is not int:
        return None
    return arg.shape[axis] if -len(arg.shape) <= axis < len(arg.shape) else None


def _declares_inputs(model: Model) -> bool:
    """Whether the innermost model declares the arguments' per-example shapes (a
    signature), which a working candidate then matches."""
    *_, innermost = chain(model)
    return isinstance(innermost, SignatureModel)


def _wrong_rank(model: MapModel, outcome: Outcome) -> bool:
    """Whether a working candidate's output rank is other than the declared one."""
    declared = _declared_ranks(model)
    levels = sum(1 for m in chain(model) if isinstance(m, MapModel))
    outs = jax.tree_util.tree_leaves(outcome.shapes, is_leaf=lambda x: isinstance(x, Shape))
    return (
        declared is not None
        and len(declared) == len(outs)
        and any(r is not None and len(o) != r + levels for o, r in zip(outs, declared, strict=True))
    )


def _batch_size(outcome: Outcome) -> int | None:
    step = next((st for st in outcome.steps if isinstance(st, MapStep)), None)
    return step.axis_size if step is not None else None


def _odd_size(given: frozenset[int], outcome: Outcome) -> bool:
    """Whether a working candidate's batch size is none of those the user's own in_axes
    read: it maps an axis the user never pointed at."""
    size = _batch_size(outcome)
    return bool(given) and size is not None and size not in given


def _ranked(model: MapModel, call: Call, found: list[tuple[Suggestion, Outcome]]) -> list[Suggestion]:
    """The working options judged: the first (in search order) of those that do what the
    arguments say was meant is the fix, the others ties; the rest only make the shapes
    agree, and say why. A batch size none of the user's in_axes read is what was meant
    only where no option keeps one they read (the user pointed at the wrong axis). When
    too many are as plausible, all of them (and `suggest` shows none: any one would be a
    guess)."""
    if not found:
        return []
    given = _given_sizes(model, call)
    reasons = [_shapes_only(model, call, s, outcome) for s, outcome in found]
    odd = [_odd_size(given, outcome) for _, outcome in found]
    pointed = any(why is None and not o for why, o in zip(reasons, odd, strict=True))
    judged = []
    for (s, outcome), why, odd_size in zip(found, reasons, odd, strict=True):
        if why is None and pointed and odd_size:
            why = f"its batch size, {_batch_size(outcome)}, is none of those your in_axes read"
        judged.append(replace(s, shapes_only=why))
    meant = [s for s in judged if s.shapes_only is None]
    if len(meant) > MAX_SHOWN:
        return meant
    only = [s for s in judged if s.shapes_only is not None]
    return [*meant[:1], *(replace(s, tie=True) for s in meant[1:]), *only]


def _describe_arg(call: Call, i: int, axis: int | None) -> str:
    name = call.arg_labels[i]
    if axis is None:
        return f"leave {name} unmapped"
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    size = leaf.shape[axis] if leaf.shape is not None and -len(leaf.shape) <= axis < len(leaf.shape) else "?"
    return f"map {name}'s axis {axis} (size {size})"


def _in_axes_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    current = model.level.in_axes.value
    n = len(call.args)
    entries = _per_argument(current, n)
    if not entries:
        return []
    choices: list[list[int | None]] = []
    for i, arg in enumerate(call.args):
        leaves = jax.tree_util.tree_leaves(arg)
        if len(leaves) != 1 or leaves[0].label != call.arg_labels[i] or leaves[0].shape is None:
            # a pytree (a params dict above all) may be left unmapped as a whole; its axes
            # inside are the user's to choose
            choices.append([entries[i]] if entries[i] is None or not leaves else [None])
            continue
        if not (entries[i] is None or type(entries[i]) is int):
            choices.append([entries[i]])
            continue
        rank = len(leaves[0].shape)
        choices.append([a for a in [*range(rank), None] if a != entries[i]])
    # Every nearby candidate the level's own checks accept (no trace), the most plausible
    # first: the trace budget goes to the readings the arguments support, not to the
    # first that happens to run.
    found: list[tuple[Suggestion, Outcome]] = []
    for edits in (1, 2):  # the smallest edit that works
        candidates: list[tuple[tuple[int, int, int, int], int, tuple[Any, ...], tuple[int, ...]]] = []
        for axes, idx in itertools.islice(_edited(entries, choices, edits), MAX_TRIES):
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            try:
                with tables_unread():
                    if not takes(level, call):
                        continue
            except Exception:
                continue
            candidates.append((_intent(entries, axes, level, call), len(candidates), axes, idx))
        best: tuple[int, int, int] | None = None
        for intent, _, axes, idx in sorted(candidates):
            if best is not None and intent[:3] != best:
                break  # a less supported reading than the one found: no fix, a guess
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            outcome = _works(MapModel(level, model.inner, model.fn), call, budget)
            if outcome is not None:
                why = " and ".join(_describe_arg(call, i, axes[i]) for i in idx)
                found.append((Suggestion(f"in_axes={seq_repr(axes)} would {why}", (("in_axes", axes),)), outcome))
                best = intent[:3]
        if found:
            break
    return _ranked(model, call, found)


def _scalar_leaf_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """A container argument mapped whole (one int entry) that holds scalars, which have no
    axis to map: the entry written out over the container, None at its scalar leaves
    (jax#3161: `{'a': None, 'b': 0}` for a dict of a scalar and a vector). Array scalars
    only: a Python number among arrays is more often a stray (jax#4563's `z + [0]`),
    whose fix is to drop it, not to carry it along unmapped."""
    entries = _per_argument(model.level.in_axes.value, len(call.args))
    if entries is None:
        return []
    axes = list(entries)
    for i, arg in enumerate(call.args):
        leaves = jax.tree_util.tree_leaves(arg)
        if any(isinstance(leaf.value, (bool, int, float, complex)) for leaf in leaves):
            continue
        scalars = [leaf for leaf in leaves if leaf.shape == ()]
        if type(entries[i]) is int and isinstance(arg, (dict, tuple, list)) and scalars and len(scalars) < len(leaves):
            axes[i] = jax.tree_util.tree_map(lambda leaf, e=entries[i]: None if leaf.shape == () else e, arg)
    if axes == entries:
        return []
    fixed = tuple(axes)
    level = replace(model.level, in_axes=freeze_in_axes(fixed))
    if not _works(MapModel(level, model.inner, model.fn), call, budget):
        return []
    return [Suggestion(f"in_axes={seq_repr(fixed)} would leave the scalars inside unmapped", (("in_axes", fixed),))]


def _per_argument(in_axes: Any, n: int) -> list[Any] | None:
    """in_axes as one entry per positional argument (a single entry stands for all), or
    None where a tuple's length is not the arguments'."""
    entries = list(in_axes) if isinstance(in_axes, tuple) else [in_axes] * n
    return entries if len(entries) == n else None


def _edited(
    entries: list[Any], choices: list[list[int | None]], edits: int
) -> Iterator[tuple[tuple[Any, ...], tuple[int, ...]]]:
    """Every in_axes that changes `edits` of `entries` to one of their `choices`, and the
    positions it changes."""
    for idx in itertools.combinations(range(len(entries)), edits):
        for values in itertools.product(*(choices[i] for i in idx)):
            cand = list(entries)
            for i, v in zip(idx, values, strict=True):
                cand[i] = v
            yield tuple(cand), idx


def _static_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """pmap traces every argument it does not map, Python scalars too: one the function
    needs as a Python value (`range(n)`) must be static. Tried first for the positional
    Python scalars of a pmap, together: in_axes None would trace them."""
    level = model.level
    if level.kind != "pmap":
        return []
    scalars = [
        i
        for i, arg in enumerate(call.args)
        if i not in level.static and isinstance(arg, Leaf) and isinstance(arg.value, (bool, int, float, complex))
    ]
    if not scalars:
        return []
    static = tuple(sorted({*level.static, *scalars}))
    if not _works(MapModel(replace(level, static=static), model.inner, model.fn), call, budget):
        return []
    names = ", ".join(call.arg_labels[i] for i in scalars)
    return [
        Suggestion(
            f"static_broadcasted_argnums={seq_repr(static)} would pass {names} to every device as a Python value"
            " (pmap traces an argument it does not map)",
            (("static_broadcasted_argnums", static),),
        )
    ]


def _intent(original: list[Any], axes: tuple[Any, ...], level: MapLevel, call: Call) -> tuple[int, int, int, int]:
    """How far candidate in_axes stray from what the call's arguments say was meant,
    lower first (the rule every axes fix is ranked by):

    1. how many arguments the user mapped it leaves unmapped (each was mapped for a reason);
    2. how few of those arguments have an axis of its batch size at all (the size most of
       them share is the batch: `(0, 1)` on (10, 4) and (10, 2) meant 10, not 2);
    3. how many entries it changes (the smallest edit);
    4. among equals, an edit of a later argument first: the leading argument is usually
       the data whose layout the program sets, and the arguments after it are fitted to
       it (JAX's SPMD MNIST example: labels laid out (per device, devices) next to images
       laid out (devices, per device, ...) want `(0, 1)`, not `(1, 0)`).
    """
    unmapped = sum(1 for o, a in zip(original, axes, strict=True) if o is not None and a is None)
    leaves, _ = call.flat()
    sizes = read_sizes(level, leaves, resolve_in_axes(level, call, ()))
    size = next(iter(sizes)) if len(sizes) == 1 else None
    support = 0
    for i, entry in enumerate(original):
        if entry is not None and size is not None:
            shapes = [leaf.shape for leaf in jax.tree_util.tree_leaves(call.args[i]) if leaf.shape is not None]
            support += any(size in shape for shape in shapes)
    edited = [i for i, (o, a) in enumerate(zip(original, axes, strict=True)) if o != a]
    return unmapped, -support, len(edited), -min(edited, default=0)


def _axis_size_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    if model.level.axis_size is None:
        return []
    without = MapModel(replace(model.level, axis_size=None), model.inner, model.fn)
    if not budget.allows(without):
        return []
    try:
        step = run(without, call).steps[0]
    except Exception:
        return []
    size = getattr(step, "axis_size", None)
    return [Suggestion(f"axis_size={size} (or leave it out) matches the mapped arguments", (("axis_size", size),))]


def _unmapped_size_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """A vmap that maps nothing (every in_axes entry None, no axis_size) needs axis_size
    (jax#5021). Its value is checked, not guessed, only where it cannot change the result:
    every output unmapped (out_axes None) and no axis name for a collective to count, so
    any size computes the function once, as the call asks. Otherwise the size is how many
    copies the user wants, theirs to say: no fix."""
    level = model.level
    if level.kind != "vmap" or level.axis_size is not None or level.axis_name is not None:
        return []
    leaves, _ = call.flat()
    try:
        with tables_unread():
            axes = resolve_in_axes(level, call, ())
    except AxisCheckError:
        return []
    if any(a is not None and leaf.shape is not None for leaf, a in zip(leaves, axes, strict=True)):
        return []  # something is mapped: the batch size is there to read
    outcome = _works(MapModel(replace(level, axis_size=1), model.inner, model.fn), call, budget)
    step = next((s for s in outcome.steps if isinstance(s, MapStep)), None) if outcome is not None else None
    if step is None or any(row.axis is not None for row in step.outs):
        return []
    return [
        Suggestion(
            "axis_size=1: nothing is mapped and every output is unmapped (out_axes None),"
            " so any size computes the function once",
            (("axis_size", 1),),
        )
    ]


def _out_axes_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    current = model.level.out_axes.value
    if not (current is None or type(current) is int):
        return []
    found = []
    for cand in (0, -1, 1):
        if cand == current:
            continue
        level = replace(model.level, out_axes=freeze_out_axes(cand))
        if _works(MapModel(level, model.inner, model.fn), call, budget):
            found.append(Suggestion(f"out_axes={cand}", (("out_axes", cand),)))
            break
    return found


def _with_leaf_shape(call: Call, i: int, shape: tuple[int, ...]) -> Call:
    """The call with argument `i` (one array) of another shape, same dtype."""
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    value = struct(Shape(shape), abstract(leaf.value).dtype)
    new = Leaf(leaf.label, Shape(shape), value, Shape(shape), tuple(range(len(shape))))
    return Call(call.args[:i] + (new,) + call.args[i + 1 :], call.kwargs, call.arg_params, call.arg_labels)


def _transposed(call: Call, i: int, perm: tuple[int, ...]) -> Call:
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    assert leaf.shape is not None
    return _with_leaf_shape(call, i, tuple(leaf.shape[p] for p in perm))


def _transpose_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """Transposing one argument, when no change of axes does it (arrays of rank <= 4)."""
    found: list[tuple[Suggestion, Outcome]] = []
    tries = 0
    for i, arg in enumerate(call.args):
        leaves = jax.tree_util.tree_leaves(arg)
        if len(leaves) != 1 or leaves[0].label != call.arg_labels[i] or leaves[0].shape is None:
            continue
        rank = len(leaves[0].shape)
        if not 2 <= rank <= 4:
            continue
        for perm in itertools.permutations(range(rank)):
            if perm == tuple(range(rank)):
                continue
            tries += 1
            if tries > MAX_TRIES:
                return _ranked(model, call, found)
            outcome = _works(model, _transposed(call, i, perm), budget)
            if outcome is not None:
                name = call.arg_labels[i]
                shape = tuple(leaves[0].shape[p] for p in perm)
                text = f"passing jnp.transpose({name}, {perm}) (shape {shape}) instead of {name} would agree"
                found.append((Suggestion(text, (), transposes=((i, perm),)), outcome))
    return _ranked(model, call, found)


def _keyword_options(model: MapModel, positional: Call, moved: tuple[str, ...], budget: _Budget) -> list[Suggestion]:
    """Keyword arguments with in_axes entries meant for them: JAX maps keywords over axis 0
    and gives them no entry, so the fix is to pass them by position (never an entry for
    a keyword). `positional` is the call with `moved` passed by position."""
    if not _works(model, positional, budget):
        return []
    names = ", ".join(moved)
    axes = model.level.in_axes.value
    return [
        Suggestion(
            f"pass {names} by position (JAX maps keyword arguments over axis 0 and gives them no"
            f" in_axes entry); then in_axes={seq_repr(axes)} applies",
            (("in_axes", axes),),
            by_position=moved,
        )
    ]


def _static_keyword_options(
    model: MapModel, positional: Call, moved: tuple[str, ...], budget: _Budget
) -> list[Suggestion]:
    """A pmap argument that static_broadcasted_argnums names, passed by keyword (jax#3007):
    the positions count, so the fix is to pass the keyword arguments by position (all of
    them, in the function's order), where the named one is static as the option says."""
    level = model.level
    first = len(positional.args) - len(moved)
    named = [i for i in level.static if first <= i < len(positional.args)]
    if level.kind != "pmap" or not named or not _works(model, positional, budget):
        return []
    static = and_list([f"{positional.arg_labels[i]} is argument {i}" for i in named])
    return [
        Suggestion(
            f"pass {', '.join(moved)} by position, not by keyword:"
            f" static_broadcasted_argnums counts positions ({static})",
            (),
            by_position=moved,
        )
    ]


def _tupled(axes: Any) -> Any:
    """`axes` with every list inside made a tuple (JAX reads a nested list as another pytree)."""
    if isinstance(axes, (list, tuple)):
        return tuple(_tupled(a) for a in axes)
    if isinstance(axes, dict):
        return {k: _tupled(v) for k, v in axes.items()}
    return axes


def _structure_options(model: MapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """in_axes written in the wrong shape: lists inside where the arguments hold tuples, a
    tuple of the wrong length, the axes of one tuple argument not nested in a 1-tuple."""
    axes = model.level.in_axes.value
    n = len(call.args)
    candidates: list[tuple[Any, str]] = []
    if isinstance(axes, (tuple, list)):
        tupled = _tupled(axes)
        if tupled != tuple(axes) or any(isinstance(a, list) for a in axes):
            candidates.append((tupled, "tuples, not lists, inside in_axes: a list does not match a tuple argument"))
    if isinstance(axes, tuple) and len(axes) != n:
        if n == 1:
            candidates.append(((axes,), "nests the axes of the one tuple argument"))
        if len(axes) == n + 1:
            for i in range(len(axes)):
                candidates.append((axes[:i] + axes[i + 1 :], "one entry per positional argument"))
        if len(axes) < n:
            for fill in (0, None):
                candidates.append((axes + (fill,) * (n - len(axes)), "one entry per positional argument"))
    found: list[tuple[Suggestion, Outcome]] = []
    seen: list[Any] = []
    for cand, why in candidates:
        if cand in seen or len(found) > MAX_SHOWN:
            continue
        seen.append(cand)
        level = replace(model.level, in_axes=freeze_in_axes(cand))
        outcome = _works(MapModel(level, model.inner, model.fn), call, budget)
        if outcome is not None:
            found.append((Suggestion(f"in_axes={seq_repr(cand)} ({why})", (("in_axes", cand),)), outcome))
    return _ranked(model, call, found)


def _axis_name_options(model: MapModel, call: Call, err: AxisCheckError, budget: _Budget) -> list[Suggestion]:
    """A collective over a name no transform binds: naming this level's axis so."""
    name = unbound_axis_name(err.__cause__ or err)
    if name is None or model.level.axis_name == name:
        return []
    level = replace(model.level, axis_name=name)
    if not _works(MapModel(level, model.inner, model.fn), call, budget):
        return []
    bound = "no axis name" if model.level.axis_name is None else f"axis_name={model.level.axis_name!r}"
    return [
        Suggestion(
            f"axis_name={name!r} (this {model.level.kind} has {bound}) binds the name the collective uses",
            (("axis_name", name),),
        )
    ]


def _entries(spec: PartitionSpec) -> list[tuple[str, ...]]:
    """Each dim's mesh axes in a spec (`None` -> ())."""
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in spec_entries(spec)]


def _spec_of(entries: list[tuple[str, ...]]) -> PartitionSpec:
    return PartitionSpec(*[None if not e else e[0] if len(e) == 1 else e for e in entries])  # type: ignore[no-untyped-call]


def _shard_in_options(model: ShardModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """An axis the mesh axes do not divide: shard it over another mesh axis that does,
    give the same devices another mesh shape, or pad it to a multiple (each checked by
    the engine)."""
    o = model.options
    mesh = o.mesh
    n = len(call.args)
    if o.smap_axes is not None:
        return _smap_scalar_options(model, call, budget)
    if mesh is None or n == 0:
        return []
    specs = o.in_specs if isinstance(o.in_specs, tuple) else (o.in_specs,) * n
    if len(specs) != n:
        return []
    found: list[Suggestion] = []
    for i, (arg, spec) in enumerate(zip(call.args, specs, strict=True)):
        if not isinstance(arg, Leaf) or arg.shape is None or not isinstance(spec, PartitionSpec):
            continue
        entries = _entries(spec)
        for d, axes in enumerate(entries[: len(arg.shape)]):
            size, split = arg.shape[d], mesh.size(axes) if axes else 1
            if not axes or size % split == 0:
                continue
            used = {a for e in entries for a in e}
            for other, other_size in zip(mesh.names, mesh.sizes, strict=True):
                if other in used or size % other_size or other_size == 1:
                    continue
                new_spec = _spec_of([*entries[:d], (other,), *entries[d + 1 :]])
                new_specs = new_spec if not isinstance(o.in_specs, tuple) else specs[:i] + (new_spec,) + specs[i + 1 :]
                candidate = replace(model, options=replace(o, in_specs=new_specs))
                if _works(candidate, call, budget):
                    found.append(
                        Suggestion(
                            f"in_specs={new_specs!r} splits axis {d} of {arg.label} (size {size}) over mesh axis"
                            f" {other!r} (size {other_size}), which divides it",
                            (("in_specs", new_specs),),
                        )
                    )
                    break
            found += _reshaped_mesh_options(model, call, (arg.label, d, size), budget)
            padded = -(-size // split) * split
            shape = (*arg.shape[:d], padded, *arg.shape[d + 1 :])
            if _works(model, _with_leaf_shape(call, i, shape), budget):
                found.append(
                    Suggestion(
                        f"pad axis {d} of {arg.label} from {size} to {padded} (a multiple of {split}, e.g. jnp.pad)",
                        (),
                        pads=((i, d, padded),),
                    )
                )
            return found  # the first dim that does not divide: the one the error names
    return found


def _reshaped_mesh_options(
    model: ShardModel, call: Call, refused: tuple[str, int, int], budget: _Budget
) -> list[Suggestion]:
    """The same devices in another mesh shape, same axis names and axis types (what
    reshaping `jax.devices()` differently builds), under which every argument's spec
    divides it: LWM#39's batch of one split over ('dp', 'fsdp') was fixed by moving the
    devices to 'sp'. The shape that resizes the fewest axes is checked by the engine,
    and offered only where the outputs' shapes do not depend on the mesh's shape: on
    arguments that both meshes divide, both give the same output shapes (a per-device
    sum stacked over 'dp' has as many rows as 'dp' has devices: reshaping changes it).
    Three traces of the function."""
    o = model.options
    mesh = o.mesh
    if mesh is None or not isinstance(o.jax_mesh, (Mesh, AbstractMesh)) or o.in_specs is INFER_SPECS:
        return []
    split: list[tuple[int, int, tuple[str, ...]]] = []  # each argument dimension split over mesh axes
    for i, (arg, spec) in enumerate(zip(call.args, _in_specs(o, len(call.args)), strict=False)):
        if isinstance(arg, Leaf) and arg.shape is not None and isinstance(spec, PartitionSpec):
            split += [(i, d, axes) for d, axes in enumerate(_entries(spec)[: len(arg.shape)]) if axes]
    resized = sorted(_factorings(math.prod(mesh.sizes), len(mesh.sizes)), key=lambda s: _changes(s, mesh.sizes))

    def divides(sizes: tuple[int, ...]) -> bool:
        shape = replace(mesh, sizes=sizes)
        return sizes != mesh.sizes and all(call.args[i].shape[d] % shape.size(axes) == 0 for i, d, axes in split)

    sizes = next(filter(divides, resized), None)
    if sizes is None:
        return []
    new_mesh = _mesh_of_shape(o.jax_mesh, sizes)
    reshaped = replace(model, options=replace(o, mesh=replace(mesh, sizes=sizes), jax_mesh=new_mesh))
    if _works(reshaped, call, budget) is None:
        return []
    divisible = _times_devices(call, split, math.prod(sizes))
    before, after = _works(model, divisible, budget), _works(reshaped, divisible, budget)
    if before is None or after is None or before.shapes != after.shapes:
        return []
    label, d, size = refused
    shape = ", ".join(f"{n!r}: {k}" for n, k in zip(mesh.names, sizes, strict=True))
    return [
        Suggestion(
            f"the mesh reshaped to {sizes} ({{{shape}}}), the same {math.prod(sizes)} devices, so that axis {d} of"
            f" {label} (size {size}) splits evenly: mesh={_mesh_code(o.jax_mesh, sizes)}",
            (("mesh", new_mesh),),
            head=f"the mesh reshaped to {sizes}",
        )
    ]


def _times_devices(call: Call, split: list[tuple[int, int, tuple[str, ...]]], devices: int) -> Call:
    """The call with every dimension split over mesh axes `devices` times larger: one
    that every mesh shape of those devices divides."""
    for i in sorted({i for i, _, _ in split}):
        shape = list(call.args[i].shape)
        for j, d, _ in split:
            if j == i:
                shape[d] *= devices
        call = _with_leaf_shape(call, i, tuple(shape))
    return call


def _mesh_code(mesh: Mesh | AbstractMesh, sizes: tuple[int, ...]) -> str:
    """The code that builds `_mesh_of_shape(mesh, sizes)`, where `mesh` is the user's mesh
    (`jax.make_mesh` would not do: it makes Explicit axes by default)."""
    kinds = [f"jax.sharding.AxisType.{t.name}" for t in mesh.axis_types]
    types = "" if all(t == AxisType.Auto for t in mesh.axis_types) else f", axis_types=({', '.join(kinds)},)"
    if isinstance(mesh, Mesh):
        return f"jax.sharding.Mesh(mesh.devices.reshape{sizes}, {mesh.axis_names}{types})"
    return f"jax.sharding.AbstractMesh({sizes}, {mesh.axis_names}{types})"


def _factorings(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to write `total` as an ordered product of `parts` positive sizes."""
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total + 1):
        if total % first == 0:
            for rest in _factorings(total // first, parts - 1):
                yield (first, *rest)


def _changes(sizes: tuple[int, ...], now: tuple[int, ...]) -> tuple[int, float, tuple[int, ...]]:
    """How many axes a mesh shape resizes (fewest first), then how far (by factors: 4 x 2
    goes to 2 x 4 before 1 x 8, which would leave the first axis splitting nothing)."""
    moved = sum(abs(math.log(a / b)) for a, b in zip(sizes, now, strict=True))
    return sum(a != b for a, b in zip(sizes, now, strict=True)), moved, sizes


def _mesh_of_shape(mesh: Mesh | AbstractMesh, sizes: tuple[int, ...]) -> Mesh | AbstractMesh:
    """`mesh` with its devices (or abstract sizes) laid out in another shape."""
    if isinstance(mesh, Mesh):
        return Mesh(mesh.devices.reshape(sizes), mesh.axis_names, axis_types=mesh.axis_types)
    return AbstractMesh(sizes, mesh.axis_names, axis_types=mesh.axis_types)


def _surplus_none_options(model: ShardModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """in_specs entries longer than their argument's rank only by trailing Nones (jax#18951:
    `P(None)` for a scalar): a None splits nothing, so the spec without them is the
    same split, and JAX takes it. A surplus that names a mesh axis asks for a split the
    argument cannot have: what was meant is not for the engine to say."""
    o = model.options
    n = len(call.args)
    if o.smap_axes is not None or o.in_specs is INFER_SPECS or n == 0:
        return []
    specs = _in_specs(o, n)
    if len(specs) != n:
        return []
    new_specs = list(specs)
    trimmed: list[str] = []
    for i, (arg, spec) in enumerate(zip(call.args, specs, strict=True)):
        if not isinstance(arg, Leaf) or arg.shape is None or not isinstance(spec, PartitionSpec):
            continue
        entries = _entries(spec)
        if len(entries) <= len(arg.shape):
            continue
        while len(entries) > len(arg.shape) and not entries[-1]:
            entries.pop()
        new_specs[i] = _spec_of(entries)
        trimmed.append(f"{arg.label} (rank {len(arg.shape)})")
    if not trimmed:
        return []
    fixed: Any = tuple(new_specs) if isinstance(o.in_specs, tuple) else new_specs[0]
    if not isinstance(o.in_specs, tuple) and any(s != fixed for s in new_specs):
        return []  # one spec for all the arguments: it must suit each of them
    if not _works(replace(model, options=replace(o, in_specs=fixed)), call, budget):
        return []
    return [
        Suggestion(
            f"in_specs={fixed!r} drops the None entries past the rank of {', '.join(trimmed)};"
            " a None splits nothing, so the blocks stay as they are",
            (("in_specs", fixed),),
        )
    ]


def _smap_scalar_options(model: ShardModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """smap's scalars given an axis to split: the in_axes entry None for each (a scalar,
    a Python number above all, has no axis; smap passes it whole to every shard)."""
    o = model.options
    assert o.smap_axes is not None
    in_axes, out_axes = o.smap_axes
    n = len(call.args)
    entries = _per_argument(in_axes, n)
    if entries is None:
        return []
    scalars = [
        i for i, arg in enumerate(call.args) if isinstance(arg, Leaf) and arg.shape == () and entries[i] is not None
    ]
    if not scalars:
        return []
    for i in scalars:
        entries[i] = None
    new_in_axes = tuple(entries)
    new_specs = tuple(_spec_of([]) if e is None else spec for e, spec in zip(entries, _in_specs(o, n), strict=True))
    candidate = replace(model, options=replace(o, in_specs=new_specs, smap_axes=(new_in_axes, out_axes)))
    if not _works(candidate, call, budget):
        return []
    names = ", ".join(call.arg_labels[i] for i in scalars)
    return [
        Suggestion(
            f"in_axes={seq_repr(new_in_axes)}: {names} {'is a scalar' if len(scalars) == 1 else 'are scalars'}"
            " with no axis to split, so every shard gets it whole",
            (("in_axes", new_in_axes),),
        )
    ]


def _in_specs(o: Any, n: int) -> tuple[Any, ...]:
    """The per-argument in_specs of a shard_map's options (one spec may stand for all)."""
    return o.in_specs if isinstance(o.in_specs, tuple) else (o.in_specs,) * n


def _shard_out_options(model: ShardModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """out_specs (smap: out_axes) that promise replication an output does not have: name
    the mesh axes each such output leaf varies over in its own entry, read from JAX's vma
    types (one trace), and checked by the engine (one more). A scalar cannot be split:
    then nothing is proposed, and the error's own fix says to reduce it first."""
    o = model.options
    if not budget.allows(model):
        return []
    try:
        probed = model.vma_jaxpr(call)
    except _OutOfTraces:
        return []
    if probed is None:
        return _shard_out_axes_tried(model, call, budget)
    closed, shapes = probed
    outvars = getattr(closed, "jaxpr", closed).outvars
    gaps = model.output_gaps(shapes, [varying_axes(v) for v in outvars])
    paired = broadcast_prefix(o.out_specs, shapes, lambda x: isinstance(x, PartitionSpec))
    if not gaps or isinstance(paired, PrefixMismatch):
        return []
    specs: list[Any] = list(paired)
    dims: dict[int, int] = {}
    for gap in gaps:
        entries = _entries(gap.spec)
        entries += [()] * (len(gap.block) - len(entries))
        free = next((d for d, e in enumerate(entries) if not e), None)
        if free is None:
            return []  # a scalar, or every dim already split: no spec can hold it
        entries[free] = gap.missing
        specs[gap.index] = _spec_of(entries)
        dims[gap.index] = free
    treedef = jax.tree_util.tree_structure(shapes)
    single = isinstance(o.out_specs, PartitionSpec) and all(sp == specs[0] for sp in specs)
    new_specs: Any = specs[0] if single else jax.tree_util.tree_unflatten(treedef, specs)
    labels = " and ".join(g.label for g in gaps)
    axes = list(dict.fromkeys(a for g in gaps for a in g.missing))
    where = " and ".join(f"axis {dims[g.index]} of {g.label}" for g in gaps)
    over = " and ".join(repr(a) for a in axes)
    if o.smap_axes is None:
        option: tuple[str, Any] = ("out_specs", new_specs)
        shown = f"out_specs={new_specs!r}"
        rest = ", or pass check_vma=False if it is replicated in fact"
        candidate = replace(o, out_specs=new_specs)
    else:
        in_axes, out_axes = o.smap_axes
        flat_axes = broadcast_prefix(out_axes, shapes, lambda x: x is None)
        if isinstance(flat_axes, PrefixMismatch):
            return []
        new_axes = list(flat_axes)
        for gap in gaps:
            new_axes[gap.index] = dims[gap.index]
        one = not isinstance(out_axes, (tuple, list, dict)) and all(a == new_axes[0] for a in new_axes)
        new_out_axes = new_axes[0] if one else jax.tree_util.tree_unflatten(treedef, new_axes)
        option = ("out_axes", new_out_axes)
        shown = f"out_axes={new_out_axes!r}"
        rest = ""
        candidate = replace(o, out_specs=new_specs, smap_axes=(in_axes, new_out_axes))
    # The candidate changes how the blocks are assembled, not what each device computes:
    # the probe's record answers for the function.
    leaves, _ = call.flat()
    replay = replay_of(closed, shapes, range(len(leaves)))
    checked = replace(model, options=candidate)
    if not _works(checked if replay is None else _with_replay(checked, replay), call, budget):
        return []
    verb = "varies" if len(gaps) == 1 else "vary"
    mesh_axes = "mesh axis" if len(axes) == 1 else "mesh axes"
    return [
        Suggestion(
            f"{shown}: {labels} {verb} over {mesh_axes} {over}, so the blocks are concatenated along {where}"
            f" (or reduce over {over} first with jax.lax.psum / pmean{rest})",
            (option,),
        )
    ]


def _shard_out_axes_tried(model: ShardModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """Where JAX's types cannot be read: try naming each unused manual axis in a single
    out_spec."""
    o = model.options
    if o.mesh is None or o.smap_axes is not None or not isinstance(o.out_specs, PartitionSpec):
        return []
    entries = _entries(o.out_specs)
    used = {a for e in entries for a in e}
    manual = o.axis_names or frozenset(o.mesh.names)
    found: list[Suggestion] = []
    for axis in (a for a in o.mesh.names if a in manual and a not in used):
        first_free = next((d for d, e in enumerate(entries) if not e), len(entries))
        new_entries = [*entries, ()] if first_free == len(entries) else list(entries)
        new_entries[first_free] = (axis,)
        new_spec = _spec_of(new_entries)
        if _works(replace(model, options=replace(o, out_specs=new_spec)), call, budget):
            found.append(
                Suggestion(
                    f"out_specs={new_spec!r}: the output varies over mesh axis {axis!r}, so its blocks are"
                    f" concatenated along it (or reduce over it with jax.lax.psum / pmean first, or pass"
                    " check_vma=False if it is replicated in fact)",
                    (("out_specs", new_spec),),
                )
            )
    return found


def suggest(
    model: Model,
    call: Call,
    err: AxisCheckError,
    traces: int = 6,
    positional: tuple[Call, tuple[str, ...]] | None = None,
) -> tuple[Suggestion, ...]:
    """Options that would make this call pass, most specific first; () when unclear.

    A model without a signature is traced to try a candidate: at most `traces` are tried.
    `positional`: the same call with its keyword arguments passed by position (and their
    names), when the function takes them in that order.
    """
    budget = _Budget(traces)
    model = budget.counted(model)
    if isinstance(model, ShardModel):
        if isinstance(err, OutputError):
            shard = _shard_out_options(model, call, budget)
        else:
            shard = _surplus_none_options(model, call, budget) or _shard_in_options(model, call, budget)
        return _unless_too_many(shard)
    if not isinstance(model, MapModel):
        return ()
    if positional is not None:
        options = _static_keyword_options(model, *positional, budget)
        if not options and isinstance(model.level.in_axes.value, tuple):
            options = _keyword_options(model, *positional, budget)
        if options:
            return tuple(options)
    if isinstance(err, FunctionError):  # the function's own failure: only an unbound axis name has a fix
        return tuple(_axis_name_options(model, call, err, budget))
    if isinstance(err, OutputError):
        options = _out_axes_options(model, call, budget)
    else:
        options = (
            _static_options(model, call, budget)
            or _axis_size_options(model, call, budget)
            or _unmapped_size_options(model, call, budget)
            or _structure_options(model, call, budget)
            or _scalar_leaf_options(model, call, budget)
            or _in_axes_options(model, call, budget)
        )
        per_example = err.symbol is not None and not err.symbol.startswith("batch size")
        if not options and per_example:
            options = _transpose_options(model, call, budget)  # a per-example conflict: axis order
    return _unless_too_many(options)


def _unless_too_many(options: list[Suggestion]) -> tuple[Suggestion, ...]:
    """The options, or none when more than `MAX_SHOWN` are fixes: any one would be a
    guess (the ties and shapes-only options beside one fix do not count)."""
    fixes = [o for o in options if not o.tie and o.shapes_only is None]
    return () if len(fixes) > MAX_SHOWN else tuple(options)


def with_suggestions(err: AxisCheckError, options: tuple[Suggestion, ...]) -> AxisCheckError:
    """The same error, its `fix` saying what would work (if the engine found anything):
    options the engine checked replace a general hint, so the Fix line says exactly what
    `err.suggestions` holds, and then the ties it leaves to the user."""
    if not options:
        return err
    fixes = tuple(o for o in options if not o.tie and o.shapes_only is None)
    ties = [o.text for o in options if o.tie]
    notes = tuple(
        f"Runs, but only makes the shapes agree ({o.shapes_only}): {o.text}" for o in options if o.shapes_only
    )
    text = "; or ".join(o.text for o in fixes) or None
    if text and ties:
        text += f". The shapes fit {'another reading' if len(ties) == 1 else 'other readings'} as well:"
        text += f" {'; or '.join(ties)}; check which one you meant"
    new = type(err)(
        err.problem,
        transform=err.transform,
        symbol=err.symbol,
        places=err.places,
        table=err.table,
        notes=(*err.notes, *notes),
        fix=text or err.fix,
        fix_head=fixes[0].headline() if fixes else None,
        steps=err.steps,
        view=err.view,
    )
    new.suggestions = fixes
    return new
