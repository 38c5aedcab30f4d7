"""A transform's answers for one function and its options: predictions and checked calls.

A `Predictor` is made once per (function, options, signature) and shared by every
transform object built from them (`ax.vmap(f, in_axes=0)` written inline in a loop finds
the work done). It holds the models (built at first use, so annotations are read then),
the compiled fast path, and caches keyed as `_core._keys` says. It has two entry points:

- `predict(args, kwargs, ...)`: `f.predict`, an answer without running the function's
  FLOPs (or the explained error);
- `check_call(args, kwargs, ...)`: the checks before JAX runs a call, which give the
  prediction to verify the output against;

and, after JAX has failed, `diagnose` explains the failure. The fixes are the advice
layer's (`axischeck._advice`), which asks the predictor what it needs: the call an error
was found in, JAX's transform with other options, the models. Predictions handed to
callers are copies; the caches keep their own, and never keep exceptions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import jax
import numpy as np

from .._core._cache import BoundedCache, PerFunction, code_of, held_weakly, same_code
from .._core._errors import AxisCheckError, FunctionError, SpecError, with_jax_error
from .._core._jax_compat import (
    quiet_tracebacks,
    spmd_axis_in_shard_map_specs,
    trace_context,
    tracing,
    unbound_axis_name,
)
from .._core._keys import arrays_key, lookup, shape_key, store, trace_key
from .._core._leaves import Call, flatten_call, label_call, opaque_leaves, shapes_as_structs, struct
from .._core._prediction import Prediction
from .._core._shape import Shape
from .._core._steps import MapStep
from ._fastpath import Plan, ShardPlan, compile_plan
from ._function import Nestable, fn_name, parameters_of
from ._in_trace import Recorder, Watch, collecting
from ._models import MapModel, Model, Outcome, chain, run, shape_keyed
from ._trace import Records, substituting
from ._transform_models import Build, Models

FIX_TRACES = 3
"""How many times a failure (of `predict` or of a call) may run the user's function to
try fixes, the same for both so that they offer the same fixes (`Predictor.fix_traces`,
where a transform's candidates cost more). Candidates the transform's own checks refuse
cost no run, so the budget goes to those that pass; the success path never searches."""

ASKING_JAX: ContextVar[bool] = ContextVar("axischeck_asking_jax", default=False)
"""True while JAX's own verdict on a call is asked (see `jax_verdict`): only its exception
type and message are kept, so an axischeck transform inside explains nothing and tries no
fix (that would run the user's function for nothing)."""

JAX_ALONE = Prediction(None, None, ())
"""`check_call`'s answer for a call beyond axischeck's model: JAX alone runs it."""

_NO_PLAN = Plan((), (), (), None)  # marks a structure the fast path cannot serve
_UNSET: Any = object()


JaxWith = Callable[[Callable[..., Any], Mapping[str, Any]], Callable[..., Any]]
"""JAX's own transform of a function, with some of the options changed (a fix's)."""


class Predictor:
    """Predictions, checks of calls and diagnoses for one function and its options.

    The models are built at first use; the predictor reaches the function only through
    a weak reference, so sharing it never keeps the function alive. `jax_with` gives
    JAX's transform with a fix's options, which has the last word on the fix.
    """

    fix_traces: ClassVar[int] = FIX_TRACES  # runs of the function a failure's fix search may spend

    def __init__(
        self, fun: Callable[..., Any], build: Build, defers_to_jax: bool = False, jax_with: JaxWith | None = None
    ) -> None:
        self._held = held_weakly(fun)
        self._jax_with = jax_with
        # The function's code when this was made: a transform whose function's code is
        # replaced (IPython's autoreload) finds the predictor of the new code instead.
        self.code = code_of(fun)
        self._build = build
        self.defers_to_jax = defers_to_jax  # options axischeck cannot model: JAX answers
        self._params: Any = _UNSET
        self._models: Models | None = None
        self._lock = threading.Lock()
        # Each cache, named for what it keys (see `_call_key`, `_inputs_key`):
        self._prediction_by_call: BoundedCache[Prediction] = BoundedCache(256)
        self._inputs_passed_by_call: BoundedCache[bool] = BoundedCache(256)
        self._plan_by_structure: BoundedCache[Plan | ShardPlan] = BoundedCache(64)
        self._names_clear_by_context: BoundedCache[bool] = BoundedCache(16)
        self._last_clear_context: Any = None  # the trace context `_confirm_names` last found clear
        # `_prediction_by_call` itself, once the models are known, where its keys are the
        # argument shapes alone (a signature's answers): a checked call of arrays by
        # position reads it without a flatten. None otherwise.
        self._prediction_by_arrays: BoundedCache[Prediction] | None = None
        # JAX's own traces of the function, where a check rode them (see `Records`).
        self.records = Records()
        self._cacheable: bool | None = None
        self._tuple_dtypes: dict[int | str, Any] | None = None

    # ------------------------------------------------------------ what it knows

    @property
    def fun(self) -> Callable[..., Any]:
        return cast(Callable[..., Any], getattr(self._held, "__wrapped__", self._held))

    @property
    def models(self) -> Models:
        models = self._models
        if models is None:
            with self._lock:
                if self._models is None:
                    built = self._build(self.fun, self._held)
                    if built.symbolic and not built.reads_context_mesh and shape_keyed(built.model):
                        self._prediction_by_arrays = self._prediction_by_call
                    self._models = built
                models = self._models
        return models

    @property
    def params(self) -> Any:
        """The function's parameter names (read once, at first use)."""
        if self._params is _UNSET:
            self._params = parameters_of(self.fun)
        return self._params

    @property
    def tuple_dtypes(self) -> dict[int | str, Any]:
        """Argument position and name -> the dtype the function's annotations imply, for
        plain tuples of ints given to `predict` (float32 where they say nothing)."""
        dtypes = self._tuple_dtypes
        if dtypes is None:
            from .._core._annotations import declared_dtypes

            by_name = declared_dtypes(self.fun)
            positional = self.params[0] if self.params is not None else []
            dtypes = dict[int | str, Any]({i: by_name[n] for i, n in enumerate(positional) if n in by_name})
            dtypes.update(by_name)
            self._tuple_dtypes = dtypes
        return dtypes

    @property
    def cacheable(self) -> bool:
        """Whether answers depend on the call alone (not on shardings or the context mesh)."""
        if self._cacheable is None:
            self._cacheable = shape_keyed(self.models.model)
        return self._cacheable

    def label(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
        return label_call(args, kwargs, self.params)

    def stored(self) -> Stored:
        """What the caches hold now (for tests and debugging; see `Stored`)."""
        return Stored(
            predictions=len(self._prediction_by_call),
            capacity=self._prediction_by_call.maxsize,
            plans=self._plan_by_structure.values(),
            plan_capacity=self._plan_by_structure.maxsize,
            inputs_passed=len(self._inputs_passed_by_call),
            keyed_by_arrays=self._prediction_by_arrays is not None,
        )

    # ------------------------------------------------------------------ predict

    def predict(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        jax_fn: Callable[[], Callable[..., Any]],
        name: Callable[[], str],
    ) -> Prediction:
        """`f.predict`: the prediction for these arguments (a copy: the caller may change
        it), or the explained error with the fixes the engine checked. Plain tuples of
        ints stand for shapes. Where the options or an argument are beyond axischeck's
        model, the answer is JAX's own abstract evaluation of `jax_fn()` (its transform);
        `name()` names the transform in messages.
        """
        pred = self._stored_for_predict(args, kwargs, None)  # arrays by position: no flatten
        if pred is not None:
            return pred
        try:
            flat = flatten_call(args, kwargs)
            if int in map(type, flat[0]):
                args, kwargs = shapes_as_structs(args, kwargs, self.tuple_dtypes)  # tuples: shapes
                flat = flatten_call(args, kwargs)
        except AxisCheckError as err:
            raise err from None
        pred = self._stored_for_predict(args, kwargs, flat)
        if pred is not None:
            return pred
        if self.defers_to_jax or opaque_leaves(flat[0]):
            return _predicted_by_jax(jax_fn(), args, kwargs, name)
        pred = self.checked_answer(args, kwargs, flat).copy()  # a refusal carries its call (see `_run`)
        if not pred.traced:
            try:
                self._confirm_names(jax_fn(), args, kwargs)
            except AxisCheckError as err:
                raise err from err.__cause__
        return pred

    def _stored_for_predict(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None
    ) -> Prediction | None:
        """The stored prediction for these arguments (a copy), or None (see `_stored`).
        One from a signature is handed out only where `_confirm_names` has passed."""
        stored = self._stored(args, kwargs, flat)
        if stored is None or (self.models.symbolic and not self._names_confirmed()):
            return None
        return stored.copy()

    def _names_confirmed(self) -> bool:
        """Whether `_confirm_names` has passed in the current trace context. The last such
        context is checked first: comparing its items (the same objects, mostly) is
        cheaper than hashing all of them."""
        context = trace_context()
        if context == self._last_clear_context:
            return True
        if lookup(self._names_clear_by_context, context):
            self._last_clear_context = context
            return True
        return False

    def _confirm_names(self, jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A prediction from a declared signature never traces the function, but JAX
        refuses some functions whatever the shapes: a collective over an axis no transform
        binds (NameError), a vmap spmd_axis_name that an inner shard_map's specs name. One
        abstract trace of JAX's transform per trace context (axis environment, mesh,
        configuration) finds them; its other failures may be size-specific and are left
        to the shapes. Only the all-clear is remembered."""
        key = trace_context()
        if lookup(self._names_clear_by_context, key):
            return
        try:
            jax.eval_shape(jax_fn, *args, **kwargs)
        except NameError as err:
            name = fn_name(self.fun)
            if unbound_axis_name(err) is None:  # the function's own NameError (a name it never defined)
                raise with_jax_error(
                    FunctionError(f"{name} fails whatever the shapes: {type(err).__name__}: {err}"), err
                ) from err
            raise with_jax_error(
                FunctionError(
                    f"{name} calls a collective over an axis name that no enclosing transform binds",
                    hint="name the axis in the transform (axis_name=...), or call the function under the"
                    " transform that binds it",
                ),
                err,
            ) from err
        except ValueError as err:
            if spmd_axis_in_shard_map_specs(err):
                raise with_jax_error(
                    SpecError(
                        f"vmap's spmd_axis_name is also a mesh axis that {fn_name(self.fun)}'s inner shard_map"
                        " specs use, which JAX refuses",
                        hint="give vmap a spmd_axis_name the inner shard_map does not shard over",
                    ),
                    err,
                ) from err
        except Exception:
            pass
        store(self._names_clear_by_context, key, True)

    # -------------------------------------------------------------- checked call

    def check_call(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        jax_fn: Callable[..., Any],
        recorder: Recorder | None,
        caches_traces: bool = False,
    ) -> Prediction | Watch | None:
        """The checks before JAX runs a call: the prediction to verify the output against
        (with a signature), None when there is none, `JAX_ALONE` for what only JAX
        models, a `Watch` where the check rides JAX's trace of the call (`recorder`: the
        function as `jax_fn`, JAX's transform, holds it, or the function is an axischeck
        transform, whose check records the user's function for this one; `caches_traces`:
        JAX's transform answers a call like an earlier one from its cache, so the records
        are kept for later calls). A call axischeck refuses raises its explained error,
        with JAX's verdict on the call (see `refusal`).

        Without a signature, a call is checked before JAX runs it only where JAX may
        answer silently and wrongly, or where annotations declare the inputs (JAX knows
        nothing of them); otherwise JAX checks the mapped arguments itself, and a refusal
        is explained after it (see `diagnose`)."""
        by_arrays = self._prediction_by_arrays  # arrays by position, seen before: no flatten
        if by_arrays is not None:
            pred = lookup(by_arrays, arrays_key(args, kwargs))
            if pred is not None:
                return pred  # type: ignore[no-any-return]
        symbolic = not self.defers_to_jax and self.models.symbolic
        flat = flatten_call(args, kwargs)
        if self.defers_to_jax:
            return JAX_ALONE
        pred = self._stored(args, kwargs, flat) if symbolic else None
        due = symbolic or self._inputs_unchecked(args, kwargs, flat) or (recorder is not None and collecting())
        if pred is not None or not due:
            return pred
        if opaque_leaves(flat[0]):  # beyond axischeck's model (never stored)
            return JAX_ALONE
        models = self.models
        if not symbolic and not models.declares_inputs and (recorder is not None or isinstance(self.fun, Nestable)):
            return Watch(recorder, self, args, kwargs, flat, caches_traces)  # the function is traced by JAX alone
        try:
            if symbolic:
                return self.checked_answer(args, kwargs, flat)
            self._check_inputs(args, kwargs, flat)
        except FunctionError:
            pass  # the function's own failure: JAX raises it, untouched
        except AxisCheckError as err:
            raise self.refusal(jax_fn, err, args, kwargs) from err.__cause__
        return None

    def _inputs_unchecked(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> bool:
        """Whether a call without a declared output has checks due before JAX runs it
        (see `check_call`) that no call like it has passed."""
        models = self.models
        if models.trace_checks:
            return not self.cacheable or self._stored(args, kwargs, flat) is None
        if not models.declares_inputs:
            return False
        return not self.cacheable or lookup(self._inputs_passed_by_call, self._inputs_key(args, kwargs, flat)) is None

    def _check_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> None:
        """The signature's inputs through every level, or, where JAX may answer silently
        and wrongly (collectives over named axes, pmap's outputs), the whole prediction:
        one run per new key, the function's own failures left to JAX."""
        models = self.models
        if models.trace_checks:
            self.checked_answer(args, kwargs, flat)
            return
        key = self._inputs_key(args, kwargs, flat) if self.cacheable else None
        if models.input_model is not None:
            self._run(models.input_model, args, kwargs)
        store(self._inputs_passed_by_call, key, True)

    def _inputs_key(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Hashable:
        """The key of a passed check of the signature's inputs: shapes, in context."""
        key = arrays_key(args, kwargs)
        return self._in_context(key if key is not None else shape_key(*flat))

    def refusal(
        self, jax_fn: Callable[..., Any], err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> AxisCheckError:
        """`err`, before JAX ran the call, with JAX's own verdict (its exception type and
        message) where JAX refuses the call too, so code written against JAX's errors
        keeps working. It still carries the call it was found in, for the advice."""
        if err.job is not None and not tracing():  # an eager pmap in a job: its abstract verdict differs
            jax_err = _jax_verdict_lowered(jax_fn, args, kwargs)
        else:
            jax_err = jax_verdict(jax_fn, args, kwargs)
        if jax_err is None:
            return err
        found_in = err._found_in
        err = with_jax_error(err, jax_err)
        err._found_in = found_in
        return err

    # ----------------------------------------------------------------- answers

    def checked_answer(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Prediction:
        """The prediction for a call, shared with the cache (callers only read it): the
        stored one where its key holds all it depends on, else derived and stored."""
        if not self.cacheable:
            return self.derive(args, kwargs)
        key = self._call_key(args, kwargs, flat)
        stored: Prediction | None = lookup(self._prediction_by_call, key)
        if stored is not None:
            return stored
        leaves, treedef = flat
        if self.models.symbolic:
            pred = self._planned(args, kwargs, treedef, shape_key(leaves, treedef)[1])
            if pred.traced:
                return pred  # the signature needed the function after all: shapes cannot key it
        else:
            pred = self.derive(args, kwargs)
            if not same_code(code_of(self.fun), self.code):
                return pred  # the function's code was replaced during the trace: not kept
        store(self._prediction_by_call, key, pred.copy())
        return pred

    def _stored(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None
    ) -> Prediction | None:
        """The stored prediction for these arguments, shared with the cache, or None. Only
        answers the engine gave are stored (never for what it leaves to JAX), so a stored
        one needs no other check. Without `flat`, only a call of arrays by position is
        looked up (see `arrays_key`)."""
        if not self.cacheable:
            return None
        return lookup(self._prediction_by_call, self._call_key(args, kwargs, flat))  # type: ignore[no-any-return]

    def _call_key(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None) -> Hashable:
        """The key of this call's prediction (see `_core._keys`): by shapes for a
        signature's, by everything a trace sees otherwise; None when `flat` is needed and
        missing."""
        models = self.models
        if not models.symbolic:
            return trace_key(*flat) if flat is not None else None
        key = arrays_key(args, kwargs)
        if key is None:
            if flat is None:
                return None
            key = shape_key(*flat)
        return self._in_context(key) if models.reads_context_mesh else key

    def _in_context(self, key: Hashable) -> Hashable:
        """A shape key, with the `jax.set_mesh` context where the answer depends on it (a
        shard_map given a mesh refuses a context mesh that differs)."""
        return (key, jax.sharding.get_abstract_mesh()) if self.models.reads_context_mesh else key

    def _planned(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], treedef: Any, keys: tuple[Any, ...]
    ) -> Prediction:
        structure = (treedef, tuple(type(k) is tuple for k in keys))
        plan: Plan | ShardPlan | None = lookup(self._plan_by_structure, structure)
        if plan is None:
            plan = compile_plan(self.models.model, self.label(args, kwargs), treedef) or _NO_PLAN
            store(self._plan_by_structure, structure, plan)
        if plan is not _NO_PLAN:
            pred = plan.predict(keys, lambda: self.derive(*_stand_ins(treedef, (treedef, keys))).steps)
            if pred is not None:
                return pred
        return self.derive(args, kwargs)  # raises the explained error, or agrees

    def derive(self, args: tuple[Any, ...], kwargs: dict[str, Any], model: Model | None = None) -> Prediction:
        """The whole engine, nothing stored: every check in JAX's order, with the derivation."""
        outcome = self._run(model or self.models.model, args, kwargs)
        return self.prediction_of(outcome, args)

    def prediction_of(self, outcome: Outcome, args: tuple[Any, ...]) -> Prediction:
        maps = [s for s in outcome.steps if isinstance(s, MapStep)]
        return Prediction(outcome.shapes, maps[0].axis_size if maps else None, outcome.steps, traced=outcome.traced)

    def _run(self, model: Model, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        """`model` on the labelled call. An error carries the call it was found in, for
        the advice to try its options on (labelling 16,000 leaves again costs 20-45 ms)."""
        call = self.label(args, kwargs)
        try:
            return run(model, call)
        except AxisCheckError as err:
            err._found_in = (self, args, kwargs, call)  # carried to the advice (see `found_in`)
            raise

    # ---------------------------------------------------------------- explain

    def diagnose(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """After JAX failed: axischeck's account of the failure (a `FunctionError` when the
        function itself fails per example), or None when the engine finds nothing wrong."""
        models = self.models
        try:
            with quiet_tracebacks():  # JAX's own exception is the one the user sees
                self._run(models.fallback or models.model, args, kwargs)
        except AxisCheckError as err:
            return err
        except Exception:
            return None
        return None

    def found_in(
        self, err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], Call]:
        """The call `err` was found in by this predictor (its arguments as the engine read
        them: shape tuples as structs), else these arguments labelled anew."""
        kept, err._found_in = getattr(err, "_found_in", None), None
        if kept is not None and kept[0] is self:
            return kept[1], kept[2], cast(Call, kept[3])
        return args, kwargs, self.label(args, kwargs)

    @property
    def run_with(self) -> Callable[[Mapping[str, Any]], Callable[..., Any]] | None:
        """How JAX's own transform of the function is made with some options changed (a
        fix's), or None where it cannot be made again (no options to change)."""
        jax_with, held = self._jax_with, self._held
        if jax_with is None:
            return None
        return lambda changes: jax_with(held, changes)

    def by_position(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Call, tuple[str, ...]] | None:
        """The call with its keyword arguments passed by position, when they are the
        function's next positional parameters (in any order), else None."""
        if not kwargs or self.params is None:
            return None
        following = self.params[0][len(args) : len(args) + len(kwargs)]
        if set(following) != set(kwargs):
            return None
        moved = tuple(following)
        return self.label((*args, *(kwargs[name] for name in moved)), {}), moved


@dataclass(frozen=True)
class Stored:
    """A snapshot of what a predictor's caches hold."""

    predictions: int  # stored predictions
    capacity: int  # how many it keeps at most
    plans: tuple[Plan | ShardPlan, ...]  # compiled fast paths, one per argument structure
    plan_capacity: int  # how many plans it keeps at most
    inputs_passed: int  # calls whose signature inputs passed their check
    keyed_by_arrays: bool  # whether a call of arrays by position finds its answer without a flatten


class _Opaque:
    """Stands for a non-array leaf when a cached prediction replays its derivation."""

    def __init__(self, kind: type) -> None:
        self.kind = kind


def _stand_ins(treedef: Any, key: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    leaves = [struct(k, np.float32) if isinstance(k, tuple) else _Opaque(k) for k in key[1]]
    args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
    return tuple(args), dict(kwargs)


def _predicted_by_jax(
    jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: Callable[[], str]
) -> Prediction:
    """For what axischeck does not model (registered vmappable types, symbolic sizes):
    JAX's own abstract evaluation, its shapes as they are."""
    try:
        out = jax.eval_shape(jax_fn, *args, **kwargs)
    except Exception as err:
        raise with_jax_error(FunctionError("JAX cannot map these arguments", transform=name()), err) from err
    shapes = jax.tree_util.tree_map(lambda s: tuple.__new__(Shape, s.shape), out)
    return Prediction(shapes, None, (), traced=True)


def ruled_apart_from_jax(model: Model) -> bool:
    """Whether the engine answers for `model` by rules of its own where JAX's trace of the
    same transform differs: a pmap (JAX traces an unmapped Python scalar it maps over devices)."""
    return any(isinstance(m, MapModel) and m.level.kind == "pmap" for m in chain(model))


def jax_verdict(jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception | None:
    """JAX's own exception for this call, found abstractly (no FLOPs): arrays are traced,
    every other leaf is passed as the real call passes it. None when JAX accepts it
    (it answers silently and wrongly, or axischeck is stricter: axischeck's error stands)."""
    from .._core._leaves import shape_of

    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    dyn = [
        i for i, x in enumerate(leaves) if shape_of(x) is not None and not isinstance(x, (bool, int, float, complex))
    ]
    asking = ASKING_JAX.set(True)
    try:
        with quiet_tracebacks():  # only its type and message are kept
            jax.eval_shape(substituting(jax_fn, treedef, leaves, dyn), *[leaves[i] for i in dyn])
    except AxisCheckError:
        return None
    except Exception as err:
        return err
    finally:
        ASKING_JAX.reset(asking)
    return None


def _jax_verdict_lowered(jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception | None:
    """JAX's own exception for this call as made eagerly, found by lowering it (never
    run): in a job of several processes an eager pmap lays its mesh over every process's
    devices, where `eval_shape` traces it over this process's alone, and it refuses a
    process's arguments that do not fit while converting them to global arrays or tracing,
    both of which lowering does. None when JAX accepts it, or cannot lower it."""
    lower = getattr(jax_fn, "lower", None)
    if lower is None:
        return None
    asking = ASKING_JAX.set(True)
    try:
        with quiet_tracebacks():  # only its type and message are kept
            lower(*args, **kwargs)
    except AxisCheckError:
        return None
    except Exception as err:
        return err
    finally:
        ASKING_JAX.reset(asking)
    return None


PREDICTORS: PerFunction[Predictor] = PerFunction()
"""Every predictor, per function (held weakly) and key: the transform's options and signature."""
