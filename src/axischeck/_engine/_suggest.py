"""Fix suggestions: search the small space of nearby options with the engine itself.

Only options the engine accepts are suggested (so JAX accepts them too), and nothing is
suggested when no option works or too many do to tell which was meant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import jax

from .._core._axes import freeze_in_axes, freeze_out_axes
from .._core._errors import AxisCheckError, FunctionError, OutputError
from .._core._jax_compat import unbound_axis_name
from .._core._leaves import Call, Leaf, abstract, struct
from .._core._shape import Shape
from .._core._trees import seq_repr
from ._levels import map_inputs
from ._models import Model, VmapModel, is_symbolic, run

MAX_TRIES = 48
MAX_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One option that makes every check pass, as text and as the values to pass."""

    text: str
    options: tuple[tuple[str, Any], ...]  # e.g. (("in_axes", (0, 1, 0)),)

    def as_kwargs(self) -> dict[str, Any]:
        return dict(self.options)


class _Budget:
    """How many more candidates may run the user's function (a trace each)."""

    def __init__(self, traces: int) -> None:
        self.traces = traces

    def allows(self, model: Model) -> bool:
        if is_symbolic(model):
            return True
        self.traces -= 1
        return self.traces >= 0


def _works(model: Model, call: Call, budget: _Budget) -> bool:
    if isinstance(model, VmapModel):
        try:  # the level's own checks run no user code: they cost no trace
            map_inputs(model.level, call, ())
        except Exception:
            return False
    if not budget.allows(model):
        return False
    try:
        run(model, call)
    except AxisCheckError:
        return False
    except Exception:  # a trace that fails for other reasons is no fix either
        return False
    return True


def _describe_arg(call: Call, i: int, axis: int | None) -> str:
    name = call.arg_labels[i]
    if axis is None:
        return f"leave {name} unmapped"
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    size = leaf.shape[axis] if leaf.shape is not None and -len(leaf.shape) <= axis < len(leaf.shape) else "?"
    return f"map {name}'s axis {axis} (size {size})"


