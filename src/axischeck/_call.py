"""A checked call's pieces, which `Transformed.__call__` puts together: the checks before
JAX runs, JAX's verdict on a refused call, the account of a failure (JAX's exception
kept: its type, and its message as the last line), and the output against the
prediction. Each takes what it needs (the predictor, JAX's transform, the transform's
name) as arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jax.core import Tracer

from ._core._errors import AxisCheckError, FunctionError, OutputError, with_jax_error
from ._core._jax_compat import quiet_tracebacks, unbound_axis_name, vmappable_value
from ._core._keys import arrays_by_position
from ._core._leaves import flatten_call, shape_of
from ._core._prediction import Prediction
from ._core._shape import format_shape
from ._core._steps import BaseStep
from ._core._trees import leaf_paths
from ._engine._predictor import Predictor
from ._engine._trace import substituting
from ._in_trace import Recorder, Watch

CALL_FIX_TRACES = 1
"""How many candidate fixes a failed call may trace the user's function for."""

JAX_ALONE = Prediction(None, None, ())
"""`checks_before`'s answer for a call beyond axischeck's model: JAX alone runs it."""


def refuse_unflattenable(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A call with nothing to check before JAX runs may still hold a cyclic or too deep
    argument, which JAX's own flatten must not meet (it recurses until the interpreter
    cannot): refused as an `ArgumentError`. Arrays by position need no look."""
    if not arrays_by_position(args, kwargs):
        flatten_call(args, kwargs)


def checks_before(
    predictor: Predictor,
    jax_fn: Callable[..., Any],
    defers: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    recorder: Recorder | None = None,
) -> Prediction | Watch | None:
    """The checks before JAX runs: the prediction to verify the output against (with a
    signature), None when there is none, `JAX_ALONE` for what only JAX models, a `Watch`
    where the check rides JAX's trace (`recorder`: the function JAX's transform holds);
    raises axischeck's error (with JAX's verdict) for a call it refuses."""
    pred = predictor.by_arrays(args, kwargs)  # arrays by position, seen before: no flatten
    if pred is not None:
        return pred
    symbolic = not defers and predictor.models.symbolic
    flat = flatten_call(args, kwargs)
    if defers:
        return JAX_ALONE
    pred = predictor.hit(args, kwargs, flat) if symbolic else None
    if pred is None and (symbolic or (predictor.prechecks and not predictor.prechecked(args, kwargs, flat))):
        if opaque_leaves(flat[0]):  # beyond axischeck's model (never cached)
            return JAX_ALONE
        if recorder is not None and not symbolic and not predictor.models.declares_inputs:
            return Watch(recorder, predictor, args, kwargs, flat)  # the function is traced by JAX alone
        try:
            if symbolic:
                pred = predictor.answer(args, kwargs, flat)
            else:
                predictor.precheck(args, kwargs, flat)
        except FunctionError:
            pass  # the function's own failure: JAX raises it, untouched
        except AxisCheckError as err:
            raise refusal(predictor, jax_fn, err, args, kwargs, CALL_FIX_TRACES) from err.__cause__
    return pred


def refusal(
    predictor: Predictor,
    jax_fn: Callable[..., Any],
    err: AxisCheckError,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    traces: int,
) -> AxisCheckError:
    """`err`, before JAX ran the call, with the fixes the engine verified and JAX's own
    verdict (its exception type and message) where JAX refuses the call too, so code
    written against JAX's errors keeps working."""
    err = predictor.with_fix(err, args, kwargs, traces)
    jax_err = _jax_verdict(jax_fn, args, kwargs)
    return err if jax_err is None else with_jax_error(err, jax_err)


