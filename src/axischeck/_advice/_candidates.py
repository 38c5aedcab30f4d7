"""The candidates: every nearby change of a failed call's options (or of how it passes
its arguments) that the engine itself accepts, each with the engine's outcome.

Each search tries a small space the mistake points to (the in_axes entries, a static
argument, out_axes, the specs of a shard_map, ...) and keeps what passes every check
of the engine; it runs the user's function at most as often as its `Budget` allows.
Whether a candidate does what the program means is not decided here (`_meaning`), nor
which comes first (`_rank`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

import jax
import numpy as np
from jax.core import Tracer
from jax.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec

from .._core._axes import freeze_in_axes, freeze_out_axes, freeze_pmap_in_axes
from .._core._errors import AxisCheckError, FunctionError, OutputError
from .._core._explain import tables_unread
from .._core._jax_compat import (
    INFER_SPECS,
    is_key_array,
    is_raw_key,
    mismatched_sizes,
    spec_axes,
    unbound_axis_name,
    varying_axes,
)
from .._core._leaves import Call, Leaf, abstract, struct
from .._core._shape import Shape
from .._core._steps import MapStep
from .._core._text import and_list
from .._core._trees import PrefixMismatch, broadcast_prefix, hashable, option_repr, seq_repr
from .._engine._function import library_code
from .._engine._levels import MapLevel, read_sizes, resolve_in_axes, takes
from .._engine._mesh import block_shape
from .._engine._models import MapModel, Model, Outcome, TraceModel, chain, is_symbolic, run
from .._engine._shard_model import ShardModel
from .._engine._trace import Replay, replay_of
from ._rank import intent, per_argument, size_at
from ._suggestion import Suggestion

M = TypeVar("M", bound=Model)

MAX_TRIES = 48
MAX_SHOWN = 3


class Budget:
    """How many more times the fix search may run the user's function (a trace each).
    Every run is counted where it happens (see `counted`), so a candidate that traces
    twice (a record that fails, then the function under the real nesting) costs two, and
    a run past the budget fails its candidate."""

    def __init__(self, traces: int) -> None:
        self.traces = traces

    def allows(self, model: Model) -> bool:
        """Whether trying `model` is worth starting: it runs no user code, or some runs are left."""
        return self.traces > 0 or is_symbolic(model) or _replayed(model)

    def counted(self, model: M) -> M:
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


def works(model: Model, call: Call, budget: Budget) -> Outcome | None:
    """The engine's outcome with this candidate, or None when it fails too."""
    outcome = _tried(model, call, budget)
    return outcome if isinstance(outcome, Outcome) else None


def _tried(model: Model, call: Call, budget: Budget) -> Outcome | AxisCheckError | None:
    """The engine's outcome with this candidate, or the engine's error where it says why
    the candidate fails too (None: it fails otherwise, or is not tried)."""
    if isinstance(model, MapModel) and not is_symbolic(model) and not _takes(model.level, call):
        return None  # the level's own checks run no user code: they spare the trace budget
    if not budget.allows(model):
        return None
    try:
        with tables_unread():
            return run(model, call)
    except AxisCheckError as err:
        return err
    except Exception:  # a trace that fails for other reasons is no fix either
        return None


def _takes(level: MapLevel, call: Call) -> bool:
    """Whether a level's own checks (no user code run) accept the call."""
    try:
        with tables_unread():
            return takes(level, call)
    except Exception:
        return False


def _kept(found: list[tuple[Suggestion, Outcome]]) -> list[Suggestion]:
    """Each candidate with the engine's outcome kept on it (for the ranking)."""
    return [replace(s, outcome=outcome) for s, outcome in found]


def _spec_options(
    model: ShardModel, call: Call, budget: Budget, option: str, tried: Iterable[tuple[Any, str]]
) -> list[Suggestion]:
    """Each value of a shard_map's `option` (`in_specs` or `out_specs`) in `tried` that the
    engine accepts, with the words that follow `option=value` in its text."""
    found = []
    seen: list[Any] = []  # specs may hold dicts: compared, not hashed
    for value, words in tried:
        if value in seen:
            continue
        seen.append(value)
        outcome = works(replace(model, options=replace(model.options, **{option: value})), call, budget)
        if outcome is not None:
            found.append(Suggestion(f"{option}={option_repr(value)}{words}", ((option, value),), outcome=outcome))
    return found


def _describe_arg(call: Call, i: int, axis: int | None, was: Any = None) -> str:
    """What an in_axes entry `axis` does to argument `i`, where the user wrote `was`."""
    name = call.arg_labels[i]
    if axis is None:
        arg = call.args[i]
        container = type(arg).__name__ if type(arg) in (tuple, list) and was is not None else None
        return f"leave {name} unmapped" + (
            f" (a {container}: in_axes {was} reached each of its leaves)" if container else ""
        )
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    size = leaf.shape[axis] if leaf.shape is not None and -len(leaf.shape) <= axis < len(leaf.shape) else "?"
    return f"map {name}'s axis {axis} (size {size}){_typed_keys(leaf, was)}"


def _typed_keys(leaf: Leaf, was: Any) -> str:
    """Why a negative entry written for raw keys misses typed ones: a raw key's uint32
    words are a trailing axis (keys (8, 2), batch at -2) that a typed key
    (`jax.random.key`) does not have."""
    if type(was) is not int or was >= 0 or leaf.shape is None or was >= -len(leaf.shape):
        return ""
    if not is_key_array(leaf.value):
        return ""
    return (
        f": {leaf.label} holds typed keys (jax.random.key), with no trailing axis of key data for"
        f" in_axes {was} to count past as a raw uint32 key's"
    )


def _in_axes_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    current = model.level.in_axes.value
    n = len(call.args)
    entries = per_argument(current, n)
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
        candidates: list[tuple[tuple[int, int, int, int, int], int, tuple[Any, ...], tuple[int, ...]]] = []
        for axes, idx in itertools.islice(_edited(entries, choices, edits), MAX_TRIES):
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            if not _takes(level, call):
                continue
            candidates.append((intent(entries, axes, level, call), len(candidates), axes, idx))
        best: tuple[int, int, int, int] | None = None
        for reading, _, axes, idx in sorted(candidates):
            if best is not None and reading[:4] != best:
                break  # a less supported reading than the one found: no fix, a guess
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            outcome = works(MapModel(level, model.inner, model.fn), call, budget)
            if outcome is not None:
                why = " and ".join(_describe_arg(call, i, axes[i], entries[i]) for i in idx)
                found.append((Suggestion(f"in_axes={seq_repr(axes)} would {why}", (("in_axes", axes),)), outcome))
                best = reading[:4]
        if found:
            break
    return _kept(found)


def _leaf_axes_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """A dict, list or tuple argument whose arrays hold their examples along different axes
    (vectors stored as rows beside vectors stored as columns), which the in_axes search
    leaves whole: for each batch size the mapped arrays have, an entry per array of the
    tree, each array mapped along its one axis of that size, checked by the engine. The
    size that moves the fewest arrays is the fix; where another moves as few, nothing
    says which batch was meant, and each is said as what it changes."""
    level = model.level
    entries = per_argument(level.in_axes.value, len(call.args))
    if entries is None:
        return []
    trees = [i for i, arg in enumerate(call.args) if type(entries[i]) is int and _plain_tree(arg)]
    sizes = {
        size
        for arg, entry in zip(call.args, entries, strict=True)
        if type(entry) is int
        for leaf in jax.tree_util.tree_leaves(arg)
        if (size := size_at(leaf, entry)) is not None
    }
    if not trees or len(sizes) < 2:
        return []
    found: list[tuple[tuple[Any, ...], list[str], Outcome]] = []
    for size in sorted(sizes):
        per_leaf = _mapped_at_size(call, entries, trees, size)
        if per_leaf is None:
            continue
        in_axes, moved = per_leaf
        outcome = works(MapModel(replace(level, in_axes=freeze_in_axes(in_axes)), model.inner, model.fn), call, budget)
        if outcome is not None:
            found.append((in_axes, moved, outcome))
    fewest = min((len(moved) for _, moved, _ in found), default=0)
    unsure = (
        None
        if [len(moved) for _, moved, _ in found].count(fewest) == 1
        else "the arrays' sizes do not say which batch was meant"
    )
    return [
        Suggestion(
            f"in_axes={seq_repr(in_axes)} would map {and_list(moved)}",
            (("in_axes", in_axes),),
            shapes_only=unsure if len(moved) == fewest else "it moves more arrays than another batch size does",
            outcome=outcome,
        )
        for in_axes, moved, outcome in found
    ]


def _plain_tree(arg: Any) -> bool:
    """Whether `arg` is a dict, list or tuple of arrays (nested), whose in_axes entry can be
    written as the same container of ints."""
    if isinstance(arg, Leaf):
        return arg.shape is not None
    if type(arg) is dict:
        return all(_plain_tree(v) for v in arg.values())
    return type(arg) in (list, tuple) and all(_plain_tree(v) for v in arg)


def _mapped_at_size(
    call: Call, entries: list[Any], trees: list[int], size: int
) -> tuple[tuple[Any, ...], list[str]] | None:
    """in_axes giving each array of the trees at `trees` its one axis of `size` (its own
    entry where that fits), and the arrays it moves; None where an array has no such
    axis or more than one, or an array outside the trees lacks the size at its entry."""
    new = list(entries)
    moved: list[str] = []
    for i, (arg, entry) in enumerate(zip(call.args, entries, strict=True)):
        if i not in trees:
            if type(entry) is int and any(size_at(leaf, entry) != size for leaf in jax.tree_util.tree_leaves(arg)):
                return None
            continue
        leaves, treedef = jax.tree_util.tree_flatten(arg)
        axes = []
        for leaf in leaves:
            fits = [a for a, n in enumerate(leaf.shape) if n == size]
            if size_at(leaf, entry) == size:
                axes.append(entry)
            elif len(fits) == 1:
                axes.append(fits[0])
                moved.append(f"{leaf.label} along axis {fits[0]}")
            else:
                return None
        new[i] = jax.tree_util.tree_unflatten(treedef, axes) if any(a != entry for a in axes) else entry
    return (tuple(new), moved) if moved else None


def with_shapes_read(model: Model, call: Call, found: list[Suggestion], budget: Budget) -> list[Suggestion]:
    """The vmap candidates, each with the arguments it passes whole that the user mapped,
    whose values the function does not read and whose examples, as the user mapped them,
    it cannot take (`Suggestion.shapes_read`: a sample input read for its last dim, whose
    examples are scalars). Asked only of a candidate that keeps no more arrays mapped
    than it passes whole (one more can tell the readings apart already), and of two
    traces, both or none: one with those arguments abstract, as the
    user's own map would have passed them, whose record shows which inputs no operation
    takes; one with them mapped as the user mapped them, resized to the batch the
    candidate keeps. An array read only for its shape whose examples the function takes
    (noise drawn in the shape of each image, beside keys split for another count) may be
    per-example as well: nothing to say."""
    if not isinstance(model, MapModel):
        return found
    before = per_argument(model.level.in_axes.value, len(call.args))
    model = budget.counted(model)
    out = []
    for s in found:
        axes = dict(s.options).get("in_axes")
        left = (
            [i for i, (b, a) in enumerate(zip(before, axes, strict=True)) if type(b) is int and a is None]
            if before is not None and isinstance(axes, tuple) and len(axes) == len(before)
            else []
        )
        if not left or not all(isinstance(call.args[i], Leaf) and call.args[i].shape is not None for i in left):
            out.append(s)
            continue
        assert before is not None and isinstance(axes, tuple)
        kept = sum(len(jax.tree_util.tree_leaves(arg)) for arg, a in zip(call.args, axes, strict=True) if a is not None)
        if kept > len(left) or budget.traces < 2:  # a fix by the arrays' count already, or no runs to ask
            out.append(s)
            continue
        abstract_call = call
        for i in left:
            abstract_call = with_leaf_shape(abstract_call, i, tuple(call.args[i].shape))
        level = replace(model.level, in_axes=freeze_in_axes(axes))
        outcome = works(MapModel(level, model.inner, model.fn), abstract_call, budget)
        if (
            outcome is None
            or not _values_unread(outcome, abstract_call, left)
            or _examples_taken(model, call, before, left, _kept_size(call, axes), budget)
        ):
            out.append(s)
            continue
        names = and_list([call.arg_labels[i] for i in left])
        said = f"{s.text} (the function reads only the shape of {names})"
        out.append(replace(s, text=said, shapes_read=frozenset(left)))
    return out


def _kept_size(call: Call, axes: tuple[Any, ...]) -> int | None:
    """The batch size a candidate's in_axes read from the first array they map."""
    for arg, axis in zip(call.args, axes, strict=True):
        if (
            isinstance(arg, Leaf)
            and arg.shape is not None
            and type(axis) is int
            and -len(arg.shape) <= axis < len(arg.shape)
        ):
            return arg.shape[axis]
    return None