def _in_axes_options(model: VmapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    current = model.level.in_axes.value
    n = len(call.args)
    if n == 0:
        return []
    entries = list(current) if isinstance(current, tuple) else [current] * n
    if len(entries) != n:
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
    found: list[Suggestion] = []
    tries = 0
    for edits in (1, 2):
        for idx in itertools.combinations(range(n), edits):
            for values in itertools.product(*(choices[i] for i in idx)):
                tries += 1
                if tries > MAX_TRIES:
                    return found
                cand = list(entries)
                for i, v in zip(idx, values, strict=True):
                    cand[i] = v
                axes = tuple(cand)
                level = replace(model.level, in_axes=freeze_in_axes(axes))
                if _works(VmapModel(level, model.inner, model.fn), call, budget):
                    why = " and ".join(_describe_arg(call, i, v) for i, v in zip(idx, values, strict=True))
                    found.append(Suggestion(f"in_axes={seq_repr(axes)} would {why}", (("in_axes", axes),)))
        if found:
            return found
    return found


def _axis_size_options(model: VmapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    if model.level.axis_size is None:
        return []
    without = VmapModel(replace(model.level, axis_size=None), model.inner, model.fn)
    if not budget.allows(without):
        return []
    try:
        step = run(without, call).steps[0]
    except Exception:
        return []
    size = getattr(step, "axis_size", None)
    return [Suggestion(f"axis_size={size} (or leave it out) matches the mapped arguments", (("axis_size", size),))]


def _out_axes_options(model: VmapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    current = model.level.out_axes.value
    if not (current is None or type(current) is int):
        return []
    found = []
    for cand in (0, -1, 1):
        if cand == current:
            continue
        level = replace(model.level, out_axes=freeze_out_axes(cand))
        if _works(VmapModel(level, model.inner, model.fn), call, budget):
            found.append(Suggestion(f"out_axes={cand}", (("out_axes", cand),)))
            break
    return found


def _transposed(call: Call, i: int, perm: tuple[int, ...]) -> Call:
    leaf = jax.tree_util.tree_leaves(call.args[i])[0]
    assert leaf.shape is not None
    shape = Shape(tuple(leaf.shape[p] for p in perm))
    value = struct(shape, abstract(leaf.value).dtype)
    new = Leaf(leaf.label, shape, value, shape, tuple(range(len(shape))))
    return Call(call.args[:i] + (new,) + call.args[i + 1 :], call.kwargs, call.arg_params, call.arg_labels)


def _transpose_options(model: VmapModel, call: Call, budget: _Budget) -> list[Suggestion]:
    """Transposing one argument, when no change of axes does it (arrays of rank <= 4)."""
    found: list[Suggestion] = []
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
                return found
            if _works(model, _transposed(call, i, perm), budget):
                name = call.arg_labels[i]
                shape = tuple(leaves[0].shape[p] for p in perm)
                found.append(
                    Suggestion(
                        f"passing jnp.transpose({name}, {perm}) (shape {shape}) instead of {name} would agree",
                        (("transpose", (i, perm)),),
                    )
                )
    return found


def _keyword_options(model: VmapModel, positional: Call, moved: tuple[str, ...], budget: _Budget) -> list[Suggestion]:
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
        )
    ]


def _tupled(axes: Any) -> Any:
    """`axes` with every list inside made a tuple (JAX reads a nested list as another pytree)."""
    if isinstance(axes, (list, tuple)):
        return tuple(_tupled(a) for a in axes)
    if isinstance(axes, dict):
        return {k: _tupled(v) for k, v in axes.items()}
    return axes


def _structure_options(model: VmapModel, call: Call, budget: _Budget) -> list[Suggestion]:
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
    found: list[Suggestion] = []
    seen: list[Any] = []
    for cand, why in candidates:
        if cand in seen or len(found) > MAX_SHOWN:
            continue
        seen.append(cand)
        level = replace(model.level, in_axes=freeze_in_axes(cand))
        if _works(VmapModel(level, model.inner, model.fn), call, budget):
            found.append(Suggestion(f"in_axes={seq_repr(cand)} ({why})", (("in_axes", cand),)))
    return found


def _axis_name_options(model: VmapModel, call: Call, err: AxisCheckError, budget: _Budget) -> list[Suggestion]:
    """A collective over a name no transform binds: naming this vmap's axis so."""
    name = unbound_axis_name(err.__cause__ or err)
    if name is None or model.level.axis_name == name:
        return []
    level = replace(model.level, axis_name=name)
    if not _works(VmapModel(level, model.inner, model.fn), call, budget):
        return []
    bound = "no axis name" if model.level.axis_name is None else f"axis_name={model.level.axis_name!r}"
    return [
        Suggestion(
            f"axis_name={name!r} (this vmap has {bound}) binds the name the collective uses", (("axis_name", name),)
        )
    ]


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
    if not isinstance(model, VmapModel):
        return ()
    budget = _Budget(traces)
    if positional is not None and isinstance(model.level.in_axes.value, tuple):
        options = _keyword_options(model, positional[0], positional[1], budget)
        if options:
            return tuple(options)
    if isinstance(err, FunctionError):
        options = _axis_name_options(model, call, err, budget)
        if options:
            return tuple(options)
    if isinstance(err, OutputError):
        options = _out_axes_options(model, call, budget)
    else:
        options = (
            _axis_size_options(model, call, budget)
            or _structure_options(model, call, budget)
            or _in_axes_options(model, call, budget)
        )
        per_example = isinstance(err, FunctionError) or (
            err.symbol is not None and not err.symbol.startswith("batch size")
        )
        if not options and per_example:
            options = _transpose_options(model, call, budget)  # a per-example conflict: axis order
    if len(options) > MAX_SHOWN:
        return ()  # too many ways out: any one would be a guess
    return tuple(options)


def with_suggestions(err: AxisCheckError, options: tuple[Suggestion, ...]) -> AxisCheckError:
    """The same error, its `fix` saying what would work (if the engine found anything)."""
    if not options or err.fix:
        return err
    text = "; or ".join(o.text for o in options)
    new = type(err)(
        err.problem,
        transform=err.transform,
        symbol=err.symbol,
        places=err.places,
        table=err.table,
        notes=err.notes,
        fix=text,
    )
    new.suggestions = options
    return new
