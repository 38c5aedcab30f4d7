"""A library transform's call, resolved to one axis per leaf and checked with `axischeck.vmap`/`pmap`.

Libraries such as Equinox accept arguments that are any pytree (modules holding functions,
ints, ...) and in_axes that are callables evaluated per leaf. Here such a call is resolved
against the actual arguments into the array leaves and one axis (or None) for each; the
arrays are handed to `axischeck.vmap`/`axischeck.pmap` of a function that puts the
non-array leaves back, so prediction and explanations name the user's parameters and
pytree paths. The library's own transform still does the real work.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax

from .._core._errors import AxisCheckError, with_jax_error
from .._pmap import pmap as ax_pmap
from .._switch import made_checked
from .._vmap import vmap as ax_vmap


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, jax.ShapeDtypeStruct)) or (
        hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, type)
    )


class Resolved:
    """The arrays of a call's arguments, their axes, and how to rebuild the arguments."""

    def __init__(self, args: tuple[Any, ...], spec: Any, resolve: Callable[[Any, Any], Any]) -> None:
        paths_leaves, self.treedef = jax.tree_util.tree_flatten_with_path(args)
        spec_def: Any
        spec_leaves, spec_def = jax.tree_util.tree_flatten(spec, is_leaf=lambda a: a is None)
        axis_leaves: list[Any] = []
        subtrees: list[Any] = spec_def.flatten_up_to(args)  # raises where spec is not a prefix of args
        for one, sub in zip(spec_leaves, subtrees, strict=True):
            axis_leaves.extend(resolve(one, leaf) for leaf in jax.tree_util.tree_leaves(sub))
        self.statics: list[Any] = []
        # Each leaf with its path and axis: how a library's user names what they passed.
        self.leaf_axes = [(path, leaf, axis) for (path, leaf), axis in zip(paths_leaves, axis_leaves, strict=True)]
        dyn: list[Any] = []
        dyn_axes: list[Any] = []
        for (path, leaf), axis in zip(paths_leaves, axis_leaves, strict=True):
            if _is_array(leaf):
                dyn.append(leaf)
                dyn_axes.append(axis)
                self.statics.append(_HOLE)
            else:
                if axis is not None:
                    raise NotArray(path, leaf, axis)
                dyn.append(None)
                dyn_axes.append(None)
                self.statics.append(leaf)
        self.dynamic = jax.tree_util.tree_unflatten(self.treedef, dyn)
        self.dynamic_axes = jax.tree_util.tree_unflatten(self.treedef, dyn_axes)
        self.mapped = [(leaf, axis) for leaf, axis in zip(dyn, dyn_axes, strict=True) if axis is not None]

    def rebuild(self, dynamic: Any) -> Any:
        leaves = jax.tree_util.tree_leaves(dynamic)
        it = iter(leaves)
        full = [next(it) if s is _HOLE else s for s in self.statics]
        return jax.tree_util.tree_unflatten(self.treedef, full)

    def sizes_agree(self, axis_size: int | None) -> bool:
        """Whether every mapped leaf has its axis and all mapped sizes agree (cheap: shapes only)."""
        sizes = set() if axis_size is None else {axis_size}
        for leaf, axis in self.mapped:
            ndim = len(leaf.shape)
            if not isinstance(axis, int) or not -ndim <= axis < ndim:
                return False
            sizes.add(leaf.shape[axis])
        return len(sizes) <= 1


class NotArray(Exception):
    """A non-array leaf was given a mapped axis: left to the library to report in calls."""

    def __init__(self, path: tuple[Any, ...], leaf: Any, axis: Any) -> None:
        super().__init__(path, leaf, axis)
        self.path, self.leaf, self.axis = path, leaf, axis

    def error(self, fun: Callable[..., Any], title: str) -> AxisCheckError:
        """The mistake as axischeck reports it: the leaf by parameter name and pytree path."""
        where = arg_path(fun, self.path)
        kind = type(self.leaf).__name__
        return AxisCheckError(
            f"in_axes maps {where} at axis {self.axis}, but {where} is not an array (a {kind})",
            transform=title,
            hint=f"give {where} the axis None (eqx.if_array(k) maps arrays only)",
        )


def arg_path(fun: Callable[..., Any], path: tuple[Any, ...]) -> str:
    """`model.layers[0].weight` for the path `[0].layers[0].weight` of `fun`'s arguments."""
    if not path or not isinstance(path[0], jax.tree_util.SequenceKey):
        return "args" + jax.tree_util.keystr(path)
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        names = []
    index = path[0].idx
    head = names[index] if index < len(names) else f"args[{index}]"
    return head + jax.tree_util.keystr(tuple(path[1:]))


_HOLE = object()


def _filtered(out: Any) -> Any:
    return jax.tree_util.tree_map(lambda x: x if _is_array(x) else None, out)


def checker(
    fun: Callable[..., Any],
    resolved: Resolved,
    transform: str,
    out_axes: Any,
    options: dict[str, Any],
    outputs: Callable[[Any], Any] = _filtered,
) -> Any:
    """`axischeck.vmap`/`pmap` of `fun` over the array leaves, named like `fun`; `outputs`
    picks the per-example outputs the library hands to JAX (by default its arrays)."""

    def per_example(*dynamic: Any) -> Any:
        return outputs(fun(*resolved.rebuild(dynamic)))

    try:
        per_example.__signature__ = inspect.signature(fun)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    per_example.__name__ = getattr(fun, "__name__", type(fun).__name__)
    per_example.__qualname__ = getattr(fun, "__qualname__", per_example.__name__)
    make = ax_vmap if transform == "vmap" else ax_pmap
    with made_checked():
        return make(per_example, in_axes=tuple(resolved.dynamic_axes), out_axes=out_axes, **options)


def retitled(err: AxisCheckError, title: str, jax_err: BaseException | None = None) -> AxisCheckError:
    """`err` with its transform described as the user wrote it (and JAX's error type kept)."""
    if jax_err is not None:
        err = with_jax_error(err, jax_err)
    err.transform = title
    ValueError.__init__(err, err.render())
    return err