def _examples_taken(
    model: MapModel, call: Call, before: list[Any], left: list[int], size: int | None, budget: Budget
) -> bool:
    """Whether the function takes the examples of the arguments at `left` as the user's
    in_axes (`before`) map them, each resized to `size` along its entry's axis (True where
    that cannot be asked: nothing is said then)."""
    if size is None:
        return True
    resized = call
    for i in left:
        shape = list(call.args[i].shape)
        axis = before[i] % len(shape) if shape else None
        if axis is None:
            return True
        shape[axis] = size
        resized = with_leaf_shape(resized, i, tuple(shape))
    return works(model, resized, budget) is not None


def _values_unread(outcome: Outcome, call: Call, indices: list[int]) -> bool:
    """Whether the function, as `outcome`'s trace recorded it, reads none of the values of
    the (abstract) arguments at `indices`: their leaves are inputs no operation takes and
    no output is."""
    replay = outcome.replay
    if replay is None:
        return False
    jaxpr = replay.closed.jaxpr
    read = {id(v) for eqn in jaxpr.eqns for v in eqn.invars} | {id(v) for v in jaxpr.outvars}
    inputs = dict(zip(replay.dyn, jaxpr.invars, strict=True))
    positions = [p for i in indices for p in call.leaf_positions(i)]
    return all(p in inputs and id(inputs[p]) not in read for p in positions)


def _scalar_leaf_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """A container argument mapped whole (one int entry) that holds scalars, which have no
    axis to map: the entry written out over the container, None at its scalar leaves
    (jax#3161: `{'a': None, 'b': 0}` for a dict of a scalar and a vector). Array scalars
    only: a Python number among arrays is more often a stray (jax#4563's `z + [0]`),
    whose fix is to drop it, not to carry it along unmapped."""
    entries = per_argument(model.level.in_axes.value, len(call.args))
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
    if not works(MapModel(level, model.inner, model.fn), call, budget):
        return []
    return [Suggestion(f"in_axes={seq_repr(fixed)} would leave the scalars inside unmapped", (("in_axes", fixed),))]


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


def _static_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """pmap traces every argument it does not map, Python scalars too: one the function
    needs as a Python value (`range(n)`) must be static, and so must an object that is no
    array at all (a method's `self`, a string), which in_axes None would still trace.
    Tried first for those positional arguments of a pmap, together."""
    level = model.level
    if level.kind != "pmap":
        return []
    scalars = [i for i, arg in enumerate(call.args) if i not in level.static and _python_value(arg)]
    # The fewest made static: each value that becomes static compiles the step anew when it
    # changes (a learning rate on a schedule), so each alone is tried before all of them.
    alone = [[i] for i in scalars] if len(scalars) > 1 else []
    for chosen in [*alone, scalars] if scalars else []:
        static = tuple(sorted({*level.static, *chosen}))
        if not works(MapModel(replace(level, static=static), model.inner, model.fn), call, budget):
            continue
        numbers = all(isinstance(call.args[i].value, (bool, int, float, complex)) for i in chosen)
        why = "the function needs a Python value" if numbers else "it cannot trace what is no array"
        return [
            Suggestion(
                f"static_broadcasted_argnums={seq_repr(static)} would pass"
                f" {and_list([call.arg_labels[i] for i in chosen])} to every device as a Python value (pmap traces"
                f" an argument it does not map, and {why})",
                (("static_broadcasted_argnums", static),),
            )
        ]
    return []


def _unhashable_static_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """pmap refuses a static argument it cannot hash, an array: one marked static to be
    per device (an index per device, numpyro#494; a guidance scale already replicated
    to the devices, diffusers' pipeline) is mapped by in_axes once it is not static."""
    level = model.level
    if level.kind != "pmap":
        return []
    unhashable = [i for i in level.static if i < len(call.args) and not hashable(_passed(call.args[i]))]
    if not unhashable:
        return []
    static = tuple(i for i in level.static if i not in unhashable)
    outcome = works(MapModel(replace(level, static=static), model.inner, model.fn), call, budget)
    if outcome is None:
        return []
    names = and_list([call.arg_labels[i] for i in unhashable])
    return [
        Suggestion(
            f"static_broadcasted_argnums={seq_repr(static)} leaves {names} to in_axes, which gives each device"
            f" its slice (an array is no static value: pmap hashes static arguments)",
            (("static_broadcasted_argnums", static),),
            outcome=outcome,
        )
    ]


def _passed(arg: Any) -> Any:
    """The object passed as an argument (its leaves' values in its structure)."""
    return jax.tree_util.tree_map(lambda leaf: leaf.value, arg)


def _python_value(arg: Any) -> bool:
    """Whether an argument is one Python value pmap can pass to every device only as
    static: a number, or a hashable object that is no array (and no pytree of them)."""
    if not isinstance(arg, Leaf):
        return False
    if isinstance(arg.value, (bool, int, float, complex)):
        return True
    if arg.shape is not None or _holds_arrays(arg.value):
        return False
    try:
        hash(arg.value)
    except Exception:
        return False
    return True


def _holds_arrays(value: Any) -> bool:
    """Whether an object's fields hold arrays: static, they would be constants of the
    trace pmap keeps for the object (hashed by identity), and a later change to them
    would not be seen."""
    fields = dict(getattr(value, "__dict__", {}))
    for name in getattr(type(value), "__slots__", ()):
        if hasattr(value, name):
            fields[name] = getattr(value, name)
    return any(hasattr(leaf, "shape") and hasattr(leaf, "dtype") for leaf in jax.tree_util.tree_leaves(fields))


def _axis_size_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
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


def _unmapped_size_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
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
    outcome = works(MapModel(replace(level, axis_size=1), model.inner, model.fn), call, budget)
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


def _out_axes_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """out_axes that fit the outputs: another int (0, -1, 1) for one int; for a tuple of
    another length than the tuple the function returns, the tuple without a surplus entry
    (the last first: an entry is most often one too many at the end) or padded with the
    first entry's axis, and a list of another length likewise; each checked by the engine."""
    level = model.level
    current = level.out_axes.value
    kind = level.kind
    if current is None or type(current) is int:
        one_each = _per_output_options(model, call, current, budget) if type(current) is int else []
        for cand in (0, -1, 1):
            if cand == current:
                continue
            outcome = works(
                MapModel(replace(level, out_axes=freeze_out_axes(cand, kind)), model.inner, model.fn), call, budget
            )
            if outcome is not None:
                moves = _moves_kept(one_each, current, cand)
                whole = Suggestion(f"out_axes={cand}", (("out_axes", cand),), shapes_only=moves, outcome=outcome)
                return [*one_each, whole]
        return one_each
    if not isinstance(current, (tuple, list)):
        return []
    probe = works(MapModel(replace(level, out_axes=freeze_out_axes(0, kind)), model.inner, model.fn), call, budget)
    shapes = probe.shapes if probe is not None else None
    entries = tuple(current)
    if isinstance(shapes, dict) and len(shapes) == len(entries):
        return _keyed_out_axes_options(model, call, entries, tuple(shapes), budget)
    if isinstance(shapes, Shape) and all(entry is None or type(entry) is int for entry in entries):
        return _one_output_options(model, call, tuple(dict.fromkeys(entries)), budget)
    if not isinstance(shapes, tuple):
        return []
    if len(shapes) == len(current):
        return _batched_out_axes_options(model, call, entries, shapes, budget)
    k = len(shapes)
    candidates: list[tuple[Any, ...]] = []
    if len(entries) > k:
        surplus = len(entries) - k
        candidates += [entries[:i] + entries[i + surplus :] for i in reversed(range(k + 1))]
    else:
        candidates.append(entries + (entries[0] if entries else 0,) * (k - len(entries)))
    found = []
    for per_output in dict.fromkeys(candidates):
        outcome = works(
            MapModel(replace(level, out_axes=freeze_out_axes(per_output, kind)), model.inner, model.fn), call, budget
        )
        if outcome is not None:
            why = f"one entry per output: the function returns a tuple of {k}"
            if len(entries) < k:
                why += f", and {and_list([f'output[{i}]' for i in range(len(entries), k)])} had none"
            text = f"out_axes={seq_repr(per_output)} ({why})"
            found.append(Suggestion(text, (("out_axes", per_output),), outcome=outcome))
    return found


def _per_output_options(model: MapModel, call: Call, axis: int, budget: Budget) -> list[Suggestion]:
    """An int out_axes that fits some of the outputs a tuple holds and not others (out_axes=1
    for vectors beside their norms, scalars with no axis 1 to stack along): one entry per
    output, the int kept wherever it fits and the nearest axis an output has elsewhere,
    checked by the engine. Giving every output another int would move the ones it fits."""
    level = model.level
    probe = works(
        MapModel(replace(level, out_axes=freeze_out_axes(0, level.kind)), model.inner, model.fn), call, budget
    )
    shapes = probe.shapes if probe is not None else None
    if type(shapes) is not tuple:
        return []
    entries = [_nearest_axis(axis, {len(leaf) for leaf in jax.tree_util.tree_leaves(out)}) for out in shapes]
    refitted = [i for i, entry in enumerate(entries) if entry != axis]
    if not refitted or len(refitted) == len(entries) or None in entries:
        return []
    per_output = tuple(entries)
    outcome = works(
        MapModel(replace(level, out_axes=freeze_out_axes(per_output, level.kind)), model.inner, model.fn), call, budget
    )
    if outcome is None:
        return []
    which = and_list([f"output[{i}]" for i in refitted])
    why = f"one entry per output: {which} {'has' if len(refitted) == 1 else 'have'} no axis {axis} to stack along"
    return [Suggestion(f"out_axes={seq_repr(per_output)} ({why})", (("out_axes", per_output),), outcome=outcome)]


def _moves_kept(per_output: list[Suggestion], axis: int | None, cand: int) -> str | None:
    """What giving every output `cand` changes where one entry per output keeps `axis`
    (None where there is no such entry)."""
    if not per_output:
        return None
    entries = dict(per_output[0].options)["out_axes"]
    kept = and_list([f"output[{i}]" for i, entry in enumerate(entries) if entry == axis])
    return f"it moves {kept}'s examples from axis {axis} to axis {cand}"


def _nearest_axis(axis: int, ranks: set[int]) -> int | None:
    """`axis` where every rank has it, else the axis nearest to it that each has (the last
    for a positive axis, 0 for a negative one); None where the ranks disagree on that."""
    if all(-rank <= axis < rank for rank in ranks):
        return axis
    nearest = {rank - 1 if axis >= 0 else 0 for rank in ranks}
    return nearest.pop() if len(nearest) == 1 else None


def _one_output_options(
    model: MapModel, call: Call, entries: tuple[int | None, ...], budget: Budget
) -> list[Suggestion]:
    """A tuple out_axes for a function that returns one array (often in_axes copied to
    out_axes): each distinct entry, written alone, that the engine accepts. Where more
    than one does, the tuple does not say which was meant, and each is said as what it
    changes."""
    level = model.level
    found: list[tuple[int | None, Outcome]] = []
    placed: list[int | None] = []  # each entry's axis counted from the front: 0 and -1 on a vector are one
    for axis in entries:
        if axis is None and level.kind == "pmap":
            continue  # pmap's None returns device 0's value of what it maps, whatever it is
        outcome = works(
            MapModel(replace(level, out_axes=freeze_out_axes(axis, level.kind)), model.inner, model.fn), call, budget
        )
        if outcome is None or not isinstance(outcome.shapes, Shape):
            continue
        at = None if axis is None else axis % max(len(outcome.shapes), 1)
        if at not in placed:
            placed.append(at)
            found.append((axis, outcome))
    unsure = None if len(found) == 1 else "the tuple's entries do not say which axis the one array was meant to get"
    return [
        Suggestion(
            f"out_axes={axis} (the function returns one array, not a tuple)",
            (("out_axes", axis),),
            shapes_only=unsure,
            outcome=outcome,
        )
        for axis, outcome in found
    ]


def _keyed_out_axes_options(
    model: MapModel, call: Call, entries: tuple[Any, ...], keys: tuple[Any, ...], budget: Budget
) -> list[Suggestion]:
    """A tuple (or list) out_axes with one entry per key of the dict the function returns
    (a prefix must have the output's own structure): the same entries given to the keys,
    each distinct order that the engine accepts. Where more than one does, or there are
    more orders than the search tries, the program does not say which key each entry was
    written for, and each is said as what it changes."""
    level = model.level
    firsts = [next(j for j, other in enumerate(entries) if other == entry) for entry in entries]  # equal entries alike
    orders = list(itertools.islice(_distinct_orders(firsts), MAX_TRIES + 1))
    complete = len(orders) <= MAX_TRIES
    found = []
    for per_key in (dict(zip(keys, (entries[j] for j in order), strict=True)) for order in orders[:MAX_TRIES]):
        outcome = works(
            MapModel(replace(level, out_axes=freeze_out_axes(per_key, level.kind)), model.inner, model.fn), call, budget
        )
        if outcome is not None:
            found.append((per_key, outcome))
    why = f"one entry per key: the function returns a dict with keys {and_list([repr(k) for k in keys])}"
    unsure = (
        None if len(found) == 1 and complete else "the tuple's order does not say which key each entry was written for"
    )
    return [
        Suggestion(f"out_axes={per_key!r} ({why})", (("out_axes", per_key),), shapes_only=unsure, outcome=outcome)
        for per_key, outcome in found
    ]


