"""`axischeck.nnx`: Flax NNX's `vmap` and `pmap`, checked and explained.

Same parameters, defaults, results and exceptions as `flax.nnx.vmap` and `flax.nnx.pmap`
(which still do the work). Each call first resolves `in_axes` (ints, None and
`nnx.StateAxes` for modules) against the actual arguments and checks the mapped sizes, so
a mistake is reported with the function's own parameter names and the module's state
paths (`model['linear']['kernel']`) and a checked fix. Each result has `predict` and
`explain` like `axischeck.vmap`'s. Flax is imported only when this module is.

The arguments read as NNX reads them (modules as their state) are `_libs/_nnx_state.py`'s.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, overload

import jax

from ._core._cache import BoundedCache, PerFunction
from ._core._errors import (
    LIBRARY_FAILURES,
    ArgumentError,
    AxisCheckError,
    FunctionError,
    OutputError,
    SpecError,
    replaces,
)
from ._core._html import Explanation
from ._core._prediction import Prediction
from ._core._text import and_list, format_shape
from ._core._trees import seq_repr
from ._draws import Passed, Speaker, speaking
from ._libs._mapped import retitled
from ._libs._nnx_state import (
    Aliased,
    Resolved,
    Stream,
    Unsupported,
    arg_name,
    as_flax_passes,
    as_written,
    filter_code,
    kind_of,
    nnx,
    parameter_names,
    place,
    pure_out_axes,
    pure_output,
    show,
    state_place,
    unmapped_of_kind,
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


def _type_named(written: Any) -> type | None:
    """The Variable type Flax registers under a string (`'params'`: `nnx.Param`), if it is one."""
    if not isinstance(written, str):
        return None
    try:
        kind = nnx.variablelib.variable_type_from_name(written, allow_register=False)
    except Exception:  # noqa: BLE001 - a name Flax does not know
        return None
    return kind if isinstance(kind, type) else None


def _with_entry(entries: tuple[Any, ...], index: int, entry: Any) -> tuple[Any, ...]:
    """in_axes with argument `index`'s entry replaced, as a tuple: Flax takes a StateAxes
    inside a tuple only (a bare one, for a function of one argument too, it refuses)."""
    return (*entries[:index], entry, *entries[index + 1 :])


def _listed(items: list[str]) -> str:
    """The first three of `items` in words, and `...` for the rest."""
    return and_list(items[:3] + (["..."] if len(items) > 3 else []))


def _fit(shape: tuple[int, ...], axis: int, size: int) -> str:
    """How a variable of `shape` can be read under an int entry `axis` of a map of `size`:
    "mapped" (its axis has that size), "whole" (no axis of that size at all: passed whole
    to every example), or "either" (that size on another axis)."""
    if -len(shape) <= axis < len(shape) and shape[axis] == size:
        return "mapped"
    return "whole" if size not in shape else "either"


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
        try:
            resolved = self._resolved(args, kwargs)
            checker = self._checker(resolved)
        except Unsupported:
            mistake = self._defaults_mistake(args, kwargs)
            raise (mistake or self._not_modelled()) from None
        except ValueError as refused:  # Flax's split: StateAxes filters that leave variables out
            uncovered = None if isinstance(refused, AxisCheckError) else self._uncovered(args, kwargs)
            if uncovered is None:
                raise
            raise uncovered from None
        try:
            prediction: Prediction = checker.predict(*resolved.dynamic, **resolved.kwargs)
        except AxisCheckError as err:
            if isinstance(err.__cause__, Unsupported):  # met inside the traced function
                raise self._not_modelled() from None
            if isinstance(err.__cause__, Aliased):
                raise self._aliased(err.__cause__, resolved) from None
            whole = self._whole_per_example(resolved) if isinstance(err, FunctionError) else None
            raise (
                whole
                or self._tag_filter(resolved.passed, resolved.names)
                or self._mapped_by_type(resolved)
                or self._user_terms(retitled(err, self._title()), resolved)
            ) from None
        updated = self._updated_unmapped(resolved)
        if updated is not None:
            raise updated
        return prediction

    def _tag_filter(self, passed: tuple[Any, ...], names: list[str]) -> AxisCheckError | None:
        """A StateAxes filter written as a string that matches no variable of the module it
        is given (a string matches a tag: an RNG stream's name), where Flax names a Variable
        type so (Linen's collection `'params'`, NNX's `nnx.Param`): that type in its place,
        the Fix where the call then checks."""
        specs = self._entries(len(passed))
        for index, (arg, spec) in enumerate(zip(passed, specs, strict=False)):
            if not isinstance(spec, nnx.StateAxes) or not nnx.graph.is_graph_node(arg):
                continue
            filters, axes = list(spec._filters), list(spec._axes)
            variables = [(tuple(p), v) for p, v in nnx.graph.iter_graph(arg) if isinstance(v, nnx.Variable)]
            for k, written in enumerate(filters):
                kind = _type_named(written)
                if kind is None or any(nnx.filterlib.to_predicate(written)(p, v) for p, v in variables):
                    continue
                if not any(isinstance(v, kind) for _, v in variables):
                    continue
                entry = nnx.StateAxes(dict(zip([*filters[:k], kind, *filters[k + 1 :]], axes, strict=True)))
                in_axes = _with_entry(specs, index, entry)
                head = arg_name(names, index)
                typed = [
                    f"{place(head, p)} {format_shape(v.shape)}"
                    for p, v in variables
                    if isinstance(v, kind) and hasattr(v, "shape")
                ]
                return SpecError(
                    f"{head}'s StateAxes filter {written!r} matches none of its variables: a string filter"
                    f" matches a tag (an RNG stream's name), not a Variable type; its {filter_code(kind)}"
                    f" variables ({_listed(typed)}) are of the type Flax names {written!r}",
                    transform=self._title(),
                    fix=f"in_axes={show(in_axes, code=True)}" if self._checks_with(in_axes, passed) else None,
                )
        return None

    def _mapped_by_type(self, resolved: Resolved) -> AxisCheckError | None:
        """A module given one int entry, which maps each of its variables, where some have
        that axis of the batch size and others have no axis of that size at all (a weight
        stacked along axis 1 beside a shared statistic of rank 1): a StateAxes mapping the
        Variable types whose variables all have it and passing the rest whole, the one
        reading the shapes allow, as the fix where the call then checks. A type holding
        variables of both kinds cannot be told apart by its type, and an RNG stream passed
        whole draws the same on every example (the streams' split is the remedy there, see
        `_rng_not_split`): no fix then."""
        specs = self._entries(len(resolved.passed))
        for index, (arg, spec) in enumerate(zip(resolved.passed, specs, strict=False)):
            if type(spec) is not int or not nnx.graph.is_graph_node(arg):
                continue
            sizes = resolved.mapped_sizes({id(leaf) for leaf in jax.tree_util.tree_leaves(resolved.dynamic[index])})
            if len(sizes) != 1:
                continue
            (size,) = sizes
            fits: dict[type, set[str]] = {}  # per Variable type, how its variables can be read (`_fit`)
            for _, v in nnx.graph.iter_graph(arg):
                if isinstance(v, nnx.Variable):
                    fits.setdefault(kind_of(v), set()).add(_fit(tuple(getattr(v, "shape", ())), spec, size))
            mapped_kinds = [kind for kind, each in fits.items() if each == {"mapped"}]
            whole_kinds = [kind for kind, each in fits.items() if each == {"whole"}]
            if not mapped_kinds or not whole_kinds or len(mapped_kinds) + len(whole_kinds) != len(fits):
                continue
            if nnx.RngState in whole_kinds:
                continue
            axes: dict[Any, Any] = {**dict.fromkeys(mapped_kinds, spec), ...: None}
            entry = nnx.StateAxes(axes)
            in_axes = _with_entry(specs, index, entry)
            if not self._checks(resolved.with_in_axes(in_axes)):
                continue
            head = arg_name(resolved.names, index)
            left = [
                f"{place(head, tuple(p))} ({type(v).__name__}, shape {format_shape(v.shape)})"
                for p, v in nnx.graph.iter_graph(arg)
                if isinstance(v, nnx.Variable) and kind_of(v) in whole_kinds and hasattr(v, "shape")
            ]
            return ArgumentError(
                f"{head}'s in_axes entry {spec} maps every variable of {head} at axis {spec}, but"
                f" {_listed(left)} {'have' if len(left) > 1 else 'has'} no axis of the batch size {size}: only a"
                " StateAxes maps some variables and passes others whole",
                transform=self._title(),
                fix=f"in_axes={show(in_axes, code=True)}",
            )
        return None

    def _checks(self, resolved: Resolved, dynamic: tuple[Any, ...] | None = None, **options: Any) -> bool:
        """Whether the call checks, resolved against a candidate's in_axes, with `options`
        for `_checker` (another axis_size or out_axes) and `dynamic` for arguments the
        candidate changes (the streams' keys split)."""
        try:
            self._checker(resolved, **options).predict(
                *(resolved.dynamic if dynamic is None else dynamic), **resolved.kwargs
            )
        except AxisCheckError:
            return False
        return True

    def _aliased(self, found: Aliased, resolved: Resolved) -> SpecError:
        per_output = self._kept_returned(found, resolved)
        return SpecError(
            f"{found.where} is returned by the function as it was passed in, and Flax keeps a"
            f" variable's mapped axis between in_axes and out_axes: in_axes gives it {found.axis_in!r},"
            f" out_axes {found.axis_out!r}",
            transform=self._title(),
            fix=None if per_output is None else f"out_axes={show(per_output, code=True)}",
            hint=None if per_output else f"out_axes giving {found.where} the axis {found.axis_in!r}, as in_axes does",
        )

    def _kept_returned(self, found: Aliased, resolved: Resolved) -> tuple[Any, ...] | None:
        """One out_axes entry per output where a single int gave a module handed back another
        axis than in_axes gives it (a scalar prediction laid out at 1 beside the module): the
        int kept for the other outputs, and each module handed back given its in_axes axis,
        where the call then checks."""
        if isinstance(self.out_axes, tuple):
            return self._entry_kept(found, resolved)
        per_output: list[Any] | None = None
        while found.output is not None and type(self.out_axes) is int:
            which, count = found.output
            per_output = per_output or [self.out_axes] * count
            if per_output[which] != self.out_axes or len(per_output) != count:
                return None  # that output was given its axis already
            per_output[which] = found.axis_in
            try:
                self._checker(resolved, out_axes=tuple(per_output)).predict(*resolved.dynamic, **resolved.kwargs)
            except AxisCheckError as err:
                if not isinstance(err.__cause__, Aliased):
                    return None
                found = err.__cause__
                continue
            return tuple(per_output)
        return None

    def _entry_kept(self, found: Aliased, resolved: Resolved) -> tuple[Any, ...] | None:
        """A tuple out_axes whose entry for a module handed back differs from the module's
        in_axes entry (None for a model whose RNG streams `StateAxes` maps): that output given
        the module's in_axes entry as written, the one Flax takes, where the call then checks
        (each other entry tried in turn: which output holds the module is the check's to say)."""
        spec = self._spec_of(found.index)
        for j, entry in enumerate(self.out_axes):
            if entry is spec:
                continue
            candidate = _with_entry(self.out_axes, j, spec)
            try:
                self._checker(resolved, out_axes=candidate).predict(*resolved.dynamic, **resolved.kwargs)
            except AxisCheckError:
                continue
            return candidate
        return None

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
        specs = self._entries(len(resolved.axes))
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

    def _uncovered(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """A module whose `StateAxes` filters match none of some of its variables (Flax: "No
        axis found for path"): those variables named, with `...: None` added (the rest passed
        whole to every example) as the fix where the call then checks and none of them could
        be meant mapped instead: none has an axis of the batch size (read from the other
        arguments and the variables the filters map), and none is an RNG stream (passed
        whole, it draws the same on every example). Else that change is a hint. A string
        filter Flax reads as a tag is said as that first (`_tag_filter`)."""
        try:
            passed, _, _ = as_flax_passes(self.__wrapped__, self._mode, args, kwargs)
        except Unsupported:
            return None
        if isinstance(self.in_axes, tuple | list) and len(self.in_axes) != len(passed):
            return None  # in_axes that do not fit the arguments: Flax's own refusal
        names = parameter_names(self.__wrapped__)
        tagged = self._tag_filter(passed, names)
        if tagged is not None:
            return tagged
        specs = self._entries(len(passed))
        for index, (arg, spec) in enumerate(zip(passed, specs, strict=True)):
            if not isinstance(spec, nnx.StateAxes) or not nnx.graph.is_graph_node(arg):
                continue
            filters = list(spec._filters)
            if Ellipsis in filters:
                continue
            predicates = [nnx.filterlib.to_predicate(f) for f in filters]
            variables = [(tuple(p), v) for p, v in nnx.graph.iter_graph(arg) if isinstance(v, nnx.Variable)]
            axis_of = {
                id(v): next((a for a, m in zip(spec._axes, predicates, strict=True) if m(p, v)), None)
                for p, v in variables
                if any(m(p, v) for m in predicates)
            }
            left = [(p, v) for p, v in variables if id(v) not in axis_of]
            if not left:
                continue
            entry = nnx.StateAxes({**dict(zip(filters, spec._axes, strict=True)), ...: None})
            in_axes = _with_entry(specs, index, entry)
            head = arg_name(names, index)
            shown = _listed(
                [
                    f"{place(head, p)} ({type(v).__name__}"
                    f"{', shape ' + format_shape(v.shape) if hasattr(v, 'shape') else ''})"
                    for p, v in left
                ]
            )
            own = {
                int(v.shape[a])
                for p, v in variables
                if type(a := axis_of.get(id(v))) is int and -len(getattr(v, "shape", ())) <= a < len(v.shape)
            }
            other = self._mapped_size_of(passed, index)
            sizes = own | ({other} if other is not None else set())
            streams = any(isinstance(v, nnx.RngState) for _, v in left)
            maybe_mapped = (
                len(sizes) != 1 or streams or any(next(iter(sizes)) in tuple(getattr(v, "shape", ())) for _, v in left)
            )
            fix = f"in_axes={show(in_axes, code=True)}"
            them = "them" if len(left) > 1 else "it"
            if maybe_mapped or not self._checks_with(in_axes, passed):
                drawn = " (an RNG stream passed whole draws the same on every example: split it)" if streams else ""
                hint = (
                    f"{fix} passes {them} whole to every {self._unit()}{drawn}, or give {them} an axis in the StateAxes"
                )
                return SpecError(
                    self._uncovered_problem(head, spec, shown, len(left)), transform=self._title(), hint=hint
                )
            return SpecError(self._uncovered_problem(head, spec, shown, len(left)), transform=self._title(), fix=fix)
        return None

    def _uncovered_problem(self, head: str, spec: Any, shown: str, count: int) -> str:
        return (
            f"{head}'s in_axes entry {show(spec)} gives no axis to {shown}: every variable of a module"
            f" needs a filter of its StateAxes, and {'these match' if count > 1 else 'this matches'} none"
        )

    def _checks_with(self, in_axes: Any, passed: tuple[Any, ...]) -> bool:
        """Whether the call checks with other in_axes (a candidate's)."""
        try:
            _Mapped(self.__wrapped__, self._transform, in_axes, self.out_axes, self._options).predict(*passed)
        except AxisCheckError:
            return False
        return True

    def _mapped_size_of(self, passed: tuple[Any, ...], skip: int) -> int | None:
        """The batch size the arguments other than `skip` map with plain int entries, where
        one (before they are resolved: the call's own arguments, not their state)."""
        specs = self._entries(len(passed))
        sizes = {
            int(leaf.shape[axis])
            for i, (arg, axis) in enumerate(zip(passed, specs, strict=False))
            if i != skip and type(axis) is int
            for leaf in jax.tree_util.tree_leaves(arg)
            if hasattr(leaf, "shape") and -len(leaf.shape) <= axis < len(leaf.shape)
        }
        return next(iter(sizes)) if len(sizes) == 1 else None

    def _defaults_mistake(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """Graph-mode `nnx.vmap` calls the function with its defaults as arguments, so an
        in_axes tuple with one entry per argument passed is short by the defaults: say so,
        with in_axes extended by None (each default passed whole), when that call checks."""
        if self._mode != "bind" or not isinstance(self.in_axes, tuple | list):
            return None
        try:
            passed, _, filled = as_flax_passes(self.__wrapped__, "bind", args, kwargs)
        except Unsupported:
            return None
        params = list(inspect.signature(self.__wrapped__).parameters.values())
        if not filled or tuple(p.name for p in params[len(self.in_axes) : len(passed)]) != filled:
            return None
        fixed = (*self.in_axes, *(None,) * len(filled))
        fix = f"in_axes={show(fixed)} (None passes each default whole)" if self._checks_with(fixed, passed) else None
        defaults = ", ".join(f"{p.name}={p.default!r}" for p in params if p.name in filled)
        return SpecError(
            f"in_axes has {len(self.in_axes)} entries but nnx.vmap calls"
            f" {self._fn_name()} with {len(passed)} arguments:"
            f" Flax binds keyword arguments and defaults to positions, so the default"
            f" {defaults} is an argument too",
            transform=self._title(),
            # Checked: the call then passes, and it passes each default whole, as leaving
            # the defaults out of the call means.
            fix=fix,
        )

    def _explained(self, resolved: Resolved | None, lib_err: BaseException | None) -> AxisCheckError | None:
        if resolved is None:
            return None
        rng = self._rng_not_split(resolved)
        if rng is not None:
            return rng if lib_err is None else retitled(rng, self._title(), lib_err)
        try:
            self._checker(resolved).predict(*resolved.dynamic, **resolved.kwargs)
        except AxisCheckError as err:
            if isinstance(err.__cause__, Unsupported):
                return None
            if isinstance(err.__cause__, Aliased):
                aliased = self._aliased(err.__cause__, resolved)
                return aliased if lib_err is None else retitled(aliased, self._title(), lib_err)
            whole = self._whole_per_example(resolved) if isinstance(err, FunctionError) else None
            whole = whole or self._tag_filter(resolved.passed, resolved.names) or self._mapped_by_type(resolved)
            if whole is not None:
                return whole if lib_err is None else retitled(whole, self._title(), lib_err)
            return self._user_terms(retitled(err, self._title(), lib_err), resolved)
        except Exception:  # noqa: BLE001 - anything else: Flax's own report stands
            return None
        updated = self._updated_unmapped(resolved)
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
                mistake = self._uncovered(tuple(args), dict(kwargs)) or self._defaults_mistake(
                    tuple(args), dict(kwargs)
                )
                err = None if mistake is None else retitled(mistake, self._title(), lib_err)
            if err is not None and replaces(err, lib_err):
                raise err from lib_err
            raise
        return out

    def _updated_unmapped(self, resolved: Resolved) -> AxisCheckError | None:
        """In graph mode Flax hands each module's state back as the function left it, at the
        axes it came in with. A variable left unmapped (None) that the function updates from
        mapped data (a BatchNorm's running statistics under `StateAxes({nnx.Param: 0, ...:
        None})`) then differs along the map, and Flax refuses it on the output side ("got
        axis spec None but output was batched"). Said in NNX's terms: the variables by state
        path and type, and the StateAxes that maps that type too, a Fix where the call then
        checks (it maps more, unmapping nothing). None: no such variable, or not graph mode."""
        if self._mode == "tree" or not any(nnx.graph.is_graph_node(a) for a in resolved.passed):
            return None
        try:
            self._checker(resolved, states=True).predict(*resolved.dynamic, **resolved.kwargs)
            return None
        except OutputError as err:
            found = state_place(err.places[0].arg) if err.places else None
        except Exception:  # noqa: BLE001 - a call this model does not read: Flax's own report stands
            return None
        if found is None:
            return None
        index, path = found
        module = resolved.passed[index]
        kind = next(
            (type(v) for p, v in nnx.graph.iter_graph(module) if isinstance(v, nnx.Variable) and path[: len(p)] == p),
            None,  # at the path, or holding it (a sown tuple of values)
        )
        if kind is None:  # a variable the function creates
            return self._created_unmapped(resolved, index, path)
        left = unmapped_of_kind(module, resolved.axes[index], kind)
        fixed = self._mapping_kind(resolved, index, kind, left)
        them = "them" if len(left) > 1 else "it"
        problem = (
            f"{self._left_unmapped(resolved, index, kind, left)}, but {self._fn_name()} updates {them} from what"
            " in_axes maps: Flax hands the module's state back at the axes it came in with, and the updated"
            " values differ along the map"
        )
        if fixed is not None:
            return OutputError(problem, transform=self._title(), fix=f"in_axes={show(fixed, code=True)}")
        kind_code = filter_code(kind)
        head = arg_name(resolved.names, index)
        if self._spec_of(index) is None and issubclass(kind, nnx.BatchStat):
            hint = self._shared_statistics_hint(resolved, head)
        else:
            hint = f"map the {kind_code} variables too: add {kind_code}: their axis to {head}'s StateAxes"
        return OutputError(problem, transform=self._title(), hint=hint)

    def _created_unmapped(self, resolved: Resolved, index: int, path: tuple[Any, ...]) -> AxisCheckError | None:
        """A module given the in_axes entry None in which the function creates a variable
        (at `path`) from what in_axes maps: it differs along the map, and Flax hands the
        module back at the axes it came in with ("got axis spec None but output was
        batched"). Where the module held no variables before (an `__init__` under `nnx.vmap`
        building a stack of layers from split keys, `self` left unmapped), the module mapped
        at axis 0 is the fix where the call then checks, its state handed back included;
        one that holds some (shared weights beside an activation it sows) would get them
        mapped too: the remedy is then said as a hint."""
        specs = self._entries(len(resolved.passed))
        if specs[index] is not None:
            return None
        module = resolved.passed[index]
        head = arg_name(resolved.names, index)
        sizes = sorted(resolved.mapped_sizes(set()))
        along = f"the map of size {sizes[0]}" if len(sizes) == 1 else "the map"
        problem = (
            f"{self._fn_name()} creates {place(head, path)} from what in_axes maps, so it differs along {along},"
            f" but {head} has the in_axes entry None: Flax hands the module's state back at the axes it came in with"
        )
        fixed = _with_entry(specs, index, 0)
        candidate = resolved.with_in_axes(fixed)
        held = any(isinstance(v, nnx.Variable) for _, v in nnx.graph.iter_graph(module))
        if not held and self._checks(candidate) and self._checks(candidate, states=True):
            return OutputError(problem, transform=self._title(), fix=f"in_axes={show(fixed, code=True)}")
        return OutputError(
            problem,
            transform=self._title(),
            hint=f"create it before the map, or give {head} an in_axes entry that maps it (a StateAxes whose filter"
            " for its type gives the axis 0)",
        )

    def _shared_statistics_hint(self, resolved: Resolved, head: str) -> str:
        """One module for every example (in_axes None) whose batch statistics the function
        updates: Flax averages them over the map where the module's normalization layer and
        the transform share an axis name (mapping them would make a copy per example)."""
        n = self._mapped_size(resolved)
        examples = f"the {n} examples" if n is not None else "the examples"
        name = self._options.get("axis_name") or "batch"
        return (
            f"{head} is one module for every example: to update its statistics from the whole batch, give"
            f" nnx.vmap axis_name={name!r} and its normalization layer the same one"
            f" (nnx.BatchNorm(..., axis_name={name!r})), which averages them over {examples}; or call"
            f" {head}.eval() where they must not change"
        )

    def _whole_per_example(self, resolved: Resolved) -> AxisCheckError | None:
        """The function fails per example, and a module's variables of one type are left
        unmapped although they have the mapped size (an ensemble's batch statistics under
        `StateAxes({nnx.Param: 0, ...: None})`, each example given every member's): said in
        NNX's terms where mapping that type, as the entry's other filters map, makes the
        call check. None where no such type does, and for a node of RNG streams alone (an
        `Rngs` split but given None: its in_axes entry 0 is the simpler fix, which the
        search finds)."""
        for index, module in enumerate(resolved.passed):
            if not nnx.graph.is_graph_node(module):
                continue
            kinds = {kind_of(v) for p, v in nnx.graph.iter_graph(module) if isinstance(v, nnx.Variable)}
            if kinds == {nnx.RngState}:
                continue
            for kind in sorted(kinds, key=lambda k: k.__name__):
                left = unmapped_of_kind(module, resolved.axes[index], kind)
                fixed = self._mapping_kind(resolved, index, kind, left) if left else None
                if fixed is None:
                    continue
                them = "them" if len(left) > 1 else "it"
                problem = (
                    f"{self._left_unmapped(resolved, index, kind, left)}, so every {self._unit()} gets {them} whole,"
                    f" along the mapped axis too, and {self._fn_name()} fails on {them}"
                )
                return ArgumentError(problem, transform=self._title(), fix=f"in_axes={show(fixed, code=True)}")
        return None

    def _mapped_size(self, resolved: Resolved) -> int | None:
        """The map's size: axis_size, else the one size the mapped arguments agree on."""
        size = self._options.get("axis_size")
        if isinstance(size, int):
            return size
        sizes = resolved.mapped_sizes(skip=set())
        return next(iter(sizes)) if len(sizes) == 1 else None

    def _unit(self) -> str:
        """What the map gives each slice to: an `example` (vmap) or a `device` (pmap)."""
        return "device" if self._transform == "pmap" else "example"

    def _fn_name(self) -> str:
        return getattr(self.__wrapped__, "__name__", "the function")

    def _left_unmapped(self, resolved: Resolved, index: int, kind: type, left: list[tuple[Any, Any]]) -> str:
        """`model['bn']['mean'] and model['bn']['var'] (nnx.BatchStat, shape (2, 4), passed
        whole to every example) are left unmapped by model's in_axes entry StateAxes(...)`."""
        head = arg_name(resolved.names, index)
        shown = " and ".join(place(head, tuple(p)) for p, _ in left)
        shapes = list(dict.fromkeys(tuple(v.shape) for _, v in left if hasattr(v, "shape")))  # in the names' order
        noun = "shapes" if len(shapes) > 1 else "shape"
        return (
            f"{shown} ({filter_code(kind)}, {noun} {', '.join(str(s) for s in shapes)}, passed whole to every"
            f" {self._unit()}) {'are' if len(left) > 1 else 'is'} left unmapped by {head}'s in_axes entry"
            f" {show(self._spec_of(index))}"
        )

    def _spec_of(self, index: int) -> Any:
        return self.in_axes[index] if isinstance(self.in_axes, tuple | list) else self.in_axes

    def _entries(self, n: int) -> tuple[Any, ...]:
        """in_axes as one entry per argument of `n` (a single entry stands for all)."""
        return tuple(self.in_axes) if isinstance(self.in_axes, tuple | list) else (self.in_axes,) * n

    def _mapping_kind(
        self, resolved: Resolved, index: int, kind: type, left: list[tuple[Any, Any]]
    ) -> tuple[Any, ...] | None:
        """in_axes with argument `index`'s entry a StateAxes that maps `kind` at the axis of
        the mapped size (the one the entry's other filters use, where it fits), before the
        filter that caught it (that axis alone for a module given one entry whose variables
        are all of `kind`: stacked weights); returned where the call then checks, the
        states included."""
        n = self._mapped_size(resolved)
        shapes = [tuple(v.shape) for _, v in left if hasattr(v, "shape")]
        spec = self._spec_of(index)
        filters, chosen = (
            (list(spec._filters), list(spec._axes)) if isinstance(spec, nnx.StateAxes) else ([...], [spec])
        )
        tried = [a for a in chosen if isinstance(a, int)] + [0]
        axis = next(
            (a for a in tried if n is not None and all(-len(s) <= a < len(s) and s[a] == n for s in shapes)), None
        )
        if axis is None:
            return None
        at = next((i for i, f in enumerate(filters) if f is Ellipsis), len(filters))
        kinds = {kind_of(v) for _, v in nnx.graph.iter_graph(resolved.passed[index]) if isinstance(v, nnx.Variable)}
        entry: Any = (
            axis
            if kinds == {kind} and not isinstance(spec, nnx.StateAxes)
            else nnx.StateAxes(
                dict(zip([*filters[:at], kind, *filters[at:]], [*chosen[:at], axis, *chosen[at:]], strict=True))
            )
        )
        specs = list(self.in_axes) if isinstance(self.in_axes, tuple | list) else [self.in_axes] * len(resolved.passed)
        specs[index] = entry
        fixed = tuple(specs)
        try:
            again = resolved.with_in_axes(fixed)
            self._checker(again).predict(*again.dynamic, **again.kwargs)
            self._checker(again, states=True).predict(*again.dynamic, **again.kwargs)
        except Exception:  # noqa: BLE001 - the call fails otherwise too: no fix
            return None
        return fixed

    def _rng_not_split(self, resolved: Resolved) -> AxisCheckError | None:
        """An RNG stream mapped (`StateAxes({nnx.RngState: 0, ...})`) whose keys do not
        have the mapped size along that axis: not split at all, or split into another
        number (`nnx.split_rngs(splits=k)`) than the map's size. Said in NNX's terms, with
        the split that makes the call check (asked of the engine with the streams' keys of
        the mapped size), never as None in in_axes for RNG state (that shares the draws).
        Streams that are all the map has, split alike, set its size (Flax's constructor:
        `@nnx.split_rngs(splits=n)` over `nnx.vmap(in_axes=(0,))`): nothing to say here."""
        streams = [s for s in resolved.streams if s.axis is not None]
        if not streams:
            return None
        size = self._options.get("axis_size")
        sizes = {size} if isinstance(size, int) else resolved.mapped_sizes(skip={id(s.value) for s in streams})
        if len(sizes) > 1:
            return None  # the other arguments disagree among themselves: the map's own error
        n = next(iter(sizes), None)
        made = sorted({k for s in streams if (k := s.split_into()) is not None})
        if n is None and len(made) == 1 and all(s.split_into() is not None for s in streams):
            return None  # only the streams are mapped, all split alike: their split is the map's size
        wrong = [s for s in streams if s.split_into() is None or s.split_into() != n]
        if not wrong:
            return None
        first = min(wrong, key=lambda s: not s.where.endswith("['key']"))  # a stream's key before its count
        split = first.split_into()
        shape = tuple(getattr(first.value, "shape", ()))
        unsplit = f"was not split (its {first.where} has shape {shape}, with no axis {first.axis} to map)"
        how = unsplit if split is None else f"was split into {split}"
        head = f"the RNG stream {first.tag!r} ({first.where}) is mapped at axis {first.axis} by its in_axes entry"
        if n is None:  # only RNG state is mapped: the split's size is the user's to say
            kept = self._split_streams_alone(resolved, streams) if len(made) == 1 else None
            if kept is not None:
                tags = kept[1]
                others = f"the streams {and_list([repr(t) for t in tags])} were" if len(tags) > 1 else "the stream"
                others = others if len(tags) > 1 else f"{others} {tags[0]!r} was"
                return ArgumentError(
                    f"{head} {show(first.spec)}, but it {how}, while {others} split into {made[0]}: an int entry"
                    " maps every stream, also those the split left whole",
                    transform=self._title(),
                    fix=kept[0],
                )
            return ArgumentError(
                f"{head} {show(first.spec)}, but it {how}, and nothing else mapped (no other argument, no"
                " axis_size) says how many examples it is to be split into",
                transform=self._title(),
                notes=(
                    "Split the streams, one per example: decorate the function with @nnx.split_rngs(splits=n),"
                    " n the number of examples (and give nnx.vmap axis_size=n where nothing else is mapped).",
                ),
            )
        where = f"axis_size={size}" if isinstance(size, int) else "the mapped arguments"
        if made:  # a split is there already: its number changes (a second decorator would split a split)
            decorate = (
                f"split the streams into {n}, so that each of the {n} examples has its own key: the"
                f" @nnx.split_rngs that split them into {' and '.join(map(str, made))} with splits={n}"
            )
        else:
            decorate = (
                f"decorate the function with @nnx.split_rngs(splits={n}) so that each of the {n} examples has its"
                " own key"
            )
        as_split = self._size_of_the_split(resolved, streams, made) if isinstance(size, int) else None
        fix: str | None = None
        if as_split is not None:  # two readings: the streams' split, or axis_size, is stale
            fix = (
                f"axis_size={as_split}, the number every RNG stream was split into. The call fits another reading"
                f" as well: {decorate}; nothing in the call tells them apart: check which one you meant"
            )
        elif self._checks_split(resolved, streams, n):
            fix = decorate
        return ArgumentError(
            f"{head} {show(first.spec)}, but it {how}, and the mapped size is {n} (from {where})",
            transform=self._title(),
            fix=fix,
            notes=() if fix is not None else (f"Split the streams to the mapped size: {decorate}.",),
        )

    def _split_streams_alone(self, resolved: Resolved, streams: list[Stream]) -> tuple[str, list[str]] | None:
        """Where an int entry maps an Rngs whose streams were split only in part (one
        `nnx.split_rngs(splits=n, only=...)` of the streams named), and nothing else is
        mapped: the split streams mapped by their tags and the rest passed whole, the
        reading the `only` states, as the fix where the call then checks; with the tags."""
        tags = sorted({s.tag for s in streams if s.split_into() is not None})
        specs = self._entries(len(resolved.passed))
        held = [
            i
            for i, (arg, spec) in enumerate(zip(resolved.passed, specs, strict=False))
            if type(spec) is int and nnx.graph.is_graph_node(arg) and any(s.spec is spec for s in streams)
        ]
        if not tags or len(held) != 1:
            return None
        (index,) = held
        axes: dict[Any, Any] = {**dict.fromkeys(tags, specs[index]), ...: None}
        entry = nnx.StateAxes(axes)
        in_axes = _with_entry(specs, index, entry)
        if not self._checks(resolved.with_in_axes(in_axes)):
            return None
        return f"in_axes={show(in_axes, code=True)}", tags

    def _checks_split(self, resolved: Resolved, streams: list[Stream], n: int) -> bool:
        """Whether the call checks with the streams' keys split into `n` (asked of the engine)."""
        return self._checks(resolved, resolved.with_streams_split(streams, n))

    def _size_of_the_split(self, resolved: Resolved, streams: list[Stream], made: list[int]) -> int | None:
        """The one number every mapped stream was split into (`made`: the numbers), where
        axis_size alone sets the map's size and the call checks with that size instead
        (Flax's guide: an `@nnx.split_rngs(splits=n_layers)` over an
        `@nnx.vmap(axis_size=3)` left from another model): the reading that keeps the keys
        as they were split."""
        if len(made) != 1 or any(s.split_into() is None for s in streams):
            return None
        if resolved.mapped_sizes(skip={id(s.value) for s in streams}):
            return None  # other arguments say the size
        return made[0] if self._checks(resolved, axis_size=made[0]) else None

    def _speaker(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Speaker:
        """How the check of the draws of Flax's `jax.vmap`/`jax.pmap` names what the user
        passed: a module's variables by state path (`model['dropout']['rngs']['key']`) with
        the in_axes entry that maps them, and whether each is an RNG stream's."""

        def passed() -> dict[int, Passed]:
            names = parameter_names(self.__wrapped__)
            specs = self._entries(len(args))
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
