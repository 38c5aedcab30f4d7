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
from functools import cached_property, partial
from types import FunctionType
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, Protocol, Self, TypeVar, overload

from ._advice import advise
from ._call import checking_leaks, checks_after, diagnosis, raised_inside, refuse_unflattenable, verify_output
from ._core._annotations import check_text_dims
from ._core._cache import Wrapper, code_of, runs_code
from ._core._errors import AxisCheckError, SpecError, with_jax_error
from ._core._html import Explanation
from ._core._jax_compat import filter_traceback_at_boundary, inside_boundary, jax_transform_of, traceback_boundary
from ._core._keys import draws_key, same_key
from ._core._leaves import plain_function
from ._core._prediction import Prediction
from ._core._trees import shapes_text
from ._draws import SITES, DrawMap, Sites, Speaker, check_draws, level_draw_map, site_key, speaker_for
from ._engine._function import Nestable, declared_core, declares_nothing, fn_name
from ._engine._in_trace import Recorder, Watch, records_wanted
from ._engine._levels import MapLevel
from ._engine._models import Model
from ._engine._predictor import JAX_ALONE, PREDICTORS, Predictor
from ._engine._signature import Signature, SignatureLike, parsed_signature
from ._engine._transform_models import Models
from ._may_draw import may_draw
from ._options import Options, validated
from ._switch import CHECKS_OFF

P = ParamSpec("P")
Q = ParamSpec("Q")
R = TypeVar("R")
T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)


