"""The advice: what to change when a call fails, checked against what the program means.

A layer above the engine, which it only asks questions of (the call an error was found
in, whether a changed call passes every check, JAX's transform with other options). For
one failed call it

1. finds the candidates: nearby changes of the options (or of how the call passes its
   arguments) that the engine accepts (`_candidates`), and the real cause where the call
   shows one no option change can fix (`_causes`: a list mapped as an array, an iterator);
2. checks each against the reference of what the program means, on the call's own
   arguments or stand-ins (`_meaning`);
3. ranks them by one rule (`_rank`);
4. and words them (`_words`): a candidate that passed is the `Fix`, anything else
   "Runs, but ..." with what it changes.

The search never hides the error it advises on: whatever goes wrong in it, the error is
raised as the engine found it.
"""

from __future__ import annotations

import os
from typing import Any

from .._core._errors import AxisCheckError, warnings_held
from .._core._explain import tables_unread
from .._core._jax_compat import quiet_tracebacks
from .._core._leaves import Call, abstract, struct
from .._engine._function import fn_name
from .._engine._models import MapModel, Model
from .._engine._predictor import ASKING_JAX, Predictor, jax_verdict, ruled_apart_from_jax
from .._engine._shard_model import ShardModel
from ._candidates import Budget, candidates, with_shapes_read
from ._causes import MapFacts, cause
from ._examples import other_rank
from ._meaning import judged, partial_results, program
from ._rank import per_argument, rank
from ._suggestion import Suggestion
from ._words import worded

__all__ = ["Suggestion", "advise", "advise_signature"]

RAISE_OWN_ERRORS = os.environ.get("AXISCHECK_ADVICE_ERRORS", "").strip().lower() == "raise"
"""Whether an error of the advice's own is raised (`AXISCHECK_ADVICE_ERRORS=raise`, the test
suite's setting: a bug in the advice then fails a test) rather than swallowed, leaving the
error it advises on as the engine found it (every user's setting)."""

SHAPES_READ_TRACES = 2
"""Runs of the function a failure may spend, after the fix search, to learn whether the
arrays a tied candidate passes whole are data (`with_shapes_read`)."""


def advise(predictor: Predictor, err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError:
    """`err` with the advice for the call that raised it: the fixes that compute what the
    program means, and what only makes the shapes agree. The function's own failure gets
    only the changes its facts point to (a collective's unbound axis name; an argument left
    unmapped that has an axis of the batch size: see `candidates`); a mistake about how the
    processes of a job share the devices (`err.job`) gets none: its remedy is in the
    process's own arguments, not an option."""
    if ASKING_JAX.get() or err.job is not None:
        return err
    try:
        with quiet_tracebacks(), warnings_held():  # the trials' exceptions are only read, their warnings unsaid
            try:
                args, kwargs, call = predictor.found_in(err, args, kwargs)
            except Exception:  # arguments the engine cannot read (a pytree whose flatten fails): no call to advise on
                return err
            model = predictor.models.model
            named = cause(call, err, _map_facts(model, call, predictor.params))
            budget = Budget(predictor.fix_traces)  # the search's, and what it leaves to `other_rank`
            found = candidates(model, call, err, budget, predictor.by_position(args, kwargs))
            run_with = predictor.run_with
            prog = program(run_with, predictor.fun, model, call, args, kwargs) if run_with is not None else None
            if found and prog is not None:
                found = judged(found, prog, predictor.models.declares_inputs)
            found = with_shapes_read(model, call, found, Budget(SHAPES_READ_TRACES))
            ranked = rank(model, call, found)
            if ranked and ranked[0].is_fix and not _jax_accepts(predictor, model, ranked[0], args, kwargs):
                ranked = []  # a fix JAX would refuse (a pmap tracing a Python int) is none
            if not ranked:  # no reading at all: an example of another rank may be the cause
                named = named or other_rank(model, call, err, budget, fn_name(predictor.fun))
            if not any(s.is_fix for s in ranked):
                named = named or partial_results(prog, err)
    except Exception:  # advice must never hide the error itself
        if RAISE_OWN_ERRORS:
            raise
        return err
    return worded(err, ranked, named)


def advise_signature(model: Model, call: Call, err: AxisCheckError) -> AxisCheckError:
    """`err` with the advice for a signature's prediction (no function to run: the
    declared signature is all that says what the program means, and the engine checks
    it)."""
    try:
        with quiet_tracebacks(), tables_unread():
            return worded(err, rank(model, call, candidates(model, call, err, Budget(0))))
    except Exception:
        if RAISE_OWN_ERRORS:
            raise
        return err


def _map_facts(model: Model, call: Call, params: tuple[list[str], str | None, set[str]] | None) -> MapFacts:
    """What the causes read of the map: its kind, its in_axes and what it passes whole
    (a vmap's or pmap's), the function's positional parameters (none past a `*args`)."""
    parameters = tuple(params[0]) if params is not None and params[1] is None else ()
    if not isinstance(model, MapModel):
        return MapFacts(_kind(model), parameters=parameters)
    in_axes = model.level.in_axes.value
    entries = per_argument(in_axes, len(call.args)) or []
    unmapped = frozenset(i for i, entry in enumerate(entries) if entry is None)
    return MapFacts(model.level.kind, in_axes, unmapped, parameters)


def _kind(model: Model) -> str:
    """The transform a model is of, as messages name it (`vmap`, `pmap`, `shard_map`, `smap`)."""
    if isinstance(model, MapModel):
        return model.level.kind
    if isinstance(model, ShardModel):
        return model.options.kind
    return "the transform"


def _jax_accepts(
    predictor: Predictor, model: Model, fix: Suggestion, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether JAX's own transform with the fix applied (its options, and the call
    changed as it says) runs these arguments, asked abstractly. Asked of a pmap only:
    the engine models it as a map over devices, where JAX traces an unmapped Python
    scalar. A vmap or shard_map of the function itself was checked by JAX's own trace
    already, and a declared signature is the user's word that needs no run of the
    function (whose body may be a stub)."""
    if not ruled_apart_from_jax(model):
        return True
    run_with = predictor.run_with
    if run_with is None:
        return True
    return jax_verdict(run_with(fix.as_kwargs()), *_fixed_call(fix, args, kwargs)) is None


def _fixed_call(
    fix: Suggestion, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call as `fix` changes it: keyword arguments passed by position, an argument
    transposed or padded (as an abstract value of its new shape)."""
    kwargs = dict(kwargs)
    moved = [*args, *(kwargs.pop(name) for name in fix.by_position)]
    for i, order in fix.transposes:
        x = abstract(moved[i])
        moved[i] = struct(tuple(x.shape[a] for a in order), x.dtype, x.weak_type)
    for i, axis, size in fix.pads:
        x = abstract(moved[i])
        shape = list(x.shape)
        shape[axis] = size
        moved[i] = struct(tuple(shape), x.dtype, x.weak_type)
    return tuple(moved), kwargs
