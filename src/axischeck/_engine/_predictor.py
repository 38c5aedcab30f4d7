"""What a transform knows about one function and its options, and its caches.

A `Predictor` is made once per (function, options) and shared by every transform object
built from them (`ax.vmap(f, in_axes=0)` written inline in a loop finds the work done).
It holds the models (built at first use, so annotations are read then), the compiled
fast path, and caches keyed as `_keys` says. Cached predictions are frozen and handed out
as new `Prediction` objects; exceptions are never cached.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from types import FunctionType
from typing import Any, cast

import jax
import numpy as np

from .._core._cache import BoundedCache, PerFunction, code_of, held_weakly, same_code
from .._core._errors import AxisCheckError, AxisCheckWarning, FunctionError, SpecError, warn_at_user, with_jax_error
from .._core._jax_compat import quiet_tracebacks, spmd_axis_in_shard_map_specs, trace_context, unbound_axis_name
from .._core._keys import arrays_key, lookup, shape_key, store, trace_key
from .._core._leaves import Call, label_call, parameter_names, plain_function, struct
from .._core._prediction import Prediction
from .._core._spec import SigCore
from .._core._steps import MapStep
from .._core._trees import flat_axes
from ._fastpath import Plan, ShardPlan, compile_plan
from ._levels import MapLevel
from ._models import (
    MapModel,
    Model,
    Outcome,
    SignatureModel,
    TraceModel,
    chain,
    inputs_only,
    is_symbolic,
    run,
    shape_keyed,
)
from ._shard_model import ShardModel
from ._signature import Signature
from ._suggest import suggest, with_suggestions
from ._trace import Records

_NO_PLAN = Plan((), (), (), None)  # marks a structure the fast path cannot serve
_UNSET: Any = object()

PREDICTORS: PerFunction[Predictor] = PerFunction()
"""Every predictor, per function (held weakly) and options."""


class Models:
    """The models of one transform: what predicts, what diagnoses failures, what a
    wrapping transform sees, and what the checked call needs to know of them (read in
    one walk of the nest: they are made for every new function)."""

    __slots__ = (
        "_input_model",
        "batched_signature",
        "declares_inputs",
        "fallback",
        "model",
        "reads_context_mesh",
        "signature",
        "symbolic",
        "trace_checks",
    )

    def __init__(
        self,
        model: Model,
        fallback: Model | None,
        signature: Signature | None,
        batched_signature: Signature | None,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self.signature = signature
        self.batched_signature = batched_signature
        *outer, innermost = chain(model)
        self.declares_inputs = isinstance(innermost, SignatureModel)
        self.symbolic = is_symbolic(innermost)
        # Where JAX may answer silently and wrongly, a call is checked by a trace first: a
        # collective over a vmap axis (docs/jax-semantics.md#where-jax-answers-silently),
        # a pmap's out_axes=None (device 0's block). pmap checks its collectives itself,
        # and shard_map rejects its own mistakes (at trace or lowering, where a failed call
        # is diagnosed), so they cost no trace of ours: JAX's trace counts stay JAX's.
        self.trace_checks = any(isinstance(m, MapModel) and _answers_silently(m.level) for m in outer)
        self.reads_context_mesh = any(isinstance(m, ShardModel) and m.options.jax_mesh is not None for m in outer)
        self._input_model: Model | None = None

    @property
    def input_model(self) -> Model | None:
        """The model checking the signature's inputs only (no outputs, no trace), if any."""
        if self._input_model is None and self.declares_inputs:
            self._input_model = inputs_only(self.model)
        return self._input_model


def _answers_silently(level: MapLevel) -> bool:
    """Whether JAX may answer a call of this level silently and wrongly, where only a
    trace of the function tells: a vmap binding an axis name (collectives whose vmap rule
    does not check), a pmap with out_axes None (which output varies over the devices)."""
    if level.kind == "pmap":
        return None in level.out_axes.leaves
    return level.axis_name is not None


Build = Callable[[Callable[..., Any], Callable[..., Any]], Models]
"""Makes the models from the function and a caller of it that holds it weakly. It depends
on the options alone (it is shared by every function with the same options): what it
needs of the function (its name, its parameters) it reads from the function it is given."""


