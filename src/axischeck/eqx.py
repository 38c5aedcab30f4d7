"""`axischeck.eqx`: Equinox's `filter_vmap` and `filter_pmap`, checked and explained.

Same parameters, defaults, results and exceptions as `equinox.filter_vmap` and
`equinox.filter_pmap` (which still do the work); each call first resolves `in_axes`
(ints, None, `eqx.if_array(k)`, callables, dicts of parameter names) against the actual
arguments and checks the mapped sizes, so a mistake is reported with the function's own
parameter names and pytree paths (`model.weight`, `x`) and a checked fix. Each result has
`predict` and `explain` like `axischeck.vmap`'s. Equinox is imported only when this module is.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any, Generic, ParamSpec, TypeVar, overload

import jax
import numpy as np

from ._call import raised_inside
from ._core._cache import BoundedCache, PerFunction
from ._core._errors import LIBRARY_FAILURES, AxisCheckError, FunctionError, SpecError, replaces, with_jax_error
from ._core._html import Explanation
from ._core._jax_compat import JAX_VMAP
from ._core._prediction import Prediction
from ._core._shape import Shape
from ._core._text import and_list
from ._core._trees import seq_repr
from ._draws import Passed, Speaker, speaking
from ._libs._mapped import NotArray, Resolved, _is_array, arg_path, checker, retitled
from ._libs._routing import route, routing
from ._switch import CHECKS_OFF, checks_disabled, checks_off, unchecked

__all__ = ["filter_pmap", "filter_vmap"]

# Imported by name: Equinox is an optional dependency, and typed as Any here either way.
_eqx: Any = importlib.import_module("equinox")
# Equinox's own transforms, taken before `axischeck.patch()` can route the names to these wrappers.
_LIBRARY = {"vmap": _eqx.filter_vmap, "pmap": _eqx.filter_pmap}

P = ParamSpec("P")
R = TypeVar("R")

_DRAWS_CHECKED: PerFunction[BoundedCache[bool]] = PerFunction()
"""Per function and options: the calls whose random draws were checked (see `_draws`)."""

_DEFAULT = _eqx.if_array(0)


def _resolve_leaf(spec: Any, leaf: Any) -> int | None:
    if spec is None or isinstance(spec, int):
        return spec
    if callable(spec):
        return spec(leaf)  # type: ignore[no-any-return]
    raise ValueError("`in_axes` and `out_axes` must consist of None, ints, and callables only.")


class _UnknownNames(ValueError):
    """A dict in_axes with keys that name none of the parameters the call's arguments fill
    (Equinox's refusal, in its words); `params`: those parameters; `left`: the keys that
    name a parameter the call leaves at its default."""

    def __init__(self, names: tuple[str, ...], params: list[str], left: tuple[str, ...]) -> None:
        super().__init__(f"The following `in_axes` did not correspond to any argument: {names}")
        self.names = names
        self.params = params
        self.left = left


def _named(fun: Callable[..., Any], in_axes: Any, nargs: int) -> Any:
    """A dict of in_axes by parameter name, as Equinox reads it: a tuple over the arguments."""
    if not isinstance(in_axes, dict):
        return in_axes
    remaining = dict(in_axes)
    parameters = inspect.signature(fun).parameters
    every = [n for n, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    params = list(parameters)[:nargs]
    out = tuple(remaining.pop(name, _DEFAULT) for name in params)
    if remaining:
        raise _UnknownNames(tuple(remaining), params, tuple(k for k in remaining if k in every))
    return out


def _show(axes: Any) -> str:
    if isinstance(axes, _eqx.if_array):
        return f"eqx.if_array({axes.axis})"
    if isinstance(axes, tuple):
        inner = ", ".join(_show(a) for a in axes)
        return f"({inner},)" if len(axes) == 1 else f"({inner})"
    if isinstance(axes, list):
        return "[" + ", ".join(_show(a) for a in axes) + "]"
    if isinstance(axes, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in axes.items()) + "}"
    if callable(axes) and not isinstance(axes, type):
        return getattr(axes, "__name__", type(axes).__name__)
    return repr(axes)


def _simple_out_axes(out_axes: Any) -> Any:
    """`out_axes` for axischeck's check of the array outputs (if_array(k) read as k)."""
    return jax.tree_util.tree_map(
        lambda a: a.axis if isinstance(a, _eqx.if_array) else a, out_axes, is_leaf=lambda a: a is None
    )


def _reads_outputs(out_axes: Any) -> bool:
    """Whether `out_axes` holds a callable other than `eqx.if_array(k)`: its axes are known
    only from the function's per-example outputs."""
    leaves = jax.tree_util.tree_leaves(out_axes, is_leaf=lambda a: a is None)
    return any(callable(a) and not isinstance(a, _eqx.if_array) for a in leaves)


def _out_axes_of(out: Any, out_axes: Any) -> Any:
    """Equinox's reading of `out_axes` on one example's output: each entry of the prefix
    applied to every leaf below it (a callable called on the leaf), giving a tree shaped
    like `out` with an int or None per leaf."""

    def resolve(spec: Any, sub: Any) -> Any:
        return jax.tree_util.tree_map(lambda leaf: _checked_axis(_resolve_leaf(spec, leaf), spec, leaf), sub)

    return jax.tree_util.tree_map(resolve, out_axes, out, is_leaf=lambda a: a is None)


def _checked_axis(axis: Any, spec: Any, leaf: Any) -> int | None:
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):  # Equinox moves the axis with `jnp.moveaxis`, which takes these
        return int(axis)
    raise ValueError(f"out_axes entry {_show(spec)} gave {axis!r} for an output leaf of type {type(leaf).__name__}")


