"""The one rule that ranks the candidates of a failed call, written once.

A candidate that does what the program means comes before one that only makes the
shapes agree. Among those that do, the reading the arguments support most comes first
(`intent`: it unmaps fewest of the arguments the user mapped, keeps the batch size most
of them share, edits fewest entries, and a later argument before the leading one); the
others that do as well are ties, shown beside it for the user to choose. More than
`MAX_SHOWN` such readings, or several that only the meaning check could tell apart:
nothing is the fix (any one would be a guess).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import jax
import numpy as np

from .._core._axes import freeze_in_axes
from .._core._dims import ArraySpec, Variadic
from .._core._errors import AxisCheckError
from .._core._explain import tables_unread
from .._core._jax_compat import is_key_array
from .._core._leaves import Call, Leaf
from .._core._shape import Shape
from .._core._steps import MapStep
from .._core._text import and_list, format_shape
from .._core._trees import PrefixMismatch, broadcast_prefix
from .._engine._levels import MapLevel, read_sizes, resolve_in_axes
from .._engine._models import MapModel, Model, Outcome, SignatureModel, chain
from .._engine._randomness import MAPPED, samplers, wraps_handed_keys
from ._suggestion import Suggestion

MAX_SHOWN = 3
"""More readings than this that the checks cannot tell apart: none is shown as the fix."""


def rank(model: Model, call: Call, found: list[Suggestion]) -> list[Suggestion]:
    """The candidates, fixes first (the most supported reading first, then its ties),
    then those that only make the shapes agree; [] when too many readings are equally
    supported. Each candidate's `shapes_only` is kept (the meaning check's verdict) or
    set here from what the arguments say was meant (see `_shapes_only`)."""
    judged = _judged(model, call, found) if isinstance(model, MapModel) else list(found)
    fixes = [s for s in judged if s.shapes_only is None]
    if len(fixes) > 1 and all(s.checked_only for s in fixes):
        # Readings that only the program's values could tell apart, and these values do
        # not (a scale of ones split along either dim): none is the fix.
        why = "the program's values on these arguments fit another reading as well, so they do not say which"
        judged = [replace(s, shapes_only=why) if s.shapes_only is None else s for s in judged]
        fixes = []
    if len(fixes) > MAX_SHOWN:
        return []
    first = fixes[:1]
    ties = [replace(s, tie=True) for s in fixes[1:]]
    return [*first, *ties, *(s for s in judged if s.shapes_only is not None)]


def _judged(model: MapModel, call: Call, found: list[Suggestion]) -> list[Suggestion]:
    """Each candidate's verdict: one the meaning check refused keeps its reason; of the
    others, one whose output rank is not the declared one, or that unmaps as many mapped
    arrays as it keeps, only makes the shapes agree; and a batch size none of the user's
    in_axes read is what was meant only where no candidate keeps one they read (the
    user pointed at the wrong axis)."""
    given = _given_sizes(model, call)
    reasons = [s.shapes_only or _shapes_only(model, call, s, found) for s in found]
    odd = [_odd_size(given, s.outcome) for s in found]
    pointed = any(why is None and not o for why, o in zip(reasons, odd, strict=True))
    judged = []
    for s, why, odd_size in zip(found, reasons, odd, strict=True):
        if why is None and pointed and odd_size:
            why = f"its batch size, {_batch_size(s.outcome)}, is none of those your in_axes read"
        judged.append(replace(s, shapes_only=why))
    return judged


def per_argument(in_axes: Any, n: int) -> list[Any] | None:
    """in_axes as one entry per positional argument (a single entry stands for all), or
    None where a tuple's length is not the arguments'."""
    entries = list(in_axes) if isinstance(in_axes, tuple) else [in_axes] * n
    return entries if len(entries) == n else None


def _declared_ranks(model: Model) -> list[int | None] | None:
    """The per-example rank of each declared output leaf (None: a variadic or any-shape
    leaf), when the innermost model declares its output."""
    *_, innermost = chain(model)
    if not isinstance(innermost, SignatureModel) or innermost.core.output is None:
        return None
    return [
        len(spec.dims) if isinstance(spec, ArraySpec) and not any(isinstance(d, Variadic) for d in spec.dims) else None
        for spec in innermost.core.output.leaves
    ]


def _given_sizes(model: MapModel, call: Call) -> frozenset[int]:
    """The batch sizes the user's own in_axes read (and axis_size): a fix whose batch size
    is none of them maps an axis the user never pointed at."""
    try:
        with tables_unread():
            axes = resolve_in_axes(model.level, call, ())
    except AxisCheckError:  # the structure itself is wrong: nothing to go by
        return frozenset()
    leaves, _ = call.flat()
    return read_sizes(model.level, leaves, axes)


def _shapes_only(model: MapModel, call: Call, s: Suggestion, found: list[Suggestion]) -> str | None:
    """Why a working candidate only makes the shapes agree, if it does: an output rank
    other than the declared one; or, with no declared inputs to vouch for the per-example
    shapes, mapped arrays of another size left unmapped where no more of the mapped
    arrays share the size it keeps, and another candidate that runs keeps theirs without
    mapping a tree this one leaves unmapped (Flax's per-example gradients keep x and y's 8
    and unmap w's 3: a fix; Flax's VAE example, logits of batch 64 against labels of 8,
    has one on each side: nothing says which batch was meant; a model and a state of 4
    against times of 8, where only a map of the model keeps the 4: the times). Nor where
    the arrays it unmaps are no example's data (`shapes_read`: a sample input given to an
    initialiser for its last dim, beside a key per member)."""
    outcome = s.outcome
    if _wrong_rank(model, outcome):
        return "its output rank is not the one the signature declares"
    size = _batch_size(outcome)
    axes = dict(s.options).get("in_axes")
    before = per_argument(model.level.in_axes.value, len(call.args))
    if size is None or not isinstance(axes, tuple) or before is None or len(axes) != len(before):
        return None
    moved = (
        _moved_to_the_keys(call, before, axes, size)
        or _keys_out_of_order(call, before, axes)
        or _key_words_first(call, before, axes, s.outcome)
    )
    if moved is not None:
        return moved
    unkeyed = _unmapped_key(call, before, axes, size) if not _keys_vary(model, call, axes, s.outcome) else None
    if unkeyed is not None:
        return unkeyed
    if _declares_inputs(model):
        return None
    partly = _partly_batched(call, before, axes, size) or _comes_back_stacked(call, before, axes, s.outcome, size)
    if partly is not None:
        return partly
    dissent = [
        i
        for i, (b, a) in enumerate(zip(before, axes, strict=True))
        if a is None and size_at(call.args[i], b) not in (None, size) and not _one_raw_key(call, i, s.outcome)
    ]
    kept_leaves = [
        leaf for arg, a in zip(call.args, axes, strict=True) if a is not None for leaf in jax.tree_util.tree_leaves(arg)
    ]
    keys_alone = bool(kept_leaves) and all(is_key_array(leaf.value) for leaf in kept_leaves)
    if keys_alone and all(size_at(call.args[i], before[i]) == 1 for i in dissent):
        return None  # one example beside a batch of split keys: an initialiser's sample input (Haiku's ensembles)
    if not dissent or len(kept_leaves) > len(dissent):
        return None
    # A reading that leaves a tree whole (a model) against one that keeps the other size:
    # the search tries the readings that leave the same trees whole before this one (they
    # unmap no more arrays and more arguments have their size), so if none of them was
    # found, the other size runs only with a tree mapped (`intent`'s second rule).
    # Never where the size it keeps is the keys' alone: keys split for another count of
    # examples (4 for 8 devices, diffusers#1451) do not outvote the data beside the tree.
    trees_left = {i for i, a in enumerate(axes) if a is None and not isinstance(call.args[i], Leaf)}
    others = {size_at(call.args[i], before[i]) for i in dissent}
    if (
        trees_left
        and not keys_alone
        and not any(_batch_size(o.outcome) in others and trees_left <= _left(o) for o in found)
    ):
        return None
    if set(dissent) <= s.shapes_read:
        return None  # the function reads their shapes alone: no example's data
    return (
        f"it unmaps {and_list([call.arg_labels[i] for i in dissent])}: as many mapped arrays have another size"
        f" as keep its batch size, {size}, so nothing says which batch you meant"
    )


def _moved_to_the_keys(call: Call, before: list[Any], axes: tuple[Any, ...], size: int) -> str | None:
    """What a candidate that maps an array along another axis changes, where the batch
    size it then shares is, of the arrays the user mapped, the random keys' alone (4 keys
    beside 8 images of 4 x 4 rows: the rows): keys split for another count of examples
    do not say which axis holds them, any more than they say the data is meant whole."""
    keyed = [
        i
        for i, b in enumerate(before)
        if isinstance(call.args[i], Leaf) and is_key_array(call.args[i].value) and size_at(call.args[i], b) == size
    ]
    others = [i for i, b in enumerate(before) if i not in keyed and size_at(call.args[i], b) not in (None, size)]
    moved = [i for i in others if type(before[i]) is int and type(axes[i]) is int and axes[i] != before[i]]
    if not keyed or not moved or len(others) != len(moved):
        return None
    name = call.arg_labels[moved[0]]
    return (
        f"it maps {name} along axis {axes[moved[0]]} to match the {size} keys, where in_axes mapped its axis"
        f" {before[moved[0]]}: keys split for another count of examples do not say which axis holds them"
    )


def _keys_out_of_order(call: Call, before: list[Any], axes: tuple[Any, ...]) -> str | None:
    """What a candidate that maps a grid of random keys along another axis changes, where
    the grid holds the dims of an array mapped beside it in another order (keys split
    `(4, 3)` for values of `(3, 4)` under a nested vmap): it runs, but pairs each example
    with the key at the transposed place. The grid's order is the mistake; splitting in
    the data's own shape keeps the pairing the program wrote."""
    for i, (b, a) in enumerate(zip(before, axes, strict=True)):
        keys = call.args[i]
        if type(b) is not int or type(a) is not int or a == b or not isinstance(keys, Leaf):
            continue
        if not is_key_array(keys.value) or keys.shape is None or len(keys.shape) < 2:
            continue
        grid = tuple(keys.shape)
        for j, other in enumerate(call.args):
            if j == i or axes[j] is None or not isinstance(other, Leaf) or other.shape is None:
                continue
            dims = tuple(other.shape[: len(grid)])
            if dims != grid and sorted(dims) == sorted(grid):
                name, other_name = call.arg_labels[i], call.arg_labels[j]
                return (
                    f"it maps {name}'s axis {a}, so each example gets the key at another place of the grid:"
                    f" {name} was split in the shape {grid}, where {other_name}'s dims are {dims} (split it in"
                    f" {other_name}'s shape, jax.random.split(key, {dims}), to give each example its own place's key)"
                )
    return None


