"""The arguments of an `axischeck.nnx` call read as Flax NNX reads them: modules as their
state, one axis per array.

`Resolved` turns the call's arguments into plain pytrees of arrays (a module as the nested
dict of its state, split by its `nnx.StateAxes` filters) with one in_axes entry per array,
which `axischeck.vmap`/`pmap` check, and rebuilds the modules from them per example;
`pure_output` does the same for what the function returns. The helpers name what they read
in NNX's terms: a variable by its argument and state path (`model['linear']['kernel']`),
in_axes as the user writes them (`StateAxes({Param: 0, ...: None})`). Flax is imported
here, and this module only by `axischeck.nnx`.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import jax

# Imported by name: Flax is an optional dependency, and typed as Any here either way.
nnx: Any = importlib.import_module("flax.nnx")


class Unsupported(Exception):
    """A call `axischeck.nnx` does not model: left to Flax unchecked."""


class Aliased(Exception):
    """A variable passed in and returned with different axes, which Flax refuses
    ("Inconsistent aliasing detected"): found while tracing the function."""

    def __init__(self, where: str, index: int, axis_in: Any, axis_out: Any) -> None:
        super().__init__(where, index, axis_in, axis_out)
        self.where, self.index, self.axis_in, self.axis_out = where, index, axis_in, axis_out  # index: its argument
        self.output: tuple[int, int] | None = None  # (which, of how many) where the function returns a tuple


def show(axes: Any, code: bool = False) -> str:
    """in_axes as messages show them (`StateAxes({Param: 0, ...: None})`), or with `code`
    as a user pastes them (`nnx.StateAxes({nnx.Param: 0, ...: None})`)."""
    if isinstance(axes, nnx.StateAxes):
        name = filter_code if code else _filter_name
        parts = ", ".join(f"{name(f)}: {a!r}" for f, a in zip(axes._filters, axes._axes, strict=True))
        return f"{'nnx.' if code else ''}StateAxes({{{parts}}})"
    if isinstance(axes, tuple):
        inner = ", ".join(show(a, code) for a in axes)
        return f"({inner},)" if len(axes) == 1 else f"({inner})"
    return repr(axes)


def _filter_name(f: Any) -> str:
    if f is Ellipsis:
        return "..."
    return getattr(f, "__name__", repr(f))


def filter_code(f: Any) -> str:
    name = _filter_name(f)
    return f"nnx.{name}" if f is not Ellipsis and getattr(nnx, name, None) is f else name


def arg_name(names: list[str], index: int) -> str:
    """How messages name the argument at `index`: its parameter's name, else `args[i]`."""
    return names[index] if index < len(names) else f"args[{index}]"


def place(head: str, path: tuple[Any, ...]) -> str:
    """`model['linear']['kernel']`: a module's variable named by its argument and state path."""
    return head + "".join(f"[{key!r}]" for key in path)


def entries(in_axes: Any, n: int) -> tuple[Any, ...]:
    """in_axes as one entry per argument of `n` (a single entry stands for all)."""
    return tuple(in_axes) if isinstance(in_axes, tuple | list) else (in_axes,) * n


def entry_of(in_axes: Any, index: int) -> Any:
    """The in_axes entry of the argument at `index` (a single entry stands for all)."""
    return in_axes[index] if isinstance(in_axes, tuple | list) else in_axes


_STATE_PATH = re.compile(r"\[('(?:[^'\\]|\\.)*'|\d+)\]")


def state_place(place: str) -> tuple[int, tuple[Any, ...]] | None:
    """`output[0]['bn']['mean']` (a place in the output of `axischeck.nnx`'s
    `_Mapped._checker(..., states=True)`) -> (0, ('bn', 'mean')): the argument's position
    and the variable's state path."""
    if not place.startswith("output["):
        return None
    keys = [ast.literal_eval(k) for k in _STATE_PATH.findall(place[len("output") :])]
    if not keys or not isinstance(keys[0], int):
        return None
    return keys[0], tuple(keys[1:])


def _axis_at(axes: Any, path: tuple[Any, ...]) -> Any:
    """The axis a module's pure axes tree gives the variable at `path`."""
    for key in path:
        if not isinstance(axes, dict):
            break
        axes = axes.get(key)
    return axes


def unmapped_of_kind(module: Any, axes: Any, kind: type) -> list[tuple[Any, Any]]:
    """The module's variables of type `kind` (a subclass: an RNG stream's key and count are
    both `nnx.RngState`) that its pure axes tree leaves unmapped."""
    return [
        (tuple(p), v)
        for p, v in nnx.graph.iter_graph(module)
        if isinstance(v, kind) and _axis_at(axes, tuple(p)) is None
    ]


