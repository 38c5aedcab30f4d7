"""The real cause of a refused call where no change of options can fix it, named from
what the call itself shows: a Python list of arrays mapped as if it were one array, an
iterator passed where arrays are mapped, a list of models or parameter trees where one
stacked tree is mapped.

These are changes to the program (stack the list, pass the arrays), so they are never
a `Fix` (no option is checked): they are the error's hint, in the user's terms.
"""

from __future__ import annotations

import collections.abc
from typing import Any

import jax

from .._core._errors import AxisCheckError, FunctionError
from .._core._leaves import Call, Leaf
from .._core._text import format_shape


def cause(call: Call, err: AxisCheckError, kind: str) -> str | None:
    """What is wrong with the call that no option change fixes, if the call shows it."""
    for label, arg in zip(call.arg_labels, call.args, strict=True):
        found = (
            _iterator(label, arg, kind) or _list_of_arrays(label, arg, err, kind) or _list_of_trees(label, arg, kind)
        )
        if found is not None:
            return found
    return None


def _iterator(label: str, arg: Any, kind: str) -> str | None:
    """An iterator (`zip(...)`, `map(...)`, a generator) passed as an argument: JAX maps
    arrays, and an iterator is an opaque object to it."""
    if not isinstance(arg, Leaf) or not isinstance(arg.value, collections.abc.Iterator):
        return None
    what = type(arg.value).__name__
    return (
        f"{label} is a {what} object, an iterator: {kind} maps arrays (or pytrees of them), not the items an"
        f" iterator yields, and no in_axes entry changes that; pass the arrays themselves (for zip(a, b):"
        f" {kind}(f)(a, b) with f taking both), or stack what it yields: jnp.stack(list({label}))"
    )


def _list_of_arrays(label: str, arg: Any, err: AxisCheckError, kind: str) -> str | None:
    """A Python list (or tuple) of arrays mapped as if it were one array: JAX maps each
    item's axis, so the function gets a list of slices (and fails using it as an array),
    or the items' sizes disagree."""
    if not isinstance(arg, list | tuple) or len(arg) < 2 or not all(_array(item) for item in arg):
        return None
    shapes = [item.user_shape for item in arg]
    container = "list" if isinstance(arg, list) else "tuple"
    refused_as_array = isinstance(err, FunctionError) and f"'{container}' object" in str(err.__cause__ or err)
    if len(set(shapes)) == 1:
        if not refused_as_array and isinstance(err, FunctionError):
            return None
        stacked = format_shape((len(arg), *shapes[0]))
        return (
            f"{label} is a Python {container} of {len(arg)} arrays of shape {format_shape(shapes[0])}: {kind} maps"
            f" each item's own axis (a {container} is a pytree of arrays), not the {container}; to map over its"
            f" items, pass one array: jnp.stack({label}) (shape {stacked}), with the in_axes entry 0"
        )
    if not refused_as_array and isinstance(err, FunctionError):
        return None
    listed = ", ".join(format_shape(s) for s in shapes[:6]) + (", ..." if len(shapes) > 6 else "")
    return (
        f"{label} is a Python {container} of {len(arg)} arrays of different shapes ({listed}): {kind} maps one"
        " array (or each item's own axis), and ragged items cannot be stacked into one; loop over them in"
        " Python, or pad them to one shape first (jnp.pad) and mask what was padded"
    )


def _list_of_trees(label: str, arg: Any, kind: str) -> str | None:
    """A Python list of models or parameter trees of one structure, where one tree whose
    arrays are stacked along a new axis is what a map over them takes."""
    if not isinstance(arg, list) or len(arg) < 2 or any(_array(item) for item in arg):
        return None
    try:
        structures = {jax.tree_util.tree_structure(item) for item in arg}
    except Exception:
        return None
    if len(structures) != 1 or not jax.tree_util.tree_leaves(arg[0]):
        return None
    return (
        f"{label} is a Python list of {len(arg)} trees of one structure (models or parameters): {kind} maps"
        " arrays, so the list's arrays must be stacked into one tree along a new axis first:"
        f" jax.tree.map(lambda *xs: jnp.stack(xs), *{label}) (for Equinox modules, on their arrays:"
        " eqx.filter(..., eqx.is_array) and eqx.combine), then map it with the in_axes entry 0"
    )


def _array(item: Any) -> bool:
    return isinstance(item, Leaf) and item.user_shape is not None and not isinstance(item.value, bool | int | float)
