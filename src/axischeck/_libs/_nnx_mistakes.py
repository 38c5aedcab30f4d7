"""The mistakes of an `axischeck.nnx` call explained in Flax NNX's terms.

Where the engine's report would speak of arrays and axes, these say what went wrong with
the modules: a `StateAxes` filter that matches no variable or leaves some out, a variable
returned with other axes than it came in with, a statistic left unmapped that the function
updates, an RNG stream mapped but not split. Each names the variables by state path
(`model['bn']['mean']`) and offers a fix written as the user writes in_axes
(`nnx.StateAxes({nnx.Param: 0, ...: None})`), labelled a fix only where the call checks
with it (asked of the engine), else a hint.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import jax

from .._core._errors import ArgumentError, AxisCheckError, OutputError, SpecError
from .._core._text import and_list, format_shape
from ._nnx_state import (
    Aliased,
    Resolved,
    Stream,
    Unsupported,
    arg_name,
    as_flax_passes,
    entries,
    entry_of,
    filter_code,
    kind_of,
    nnx,
    parameter_names,
    place,
    show,
    state_place,
    unmapped_of_kind,
)


def _type_named(written: Any) -> type | None:
    """The Variable type Flax registers under a string (`'params'`: `nnx.Param`), if it is one."""
    if not isinstance(written, str):
        return None
    try:
        kind = nnx.variablelib.variable_type_from_name(written, allow_register=False)
    except Exception:  # noqa: BLE001 - a name Flax does not know
        return None
    return kind if isinstance(kind, type) else None


def _with_entry(axes: tuple[Any, ...], index: int, entry: Any) -> tuple[Any, ...]:
    """in_axes with argument `index`'s entry replaced, as a tuple: Flax takes a StateAxes
    inside a tuple only (a bare one, for a function of one argument too, it refuses)."""
    return (*axes[:index], entry, *axes[index + 1 :])


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


@dataclasses.dataclass(frozen=True, slots=True)
class Mistakes:
    """The explanations of one `axischeck.nnx` wrapper's calls: what they read of the
    wrapper (its function, transform, in_axes, out_axes, options and Flax's mode: "bind",
    "positional" or "tree"; the title its messages carry), and how a candidate fix is
    checked: `checker` is the wrapper's axischeck transform of the function over a resolved
    call, `checks_with` whether the call checks with other in_axes."""

    fun: Callable[..., Any]
    transform: str
    in_axes: Any
    out_axes: Any
    options: Mapping[str, Any]
    mode: str
    title: str
    checker: Callable[..., Any]
    checks_with: Callable[[Any, tuple[Any, ...]], bool]

    def _checks(self, resolved: Resolved, dynamic: tuple[Any, ...] | None = None, **options: Any) -> bool:
        """Whether the call checks, resolved against a candidate's in_axes, with `options`
        for `checker` (another axis_size or out_axes) and `dynamic` for arguments the
        candidate changes (the streams' keys split)."""
        try:
            self.checker(resolved, **options).predict(
                *(resolved.dynamic if dynamic is None else dynamic), **resolved.kwargs
            )
        except AxisCheckError:
            return False
        return True

    def _mapped_size(self, resolved: Resolved) -> int | None:
        """The map's size: axis_size, else the one size the mapped arguments agree on."""
        size = self.options.get("axis_size")
        if isinstance(size, int):
            return size
        sizes = resolved.mapped_sizes(skip=set())
        return next(iter(sizes)) if len(sizes) == 1 else None

    def _unit(self) -> str:
        """What the map gives each slice to: an `example` (vmap) or a `device` (pmap)."""
        return "device" if self.transform == "pmap" else "example"

    def _fn_name(self) -> str:
        return getattr(self.fun, "__name__", "the function")

    def tag_filter(self, passed: tuple[Any, ...], names: list[str]) -> AxisCheckError | None:
        """A StateAxes filter written as a string that matches no variable of the module it
        is given (a string matches a tag: an RNG stream's name), where Flax names a Variable
        type so (Linen's collection `'params'`, NNX's `nnx.Param`): that type in its place,
        the Fix where the call then checks."""
        specs = entries(self.in_axes, len(passed))
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
                    transform=self.title,
                    fix=f"in_axes={show(in_axes, code=True)}" if self.checks_with(in_axes, passed) else None,
                )
        return None

    def mapped_by_type(self, resolved: Resolved) -> AxisCheckError | None:
        """A module given one int entry, which maps each of its variables, where some have
        that axis of the batch size and others have no axis of that size at all (a weight
        stacked along axis 1 beside a shared statistic of rank 1): a StateAxes mapping the
        Variable types whose variables all have it and passing the rest whole, the one
        reading the shapes allow, as the fix where the call then checks. A type holding
        variables of both kinds cannot be told apart by its type, and an RNG stream passed
        whole draws the same on every example (the streams' split is the remedy there, see
        `rng_not_split`): no fix then."""
        specs = entries(self.in_axes, len(resolved.passed))
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
                transform=self.title,
                fix=f"in_axes={show(in_axes, code=True)}",
            )
        return None

    def aliased(self, found: Aliased, resolved: Resolved) -> SpecError:
        per_output = self._kept_returned(found, resolved)
        return SpecError(
            f"{found.where} is returned by the function as it was passed in, and Flax keeps a"
            f" variable's mapped axis between in_axes and out_axes: in_axes gives it {found.axis_in!r},"
            f" out_axes {found.axis_out!r}",
            transform=self.title,
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
                self.checker(resolved, out_axes=tuple(per_output)).predict(*resolved.dynamic, **resolved.kwargs)
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
        spec = entry_of(self.in_axes, found.index)
        for j, entry in enumerate(self.out_axes):
            if entry is spec:
                continue
            candidate = _with_entry(self.out_axes, j, spec)
            try:
                self.checker(resolved, out_axes=candidate).predict(*resolved.dynamic, **resolved.kwargs)
            except AxisCheckError:
                continue
            return candidate
        return None

    def uncovered(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """A module whose `StateAxes` filters match none of some of its variables (Flax: "No
        axis found for path"): those variables named, with `...: None` added (the rest passed
        whole to every example) as the fix where the call then checks and none of them could
        be meant mapped instead: none has an axis of the batch size (read from the other
        arguments and the variables the filters map), and none is an RNG stream (passed
        whole, it draws the same on every example). Else that change is a hint. A string
        filter Flax reads as a tag is said as that first (`tag_filter`)."""
        try:
            passed, _, _ = as_flax_passes(self.fun, self.mode, args, kwargs)
        except Unsupported:
            return None
        if isinstance(self.in_axes, tuple | list) and len(self.in_axes) != len(passed):
            return None  # in_axes that do not fit the arguments: Flax's own refusal
        names = parameter_names(self.fun)
        tagged = self.tag_filter(passed, names)
        if tagged is not None:
            return tagged
        specs = entries(self.in_axes, len(passed))
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
            if maybe_mapped or not self.checks_with(in_axes, passed):
                drawn = " (an RNG stream passed whole draws the same on every example: split it)" if streams else ""
                hint = (
                    f"{fix} passes {them} whole to every {self._unit()}{drawn}, or give {them} an axis in the StateAxes"
                )
                return SpecError(self._uncovered_problem(head, spec, shown, len(left)), transform=self.title, hint=hint)
            return SpecError(self._uncovered_problem(head, spec, shown, len(left)), transform=self.title, fix=fix)
        return None

    def _uncovered_problem(self, head: str, spec: Any, shown: str, count: int) -> str:
        return (
            f"{head}'s in_axes entry {show(spec)} gives no axis to {shown}: every variable of a module"
            f" needs a filter of its StateAxes, and {'these match' if count > 1 else 'this matches'} none"
        )

    def _mapped_size_of(self, passed: tuple[Any, ...], skip: int) -> int | None:
        """The batch size the arguments other than `skip` map with plain int entries, where
        one (before they are resolved: the call's own arguments, not their state)."""
        specs = entries(self.in_axes, len(passed))
        sizes = {
            int(leaf.shape[axis])
            for i, (arg, axis) in enumerate(zip(passed, specs, strict=False))
            if i != skip and type(axis) is int
            for leaf in jax.tree_util.tree_leaves(arg)
            if hasattr(leaf, "shape") and -len(leaf.shape) <= axis < len(leaf.shape)
        }
        return next(iter(sizes)) if len(sizes) == 1 else None

    def defaults_mistake(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> AxisCheckError | None:
        """Graph-mode `nnx.vmap` calls the function with its defaults as arguments, so an
        in_axes tuple with one entry per argument passed is short by the defaults: say so,
        with in_axes extended by None (each default passed whole), when that call checks."""
        if self.mode != "bind" or not isinstance(self.in_axes, tuple | list):
            return None
        try:
            passed, _, filled = as_flax_passes(self.fun, "bind", args, kwargs)
        except Unsupported:
            return None
        params = list(inspect.signature(self.fun).parameters.values())
        if not filled or tuple(p.name for p in params[len(self.in_axes) : len(passed)]) != filled:
            return None
        fixed = (*self.in_axes, *(None,) * len(filled))
        fix = f"in_axes={show(fixed)} (None passes each default whole)" if self.checks_with(fixed, passed) else None
        defaults = ", ".join(f"{p.name}={p.default!r}" for p in params if p.name in filled)
        return SpecError(
            f"in_axes has {len(self.in_axes)} entries but nnx.vmap calls"
            f" {self._fn_name()} with {len(passed)} arguments:"
            f" Flax binds keyword arguments and defaults to positions, so the default"
            f" {defaults} is an argument too",
            transform=self.title,
            # Checked: the call then passes, and it passes each default whole, as leaving
            # the defaults out of the call means.
            fix=fix,
        )

    def updated_unmapped(self, resolved: Resolved) -> AxisCheckError | None:
        """In graph mode Flax hands each module's state back as the function left it, at the
        axes it came in with. A variable left unmapped (None) that the function updates from
        mapped data (a BatchNorm's running statistics under `StateAxes({nnx.Param: 0, ...:
        None})`) then differs along the map, and Flax refuses it on the output side ("got
        axis spec None but output was batched"). Said in NNX's terms: the variables by state
        path and type, and the StateAxes that maps that type too, a Fix where the call then
        checks (it maps more, unmapping nothing). None: no such variable, or not graph mode."""
        if self.mode == "tree" or not any(nnx.graph.is_graph_node(a) for a in resolved.passed):
            return None
        try:
            self.checker(resolved, states=True).predict(*resolved.dynamic, **resolved.kwargs)
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
            return OutputError(problem, transform=self.title, fix=f"in_axes={show(fixed, code=True)}")
        kind_code = filter_code(kind)
        head = arg_name(resolved.names, index)
        if entry_of(self.in_axes, index) is None and issubclass(kind, nnx.BatchStat):
            hint = self._shared_statistics_hint(resolved, head)
        else:
            hint = f"map the {kind_code} variables too: add {kind_code}: their axis to {head}'s StateAxes"
        return OutputError(problem, transform=self.title, hint=hint)

    def _created_unmapped(self, resolved: Resolved, index: int, path: tuple[Any, ...]) -> AxisCheckError | None:
        """A module given the in_axes entry None in which the function creates a variable
        (at `path`) from what in_axes maps: it differs along the map, and Flax hands the
        module back at the axes it came in with ("got axis spec None but output was
        batched"). Where the module held no variables before (an `__init__` under `nnx.vmap`
        building a stack of layers from split keys, `self` left unmapped), the module mapped
        at axis 0 is the fix where the call then checks, its state handed back included;
        one that holds some (shared weights beside an activation it sows) would get them
        mapped too: the remedy is then said as a hint."""
        specs = entries(self.in_axes, len(resolved.passed))
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
            return OutputError(problem, transform=self.title, fix=f"in_axes={show(fixed, code=True)}")
        return OutputError(
            problem,
            transform=self.title,
            hint=f"create it before the map, or give {head} an in_axes entry that maps it (a StateAxes whose filter"
            " for its type gives the axis 0)",
        )

    def _shared_statistics_hint(self, resolved: Resolved, head: str) -> str:
        """One module for every example (in_axes None) whose batch statistics the function
        updates: Flax averages them over the map where the module's normalization layer and
        the transform share an axis name (mapping them would make a copy per example)."""
        n = self._mapped_size(resolved)
        examples = f"the {n} examples" if n is not None else "the examples"
        name = self.options.get("axis_name") or "batch"
        return (
            f"{head} is one module for every example: to update its statistics from the whole batch, give"
            f" nnx.vmap axis_name={name!r} and its normalization layer the same one"
            f" (nnx.BatchNorm(..., axis_name={name!r})), which averages them over {examples}; or call"
            f" {head}.eval() where they must not change"
        )

    def whole_per_example(self, resolved: Resolved) -> AxisCheckError | None:
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
                return ArgumentError(problem, transform=self.title, fix=f"in_axes={show(fixed, code=True)}")
        return None

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
            f" {show(entry_of(self.in_axes, index))}"
        )

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
        spec = entry_of(self.in_axes, index)
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
            self.checker(again).predict(*again.dynamic, **again.kwargs)
            self.checker(again, states=True).predict(*again.dynamic, **again.kwargs)
        except Exception:  # noqa: BLE001 - the call fails otherwise too: no fix
            return None
        return fixed

    def rng_not_split(self, resolved: Resolved) -> AxisCheckError | None:
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
        size = self.options.get("axis_size")
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
                    transform=self.title,
                    fix=kept[0],
                )
            return ArgumentError(
                f"{head} {show(first.spec)}, but it {how}, and nothing else mapped (no other argument, no"
                " axis_size) says how many examples it is to be split into",
                transform=self.title,
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
            transform=self.title,
            fix=fix,
            notes=() if fix is not None else (f"Split the streams to the mapped size: {decorate}.",),
        )

    def _split_streams_alone(self, resolved: Resolved, streams: list[Stream]) -> tuple[str, list[str]] | None:
        """Where an int entry maps an Rngs whose streams were split only in part (one
        `nnx.split_rngs(splits=n, only=...)` of the streams named), and nothing else is
        mapped: the split streams mapped by their tags and the rest passed whole, the
        reading the `only` states, as the fix where the call then checks; with the tags."""
        tags = sorted({s.tag for s in streams if s.split_into() is not None})
        specs = entries(self.in_axes, len(resolved.passed))
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