def checks_after(watch: Watch, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The check of a call JAX has run (see `checks_before`): axischeck's error, with the
    fixes the engine verified, for a call it refuses (JAX accepted it)."""
    try:
        watch.check()
    except AxisCheckError as err:
        raise watch.predictor.with_fix(err, args, kwargs, CALL_FIX_TRACES) from err.__cause__


def diagnosis(
    predictor: Predictor, name: str, err: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> AxisCheckError | None:
    """After JAX failed: our account of it (JAX's message kept), or None to let JAX's
    exception through untouched, with a note when the function itself fails per example."""
    if _checking_leaks():  # JAX's leak checker: the function must not run again
        return None
    ours = predictor.diagnose(args, kwargs)
    if isinstance(ours, FunctionError):
        if unbound_axis_name(err) is not None:  # the per-example failure a fix often settles
            ours = predictor.with_fix(ours, args, kwargs, CALL_FIX_TRACES)
        unit = "per device" if "per-device" in ours.problem else "per example"
        head = f"axischeck: {ours.transform or name}: the failure happens {unit}"
        disagreement = ours.disagreement()  # the blame, when JAX's message names two sizes
        lines = [f"{head}: {disagreement}" if disagreement else f"{head}:"]
        lines += ["  " + row for row in (ours.table or "").splitlines()]
        lines += ["  " + note for note in ours.notes]
        lines += [f"  Fix: {ours.fix}"] if ours.fix else []
        # An inner axischeck transform noted it already: the outer note, with the whole
        # nest in its table, replaces that one.
        notes = getattr(err, "__notes__", None)
        if isinstance(notes, list):
            notes[:] = [n for n in notes if not (isinstance(n, str) and n.startswith("axischeck: "))]
        err.add_note("\n".join(lines))
        return None
    if ours is None:
        return None
    return with_jax_error(predictor.with_fix(ours, args, kwargs, CALL_FIX_TRACES), err)


def verify_output(
    predictor: Predictor, name: str, out: Any, pred: Prediction, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """A declared signature that lies is reported: the leaf, declared vs actual."""
    got_leaves, got_def = jax.tree_util.tree_flatten(out)
    want_leaves, want_def = pred.flat
    if got_def != want_def:
        raise OutputError(
            f"the function returned an output of structure {got_def}, but its signature declares {want_def}",
            transform=name,
        )
    if all(getattr(g, "shape", None) == w for g, w in zip(got_leaves, want_leaves, strict=True)):
        return  # the common case: it runs on every eager call
    pred = predictor.full(args, kwargs)  # the derivation, for the message
    base = next((s for s in pred.steps if isinstance(s, BaseStep)), None)
    specs = {r.label: r.spec for r in base.outs} if base is not None else {}
    for label, got, want in zip(leaf_paths(out), got_leaves, want_leaves, strict=True):
        shape = shape_of(got)
        if shape != want:
            leaf = "output" + label
            declared = f" (declared {specs[leaf]})" if specs.get(leaf) else ""
            raise OutputError(
                f"the function's output contradicts its signature: {leaf} has shape"
                f" {format_shape(shape) if shape is not None else type(got).__name__}, but"
                f" the signature predicts {format_shape(want)}{declared}",
                transform=name,
                table=str(pred),
            )


def _jax_verdict(jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception | None:
    """JAX's own exception for this call, found abstractly (no FLOPs): arrays are traced,
    every other leaf is passed as the real call passes it. None when JAX accepts it
    (it answers silently and wrongly, or axischeck is stricter: axischeck's error stands)."""
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    dyn = [
        i for i, x in enumerate(leaves) if shape_of(x) is not None and not isinstance(x, (bool, int, float, complex))
    ]
    try:
        with quiet_tracebacks():  # only its type and message are kept
            jax.eval_shape(substituting(jax_fn, treedef, leaves, dyn), *[leaves[i] for i in dyn])
    except AxisCheckError:
        return None
    except Exception as err:
        return err
    return None


def opaque_leaves(leaves: list[Any]) -> bool:
    """Whether some argument leaf is beyond axischeck's model, so JAX alone answers:
    a type registered with `register_vmappable`, or an array with symbolic sizes."""
    static: set[tuple[int, ...]] = set()  # shapes of ints seen: leaves of one shape are read once
    for x in leaves:
        if vmappable_value(x):
            return True
        if isinstance(x, (Tracer, jax.ShapeDtypeStruct)):
            shape = x.shape
            if type(shape) is tuple and shape in static:
                continue
            if not all(type(d) is int for d in shape):
                return True
            static.add(shape)
    return False


def _checking_leaks() -> bool:
    return bool(getattr(jax.config, "jax_check_tracer_leaks", False))
