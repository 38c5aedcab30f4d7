"""The checked-call machinery shared by `vmap` and `check`.

A transform owns: the user's function, a prediction `Model`, the plain JAX callable
it stands in for, and a bounded cache of predictions keyed by argument structure and
shapes. A call predicts (or pre-checks) first, runs JAX, then verifies the output.
Under `jax.jit` all of it runs once per trace.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, cast, overload

import jax
import numpy as np

from ._cache import BoundedCache
from ._errors import AxisCheckError, FunctionError, OutputError, SpecError
from ._fastpath import Plan, compile_plan
from ._jax_compat import TRUSTED_ARRAY_TYPES
from ._leaves import array_shape, flatten_call, label_call, parameter_names, shape_of, shapes_as_structs, struct
from ._levels import VmapLevel, map_inputs
from ._models import (
    Model,
    SignatureModel,
    TraceModel,
    VmapModel,
    has_axis_names,
    inputs_only,
    is_symbolic,
    model_symbols,
    run,
    shape_keyed,
)
from ._prediction import BaseStep, MapStep, Prediction
from ._shape import format_shape
from ._signature import Signature
from ._suggest import suggest, with_suggestions
from ._trees import leaf_paths

_NO_PLAN = Plan((), (), (), None)  # marks a structure the fast path cannot serve
_FUNCTIONS_OWN = FunctionError("the function's own error")  # a marker: pass JAX's error through

P = ParamSpec("P")
Q = ParamSpec("Q")
R = TypeVar("R")
T = TypeVar("T")


def _has_pmap(model: Model) -> bool:
    return isinstance(model, VmapModel) and (model.level.kind == "pmap" or _has_pmap(model.inner))


def leaf_key(x: Any) -> Hashable:
    """The shape of an array leaf (a tuple), or the type of anything else."""
    if isinstance(x, (bool, int, float, complex)):
        return ()
    shape = array_shape(x)
    return shape if shape is not None else cast(Hashable, type(x))


class _Opaque:
    """Stands for a non-array leaf when a cached prediction replays its derivation."""

    def __init__(self, kind: type) -> None:
        self.kind = kind


def _stand_ins(treedef: Any, keys: tuple[Hashable, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    leaves = [struct(k, np.float32) if isinstance(k, tuple) else _Opaque(k) for k in keys]  # type: ignore[arg-type]
    args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
    return tuple(args), dict(kwargs)


def fn_name(fun: Callable[..., Any]) -> str:
    return str(getattr(fun, "__name__", None) or type(fun).__name__)


class FunctionTracker:
    """Records, per thread, whether an exception left the user's function itself (as
    opposed to JAX's machinery around it), so a call knows what to pass through."""

    def __init__(self) -> None:
        self._local = threading.local()

    def wrap(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fun)
        def tracked(*args: Any, **kwargs: Any) -> Any:
            try:
                return fun(*args, **kwargs)
            except BaseException:
                self._local.raised = True
                raise

        return tracked

    def reset(self) -> None:
        self._local.raised = False

    @property
    def raised(self) -> bool:
        return bool(getattr(self._local, "raised", False))