def _mapped_outputs(out_axes: Any) -> Callable[[Any], Any]:
    """The per-example outputs Equinox hands to JAX: every leaf `out_axes` maps (a Python
    scalar too, which JAX returns as an array) and every array; a non-array leaf left
    unmapped is returned by Equinox as it is, outside the transform."""

    def outputs(out: Any) -> Any:
        treedef: Any
        leaves, treedef = jax.tree_util.tree_flatten(out)
        axes = treedef.flatten_up_to(_out_axes_of(out, out_axes))
        kept = [leaf if axis is not None or _is_array(leaf) else None for leaf, axis in zip(leaves, axes, strict=True)]
        return jax.tree_util.tree_unflatten(treedef, kept)

    return outputs


class _OutAxesFailed(Exception):
    """A callable in `out_axes` failed (or gave no axis) on the function's output."""


def _entry_in_equinox_terms(entry: Any, before: Any, spec: Any, arg: Any, dynamic: Any) -> Any:
    """One argument's in_axes from a fix, as an Equinox user writes it: the entry they wrote
    where the fix keeps it, `None` where it maps none of the argument's arrays, the int for an
    array, `eqx.if_array(k)` where it maps every array of a pytree at k."""
    if entry == before:
        return spec
    treedef: Any
    leaves, treedef = jax.tree_util.tree_flatten(entry, is_leaf=lambda a: a is None)
    try:
        subtrees = treedef.flatten_up_to(dynamic)
    except (ValueError, TypeError):
        return entry
    axes = {axis for axis, sub in zip(leaves, subtrees, strict=True) if jax.tree_util.tree_leaves(sub)}
    if axes <= {None}:
        return None
    if len(axes) == 1:
        (axis,) = axes
        return axis if _is_array(arg) else _eqx.if_array(axis)
    return entry


