"""`axischeck.nnx`: Flax NNX's `vmap` and `pmap`, checked and explained.

Same parameters, defaults, results and exceptions as `flax.nnx.vmap` and `flax.nnx.pmap`
(which still do the work). Each call first resolves `in_axes` (ints, None and
`nnx.StateAxes` for modules) against the actual arguments and checks the mapped sizes, so
a mistake is reported with the function's own parameter names and the module's state
paths (`model['linear']['kernel']`) and a checked fix. Each result has `predict` and
`explain` like `axischeck.vmap`'s. Flax is imported only when this module is.

Here: the entry points and the wrapper's call path (resolve, check, run, predict, explain).
The arguments read as NNX reads them (modules as their state) are `_libs/_nnx_state.py`'s;
the mistakes explained in NNX's terms, with their checked fixes, `_libs/_nnx_mistakes.py`'s.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, overload

import jax

from ._core._cache import BoundedCache, PerFunction
from ._core._errors import LIBRARY_FAILURES, AxisCheckError, FunctionError, SpecError, replaces
from ._core._html import Explanation
from ._core._prediction import Prediction
from ._core._trees import seq_repr
from ._draws import Passed, Speaker, speaking
from ._libs._mapped import retitled
from ._libs._nnx_mistakes import Mistakes
from ._libs._nnx_state import (
    Aliased,
    Resolved,
    Unsupported,
    arg_name,
    as_flax_passes,
    as_written,
    entries,
    nnx,
    parameter_names,
    place,
    pure_out_axes,
    pure_output,
    show,
    variable_axes,
)
from ._libs._routing import route, routing
from ._options import unknown_option
from ._pmap import pmap as ax_pmap
from ._switch import CHECKS_OFF, checks_off, made_checked, unchecked
from ._transform import Bound
from ._vmap import vmap as ax_vmap

__all__ = ["pmap", "vmap"]

# Flax's own transforms, taken before `axischeck.patch()` can route the names to these wrappers.
_LIBRARY = {"vmap": nnx.vmap, "pmap": nnx.pmap}

P = ParamSpec("P")
R = TypeVar("R")


_OPTIONS: Any = object()
"""`_checker`'s default for an option a fix may change: the transform's own."""


class _Mapped(Generic[P, R]):
    """A function wrapped by `axischeck.nnx.vmap` / `pmap`."""

    def __init__(
        self, fun: Callable[P, R], transform: str, in_axes: Any, out_axes: Any, options: dict[str, Any]
    ) -> None:
        # First, so that wrapping another wrapper (`vmap(vmap(f))`) takes its name and docs
        # but keeps this wrapper's own transform and options.
        functools.update_wrapper(self, fun)
        self.__wrapped__ = fun
        self._transform = transform
        self.in_axes = in_axes
        self.out_axes = out_axes
        self._options = options
        route("flax.nnx.transforms.iteration")
        with routing():  # Flax makes its jax.vmap/jax.pmap of its own function now: axischeck's
            self._library = _LIBRARY[transform](fun, in_axes=in_axes, out_axes=out_axes, **options)
        # Flax reads its mode when the transform is made (a `set_graph_mode` context then).
        graph = options.get("graph")
        graph_updates = options.get("graph_updates")
        graph = nnx.graph.set_graph_mode.current_value() if graph is None else graph
        graph_updates = nnx.graph.set_graph_updates.current_value() if graph_updates is None else graph_updates
        self._mode = "tree" if not (graph and graph_updates) else "bind" if transform == "vmap" else "positional"

    def _title(self) -> str:
        name = getattr(self.__wrapped__, "__name__", type(self.__wrapped__).__name__)
        parts = [f"in_axes={show(self.in_axes)}", f"out_axes={show(self.out_axes)}"]
        for key in ("axis_name", "axis_size"):
            if self._options.get(key) is not None:
                parts.append(f"{key}={self._options[key]!r}")
        return f"nnx.{self._transform}({name}, {', '.join(parts)})"

    def _checker(
        self, resolved: Resolved, states: bool = False, axis_size: int | None = None, out_axes: Any = _OPTIONS
    ) -> Any:
        """axischeck's transform of the function over the call's plain pytrees; with
        `states`, of what Flax hands back besides the function's output in graph mode: each
        module argument's state as the function left it, at the axes it came in with.
        `axis_size`, `out_axes`: others than the options', for a fix to be checked with."""
        fun: Callable[..., Any] = self.__wrapped__
        out_axes = self.out_axes if out_axes is _OPTIONS else out_axes

        try:
            names = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            names = []

        def per_example(*dynamic: Any, **kwargs: Any) -> Any:
            args = resolved.rebuild(dynamic)
            if states:
                fun(*args, **kwargs)
                return tuple(nnx.to_pure_dict(nnx.state(a)) if nnx.graph.is_graph_node(a) else None for a in args)
            inputs = variable_axes(args, resolved.axes, names)
            return pure_output(fun(*args, **kwargs), out_axes, inputs)

        try:
            per_example.__signature__ = inspect.signature(fun)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            pass
        per_example.__name__ = getattr(fun, "__name__", type(fun).__name__)
        per_example.__qualname__ = per_example.__name__
        options = {k: self._options[k] for k in ("axis_name", "axis_size") if self._options.get(k) is not None}
        if axis_size is not None:
            options["axis_size"] = axis_size
        make = ax_vmap if self._transform == "vmap" else ax_pmap
        with made_checked():
            return make(
                per_example,
                in_axes=resolved.axes,
                out_axes=resolved.handed_back if states else pure_out_axes(out_axes),
                **options,
            )

    def _resolved(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Resolved:
        passed, named, _ = as_flax_passes(self.__wrapped__, self._mode, args, kwargs)
        argnums = self._options.get("static_broadcasted_argnums", ())
        static = frozenset((argnums,) if isinstance(argnums, int) else argnums)  # pmap ignores negative ones
        return Resolved(passed, self.in_axes, named, parameter_names(self.__wrapped__), static)

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """The shapes of the call's outputs, from the arguments' shapes (runs no FLOPs);
        a module among the outputs shows as its state (split by `StateAxes` filters).

        Raises `axischeck.AxisCheckError` naming the function's parameters and the
        modules' state paths when the call would fail."""
        mistakes = self._mistakes()
        try:
            resolved = self._resolved(args, kwargs)
            checker = self._checker(resolved)
        except Unsupported:
            mistake = mistakes.defaults_mistake(args, kwargs)
            raise (mistake or self._not_modelled()) from None
        except ValueError as refused:  # Flax's split: StateAxes filters that leave variables out
            uncovered = None if isinstance(refused, AxisCheckError) else mistakes.uncovered(args, kwargs)
            if uncovered is None:
                raise
            raise uncovered from None
        try:
            prediction: Prediction = checker.predict(*resolved.dynamic, **resolved.kwargs)
        except AxisCheckError as err:
            if isinstance(err.__cause__, Unsupported):  # met inside the traced function
                raise self._not_modelled() from None
            if isinstance(err.__cause__, Aliased):
                raise mistakes.aliased(err.__cause__, resolved) from None
            whole = mistakes.whole_per_example(resolved) if isinstance(err, FunctionError) else None
            raise (
                whole
                or mistakes.tag_filter(resolved.passed, resolved.names)
                or mistakes.mapped_by_type(resolved)
                or self._user_terms(retitled(err, self._title()), resolved)
            ) from None
        updated = mistakes.updated_unmapped(resolved)
        if updated is not None:
            raise updated
        return prediction

    def _not_modelled(self) -> SpecError:
        """`predict` of a call Flax runs unchecked (see `Unsupported`)."""
        return SpecError(
            "axischeck does not model this call (arguments that are neither arrays nor modules,"
            " or keyword arguments Flax refuses): Flax runs it unchecked, and it cannot be predicted",
            transform=self._title(),
        )

    def explain(self, *args: Any, **kwargs: Any) -> str:
        """The derivation table for the call (also for a passing call); Jupyter shows it
        as HTML (an `Explanation`: a `str` equal to the same text)."""
        try:
            pred = self.predict(*args, **kwargs)
        except AxisCheckError as err:
            return Explanation(str(err), err)
        return Explanation(str(pred), pred)

    def _user_terms(self, err: AxisCheckError, resolved: Resolved) -> AxisCheckError:
        """The fix with each module's axes written as the user wrote them where they are
        unchanged (`StateAxes(...)`), or as one int/None where the fix gives all its state
        one: in the text and in `err.suggestions` alike (what nnx.vmap takes for a module)."""
        if not err.fix:
            return err
        fix = err.fix
        specs = entries(self.in_axes, len(resolved.axes))
        suggestions = []
        for suggestion in getattr(err, "suggestions", ()):
            axes = dict(suggestion.options).get("in_axes")
            if not isinstance(axes, tuple) or len(axes) != len(resolved.axes):
                suggestions.append(suggestion)
                continue
            users = tuple(as_written(e, b, spec) for e, b, spec in zip(axes, resolved.axes, specs, strict=True))
            shown = ", ".join(show(u) for u in users) + ("," if len(users) == 1 else "")
            fix = fix.replace(f"in_axes={seq_repr(axes)}", f"in_axes=({shown})")
            text = suggestion.text.replace(f"in_axes={seq_repr(axes)}", f"in_axes=({shown})")
            options = tuple((k, users if k == "in_axes" else v) for k, v in suggestion.options)
            suggestions.append(dataclasses.replace(suggestion, text=text, options=options))
        err.fix = fix
        err.suggestions = tuple(suggestions)
        ValueError.__init__(err, err.render())
        return err

    def _checks_with(self, in_axes: Any, passed: tuple[Any, ...]) -> bool:
        """Whether the call checks with other in_axes (a candidate's)."""
        try:
            _Mapped(self.__wrapped__, self._transform, in_axes, self.out_axes, self._options).predict(*passed)
        except AxisCheckError:
            return False
        return True

    def _mistakes(self) -> Mistakes:
        """The explanations of this wrapper's calls' mistakes in NNX's terms, with what they
        read of the wrapper and the ways to check a candidate fix."""
        return Mistakes(
            self.__wrapped__,
            self._transform,
            self.in_axes,
            self.out_axes,
            self._options,
            self._mode,
            self._title(),
            self._checker,
            self._checks_with,
        )

    def _explained(self, resolved: Resolved | None, lib_err: BaseException | None) -> AxisCheckError | None:
        if resolved is None:
            return None
        mistakes = self._mistakes()
        rng = mistakes.rng_not_split(resolved)
        if rng is not None:
            return rng if lib_err is None else retitled(rng, self._title(), lib_err)
        try:
            self._checker(resolved).predict(*resolved.dynamic, **resolved.kwargs)
        except AxisCheckError as err:
            if isinstance(err.__cause__, Unsupported):
                return None
            if isinstance(err.__cause__, Aliased):
                aliased = mistakes.aliased(err.__cause__, resolved)
                return aliased if lib_err is None else retitled(aliased, self._title(), lib_err)
            whole = mistakes.whole_per_example(resolved) if isinstance(err, FunctionError) else None
            whole = whole or mistakes.tag_filter(resolved.passed, resolved.names) or mistakes.mapped_by_type(resolved)
            if whole is not None:
                return whole if lib_err is None else retitled(whole, self._title(), lib_err)
            return self._user_terms(retitled(err, self._title(), lib_err), resolved)
        except Exception:  # noqa: BLE001 - anything else: Flax's own report stands
            return None
        updated = mistakes.updated_unmapped(resolved)
        return updated if updated is None or lib_err is None else retitled(updated, self._title(), lib_err)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if CHECKS_OFF.get():  # inside `checks_disabled()`: Flax's transform, unchecked
            return self._library(*args, **kwargs)  # type: ignore[no-any-return]
        resolved: Resolved | None = None
        try:
            resolved = self._resolved(tuple(args), dict(kwargs))
            if not resolved.sizes_agree(self._options.get("axis_size")):
                err = self._explained(resolved, None)
                if err is not None:
                    raise err
        except (Unsupported, ValueError, TypeError, AttributeError) as exc:
            if isinstance(exc, AxisCheckError):
                raise
            resolved = None
        try:
            with speaking(self._speaker(tuple(args), dict(kwargs))):
                out: R = self._library(*args, **kwargs)
        except LIBRARY_FAILURES as lib_err:
            if isinstance(lib_err, AxisCheckError):
                raise
            err = self._explained(resolved, lib_err)
            if err is None and resolved is None:
                mistakes = self._mistakes()
                mistake = mistakes.uncovered(tuple(args), dict(kwargs)) or mistakes.defaults_mistake(
                    tuple(args), dict(kwargs)
                )
                err = None if mistake is None else retitled(mistake, self._title(), lib_err)
            if err is not None and replaces(err, lib_err):
                raise err from lib_err
            raise
        return out

    def _speaker(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Speaker:
        """How the check of the draws of Flax's `jax.vmap`/`jax.pmap` names what the user
        passed: a module's variables by state path (`model['dropout']['rngs']['key']`) with
        the in_axes entry that maps them, and whether each is an RNG stream's."""

        def passed() -> dict[int, Passed]:
            names = parameter_names(self.__wrapped__)
            specs = entries(self.in_axes, len(args))
            found: dict[int, Passed] = {}
            for index, (arg, spec) in enumerate(zip(args, specs, strict=False)):
                found.update(_passed_in(arg, spec, arg_name(names, index)))
            for name, value in kwargs.items():
                found.update(_passed_in(value, 0, name))
            return found

        checked = _DRAWS_CHECKED.get_or_make(self.__wrapped__, _draws_key(self), lambda: BoundedCache(64))
        return Speaker(self._title(), "flax", passed, checked, "output[1]")

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """Decorating a method binds `self` as Flax's (a function's) binding does; the bound
        method has `predict` and `explain` too."""
        if instance is None:
            return self
        return Bound(self, instance)

    def __repr__(self) -> str:
        return f"<axischeck {self._title()}>"


_DRAWS_CHECKED: PerFunction[BoundedCache[bool]] = PerFunction()
"""Per function and options: the calls whose random draws were checked (see `_draws`)."""


def _draws_key(mapped: _Mapped[..., Any]) -> Hashable | None:
    """The key of a wrapper's options (None: they cannot key a table)."""
    key = (mapped._transform, show(mapped.in_axes), show(mapped.out_axes), tuple(sorted(mapped._options.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _passed_in(arg: Any, spec: Any, head: str) -> dict[int, Passed]:
    """The leaves of one argument the user passed, by identity: a module's variables by
    state path, with the axis its in_axes entry (an int, None or `StateAxes`) gives them."""
    found: dict[int, Passed] = {}
    if nnx.graph.is_graph_node(arg):
        filters = tuple(spec._filters) if isinstance(spec, nnx.StateAxes) else (...,)
        axes = tuple(spec._axes) if isinstance(spec, nnx.StateAxes) else (spec,)
        predicates = [nnx.filterlib.to_predicate(f) for f in filters]
        for path, value in nnx.graph.iter_graph(arg):
            if not isinstance(value, nnx.Variable):
                continue
            axis = next((a for a, p in zip(axes, predicates, strict=True) if p(path, value)), None)
            where = place(head, tuple(path))
            entry = f"in_axes entry {show(spec)}" + (
                f", which gives it {axis!r}" if isinstance(spec, nnx.StateAxes) else ""
            )
            found[id(value.get_value())] = Passed(where, entry, isinstance(value, nnx.RngState))
        return found
    for path, leaf in jax.tree_util.tree_flatten_with_path(arg)[0]:
        found[id(leaf)] = Passed(head + jax.tree_util.keystr(path), f"in_axes {show(spec)}")
    return found


@overload
def vmap(
    f: None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    **options: Any,
) -> Callable[[Callable[P, R]], _Mapped[P, R]]: ...
@overload
def vmap(
    f: Callable[P, R],
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    **options: Any,
) -> _Mapped[P, R]: ...
def vmap(
    f: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    **options: Any,
) -> Any:
    """`flax.nnx.vmap`, with its parameters, checked and explained.

    ```python
    >>> import axischeck.nnx as axnnx
    >>> from flax import nnx
    >>> model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    >>> apply = axnnx.vmap(lambda m, x: m(x), in_axes=(None, 0))
    >>> apply(model, jnp.ones((5, 3))).shape
    (5, 2)
    >>> try:
    ...     apply(model, jnp.ones((5, 4)))
    ... except ax.AxisCheckError as err:
    ...     print(err.disagreement())
    the contracted dimension is axis 1 of x (size 4) [per-example axis 0 of (4,)] but axis 0 of m['kernel'] (size 3).
    ```
    """
    given = {"in_axes": in_axes, "out_axes": out_axes, "axis_name": axis_name, "axis_size": axis_size}
    return _make("vmap", f, {**given, **options})


@overload
def pmap(
    f: None = None,
    *,
    axis_name: Hashable | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    **options: Any,
) -> Callable[[Callable[P, R]], _Mapped[P, R]]: ...
@overload
def pmap(
    f: Callable[P, R],
    *,
    axis_name: Hashable | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    **options: Any,
) -> _Mapped[P, R]: ...
def pmap(
    f: Any = None,
    *,
    axis_name: Hashable | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    **options: Any,
) -> Any:
    """`flax.nnx.pmap`, with its parameters, checked and explained.

    ```python
    >>> import axischeck.nnx as axnnx
    >>> n = jax.local_device_count()
    >>> total = axnnx.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    >>> total.predict(jnp.ones((n, 3))).shapes == (n, 3)
    True
    ```
    """
    given = {"in_axes": in_axes, "out_axes": out_axes, "axis_name": axis_name, "axis_size": axis_size}
    return _make("pmap", f, {**given, **options})


def _make(transform: str, f: Any, options: dict[str, Any]) -> Any:
    if checks_off():  # AXISCHECK_DISABLE=1 or `checks_disabled()`: Flax's own
        return unchecked(_LIBRARY[transform], f, **options)
    defaults = inspect.signature(_LIBRARY[transform]).parameters
    refused = unknown_option(transform, options, frozenset(defaults))
    if refused is not None:
        raise refused
    if f is None or f is getattr(defaults.get("f"), "default", None):
        return functools.partial(_make, transform, options=options)
    options = dict(options)
    in_axes = options.pop("in_axes", defaults["in_axes"].default)
    out_axes = options.pop("out_axes", defaults["out_axes"].default)
    return _Mapped(f, transform, in_axes, out_axes, options)