def _key_words_first(call: Call, before: list[Any], axes: tuple[Any, ...], outcome: Outcome | None) -> str | None:
    """What a candidate that maps raw keys held with their two uint32 words first, `(2, n)`,
    along their last axis changes: it reads them, but `jax.random.split` makes raw keys
    `(n, 2)`, words last. Keys that come back words first were moved there, most often by
    a single int out_axes that also placed the keys a map returned: the keys' own out_axes
    entry is what keeps them as they went in, and this call's in_axes is not the mistake."""
    replay = outcome.replay if outcome is not None else None
    for i, (b, a) in enumerate(zip(before, axes, strict=True)):
        keys = call.args[i]
        if type(a) is not int or a == b or not isinstance(keys, Leaf) or keys.shape is None:
            continue
        if len(keys.shape) != 2 or keys.shape[0] != 2 or a not in (1, -1):
            continue
        if getattr(keys.value, "dtype", None) != np.uint32 or replay is None or not wraps_handed_keys(replay.closed):
            continue
        name = call.arg_labels[i]
        return (
            f"{name} holds raw keys with their two uint32 words first, {format_shape(keys.shape)}, where"
            f" jax.random.split gives ({keys.shape[1]}, 2): keys returned by a map whose single int out_axes moved"
            f" their words first are mapped as they came back; give {name} its own out_axes entry (0) where the map"
            " returns it, so that it comes back as it went in"
        )
    return None