class Transformed(Generic[P, R]):
    """A function wrapped by an axischeck transform: callable like the original.

    - `f(*args, **kwargs)`: checks, runs JAX, verifies; returns what JAX returns.
    - `f.predict(*args, **kwargs)`: a `Prediction`, without running `fun`'s FLOPs.
    - `f.explain(*args, **kwargs)`: the derivation table (or the error) as text.
    - `f.signature`: the per-example `Signature` (None when neither declared nor derived).
    """

    def __init__(
        self,
        fun: Callable[P, R],
        model: Model,
        jax_fn: Callable[..., Any],
        signature: Signature | None,
        fallback: Model | None,
        tracker: FunctionTracker,
    ) -> None:
        self.__wrapped__ = fun
        self._model = model
        self._jax_fn = jax_fn
        self._tracker = tracker
        self._signature = signature
        self._fallback = fallback
        self._symbolic = is_symbolic(model)
        self._params = parameter_names(fun)
        self._input_model = inputs_only(model)
        # pmap answers some output mistakes silently, so its calls are checked by a trace too.
        self._trace_checks = has_axis_names(model) or _has_pmap(model)
        # Shapes key the caches, unless the answer also depends on shardings or the mesh context.
        self._cacheable = shape_keyed(model)
        self._passed: BoundedCache[bool] = BoundedCache(512)
        self._cache: BoundedCache[Prediction] = BoundedCache(512)
        self._plans: BoundedCache[Plan] = BoundedCache(64)
        # Copy name, doc and annotations, not __dict__ (a wrapped transform's state is its own).
        functools.update_wrapper(self, fun, updated=())

    @property
    def signature(self) -> Signature | None:
        """The per-example signature this transform maps (None if undeclared)."""
        return self._signature

    @property
    def model(self) -> Model:
        return self._model

    # ------------------------------------------------------------- as a method

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self: Transformed[Concatenate[T, Q], R], instance: T, owner: type | None = None) -> Bound[Q, R]: ...

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """Decorating a method binds `self` like a function would (jax.vmap allows it)."""
        if instance is None:
            return self
        return Bound(self, instance)

    # ---------------------------------------------------------------- predict

    def _predict(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any] | None = None
    ) -> Prediction:
        if not self._symbolic or not self._cacheable:
            return self._full(args, kwargs)
        leaves, treedef = flat if flat is not None else flatten_call(args, kwargs)
        trusted = TRUSTED_ARRAY_TYPES  # inlined: this line runs on every checked call
        keys = tuple([x.shape if type(x) in trusted else leaf_key(x) for x in leaves])
        key = (treedef, keys)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        structure = (treedef, tuple(type(k) is tuple for k in keys))
        plan = self._plans.get(structure)
        if plan is None:
            plan = compile_plan(self._model, label_call(args, kwargs, self._params)) or _NO_PLAN
            self._plans.put(structure, plan)
        ran = plan.run([k if type(k) is tuple else None for k in keys]) if plan is not _NO_PLAN else None
        if ran is None:
            pred = self._full(args, kwargs)  # raises the explained error, or agrees
        else:
            pred = Prediction(*ran, replay=lambda: self._full(*_stand_ins(treedef, keys)).steps)
        self._cache.put(key, pred)
        return pred

    def _full(self, args: tuple[Any, ...], kwargs: dict[str, Any], model: Model | None = None) -> Prediction:
        """The whole engine: every check in JAX's order, with the derivation."""
        outcome = run(model or self._model, label_call(args, kwargs, self._params))
        maps = [s for s in outcome.steps if isinstance(s, MapStep)]
        return Prediction(outcome.shapes, maps[0].axis_size if maps else None, outcome.steps)

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """Predict the output shapes for these arguments, without running the function.

        Arguments may be arrays, `jax.ShapeDtypeStruct`s, tracers, Python scalars, or
        plain tuples of ints standing for shapes, in any pytree. Raises an
        `AxisCheckError` exactly where JAX would raise.
        """
        try:
            flat = flatten_call(args, kwargs)
            if int in map(type, flat[0]):
                args, kwargs = shapes_as_structs(args, kwargs)  # tuples of ints stand for shapes
                flat = flatten_call(args, kwargs)
            return self._predict(args, kwargs, flat)
        except AxisCheckError as err:
            raise self._with_fix(err, args, kwargs).with_traceback(None) from err.__cause__

    def explain(self, *args: Any, **kwargs: Any) -> str:
        """The derivation table for these arguments; for a failing call, the error text."""
        try:
            pred = self.predict(*args, **kwargs)
        except AxisCheckError as err:
            return f"{type(err).__name__}: {err}"
        return f"{self._describe()} -> {_shapes_text(pred.shapes)}\n{pred}"

    def _describe(self) -> str:
        return fn_name(self.__wrapped__)

    def _predicts_only(self) -> bool:
        """Whether calls cannot run (a shard_map planned for a mesh given as sizes)."""
        return False

    # ------------------------------------------------------------------- call

    def _outer_level(self) -> VmapLevel | None:
        """The outermost vmap level (None for `check`)."""
        return None

    def _precheck(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Everything that needs no trace, when the outputs need one: the signature's
        inputs through every level, or else the outer level's ranks and batch sizes."""
        try:
            leaves, treedef = flatten_call(args, kwargs)
        except AxisCheckError as err:
            raise err.with_traceback(None) from None
        key = (treedef, tuple(leaf_key(x) for x in leaves))
        if self._cacheable and self._passed.get(key) is not None:
            return
        try:
            call = label_call(args, kwargs, self._params)
            if self._input_model is not None:
                run(self._input_model, call)
            elif (level := self._outer_level()) is not None:
                map_inputs(level, call, ())
            if self._trace_checks:
                self._check_by_trace(call)
        except AxisCheckError as err:
            raise self._with_fix(err, args, kwargs).with_traceback(None) from None
        self._passed.put(key, True)

    def _check_by_trace(self, call: Any) -> None:
        """One trace per new shape, where JAX may answer silently and wrongly: collectives
        over named axes, and pmap's outputs. The function's own failures are JAX's to raise."""
        try:
            run(self._model, call)
        except FunctionError:
            return
        except AxisCheckError:
            raise
        except Exception:
            return

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        pred = None
        if self._symbolic:
            try:
                pred = self._predict(args, kwargs)
            except FunctionError:
                pass  # the function's own failure: let JAX raise it, untouched
            except AxisCheckError as err:
                raise self._with_fix(err, args, kwargs).with_traceback(None) from err.__cause__
        else:
            self._precheck(args, kwargs)
        self._tracker.reset()
        try:
            out = self._jax_fn(*args, **kwargs)
        except AxisCheckError:
            raise
        except Exception as err:
            if self._tracker.raised:
                self._annotate(err, args, kwargs)
                raise  # the function's own error: its type and message untouched
            better = self._diagnose(args, kwargs)
            if better is _FUNCTIONS_OWN:
                raise  # what the function did (it returned a str, say): JAX's error, untouched
            raise (
                better
                or OutputError(
                    f"JAX failed outside {fn_name(self.__wrapped__)} itself (mapping its arguments or outputs):"
                    f" {type(err).__name__}: {err}",
                    transform=self._describe(),
                )
            ).with_traceback(None) from err
        if pred is not None:
            self._verify(out, pred)
        return out  # type: ignore[no-any-return]

    def _annotate(self, err: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Add a note mapping the function's failure back to the batched arguments."""
        try:
            run(self._fallback or self._model, label_call(args, kwargs, self._params))
        except FunctionError as ours:
            lines = [f"axischeck: {ours.transform or self._describe()}: the failure happens per example:"]
            lines += ["  " + row for row in (ours.table or "").splitlines()]
            lines += ["  " + note for note in ours.notes]
            err.add_note("\n".join(lines))
        except Exception:
            return

    def _diagnose(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """After JAX failed: our account of it, `_FUNCTIONS_OWN` if the function's own
        doing is the cause, or None if axischeck cannot tell."""
        model = self._fallback or self._model
        try:
            run(model, label_call(args, kwargs, self._params))
        except FunctionError:
            return _FUNCTIONS_OWN
        except AxisCheckError as err:
            return self._with_fix(err, args, kwargs)
        except Exception:
            return None
        return None

    def _with_fix(self, err: AxisCheckError, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError:
        """`err` with concrete fixes the engine has checked, if any are clear."""
        try:
            options = suggest(self._model, label_call(args, kwargs, self._params), err)
        except Exception:  # a suggestion must never hide the error itself
            return err
        return with_suggestions(err, options)

    def _verify(self, out: Any, pred: Prediction) -> None:
        """A declared signature that lies is reported: the leaf, declared vs actual."""
        got_leaves, got_def_ = jax.tree_util.tree_flatten(out)
        want_leaves, want_def_ = pred.flat
        got_def: Any = got_def_
        want_def: Any = want_def_
        if got_def != want_def:
            raise OutputError(
                f"the function returned an output of structure {got_def}, but its signature declares {want_def}",
                transform=self._describe(),
            )
        if all(getattr(g, "shape", None) == w for g, w in zip(got_leaves, want_leaves, strict=True)):
            return  # the common case, kept cheap: it runs on every eager call
        base = next((s for s in pred.steps if isinstance(s, BaseStep)), None)
        specs = {r.label: r.spec for r in base.outs} if base is not None else {}
        transform = self._describe()
        for label, got, want in zip(leaf_paths(out), got_leaves, want_leaves, strict=True):
            shape = shape_of(got)
            if shape != want:
                name = "output" + label
                declared = f" (declared {specs[name]})" if specs.get(name) else ""
                raise OutputError(
                    f"the function's output contradicts its signature: {name} has shape"
                    f" {format_shape(shape) if shape is not None else type(got).__name__}, but"
                    f" the signature predicts {format_shape(want)}{declared}",
                    transform=transform,
                    table=str(pred),
                )


def require_callable(fun: object, transform: str) -> None:
    if not callable(fun):
        raise SpecError(f"{transform} needs a callable to map, got {type(fun).__name__}: {fun!r}")


class Mapped(Transformed[P, R]):
    """The shell `vmap` and `pmap` share: one mapping level over a per-example model.

    Subclasses validate their options, then pass `make_level(name, taken_symbols)` and
    `make_jax(tracked_fun)`; everything else (the per-example model, the checked JAX
    callable, the batched signature) is built here once.
    """

    def __init__(
        self,
        fun: Callable[P, R],
        signature: Any,
        make_level: Callable[[str, frozenset[str]], VmapLevel],
        make_jax: Callable[[Callable[..., Any]], Callable[..., Any]],
        transform: str,
    ) -> None:
        name = fn_name(fun)
        inner, per_example, fallback_inner = inner_model(fun, signature, name)
        taken = (per_example.symbols if per_example is not None else frozenset()) | model_symbols(inner)
        level = make_level(name, taken)
        tracker = FunctionTracker()
        try:
            jax_fn = make_jax(tracker.wrap(fun))
        except (TypeError, ValueError) as err:  # anything our validation let through
            raise SpecError(f"jax.{transform} rejected these options: {err}") from err
        self._level = level
        fallback = VmapModel(level, fallback_inner, fun) if fallback_inner is not None else None
        super().__init__(fun, VmapModel(level, inner, fun), jax_fn, per_example, fallback, tracker)
        self.batched_signature: Signature | None = (
            Signature._make(per_example.core, per_example.levels + (level,)) if per_example is not None else None
        )

    def _describe(self) -> str:
        return self._level.describe()

    def _outer_level(self) -> VmapLevel | None:
        return self._level


class Bound(Generic[P, R]):
    """A transformed method bound to an instance: call, predict and explain prepend it."""

    def __init__(self, transform: Transformed[..., R], instance: Any) -> None:
        self.__self__ = instance
        self.__func__ = transform
        self.__wrapped__ = transform.__wrapped__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.__func__(self.__self__, *args, **kwargs)

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        return self.__func__.predict(self.__self__, *args, **kwargs)

    def explain(self, *args: Any, **kwargs: Any) -> str:
        return self.__func__.explain(self.__self__, *args, **kwargs)

    @property
    def signature(self) -> Signature | None:
        return self.__func__.signature


def _shapes_text(shapes: Any) -> str:
    leaves, treedef_ = jax.tree_util.tree_flatten(shapes)
    treedef: Any = treedef_
    if treedef.num_nodes == 1 and len(leaves) == 1:
        return format_shape(leaves[0])
    return str(jax.tree_util.tree_map(format_shape, shapes))


def inner_model(fun: Callable[..., Any], signature: Any, name: str) -> tuple[Model, Signature | None, Model | None]:
    """The per-example model for `fun`: declared signature, annotations, or trace.

    Returns (model, its per-example signature, a trace-based model for diagnosis).
    """
    from ._annotations import core_from_annotations

    if isinstance(fun, Transformed):
        sig = getattr(fun, "batched_signature", fun.signature)  # what the wrapped transform returns
        if signature is not None:
            raise_spec(
                f"{name} is already an axischeck transform with its own signature; give signature= to the inner one"
            )
        return fun.model, sig, None
    params = parameter_names(fun)
    if signature is not None:
        sig = signature if isinstance(signature, Signature) else Signature(signature)
        core = sig.core
        if params is not None:
            positional, varargs, keywords = params
            names = positional + sorted(keywords - set(positional))
            if core.params is None and len(core.inputs) > len(names) and varargs is None:
                raise_spec(
                    f"the signature {core} declares {len(core.inputs)} inputs but {name} has only"
                    f" {len(names)} parameters ({', '.join(names)})"
                )
            if core.params is not None:
                unknown = [p for p in core.params if p not in set(names) | keywords]
                if unknown and params[2] is not None and varargs is None:
                    raise_spec(f"the signature names parameters {unknown} that {name} does not have")
            elif varargs is None:
                core = core.with_params(names)
        sig = Signature._make(core, sig.levels)
        if sig.levels:
            raise_spec("signature= takes a per-example signature; apply vmap through the decorator, not Signature.vmap")
        return SignatureModel(core, fun, name), sig, TraceModel(fun, name)
    core_a = core_from_annotations(fun)
    if core_a is not None:
        return SignatureModel(core_a, fun, name), Signature._make(core_a), TraceModel(fun, name)
    return TraceModel(fun, name), None, None


def raise_spec(message: str) -> None:
    from ._errors import SpecError

    raise SpecError(message)
