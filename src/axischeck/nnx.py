"""`axischeck.nnx`: Flax NNX's `vmap` and `pmap`, checked and explained.

Same parameters, defaults, results and exceptions as `flax.nnx.vmap` and `flax.nnx.pmap`
(which still do the work). Each call first resolves `in_axes` (ints, None and
`nnx.StateAxes` for modules) against the actual arguments and checks the mapped sizes, so
a mistake is reported with the function's own parameter names and the module's state
paths (`model['linear']['kernel']`) and a checked fix. Each result has `predict` and
`explain` like `axischeck.vmap`'s. Flax is imported only when this module is.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, overload

import jax

from ._core._errors import AxisCheckError, SpecError
from ._core._prediction import Prediction
from ._core._trees import seq_repr
from ._libs._mapped import retitled
from ._pmap import pmap as ax_pmap
from ._vmap import vmap as ax_vmap

__all__ = ["pmap", "vmap"]

# Imported by name: Flax is an optional dependency, and typed as Any here either way.
_nnx: Any = importlib.import_module("flax.nnx")
# Flax's own transforms, taken before `axischeck.patch()` can route the names to these wrappers.
_LIBRARY = {"vmap": _nnx.vmap, "pmap": _nnx.pmap}

P = ParamSpec("P")
R = TypeVar("R")


class _Unsupported(Exception):
    """A call this module does not model: left to Flax unchecked."""


def _show(axes: Any) -> str:
    if isinstance(axes, _nnx.StateAxes):
        parts = ", ".join(f"{_filter_name(f)}: {a!r}" for f, a in zip(axes._filters, axes._axes, strict=True))
        return f"StateAxes({{{parts}}})"
    if isinstance(axes, tuple):
        inner = ", ".join(_show(a) for a in axes)
        return f"({inner},)" if len(axes) == 1 else f"({inner})"
    return repr(axes)


def _filter_name(f: Any) -> str:
    if f is Ellipsis:
        return "..."
    return getattr(f, "__name__", repr(f))


def _merge(into: dict[Any, Any], more: dict[Any, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


class _Resolved:
    """The call's arguments as plain pytrees of arrays (modules as nested dicts of their
    state), one axis per array, and how to rebuild the arguments from them."""

    def __init__(self, args: tuple[Any, ...], in_axes: Any) -> None:
        specs = in_axes if isinstance(in_axes, tuple | list) else (in_axes,) * len(args)
        if len(specs) != len(args):
            raise _Unsupported
        self.rebuilders: list[Callable[[Any], Any]] = []
        dynamic: list[Any] = []
        axes: list[Any] = []
        for arg, spec in zip(args, specs, strict=True):
            if _nnx.graph.is_graph_node(arg):
                filters, filter_axes = (
                    (tuple(spec._filters), tuple(spec._axes)) if isinstance(spec, _nnx.StateAxes) else ((...,), (spec,))
                )
                graphdef, *states = _nnx.split(arg, *filters)
                pure: dict[Any, Any] = {}
                pure_axes: dict[Any, Any] = {}
                for state, axis in zip(states, filter_axes, strict=True):
                    plain = _nnx.to_pure_dict(state)
                    _merge(pure, plain)
                    _merge(pure_axes, jax.tree_util.tree_map(lambda _, a=axis: a, plain))
                if not all(hasattr(x, "shape") for x in jax.tree_util.tree_leaves(pure)):
                    raise _Unsupported
                _, whole = _nnx.split(arg)
                self.rebuilders.append(functools.partial(_rebuild_node, graphdef, whole))
                dynamic.append(pure)
                axes.append(pure_axes)
            else:
                if isinstance(spec, _nnx.StateAxes) or not all(
                    hasattr(x, "shape") for x in jax.tree_util.tree_leaves(arg)
                ):
                    raise _Unsupported
                self.rebuilders.append(lambda x: x)
                dynamic.append(arg)
                axes.append(spec)
        self.dynamic = tuple(dynamic)
        self.axes = tuple(axes)

    def rebuild(self, dynamic: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(make(d) for make, d in zip(self.rebuilders, dynamic, strict=True))

    def sizes_agree(self, axis_size: int | None) -> bool:
        sizes = set() if axis_size is None else {axis_size}
        treedef: Any
        axis_leaves, treedef = jax.tree_util.tree_flatten(self.axes, is_leaf=lambda a: a is None)
        for axis, sub in zip(axis_leaves, treedef.flatten_up_to(self.dynamic), strict=True):
            if axis is None:
                continue
            for leaf in jax.tree_util.tree_leaves(sub):
                ndim = len(leaf.shape)
                if not isinstance(axis, int) or not -ndim <= axis < ndim:
                    return False
                sizes.add(leaf.shape[axis])
        return len(sizes) <= 1


def _rebuild_node(graphdef: Any, whole: Any, pure: Any) -> Any:
    state = jax.tree_util.tree_map(lambda x: x, whole)
    _nnx.replace_by_pure_dict(state, pure)
    return _nnx.merge(graphdef, state)


class _Mapped(Generic[P, R]):
    """A function wrapped by `axischeck.nnx.vmap` / `pmap`."""

    def __init__(
        self, fun: Callable[P, R], transform: str, in_axes: Any, out_axes: Any, options: dict[str, Any]
    ) -> None:
        self.__wrapped__ = fun
        self._transform = transform
        self.in_axes = in_axes
        self.out_axes = out_axes
        self._options = options
        self._library = _LIBRARY[transform](fun, in_axes=in_axes, out_axes=out_axes, **options)
        functools.update_wrapper(self, fun)

    def _title(self) -> str:
        name = getattr(self.__wrapped__, "__name__", type(self.__wrapped__).__name__)
        parts = [f"in_axes={_show(self.in_axes)}", f"out_axes={_show(self.out_axes)}"]
        for key in ("axis_name", "axis_size"):
            if self._options.get(key) is not None:
                parts.append(f"{key}={self._options[key]!r}")
        return f"nnx.{self._transform}({name}, {', '.join(parts)})"

    def _checker(self, resolved: _Resolved) -> Any:
        fun: Callable[..., Any] = self.__wrapped__

        def per_example(*dynamic: Any) -> Any:
            out = fun(*resolved.rebuild(dynamic))
            if any(
                _nnx.graph.is_graph_node(x) for x in jax.tree_util.tree_leaves(out, is_leaf=_nnx.graph.is_graph_node)
            ):
                raise _Unsupported
            return out

        try:
            per_example.__signature__ = inspect.signature(fun)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            pass
        per_example.__name__ = getattr(fun, "__name__", type(fun).__name__)
        per_example.__qualname__ = per_example.__name__
        if any(
            isinstance(a, _nnx.StateAxes) for a in jax.tree_util.tree_leaves(self.out_axes, is_leaf=lambda a: a is None)
        ):
            raise _Unsupported
        options = {k: self._options[k] for k in ("axis_name", "axis_size") if self._options.get(k) is not None}
        make = ax_vmap if self._transform == "vmap" else ax_pmap
        return make(per_example, in_axes=resolved.axes, out_axes=self.out_axes, **options)

    def predict(self, *args: Any) -> Prediction:
        """The shapes of the call's outputs, from the arguments' shapes (runs no FLOPs).

        Raises `axischeck.AxisCheckError` naming the function's parameters and the
        modules' state paths when the call would fail."""
        try:
            resolved = _Resolved(args, self.in_axes)
            checker = self._checker(resolved)
        except _Unsupported:
            raise self._not_modelled() from None
        try:
            return checker.predict(*resolved.dynamic)  # type: ignore[no-any-return]
        except AxisCheckError as err:
            if isinstance(err.__cause__, _Unsupported):  # met inside the traced function
                raise self._not_modelled() from None
            raise self._user_terms(retitled(err, self._title()), resolved) from None

    def _not_modelled(self) -> SpecError:
        """`predict` of a call Flax runs unchecked (see `_Unsupported`)."""
        return SpecError(
            "axischeck does not model this call (keyword arguments, StateAxes in out_axes, or"
            " modules among the outputs): Flax runs it unchecked, and it cannot be predicted",
            transform=self._title(),
        )

    def explain(self, *args: Any) -> str:
        """The derivation table for the call (also for a passing call)."""
        try:
            return str(self.predict(*args))
        except AxisCheckError as err:
            return str(err)

    def _user_terms(self, err: AxisCheckError, resolved: _Resolved) -> AxisCheckError:
        """The fix with each module's axes written as the user wrote them where they are
        unchanged (`StateAxes(...)`), or as one int/None where the fix gives all its state one."""
        if not err.fix:
            return err
        fix = err.fix
        specs = self.in_axes if isinstance(self.in_axes, tuple | list) else (self.in_axes,) * len(resolved.axes)
        for suggestion in getattr(err, "suggestions", ()):
            axes = dict(getattr(suggestion, "options", ())).get("in_axes")
            if not isinstance(axes, tuple) or len(axes) != len(resolved.axes):
                continue
            shown = []
            for entry, before, spec in zip(axes, resolved.axes, specs, strict=True):
                leaves = set(jax.tree_util.tree_leaves(entry, is_leaf=lambda a: a is None))
                if entry == before:
                    shown.append(_show(spec))
                elif not isinstance(entry, dict) or len(leaves) != 1:
                    shown.append(repr(entry) if not isinstance(entry, dict) else seq_repr((entry,))[1:-2])
                else:
                    shown.append(repr(next(iter(leaves))))
            fix = fix.replace(
                f"in_axes={seq_repr(axes)}", f"in_axes=({', '.join(shown)}{',' if len(shown) == 1 else ''})"
            )
        err.fix = fix
        ValueError.__init__(err, err.render())
        return err

    def _explained(self, resolved: _Resolved | None, lib_err: BaseException | None) -> AxisCheckError | None:
        if resolved is None:
            return None
        try:
            self._checker(resolved).predict(*resolved.dynamic)
        except AxisCheckError as err:
            return self._user_terms(retitled(err, self._title(), lib_err), resolved)
        except Exception:  # noqa: BLE001 - anything else: Flax's own report stands
            return None
        return None

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        resolved: _Resolved | None = None
        if not kwargs:
            try:
                resolved = _Resolved(tuple(args), self.in_axes)
                if not resolved.sizes_agree(self._options.get("axis_size")):
                    err = self._explained(resolved, None)
                    if err is not None:
                        raise err
            except (_Unsupported, ValueError, TypeError, AttributeError) as exc:
                if isinstance(exc, AxisCheckError):
                    raise
                resolved = None
        try:
            out: R = self._library(*args, **kwargs)
        except (ValueError, TypeError, IndexError, NameError) as lib_err:
            if isinstance(lib_err, AxisCheckError):
                raise
            err = self._explained(resolved, lib_err)
            if err is not None:
                raise err from lib_err
            raise
        return out

    def __repr__(self) -> str:
        return f"<axischeck {self._title()}>"


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
    defaults = inspect.signature(_LIBRARY[transform]).parameters
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError(f"{transform}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if f is None or f is getattr(defaults.get("f"), "default", None):
        return functools.partial(_make, transform, options=options)
    options = dict(options)
    in_axes = options.pop("in_axes", defaults["in_axes"].default)
    out_axes = options.pop("out_axes", defaults["out_axes"].default)
    return _Mapped(f, transform, in_axes, out_axes, options)
