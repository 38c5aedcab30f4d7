"""`in_axes` / `out_axes` values: validated once, frozen, and resolved per leaf.

Construction-time rules mirror `jax.vmap` (api.py:vmap): a top-level list of in_axes
is a tuple; the top level must be `None`, an exact `int` or a tuple; every leaf
(with `None` counted as a leaf) must be an exact `int` or `None` - `bool` and
`numpy.int64` are rejected exactly as JAX rejects them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, SupportsIndex

import jax
import numpy as np

from ._errors import SpecError
from ._text import and_list, int_text, short_repr
from ._trees import check_nesting, flatten_axes_spec


def _is_axis(x: object) -> bool:
    return x is None or type(x) is int


@dataclass(frozen=True, slots=True)
class Axes:
    """A validated `in_axes` / `out_axes` pytree, hashable so it can key caches."""

    treedef: Any
    leaves: tuple[int | None, ...]

    @property
    def value(self) -> Any:
        """The axes as the user wrote them (after JAX's top-level list -> tuple)."""
        return jax.tree_util.tree_unflatten(self.treedef, self.leaves)

    def __str__(self) -> str:
        return _axes_repr(self.value)


def _axes_repr(value: Any) -> str:
    """The repr of axes as written; a pytree node whose own repr fails on axes for leaves
    (Equinox's `State` pretty-prints arrays) is named by its type and its leaves' axes."""
    if type(value) in (tuple, list):
        inner = ", ".join(map(_axes_repr, value)) + ("," if type(value) is tuple and len(value) == 1 else "")
        return f"({inner})" if type(value) is tuple else f"[{inner}]"
    try:
        return repr(value)
    except ValueError:  # an int past Python's str limit
        return short_repr(value)
    except Exception:  # noqa: BLE001 - the node's repr, not ours
        leaves = jax.tree_util.tree_leaves(value, is_leaf=_is_axis)
        return f"{type(value).__name__}(axes {', '.join(map(_axes_repr, leaves))})"


def _freeze(value: Any, what: str) -> Axes:
    check_nesting(value, what)
    try:
        leaves, treedef = flatten_axes_spec(value)
    except (ValueError, TypeError) as err:  # e.g. dict keys that cannot be sorted
        raise SpecError(f"{what} cannot be read as a pytree: {err}") from None
    bad = [leaf for leaf in leaves if not _is_axis(leaf)]
    if bad:
        unmapped = _false_as_none(leaves, treedef, what) if all(leaf is False for leaf in bad) else None
        raise SpecError(
            f"{what} must be an int, None, or a (nested) container of those, but {short_repr(bad[0])}"
            f" (of type {type(bad[0]).__name__}) is in {short_repr(value)}",
            hint=_leaf_fix(bad[0], what),
            fix=unmapped,
            fix_head=unmapped.split(" (")[0] if unmapped else None,
        )
    return Axes(treedef, tuple(leaves))


def _false_as_none(leaves: list[Any], treedef: Any, what: str) -> str:
    """The axes with each `False` written None: False reads as "not mapped" (jax#6372:
    `in_axes=[False, 0]` was meant as `[None, 0]`, and before JAX refused bools it mapped
    axis 0, as 0 == False)."""
    fixed = jax.tree_util.tree_unflatten(treedef, [None if leaf is False else leaf for leaf in leaves])
    option = what.split()[-1]
    which = "an entry"
    if option == "in_axes" and isinstance(fixed, tuple):
        written = jax.tree_util.tree_unflatten(treedef, leaves)
        named = [f"argument {i}" for i, entry in enumerate(written) if entry is False]
        which = and_list(named) if named else which
    return f"{option}={_axes_repr(fixed)} (None leaves {which} unmapped; a bool is no axis, and JAX refuses it)"


def _leaf_fix(leaf: object, what: str) -> str | None:
    if isinstance(leaf, bool):
        return f"write 0 or None instead of {leaf!r} in {what} (a bool is not an axis)"
    if isinstance(leaf, SupportsIndex):  # numpy ints and friends
        try:
            value = operator.index(leaf)
        except Exception:  # an array of several elements claims __index__ and refuses it
            return None
        return f"write int({short_repr(leaf)}) = {value!r} (JAX accepts only Python ints as axes)"
    return None


def freeze_in_axes(in_axes: Any, transform: str = "vmap") -> Axes:
    """Validate `in_axes` as `jax.vmap` does at construction, and freeze it."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # JAX issue #2367: a top-level list means a tuple
    if not (in_axes is None or type(in_axes) is int or isinstance(in_axes, tuple)):
        raise SpecError(
            f"{transform} in_axes must be an int, None, or a tuple with one entry per positional"
            f" argument, but got {in_axes!r} (of type {type(in_axes).__name__})",
            hint=_top_fix(in_axes),
        )
    return _freeze(in_axes, f"{transform} in_axes")


def freeze_pmap_in_axes(in_axes: Any) -> Axes:
    """pmap keeps a top-level list as a list (then fails the prefix check like JAX)."""
    return _freeze(in_axes, "pmap in_axes")


def _top_fix(in_axes: object) -> str | None:
    if isinstance(in_axes, dict):
        return (
            "in_axes is matched to the positional arguments: wrap the dict in a tuple,"
            f" in_axes=({in_axes!r},), to give the axes of a dict argument"
        )
    return _leaf_fix(in_axes, "in_axes")


def freeze_out_axes(out_axes: Any, transform: str = "vmap") -> Axes:
    """Validate `out_axes` (any pytree of int / None; lists stay lists)."""
    return _freeze(out_axes, f"{transform} out_axes")


def canonical_axis(axis: int, rank: int) -> int | None:
    """`axis` counted from the front, or None when `-rank <= axis < rank` fails."""
    if -rank <= axis < rank:
        return axis + rank if axis < 0 else axis
    return None


# ------------------------------------------------- the other options of a transform


def check_axis_size(axis_size: Any, transform: str = "vmap") -> int | None:
    """An int (or numpy integer scalar, which JAX accepts) >= 0, or None."""
    if axis_size is None:
        return None
    if isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer)):
        raise SpecError(
            f"{transform} axis_size must be an int or None, got {short_repr(axis_size)}"
            f" of type {type(axis_size).__name__}"
        )
    size = int(axis_size)
    if size < 0:
        raise SpecError(f"{transform} axis_size must be >= 0, got {int_text(size)}")
    return size


def check_axis_name(axis_name: Any, what: str = "vmap axis_name") -> None:
    """Axis names must be hashable (JAX keys its axis environment by them), and not an int
    or a tuple: collectives read an int as a positional array axis and a tuple as several
    names (docs/jax-semantics.md#axis-names), so such a name silently means something else."""
    if isinstance(axis_name, (int, tuple)) and not isinstance(axis_name, bool):
        raise SpecError(
            f"{what} {axis_name!r} is an {type(axis_name).__name__}: collectives would read it as"
            f" {'a positional array axis' if isinstance(axis_name, int) else 'several axis names'}",
            hint="name the axis with a string, e.g. axis_name='batch'",
        )
    check_hashable(axis_name, what)


def check_hashable(value: Any, what: str) -> None:
    try:
        hash(value)
    except TypeError:
        raise SpecError(f"{what} must be hashable, got {short_repr(value)}") from None


def check_flag(value: Any, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(f"{what} must be True or False, got {short_repr(value)}")
    return bool(value)
