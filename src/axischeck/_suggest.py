"""Fix suggestions: search the small space of nearby options with the engine itself.

Only options the engine accepts are suggested (so JAX accepts them too), and nothing is
suggested when no option works or too many do to tell which was meant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import jax

from ._axes import freeze_in_axes, freeze_out_axes
from ._errors import AxisCheckError, FunctionError, OutputError
from ._leaves import Call, Leaf, abstract, struct
from ._models import Model, VmapModel, is_symbolic, run
from ._shape import Shape
from ._trees import seq_repr

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
            choices.append([entries[i]])  # pytrees and non-arrays keep their entry
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


def suggest(model: Model, call: Call, err: AxisCheckError, traces: int = 6) -> tuple[Suggestion, ...]:
    """Options that would make this call pass, most specific first; () when unclear.

    A model without a signature is traced to try a candidate: at most `traces` are tried.
    """
    if not isinstance(model, VmapModel):
        return ()
    budget = _Budget(traces)
    if isinstance(err, OutputError):
        options = _out_axes_options(model, call, budget)
    else:
        options = _axis_size_options(model, call, budget) or _in_axes_options(model, call, budget)
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