def _distinct_orders(items: list[int]) -> Iterator[tuple[int, ...]]:
    """Each distinct ordering of `items` once, in lexicographic order (equal items are not
    told apart: `(1, 0, 0)` has 3 orderings, not 6)."""
    order = sorted(items)
    while True:
        yield tuple(order)
        i = len(order) - 2
        while i >= 0 and order[i] >= order[i + 1]:
            i -= 1
        if i < 0:
            return
        j = len(order) - 1
        while order[j] <= order[i]:
            j -= 1
        order[i], order[j] = order[j], order[i]
        order[i + 1 :] = reversed(order[i + 1 :])


def _batched_out_axes_options(
    model: MapModel, call: Call, entries: tuple[Any, ...], stacked: tuple[Any, ...], budget: Budget
) -> list[Suggestion]:
    """An out_axes entry None for an output that differs from example to example: the
    entry 0, which stacks that output's examples along a new leading axis (each None
    entry alone, then all of them; `stacked`: the outputs' shapes so stacked). Not a fix
    in general: None said one value for the batch (a pmean over an axis name, an argument
    meant unmapped, may be what is missing), so it is said as what it changes. The fix
    where each output it stacks is a mapped argument handed back (`_handed_back`)."""
    level = model.level
    unmapped = [i for i, entry in enumerate(entries) if entry is None]
    tries = [entries[:i] + (0,) + entries[i + 1 :] for i in unmapped]
    if len(unmapped) > 1:
        tries.append(tuple(0 if entry is None else entry for entry in entries))
    found = []
    for per_output in tries:
        changed = [i for i in unmapped if per_output[i] == 0]
        outcome = works(
            MapModel(replace(level, out_axes=freeze_out_axes(per_output, level.kind)), model.inner, model.fn),
            call,
            budget,
        )
        if outcome is None:
            continue
        which = and_list([f"output[{i}]" for i in changed])
        text = f"out_axes={seq_repr(per_output)} stacks {which} along a new axis 0, one row per example"
        returned = [_handed_back(level, call, stacked, i, outcome) for i in changed]
        if all(returned):
            pairs = zip(changed, returned, strict=True)
            why = and_list([f"output[{i}] is {name} as each example left it" for i, name in pairs])
            found.append(Suggestion(f"{text} ({why})", (("out_axes", per_output),), outcome=outcome))
            continue
        changes = f"{which} then has a value per example, where out_axes None said one for the whole batch"
        found.append(Suggestion(text, (("out_axes", per_output),), shapes_only=changes, outcome=outcome))
    return found


def _handed_back(level: MapLevel, call: Call, stacked: tuple[Any, ...], i: int, outcome: Outcome) -> str | None:
    """The argument output `i` is, updated by each example, if it is one: a tree (a state,
    a module, a dict of parameters; never a lone array, whose shape may match by chance)
    of the output's structure and stacked shapes, that in_axes maps at axis 0 throughout,
    and that the function updates from other mapped inputs (`_updated_by_others`). What
    came in one per example and was updated from each example's data goes out one per
    example (an Equinox layer's `State`, updated from the layer's own weights, returned
    with None). Never where the map has an axis name: a collective over it (a pmean of the
    update) may be what is missing; nor for a tree returned as it came, or changed alike
    on every example (a decay), which None may rightly call one value with the tree meant
    unmapped."""
    entries = per_argument(level.in_axes.value, len(call.args))
    if entries is None or level.axis_name is not None:
        return None
    structure: Any = jax.tree_util.tree_structure(stacked[i], is_leaf=lambda x: isinstance(x, Shape))
    shapes = jax.tree_util.tree_leaves(stacked[i], is_leaf=lambda x: isinstance(x, Shape))
    for k, (name, arg, entry) in enumerate(zip(call.arg_labels, call.args, entries, strict=True)):
        if isinstance(arg, Leaf) or jax.tree_util.tree_structure(arg) != structure:
            continue
        leaves = jax.tree_util.tree_leaves(arg)
        axes = broadcast_prefix(entry, arg, lambda x: x is None or type(x) is int)
        if axes == [0] * len(leaves) and [leaf.shape for leaf in leaves] == shapes:
            return name if _updated_by_others(outcome, stacked, i, call.leaf_positions(k)) else None
    return None


def _updated_by_others(outcome: Outcome, stacked: tuple[Any, ...], i: int, own: range) -> bool:
    """Whether `outcome`'s trace computes some leaf of output `i` from a mapped input
    other than the call's leaves at `own` (the argument it is shaped like): an update
    from each example's data, not a copy or a change alike on every example."""
    replay = outcome.replay
    counts = [len(jax.tree_util.tree_leaves(out, is_leaf=lambda x: isinstance(x, Shape))) for out in stacked]
    if replay is None or len(replay.closed.jaxpr.outvars) != sum(counts):
        return False
    start = sum(counts[:i])
    sources = [replay.sources(j) for j in range(start, start + counts[i])]
    return any(found is not None and any(k not in own for k in found) for found in sources)


def _nonnegative_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """pmap with a negative in_axes or out_axes entry (JAX's pmap shards axis 0 and
    squeezes or inserts the negative axis: docs/jax-semantics.md#pmap): the same axes
    counted from the front, which pmap reads as meant (see `_counted_options`)."""
    level = model.level
    if level.kind != "pmap" or not any(
        a is not None and a < 0 for a in (*level.in_axes.leaves, *level.out_axes.leaves)
    ):
        return []

    def tried(in_axes: Any, out_axes: Any) -> Outcome | None:
        axes = replace(level, in_axes=freeze_pmap_in_axes(in_axes), out_axes=freeze_out_axes(out_axes, "pmap"))
        return works(MapModel(axes, model.inner, model.fn), call, budget)

    return _counted_options("pmap", level.in_axes.value, level.out_axes.value, call, tried)


def _smap_nonnegative_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """smap with a negative in_axes or out_axes (jax.smap splits axis 0 for any negative
    axis, jax#5652's kind of mistake: data stored batch-last): the same axes counted from
    the front (see `_counted_options`)."""
    o = model.options
    if o.smap_axes is None:
        return []
    given_in, given_out = o.smap_axes
    if not any(type(a) is int and a < 0 for a in jax.tree_util.tree_leaves((given_in, given_out))):
        return []

    def tried(in_axes: Any, out_axes: Any) -> Outcome | None:
        return works(replace(model, options=o.with_smap_axes(in_axes, out_axes)), call, budget)

    return _counted_options("smap", given_in, given_out, call, tried)


def _smap_inferred_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """smap with in_axes left out, which only Explicit mesh axes can infer: one int axis
    for every argument, the one out_axes stacks the outputs along first, then axis 0 (a
    row-wise function of rows split over the mesh). Which one the program means is for
    the meaning check to say."""
    o = model.options
    if o.smap_axes is None or o.smap_axes[0] is not INFER_SPECS:
        return []
    out_axes = o.smap_axes[1]
    ranks = [len(leaf.shape) for leaf in jax.tree_util.tree_leaves(call.args) if leaf.shape is not None]
    if not ranks:
        return []
    stacked: list[int] = [out_axes] if type(out_axes) is int and out_axes >= 0 else []
    found = []
    for axis in dict.fromkeys([*stacked, 0]):
        if axis >= min(ranks):
            continue
        outcome = works(replace(model, options=o.with_smap_axes(axis, out_axes)), call, budget)
        if outcome is not None:
            found.append(
                Suggestion(
                    f"in_axes={axis} splits every argument along its axis {axis} (in_axes is inferred only on a"
                    " mesh whose axes are Explicit)",
                    (("in_axes", axis),),
                    outcome=outcome,
                )
            )
    return found


def _counted_options(
    kind: str, given_in: Any, given_out: Any, call: Call, tried: Callable[[Any, Any], Outcome | None]
) -> list[Suggestion]:
    """The axes of a pmap or smap, which read a negative axis as axis 0, counted from the
    front: an in_axes entry against its array's rank, an int out_axes against the outputs'
    one rank (read from the engine's outcome, `tried` with the inputs' axes counted and
    out_axes 0); the change where the engine takes it."""
    in_axes = given_in if given_in is INFER_SPECS else _counted_from_front(given_in, call)
    if in_axes is _NOT_ONE_MISTAKE:
        return []
    out_axes = given_out
    if type(given_out) is int and given_out < 0:
        rank = _one_rank(tried(in_axes, 0))
        if rank is None or given_out < -rank:
            return []
        out_axes = given_out + rank
    elif any(type(a) is int and a < 0 for a in jax.tree_util.tree_leaves(given_out)):
        return []  # a negative entry in a tree of out_axes: each output's rank is its own
    outcome = tried(in_axes, out_axes)
    if outcome is None:
        return []
    changed = tuple(
        (name, value)
        for name, value, given in (("in_axes", in_axes, given_in), ("out_axes", out_axes, given_out))
        if value != given
    )
    shown = ", ".join(f"{k}={seq_repr(v) if isinstance(v, tuple) else v!r}" for k, v in changed)
    text = f"{shown}: the same axes counted from the front ({kind} reads a negative axis as axis 0)"
    return [Suggestion(text, changed, outcome=outcome)]


def _one_rank(outcome: Outcome | None) -> int | None:
    """The rank every output of `outcome` has, where they share one."""
    if outcome is None:
        return None
    ranks = {len(s) for s in jax.tree_util.tree_leaves(outcome.shapes, is_leaf=lambda x: isinstance(x, Shape))}
    return ranks.pop() if len(ranks) == 1 else None


_NOT_ONE_MISTAKE: Any = object()
"""What `_counted_from_front` gives for in_axes whose negative entries are not the only mistake."""


def _counted_from_front(in_axes: Any, call: Call) -> Any:
    """in_axes with each negative entry counted from the front against its array's rank
    (an int for one entry that still fits every argument); `_NOT_ONE_MISTAKE` for a
    negative entry over a pytree, or past its array's rank."""
    entries = per_argument(in_axes, len(call.args))
    if entries is None:
        return _NOT_ONE_MISTAKE
    counted: list[Any] = []
    for arg, entry in zip(call.args, entries, strict=True):
        if type(entry) is int and entry < 0:
            if not isinstance(arg, Leaf) or arg.shape is None or not -len(arg.shape) <= entry:
                return _NOT_ONE_MISTAKE
            entry += len(arg.shape)
        counted.append(entry)
    if isinstance(in_axes, tuple) or any(entry != counted[0] for entry in counted[1:]):  # entries may be lists
        return tuple(counted)
    return counted[0] if counted else in_axes


def with_leaf_shape(call: Call, i: int, shape: tuple[int, ...]) -> Call:
    """The call with argument `i` (one array) of another shape, same dtype."""
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    value = struct(Shape(shape), abstract(leaf.value).dtype)
    new = Leaf(leaf.label, Shape(shape), value, Shape(shape), tuple(range(len(shape))))
    return Call(call.args[:i] + (new,) + call.args[i + 1 :], call.kwargs, call.arg_params, call.arg_labels)


def _transposed(call: Call, i: int, perm: tuple[int, ...]) -> Call:
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    assert leaf.shape is not None
    return with_leaf_shape(call, i, tuple(leaf.shape[p] for p in perm))


def _transpose_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
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
                return _kept(found)
            outcome = works(model, _transposed(call, i, perm), budget)
            if outcome is not None:
                name = call.arg_labels[i]
                shape = tuple(leaves[0].shape[p] for p in perm)
                text = f"passing jnp.transpose({name}, {perm}) (shape {shape}) instead of {name} would agree"
                found.append((Suggestion(text, (), transposes=((i, perm),)), outcome))
    return _kept(found)