class Predictor:
    """Predictions, pre-checks and diagnoses for one function and its options.

    The models are built at first use; the predictor reaches the function only through
    a weak reference, so sharing it never keeps the function alive.
    """

    def __init__(self, fun: Callable[..., Any], build: Build) -> None:
        self._held = held_weakly(fun)
        # The function's code when this was made: a transform whose function's code is
        # replaced (IPython's autoreload) finds the predictor of the new code instead.
        self.code = code_of(fun)
        self._build = build
        self._params: Any = _UNSET
        self._models: Models | None = None
        self._lock = threading.Lock()
        self._predictions: BoundedCache[Prediction] = BoundedCache(256)
        self._passed: BoundedCache[bool] = BoundedCache(256)
        self._plans: BoundedCache[Plan | ShardPlan] = BoundedCache(64)
        self._names_bound: BoundedCache[bool] = BoundedCache(16)
        # JAX's own traces of the function, where a check rode them (see `Records`).
        self.records = Records()
        self._last_bound: Any = None  # the trace context `confirm_names` last found clear
        self._cacheable: bool | None = None
        # `_predictions` once the models are known, if a signature's answers in it are
        # keyed by the argument shapes alone; None otherwise. A checked call of concrete
        # arrays by position reads it directly (see `checked_call`), only reading.
        self.by_shapes: BoundedCache[Prediction] | None = None
        self._tuple_dtypes: dict[int | str, Any] | None = None

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
                        self.by_shapes = self._predictions
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

    # ------------------------------------------------------------------ predict

    def predict(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Prediction:
        """The prediction for this call: the cached one where its key holds all it depends
        on. The cache keeps its own copy; callers may change what they are given."""
        return self.answer(args, kwargs, flat).copy()

    def cached(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None = None
    ) -> Prediction | None:
        """For `predict`: the cached prediction for these arguments (a copy), or None (see
        `hit`). One from a signature is handed out only where `confirm_names` has passed."""
        hit = self.hit(args, kwargs, flat)
        if hit is None or (self.models.symbolic and not self._names_confirmed()):
            return None
        return hit.copy()

    def _names_confirmed(self) -> bool:
        """Whether `confirm_names` has passed in the current trace context. The last such
        context is checked first: comparing its items (the same objects, mostly) is
        cheaper than hashing all of them."""
        context = trace_context()
        if context == self._last_bound:
            return True
        if lookup(self._names_bound, context):
            self._last_bound = context
            return True
        return False

    def by_arrays(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Prediction | None:
        """The cached answer for a call of arrays by position whose answers the shapes
        alone decide (a signature's, see `by_shapes`), shared with the cache: the checked
        call's first look, which needs no flatten."""
        table = self.by_shapes
        return None if table is None else lookup(table, arrays_key(args, kwargs))

    def hit(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None = None
    ) -> Prediction | None:
        """The cached prediction for these arguments, shared with the cache (for checked
        calls, which only read it), or None. Only answers the engine gave are stored
        (never for what it leaves to JAX), so a hit needs no other check. Without `flat`,
        only a call of arrays by position is looked up (see `arrays_key`)."""
        if not self.cacheable:
            return None
        return lookup(self._predictions, self._key(args, kwargs, flat))  # type: ignore[no-any-return]

    def _key(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None) -> Hashable:
        """The key of this call's prediction (see `_keys`): by shapes for a signature's,
        by everything a trace sees otherwise; None when `flat` is needed and missing."""
        models = self.models
        if not models.symbolic:
            return trace_key(*flat) if flat is not None else None
        key = arrays_key(args, kwargs)
        if key is None:
            if flat is None:
                return None
            key = shape_key(*flat)
        return self._in_context(key) if models.reads_context_mesh else key

    def answer(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Prediction:
        """The prediction, shared with the cache: for checked calls, which only read it."""
        if not self.cacheable:
            return self.full(args, kwargs)
        key = self._key(args, kwargs, flat)
        hit: Prediction | None = lookup(self._predictions, key)
        if hit is not None:
            return hit
        leaves, treedef = flat
        if self.models.symbolic:
            pred = self._planned(args, kwargs, treedef, shape_key(leaves, treedef)[1])
            if pred.traced:
                return pred  # the signature needed the function after all: shapes cannot key it
        else:
            pred = self.full(args, kwargs)
            if not same_code(code_of(self.fun), self.code):
                return pred  # the function's code was replaced during the trace: not kept
        store(self._predictions, key, pred.copy())
        return pred

    def _in_context(self, key: Hashable) -> Hashable:
        """A shape key, with the `jax.set_mesh` context where the answer depends on it (a
        shard_map given a mesh refuses a context mesh that differs)."""
        return (key, jax.sharding.get_abstract_mesh()) if self.models.reads_context_mesh else key

    def confirm_names(self, jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A prediction from a declared signature never traces the function, but JAX
        refuses some functions whatever the shapes: a collective over an axis no transform
        binds (NameError), a vmap spmd_axis_name that an inner shard_map's specs name. One
        abstract trace of JAX's transform per trace context (axis environment, mesh,
        configuration) finds them; its other failures may be size-specific and are left
        to the shapes. Only the all-clear is remembered."""
        key = trace_context()
        if lookup(self._names_bound, key):
            return
        try:
            jax.eval_shape(jax_fn, *args, **kwargs)
        except NameError as err:
            if unbound_axis_name(err) is None:  # the function's own NameError (a name it never defined)
                raise with_jax_error(
                    FunctionError(f"{fn_name(self.fun)} fails whatever the shapes: {type(err).__name__}: {err}"), err
                ) from err
            name = fn_name(self.fun)
            raise with_jax_error(
                FunctionError(
                    f"{name} calls a collective over an axis name that no enclosing transform binds",
                    fix="name the axis in the transform (axis_name=...), or call the function under the"
                    " transform that binds it",
                ),
                err,
            ) from err
        except ValueError as err:
            if not spmd_axis_in_shard_map_specs(err):
                store(self._names_bound, key, True)
                return
            raise with_jax_error(
                SpecError(
                    f"vmap's spmd_axis_name is also a mesh axis that {fn_name(self.fun)}'s inner shard_map"
                    " specs use, which JAX refuses",
                    fix="give vmap a spmd_axis_name the inner shard_map does not shard over",
                ),
                err,
            ) from err
        except Exception:
            pass
        store(self._names_bound, key, True)

    def _planned(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], treedef: Any, keys: tuple[Any, ...]
    ) -> Prediction:
        structure = (treedef, tuple(type(k) is tuple for k in keys))
        plan: Plan | ShardPlan | None = lookup(self._plans, structure)
        if plan is None:
            plan = compile_plan(self.models.model, self.label(args, kwargs), treedef) or _NO_PLAN
            store(self._plans, structure, plan)
        if plan is not _NO_PLAN:
            pred = plan.predict(keys, lambda: self.full(*_stand_ins(treedef, (treedef, keys))).steps)
            if pred is not None:
                return pred
        return self.full(args, kwargs)  # raises the explained error, or agrees

    def full(self, args: tuple[Any, ...], kwargs: dict[str, Any], model: Model | None = None) -> Prediction:
        """The whole engine: every check in JAX's order, with the derivation."""
        outcome = self._run(model or self.models.model, args, kwargs)
        return self.prediction_of(outcome, args)

    def _run(self, model: Model, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        """`model` on the labelled call. An error's call is kept while the error lives, for
        `with_fix` to try its options on (labelling 16,000 leaves again costs 20-45 ms)."""
        call = self.label(args, kwargs)
        try:
            return run(model, call)
        except AxisCheckError as err:
            err._found_in = (args, kwargs, call)  # carried to `with_fix` (see AxisCheckError)
            raise

    def _labelled(self, err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
        """The call `err` was found in, if it was these very arguments, else these labelled anew."""
        kept, err._found_in = getattr(err, "_found_in", None), None
        if kept is not None and kept[0] is args and kept[1] is kwargs:
            return cast(Call, kept[2])
        return self.label(args, kwargs)

    def prediction_of(self, outcome: Outcome, args: tuple[Any, ...]) -> Prediction:
        maps = [s for s in outcome.steps if isinstance(s, MapStep)]
        return Prediction(outcome.shapes, maps[0].axis_size if maps else None, outcome.steps, traced=outcome.traced)

    # -------------------------------------------------------------- checked call

    @property
    def prechecks(self) -> bool:
        """Whether a call without a declared output is checked before JAX runs it: where a
        signature declares inputs (JAX knows nothing of it), and where JAX may answer
        silently and wrongly. Otherwise JAX checks the mapped arguments itself, and a
        refusal is diagnosed after it (the same error, explained)."""
        models = self.models
        return models.trace_checks or models.declares_inputs

    def prechecked(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> bool:
        """Whether a call with arguments like these passed `precheck` before (only calls
        the engine models are ever stored)."""
        if not self.cacheable:
            return False
        if self.models.trace_checks:
            return self.hit(args, kwargs, flat) is not None
        return lookup(self._passed, self._passed_key(args, kwargs, flat)) is not None

    def _passed_key(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Hashable:
        """The key of a passed pre-check of the signature's inputs: shapes, in context."""
        key = arrays_key(args, kwargs)
        return self._in_context(key if key is not None else shape_key(*flat))

    def precheck(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> None:
        """Before JAX runs a call (see `prechecks`): the signature's inputs through every
        level, or, where JAX may answer silently and wrongly (collectives over named axes,
        pmap's outputs), the whole prediction: one trace per new key, the function's own
        failures left to JAX."""
        models = self.models
        if models.trace_checks:
            try:
                self.answer(args, kwargs, flat)
            except FunctionError:
                return
            return
        key = self._passed_key(args, kwargs, flat) if self.cacheable else None
        if lookup(self._passed, key) is not None or models.input_model is None:
            return
        self._run(models.input_model, args, kwargs)
        store(self._passed, key, True)

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

    def with_fix(
        self, err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any], traces: int
    ) -> AxisCheckError:
        """`err` with concrete fixes the engine has checked, running the function at most
        `traces` times to try them."""
        try:
            with quiet_tracebacks():  # the trials' exceptions are only read
                call = self._labelled(err, args, kwargs)
                options = suggest(self.models.model, call, err, traces, self._by_position(args, kwargs))
        except Exception:  # a suggestion must never hide the error itself
            return err
        return with_suggestions(err, options)

    def _by_position(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Call, tuple[str, ...]] | None:
        """The call with its keyword arguments passed by position, when they are the
        function's next positional parameters (in any order), else None."""
        if not kwargs or self.params is None:
            return None
        following = self.params[0][len(args) : len(args) + len(kwargs)]
        if set(following) != set(kwargs):
            return None
        moved = tuple(following)
        return self.label((*args, *(kwargs[name] for name in moved)), {}), moved


class _Opaque:
    """Stands for a non-array leaf when a cached prediction replays its derivation."""

    def __init__(self, kind: type) -> None:
        self.kind = kind


def _stand_ins(treedef: Any, key: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    leaves = [struct(k, np.float32) if isinstance(k, tuple) else _Opaque(k) for k in key[1]]
    args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
    return tuple(args), dict(kwargs)


def predictor_for(
    fun: Callable[..., Any],
    options: Hashable | None,
    prepare: Callable[[], Build],
    kind: type[Predictor] | None = None,
) -> Predictor:
    """The shared predictor of `fun` with these options (`options=None`: not shareable),
    its models made by what `prepare` makes of the options (see `prepared`), asked only
    when no transform of `fun` with these options has made it yet."""
    make = kind or Predictor
    return PREDICTORS.get_or_make(fun, options, lambda: make(fun, prepared(options, prepare)))


_BUILDS: BoundedCache[Build] = BoundedCache(256)
"""Options key -> what `prepare` made of them: validated options, no function."""


def prepared(options: Hashable | None, prepare: Callable[[], Build]) -> Build:
    """What `prepare` makes of the options: it validates them (raising `SpecError`) and
    says how to build the models. It runs once per options (its result holds no
    function), so a new function with options seen before (a lambda written inline)
    skips it."""
    build: Build | None = lookup(_BUILDS, options)
    if build is None:
        build = prepare()  # may raise: nothing is stored then
        store(_BUILDS, options, build)
    return build


_PARAMETERS: BoundedCache[tuple[tuple[str, ...], str | None, frozenset[str]]] = BoundedCache(1024)
"""Code object -> the parameter names of a plain function with that code."""


_DECLARES_NOTHING: dict[weakref.ref[Callable[..., Any]], bool] = {}
"""A weak reference to a plain function -> whether its annotations declare no dims. The
entry goes with the function (the reference's callback). A dict, not a WeakKeyDictionary,
whose `get` is a Python method: a transform written inline asks at each call, next to
JAX's eager work, where each Python frame counts."""

"""`declares_nothing`'s verdict for a weak reference to a function, or None if not read yet."""


def declares_nothing(fun: Callable[..., Any]) -> bool:
    """Whether a plain function's annotations declare no dims (none at all, or types like
    `jax.Array` only), read once per function: then a transform of it without a signature
    has nothing to check before JAX runs. Read at the first call, as the models read them
    (a string annotation may name what is defined after the decorator runs)."""
    try:
        if not fun.__annotations__:
            return True
    except Exception:  # annotations that cannot be evaluated (deferred, Python 3.14): the models say so
        return False
    known = _DECLARES_NOTHING.get(weakref.ref(fun))
    if known is None:
        from .._core._annotations import core_from_annotations

        try:
            known = core_from_annotations(fun) is None
        except Exception:  # unreadable dims: the models say so (a warning), not this shortcut
            known = False
        _DECLARES_NOTHING[weakref.ref(fun, _forget_verdict)] = known
    return known


def _forget_verdict(gone: weakref.ref[Callable[..., Any]], pop: Any = _DECLARES_NOTHING.pop) -> None:
    pop(gone, None)  # bound early: at interpreter exit this module's names may be gone first


def parameters_of(fun: Callable[..., Any]) -> tuple[list[str], str | None, set[str]] | None:
    """`parameter_names(fun)`, read once per code object for plain functions (whose
    parameters their code alone says: a lambda written inline is a new function with the
    same code each time); each caller gets its own lists."""
    if not plain_function(fun):
        return parameter_names(fun)
    code = fun.__code__
    known = lookup(_PARAMETERS, code)
    if known is None:
        found = parameter_names(fun)
        if found is None:
            return None
        known = (tuple(found[0]), found[1], frozenset(found[2]))
        store(_PARAMETERS, code, known)
    return list(known[0]), known[1], set(known[2])


def options_key(kind: str, *options: Any) -> Hashable:
    """A key for a transform's options: each value with its type, containers spelled out
    (so `1` and `True`, a tuple and a namedtuple, a list and a tuple all differ). A key
    that cannot be hashed shares nothing (`PerFunction.get_or_make`). Runs on every
    construction: the common options (scalars, flat tuples of ints) are taken as they
    are, their types beside them."""
    values = [option if type(option) in _PLAIN or flat_axes(option) else _typed(option) for option in options]
    return (kind, tuple(map(type, options)), tuple(values))


_PLAIN = frozenset({int, str, bool, type(None), Signature})
"""Option types whose values are equal exactly when they mean the same, given the type."""


def _typed(value: Any) -> Hashable:
    kind = type(value)
    if kind is int or kind is str or value is None:
        return (kind, value)
    if kind is tuple and flat_axes(value):  # ints and None only: equal exactly when the tuples are
        return (kind, value)
    if isinstance(value, (tuple, list)):
        return (kind, tuple(_typed(v) for v in value))
    if isinstance(value, dict):
        return (kind, tuple((_typed(k), _typed(v)) for k, v in value.items()))
    return (kind, value)


# ------------------------------------------------------------- per-example models


def fn_name(fun: Callable[..., Any]) -> str:
    if type(fun) is FunctionType:
        return fun.__name__
    func = getattr(fun, "func", None)  # functools.partial: name the function it wraps
    if func is not None and callable(func) and getattr(fun, "args", None) is not None:
        return fn_name(func)
    return str(getattr(fun, "__name__", None) or type(fun).__name__)


def inner_model(
    fun: Callable[..., Any], held: Callable[..., Any], signature: Any, name: str
) -> tuple[Model, Signature | None, Model | None]:
    """The per-example model for `fun`: declared signature, annotations, or trace.

    `held` calls `fun` (through a weak reference) for the models that trace it.
    Returns (model, its per-example signature, a trace-based model for diagnosis).
    """
    from .._core._annotations import core_from_annotations
    from .._transform import Transformed

    if isinstance(fun, Transformed) and not fun._defers and signature is None:
        return fun.model, fun.batched_signature, None  # what the wrapped transform returns
    if signature is not None:
        core = declared_core(fun, signature, name)
        return SignatureModel(core, held, name), Signature._make(core), TraceModel(held, name)
    try:
        core_a = core_from_annotations(fun)
    except SpecError as err:  # JAX runs this function: an annotation axischeck cannot read must not stop it
        warn_at_user(
            AxisCheckWarning(f"{err.problem}; {name} is traced instead (Fix: {err.fix})" if err.fix else err.problem)
        )
        core_a = None
    if core_a is not None:
        return SignatureModel(core_a, held, name), Signature._make(core_a), TraceModel(held, name)
    return TraceModel(held, name), None, None


_DECLARED: BoundedCache[tuple[Any, Any, SigCore]] = BoundedCache(256)
"""(id of a code object, id of a declared signature) -> (that code object, that signature,
the signature checked against a plain function with that code, named after its
parameters). The entry holds both objects, so their ids cannot be reused while it lives."""


def declared_core(fun: Callable[..., Any], signature: Any, name: str | None = None) -> SigCore:
    """The declared per-example signature of `fun`, checked against its parameters (a
    signature must fit the function it is given to: said at decoration, not at the first
    call) and named after them. Checked once per code object and signature object for
    plain functions (a signature text is parsed into one object), so a transform written
    inline costs a lookup that hashes two ints: hashing a code object walks its
    constants and names, dear next to JAX's eager work. Messages name the function
    `name` (by default its own name, read only for a message)."""
    code = fun.__code__ if plain_function(fun) else None
    key = (id(code), id(signature)) if code is not None else None
    known = _DECLARED.get(key)  # a key of two ints (or None): its lookup runs no user code
    if known is not None and known[0] is code and known[1] is signature:
        return known[2]
    core = _fitted(fun, signature, name or fn_name(fun))  # may raise: nothing is stored then
    store(_DECLARED, key, (code, signature, core))
    return core


def _fitted(fun: Callable[..., Any], signature: Any, name: str) -> SigCore:
    """The signature checked against the function's parameters, its inputs named after them."""
    from .._transform import Transformed

    if isinstance(fun, Transformed) and not fun._defers:
        raise SpecError(
            f"{name} is already an axischeck transform with its own signature; give signature= to the inner one"
        )
    sig = signature if isinstance(signature, Signature) else Signature(signature)
    if sig.levels:
        raise SpecError(
            "signature= takes a per-example signature; apply vmap through the decorator, not Signature.vmap"
        )
    core = sig.core
    params = parameters_of(fun)
    if params is None:
        return core
    positional, varargs, keywords = params
    names = positional + sorted(keywords - set(positional))
    if core.params is None and len(core.inputs) > len(names) and varargs is None:
        raise SpecError(
            f"the signature {core} declares {len(core.inputs)} inputs but {name} has only"
            f" {len(names)} parameters ({', '.join(names)})"
        )
    if core.params is not None:
        unknown = [p for p in core.params if p not in set(names) | keywords]
        if unknown and params[2] is not None and varargs is None:
            raise SpecError(f"the signature names parameters {unknown} that {name} does not have")
    elif varargs is None:
        core = core.with_params(names)
    return core


def mapped_models(
    fun: Callable[..., Any],
    held: Callable[..., Any],
    signature: Any,
    make_level: Callable[[str, frozenset[str]], MapLevel],
) -> Models:
    """The models of a one-level transform (vmap, pmap) of `fun`."""
    from ._models import model_symbols

    name = fn_name(fun)
    inner, per_example, fallback_inner = inner_model(fun, held, signature, name)
    taken = (per_example.symbols if per_example is not None else frozenset()) | model_symbols(inner)
    level = make_level(name, taken)
    fallback = MapModel(level, fallback_inner, held) if fallback_inner is not None else None
    batched = Signature._make(per_example.core, per_example.levels + (level,)) if per_example is not None else None
    return Models(MapModel(level, inner, held), fallback, per_example, batched)