def _comes_back_stacked(
    call: Call, before: list[Any], axes: tuple[Any, ...], outcome: Outcome | None, size: int
) -> str | None:
    """What a candidate that passes whole a state the user mapped changes, where the
    function returns it and the map stacks it, one per example (an ensemble's Equinox
    `State`, made once for all members by the constructor's out_axes None): it runs this
    call, but a state is threaded from call to call, and it comes back with another shape
    than it went in. It is meant per example from where it was made. (Other trees shaped
    like an argument, per-example gradients of parameters passed whole, are meant stacked.)"""
    outputs = outcome.shapes if outcome is not None and type(outcome.shapes) is tuple else ()
    for i, (b, a) in enumerate(zip(before, axes, strict=True)):
        arg = call.args[i]
        if a is not None or b is None or not _threaded_state(arg):
            continue
        structure: Any = jax.tree_util.tree_structure(arg)
        shapes = [(size, *leaf.shape) for leaf in jax.tree_util.tree_leaves(arg) if leaf.shape is not None]
        for j, out in enumerate(outputs):
            leaves = jax.tree_util.tree_leaves(out, is_leaf=lambda x: isinstance(x, Shape))
            same = jax.tree_util.tree_structure(out, is_leaf=lambda x: isinstance(x, Shape)) == structure
            if same and [tuple(leaf) for leaf in leaves] == shapes:
                name = call.arg_labels[i]
                return (
                    f"it passes {name}, a state threaded from call to call, whole, and the function returns it as"
                    f" output[{j}], which the map stacks: it goes in as one and comes back as {size}, so the next"
                    f" call that passes it on fails; if it is meant one per example, make it so where it is created"
                    " (an out_axes None there made one for all)"
                )
    return None