class _Filtered(Generic[P, R]):
    """A function wrapped by `axischeck.eqx.filter_vmap` / `filter_pmap`.

    A pytree, as Equinox's own wrapper (a Module) is: its leaves are those of Equinox's
    wrapper, which holds the function (a Module's arrays with it), and of the options. So
    `eqx.filter_jit`, `filter_grad` and `eqx.partition` see the model's arrays in it,
    trace and differentiate them, and keep only the rest static."""

    def __init__(
        self,
        fun: Callable[P, R],
        transform: str,
        in_axes: Any,
        out_axes: Any,
        options: dict[str, Any],
        lib_kwargs: dict[str, Any],
    ) -> None:
        # First, so that wrapping another wrapper (`filter_pmap(filter_vmap(f))`) takes its
        # name and docs but keeps this wrapper's own transform and options.
        functools.update_wrapper(self, fun)
        self.__wrapped__ = fun
        self._transform = transform
        self.in_axes = in_axes
        self.out_axes = out_axes
        self._options = options
        make = _LIBRARY[transform]
        self._library = make(fun, in_axes=in_axes, out_axes=out_axes, **options, **lib_kwargs)

    def _title(self) -> str:
        name = self._fn_name()
        parts = [f"in_axes={_show(self.in_axes)}", f"out_axes={_show(self.out_axes)}"]
        parts += [f"{k}={v!r}" for k, v in self._options.items() if v is not None]
        return f"eqx.filter_{self._transform}({name}, {', '.join(parts)})"

    def _resolved(self, args: tuple[Any, ...]) -> Resolved:
        spec = _named(self.__wrapped__, self.in_axes, len(args))
        if not isinstance(spec, tuple):
            spec = (spec,) * len(args) if not isinstance(spec, (list, dict)) else spec
        return Resolved(args, spec, _resolve_leaf)

    def _equinox_terms(self, err: AxisCheckError, args: tuple[Any, ...], resolved: Resolved) -> AxisCheckError:
        """`err` with the in_axes of its fixes and of the changes that only run written over
        the arguments (`eqx.if_array(0)` for a model), not over their array leaves."""
        spec = _named(self.__wrapped__, self.in_axes, len(args))
        specs = spec if isinstance(spec, tuple) else (spec,) * len(args)
        written = {}  # the in_axes as the engine wrote them -> as an Equinox user writes them
        for suggestion in (*err.suggestions, *getattr(err, "readings", ())):
            axes = dict(getattr(suggestion, "options", ())).get("in_axes")
            if not isinstance(axes, tuple) or len(axes) != len(args) or len(specs) != len(args):
                continue
            written[f"in_axes={seq_repr(axes)}"] = tuple(
                _entry_in_equinox_terms(*parts)
                for parts in zip(axes, resolved.dynamic_axes, specs, args, resolved.dynamic, strict=True)
            )

        def rewritten(text: str) -> str:
            for engine, user in written.items():
                text = text.replace(engine, f"in_axes={_show(user)}")
            return text

        def in_user_terms(s: Any) -> Any:
            """The suggestion with its text and its in_axes both as the user writes them."""
            options = tuple(
                (name, written.get(f"in_axes={seq_repr(value)}", value) if name == "in_axes" else value)
                for name, value in s.options
            )
            return replace(s, text=rewritten(s.text), options=options)

        fix = None if err.fix is None else rewritten(err.fix)
        if err.fix and not resolved.mapped and self._options.get("axis_size") is None:
            fix = self._map_one(args, specs) or fix
        err.fix = fix
        err.notes = tuple(map(rewritten, err.notes))
        err.suggestions = tuple(map(in_user_terms, err.suggestions))
        err.readings = tuple(map(in_user_terms, getattr(err, "readings", ())))
        ValueError.__init__(err, err.render())
        return err

    def _map_one(self, args: tuple[Any, ...], specs: tuple[Any, ...]) -> str | None:
        """With nothing mapped, the checked fix that maps one argument's arrays at axis 0
        (the last arguments first: the batch usually follows the model)."""
        for index in reversed(range(len(args))):
            entry = 0 if _is_array(args[index]) else _eqx.if_array(0)
            candidate = (*specs[:index], entry, *specs[index + 1 :])
            try:
                resolved = Resolved(args, candidate, _resolve_leaf)
                if not resolved.mapped:
                    continue
                self._checker(resolved).predict(*resolved.dynamic)
            except Exception:  # noqa: BLE001, S112 - this candidate does not check: the next
                continue
            where = arg_path(self.__wrapped__, (jax.tree_util.SequenceKey(index),))
            return f"in_axes={_show(candidate)} would map {where}'s arrays at axis 0"
        return None

    def _checker(self, resolved: Resolved) -> Any:
        options = {k: v for k, v in self._options.items() if v is not None}
        outputs = _mapped_outputs(self.out_axes)
        return checker(self.__wrapped__, resolved, self._transform, self._out_axes_for(resolved), options, outputs)

    def _out_axes_for(self, resolved: Resolved) -> Any:
        """`out_axes` as JAX reads them over the outputs `_mapped_outputs` keeps.

        Ints, None and `eqx.if_array(k)` are a prefix of the outputs as they stand. Other
        callables are read as Equinox reads them, on the per-example outputs inside the
        transform (a callable sees one example's leaf, e.g. its `ndim`), so the function is
        traced once under `jax.vmap` for them; where that fails, the function's own failure
        is left to the check, which reports it."""
        if not _reads_outputs(self.out_axes):
            return _simple_out_axes(self.out_axes)
        found: list[Any] = []

        fun: Callable[..., Any] = self.__wrapped__

        def read(*dynamic: Any) -> None:
            out = fun(*resolved.rebuild(dynamic))
            try:
                found.append(_out_axes_of(out, self.out_axes))
            except Exception as err:
                raise _OutAxesFailed(err) from err

        options = {k: v for k, v in self._options.items() if v is not None}
        try:
            jax.eval_shape(JAX_VMAP(read, in_axes=tuple(resolved.dynamic_axes), **options), *resolved.dynamic)
        except _OutAxesFailed as failed:
            cause = failed.__cause__ or failed
            raise SpecError(
                f"out_axes={_show(self.out_axes)} cannot be read on the output: {type(cause).__name__}: {cause}",
                transform=self._title(),
            ) from cause
        except Exception:  # noqa: BLE001 - the function's own failure: the check reports it
            found.clear()
        if found:
            return found[0]
        return jax.tree_util.tree_map(
            lambda a: 0 if callable(a) and not isinstance(a, _eqx.if_array) else _simple_out_axes(a),
            self.out_axes,
            is_leaf=lambda a: a is None,
        )

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """The shapes of the call's array outputs, from the arguments' shapes (runs no FLOPs).

        Raises `axischeck.AxisCheckError` naming the function's parameters and pytree paths
        when the call would fail. Non-array outputs show as None."""
        if kwargs:
            raise TypeError(f"keyword arguments cannot be used with functions wrapped with `filter_{self._transform}`")
        try:
            resolved = self._resolved(args)
        except NotArray as mistake:
            raise self._not_array(mistake, args) from None
        return self._predicted(args, resolved)

    def _not_array(self, mistake: NotArray, args: tuple[Any, ...]) -> AxisCheckError:
        """An int in_axes entry that reaches a leaf that is not an array (a model's
        activation function): in the user's terms, with `eqx.if_array(k)` for that
        argument's entry (arrays at axis k, the rest unmapped: a stacked ensemble) as the
        fix where the call then checks, else None for it (a single model, whose arrays
        have no axis of the batch size) where that checks with something still mapped."""
        err = mistake.error(self.__wrapped__, self._title())
        index = mistake.path[0].idx if mistake.path and isinstance(mistake.path[0], jax.tree_util.SequenceKey) else None
        spec = _named(self.__wrapped__, self.in_axes, len(args))
        specs = spec if isinstance(spec, tuple) else (spec,) * len(args)
        if index is None or len(specs) != len(args) or type(specs[index]) is not int:
            return err
        where = arg_path(self.__wrapped__, (jax.tree_util.SequenceKey(index),))
        readings = (
            (_eqx.if_array(specs[index]), f"maps {where}'s arrays at axis {specs[index]} and passes the rest whole"),
            (None, f"passes {where} whole to every example"),
        )
        for entry, says in readings:
            candidate = (*specs[:index], entry, *specs[index + 1 :])
            if self._checks(args, candidate):
                err.fix = f"in_axes={_show(candidate)} {says}"
                err.fix_head = f"in_axes={_show(candidate)}"
                ValueError.__init__(err, err.render())
                break
        return err

    def _unknown_names(self, mistake: _UnknownNames, args: tuple[Any, ...]) -> AxisCheckError:
        """A dict in_axes whose keys name none of the function's parameters (a parameter
        renamed, the dict not): said with the parameters the function has; where one key
        is unknown and one parameter is named by no key, the dict with that key renamed
        is the fix when the call then checks."""
        given = dict(self.in_axes)
        unnamed = [p for p in mistake.params if p not in given]
        keys = and_list([repr(k) for k in mistake.names])
        if mistake.left:  # a parameter the call does not pass: Equinox maps only what it is given
            left = and_list([repr(k) for k in mistake.left])
            return SpecError(
                f"in_axes names {left}, {'a parameter' if len(mistake.left) == 1 else 'parameters'} of"
                f" {self._fn_name()} this call does not pass (it keeps its default): Equinox reads a dict"
                " in_axes for the arguments passed only",
                transform=self._title(),
                hint="drop the key from in_axes (Equinox's filter_vmap maps only what is passed by position)",
            )
        err = SpecError(
            f"in_axes is a dict, which Equinox matches to {self._fn_name()}'s parameters by name, and {keys}"
            f" {'names' if len(mistake.names) == 1 else 'name'} none of them (its parameters:"
            f" {', '.join(mistake.params)})",
            transform=self._title(),
            hint="key the dict by the parameters' names, or give in_axes as a tuple, one entry per argument",
        )
        if len(mistake.names) == 1 and len(unnamed) == 1:
            renamed = {unnamed[0] if k == mistake.names[0] else k: v for k, v in given.items()}
            if self._checks(args, _named(self.__wrapped__, renamed, len(args))):
                err.fix = f"in_axes={_show(renamed)} (the key {mistake.names[0]!r} renamed {unnamed[0]!r})"
                err.fix_head = f"in_axes={_show(renamed)}"
                ValueError.__init__(err, err.render())
        return err

    def _fn_name(self) -> str:
        return getattr(self.__wrapped__, "__name__", type(self.__wrapped__).__name__)

    def _checks(self, args: tuple[Any, ...], in_axes: tuple[Any, ...]) -> bool:
        """Whether the call checks with these in_axes, something mapped."""
        try:
            resolved = Resolved(args, in_axes, _resolve_leaf)
            if not resolved.mapped:
                return False
            self._checker(resolved).predict(*resolved.dynamic)
        except Exception:  # noqa: BLE001 - the candidate does not check
            return False
        return True

    def _predicted(self, args: tuple[Any, ...], resolved: Resolved, lib_err: BaseException | None = None) -> Prediction:
        """The prediction of a resolved call, or its error in Equinox's terms (with the
        library's exception type kept, where the library raised)."""
        if self._transform == "vmap" and not resolved.mapped and self._options.get("axis_size") is None:
            try:
                return self._called_as_it_is(resolved)
            except AxisCheckError as err:
                spec = _named(self.__wrapped__, self.in_axes, len(args))
                mapped = self._map_one(args, spec if isinstance(spec, tuple) else (spec,) * len(args))
                if mapped is not None:  # the function fails on the whole arrays: mapping one runs
                    err.fix, err.fix_head = mapped, mapped.split(" would ")[0]
                    ValueError.__init__(err, err.render())
                raise (err if lib_err is None else retitled(err, self._title(), lib_err)) from None
        try:
            return self._checker(resolved).predict(*resolved.dynamic)  # type: ignore[no-any-return]
        except AxisCheckError as err:
            raise self._equinox_terms(retitled(err, self._title(), lib_err), args, resolved) from None

    def _called_as_it_is(self, resolved: Resolved) -> Prediction:
        """With nothing mapped and no axis_size, Equinox's filter_vmap calls the function as
        it is, without vmap, and refuses the call only where out_axes maps an output (no
        batch size to give it): predicted so, with that refusal in the user's terms."""
        fun: Callable[..., Any] = self.__wrapped__
        mapped_outputs: list[str] = []

        def as_it_is(*dynamic: Any) -> Any:
            out = fun(*resolved.rebuild(dynamic))
            paths = jax.tree_util.tree_flatten_with_path(out)[0]
            treedef: Any = jax.tree_util.tree_structure(out)
            axes = treedef.flatten_up_to(_out_axes_of(out, self.out_axes))
            mapped_outputs[:] = [
                "output" + jax.tree_util.keystr(path) for (path, _), a in zip(paths, axes, strict=True) if a is not None
            ]
            return jax.tree_util.tree_map(lambda x: x if _is_array(x) else None, out)

        name = getattr(fun, "__name__", type(fun).__name__)
        try:
            out = jax.eval_shape(as_it_is, *resolved.dynamic)
        except Exception as err:
            raise with_jax_error(
                FunctionError(f"{name} fails on the arguments as they are: {type(err).__name__}: {err}"), err
            ) from err
        if mapped_outputs:
            raise SpecError(
                f"nothing is mapped (no argument array has an in_axes entry) and axis_size is not given, so"
                f" Equinox calls {name} without vmap, but out_axes={_show(self.out_axes)} maps"
                f" {mapped_outputs[0]}, which has no batch axis to give it",
                transform=self._title(),
                hint="out_axes=None, or map an argument (in_axes), or give axis_size",
            )
        return Prediction(jax.tree_util.tree_map(lambda x: Shape(x.shape), out), None, ())

    def explain(self, *args: Any, **kwargs: Any) -> str:
        """The derivation table for the call (also for a passing call); Jupyter shows it
        as HTML (an `Explanation`: a `str` equal to the same text)."""
        try:
            pred = self.predict(*args, **kwargs)
        except AxisCheckError as err:
            return Explanation(str(err), err)
        return Explanation(str(pred), pred)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if CHECKS_OFF.get():  # inside `checks_disabled()`: Equinox's transform, unchecked
            return self._library(*args, **kwargs)  # type: ignore[no-any-return]
        resolved: Resolved | None = None
        if not kwargs:  # Equinox refuses keyword arguments: its own error, unchanged
            try:
                resolved = self._resolved(tuple(args))
            except (NotArray, _UnknownNames) as mistake:  # refused by JAX or Equinox: explained
                try:
                    with checks_disabled():  # the library's own refusal (its type and words), not an inner check's
                        return self._library(*args, **kwargs)  # type: ignore[no-any-return]
                except Exception as lib_err:
                    explained = (
                        self._not_array(mistake, tuple(args))
                        if isinstance(mistake, NotArray)
                        else self._unknown_names(mistake, tuple(args))
                    )
                    raise with_jax_error(explained, lib_err) from None
            except (ValueError, TypeError):
                resolved = None  # a malformed in_axes: Equinox reports it in its own words
        if resolved is not None and not resolved.sizes_agree(self._options.get("axis_size")):
            try:
                self._checker(resolved).predict(*resolved.dynamic)
            except AxisCheckError as err:
                raise self._equinox_terms(retitled(err, self._title()), tuple(args), resolved) from None
            except Exception:  # noqa: BLE001, S110 - not modelled: Equinox's own report follows
                pass
        route("equinox._vmap_pmap")
        try:
            with routing(), speaking(None if resolved is None else self._speaker(resolved)):
                out: R = self._library(*args, **kwargs)
        except LIBRARY_FAILURES as lib_err:
            if isinstance(lib_err, AxisCheckError):  # an axischeck transform inside (a layer's own map)
                raised_inside(lib_err, self._title(), self._options.get("axis_name"))
                raise
            if resolved is None:
                raise
            try:
                self._predicted(tuple(args), resolved, lib_err)
            except AxisCheckError as err:
                if replaces(err, lib_err):
                    raise err from lib_err
            except Exception:
                pass
            raise
        return out

    def _speaker(self, resolved: Resolved) -> Speaker:
        """How the check of the draws of Equinox's call of `jax.vmap`/`jax.pmap` names what
        the user passed: parameter names and pytree paths, and each leaf's axis."""

        def passed() -> dict[int, Passed]:
            return {
                id(leaf): Passed(arg_path(self.__wrapped__, path), f"in_axes {_show(axis)}")
                for path, leaf, axis in resolved.leaf_axes
            }

        options = (self._transform, self.in_axes, self.out_axes, tuple(sorted(self._options.items())))
        try:
            hash(options)
        except TypeError:  # options that cannot key a table: this call's own
            checked: BoundedCache[bool] = BoundedCache(1)
        else:
            checked = _DRAWS_CHECKED.get_or_make(self.__wrapped__, options, lambda: BoundedCache(64))
        # Equinox's function returns (the mapped outputs, ...) under vmap: the user's are the first.
        return Speaker(
            self._title(), "equinox", passed, checked, "output[0]" if self._transform == "vmap" else "output"
        )

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """Bound as Equinox binds its own wrapper (an `eqx.Partial`, a pytree), with
        `predict` and `explain` that take the instance first too."""
        if instance is None:
            return self
        return _BoundMethod(self, instance)

    def __eq__(self, other: object) -> bool:
        """Equal when Equinox's own wrappers are (the same function and options), as two
        `eqx.filter_vmap(f)` are: a transform keyed by its function (Equinox's
        `filter_pmap` cache, `jax.jit`'s static arguments) finds it again when it is made
        anew."""
        return type(other) is _Filtered and other._transform == self._transform and other._library == self._library

    def __hash__(self) -> int:
        # Equal wrappers wrap equal functions (Equinox's hash reads its options, which may
        # hold a dict): the function, not the wrapper, is hashed.
        return hash((_Filtered, self._transform, self.__wrapped__))

    def __getattr__(self, name: str) -> Any:
        """What Equinox's wrapped function offers and this one does not (`.lower(...)` for
        ahead-of-time compilation, ...) is Equinox's own."""
        library = self.__dict__.get("_library")
        if library is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(library, name)

    def __repr__(self) -> str:
        return f"<axischeck {self._title()}>"