class DrawsDue(NamedTuple):
    """A call whose random draws are checked once JAX has answered: its key in the table
    that keeps the checked calls (`SITES`, or the library transform's that made the call,
    `speaker`)."""

    key: Hashable | None
    kept_by: Sites | Speaker
    speaker: Speaker | None


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
        `_check_at_decoration`). The predictor is found at first use (`_predictor`)."""
        if signature is not None and type(signature) is not str:
            signature = parsed_signature(signature)  # a pytree of dims is checked before anything flattens it
        recorder = _recorder_for(fun, options)
        self._jax_fn = _built_by_jax(options, fun, recorder)
        self._jax_call = inside_boundary(self._jax_fn)  # what `__call__` calls, inside its own boundary
        self._recorder = recorder
        self.__wrapped__ = fun
        self.options = options
        self._declared = signature  # as given (text stays text): for `_remake`
        # The options' key as they are now (a list given as in_axes may change later):
        # what they mean (validated once per key) and the predictor are found under it,
        # and JAX's transform is built again from a copy of them (see `_recording`).
        self._options_key = options.key()
        self._meaning = validated(options, self._options_key)
        self._options_as_built = options.as_built()
        self._shared = self._check_at_decoration(fun, signature)
        # Whether a call may have nothing to check before JAX runs: options whose every
        # mistake JAX refuses, no signature, a plain function. Its annotations then say
        # (`declares_nothing`), read at a call: a string annotation may name what is
        # defined after the decorator runs.
        self._unchecked_unless_annotated = (
            options.jax_refuses_every_mistake and signature is None and plain_function(fun)
        )
        # Whether the random draws of its calls are checked: a map of the user's function
        # (an axischeck transform inside checks its own).
        self._draws_checked = options.maps and (
            type(fun) is FunctionType or (callable(fun) and not isinstance(fun, Transformed))
        )
        self._draws_seen: Hashable | None = None  # the last call key whose draws were found checked
        self._library_own = False  # a library's own transform, whose draws alone are checked (`only_draws`)
        self._show_as(self._jax_fn)

    def _check_at_decoration(self, fun: Callable[..., Any], signature: Signature | str | None) -> Predictor | None:
        """What a user must hear when decorating: a declared signature that does not fit
        the function's parameters (see `declared_core`), dims written as text in its
        annotations that no reader accepts (see `check_text_dims`). Returns the predictor
        the function, options and signature share, if another transform has made it: they
        were checked when that one was made (a transform written inline checks once)."""
        if signature is not None and self._options_key is not None:
            try:
                shared = PREDICTORS.get(fun, (self._options_key, signature))
            except Exception:  # options whose `__eq__` misbehaves: shared with none
                shared = None
            if shared is not None:
                return shared
        if signature is not None:
            declared_core(fun, parsed_signature(signature))
        check_text_dims(fun)
        return None

    def _show_as(self, jax_fn: Callable[..., Any]) -> None:
        """What the function JAX returns shows (its name, doc, ...), as instance
        attributes, as on that function. JAX's transforms return functions, which have
        them all (a doc or module of None included); so has ax.check's, the user's
        function itself. Then what functools.wraps copied onto JAX's function from the
        one it maps (a callable object's fields): on the shell too, so a transform
        wrapping this one copies them again, as `jax.vmap(jax.vmap(obj))` does. The
        shell's own attributes come first."""
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
                    value = getattr(self.__wrapped__, name, None)
                if value is not None:
                    setattr(self, name, value)
        shell = type(self)
        for name, value in getattr(jax_fn, "__dict__", {}).items():
            if name != "__wrapped__" and name not in self.__dict__ and not hasattr(shell, name):
                setattr(self, name, value)

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
        predictor = self._predictor
        try:
            return predictor.predict(args, kwargs, self._jax_to_ask, self._describe)
        except AxisCheckError as err:
            raise advise(predictor, err, args, kwargs) from err.__cause__

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
                hint=f"infer the signature of the function {mapped_by} maps, or map it with axischeck's transform",
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
            recorder, jax_call = self._recorder, self._jax_call
            collected = recorder is None and records_wanted() and not isinstance(self.__wrapped__, Transformed)
            if collected:  # a check around this call records the function, or asks its records (`_recording`)
                recorder, jax_call = self._recording
            if not collected and (
                self._library_own or (self._unchecked_unless_annotated and declares_nothing(self.__wrapped__))
            ):
                refuse_unflattenable(args, kwargs)
            else:
                try:
                    before = self._predictor.check_call(
                        args, kwargs, self._jax_fn, recorder, self.options.jax_caches_traces
                    )
                except AxisCheckError as err:  # refused before JAX runs: with the advice
                    raise advise(self._predictor, err, args, kwargs) from err.__cause__
                if before is JAX_ALONE:
                    return jax_call(*args, **kwargs)  # type: ignore[no-any-return]
                if isinstance(before, Watch):
                    watch = before
                else:
                    pred = before
            draws = self._draws_due(args, kwargs)
            if draws is not None:  # JAX's trace records the function for the check of its draws
                recorder, jax_call = self._recording
                if watch is None:
                    watch = Watch(recorder, self._predictor, args, kwargs, None, self.options.jax_caches_traces)
            try:
                out = jax_call(*args, **kwargs) if watch is None else watch.run(jax_call, args, kwargs)
            except AxisCheckError as inner:
                # An inner axischeck transform has explained it; where it sits says what
                # this one passed it (an argument left whole by in_axes None, say).
                if not self._library_own:
                    raised_inside(inner, described(self), getattr(self.options, "axis_name", False))
                raise
            except Exception as err:
                if self._library_own:
                    raise  # the library's wrapper explains it
                ours = diagnosis(self._predictor, self._describe(), err, args, kwargs)
                if ours is None:
                    raise
                # The explanation replaces JAX's exception, whose type and message it carries
                # (as a refusal before the run does): no chained JAX traceback above the user's.
                raise ours from None
            if watch is not None:
                checks_after(watch, self._predictor, args, kwargs)
                if draws is not None:
                    # A partial, not a lambda: a closure would make the arguments cells of
                    # this frame, which JAX's leak checker cannot walk through.
                    check_draws(watch, partial(self._draw_map, args, kwargs), self.__wrapped__, draws.speaker)
                    draws.kept_by.draws_checked(draws.key)
            if pred is not None and not pred.matches(out):
                verify_output(self._predictor, self._describe(), out, pred, args, kwargs)
            return out  # type: ignore[no-any-return]
        except Exception as failure:
            filter_traceback_at_boundary(failure)
            raise  # bare: the frames as filtered, none added

    def _draws_due(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> DrawsDue | None:
        """Whether this call's random draws are to be checked (see `_draws`): under which
        key, kept by whom (the predictor its function and options share, or the library
        transform that made this call), or None: the transform maps no function of the
        user's it records, a call with this key was checked (by this transform: one
        comparison; else as its keeper says), or the call cannot draw (`may_draw`: no key
        among its arguments, none reached by its function; a library's transform passes
        its keys as arguments, and its own function is not read).

        A call that cannot draw is not kept in the table: whether it can is read from the
        function's closure and globals too, which its code and key do not name."""
        if not self._draws_checked:
            return None
        key = draws_key(args, kwargs)
        if same_key(key, self._draws_seen):
            return None
        speaker = speaker_for(self.__wrapped__)
        if speaker is None and not may_draw(self.__wrapped__, args, kwargs, key):
            self._draws_seen = key
            return None
        kept_by: Sites | Speaker = SITES if speaker is None else speaker
        site = site_key(self._code, self._options_key, key) if speaker is None else key
        if not kept_by.draws_due(site):
            self._draws_seen = key
            return None
        if checking_leaks():  # a leak the record would meet makes JAX's trace fail: run once, JAX's way
            return None
        return DrawsDue(site, kept_by, speaker)

    @cached_property
    def _code(self) -> object:
        """The code the function runs (see `code_of`), which keys the check of the draws."""
        return code_of(self.__wrapped__)

    @cached_property
    def _recording(self) -> tuple[Recorder, Callable[..., Any]]:
        """A recorder of the function and JAX's transform holding it, for the calls whose
        checks ride JAX's trace (the check of their draws, or a check around this call
        that collects the records of the function it maps, so the trace JAX makes records
        the function once for both): JAX's own transform where it holds one already, else
        one made at the first such call (every other call then runs JAX's transform of
        the function itself: as deep in the stack, at no cost). A transform that keeps its
        traces (pmap) runs the one made for every later call: the trace it made and
        compiled for this call is not made again."""
        if self._recorder is not None:
            return self._recorder, self._jax_call
        options = self._options_as_built
        recorder = Recorder(self.__wrapped__, options.kind, options.jax_caches_traces)
        jax_call = inside_boundary(_built_by_jax(options, self.__wrapped__, recorder))
        if options.jax_caches_traces:  # pmap: every later call runs the transform that keeps the trace
            self._jax_call = jax_call
        return recorder, jax_call

    def _draw_map(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> DrawMap | None:
        """How the transform maps this call, for the check of its draws: a vmap's or
        pmap's level (None for options axischeck does not model)."""
        level = getattr(self.model, "level", None)
        if not isinstance(level, MapLevel):
            return None
        return level_draw_map(level, self._predictor.label(args, kwargs), self._describe())

    def only_draws(self) -> None:
        """Check only the random draws of this transform's calls (it is a library's own,
        made by axischeck's wrapper of that library, which checks and explains the rest):
        nothing before JAX runs, and JAX's errors pass through as they are."""
        self._library_own = True


def _rebuilt(make: Callable[..., Any], fun: Callable[..., Any], options: dict[str, Any]) -> Any:
    return make(fun, **options)


def described(transform: Transformed[..., Any]) -> str:
    """How messages name a one-level transform: `vmap(f, in_axes=..., out_axes=...)`."""
    level = getattr(transform.model, "level", None)
    return level.describe() if level is not None else fn_name(transform.__wrapped__)


def _recorder_for(fun: Callable[..., Any], options: Options[Any]) -> Recorder | None:
    """The function as JAX's transform is to hold it where every call's check rides JAX's
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


class Method(Protocol[R_co]):
    """What `Bound` binds: a checked transform (axischeck's, or a library wrapper's)."""

    __wrapped__: Any

    def __call__(self, *args: Any, **kwargs: Any) -> R_co: ...

    def predict(self, *args: Any, **kwargs: Any) -> Prediction: ...

    def explain(self, *args: Any, **kwargs: Any) -> str: ...


class Bound(Wrapper, Generic[P, R]):
    """A transformed method bound to an instance: call, predict and explain prepend it."""

    def __init__(self, transform: Method[R], instance: Any) -> None:
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
        return self._transform().infer_signature(self.__self__, *args, **kwargs)

    @property
    def signature(self) -> Signature | None:
        return self._transform().signature

    def _transform(self) -> Transformed[..., R]:
        """The bound transform, where it is axischeck's own (a library wrapper's has no
        signature to show or infer: AttributeError, as for any attribute it lacks)."""
        transform = self.__func__
        if not isinstance(transform, Transformed):
            raise AttributeError(f"{type(transform).__name__!r} object has no signature")
        return transform

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