def _threaded_state(arg: Any) -> bool:
    """Whether an argument is an Equinox `State`: what a stateful layer reads and returns,
    threaded by the program from call to call."""
    equinox = sys.modules.get("equinox")
    return equinox is not None and isinstance(arg, equinox.nn.State)


def _keys_vary(model: MapModel, call: Call, axes: tuple[Any, ...], outcome: Outcome | None) -> bool:
    """Whether, as the candidate's trace records the function, every sampler's key varies
    along the map: a key passed whole and folded with each example's data
    (`fold_in(key, step)`), or with its index along a named map (`fold_in(key,
    axis_index('devices'))`), gives each example its own draws."""
    replay = outcome.replay if outcome is not None else None
    if replay is None:
        return False
    try:
        with tables_unread():
            leaf_axes = resolve_in_axes(replace(model.level, in_axes=freeze_in_axes(axes)), call, ())
    except AxisCheckError:
        return False
    along = model.level.axis_name if model.level.axis_name is not None else MAPPED
    varying = [frozenset({along}) if leaf_axes[p] is not None else frozenset() for p in replay.dyn]
    found = samplers(replay.closed, varying)
    return bool(found) and all(along in sampler.key_varies for sampler in found)


def _one_raw_key(call: Call, i: int, outcome: Outcome | None) -> bool:
    """Whether argument `i` is one raw key, a `uint32[2]` the candidate's trace makes a key
    of as it was handed: its 2 is key data, no batch size."""
    arg = call.args[i]
    replay = outcome.replay if outcome is not None else None
    if replay is None or not isinstance(arg, Leaf) or arg.shape != (2,) or not is_key_array(arg.value):
        return False
    return wraps_handed_keys(replay.closed)


def _unmapped_key(call: Call, before: list[Any], axes: tuple[Any, ...], size: int) -> str | None:
    """What a candidate that passes whole a random key the user mapped changes: every
    example then draws the same random numbers from it (the draws
    `SharedRandomnessWarning` reports). Mapping a key says one key per example was meant;
    the remedy is to split it, which no in_axes entry does."""
    for i, (b, a) in enumerate(zip(before, axes, strict=True)):
        arg = call.args[i]
        if a is None and b is not None and isinstance(arg, Leaf) and is_key_array(arg.value):
            name = call.arg_labels[i]
            return (
                f"it passes {name}, a random key you mapped, whole: every example would draw the same random"
                f" numbers from it (split it into one key per example, jax.random.split({name}, {size}), and map that)"
            )
    return None


def _partly_batched(call: Call, before: list[Any], axes: tuple[Any, ...], size: int) -> str | None:
    """What a candidate that unmaps a mapped tree whole changes where some of the tree's
    arrays have the batch size at their entry's axis and others have no such axis at all
    (an Equinox `State` holding a vmapped layer's batched state beside a plain layer's
    scalar count): each example would get all of the batched ones. The tree is partly
    per example, which no single entry for it says. A tree whose every array has the
    axis (parameters, one of whose dims is the batch size by chance) is left whole as
    likely as not."""
    for i, (b, a) in enumerate(zip(before, axes, strict=True)):
        arg = call.args[i]
        if a is not None or b is None or isinstance(arg, Leaf):
            continue
        entries = broadcast_prefix(b, arg, lambda x: x is None or type(x) is int)
        if isinstance(entries, PrefixMismatch):
            continue
        leaves = jax.tree_util.tree_leaves(arg)
        sizes = [size_at(leaf, e) for leaf, e in zip(leaves, entries, strict=True)]
        batched = [leaf for leaf, at in zip(leaves, sizes, strict=True) if at == size]
        if batched and None in sizes:
            name = call.arg_labels[i]
            shapes = and_list([f"{leaf.label} {tuple(leaf.shape)}" for leaf in batched[:3]])
            return (
                f"it leaves {name} unmapped whole, where {shapes} {'has' if len(batched) == 1 else 'have'} the batch"
                f" size {size} at {'its' if len(batched) == 1 else 'their'} mapped axis: each example would get all"
                f" {size} (only part of {name} is per example: pass that part alone to the map)"
            )
    return None