class _Options:
    """A wrapper's transform and options, the static part of its pytree: equal when they
    are (JAX and `eqx.filter_jit` compare and hash a tree's static part), hashed by the
    transform alone (the options may hold a dict)."""

    __slots__ = ("in_axes", "options", "out_axes", "transform")

    def __init__(self, transform: str, in_axes: Any, out_axes: Any, options: dict[str, Any]) -> None:
        self.transform, self.in_axes, self.out_axes, self.options = transform, in_axes, out_axes, options

    def _parts(self) -> tuple[Any, ...]:
        return (self.transform, self.in_axes, self.out_axes, self.options)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Options and bool(self._parts() == other._parts())

    def __hash__(self) -> int:
        return hash((_Options, self.transform))


def _flatten(wrapper: _Filtered[..., Any]) -> tuple[tuple[Any], _Options]:
    """The leaves of Equinox's own wrapper (the function, a model's arrays with it); the
    options are static, as the wrapper's own copy of what Equinox's holds."""
    return (wrapper._library,), _Options(wrapper._transform, wrapper.in_axes, wrapper.out_axes, wrapper._options)


def _unflatten(static: _Options, children: tuple[Any, ...]) -> _Filtered[..., Any]:
    """The wrapper around Equinox's wrapper rebuilt with other leaves (tracers, gradients,
    None for what a filter left out), as Equinox rebuilds a Module: nothing is checked."""
    (library,) = children
    wrapper: _Filtered[..., Any] = object.__new__(_Filtered)
    fun = getattr(library, "__wrapped__", None)
    if fun is not None:
        functools.update_wrapper(wrapper, fun)  # as made: the function's name, docs and fields
    wrapper.__wrapped__ = fun  # type: ignore[assignment]
    wrapper._transform, wrapper._library = static.transform, library
    wrapper.in_axes, wrapper.out_axes, wrapper._options = static.in_axes, static.out_axes, static.options
    return wrapper


