"""The real cause of a refused call where no change of options can fix it, named from
what the call itself shows: a Python list of arrays mapped as if it were one array, an
iterator passed where arrays are mapped, a list of models or parameter trees where one
stacked tree is mapped.

These are changes to the program (stack the list, pass the arrays), so they are never
a `Fix` (no option is checked): they are the error's hint, in the user's terms.
"""

from __future__ import annotations

import collections.abc
import re
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.core import Tracer

from .._core._errors import ArgumentError, AxisCheckError, FunctionError
from .._core._leaves import Call, Leaf
from .._core._text import and_list, format_shape
from ._rank import per_argument


@dataclass(frozen=True)
class MapFacts:
    """What the causes read of the map besides the call: its kind as messages name it
    (`vmap`, `pmap`, ...), its in_axes as written (None where it has none), the
    positions it passes whole, and the function's positional parameters (empty where it
    takes `*args`)."""

    kind: str
    in_axes: Any = None
    unmapped: frozenset[int] = frozenset()
    parameters: tuple[str, ...] = ()


def cause(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """What is wrong with the call that no option change fixes, if the call shows it."""
    kind = facts.kind
    entries = per_argument(facts.in_axes, len(call.args)) if facts.in_axes is not None else None
    for i, (label, arg) in enumerate(zip(call.arg_labels, call.args, strict=True)):
        # A container whose in_axes entry gives its items their own axes (`(0, None)`) is
        # mapped as the container it is, on purpose (the entry's own shape is what may be
        # wrong).
        per_item = entries is not None and _axes_of_items(entries[i])
        found = _iterator(label, arg, kind) or (
            None if per_item else _list_of_arrays(label, arg, err, kind) or _list_of_trees(label, arg, kind)
        )
        if found is not None:
            return found
    return (
        _missing_arguments(call, err, facts)
        or _traced_python_value(call, err, facts)
        or _mapped_python_value(call, err, facts)
        or _unreplicated_tree(call, err, facts)
        or _replicated_tree(call, err, facts)
        or _one_example_mapped(call, err)
    )


def _axes_of_items(entry: Any) -> bool:
    """Whether an in_axes entry is a container of one axis (or None) per item."""
    items = entry.values() if isinstance(entry, dict) else entry if isinstance(entry, tuple | list) else None
    return items is not None and all(a is None or type(a) is int for a in items)


def _iterator(label: str, arg: Any, kind: str) -> str | None:
    """An iterator (`zip(...)`, `map(...)`, a generator) passed as an argument: JAX maps
    arrays, and an iterator is an opaque object to it."""
    if not isinstance(arg, Leaf) or not isinstance(arg.value, collections.abc.Iterator):
        return None
    what = type(arg.value).__name__
    return (
        f"{label} is a {what} object, an iterator: {kind} maps arrays (or pytrees of them), not the items an"
        f" iterator yields, and no in_axes entry changes that; pass a tuple of the arrays instead (for zip(a, b):"
        f" {kind}(f)((a, b)) maps both along axis 0 and gives f one (a[i], b[i]) pair per example), or stack"
        f" what it yields: jnp.stack(list({label}))"
    )


def _list_of_arrays(label: str, arg: Any, err: AxisCheckError, kind: str) -> str | None:
    """A Python list (or tuple) of arrays mapped as if it were one array: JAX maps each
    item's axis, so the function gets a list of slices (and fails using it as an array),
    or the items' sizes disagree."""
    if not isinstance(arg, list | tuple) or len(arg) < 2 or not all(_array(item) for item in arg):
        return None
    shapes = [item.user_shape for item in arg]
    container = "list" if isinstance(arg, list) else "tuple"
    said = str(err.__cause__ or err)
    refused_as_array = isinstance(err, FunctionError) and f"'{container}'" in said
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
    if len({tuple(leaf.user_shape for leaf in jax.tree_util.tree_leaves(item)) for item in arg}) != 1:
        return None  # items of other shapes (layers of an MLP, as (W, b) pairs): no stack of them
    return (
        f"{label} is a Python list of {len(arg)} trees of one structure (models or parameters): {kind} maps"
        " arrays, so the list's arrays must be stacked into one tree along a new axis first:"
        f" jax.tree.map(lambda *xs: jnp.stack(xs), *{label}) (for Equinox modules, on their arrays:"
        " eqx.filter(..., eqx.is_array) and eqx.combine), then map it with the in_axes entry 0"
    )


_NEEDED_AS_PYTHON = re.compile(r"depends on the value of the argument ([\w.\[\]'\"]+?)\.?(?:\s|$)")


def _traced_python_value(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """A mapped scalar leaf, the same for every example, that the function needs as a
    Python value (`if self.inference:`, `range(n)`): JAX names it; mapped, it is traced.
    A model's or config's Python values stacked with its arrays (a `jax.tree.map` over the
    whole model to replicate it): no in_axes entry makes a traced value concrete. (Values
    that differ per example need `jnp.where` or `lax.cond`, not this.)"""
    if not isinstance(err, FunctionError) or not isinstance(err.__cause__, jax.errors.ConcretizationTypeError):
        return None
    found = _NEEDED_AS_PYTHON.search(str(err.__cause__))
    if found is None:
        return None
    name = found.group(1)
    leaves, _ = call.flat()
    leaf = next((leaf for leaf in leaves if leaf.label == name), None)
    if leaf is None or leaf.user_shape is None or len(leaf.user_shape) != 1 or not _same_throughout(leaf.value):
        return None
    model = "." in name  # an attribute path: a module's field
    remedy = (
        "for a model replicated with jax.tree.map, stack only its arrays (jax.tree.map over"
        " eqx.filter(model, eqx.is_array), then eqx.combine with the rest)"
        if model
        else "stack only the arrays of what holds it"
    )
    static = ", or pass it as a static argument (static_broadcasted_argnums)" if facts.kind == "pmap" else ""
    return (
        f"{name} is an array mapped by {facts.kind}, the same value for every example, so the function gets a"
        f" traced scalar where it needs a Python value (an if, a range): keep {name} a Python value, not"
        f" stacked; {remedy}{static}"
    )


def _mapped_python_value(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """A vmapped function needs a traced integer as a Python value (an axis, a size: JAX's
    ConcretizationTypeError of an integer scalar), and the one mapped vector of integers
    (the one JAX names, where it names one) is where it can come from: mapped, each
    example gets one of its integers (jax#10493: the axes of a sum mapped with the data).
    Passed whole, its values stay the user's. Not for a pmap, which traces an argument
    given None too."""
    if facts.kind != "vmap" or not isinstance(err, FunctionError):
        return None  # pmap traces an argument given None too
    said = str(err.__cause__)
    if not isinstance(err.__cause__, jax.errors.ConcretizationTypeError) or not _TRACED_INTEGER.search(said):
        return None  # the value needed is no integer (an `if` on a float, a mask)
    named = _NEEDED_AS_PYTHON.search(said)
    entries = per_argument(facts.in_axes, len(call.args)) if facts.in_axes is not None else None
    if entries is None:
        return None
    integral = [
        i
        for i, (arg, entry) in enumerate(zip(call.args, entries, strict=True))
        if type(entry) is int
        and isinstance(arg, Leaf)
        and _integral(arg.value)
        and arg.user_shape is not None
        and len(arg.user_shape) == 1  # one integer per example
        and (named is None or named.group(1) == call.arg_labels[i])
    ]
    if len(integral) != 1:
        return None
    (i,) = integral
    label = call.arg_labels[i]
    return (
        f"{label} holds integers that the in_axes entry {entries[i]} maps, so each example gets a traced integer of"
        f" it, where the function needs a Python value (an axis, a size): if {label} is one value for the whole"
        " batch, not one per example, pass it whole, with the in_axes entry None"
    )


_TRACED_INTEGER = re.compile(r"traced array with shape u?int\d*\[\]")
"""JAX's words for a traced integer scalar (the value a concrete one was needed for)."""


def _integral(value: Any) -> bool:
    """Whether a value is an array of integers (axes, sizes)."""
    dtype = getattr(value, "dtype", None)
    try:
        return dtype is not None and bool(np.issubdtype(dtype, np.integer))
    except TypeError:  # an extended dtype numpy does not know (a key)
        return False


def _same_throughout(value: Any) -> bool:
    """Whether a concrete array holds one value throughout (a flag stacked per example)."""
    if isinstance(value, Tracer) or not hasattr(value, "shape"):
        return False
    try:
        flat = np.asarray(value).ravel()
    except Exception:
        return False
    return flat.size > 0 and bool(np.all(flat == flat[0]))


def _unreplicated_tree(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """A parameter tree given to pmap as it is, one copy, mapped at axis 0 of each leaf
    over the devices: the sizes the error names disagree among its own leaves. Replicated
    (a leading device axis on every leaf), it is what pmap takes (jax#9933)."""
    if facts.kind != "pmap" or not isinstance(err, ArgumentError) or not (err.symbol or "").startswith("batch size"):
        return None
    named = {place.arg for place in err.places}
    for i, (label, arg) in enumerate(zip(call.arg_labels, call.args, strict=True)):
        if i in facts.unmapped or not isinstance(arg, dict | list | tuple):
            continue
        leaves = [leaf for leaf in jax.tree_util.tree_leaves(arg) if leaf.label in named]
        firsts = {leaf.user_shape[0] for leaf in leaves if leaf.user_shape}
        if len(firsts) >= 2:
            return (
                f"pmap maps axis 0 of every leaf of {label} over the devices, and their first sizes differ"
                f" ({', '.join(map(str, sorted(firsts)))}): if {label} is one copy meant for every device,"
                f" replicate it first, a leading axis of the device count on every leaf"
                f" (jax.device_put_replicated({label}, jax.local_devices())), or give it the in_axes entry None"
                " next to an argument pmap maps"
            )
    return None


def _replicated_tree(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """A parameter tree passed whole (in_axes None) every leaf of which has a leading axis
    of size 1, where the function fails: the copies pmap keeps per device (a one-device
    pmap's output, a replicated state), read by a function that expects the parameters
    themselves (jaxpi#3)."""
    if not isinstance(err, FunctionError):
        return None
    for i, (label, arg) in enumerate(zip(call.arg_labels, call.args, strict=True)):
        if i not in facts.unmapped or not isinstance(arg, dict | list | tuple):
            continue
        shapes = [leaf.user_shape for leaf in jax.tree_util.tree_leaves(arg)]
        if len(shapes) >= 2 and all(shape is not None and len(shape) >= 2 and shape[0] == 1 for shape in shapes):
            listed = ", ".join(format_shape(shape) for shape in shapes[:3]) + (", ..." if len(shapes) > 3 else "")
            return (
                f"every leaf of {label} has a leading axis of size 1 ({listed}): one copy per device, as pmap"
                " returns replicated parameters, where the function reads the parameters themselves; take the"
                f" first replica before this call: jax.tree.map(lambda p: p[0], {label})"
                " (flax.jax_utils.unreplicate)"
            )
    return None


def _one_example_mapped(call: Call, err: AxisCheckError) -> str | None:
    """Mapped leaves of one argument whose sizes disagree, one of them shaped like a single
    example of another (a `(6,)` time grid beside `(5, 6)` values): a value shared by
    every example, mapped with the rest by an entry for the whole argument (equinox#952).
    Leaving it unmapped takes an entry per leaf, which no change of that one entry is."""
    if not isinstance(err, ArgumentError) or not (err.symbol or "").startswith("batch size"):
        return None
    shapes = {leaf.label: leaf.user_shape for leaf in call.flat()[0] if leaf.user_shape}
    named = [place.arg for place in err.places if place.arg in shapes]
    for shared in named:
        example_of = next((m for m in named if m != shared and shapes[m][1:] == shapes[shared]), None)
        if example_of is None:
            continue
        head = next((label for label in call.arg_labels if shared.startswith(label)), None)
        if head is None or not example_of.startswith(head):
            continue
        return (
            f"{shared} {format_shape(shapes[shared])} has the shape of one example of {example_of}"
            f" {format_shape(shapes[example_of])}: if it is the same for every example, leave it unmapped, with"
            f" an in_axes entry for {head} that holds None at {shared} and 0 at the rest (a pytree of entries"
            " shaped like it)"
        )
    return None


def _missing_arguments(call: Call, err: AxisCheckError, facts: MapFacts) -> str | None:
    """A tuple in_axes with one entry per parameter of the function, given fewer
    positional arguments: the call lacks an argument (a list unpacked with `*` that came
    out empty), and shortening in_axes would only move the error (pymob#161)."""
    entries, parameters, passed = facts.in_axes, facts.parameters, len(call.args)
    if not isinstance(err, ArgumentError) or not isinstance(entries, tuple):
        return None
    if not passed < len(entries) == len(parameters):
        return None
    missing = list(parameters[passed:])
    return (
        f"in_axes has one entry per parameter of the function ({', '.join(parameters)}), but the call passes"
        f" {passed}, so {and_list(missing)} {'gets' if len(missing) == 1 else 'get'} no argument: check what"
        " the call passes (an argument left out, or a list unpacked with * that came out empty), not in_axes"
    )


def _array(item: Any) -> bool:
    return isinstance(item, Leaf) and item.user_shape is not None and not isinstance(item.value, bool | int | float)