def kind_of(variable: Any) -> type:
    """The type a StateAxes maps a variable by: its own, or `nnx.RngState` for an RNG
    stream's key and count (mapped one without the other, the stream cannot draw)."""
    return nnx.RngState if isinstance(variable, nnx.RngState) else type(variable)


def _merge(into: dict[Any, Any], more: dict[Any, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


class Resolved:
    """The call's arguments as plain pytrees of arrays (modules as nested dicts of their
    state), one axis per array, and how to rebuild the arguments from them."""

    def __init__(
        self,
        args: tuple[Any, ...],
        in_axes: Any,
        kwargs: dict[str, Any],
        names: list[str],
        static: frozenset[int] = frozenset(),
    ) -> None:
        # Keyword arguments reach here only in Flax's tree mode, which maps them at axis 0 as
        # jax.vmap does; graph mode has bound them to positions (see `as_flax_passes`).
        # `static`: pmap's static_broadcasted_argnums, passed whole (their in_axes ignored).
        if not all(_is_arraylike(x) for x in jax.tree_util.tree_leaves(kwargs)):
            raise Unsupported
        self.kwargs = kwargs
        self.passed, self.names, self.static = args, names, static  # as given: for `with_in_axes`
        specs = in_axes if isinstance(in_axes, tuple | list) else (in_axes,) * len(args)
        if len(specs) != len(args):
            raise Unsupported
        self.rebuilders: list[Callable[[Any], Any]] = []
        self.streams: list[Stream] = []  # the modules' RNG streams' keys and counts, with their axes
        dynamic: list[Any] = []
        axes: list[Any] = []
        handed_back: list[Any] = []  # the axes of each argument's state as Flax hands it back
        for i, (arg, spec) in enumerate(zip(args, specs, strict=True)):
            if i in static:
                self.rebuilders.append(functools.partial(_static, arg))
                dynamic.append(None)
                axes.append(None)
                handed_back.append(None)
            elif nnx.graph.is_graph_node(arg):
                self.streams += _streams_of(arg, spec, arg_name(names, i))
                filters, filter_axes = (
                    (tuple(spec._filters), tuple(spec._axes)) if isinstance(spec, nnx.StateAxes) else ((...,), (spec,))
                )
                graphdef, *states = nnx.split(arg, *filters)
                pure: dict[Any, Any] = {}
                pure_axes: dict[Any, Any] = {}
                for state, axis in zip(states, filter_axes, strict=True):
                    plain = nnx.to_pure_dict(state)
                    _merge(pure, plain)
                    _merge(pure_axes, jax.tree_util.tree_map(lambda _, a=axis: a, plain))
                if not all(hasattr(x, "shape") for x in jax.tree_util.tree_leaves(pure)):
                    raise Unsupported
                _, whole = nnx.split(arg)
                self.rebuilders.append(functools.partial(_rebuild_node, graphdef, whole))
                dynamic.append(pure)
                axes.append(pure_axes)
                handed_back.append(pure_axes if isinstance(spec, nnx.StateAxes) else spec)
            else:
                if isinstance(spec, nnx.StateAxes) or not all(_is_arraylike(x) for x in jax.tree_util.tree_leaves(arg)):
                    raise Unsupported
                self.rebuilders.append(lambda x: x)
                dynamic.append(arg)
                axes.append(spec)
                handed_back.append(spec)
        self.dynamic = tuple(dynamic)
        self.axes = tuple(axes)
        # A module's int or None entry is a prefix of its whole state, variables the function
        # creates included; a StateAxes gives its variables their axes one filter at a time.
        self.handed_back = tuple(handed_back)

    def with_in_axes(self, in_axes: Any) -> Resolved:
        """The same call resolved against other in_axes (a candidate fix's)."""
        return Resolved(self.passed, in_axes, self.kwargs, self.names, self.static)

    def rebuild(self, dynamic: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(make(d) for make, d in zip(self.rebuilders, dynamic, strict=True))

    def mapped_sizes(self, skip: set[int]) -> set[int]:
        """The sizes the mapped leaves (but those in `skip`, by identity) have at their axes."""
        sizes: set[int] = set()
        treedef: Any
        axis_leaves, treedef = jax.tree_util.tree_flatten(self.axes, is_leaf=lambda a: a is None)
        pairs = list(zip(axis_leaves, treedef.flatten_up_to(self.dynamic), strict=True))
        pairs += [(0, leaf) for leaf in jax.tree_util.tree_leaves(self.kwargs)]
        for axis, sub in pairs:
            for leaf in jax.tree_util.tree_leaves(sub) if isinstance(axis, int) else ():
                shape = getattr(leaf, "shape", ())
                if id(leaf) not in skip and -len(shape) <= axis < len(shape):
                    sizes.add(shape[axis])
        return sizes

    def with_streams_split(self, streams: list[Stream], n: int) -> tuple[Any, ...]:
        """The dynamic arguments with the streams' keys and counts as `nnx.split_rngs(splits=n)`
        leaves them: of size `n` along their axis (abstract values, for a prediction)."""
        values = {id(s.value): s for s in streams}

        def split(leaf: Any) -> Any:
            stream = values.get(id(leaf))
            if stream is None:
                return leaf
            shape = tuple(leaf.shape)
            axis = stream.axis or 0
            base = shape if stream.split_into() is None else shape[:axis] + shape[axis + 1 :]
            return jax.ShapeDtypeStruct(base[:axis] + (n,) + base[axis:], leaf.dtype)  # type: ignore[no-untyped-call]

        return tuple(jax.tree_util.tree_map(split, self.dynamic))

    def sizes_agree(self, axis_size: int | None) -> bool:
        sizes = set() if axis_size is None else {axis_size}
        treedef: Any
        axis_leaves, treedef = jax.tree_util.tree_flatten(self.axes, is_leaf=lambda a: a is None)
        pairs = list(zip(axis_leaves, treedef.flatten_up_to(self.dynamic), strict=True))
        pairs += [(0, leaf) for leaf in jax.tree_util.tree_leaves(self.kwargs)]
        for axis, sub in pairs:
            if axis is None:
                continue
            for leaf in jax.tree_util.tree_leaves(sub):
                ndim = len(getattr(leaf, "shape", ()))
                if not isinstance(axis, int) or not -ndim <= axis < ndim:
                    return False
                sizes.add(leaf.shape[axis])
        return len(sizes) <= 1


def parameter_names(fun: Callable[..., Any]) -> list[str]:
    try:
        return list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return []


class Stream:
    """One RNG stream variable (its key or its count) of a module passed to the map: where
    it is, its tag, the axis in_axes gives it, and its value."""

    def __init__(self, where: str, tag: str, spec: Any, axis: Any, value: Any) -> None:
        self.where, self.tag, self.spec, self.axis, self.value = where, tag, spec, axis, value

    def split_into(self) -> int | None:
        """How many keys it holds along its axis (None: not split, no such axis)."""
        shape = tuple(getattr(self.value, "shape", ()))
        axis = self.axis if isinstance(self.axis, int) else 0
        return shape[axis] if -len(shape) <= axis < len(shape) else None


def _streams_of(node: Any, spec: Any, head: str) -> list[Stream]:
    """The RNG stream variables of a module, each with the axis its in_axes entry gives it."""
    filters = tuple(spec._filters) if isinstance(spec, nnx.StateAxes) else (...,)
    axes = tuple(spec._axes) if isinstance(spec, nnx.StateAxes) else (spec,)
    predicates = [nnx.filterlib.to_predicate(f) for f in filters]
    found = []
    for path, value in nnx.graph.iter_graph(node):
        if isinstance(value, nnx.RngState):
            axis = next((a for a, p in zip(axes, predicates, strict=True) if p(path, value)), None)
            tag = getattr(value, "tag", None) or (str(path[-2]) if len(path) > 1 else "?")
            where = place(head, tuple(path))
            found.append(Stream(where, str(tag), spec, axis, value.get_value()))
    return found


def _is_arraylike(x: Any) -> bool:
    # A Python scalar is a rank-0 array to jax.vmap (mapped at an axis, it fails as one).
    return hasattr(x, "shape") or isinstance(x, bool | int | float | complex)


def _static(value: Any, _dynamic: None) -> Any:
    """A static argument, as it was given (it has no dynamic part to rebuild it from)."""
    return value


def _rebuild_node(graphdef: Any, whole: Any, pure: Any) -> Any:
    state = jax.tree_util.tree_map(lambda x: x, whole)
    nnx.replace_by_pure_dict(state, pure)
    return nnx.merge(graphdef, state)


def as_written(entry: Any, before: Any, spec: Any) -> Any:
    """One argument's in_axes entry of a fix as nnx.vmap takes it: the user's own entry
    where the fix leaves it unchanged; one int or None where the fix gives a module's whole
    state one axis (the engine writes a module's state as a dict of its arrays' axes)."""
    if entry == before:
        return spec
    leaves = set(jax.tree_util.tree_leaves(entry, is_leaf=lambda a: a is None))
    return next(iter(leaves)) if isinstance(entry, dict) and len(leaves) == 1 else entry


def _is_axes_leaf(a: Any) -> bool:
    return a is None or isinstance(a, nnx.StateAxes)


def pure_out_axes(out_axes: Any) -> Any:
    """`out_axes` over `pure_output`: a `StateAxes` becomes the tuple of its axes, one per
    filter, a prefix of the tuple of substates the module is split into."""
    return jax.tree_util.tree_map(
        lambda a: tuple(a._axes) if isinstance(a, nnx.StateAxes) else a, out_axes, is_leaf=_is_axes_leaf
    )


Passing = tuple[str, int, Any]  # where a variable passed in is, its argument's position, and its in_axes axis


def variable_axes(args: tuple[Any, ...], axes: tuple[Any, ...], names: list[str]) -> dict[int, Passing]:
    """Each variable of the modules passed in (by identity): where it is, its argument's
    position, and its in_axes axis."""
    found: dict[int, Passing] = {}
    for index, (arg, axis_tree) in enumerate(zip(args, axes, strict=True)):
        if not nnx.graph.is_graph_node(arg):
            continue
        head = arg_name(names, index)
        for path, value in nnx.graph.iter_graph(arg):
            if isinstance(value, nnx.Variable):
                axis = axis_tree
                for key in path:
                    axis = axis[key] if isinstance(axis, dict) else axis
                found[id(value)] = (place(head, tuple(path)), index, axis)
    return found


def _check_aliases(node: Any, axes: Any, inputs: dict[int, Passing]) -> None:
    """Flax gives a variable returned from the function the axis it had coming in, and
    raises when out_axes gives it another (`Inconsistent aliasing detected`)."""
    filters = tuple(axes._filters) if isinstance(axes, nnx.StateAxes) else (...,)
    chosen = tuple(axes._axes) if isinstance(axes, nnx.StateAxes) else (axes,)
    predicates = [nnx.filterlib.to_predicate(f) for f in filters]
    for path, value in nnx.graph.iter_graph(node):
        if not isinstance(value, nnx.Variable) or id(value) not in inputs:
            continue
        where, index, axis_in = inputs[id(value)]
        axis_out = next((a for a, p in zip(chosen, predicates, strict=True) if p(path, value)), None)
        if axis_out != axis_in:
            raise Aliased(where, index, axis_in, axis_out)


def pure_output(out: Any, out_axes: Any, inputs: dict[int, Passing]) -> Any:
    """The function's output as arrays, as Flax maps it: a module under a `StateAxes` as its
    substates split by the filters, any other module as its whole state (one axis for all)."""

    def whole(axes: Any, sub: Any) -> Any:
        def pure(path: Any, n: Any) -> Any:
            if not nnx.graph.is_graph_node(n):
                return n
            try:
                _check_aliases(n, axes, inputs)
            except Aliased as found:
                if type(sub) is tuple and path:
                    found.output = (path[0].idx, len(sub))
                raise
            return nnx.to_pure_dict(nnx.state(n))

        return jax.tree_util.tree_map_with_path(pure, sub, is_leaf=nnx.graph.is_graph_node)

    def one(axes: Any, sub: Any) -> Any:
        if not isinstance(axes, nnx.StateAxes):
            return whole(axes, sub)
        if not nnx.graph.is_graph_node(sub):
            raise Unsupported
        _check_aliases(sub, axes, inputs)
        _, *states = nnx.split(sub, *axes._filters)
        return tuple(nnx.to_pure_dict(state) for state in states)

    try:
        return jax.tree_util.tree_map(one, out_axes, out, is_leaf=_is_axes_leaf)
    except ValueError:  # out_axes not a prefix of the output: Flax's error stands
        raise Unsupported from None


def as_flax_passes(
    fun: Callable[..., Any], mode: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any], tuple[str, ...]]:
    """The arguments Flax's mapped function receives, and the parameters filled by defaults.

    Graph-mode `nnx.vmap` (mode "bind") binds keyword arguments and defaults to positions
    (Flax's `resolve_kwargs`): `f(m, x=x)` is `f(m, x)`, and a parameter with a default is
    an argument even when not passed; a keyword-only parameter or `**kwargs` makes it raise
    TypeError, as does any keyword argument of a `functools.partial`. Graph-mode `nnx.pmap`
    ("positional") refuses keyword arguments; the tree mode ("tree", `graph=False` or
    `graph_updates=False`) passes them to jax.vmap/pmap, which maps them at axis 0."""
    if mode != "bind":
        if kwargs and mode == "positional":
            raise Unsupported
        return args, kwargs, ()
    if isinstance(fun, functools.partial):
        if kwargs:
            raise Unsupported
        return args, {}, ()
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        raise Unsupported from None
    given = set(bound.arguments)
    bound.apply_defaults()
    if bound.kwargs:
        raise Unsupported
    params = inspect.signature(fun).parameters
    filled = tuple(
        name
        for name in bound.arguments
        if name not in given and params[name].kind in (params[name].POSITIONAL_ONLY, params[name].POSITIONAL_OR_KEYWORD)
    )
    return tuple(bound.args), {}, filled