jax.tree_util.register_pytree_node(_Filtered, _flatten, _unflatten)


class _BoundMethod(_eqx.Partial):  # type: ignore[misc]
    """A wrapper used as a method, bound to its instance: Equinox's `eqx.Partial` (so it
    stays the pytree Equinox's own binding is), whose `predict` and `explain` pass the
    instance first, as a call does."""

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        return self.func.predict(*self.args, *args, **self.keywords, **kwargs)  # type: ignore[no-any-return]

    def explain(self, *args: Any, **kwargs: Any) -> str:
        return self.func.explain(*self.args, *args, **self.keywords, **kwargs)  # type: ignore[no-any-return]


@overload
def filter_vmap(
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
) -> Callable[[Callable[P, R]], _Filtered[P, R]]: ...
@overload
def filter_vmap(
    fun: Callable[P, R],
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
) -> _Filtered[P, R]: ...
def filter_vmap(
    fun: Any = None,
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
    **vmapkwargs: Any,
) -> Any:
    """`equinox.filter_vmap`, with its parameters, checked and explained.

    ```python
    >>> import axischeck.eqx as axeqx, equinox as eqx
    >>> model = eqx.nn.Linear(3, 2, key=jax.random.key(0))
    >>> apply = axeqx.filter_vmap(lambda m, x: m(x), in_axes=(None, 0))
    >>> apply(model, jnp.ones((5, 3))).shape
    (5, 2)
    >>> apply.predict(model, jnp.ones((5, 3))).shapes
    Shape(5, 2)
    >>> try:
    ...     apply(model, jnp.ones((5, 4)))
    ... except ax.AxisCheckError as err:
    ...     print(err.transform)
    ...     print(err.disagreement())
    eqx.filter_vmap(<lambda>, in_axes=(None, 0), out_axes=eqx.if_array(0))
    the contracted dimension is axis 1 of m.weight (size 3) but axis 1 of x (size 4) [per-example axis 0 of (4,)].
    ```
    """
    if checks_off():  # AXISCHECK_DISABLE=1 or `checks_disabled()`: Equinox's own
        return unchecked(
            _eqx.filter_vmap,
            fun,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
            **vmapkwargs,
        )
    if fun is None:
        return functools.partial(
            filter_vmap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size, **vmapkwargs
        )
    return _Filtered(fun, "vmap", in_axes, out_axes, {"axis_name": axis_name, "axis_size": axis_size}, vmapkwargs)