def _keyword_options(
    model: MapModel, call: Call, positional: Call, moved: tuple[str, ...], budget: Budget
) -> list[Suggestion]:
    """Keyword arguments, which JAX maps over axis 0 whatever in_axes says (it gives them
    no entry): the fix passes them by position (never an entry for a keyword). With a
    tuple in_axes whose entries were meant for them, as it is (and, where those entries
    are all 0, first the tuple without them: the call as written already maps them so);
    with a tuple that has none for them, padded with None (a value every example shares)
    or 0; with one int for every argument, with the entries the in_axes search finds for
    the call by position (a shared offset passed as `offset=` wants None). `positional`
    is `call` with `moved` passed by position."""
    names = ", ".join(moved)
    by_keyword = f"pass {names} by position (JAX maps keyword arguments over axis 0 and gives them no in_axes entry)"
    axes = model.level.in_axes.value
    if isinstance(axes, tuple):
        n = len(positional.args)
        if len(axes) == n:
            outcome = works(model, positional, budget)
            if outcome is None:
                return []
            text = f"{by_keyword}; then in_axes={seq_repr(axes)} applies"
            return _keywords_at_zero_options(model, call, axes, moved, budget) or [
                Suggestion(text, (("in_axes", axes),), by_position=moved, outcome=outcome)
            ]
        if len(axes) > n:
            return []
        found = []
        for fill in (None, 0):  # an entry the tuple left out: most often for a value every example shares
            padded = axes + (fill,) * (n - len(axes))
            level = replace(model.level, in_axes=freeze_in_axes(padded))
            outcome = works(MapModel(level, model.inner, model.fn), positional, budget)
            if outcome is not None:
                text = f"{by_keyword}, with in_axes={seq_repr(padded)} (an entry for each)"
                found.append(Suggestion(text, (("in_axes", padded),), by_position=moved, outcome=outcome))
        return found
    if type(axes) is not int:
        return []
    spread = (axes,) * len(positional.args)
    level = replace(model.level, in_axes=freeze_in_axes(spread))
    found = _in_axes_options(MapModel(level, model.inner, model.fn), positional, budget)
    return [replace(s, text=f"{by_keyword}, with {s.text}", by_position=moved) for s in found]


def _keywords_at_zero_options(
    model: MapModel, call: Call, axes: tuple[Any, ...], moved: tuple[str, ...], budget: Budget
) -> list[Suggestion]:
    """A tuple in_axes with entries 0 for the keyword arguments (jax#39450): the entries for
    the positional arguments alone, with the call unchanged, since JAX maps keyword
    arguments over axis 0 (the same program as passing them by position with the tuple
    as written, which the words give too)."""
    kept, for_keywords = axes[: len(axes) - len(moved)], axes[len(axes) - len(moved) :]
    if not kept or any(type(entry) is not int or entry != 0 for entry in for_keywords):
        return []
    level = replace(model.level, in_axes=freeze_in_axes(kept))
    outcome = works(MapModel(level, model.inner, model.fn), call, budget)
    if outcome is None:
        return []
    text = (
        f"in_axes={seq_repr(kept)}, one entry per positional argument"
        f" ({', '.join(moved)}, passed by keyword, is mapped over axis 0 as its entry said;"
        f" or pass {', '.join(moved)} by position with in_axes={seq_repr(axes)})"
    )
    return [Suggestion(text, (("in_axes", kept),), outcome=outcome)]


def _static_keyword_options(
    model: MapModel, positional: Call, moved: tuple[str, ...], budget: Budget
) -> list[Suggestion]:
    """A pmap argument that static_broadcasted_argnums names, passed by keyword (jax#3007):
    the positions count, so the fix is to pass the keyword arguments by position (all of
    them, in the function's order), where the named one is static as the option says."""
    level = model.level
    first = len(positional.args) - len(moved)
    named = [i for i in level.static if first <= i < len(positional.args)]
    if level.kind != "pmap" or not named or not works(model, positional, budget):
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


def _structure_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """in_axes written in the wrong shape: lists inside where the arguments hold tuples (or
    a pmap's top-level list), a tuple of the wrong length, the axes of one tuple argument
    not nested in a 1-tuple, a list inside written for fewer (or more) elements than the
    argument's list holds (jax#9372: one layer's axes for two layers)."""
    axes = model.level.in_axes.value
    n = len(call.args)
    candidates: list[tuple[Any, str]] = []
    if isinstance(axes, tuple) and len(axes) == n:
        resized = tuple(_resized(entry, arg) for entry, arg in zip(axes, call.args, strict=True))
        if resized != axes:
            candidates.append((resized, "an entry for each element of the lists inside, repeated as written"))
    if isinstance(axes, (tuple, list)):
        tupled = _tupled(axes)
        if tupled != tuple(axes) or any(isinstance(a, list) for a in axes):
            candidates.append((tupled, "tuples, not lists, inside in_axes: a list does not match a tuple argument"))
        elif isinstance(axes, list) and model.level.kind == "pmap":
            candidates.append((tupled, "a tuple: pmap does not read a top-level list as one"))
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
        outcome = works(MapModel(level, model.inner, model.fn), call, budget)
        if outcome is not None:
            found.append((Suggestion(f"in_axes={seq_repr(cand)} ({why})", (("in_axes", cand),)), outcome))
    return _kept(found)


def _resized(entry: Any, arg: Any) -> Any:
    """`entry` (an in_axes entry) with each list inside whose entries are all alike made as
    long as the argument's list at its place, where that list's items share one structure
    (layers: a tuple's items are fields of their own, which one entry does not speak
    for); the rest as it is."""
    if isinstance(entry, dict) and isinstance(arg, dict) and entry.keys() == arg.keys():
        return {key: _resized(entry[key], arg[key]) for key in entry}
    if not (isinstance(entry, (list, tuple)) and type(entry) is type(arg) and entry):
        return entry
    alike = len({jax.tree_util.tree_structure(item) for item in arg}) == 1
    if type(entry) is list and len(entry) != len(arg) and alike and all(e == entry[0] for e in entry):
        entry = [entry[0]] * len(arg)
    if len(entry) != len(arg):
        return entry
    items = [_resized(e, a) for e, a in zip(entry, arg, strict=True)]
    return type(entry)(*items) if hasattr(entry, "_fields") else type(entry)(items)


def _axis_name_options(model: MapModel, call: Call, err: AxisCheckError, budget: Budget) -> list[Suggestion]:
    """A collective over a name no transform binds: naming this level's axis so, where
    the map is the program's own (a library's map inside the user's, such as the one
    Equinox's `BatchNorm` makes over channels, expects the name from the user's map
    around it)."""
    name = unbound_axis_name(err.__cause__ or err)
    if name is None or model.level.axis_name == name or (model.fn is not None and library_code(model.fn)):
        return []
    level = replace(model.level, axis_name=name)
    if not works(MapModel(level, model.inner, model.fn), call, budget):
        return []
    bound = "no axis name" if model.level.axis_name is None else f"axis_name={model.level.axis_name!r}"
    return [
        Suggestion(
            f"axis_name={name!r} (this {model.level.kind} has {bound}) binds the name the collective uses",
            (("axis_name", name),),
        )
    ]


def _left_unmapped_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """The function fails per example, and an argument left unmapped (its in_axes entry
    None) has an axis of the batch size: mapping it there, every other entry as it is,
    may be what was meant (a per-example noise vector given None, a state batch mapped
    elsewhere). Each such argument alone, at each axis of that size, kept where the
    function then runs (the meaning check judges them); a pmap's arguments that hold
    copies are mapped together (`_copies_options`)."""
    entries = per_argument(model.level.in_axes.value, len(call.args))
    if entries is None:
        return []
    try:
        with tables_unread():
            sizes = read_sizes(model.level, call.flat()[0], resolve_in_axes(model.level, call, ()))
    except AxisCheckError:
        return []
    if len(sizes) != 1:
        return []
    (size,) = sizes
    unmapped = [i for i, entry in enumerate(entries) if not jax.tree_util.tree_leaves(entry)]
    copied = _copied(model.level, call, unmapped, size)
    if copied:
        return _copies_options(model, call, budget, entries, copied)
    found: list[tuple[Suggestion, Outcome]] = []
    for i in unmapped:
        for axis in _axes_of_size(call.args[i], size) or _replicated_axes(model.level, call, i, size):
            axes = (*entries[:i], axis, *entries[i + 1 :])
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            outcome = works(MapModel(level, model.inner, model.fn), call, budget)
            if outcome is not None:
                text = f"in_axes={seq_repr(axes)} would {_describe_arg(call, i, axis)}, the others as they are"
                why = _copies(model.level, call, i, axis)  # along another axis than a pmap stacks
                found.append((Suggestion(text, (("in_axes", axes),), shapes_only=why), outcome))
    return _kept(found)


def _copied(level: MapLevel, call: Call, unmapped: list[int], size: int) -> dict[int, str | None]:
    """The pmap arguments left unmapped that hold copies along axis 0 (see `_copies`),
    with their words, and the stacks of one constant that mirror one of them (an
    optimizer's zero state beside the replicated parameters it was made from: words None);
    none where no argument holds copies."""
    stacked = {i: _leaf_shapes(call.args[i]) for i in unmapped if _stacked(call.args[i], size)}
    words = {i: _copies(level, call, i, 0) for i in stacked}
    mirrored = {stacked[i] for i, w in words.items() if w is not None}
    constant = {i: None for i, w in words.items() if w is None and stacked[i] in mirrored and _constant(call.args[i])}
    copied = {i: w for i, w in words.items() if w is not None}
    return dict(sorted({**copied, **constant}.items())) if copied else {}


def _copies_options(
    model: MapModel, call: Call, budget: Budget, entries: list[Any], copied: dict[int, str | None]
) -> list[Suggestion]:
    """The pmap arguments that hold copies (`copied`), mapped together at axis 0: each
    device gets one copy, which computes what one copy passed whole means (weights a
    training pmap stacked, fed to an evaluation pmap; a model and its optimizer state
    replicated up front; mapping some alone still hands the others' whole stacks to every
    device). The fix, unless this pmap, given one copy of each whole, returns arrays
    stacked as the copies are: then they may be its own output fed back (its default
    out_axes=0 stacks a value that is the same on every device), whose remedy is
    out_axes=None there, and only the program can say which was meant."""
    axes = tuple(0 if i in copied else entry for i, entry in enumerate(entries))
    level = replace(model.level, in_axes=freeze_in_axes(axes))
    outcome = works(MapModel(level, model.inner, model.fn), call, budget)
    if outcome is None:
        return []
    names = and_list([call.arg_labels[i] for i in copied])
    said = and_list([w for w in copied.values() if w is not None])
    text = f"in_axes={seq_repr(axes)} would map {names} at axis 0, the others as they are"
    own = _returned_stacked(model, call, budget, list(copied))
    if own is not False:
        why = (
            f"{said}, which mapping gives one to each device; if they are this pmap's own output fed back"
            f" (given one copy whole, it returns them stacked so by its default out_axes=0), give it"
            f" out_axes=None for them instead and keep in_axes None here"
        )
        return _kept([(Suggestion(text, (("in_axes", axes),), shapes_only=why), outcome)])
    fix = (
        f"{text} ({said}: each device gets one, as the whole value was meant; or, if a pmap returned them"
        f" stacked by its default out_axes=0, give that pmap out_axes=None for them and keep in_axes None here)"
    )
    return _kept([(Suggestion(fix, (("in_axes", axes),)), outcome)])


def _returned_stacked(model: MapModel, call: Call, budget: Budget, positions: list[int]) -> bool | None:
    """Whether the pmap, given one copy of each argument at `positions` (passed whole, as
    the user's in_axes say), returns an array of the shape those copies are stacked in:
    they may be its own output fed back (None where that cannot be asked)."""
    outcome = works(model, _one_copy_each(call, positions), budget)
    if outcome is None:
        return None
    returned = {tuple(s) for s in jax.tree_util.tree_leaves(outcome.shapes, is_leaf=lambda x: isinstance(x, Shape))}
    return any(shape in returned for i in positions for shape in _leaf_shapes(call.args[i]))


def _one_copy_each(call: Call, positions: list[int]) -> Call:
    """The call with each argument at `positions` one copy: every array without its
    leading axis (stand-ins of that shape and dtype)."""

    def first(leaf: Leaf) -> Leaf:
        assert leaf.shape is not None
        shape = Shape(tuple(leaf.shape[1:]))
        return Leaf(leaf.label, shape, struct(shape, abstract(leaf.value).dtype), shape, tuple(range(len(shape))))

    args = tuple(jax.tree_util.tree_map(first, a) if i in positions else a for i, a in enumerate(call.args))
    return Call(args, call.kwargs, call.arg_params, call.arg_labels)


def _leaf_shapes(arg: Any) -> tuple[tuple[int, ...], ...]:
    """The shapes of an argument's arrays (a leaf that is no array: `()`)."""
    return tuple(tuple(leaf.shape or ()) for leaf in jax.tree_util.tree_leaves(arg))


def _stacked(arg: Any, size: int) -> bool:
    """Whether every array of an argument has a leading axis of `size`."""
    shapes = [leaf.shape for leaf in jax.tree_util.tree_leaves(arg)]
    return bool(shapes) and all(shape is not None and shape[:1] == (size,) for shape in shapes)


def _copies(level: MapLevel, call: Call, i: int, axis: int) -> str | None:
    """Where a pmap argument's slices along `axis` are one value repeated, in its one
    array or in every array of its tree, the words for them (None where they are not, or
    are not known: a tracer): copies, replicated on purpose (one per device, to be mapped)
    or stacked by a pmap's default `out_axes=0` (weights updated with averaged gradients
    and fed back in, where the pmap migration guide keeps one copy with `out_axes=None`).
    An array of one constant (zeros, ones) says nothing of copies: a fresh state starts
    so too. A vmap's per-example data has identical rows as often (labels of one class,
    position ids)."""
    hosts = _host_arrays(call.args[i]) if level.kind == "pmap" else None
    if not hosts or hosts[0].shape[axis] < 2 or _one_constant(hosts):
        return None  # one constant (zeros, ones): an init, as likely
    if not all((host == np.take(host, [0], axis=axis)).all() for host in hosts):
        return None
    return f"{call.arg_labels[i]}'s {hosts[0].shape[axis]} slices along axis {axis} are identical copies"


