"""Argument leaves: what the engine knows of each leaf the user passed."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import Any, cast

import jax
import numpy as np
from jax.core import Tracer
from jax.sharding import NamedSharding, PartitionSpec
from jax.tree_util import keystr

from ._cache import BoundedCache
from ._errors import ArgumentError, Place, Size, with_jax_error
from ._jax_compat import (
    TRUSTED_ARRAY_TYPES,
    array_type,
    canonical_dtype,
    spec_entries,
    type_sharding,
    type_spec,
    valid_dtype,
    vmappable_value,
)
from ._shape import Shape
from ._trees import labelled_leaves

_PY_SCALARS = (bool, int, float, complex)


@dataclass(frozen=True, slots=True)
class Leaf:
    """One argument leaf at one mapping level.

    `shape` is what the function at this level receives (None: not a JAX value, like a
    str); `origin[i]` is the axis of the user's array that axis `i` came from.
    `value` is what tracing passes for it: the user's object, or a
    `ShapeDtypeStruct` once a level has mapped it.
    """

    label: str
    shape: Shape | None
    value: Any
    user_shape: Shape | None
    origin: tuple[int, ...]

    def place(self, axis: int | None, size: Size, unit: str = "per-example") -> Place:
        batched_axis = None if axis is None or axis >= len(self.origin) else self.origin[axis]
        return Place(self.label, self.shape, axis, size, self.user_shape, batched_axis, unit)


@dataclass(frozen=True, slots=True)
class Call:
    """The arguments of one call, as pytrees of `Leaf` (JAX flattens Leaf as a leaf)."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    arg_params: tuple[str | None, ...]  # the parameter each positional argument binds
    arg_labels: tuple[str, ...]  # how messages name each positional argument

    def flat(self) -> tuple[list[Leaf], Any]:
        leaves, treedef = jax.tree_util.tree_flatten((self.args, dict(self.kwargs)))
        return leaves, treedef

    def leaf_positions(self, i: int) -> range:
        """Where positional argument `i`'s leaves sit among `flat`'s (the positional
        arguments' leaves come first, in order): how a trace's inputs are told apart."""
        start = sum(len(jax.tree_util.tree_leaves(arg)) for arg in self.args[:i])
        return range(start, start + len(jax.tree_util.tree_leaves(self.args[i])))

    def rebuilt(self, treedef: Any, leaves: list[Leaf]) -> Call:
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        return Call(tuple(args), kwargs, self.arg_params, self.arg_labels)


def array_shape(x: Any) -> tuple[int, ...] | None:
    """`x.shape` if `x` is a JAX-typed array (or struct, or tracer), else None.

    Only types JAX takes as arrays qualify, with a tuple of non-negative ints as shape
    and a dtype JAX accepts (string, object and datetime arrays are not JAX values).
    """
    kind = type(x)
    if kind in TRUSTED_ARRAY_TYPES:  # the hot path: JAX guarantees shape and dtype
        return cast(tuple[int, ...], x.shape)
    if not array_type(kind):
        return None
    shape = getattr(x, "shape", None)
    if type(shape) is not tuple:
        return None
    for d in shape:  # a duck with a shape of strings or negative sizes is no array
        if type(d) is not int or d < 0:
            return None
    try:
        dtype = x.dtype
        ok = valid_dtype(dtype)
    except Exception:  # a missing or unhashable dtype: not an array
        return None
    return shape if ok else None


def shape_of(x: Any) -> Shape | None:
    """The shape JAX gives `x`, or None when `x` is not a valid JAX value."""
    if isinstance(x, _PY_SCALARS):
        return Shape(())
    shape = array_shape(x)
    return None if shape is None else Shape(shape)


_STRUCTS: BoundedCache[jax.ShapeDtypeStruct] = BoundedCache(256)
"""Structs without sharding by (shape, dtype): JAX's structs are immutable, so equal ones
are shared (a tree of 16,000 leaves of a few shapes builds a few)."""