@overload
def filter_pmap(
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
    donate: str = "none",
) -> Callable[[Callable[P, R]], _Filtered[P, R]]: ...
@overload
def filter_pmap(
    fun: Callable[P, R],
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
    donate: str = "none",
) -> _Filtered[P, R]: ...
def filter_pmap(
    fun: Any = None,
    *,
    in_axes: Any = _DEFAULT,
    out_axes: Any = _DEFAULT,
    axis_name: Hashable = None,
    axis_size: int | None = None,
    donate: str = "none",
    **pmapkwargs: Any,
) -> Any:
    """`equinox.filter_pmap`, with its parameters, checked and explained.

    ```python
    >>> import axischeck.eqx as axeqx
    >>> n = jax.local_device_count()
    >>> total = axeqx.filter_pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    >>> total.predict(jnp.ones((n, 3))).shapes == (n, 3)
    True
    ```
    """
    if checks_off():  # AXISCHECK_DISABLE=1 or `checks_disabled()`: Equinox's own
        return unchecked(
            _eqx.filter_pmap,
            fun,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
            donate=donate,
            **pmapkwargs,
        )
    if fun is None:
        return functools.partial(
            filter_pmap,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
            donate=donate,
            **pmapkwargs,
        )
    lib_kwargs = {"donate": donate, **pmapkwargs}
    return _Filtered(fun, "pmap", in_axes, out_axes, {"axis_name": axis_name, "axis_size": axis_size}, lib_kwargs)
