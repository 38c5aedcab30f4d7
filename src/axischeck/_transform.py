"""The transform object users hold: a thin shell around JAX's own transform.

A `Transformed` keeps the user's function, its options (one frozen value, see
`_options`), JAX's transform of that very function (so JAX's caches see what they would
see without axischeck), and the `Predictor` its function, options and signature share. A
call checks (`Predictor.check_call`), runs JAX, and verifies; `predict` and `explain`
answer without running the function's FLOPs. Everything else JAX's returned object offers
(`.lower`, `.trace`, ...) is JAX's own, reached through the shell.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from functools import cached_property
from types import FunctionType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from ._call import checks_after, diagnosis, refuse_unflattenable, verify_output
from ._core._annotations import check_text_dims
from ._core._cache import Wrapper, runs_code
from ._core._errors import AxisCheckError, SpecError, with_jax_error
from ._core._html import Explanation
from ._core._jax_compat import filter_traceback_at_boundary, inside_boundary, jax_transform_of, traceback_boundary
from ._core._leaves import plain_function
from ._core._prediction import Prediction
from ._core._trees import shapes_text
from ._engine._function import Nestable, declared_core, declares_nothing, fn_name, known_declares_nothing
from ._engine._in_trace import Recorder, Watch
from ._engine._models import Model
from ._engine._predictor import JAX_ALONE, PREDICTORS, Predictor
from ._engine._signature import Signature, SignatureLike, parsed_signature
from ._engine._transform_models import Models
from ._options import Options, validated
from ._switch import CHECKS_OFF

P = ParamSpec("P")
Q = ParamSpec("Q")
R = TypeVar("R")
T = TypeVar("T")

_SHOWN_FROM_JAX = ("__name__", "__qualname__", "__module__", "__doc__", "__annotations__")


class Transformed(Wrapper, Nestable, Generic[P, R], ABC):
    """A function wrapped by an axischeck transform: callable like the original.

    - `f(*args, **kwargs)`: checks, runs JAX, verifies; returns what JAX returns.
    - `f.predict(*args, **kwargs)`: a `Prediction`, without running `fun`'s FLOPs.
    - `f.explain(*args, **kwargs)`: the derivation table (or the error) as text.
    - `f.signature`: the per-example `Signature` (None when neither declared nor derived).
    - `f.options`: the transform's options, as one frozen value.

    Attributes JAX's transformed function has (`lower`, `trace`, ...) are JAX's own.
    """

    def __init__(self, fun: Callable[P, R], options: Options[Any], signature: SignatureLike | None) -> None:
        """What every transform does with its function and options: JAX's own transform
        of the function made (JAX's refusal of the function or the options explained
        where axischeck can), and what a user must hear when decorating said now (see
        `_check_at_decoration`; flat axes with JAX's defaults and no signature leave
        nothing to say). The rest (the predictor, what the options mean to the engine) is
        found at first use."""
        if signature is not None and type(signature) is not str:
            signature = parsed_signature(signature)  # a pytree of dims is checked before anything flattens it
        recorder = _recorder_for(fun, options)
        self._jax_fn = _built_by_jax(options, fun, recorder)
        self._jax_call = inside_boundary(self._jax_fn)  # what `__call__` calls, inside its own boundary
        self._recorder = recorder
        self.__wrapped__ = fun
        self.options = options
        self._declared = signature  # as given (text stays text): for `_remake`
        self._shared: Predictor | None = None  # found at first use (see `_predictor`)
        if signature is not None or not options.jax_refuses_every_mistake:
            self._check_at_decoration(fun, signature)
        # True: nothing to check before JAX runs a call (no signature, options whose every
        # mistake JAX refuses, annotations that declare no dims); a call is then JAX's
        # own, explained only if JAX refuses it. None: the annotations are read at the
        # first call (`declares_nothing`; a string annotation may name what is defined later).
        self._straight: bool | None = False
        if options.jax_refuses_every_mistake and signature is None and plain_function(fun):
            self._straight = known_declares_nothing(fun)
        # Annotations that declare no dims have none to refuse; a transform that shares
        # the predictor of one made before had its text checked when that one was made.
        if self._straight is not True and self._shared is None:
            check_text_dims(fun)
        # What the function JAX returns shows (its name, doc, ...), as instance attributes,
        # as on that function. JAX's transforms return functions, which have them all (a
        # doc or module of None included); so has ax.check's, the user's function itself.
        jax_fn = self._jax_fn
        if type(jax_fn) is FunctionType:
            self.__name__ = jax_fn.__name__
            self.__qualname__ = jax_fn.__qualname__
            self.__module__ = jax_fn.__module__
            self.__doc__ = jax_fn.__doc__
            self.__annotations__ = jax_fn.__annotations__
        else:  # pmap's callable object, or ax.check's user callable object, may lack some
            for name in _SHOWN_FROM_JAX:
                value = getattr(jax_fn, name, None)
                if value is None:
                    value = getattr(fun, name, None)
                if value is not None:
                    setattr(self, name, value)
        # What functools.wraps copied onto JAX's function from the one it maps (a callable
        # object's fields): on the shell too, so a transform wrapping this one copies them
        # again, as `jax.vmap(jax.vmap(obj))` does. The shell's own attributes come first.
        shell = type(self)
        for name, value in getattr(jax_fn, "__dict__", {}).items():
            if name != "__wrapped__" and name not in self.__dict__ and not hasattr(shell, name):
                setattr(self, name, value)

    def _check_at_decoration(self, fun: Callable[..., Any], signature: Signature | str | None) -> None:
        """What a user must hear when decorating: options axischeck refuses (validated
        once per key, see `validated`), and a declared signature that does not fit the
        function's parameters (see `declared_core`). Written inline, a transform finds the
        predictor its function, options and signature share, if one of them has made it:
        its signature was fitted to the function (this code) then."""
        options = self.options
        # The key of the options as they are now (a list given as in_axes may change
        # later): what they mean and the predictor are found under it.
        options_key = self._options_key = options.key()
        if not options.jax_refuses_every_mistake:
            self._meaning = validated(options, options_key)
        if signature is None:
            return
        if options_key is not None:
            try:
                self._shared = PREDICTORS.get(fun, (options_key, signature))
            except Exception:  # options whose `__eq__` misbehaves: shared with none
                pass
        if self._shared is None:
            declared_core(fun, parsed_signature(signature))

    @cached_property
    def _options_key(self) -> Hashable | None:
        """The options' key (see `Options.key`): taken when the transform is made where
        its construction needs it, else at first use (flat axes with JAX's defaults, which
        cannot change)."""
        return self.options.key()

    @cached_property
    def _meaning(self) -> Any:
        """What the options mean to the engine (`Options.validate`, once per key): found
        at first use where the options hold nothing axischeck refuses (flat axes, JAX's
        defaults), else when the transform is made."""
        return validated(self.options, self._options_key)

    @property
    def _predictor(self) -> Predictor:
        """The predictor shared by every transform of this function with these options and
        signature (and the function's current code)."""
        shared = self._shared
        if shared is None or not runs_code(self.__wrapped__, shared.code):
            shared = self._shared = self._find_predictor()
        return shared

    def _find_predictor(self) -> Predictor:
        fun, options, meaning = self.__wrapped__, self.options, self._meaning
        signature = parsed_signature(self._declared)

        def build(f: Callable[..., Any], held: Callable[..., Any]) -> Models:
            return options.models(meaning, f, held, signature)

        def jax_with(f: Callable[..., Any], changes: Mapping[str, Any]) -> Callable[..., Any]:
            return options.changed(changes).jax_transform(f)

        # Shared by the transforms whose options and signature key alike (a text by its
        # text, which means one signature and hashes in C); an unkeyed one shares nothing.
        options_key = self._options_key
        key = None if options_key is None else (options_key, self._declared)
        return PREDICTORS.get_or_make(fun, key, lambda: options.predictor(fun, build, options.defers_to_jax, jax_with))

    @abstractmethod
    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        """The public constructor and its keyword options: this transform, made again
        (for copy, pickle and `infer_signature`)."""

    # ------------------------------------------------------------ what it knows

    @property
    def signature(self) -> Signature | None:
        """The per-example signature this transform maps (None if undeclared)."""
        return self._predictor.models.signature

    @property
    def batched_signature(self) -> Signature | None:
        """The signature of the transformed function (what a wrapping transform maps)."""
        return self._predictor.models.batched_signature

    @property
    def model(self) -> Model:
        return self._predictor.models.model

    @property
    def models(self) -> Models:
        return self._predictor.models

    @property
    def defers_to_jax(self) -> bool:
        """Whether every answer is JAX's own (options axischeck cannot model)."""
        return self.options.defers_to_jax

    def _describe(self) -> str:
        return fn_name(self.__wrapped__)

    def _jax_to_ask(self) -> Callable[..., Any]:
        """JAX's transform, for axischeck's own abstract questions to JAX (an unbound axis
        name, JAX's answer where axischeck does not model the call). A subclass whose JAX
        transform reads the context mesh asks a fresh one: JAX keys that transform's traces
        by the function alone, so a question asked under `use_abstract_mesh` would be
        answered again to the user's later calls under the real mesh (and refused there)."""
        return self._jax_fn

    def _predicts_only(self) -> bool:
        """Whether calls cannot run (a shard_map planned for a mesh given as sizes)."""
        return False

    def __getattr__(self, name: str) -> Any:
        """What JAX's transformed function offers and the shell does not: `.lower(...)`,
        `.trace(...)`, `.eval_shape(...)`, ... are JAX's own."""
        jax_fn = self.__dict__.get("_jax_fn")
        if jax_fn is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(jax_fn, name)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by rebuilding: the function and the options (JAX's own transform and
        the caches are made anew)."""
        make, options = self._remake()
        return (_rebuilt, (make, self.__wrapped__, options))

    def __copy__(self) -> Self:
        """Itself, as `copy` gives a function JAX returns: so `jax.jit` of a copy finds
        what JAX cached for the original."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

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

    @traceback_boundary
    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """Predict the output shapes for these arguments, without running the function.

        Arguments may be arrays, `jax.ShapeDtypeStruct`s, tracers, Python scalars, or
        plain tuples of ints standing for shapes, in any pytree. Raises an
        `AxisCheckError` exactly where JAX would raise (with JAX's own message kept).
        """
        return self._predictor.predict(args, kwargs, self._jax_to_ask, self._describe)

    def explain(self, *args: Any, **kwargs: Any) -> str:
        """The derivation table for these arguments; for a failing call, the error text.

        The text is a `str` (an `Explanation`, equal to the same plain text); Jupyter shows
        it as HTML, with the table and a drawing of each argument's axes.
        """
        try:
            pred = self.predict(*args, **kwargs)
        except AxisCheckError as err:
            return Explanation(f"{type(err).__name__}: {err}", err)
        head = f"{self._describe()} -> {shapes_text(pred.shapes)}"
        return Explanation(f"{head}\n{pred}", pred, head)

    @traceback_boundary
    def infer_signature(self, *args: Any, **kwargs: Any) -> Signature:
        """The per-example signature of the function, from example arguments, checked
        against JAX: paste it as `signature=` (`sig.as_code()` writes it).

        Arguments are taken as `predict` takes them (arrays, `ShapeDtypeStruct`s, plain
        tuples of ints as shapes, in pytrees). The per-example shapes are the example's
        with the mapped axes stripped (for `shard_map`/`smap`: one device's blocks). Names
        are never guessed from sizes alone: each is a question to JAX, `jax.eval_shape` of
        JAX's own transform on re-sized arguments. A dim that can change alone gets its
        own name, dims that change only together share one, a dim that cannot change is a
        number; an output dim gets the name it follows over fresh draws of every name,
        and if one follows none (`n + 1`, `2 n`) the output is left undeclared. The
        result is declared on this transform rebuilt and its predictions compared with
        JAX on the example and the draws; what could not be settled is in `sig.notes`.
        For nested axischeck transforms it is the innermost function's signature.

        Cost, for G groups of equal-sized dims holding D dims: usually one or two
        `eval_shape`s per group, at most 3 G + D; then one for the example and three
        draws. Only if JAX refuses a draw, at most one more per name to find which names
        must stay fixed, and the draws again (at most three rounds).

        Raises `AxisCheckError` where `predict` would, or when no signature agrees with JAX.

        ```python
        >>> f = ax.vmap(lambda x, y, z: jnp.einsum("ab,bc->ac", x, y) + z, in_axes=(0, 1, 0))
        >>> sig = f.infer_signature((16, 8, 4), (4, 16, 2), (16, 8, 2))
        >>> sig
        Signature('(a, b), (b, c), (a, c) -> (a, c)')
        >>> print(sig.as_code())
        "(a,b),(b,c),(a,c)->(a,c)"
        >>> sig.notes
        ()
        ```
        """
        from ._engine._infer import Subject, infer_signature

        layers: list[tuple[Callable[..., Any], dict[str, Any]]] = []  # outermost first
        fun: Any = self
        while isinstance(fun, Transformed):
            layers.append(fun._remake())
            fun = fun.__wrapped__
        mapped_by = jax_transform_of(fun)
        if mapped_by is not None:  # its per-example signature is not the function's own
            raise SpecError(
                f"{fn_name(fun)} is already mapped by {mapped_by}: the signature inferred here would"
                " describe the batched function as one example's",
                fix=f"infer the signature of the function {mapped_by} maps, or map it with axischeck's transform",
            )

        def rebuild(sig: Signature) -> Any:
            """This transform again, its innermost function declaring `sig`."""
            made = fun
            for k, (make, options) in enumerate(reversed(layers)):
                made = make(made, **({**options, "signature": sig} if k == 0 else options))
            return made

        subject = Subject(
            self._describe(), fun, self.predict, self._jax_to_ask(), rebuild, self._predictor.tuple_dtypes
        )
        try:
            return infer_signature(subject, args, kwargs)
        except AxisCheckError as err:
            raise err from err.__cause__

    # ------------------------------------------------------------------- call

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """The checks before JAX runs (a prediction with a signature, the pre-checks
        without), JAX's own transform, the output against the prediction; after a
        failure, axischeck's account of it with JAX's exception kept (see `_call`).

        The call is its own traceback boundary, calling inside JAX's (`inside_boundary`):
        under a vmap the user's function runs as deep in the stack as under `jax.vmap`,
        and what the call raises has the traceback JAX's boundary would give it."""
        __tracebackhide__ = True  # pytest and IPython hide this frame as they hide JAX's
        try:
            if CHECKS_OFF.get():  # inside `checks_disabled()`: JAX's transform, unchecked
                return self._jax_call(*args, **kwargs)  # type: ignore[no-any-return]
            pred: Prediction | None = None
            watch: Watch | None = None  # where the check rides JAX's trace of the call
            if self._declares_nothing():
                refuse_unflattenable(args, kwargs)
            else:
                before = self._predictor.check_call(
                    args, kwargs, self._jax_fn, self._recorder, self.options.jax_caches_traces
                )
                if before is JAX_ALONE:
                    return self._jax_call(*args, **kwargs)  # type: ignore[no-any-return]
                if isinstance(before, Watch):
                    watch = before
                else:
                    pred = before
            try:
                out = self._jax_call(*args, **kwargs) if watch is None else watch.run(self._jax_call, args, kwargs)
            except AxisCheckError:
                raise  # an inner axischeck transform has explained it
            except Exception as err:
                ours = diagnosis(self._predictor, self._describe(), err, args, kwargs)
                if ours is None:
                    raise
                # The explanation replaces JAX's exception, whose type and message it carries
                # (as a refusal before the run does): no chained JAX traceback above the user's.
                raise ours from None
            if watch is not None:
                checks_after(watch, args, kwargs)
            if pred is not None and not pred.matches(out):
                verify_output(self._predictor, self._describe(), out, pred, args, kwargs)
            return out  # type: ignore[no-any-return]
        except Exception as failure:
            filter_traceback_at_boundary(failure)
            raise  # bare: the frames as filtered, none added

    def _declares_nothing(self) -> bool:
        """Whether a call has nothing to check before JAX runs: a plain function without a
        signature whose annotations declare no dims (settled once, at the first call if
        the transform could not tell when it was made: see `declares_nothing`). JAX then
        checks the call itself, and a refusal is explained after it."""
        straight = self._straight
        if straight is None:
            straight = self._straight = declares_nothing(self.__wrapped__)
        return straight


def _rebuilt(make: Callable[..., Any], fun: Callable[..., Any], options: dict[str, Any]) -> Any:
    return make(fun, **options)


def described(transform: Transformed[..., Any]) -> str:
    """How messages name a one-level transform: `vmap(f, in_axes=..., out_axes=...)`."""
    level = getattr(transform.model, "level", None)
    return level.describe() if level is not None else fn_name(transform.__wrapped__)


def _recorder_for(fun: Callable[..., Any], options: Options[Any]) -> Recorder | None:
    """The function as JAX's transform is to hold it where a call's check rides JAX's
    trace (see `_in_trace`), or None: JAX holds `fun` itself (and refuses it if it is not
    a function). An axischeck transform inside records the user's function itself."""
    if options.rides_jax_trace and callable(fun) and not isinstance(fun, Transformed):
        return Recorder(fun, options.kind, options.jax_caches_traces)
    return None


def _built_by_jax(options: Options[Any], fun: Callable[..., Any], recorder: Recorder | None) -> Callable[..., Any]:
    """JAX's own transform of the function (or of its `recorder`), so its construction
    errors are JAX's: when JAX refuses the function or the options, axischeck's
    explanation (with JAX's message) if it has one, else JAX's exception unchanged."""
    try:
        return options.jax_transform(recorder or fun)
    except AxisCheckError:
        raise  # refused before JAX was asked
    except Exception as jax_err:
        explain_refusal(jax_err, lambda: options.explain_refusal(fun))
        raise


def explain_refusal(jax_err: Exception, validate: Callable[[], object]) -> None:
    """Raises axischeck's explanation of options JAX refused to build a transform with
    (JAX's message kept), if `validate` has one; returns for the caller to re-raise
    JAX's exception unchanged otherwise."""
    try:
        validate()
    except AxisCheckError as ours:
        raise with_jax_error(ours, jax_err) from None
    except Exception:  # our explanation failed: JAX's error is the answer
        pass


class Bound(Wrapper, Generic[P, R]):
    """A transformed method bound to an instance: call, predict and explain prepend it."""

    def __init__(self, transform: Transformed[..., R], instance: Any) -> None:
        self.__self__ = instance
        self.__func__ = transform
        self.__wrapped__ = transform.__wrapped__
        for name in _SHOWN_FROM_JAX:  # as a bound method shows its function's
            value = transform.__dict__.get(name)
            if value is not None:
                setattr(self, name, value)

    def __eq__(self, other: object) -> bool:
        """Equal to another binding of the same transform to the same instance, as bound
        methods are: `jax.jit` keys a static argument by it (and retraces on inequality)."""
        return type(other) is Bound and other.__self__ is self.__self__ and other.__func__ is self.__func__

    def __hash__(self) -> int:
        return hash((id(self.__self__), id(self.__func__)))

    @traceback_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.__func__(self.__self__, *args, **kwargs)

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        return self.__func__.predict(self.__self__, *args, **kwargs)

    def explain(self, *args: Any, **kwargs: Any) -> str:
        return self.__func__.explain(self.__self__, *args, **kwargs)

    def infer_signature(self, *args: Any, **kwargs: Any) -> Signature:
        return self.__func__.infer_signature(self.__self__, *args, **kwargs)

    @property
    def signature(self) -> Signature | None:
        return self.__func__.signature

    @property
    def __signature__(self) -> Any:
        """The method's parameters without `self`, as `inspect.signature` gives them for a
        bound method (so `jax.jit(obj.f, static_argnames=...)` finds the right one)."""
        import inspect

        sig = inspect.signature(self.__func__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["__func__"], name)