def struct(shape: tuple[int, ...], dtype: Any, weak_type: bool = False) -> jax.ShapeDtypeStruct:
    """`jax.ShapeDtypeStruct(shape, dtype, weak_type=...)` (typed: jax's own is untyped
    for mypy)."""
    if type(shape) not in (tuple, Shape) or any(type(d) is not int for d in shape):
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak_type)  # type: ignore[no-untyped-call]  # JAX checks (or converts) the sizes
    key = (shape, dtype, weak_type)
    try:
        made = _STRUCTS.get(key)
    except TypeError:  # a dtype-like that cannot be hashed
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak_type)  # type: ignore[no-untyped-call]
    if made is None:
        made = jax.ShapeDtypeStruct(shape, dtype, weak_type=weak_type)  # type: ignore[no-untyped-call]
        _STRUCTS.put(key, made)
    return made


def resharded(
    value: Any, shape: tuple[int, ...], dtype: Any, *, drop: int | None = None, insert: Sequence[int] = ()
) -> jax.ShapeDtypeStruct:
    """A struct of `shape` for `value` after vmap dropped axis `drop` (or re-inserted the
    axes `insert`, in order): an Explicit sharding in `value`'s type keeps the entries of
    its other dims, and its weak type stays, as JAX's vmap keeps them."""
    weak = bool(getattr(value, "weak_type", False))
    if type(value) is jax.ShapeDtypeStruct and value.sharding is None:
        return struct(shape, dtype, weak)  # no sharding in its type: no entries to keep (and no aval to build)
    sharding = type_sharding(value)
    spec = getattr(sharding, "spec", None)
    entries = list(spec_entries(spec)) if spec is not None else []
    if not any(e is not None for e in entries):
        return struct(shape, dtype, weak)
    entries += [None] * (max(len(shape) + (drop is not None) - len(insert), 0) - len(entries))
    if drop is not None:
        del entries[drop]
    for axis in insert:
        entries.insert(axis, None)
    sharded = NamedSharding(sharding.mesh, PartitionSpec(*entries))  # type: ignore[no-untyped-call]  # untyped in jax 0.10
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharded, weak_type=weak)  # type: ignore[no-untyped-call]


def abstract(x: Any) -> jax.ShapeDtypeStruct:
    """A `ShapeDtypeStruct` for an array-like leaf (dtype canonicalised as JAX does, a
    weak type kept)."""
    if isinstance(x, jax.ShapeDtypeStruct):
        return x
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.result_type(x)
    weak = bool(getattr(x, "weak_type", False))
    return struct(tuple(np.shape(x)), canonical_dtype(dtype), weak)


def scalar_struct(x: bool | int | float | complex) -> jax.ShapeDtypeStruct:
    """The abstract value JAX traces a Python scalar as (weakly typed, but for bool)."""
    aval = jax.typeof(x)
    return struct((), aval.dtype, bool(aval.weak_type))


def _is_shape_tuple(x: object) -> bool:
    return type(x) is tuple and all(type(d) is int and d >= 0 for d in x)


def shapes_as_structs(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], dtypes: Mapping[int | str, Any] | None = None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Replace plain tuples of ints (shapes written by hand) with structs: float32, or the
    dtype `dtypes` gives a whole argument (by position or keyword), as the function's
    annotations say.

    Applied inside each argument, never to the argument tuple itself.
    """
    given = dtypes or {}

    def convert(tree: Any, where: int | str) -> Any:
        dtype = given.get(where, np.float32)
        return jax.tree_util.tree_map(
            lambda x: struct(x, dtype) if _is_shape_tuple(x) else x, tree, is_leaf=_is_shape_tuple
        )

    return tuple(convert(a, i) for i, a in enumerate(args)), {k: convert(v, k) for k, v in kwargs.items()}


def plain_function(fun: Callable[..., Any]) -> bool:
    """Whether `fun` is a plain function (a lambda, a def not wrapped by a decorator): whose
    parameters its code alone says."""
    return type(fun) is FunctionType and "__wrapped__" not in fun.__dict__ and "__signature__" not in fun.__dict__


def parameter_names(fn: Callable[..., Any]) -> tuple[list[str], str | None, set[str]] | None:
    """(positional parameter names, *varargs name, keyword names) of `fn`, if inspectable."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    positional: list[str] = []
    varargs = None
    keywords: set[str] = set()
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            varargs = p.name
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keywords.add(p.name)
    return positional, varargs, keywords


