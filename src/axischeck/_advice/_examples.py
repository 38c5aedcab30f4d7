"""A function that fails on its examples because they have one axis more or one fewer
than it takes, named from what the engine says of examples of the other rank.

A vmap maps one axis of each argument: a function written for one scalar, given a
`(batch, seq_len)` array, gets rows; one written for one example, given a single example
without its batch axis, gets its entries. Neither is an option change (a vmap per batch
axis, an example given a batch axis, are changes to the program), so each is the error's
hint, said only where the engine checks the call with examples of the other rank.
"""

from __future__ import annotations

from typing import Any

from .._core._errors import AxisCheckError, FunctionError
from .._core._jax_compat import is_raw_key
from .._core._leaves import Call, Leaf
from .._core._text import format_shape
from .._core._trees import seq_repr
from .._engine._models import MapModel, Model
from ._candidates import Budget, with_leaf_shape, works
from ._rank import per_argument


def other_rank(model: Model, call: Call, err: AxisCheckError, budget: Budget, name: str) -> str | None:
    """Why a vmap's function (`name`) fails on its examples, where they are those of one
    mapped array and have one axis more than it takes (it checks with each example's
    first axis mapped too) or, examples of no axis, one fewer (it checks with the array as
    one example). One question of the engine at most, within what the fix search left of
    `budget`."""
    if not isinstance(err, FunctionError) or not isinstance(model, MapModel) or model.level.kind != "vmap":
        return None
    if call.kwargs:  # mapped at axis 0 whatever in_axes says: a nested vmap would map them again
        return None
    entries = per_argument(model.level.in_axes.value, len(call.args))
    mapped = [i for i, entry in enumerate(entries or []) if entry is not None]
    if entries is None or len(mapped) != 1:
        return None
    (i,) = mapped
    arg, axis = call.args[i], entries[i]
    if not isinstance(arg, Leaf) or arg.shape is None or type(axis) is not int or axis < 0 or not arg.shape:
        return None  # a negative entry counts from the end: another rank moves the axis it names
    model = budget.counted(model)
    shape = tuple(arg.shape)
    example = shape[:axis] + shape[axis + 1 :]
    label = call.arg_labels[i]
    if example:
        rest = example[1:]  # each example without its first axis
        fewer = (*rest[:axis], shape[axis], *rest[axis:]) if axis <= len(rest) else None
        if fewer is None or works(model, with_leaf_shape(call, i, fewer), budget) is None:
            return None
        return (
            f"{name} runs on examples of {label} of shape {format_shape(rest)}, and {label}"
            f" {format_shape(shape)} mapped at axis {axis} gives it examples of shape {format_shape(example)}:"
            f" map their first axis too, with one vmap per batch axis, {_nested(name, i, entries)}"
        )
    one = (*shape[:axis], 1, *shape[axis:])  # the array as a batch of one example
    if works(model, with_leaf_shape(call, i, one), budget) is None:
        return None
    if is_raw_key(arg.value):  # one key's uint32 words, mapped: brax#8, a batch of 2 environments whatever was asked
        return (
            f"{name} runs on {label} {format_shape(shape)} as one raw PRNG key, and in_axes maps its axis {axis},"
            f" so each example gets one of its uint32 words, not a key: for a key per example, map"
            f" jax.random.split({label}, n) (n: the batch size you mean); in_axes=None with axis_size=n shares"
            f" the key, and every example then draws the same numbers"
        )
    given = f"{label}[None]" if axis == 0 else f"jnp.expand_dims({label}, {axis})"
    return (
        f"{name} runs on {label} {format_shape(shape)} as one example, and in_axes maps its axis {axis}, so"
        f" each example is of shape {format_shape(example)}: if {label} is a single example, give it a batch"
        f" axis, {given} (shape {format_shape(one)}), or call {name} without the vmap"
    )


def _nested(name: str, i: int, entries: list[Any]) -> str:
    """The nested vmap that maps argument `i`'s examples along their first axis too, the
    inner map passing the other arguments whole (the call the engine checked)."""
    if len(entries) == 1 and entries[0] == 0:
        return f"jax.vmap(jax.vmap({name}))"
    inner = seq_repr(tuple(0 if j == i else None for j in range(len(entries))))
    return f"jax.vmap(jax.vmap({name}, in_axes={inner}), in_axes={seq_repr(tuple(entries))})"