def _host_arrays(arg: Any) -> list[np.ndarray] | None:
    """An argument's arrays as this process holds them (None where one is not a concrete
    array it can read whole: a tracer, a global array of a job)."""
    hosts = []
    for leaf in jax.tree_util.tree_leaves(arg):
        value = leaf.value
        if not isinstance(value, (jax.Array, np.ndarray)) or isinstance(value, Tracer):
            return None
        try:
            hosts.append(np.asarray(value))
        except Exception:  # an array this process cannot read whole (a global array of a job)
            return None
    return hosts


def _one_constant(hosts: list[np.ndarray]) -> bool:
    return all((host == host.flat[0]).all() for host in hosts if host.size)


def _constant(arg: Any) -> bool:
    """Whether an argument's arrays are readable and hold one constant (zeros, ones)."""
    hosts = _host_arrays(arg)
    return hosts is not None and bool(hosts) and _one_constant(hosts)


def _axes_of_size(arg: Any, size: int) -> list[int]:
    """The axes at which every array of an argument has `size`: one array, or a tree of
    random state (an NNX `Rngs` split into one key per example, mapped by one entry at
    that axis). A tree of data whose arrays have the batch size (a training set passed
    whole beside queries as many) is passed whole on purpose as often as not."""
    leaves = jax.tree_util.tree_leaves(arg)
    shapes = [leaf.shape for leaf in leaves]
    if not shapes or any(shape is None for shape in shapes):
        return []
    if not isinstance(arg, Leaf) and not _random_state(leaves):
        return []
    return [a for a in range(min(map(len, shapes))) if all(shape[a] == size for shape in shapes)]


def _replicated_axes(level: MapLevel, call: Call, i: int, size: int) -> list[int]:
    """The axes of the batch size at which a pmap argument's tree holds copies in every
    array (parameters replicated to the devices, or stacked by a pmap's `out_axes=0`):
    mapped or not, only the program can say (see `_copies`)."""
    leaves = jax.tree_util.tree_leaves(call.args[i])
    if level.kind != "pmap" or isinstance(call.args[i], Leaf) or any(leaf.shape is None for leaf in leaves):
        return []
    shapes = [leaf.shape for leaf in leaves]
    axes = [a for a in range(min(map(len, shapes), default=0)) if all(shape[a] == size for shape in shapes)]
    return [a for a in axes if _copies(level, call, i, a) is not None]


def _random_state(leaves: list[Leaf]) -> bool:
    """Whether a tree's arrays are random state alone: PRNG keys, and the unsigned counts
    an NNX `Rngs` keeps beside them (a tree that also holds data is passed whole for the
    data's sake as often as not)."""
    keys = [is_key_array(leaf.value) for leaf in leaves]
    return any(keys) and all(key or _unsigned(leaf.value) for key, leaf in zip(keys, leaves, strict=True))