def label_call(
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    params: tuple[list[str], str | None, set[str]] | None,
) -> Call:
    """Wrap every leaf of `(args, kwargs)` in a `Leaf` labelled by parameter and path."""
    positional, varargs = (params[0], params[1]) if params else ([], None)
    arg_params: list[str | None] = []
    arg_labels: list[str] = []
    out_args = []
    for i, arg in enumerate(args):
        if i < len(positional):
            name, param = positional[i], positional[i]
        elif varargs is not None:
            name, param = f"{varargs}[{i - len(positional)}]", None
        else:
            name, param = f"args[{i}]", None
        arg_params.append(param)
        arg_labels.append(name)
        out_args.append(_wrap(arg, name))
    out_kwargs = {k: _wrap(v, k) for k, v in kwargs.items()}
    return Call(tuple(out_args), out_kwargs, tuple(arg_params), tuple(arg_labels))


def flatten_call(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """`tree_flatten((args, kwargs))`, with JAX's own failures reported as ours."""
    try:
        return jax.tree_util.tree_flatten((args, kwargs))
    except (RecursionError, SystemError):
        raise ArgumentError(
            "the arguments contain themselves (a cyclic container) or are nested too deeply to flatten"
        ) from None
    except Exception as err:  # a pytree's own flatten failed: JAX lets its exception through
        ours = with_jax_error(ArgumentError(f"the arguments cannot be flattened as a pytree: {err}"), err)
        if not isinstance(ours, type(err)):  # a type that cannot be combined with ours: JAX's as it is
            raise
        raise ours from err


def check_jax_outputs(out: Any, name: str) -> None:
    """Raise `TypeError` (as JAX would, but naming the output) if `name` returned a value
    JAX cannot carry, like a str: that is the function's own mistake, not an axis one."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        if array_shape(leaf) is None and not isinstance(leaf, _PY_SCALARS):
            raise TypeError(f"{name} returned a {type(leaf).__name__} at output{keystr(path)}, which is not a JAX type")


def _check_layout(x: jax.ShapeDtypeStruct, label: str) -> None:
    """A struct's sharding must fit its shape, or JAX refuses the struct wherever it goes."""
    try:
        type_spec(x)
    except ValueError as err:
        raise ArgumentError(
            f"{label}'s sharding cannot lay out its shape {tuple(x.shape)}: {err}",
            hint="make the sharded dims multiples of their mesh axes, or shard other dims",
        ) from None


def _wrap(tree: Any, name: str) -> Any:
    """`tree` with each leaf wrapped in a `Leaf` labelled `name + keystr(path)`.

    Linear in the leaves, with one new object per leaf: labels come from one walk, and
    leaves of one shape share its `Shape` and `origin`."""
    treedef: Any = jax.tree_util.tree_structure(tree)  # JAX's own refusals (cycles, depth) first
    labels, values = labelled_leaves(tree, name)
    if len(values) != treedef.num_leaves:  # a flatten that answers differently each time: read it once
        with_paths, treedef = jax.tree_util.tree_flatten_with_path(tree)
        labels = [name + keystr(path) for path, _ in with_paths]
        values = [leaf for _, leaf in with_paths]
    seen: dict[tuple[int, ...], tuple[Shape, tuple[int, ...]]] = {}
    wrapped = []
    for label, x in zip(labels, values, strict=True):
        kind = type(x)
        raw = x.shape if kind in TRUSTED_ARRAY_TYPES else () if isinstance(x, _PY_SCALARS) else array_shape(x)
        if raw is None:
            wrapped.append(Leaf(label, None, x, None, ()))
            continue
        known = seen.get(raw)
        if known is None:
            known = seen[raw] = (Shape(raw), tuple(range(len(raw))))
        if isinstance(x, jax.ShapeDtypeStruct) and x.sharding is not None:
            _check_layout(x, label)
        wrapped.append(Leaf(label, known[0], x, known[0], known[1]))
    return treedef.unflatten(wrapped)


def opaque_leaves(leaves: list[Any]) -> bool:
    """Whether some argument leaf is beyond axischeck's model, so JAX alone answers:
    a type registered with `register_vmappable`, or an array with symbolic sizes."""
    static: set[tuple[int, ...]] = set()  # shapes of ints seen: leaves of one shape are read once
    for x in leaves:
        if vmappable_value(x):
            return True
        if isinstance(x, (Tracer, jax.ShapeDtypeStruct)):
            shape = x.shape
            if type(shape) is tuple and shape in static:
                continue
            if not all(type(d) is int for d in shape):
                return True
            static.add(shape)
    return False
