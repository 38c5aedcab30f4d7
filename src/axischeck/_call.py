"""A checked call, on its own: the checks before JAX runs, JAX's run, the output against
the signature, and after a failure axischeck's account of it, JAX's exception kept (its
type, and its message as the last line)."""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING, Any
from weakref import ref

import jax
from jax.core import Tracer

from ._core._cache import runs_code
from ._core._errors import AxisCheckError, FunctionError, OutputError, with_jax_error
from ._core._jax_compat import (
    CONCRETE_ARRAY_TYPES,
    TRUSTED_ARRAY_TYPES,
    quiet_tracebacks,
    unbound_axis_name,
    vmappable_value,
)
from ._core._leaves import flatten_call, shape_of
from ._core._prediction import Prediction
from ._core._shape import format_shape
from ._core._steps import BaseStep
from ._core._trees import leaf_paths
from ._engine._predictor import declares_nothing, known_to_declare_nothing
from ._engine._trace import substituting
from ._switch import CHECKS_OFF

if TYPE_CHECKING:
    from ._transform import Transformed

CALL_FIX_TRACES = 1
"""How many candidate fixes a failed call may trace the user's function for."""


def checked_call(shell: Transformed[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """`shell(*args, **kwargs)` (this is `Transformed.__call__` itself): the checks before
    JAX runs (a cached prediction with a signature, the pre-checks without), JAX's own
    run, the output against the signature, and after a failure, axischeck's account of
    it with JAX's exception kept.

    One frame between the caller and JAX: next to JAX's eager work each further Python
    frame costs microseconds (measured), many times its cost in a loop, so the common
    cases are written out here, each marked with the function it inlines."""
    if CHECKS_OFF.get():  # inside `checks_disabled()`: JAX's transform, unchecked
        return shell._jax_fn(*args, **kwargs)
    pred = None
    straight = shell._straight
    if straight is None:  # settled at the first call, once per transform
        straight = known_to_declare_nothing(ref(shell.__wrapped__))  # `declares_nothing`'s look-up, inlined
        if straight is None:
            straight = declares_nothing(shell.__wrapped__)
        shell._straight = straight
    if straight:  # nothing to check before JAX runs...
        if kwargs or not TRUSTED_ARRAY_TYPES.issuperset(map(type, args)):  # `arrays_by_position`, inlined
            try:  # ...but a cyclic or too deep argument, which JAX's own flatten must not meet
                flatten_call(args, kwargs)
            except AxisCheckError as err:
                raise err from None
    else:
        predictor = shell._shared
        fun = shell.__wrapped__
        if predictor is None or not (
            (type(fun) is FunctionType and predictor.code is fun.__code__)  # `runs_code`'s first test, inlined
            or runs_code(fun, predictor.code)
        ):
            predictor = shell._predictor  # found at first use, or the function's code was replaced
        table = predictor.by_shapes  # answers keyed by shapes alone, if a signature gave them
        if table is not None and not kwargs:  # `arrays_key` of concrete arrays, inlined:
            # one pass reads the types and shapes; `issuperset` of the types and a map of an
            # attrgetter took 0.8 us more next to JAX's call (interleaved A/B), 0.2 in a loop
            shapes = []
            for a in args:  # not a comprehension: one more frame on Python 3.11
                if type(a) not in CONCRETE_ARRAY_TYPES:
                    break
                shapes.append(a.aval.shape)
            else:
                pred = table.get(("arrays", tuple(shapes)))
        if pred is None:
            pred = _before(shell, args, kwargs)
            if pred is _JAX_ALONE:
                return shell._jax_fn(*args, **kwargs)
    try:
        out = shell._jax_fn(*args, **kwargs)
    except AxisCheckError:
        raise  # an inner axischeck transform has explained it
    except Exception as err:
        ours = _diagnosis(shell, err, args, kwargs)
        if ours is None:
            raise
        # The explanation replaces JAX's exception, whose type and message it carries
        # (as a refusal before the run does): no chained JAX traceback above the user's.
        raise ours from None
    # One array as predicted (the common eager case), read without the `shape` properties' frames.
    if pred is not None and not (type(out) in CONCRETE_ARRAY_TYPES and out.aval.shape == pred._shapes):
        _verify(shell, out, pred, args, kwargs)  # anything else: the whole output, leaf by leaf
    return out


_JAX_ALONE = Prediction(None, None, ())
"""`_before`'s answer for a call beyond axischeck's model: JAX alone runs it."""


def _before(shell: Transformed[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Prediction | None:
    """The checks before JAX runs: the prediction to verify the output against (with a
    signature), None when there is none, `_JAX_ALONE` for what only JAX models; raises
    axischeck's error (with JAX's verdict) for a call it refuses."""
    predictor = shell._predictor
    symbolic = not shell._defers and predictor.models.symbolic
    try:
        flat = flatten_call(args, kwargs)
    except AxisCheckError as err:
        raise err from None
    if shell._defers:
        return _JAX_ALONE
    pred = predictor.hit(args, kwargs, flat) if symbolic else None
    if pred is None and (symbolic or (predictor.prechecks and not predictor.prechecked(args, kwargs, flat))):
        if opaque_leaves(flat[0]):  # beyond axischeck's model (never cached)
            return _JAX_ALONE
        try:
            if symbolic:
                pred = predictor.answer(args, kwargs, flat)
            else:
                predictor.precheck(args, kwargs, flat)
        except FunctionError:
            pass  # the function's own failure: JAX raises it, untouched
        except AxisCheckError as err:
            raise _refusal(shell, err, args, kwargs, CALL_FIX_TRACES) from err.__cause__
    return pred


def _refusal(
    shell: Transformed[..., Any], err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any], traces: int
) -> AxisCheckError:
    """`err`, before JAX ran the call, with the fixes the engine verified and JAX's own
    verdict (its exception type and message) where JAX refuses the call too, so code
    written against JAX's errors keeps working."""
    err = shell._predictor.with_fix(err, args, kwargs, traces)
    jax_err = _jax_verdict(shell._jax_fn, args, kwargs)
    return err if jax_err is None else with_jax_error(err, jax_err)


def _diagnosis(
    shell: Transformed[..., Any], err: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> AxisCheckError | None:
    """After JAX failed: our account of it (JAX's message kept), or None to let JAX's
    exception through untouched, with a note when the function itself fails per example."""
    if _checking_leaks():  # JAX's leak checker: the function must not run again
        return None
    ours = shell._predictor.diagnose(args, kwargs)
    if isinstance(ours, FunctionError):
        if unbound_axis_name(err) is not None:  # the per-example failure a fix often settles
            ours = shell._predictor.with_fix(ours, args, kwargs, CALL_FIX_TRACES)
        unit = "per device" if "per-device" in ours.problem else "per example"
        head = f"axischeck: {ours.transform or shell._describe()}: the failure happens {unit}"
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
    return with_jax_error(shell._predictor.with_fix(ours, args, kwargs, CALL_FIX_TRACES), err)


def _verify(
    shell: Transformed[..., Any], out: Any, pred: Prediction, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """A declared signature that lies is reported: the leaf, declared vs actual."""
    got_leaves, got_def = jax.tree_util.tree_flatten(out)
    want_leaves, want_def = pred.flat
    if got_def != want_def:
        raise OutputError(
            f"the function returned an output of structure {got_def}, but its signature declares {want_def}",
            transform=shell._describe(),
        )
    if all(getattr(g, "shape", None) == w for g, w in zip(got_leaves, want_leaves, strict=True)):
        return  # the common case, kept cheap: it runs on every eager call
    pred = shell._predictor.full(args, kwargs)  # the derivation, for the message
    base = next((s for s in pred.steps if isinstance(s, BaseStep)), None)
    specs = {r.label: r.spec for r in base.outs} if base is not None else {}
    for label, got, want in zip(leaf_paths(out), got_leaves, want_leaves, strict=True):
        shape = shape_of(got)
        if shape != want:
            name = "output" + label
            declared = f" (declared {specs[name]})" if specs.get(name) else ""
            raise OutputError(
                f"the function's output contradicts its signature: {name} has shape"
                f" {format_shape(shape) if shape is not None else type(got).__name__}, but"
                f" the signature predicts {format_shape(want)}{declared}",
                transform=shell._describe(),
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