def _unsigned(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    try:
        return dtype is not None and bool(np.issubdtype(dtype, np.unsignedinteger))
    except TypeError:  # an extended dtype numpy does not know
        return False


def _mapped(entries: list[Any]) -> list[int]:
    """The positions of the arguments an in_axes maps some array of (an entry of Nones for
    every array, as a module's state gets for the entry None, maps none)."""
    return [i for i, entry in enumerate(entries) if jax.tree_util.tree_leaves(entry)]


def _swapped_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """The function fails per example, the one argument mapped is a vector (each example
    gets a scalar of it), and others are passed whole: the axes may be swapped (a neural
    ODE's times mapped where its batch of initial states was meant, diffrax 8b0c2e6).
    Each argument passed whole, mapped at axis 0 in its place, the vector passed whole;
    kept where the function then runs (the meaning check judges them)."""
    entries = per_argument(model.level.in_axes.value, len(call.args))
    if entries is None:
        return []
    mapped = _mapped(entries)
    if len(mapped) != 1 or not _vector(call.args[mapped[0]]):
        return []
    (i,) = mapped
    found: list[tuple[Suggestion, Outcome]] = []
    for j, arg in enumerate(call.args):
        if j == i or not isinstance(arg, Leaf) or not arg.shape:
            continue
        axes = tuple(0 if k == j else None if k == i else entry for k, entry in enumerate(entries))
        level = replace(model.level, in_axes=freeze_in_axes(axes))
        outcome = works(MapModel(level, model.inner, model.fn), call, budget)
        if outcome is not None:
            text = (
                f"in_axes={seq_repr(axes)} would {_describe_arg(call, j, 0)} and pass"
                f" {call.arg_labels[i]} whole (the axes swapped)"
            )
            found.append((Suggestion(text, (("in_axes", axes),)), outcome))
    return _kept(found)


def _over_mapped_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """The function fails per example, more than one argument is mapped, and a vector
    among them gives each example a scalar: it may be meant whole (an ensemble's shared
    input of 2 features mapped by Equinox's default `if_array(0)`, read as 2 scalars).
    Each such vector alone left unmapped, the others as they are, where the function then
    runs: shown as what it changes, never as the fix (a diffusion step's timestep per
    image, of a batch as long as the images are wide, runs passed whole too, and mixes
    every image with every timestep: no check here tells them apart).
    Only a vector whose length is a dim of another mapped argument's examples (the
    members' input width): one that is not (a time per example, labels per example) is a
    per-example value the function mishandles, a code change. Arguments whose examples
    keep an axis are left as mapped: that they agree on the batch says they were meant so
    (a pairwise distance over two batches of points)."""
    entries = per_argument(model.level.in_axes.value, len(call.args))
    if entries is None:
        return []
    mapped = _mapped(entries)
    if len(mapped) < 2:
        return []
    tried = []
    for i in (i for i in mapped if _vector(call.args[i]) and _fits_another(call, entries, i)):
        axes = tuple(None if k == i else entry for k, entry in enumerate(entries))
        level = replace(model.level, in_axes=freeze_in_axes(axes))
        if _takes(level, call):
            tried.append((intent(entries, axes, level, call), i, axes, level))
    found: list[tuple[Suggestion, Outcome]] = []
    for _, i, axes, level in sorted(tried, key=lambda t: t[:2]):
        outcome = works(MapModel(level, model.inner, model.fn), call, budget)
        if outcome is not None:
            text = f"in_axes={seq_repr(axes)} would {_describe_arg(call, i, None)}, the others mapped as they are"
            why = _raw_key_words(call, i, _kept_size(call, axes)) or (
                f"it passes {call.arg_labels[i]} whole to every example, and nothing in the call says whether each"
                " example was meant to get one scalar of it"
            )
            found.append((Suggestion(text, (("in_axes", axes),), shapes_only=why), outcome))
    return _kept(found)


def _raw_key_words(call: Call, i: int, size: int | None) -> str | None:
    """What passing whole a raw key that was mapped over its words changes (jax#181's
    ADVI example: `PRNGKey(0)` mapped by the default in_axes beside 2 settings): mapped,
    each example got one uint32 word, no key; whole, every example draws the same
    numbers, which common random numbers mean and a forgotten split does not. No check
    tells them apart."""
    arg = call.args[i]
    if not (isinstance(arg, Leaf) and is_raw_key(arg.value)):
        return None
    name = call.arg_labels[i]
    split = f"jax.random.split({name}, {size})" if size is not None else f"jax.random.split({name}, n)"
    return (
        f"{name} is a raw key, and in_axes mapped its uint32 words (each example got one word, not a key);"
        f" passed whole, every example draws the same random numbers from it: for draws of their own, map"
        f" {split} instead"
    )


def _other_axis_options(model: MapModel, call: Call, budget: Budget) -> list[Suggestion]:
    """A vmap whose function fails per example, with one argument mapped, an array of rank
    2 or more: another of its axes mapped instead (data stored features-first, `(3, 5)`
    for 5 examples of 3 features, given a layer of 3 inputs). Never the fix: it changes
    the batch size, and a function written for the other orientation (`W @ x` where
    the weight was built for `x @ W`, with a batch as large as the hidden layer) runs over
    the features just as well; which is meant is for the user to say."""
    if model.level.kind != "vmap":
        return []
    entries = per_argument(model.level.in_axes.value, len(call.args))
    if entries is None:
        return []
    mapped = _mapped(entries)
    if len(mapped) != 1:
        return []
    (i,) = mapped
    arg, axis = call.args[i], entries[i]
    if not isinstance(arg, Leaf) or arg.shape is None or len(arg.shape) < 2 or type(axis) is not int:
        return []
    found: list[tuple[int, Any, Outcome]] = []
    for other in range(len(arg.shape)):
        if other == axis % len(arg.shape):
            continue
        axes = tuple(other if k == i else entry for k, entry in enumerate(entries))
        written = other if type(model.level.in_axes.value) is int else axes  # an int stays an int
        outcome = works(
            MapModel(replace(model.level, in_axes=freeze_in_axes(axes)), model.inner, model.fn), call, budget
        )
        if outcome is not None:
            found.append((other, written, outcome))
    never_meant = _never_the_batch(arg, axis, len(found))
    return [
        Suggestion(
            f"in_axes={written if type(written) is int else seq_repr(written)} would"
            f" {_describe_arg(call, i, other)} instead of axis {axis}{never_meant or ''}",
            (("in_axes", written),),
            shapes_only=None
            if never_meant
            else (
                f"it changes the batch size from {arg.shape[axis]} to {arg.shape[other]}, and nothing in the call says"
                f" which axis holds the examples (the function may be written for {call.arg_labels[i]} transposed)"
            ),
            outcome=outcome,
        )
        for other, written, outcome in found
    ]


def _never_the_batch(arg: Leaf, axis: int, running: int) -> str | None:
    """Why `axis` of `arg` cannot hold the examples the program means, in words, where one
    other axis alone runs (`running`: how many do), whose batch size is then the
    program's; None where it may hold them, or more than one other axis runs. The last
    axis of a raw `uint32` key array holds its keys' words (no example can use one word as
    a key). An axis of size 1 holds one example, on which the function fails, and where
    the array has two other axes and only one of them runs, that one holds the examples
    (with one other axis only, running says little: its examples keep the axis of size 1,
    which broadcasts against almost anything)."""
    shape = arg.shape or ()
    if running != 1:
        return None
    if is_raw_key(arg.value) and axis % len(shape) == len(shape) - 1:
        return ", which holds the words of its raw keys (each example got one uint32, not a key)"
    if shape[axis] == 1 and len(shape) >= 3:
        return ", of size 1 (a batch of one example, on which the function fails)"
    return None


def _fits_another(call: Call, entries: list[Any], i: int) -> bool:
    """Whether argument `i`'s length is a dim of one example of another mapped argument's
    arrays (each array's shape without the axis its entry maps)."""
    length = call.args[i].shape[0]
    for j, (arg, entry) in enumerate(zip(call.args, entries, strict=True)):
        paired = broadcast_prefix(entry, arg, lambda a: a is None or type(a) is int)
        if j == i or isinstance(paired, PrefixMismatch):
            continue
        for leaf, axis in zip(jax.tree_util.tree_leaves(arg), paired, strict=True):
            shape = leaf.shape
            if type(axis) is int and shape is not None and -len(shape) <= axis < len(shape):
                if length in (*shape[: axis % len(shape)], *shape[axis % len(shape) + 1 :]):
                    return True
    return False


def _vector(arg: Any) -> bool:
    """Whether an argument is one array of rank 1 (mapped, each example gets a scalar)."""
    return isinstance(arg, Leaf) and arg.shape is not None and len(arg.shape) == 1


def _spec_of(entries: list[tuple[str, ...]]) -> PartitionSpec:
    return PartitionSpec(*[None if not e else e[0] if len(e) == 1 else e for e in entries])  # type: ignore[no-untyped-call]


def _trimmed_spec_of(entries: list[tuple[str, ...]]) -> PartitionSpec:
    """The spec of `entries` without their trailing None entries, which split nothing
    (the same split)."""
    entries = list(entries)
    while entries and not entries[-1]:
        entries.pop()
    return _spec_of(entries)


def _shard_in_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
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
        entries = spec_axes(spec)
        for d, axes in enumerate(entries[: len(arg.shape)]):
            if not axes or not set(axes) <= set(mesh.names):  # an unknown mesh axis is another mistake
                continue
            size, split = arg.shape[d], mesh.size(axes)
            if size % split == 0:
                continue
            used = {a for e in entries for a in e}
            for other, other_size in zip(mesh.names, mesh.sizes, strict=True):
                if other in used or size % other_size or other_size == 1:
                    continue
                new_spec = _spec_of([*entries[:d], (other,), *entries[d + 1 :]])
                new_specs = new_spec if not isinstance(o.in_specs, tuple) else specs[:i] + (new_spec,) + specs[i + 1 :]
                candidate = replace(model, options=replace(o, in_specs=new_specs))
                if works(candidate, call, budget):
                    found.append(
                        Suggestion(
                            f"in_specs={option_repr(new_specs)} splits axis {d} of {arg.label} (size {size}) over"
                            f" mesh axis {other!r} (size {other_size}), which divides it",
                            (("in_specs", new_specs),),
                        )
                    )
                    break
            found += _moved_split_options(model, call, (i, specs, entries), d, budget)
            found += _reshaped_mesh_options(model, call, (arg.label, d, size), budget)
            padded = -(-size // split) * split
            shape = (*arg.shape[:d], padded, *arg.shape[d + 1 :])
            if works(model, with_leaf_shape(call, i, shape), budget):
                found.append(
                    Suggestion(
                        f"pad axis {d} of {arg.label} from {size} to {padded} (a multiple of {split}, e.g. jnp.pad)",
                        (),
                        pads=((i, d, padded),),
                    )
                )
            return found  # the first dim that does not divide: the one the error names
    return found


WrittenSpecs = tuple[PartitionSpec | None, ...]  # one in_specs entry per argument (None: passed whole)


def _split_or_whole_options(model: ShardModel, call: Call, err: AxisCheckError, budget: Budget) -> list[Suggestion]:
    """The function fails per device where an argument's split meets another's: an
    argument split like the other (`_splits_like_others`) where no split of its own moves
    for it; else passed whole (where the engine names no other cause) or with its split
    moved, tried together. Either of these may run and compute something else (a bias
    passed whole beside its rows, the rows' split moved to the bias's length), so the
    meaning check, not the search's order, tells them apart. smap's arguments are split
    along one axis each: passed whole is the change there."""
    if model.options.smap_axes is not None:
        return _smap_passed_whole_options(model, call, budget) if _unexplained(err) else []
    specs = _written_specs(model, call)
    if specs is None:
        return []
    added, moved = _splits_like_others(call, specs)
    sizes = mismatched_sizes(str(err.__cause__ or err))
    aimed = [t for t in added + moved if sizes is not None and _meets_sizes(model, call, specs, t[0], sizes[1:])]
    first = _checked_splits(model, call, aimed, budget)  # tried first: the budget may not reach them later
    added_values = [t[0] for t in added]
    split = [s for s in first if dict(s.options)["in_specs"] in added_values]
    split += _checked_splits(model, call, [t for t in added if t not in aimed], budget)
    if split:
        return split
    whole = _passed_whole_options(model, call, budget) if _unexplained(err) else []
    return whole + first + _checked_splits(model, call, [t for t in moved if t not in aimed], budget)


def _meets_sizes(
    model: ShardModel,
    call: Call,
    specs: WrittenSpecs,
    tried: WrittenSpecs,
    sizes: tuple[int, int],
) -> bool:
    """Whether in_specs `tried` turn a per-device dim of one of the two sizes JAX's failure
    sets against each other (a row-parallel weight's 16 rows against the 8 hidden units
    of a column-parallel block) into the other: a split moved there is aimed at the
    failure, and is tried first (the budget may not reach every try)."""
    try:
        mesh = model.mesh(())
    except AxisCheckError:  # no mesh to read the blocks on (none given, none in context)
        return False
    for arg, before, after in zip(call.args, specs, tried, strict=True):
        if before == after or not isinstance(arg, Leaf) or arg.shape is None:
            continue
        shape = Shape(arg.shape)
        old = block_shape(shape, tuple(spec_axes(before)), mesh)
        new = block_shape(shape, tuple(spec_axes(after)), mesh)
        if any({a, b} == set(sizes) for a, b in zip(old, new, strict=True)):
            return True
    return False


SplitTry = tuple[WrittenSpecs, str]  # in_specs to try, and the words that say what they change


def _splits_like_others(call: Call, specs: WrittenSpecs) -> tuple[list[SplitTry], list[SplitTry]]:
    """An argument that leaves a dim unsplit that has the global size of a dim other
    arguments split (segment ids of the batch passed whole beside queries split over
    'data'; a KV cache passed whole beside heads split over 'model'): that dim split over
    the same mesh axes, one argument's one dim at a time. Returned apart: the splits that
    add those axes, and the ones that move them from another dim of the same argument,
    where it splits that dim over them (a 3-D activation given the spec of a 2-D one,
    which splits its sequence where the weight it meets splits the features)."""
    arrays: list[tuple[int, str, tuple[int, ...]]] = []  # (position, label, shape) of each array argument
    for i, arg in enumerate(call.args):
        if isinstance(arg, Leaf) and arg.shape is not None:
            arrays.append((i, arg.label, tuple(arg.shape)))
    splits = {  # (global size, mesh axes, argument) of every dim an argument splits
        (shape[d], axes, i)
        for i, _, shape in arrays
        for d, axes in enumerate(spec_axes(specs[i])[: len(shape)])
        if axes
    }
    added: list[SplitTry] = []
    moved: list[SplitTry] = []
    for i, label, shape in arrays:
        entries = [*spec_axes(specs[i]), *[()] * (len(shape) - len(spec_axes(specs[i])))]
        used = {a for e in entries for a in e}
        for d, size in enumerate(shape):
            if entries[d]:
                continue  # split already
            for axes in sorted({axes for other, axes, j in splits if other == size and j != i}):
                split = [*entries[:d], axes, *entries[d + 1 :]]
                words = f" splits axis {d} of {label} (size {size}) over {and_list([repr(a) for a in axes])}"
                if not used & set(axes):
                    added.append(((*specs[:i], _trimmed_spec_of(split), *specs[i + 1 :]), words))
                elif axes in entries:  # the whole split of another dim: moved from it
                    split[entries.index(axes)] = ()
                    words += f" instead of axis {entries.index(axes)}"
                    moved.append(((*specs[:i], _trimmed_spec_of(split), *specs[i + 1 :]), words))
    return added, moved


def _checked_splits(model: ShardModel, call: Call, tried: list[SplitTry], budget: Budget) -> list[Suggestion]:
    """Each of the in_specs `tried` that the engine accepts; where an output then varies
    over the new split's axes as the out_specs do not say, with the out_specs that
    assemble it. Which one the program means is for the meaning check to say, and none
    is a fix without it."""
    o = model.options
    found = []
    for value, words in itertools.islice(dict.fromkeys(tried), MAX_TRIES):
        changed = replace(model, options=replace(o, in_specs=value))
        outcome = _tried(changed, call, budget)
        if isinstance(outcome, Outcome):
            found.append(
                Suggestion(
                    f"in_specs={option_repr(value)}{words}", (("in_specs", value),), checked_only=True, outcome=outcome
                )
            )
        elif isinstance(outcome, OutputError):  # an output now split too: assembled along it
            for out in _shard_out_options(changed, call, budget):
                options = (("in_specs", value), *out.options)
                text = f"in_specs={option_repr(value)}{words}, and {out.text}"
                found.append(replace(out, text=text, options=options, checked_only=True))
    return found


def _written_specs(model: ShardModel, call: Call) -> WrittenSpecs | None:
    """A shard_map's in_specs as one entry per argument, a PartitionSpec or None (JAX
    passes that argument whole to every device, as a constant), where it has a mesh and
    two arguments or more and writes them all out (None otherwise: nothing to split like
    another, or to pass whole beside another)."""
    o, n = model.options, len(call.args)
    if o.smap_axes is not None or o.mesh is None or o.in_specs is INFER_SPECS or n < 2:
        return None
    specs = _in_specs(o, n)
    return specs if len(specs) == n and all(spec is None or isinstance(spec, PartitionSpec) for spec in specs) else None


def _unexplained(err: AxisCheckError) -> bool:
    """Whether the function fails per device for a reason the engine does not name (a
    block's shape clashing with another's): a failure it explains (a loop carry's
    variation, with its remedy) is not one an in_specs change addresses."""
    return isinstance(err, FunctionError) and err.hint is None


def _passed_whole_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """The function fails per device, and an argument its in_specs split may be meant
    whole (a bias split like the rows it is added to, where the pmap it came from passed
    it with in_axes None): that argument given `P()`, one at a time, the outputs' specs as
    they are (the data itself passed whole gives outputs its out_specs then stack too
    often: the meaning check rules it out on their shapes), in `_shared_first` order.
    Whether the blocks then compute what the program means is for the meaning check to
    say: none is a fix without it."""
    o = model.options
    specs = _written_specs(model, call)
    if specs is None:
        return []
    found = []
    for i in _shared_first(call):
        spec = specs[i]
        if spec is None or not any(spec_axes(spec)):  # passed whole already
            continue
        value = (*specs[:i], _spec_of([]), *specs[i + 1 :])
        outcome = works(replace(model, options=replace(o, in_specs=value)), call, budget)
        if outcome is not None:
            words = f" passes {call.arg_labels[i]} whole to every device (its spec split it over {_named_axes(spec)})"
            found.append(
                Suggestion(
                    f"in_specs={option_repr(value)}{words}", (("in_specs", value),), checked_only=True, outcome=outcome
                )
            )
    return found


def _smap_passed_whole_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """smap's `_passed_whole_options`: an array argument its in_axes splits given the
    entry None, one at a time, in the same order; for the meaning check to judge."""
    o = model.options
    assert o.smap_axes is not None
    in_axes, out_axes = o.smap_axes
    entries = per_argument(in_axes, len(call.args))
    if entries is None:
        return []
    found = []
    for i in _shared_first(call):
        if entries[i] is None:
            continue
        value = (*entries[:i], None, *entries[i + 1 :])
        outcome = works(replace(model, options=o.with_smap_axes(value, out_axes)), call, budget)
        if outcome is not None:
            words = f" passes {call.arg_labels[i]} whole to every shard (its entry {entries[i]} split it)"
            found.append(
                Suggestion(
                    f"in_axes={seq_repr(value)}{words}", (("in_axes", value),), checked_only=True, outcome=outcome
                )
            )
    return found


def _shared_first(call: Call) -> list[int]:
    """The positions of the call's arguments of arrays (one array, or a pytree of them: a
    model's `(w, b)`), fewest dims first and a later one first among equals: what is
    shared (a mask, a bias, a scale) has fewer dims than the data it meets, and the trace
    budget may not reach them all."""
    ranks = {}
    for i, arg in enumerate(call.args):
        leaves = jax.tree_util.tree_leaves(arg)
        if leaves and all(isinstance(leaf, Leaf) and leaf.shape is not None for leaf in leaves):
            ranks[i] = max(len(leaf.shape) for leaf in leaves)
    return sorted(ranks, key=lambda i: (ranks[i], -i))


def _named_axes(spec: PartitionSpec) -> str:
    return and_list([repr(a) for entry in spec_axes(spec) for a in entry])


def _moved_split_options(
    model: ShardModel, call: Call, spec: tuple[int, tuple[Any, ...], list[tuple[str, ...]]], d: int, budget: Budget
) -> list[Suggestion]:
    """The mesh axes that do not divide axis `d` of argument `i`, moved to another axis of
    the same argument that they divide (a spec written for another layout of the array:
    `P('model')` for a `(1, n, h)` array split along `n`). `spec`: the argument's position,
    every argument's in_specs entry and its own entry's mesh axes per dim. One spec for
    every argument is written out per argument, so that only this one's moves."""
    o = model.options
    i, specs, entries = spec
    arg = call.args[i]
    axes = entries[d]
    if o.mesh is None:
        return []
    split = o.mesh.size(axes)
    tried = []
    for other in range(len(arg.shape)):
        if other == d or (other < len(entries) and entries[other]) or arg.shape[other] % split:
            continue
        moved = [*entries, *[()] * (len(arg.shape) - len(entries))]
        moved[d], moved[other] = (), axes
        words = (
            f" splits axis {other} of {arg.label} (size {arg.shape[other]}) over"
            f" {and_list([repr(a) for a in axes])} instead of axis {d} (size {arg.shape[d]})"
        )
        tried.append(((*specs[:i], _trimmed_spec_of(moved), *specs[i + 1 :]), words))
    return _spec_options(model, call, budget, "in_specs", tried)


def _reshaped_mesh_options(
    model: ShardModel, call: Call, refused: tuple[str, int, int], budget: Budget
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
            split += [(i, d, axes) for d, axes in enumerate(spec_axes(spec)[: len(arg.shape)]) if axes]
    resized = sorted(_factorings(math.prod(mesh.sizes), len(mesh.sizes)), key=lambda s: _changes(s, mesh.sizes))

    def divides(sizes: tuple[int, ...]) -> bool:
        shape = replace(mesh, sizes=sizes)
        return sizes != mesh.sizes and all(call.args[i].shape[d] % shape.size(axes) == 0 for i, d, axes in split)

    sizes = next(filter(divides, resized), None)
    if sizes is None:
        return []
    new_mesh = _mesh_of_shape(o.jax_mesh, sizes)
    reshaped = replace(model, options=replace(o, mesh=replace(mesh, sizes=sizes), jax_mesh=new_mesh))
    if works(reshaped, call, budget) is None:
        return []
    divisible = _times_devices(call, split, math.prod(sizes))
    before, after = works(model, divisible, budget), works(reshaped, divisible, budget)
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
        call = with_leaf_shape(call, i, tuple(shape))
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


def _twice_named_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """An in_specs entry that names one mesh axis at two dims (JAX's DuplicateSpecError: a
    mesh axis splits one dim at most; a bias's spec written from its two sequence dims):
    the axis kept at one of those dims, each in turn, dropped from the others. Which dim
    it splits is for the meaning check to say (the block it meets decides)."""
    o = model.options
    if o.smap_axes is not None or o.in_specs is INFER_SPECS:
        return []
    specs = _in_specs(o, len(call.args))
    found = []
    for i, spec in enumerate(specs):
        label = call.arg_labels[i] if i < len(call.arg_labels) else f"argument {i}"
        for axis, dims, keep, kept in _kept_once(spec_axes(spec)):
            value = (*specs[:i], _spec_of(kept), *specs[i + 1 :])
            outcome = works(replace(model, options=replace(o, in_specs=value)), call, budget)
            if outcome is not None:
                words = f" splits {label}'s axis {keep} over {axis!r} (its spec named it at axes {dims})"
                found.append(
                    Suggestion(
                        f"in_specs={option_repr(value)}{words}",
                        (("in_specs", value),),
                        checked_only=True,
                        outcome=outcome,
                    )
                )
    return found


def _kept_once(entries: list[tuple[str, ...]]) -> Iterator[tuple[str, str, int, list[tuple[str, ...]]]]:
    """For each mesh axis named at several dims: (the axis, those dims in words, a dim it
    is kept at, the entries with it there alone), each such dim in turn."""
    named = [a for e in entries for a in e]
    for axis in dict.fromkeys(a for a in named if named.count(a) > 1):
        dims = [d for d, e in enumerate(entries) if axis in e]
        for keep in dims:
            kept = [e if d == keep else tuple(a for a in e if a != axis) for d, e in enumerate(entries)]
            yield axis, and_list([str(d) for d in dims]), keep, kept


def _in_specs_count_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """A tuple of in_specs with another count of entries than the positional arguments:
    the tuple cut to their count, or padded with the last entry repeated or with P() (a
    new argument split as the one before it, or passed whole), or, for one array left
    without a spec, with one of its dims split over one mesh axis (a bias added to a
    block of features: jax's shard_map docs). One entry short may be missing anywhere (an
    argument added to the function's middle: MaxText's MoE layer gained one beside its
    gate logits), so it is also tried at each place, split as the entry before it or
    passed whole. Each is checked by the engine; which one the program means is for the
    meaning check to say."""
    o = model.options
    n = len(call.args)
    if o.smap_axes is not None or not isinstance(o.in_specs, tuple) or len(o.in_specs) in (0, n) or n == 0:
        return []
    specs = o.in_specs
    tries: list[tuple[tuple[Any, ...], tuple[int, ...]]]  # each in_specs, and the positions of its new entries
    if len(specs) > n:
        tries = [(specs[:n], ())]
    else:
        missing = n - len(specs)
        added = tuple(range(len(specs), n))
        tries = [(specs + (specs[-1],) * missing, added), (specs + (PartitionSpec(),) * missing, added)]  # type: ignore[no-untyped-call]
        last = call.args[-1]
        if missing == 1 and isinstance(last, Leaf) and last.shape is not None and o.mesh is not None:
            tries += [(specs + (spec,), added) for spec in _one_split_specs(len(last.shape), o.mesh.names)]
        if missing == 1:  # the new entry at k, the later ones moved up by one (a tuple tried twice: said once)
            inserted: list[tuple[tuple[Any, ...], tuple[int, ...]]] = [
                ((*specs[:k], entry, *specs[k:]), (k,))
                for k in reversed(range(n - 1))
                for entry in [*specs[k - 1 : k], PartitionSpec()]  # type: ignore[no-untyped-call]
            ]
            twins = [t for t in [*tries[:1], *inserted] if _split_as_its_twin(call, *t)]
            tries = twins + tries + inserted  # the budget may not reach every try
    words = f" (one entry per positional argument: the call passes {n}"
    found = _spec_options(
        model, call, budget, "in_specs", [(t, words + _given(call, t, given) + ")") for t, given in tries]
    )
    splits: list[tuple[Any, ...]] = []  # P('x') and P('x', None) are one split: said once
    once = []
    for s in found:
        split = tuple(map(_without_trailing_none, s.options[0][1]))
        if split not in splits:
            splits.append(split)
            once.append(s)
    return once


def _split_as_its_twin(call: Call, specs: tuple[Any, ...], added: tuple[int, ...]) -> bool:
    """Whether the one entry `added` copies the entry before it for an argument of the
    same shape as the one before it (a new logits argument beside the gate logits)."""
    (k,) = added
    before, arg = call.args[k - 1] if k else None, call.args[k]
    return (
        isinstance(arg, Leaf)
        and isinstance(before, Leaf)
        and arg.shape is not None
        and arg.shape == before.shape
        and specs[k] == specs[k - 1]
    )


def _given(call: Call, padded: tuple[Any, ...], added: tuple[int, ...]) -> str:
    """`; b gets P('feats')`: the entries a padded in_specs adds, named by the arguments
    they are for."""
    words = [f"{call.arg_labels[i]} gets {option_repr(padded[i])}" for i in added]
    return f"; {and_list(words)}" if words else ""


def _one_split_specs(rank: int, names: tuple[str, ...]) -> list[PartitionSpec]:
    """Each spec of an array of this rank that splits one of its dims over one mesh axis."""
    return [
        PartitionSpec(*(name if d == dim else None for d in range(rank)))  # type: ignore[no-untyped-call]
        for name in names
        for dim in range(rank)
    ]


def _renamed_axis_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """Specs that name mesh axes the mesh does not have (`'batch'` from another codebase's
    mesh of `'data'` and `'model'`): each such name replaced by a mesh axis the specs do
    not name yet, in every in_specs and out_specs entry alike, each renaming the engine
    accepts: the fix where it is the one name and the one renaming that runs."""
    o = model.options
    if o.mesh is None or o.smap_axes is not None:
        return []
    specs = [s for s in jax.tree_util.tree_leaves((o.in_specs, o.out_specs), is_leaf=_is_spec) if _is_spec(s)]
    named = {a for spec in specs for entry in spec_axes(spec) for a in entry}
    unknown = sorted(named - set(o.mesh.names))
    free = [a for a in o.mesh.names if a not in named]
    if not unknown or len(free) < len(unknown):
        return []
    found = []
    for targets in itertools.islice(itertools.permutations(free, len(unknown)), MAX_TRIES):
        names = dict(zip(unknown, targets, strict=True))
        options = (("in_specs", _renamed(o.in_specs, names)), ("out_specs", _renamed(o.out_specs, names)))
        changed = tuple((name, value) for name, value in options if value != getattr(o, name))
        outcome = works(replace(model, options=replace(o, **dict(changed))), call, budget)
        if outcome is not None:
            shown = ", ".join(f"{name}={value!r}" for name, value in changed)
            words = and_list([f"{new!r} in place of {old!r}" for old, new in names.items()])
            text = f"{shown}: {words} (the mesh's axes are {and_list([repr(a) for a in o.mesh.names])})"
            found.append(Suggestion(text, changed, outcome=outcome))
    if len(found) == 1 and len(unknown) == 1:
        return found
    # Two names to place, or two places that run: which mesh axis each name stands for
    # (data or model parallelism) is not written in the program.
    names_shown = and_list([repr(a) for a in unknown])
    unsure = (
        f"nothing in the program says which mesh axis {names_shown} stands for"
        if len(unknown) == 1
        else f"nothing in the program says which mesh axis each of {names_shown} stands for"
    )
    return [replace(s, shapes_only=unsure) for s in found]


def _renamed(specs: Any, names: dict[str, str]) -> Any:
    """A tree of specs with the mesh axes `names` maps renamed (anything else as it is)."""

    def one(spec: Any) -> Any:
        return _spec_of([tuple(names.get(a, a) for a in e) for e in spec_axes(spec)]) if _is_spec(spec) else spec

    return jax.tree_util.tree_map(one, specs, is_leaf=_is_spec)


def _out_spec_rank_options(model: ShardModel, call: Call, shapes: Any, budget: Budget) -> list[Suggestion]:
    """An out_specs entry longer than its output's rank (`shapes`: the per-device output
    blocks, from the probe): the entry cut to the rank, then each entry with one of its
    dims dropped (the spec of another output, or of the input the body reduced), each
    checked by the engine."""
    o = model.options
    if o.smap_axes is not None or not isinstance(o.out_specs, PartitionSpec):
        return []
    entries = spec_axes(o.out_specs)
    ranks = {len(block) for block in jax.tree_util.tree_leaves(shapes)}
    if len(ranks) != 1 or len(entries) <= (rank := ranks.pop()):
        return []
    tries = [_spec_of(entries[:rank])]
    tries += [_spec_of(entries[:d] + entries[d + 1 :]) for d in range(len(entries)) if len(entries) - 1 == rank]
    words = f" (one entry per dim: the output has rank {rank})"
    return _spec_options(model, call, budget, "out_specs", [(t, words) for t in tries])


def _smap_scalar_out_options(model: ShardModel, call: Call, shapes: Any, budget: Budget) -> list[Suggestion]:
    """smap's out_axes splitting outputs that are scalars (`shapes`: the per-instance
    blocks, from the probe), which have no axis to split: out_axes None, each instance
    returning its value whole. Checked by the engine, whose replication check refuses it
    unless the value is the same on every instance (a psum's total)."""
    o = model.options
    if o.smap_axes is None or type(o.smap_axes[1]) is not int:
        return []
    if any(len(block) for block in jax.tree_util.tree_leaves(shapes)):
        return []
    outcome = works(replace(model, options=o.with_smap_axes(o.smap_axes[0], None)), call, budget)
    if outcome is None:
        return []
    text = (
        "out_axes=None: the output is a scalar, with no axis to split, and it is the same on every instance"
        " (a psum's total), so each instance returns it whole"
    )
    return [Suggestion(text, (("out_axes", None),), outcome=outcome)]


def _surplus_none_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """in_specs entries longer than their argument's rank only by trailing Nones (jax#18951:
    `P(None)` for a scalar): a None splits nothing, so the spec without them is the
    same split, and JAX takes it. A scalar has no dim to split at all: its spec is `P()`
    whatever it names (jax#15602: a learning rate given the weights' `P('x')`). Any other
    surplus that names a mesh axis asks for a split the argument cannot have: what was
    meant is not for the engine to say."""
    o = model.options
    n = len(call.args)
    if o.smap_axes is not None or o.in_specs is INFER_SPECS or n == 0:
        return []
    specs = _in_specs(o, n)
    if len(specs) != n:
        return []
    new_specs = list(specs)
    trimmed: list[str] = []  # arguments whose spec loses Nones
    scalars: list[str] = []  # scalars whose spec named a mesh axis
    for i, (arg, spec) in enumerate(zip(call.args, specs, strict=True)):
        if not isinstance(arg, Leaf) or arg.shape is None or not isinstance(spec, PartitionSpec):
            continue
        entries = spec_axes(spec)
        if len(entries) <= len(arg.shape):
            continue
        if not arg.shape and any(entries):
            scalars.append(arg.label)
            entries = []
        while len(entries) > len(arg.shape) and not entries[-1]:
            entries.pop()
        new_specs[i] = _spec_of(entries)
        if arg.label not in scalars:
            trimmed.append(f"{arg.label} (rank {len(arg.shape)})")
    if not trimmed and not scalars:
        return []
    fixed: Any = tuple(new_specs) if isinstance(o.in_specs, tuple) else new_specs[0]
    if not isinstance(o.in_specs, tuple) and any(s != fixed for s in new_specs):
        return []  # one spec for all the arguments: it must suit each of them
    options = replace(o, in_specs=fixed)
    if not works(replace(model, options=options), call, budget):
        # The same surplus written in the out_specs too (`P('data', None)` for a vector in
        # and out): their trailing Nones split nothing either.
        out_specs = jax.tree_util.tree_map(_without_trailing_none, o.out_specs, is_leaf=_is_spec)
        options = replace(o, in_specs=fixed, out_specs=out_specs)
        if out_specs == o.out_specs or not works(replace(model, options=options), call, budget):
            return []
    why = []
    if trimmed:
        why.append(
            f"drops the None entries past the rank of {', '.join(trimmed)}; a None splits nothing, so the blocks"
            " stay as they are"
        )
    if scalars:
        are = "is a scalar" if len(scalars) == 1 else "are scalars"
        why.append(f"{and_list(scalars)} {are}, with no dim to split: every device gets it whole")
    if options.out_specs != o.out_specs:
        why.append("the out_specs' trailing Nones are dropped alike")
        return [
            Suggestion(
                f"in_specs={option_repr(fixed)}, out_specs={option_repr(options.out_specs)}: {'; '.join(why)}",
                (("in_specs", fixed), ("out_specs", options.out_specs)),
            )
        ]
    return [Suggestion(f"in_specs={option_repr(fixed)}: {'; '.join(why)}", (("in_specs", fixed),))]


def _is_spec(x: Any) -> bool:
    return isinstance(x, PartitionSpec)


def _without_trailing_none(spec: Any) -> Any:
    """A spec without its trailing None entries (anything else as it is)."""
    return _trimmed_spec_of(list(spec_axes(spec))) if isinstance(spec, PartitionSpec) else spec


def _smap_scalar_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """smap's scalars given an axis to split: the in_axes entry None for each (a scalar,
    a Python number above all, has no axis; smap passes it whole to every shard)."""
    o = model.options
    assert o.smap_axes is not None
    in_axes, out_axes = o.smap_axes
    n = len(call.args)
    entries = per_argument(in_axes, n)
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
    candidate = replace(model, options=o.with_smap_axes(new_in_axes, out_axes))
    if not works(candidate, call, budget):
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


def _shard_out_options(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """out_specs (smap: out_axes) that promise replication an output does not have: name
    the mesh axes each such output leaf varies over in an entry of its own, read from
    JAX's vma types (one trace), at each dimension the spec leaves free (which one the
    blocks belong along is for the meaning check to say: a column-parallel `x @ w` is
    concatenated along its columns), each checked by the engine on the probe's record
    (no more traces). An entry longer than its output's rank is cut first, from the same
    probe. A scalar cannot be split: then nothing is proposed, and the error's hint says
    to reduce it first."""
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
    too_long = _out_spec_rank_options(model, call, shapes, budget) or _smap_scalar_out_options(
        model, call, shapes, budget
    )
    if too_long:
        return too_long
    outvars = getattr(closed, "jaxpr", closed).outvars
    varying = [varying_axes(v) for v in outvars]
    gaps = model.output_gaps(shapes, varying)
    paired = broadcast_prefix(o.out_specs, shapes, lambda x: isinstance(x, PartitionSpec))
    if not gaps or isinstance(paired, PrefixMismatch):
        return []
    size_one = _without_size_one_axes(model, call, {a for gap in gaps for a in gap.missing}, budget)
    if size_one:
        return size_one
    free: list[list[int]] = []
    for gap in gaps:
        entries = spec_axes(gap.spec) + [()] * (len(gap.block) - len(spec_axes(gap.spec)))
        free.append([d for d, e in enumerate(entries) if not e])
        if not free[-1]:
            return []  # a scalar, or every dim already split: no spec can hold it
    # The probe's record answers for the function: a candidate changes how the blocks are
    # assembled, not what each device computes.
    leaves, _ = call.flat()
    replay = replay_of(closed, shapes, range(len(leaves)))
    found = []
    for dims in itertools.islice(itertools.product(*free), MAX_TRIES):
        suggestion = _out_spec_candidate(model, shapes, list(paired), gaps, dims)
        if suggestion is None:
            continue
        option, candidate = suggestion
        checked = replace(model, options=candidate)
        outcome = works(checked if replay is None else _with_replay(checked, replay), call, budget)
        if outcome is not None:
            found.append(replace(option, outcome=outcome))
    reordered = _reordered_out_specs(model, shapes, varying)
    return found if reordered is None else [*found, reordered]


def _without_size_one_axes(model: ShardModel, call: Call, missing: set[str], budget: Budget) -> list[Suggestion]:
    """Where every mesh axis an output varies over against its out_specs has size 1: the
    in_specs without those axes. Split over one device, an argument is whole, yet JAX's
    types say its values vary along the axis (a spec written for a larger mesh, kept on a
    size-1 axis); dropped, the blocks are the same and nothing varies."""
    o = model.options
    mesh = o.mesh
    if mesh is None or o.smap_axes is not None or any(mesh.size((a,)) != 1 for a in missing):
        return []

    def dropped(spec: Any) -> Any:
        if not isinstance(spec, PartitionSpec):
            return spec
        return _trimmed_spec_of([tuple(a for a in e if a not in missing) for e in spec_axes(spec)])

    if isinstance(o.in_specs, PartitionSpec):
        new_specs: Any = dropped(o.in_specs)
    elif isinstance(o.in_specs, tuple):
        new_specs = tuple(dropped(spec) for spec in o.in_specs)
    else:
        return []
    if new_specs == o.in_specs:
        return []
    axes = and_list([repr(a) for a in mesh.names if a in missing])
    words = (
        f": mesh axis {axes} has size 1, so splitting over it splits nothing, yet JAX's types then say the"
        " values vary along it"
    )
    return _spec_options(model, call, budget, "in_specs", [(new_specs, words)])


def _reordered_out_specs(model: ShardModel, shapes: Any, varying: list[Any]) -> Suggestion | None:
    """A tuple of out_specs whose entries fit the outputs in another order (two outputs
    written in the order of another function's return): the one order, other than the
    written one, in which every output's entry holds it, each entry naming as many dims as
    its output has. Tried after the changes of the failing entries alone; the function's
    record answers for it: no trace."""
    o = model.options
    specs = o.out_specs
    if o.smap_axes is not None or not isinstance(specs, tuple) or not isinstance(shapes, tuple):
        return None
    if not 2 <= len(specs) == len(shapes) <= 4 or not all(isinstance(sp, PartitionSpec) for sp in specs):
        return None
    if not all(isinstance(shape, Shape) for shape in shapes):
        return None

    def holds(order: tuple[int, ...]) -> bool:
        reordered = tuple(specs[j] for j in order)
        if any(len(spec_axes(spec)) > len(shape) for spec, shape in zip(reordered, shapes, strict=True)):
            return False
        return not replace(model, options=replace(o, out_specs=reordered)).output_gaps(shapes, varying)

    fitting = [
        order for order in itertools.permutations(range(len(specs))) if list(order) != sorted(order) and holds(order)
    ]
    if len(fitting) != 1:
        return None
    new_specs = tuple(specs[j] for j in fitting[0])
    moved = and_list([f"output[{i}]" for i, j in enumerate(fitting[0]) if i != j])
    return Suggestion(
        f"out_specs={option_repr(new_specs)}: the entries in the order of the outputs ({moved} had another's entry)",
        (("out_specs", new_specs),),
        reassigns=True,
    )


def _out_spec_candidate(
    model: ShardModel, shapes: Any, specs: list[Any], gaps: Any, dims: tuple[int, ...]
) -> tuple[Suggestion, Any] | None:
    """The out_specs (smap: out_axes) that put each gap's mesh axes at the dimension
    `dims` gives it, as a suggestion and as the options to check it with."""
    o = model.options
    for gap, d in zip(gaps, dims, strict=True):
        entries = spec_axes(gap.spec) + [()] * (len(gap.block) - len(spec_axes(gap.spec)))
        entries[d] = gap.missing
        specs[gap.index] = _spec_of(entries)
    at = {gap.index: d for gap, d in zip(gaps, dims, strict=True)}
    treedef = jax.tree_util.tree_structure(shapes)
    single = isinstance(o.out_specs, PartitionSpec) and all(sp == specs[0] for sp in specs)
    new_specs: Any = specs[0] if single else jax.tree_util.tree_unflatten(treedef, specs)
    labels = " and ".join(g.label for g in gaps)
    axes = list(dict.fromkeys(a for g in gaps for a in g.missing))
    where = " and ".join(f"axis {at[g.index]} of {g.label}" for g in gaps)
    over = " and ".join(repr(a) for a in axes)
    if o.smap_axes is None:
        option: tuple[str, Any] = ("out_specs", new_specs)
        shown = f"out_specs={option_repr(new_specs)}"
        rest = ", or pass check_vma=False if it is replicated in fact"
        candidate = replace(o, out_specs=new_specs)
    else:
        in_axes, out_axes = o.smap_axes
        flat_axes = broadcast_prefix(out_axes, shapes, lambda x: x is None)
        if isinstance(flat_axes, PrefixMismatch):
            return None
        new_axes = list(flat_axes)
        for gap in gaps:
            new_axes[gap.index] = at[gap.index]
        one = not isinstance(out_axes, (tuple, list, dict)) and all(a == new_axes[0] for a in new_axes)
        new_out_axes = new_axes[0] if one else jax.tree_util.tree_unflatten(treedef, new_axes)
        option = ("out_axes", new_out_axes)
        shown = f"out_axes={new_out_axes!r}"
        rest = ""
        candidate = replace(o, out_specs=new_specs, smap_axes=(in_axes, new_out_axes))
    verb = "varies" if len(gaps) == 1 else "vary"
    mesh_axes = "mesh axis" if len(axes) == 1 else "mesh axes"
    text = (
        f"{shown}: {labels} {verb} over {mesh_axes} {over}, so the blocks are concatenated along {where}"
        f" (or reduce over {over} first with jax.lax.psum / pmean{rest})"
    )
    return Suggestion(text, (option,)), candidate


def _shard_out_axes_tried(model: ShardModel, call: Call, budget: Budget) -> list[Suggestion]:
    """Where JAX's types cannot be read: try naming each unused manual axis in a single
    out_spec."""
    o = model.options
    if o.mesh is None or o.smap_axes is not None or not isinstance(o.out_specs, PartitionSpec):
        return []
    entries = spec_axes(o.out_specs)
    used = {a for e in entries for a in e}
    manual = o.axis_names or frozenset(o.mesh.names)
    found: list[Suggestion] = []
    for axis in (a for a in o.mesh.names if a in manual and a not in used):
        first_free = next((d for d, e in enumerate(entries) if not e), len(entries))
        new_entries = [*entries, ()] if first_free == len(entries) else list(entries)
        new_entries[first_free] = (axis,)
        new_spec = _spec_of(new_entries)
        if works(replace(model, options=replace(o, out_specs=new_spec)), call, budget):
            found.append(
                Suggestion(
                    f"out_specs={option_repr(new_spec)}: the output varies over mesh axis {axis!r}, so its blocks are"
                    f" concatenated along it (or reduce over it with jax.lax.psum / pmean first, or pass"
                    " check_vma=False if it is replicated in fact)",
                    (("out_specs", new_spec),),
                )
            )
    return found


def candidates(
    model: Model,
    call: Call,
    err: AxisCheckError,
    budget: Budget,
    positional: tuple[Call, tuple[str, ...]] | None = None,
) -> list[Suggestion]:
    """The changes the engine accepts for this failed call, from the first search the
    mistake points to that finds any (in search order, unranked).

    A model without a signature is traced to try a candidate, within `budget`.
    `positional`: the same call with its keyword arguments passed by position (and their
    names), when the function takes them in that order.
    """
    model = budget.counted(model)
    if isinstance(model, ShardModel):
        nonnegative = _smap_nonnegative_options(model, call, budget)
        if nonnegative:
            return nonnegative
        if isinstance(err, OutputError):
            return _shard_out_options(model, call, budget)
        return (
            _smap_inferred_options(model, call, budget)
            or _renamed_axis_options(model, call, budget)
            or _twice_named_options(model, call, budget)
            or _in_specs_count_options(model, call, budget)
            or _surplus_none_options(model, call, budget)
            or _shard_in_options(model, call, budget)
            or _split_or_whole_options(model, call, err, budget)
        )
    if not isinstance(model, MapModel):
        return []
    if positional is not None:
        options = _static_keyword_options(model, *positional, budget) or _keyword_options(
            model, call, *positional, budget
        )
        if options:
            return options
    if isinstance(err, FunctionError):  # the function's own failure: an unbound axis name, or a batch left unmapped
        return (
            _axis_name_options(model, call, err, budget)
            or _static_options(model, call, budget)
            or _left_unmapped_options(model, call, budget)
            or _swapped_options(model, call, budget)
            or _over_mapped_options(model, call, budget)
            or _other_axis_options(model, call, budget)
        )
    nonnegative = _nonnegative_options(model, call, budget)
    if nonnegative:
        return nonnegative
    if isinstance(err, OutputError):
        return _out_axes_options(model, call, budget)
    options = (
        _static_options(model, call, budget)
        or _unhashable_static_options(model, call, budget)
        or _axis_size_options(model, call, budget)
        or _unmapped_size_options(model, call, budget)
        or _structure_options(model, call, budget)
        or _scalar_leaf_options(model, call, budget)
        or _in_axes_options(model, call, budget)
        or _leaf_axes_options(model, call, budget)
    )
    per_example = err.symbol is not None and not err.symbol.startswith("batch size")
    if not options and per_example:
        options = _transpose_options(model, call, budget)  # a per-example conflict: axis order
    return options