def _left(s: Suggestion) -> set[int]:
    """The arguments a candidate's in_axes leaves unmapped."""
    axes = dict(s.options).get("in_axes")
    return {i for i, a in enumerate(axes) if a is None} if isinstance(axes, tuple) else set()


def size_at(arg: Any, axis: Any) -> int | None:
    """The size of an array argument along its in_axes entry (None: not one array, or no such axis)."""
    if not isinstance(arg, Leaf) or arg.shape is None or type(axis) is not int:
        return None
    return arg.shape[axis] if -len(arg.shape) <= axis < len(arg.shape) else None


def _declares_inputs(model: Model) -> bool:
    """Whether the innermost model declares the arguments' per-example shapes (a
    signature), which a working candidate then matches."""
    *_, innermost = chain(model)
    return isinstance(innermost, SignatureModel)


def _wrong_rank(model: MapModel, outcome: Outcome | None) -> bool:
    """Whether a working candidate's output rank is other than the declared one."""
    declared = _declared_ranks(model)
    if outcome is None:
        return False
    levels = sum(1 for m in chain(model) if isinstance(m, MapModel))
    outs = jax.tree_util.tree_leaves(outcome.shapes, is_leaf=lambda x: isinstance(x, Shape))
    return (
        declared is not None
        and len(declared) == len(outs)
        and any(r is not None and len(o) != r + levels for o, r in zip(outs, declared, strict=True))
    )


def _batch_size(outcome: Outcome | None) -> int | None:
    if outcome is None:
        return None
    step = next((st for st in outcome.steps if isinstance(st, MapStep)), None)
    return step.axis_size if step is not None else None


def _odd_size(given: frozenset[int], outcome: Outcome | None) -> bool:
    """Whether a working candidate's batch size is none of those the user's own in_axes
    read: it maps an axis the user never pointed at."""
    size = _batch_size(outcome)
    return bool(given) and size is not None and size not in given


def intent(original: list[Any], axes: tuple[Any, ...], level: MapLevel, call: Call) -> tuple[int, int, int, int, int]:
    """How far candidate in_axes stray from what the call's arguments say was meant,
    lower first (the rule every axes fix is ranked by):

    1. how many arguments the user mapped it leaves unmapped (each was mapped for a reason);
    2. of those, how many are single arrays: a tree of several arrays (a model, a params
       dict) is the likelier to be mapped only because one entry, or a default such as
       Equinox's `if_array(0)`, covers every argument (per-example gradients map the data,
       not the parameters);
    3. how few of the arguments the user mapped have an axis of its batch size at all (the
       size most of them share is the batch: `(0, 1)` on (10, 4) and (10, 2) meant 10, not 2);
    4. how many entries it changes (the smallest edit);
    5. among equals, an edit of a later argument first: the leading argument is usually
       the data whose layout the program sets, and the arguments after it are fitted to
       it (JAX's SPMD MNIST example: labels laid out (per device, devices) next to images
       laid out (devices, per device, ...) want `(0, 1)`, not `(1, 0)`).
    """
    left = [i for i, (o, a) in enumerate(zip(original, axes, strict=True)) if o is not None and a is None]
    arrays_left = sum(1 for i in left if isinstance(call.args[i], Leaf))
    leaves, _ = call.flat()
    sizes = read_sizes(level, leaves, resolve_in_axes(level, call, ()))
    size = next(iter(sizes)) if len(sizes) == 1 else None
    support = 0
    for i, entry in enumerate(original):
        if entry is not None and size is not None:
            shapes = [leaf.shape for leaf in jax.tree_util.tree_leaves(call.args[i]) if leaf.shape is not None]
            support += any(size in shape for shape in shapes)
    edited = [i for i, (o, a) in enumerate(zip(original, axes, strict=True)) if o != a]
    return len(left), arrays_left, -support, len(edited), -min(edited, default=0)
