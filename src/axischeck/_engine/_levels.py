"""Mapping levels: one `vmap` or `pmap` applied to a call, inputs in and outputs out.

A `MapLevel` resolves its in_axes against the call's leaves, checks ranks and batch
sizes in JAX's order and strips the mapped axes (`map_inputs`); after the per-example
model has answered, it inserts the batch dim per out_axes (`map_outputs`). Every
failure carries the derivation so far, so messages name the user's arguments and axes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import jax

from .._core._axes import Axes, _is_axis, canonical_axis
from .._core._errors import ArgumentError, AxisCheckError, AxisCheckWarning, OutputError, Place, warn_at_user
from .._core._explain import tables_read
from .._core._jax_compat import VMAP_MATCHES_CONTAINERS_BY_POSITION
from .._core._job import Job
from .._core._leaves import Call, Leaf, abstract, resharded, scalar_struct
from .._core._scene import Scene
from .._core._shape import Shape
from .._core._steps import ArgRows, MapStep, OutRow, Step
from .._core._text import and_list, format_shape, int_text
from .._core._trees import PrefixMismatch, broadcast_by_position, broadcast_prefix, hashable, leaf_paths, seq_repr


@dataclass(frozen=True, slots=True)
class MapLevel:
    """One mapping level (`vmap`, or `pmap` over devices): validated options and names.

    A pmap level differs from a vmap level only where JAX's pmap does
    (docs/jax-semantics.md#pmap): `devices` bounds the size, `static` argument positions are not mapped, and
    negative axes and `out_axes=None` on mapped outputs, which JAX answers silently and
    wrongly, are reported. In a job of several processes (`job`), the size is each
    process's share of the devices instead, and axis_size is the global size.
    """

    in_axes: Axes
    out_axes: Axes
    axis_size: int | None = None
    axis_name: Hashable | None = None
    sum_match: bool = False
    fn_name: str = "f"
    symbol: str = "B"
    kind: Literal["vmap", "pmap"] = "vmap"
    devices: int | None = None  # pmap: how many devices the size may use
    job: Job | None = None  # pmap in a job of several processes: how they share the devices
    static: tuple[int, ...] = ()  # pmap: static_broadcasted_argnums (non-negative)
    spmd: frozenset[Hashable] = frozenset()  # vmap: spmd_axis_name's mesh axes (shapes unchanged)

    def describe(self) -> str:
        parts = [self.fn_name] if self.fn_name else []
        if self.kind == "pmap" and self.axis_name is not None:
            parts.append(f"axis_name={self.axis_name!r}")
        parts += [f"in_axes={self.in_axes}", f"out_axes={self.out_axes}"]
        if self.axis_size is not None:
            parts.append(f"axis_size={self.axis_size}")
        if self.kind == "vmap" and self.axis_name is not None:
            parts.append(f"axis_name={self.axis_name!r}")
        if self.static:
            parts.append(f"static_broadcasted_argnums={self.static}")
        return f"{self.kind}(" + ", ".join(parts) + ")"


# --------------------------------------------------------------------------- inputs


def axes_of(level: MapLevel, axes: Any, tree: Any) -> list[Any] | PrefixMismatch:
    """Each leaf of `tree` paired with its axis from `axes` (an in_axes entry or out_axes),
    as the level's transform pairs them: a strict tree prefix, or for vmap from jax 0.12.1
    containers matched by position where the strict prefix fails. The mismatch reported is
    the strict one, as JAX's error is."""
    got = broadcast_prefix(axes, tree, _is_axis)
    if isinstance(got, PrefixMismatch) and level.kind == "vmap" and VMAP_MATCHES_CONTAINERS_BY_POSITION:
        by_position = broadcast_by_position(axes, tree, _is_axis)
        if by_position is not None:
            return by_position
    return got


def _mismatch_error(
    level: MapLevel, where: str, owner: str, m: PrefixMismatch, trail: tuple[Step, ...], cls: type[AxisCheckError]
) -> AxisCheckError:
    by_position = level.kind == "vmap" and VMAP_MATCHES_CONTAINERS_BY_POSITION
    rule = "containers must have as many children" if by_position else "lists and tuples differ"
    return Scene(trail, level.describe()).error(
        cls,
        f"{where}{m.path} is {m.spec_kind}, but {owner}{m.path} is {m.value_kind} ({m.detail});"
        f" {where} must be a tree prefix of it ({rule}, dict keys must match)",
    )


def _several_axes(entry: Any) -> bool:
    """Whether an in_axes entry is a tuple of axes (`(0, 1)`): meant as two axes of one array."""
    return isinstance(entry, tuple) and len(entry) > 1 and all(type(a) is int for a in entry)


def _several_axes_error(level: MapLevel, where: str, call: Call, i: int, trail: tuple[Step, ...]) -> AxisCheckError:
    """jax#1168: `in_axes=((0, 1), ...)` for an array read as one axis per nested map."""
    arg: Leaf = call.args[i]
    entry = _entry_of(level.in_axes.value, i)
    what = "a Python scalar" if isinstance(arg.value, (bool, int, float, complex)) else "an array"
    nested = _nested_maps(level, call)
    fix = f"nest one {level.kind} per axis, the outermost mapping the first: {nested}" if nested else None
    return Scene(trail, level.describe()).error(
        ArgumentError,
        f"{where} is {entry!r}, several axes for {call.arg_labels[i]}, {what}; one {level.kind} maps one"
        " axis of each argument (a tuple entry is read as a tuple argument's entries)",
        hint=fix,
    )


def _entry_of(spec: Any, i: int) -> Any:
    return spec[i] if isinstance(spec, tuple) else spec


def _nested_maps(level: MapLevel, call: Call) -> str | None:
    """The nested vmaps that map each argument's axes in turn, when every argument is an
    array given the same number of distinct axes (negative ones counted from its end) and
    each level's axes agree on one batch size: the nest JAX runs. None otherwise (pmap
    too: a pmap inside a pmap is rarely what one means)."""
    if level.kind != "vmap" or not call.args:
        return None
    spec = level.in_axes.value
    canonical: list[tuple[int, ...]] = []
    for i, arg in enumerate(call.args):
        entry = _entry_of(spec, i)
        if not (isinstance(arg, Leaf) and arg.shape is not None and _several_axes(entry)):
            return None
        rank = len(arg.shape)
        if not all(-rank <= a < rank for a in entry):
            return None
        axes = tuple(a % rank for a in entry)
        if len(set(axes)) != len(axes) or (canonical and len(axes) != len(canonical[0])):
            return None
        canonical.append(axes)
    for k in range(len(canonical[0])):
        if len({arg.shape[axes[k]] for arg, axes in zip(call.args, canonical, strict=True)}) != 1:
            return None
    # Each level removes its axis: a later axis past an earlier one moves down by one.
    levels = [tuple(e[k] - sum(a < e[k] for a in e[:k]) for e in canonical) for k in range(len(canonical[0]))]
    nested = level.fn_name
    for axes in reversed(levels):
        nested = f"jax.vmap({nested}, in_axes={seq_repr(axes)})"
    return nested


def resolve_in_axes(level: MapLevel, call: Call, trail: tuple[Step, ...]) -> list[int | None]:
    """The in_axes entry of every flat leaf (kwargs always 0), as `jax.vmap` resolves it."""
    spec = level.in_axes.value
    if level.kind == "pmap":
        _pmap_argument_checks(level, call, trail)
        if isinstance(spec, list):  # pmap keeps a top-level list: JAX's prefix check fails
            raise Scene(trail, level.describe()).error(
                ArgumentError,
                f"pmap in_axes is a list, {spec!r}, but the positional arguments form a tuple;"
                " unlike vmap, pmap does not read a top-level list as a tuple",
                hint=f"write in_axes={tuple(spec)!r}",
            )
    if isinstance(spec, tuple) and len(spec) != len(call.args):
        unmatched = call.arg_labels[len(spec) :]
        which = f" ({and_list(unmatched)} {'has' if len(unmatched) == 1 else 'have'} no entry)" if unmatched else ""
        raise Scene(trail, level.describe()).error(
            ArgumentError,
            f"in_axes has {len(spec)} entries but the function got {len(call.args)} positional"
            f" argument{'s' if len(call.args) != 1 else ''}{which}; a tuple in_axes needs one entry per"
            " positional argument (keyword arguments are always mapped over axis 0)",
        )
    axes: list[int | None] = []
    for i, arg in enumerate(call.args):
        if i in level.static:  # pmap ignores the in_axes entry of a static argument
            axes.extend([None] * len(jax.tree_util.tree_leaves(arg)))
            continue
        entry = spec[i] if isinstance(spec, tuple) else spec
        got = axes_of(level, entry, arg)
        if isinstance(got, PrefixMismatch):
            where = f"in_axes[{i}]" if isinstance(spec, tuple) else "in_axes"
            if isinstance(arg, Leaf) and _several_axes(entry):
                raise _several_axes_error(level, where, call, i, trail)
            raise _mismatch_error(level, where, f"argument {call.arg_labels[i]}", got, trail, ArgumentError)
        axes.extend(got)
    for key in sorted(call.kwargs):
        axes.extend([0] * len(jax.tree_util.tree_leaves(call.kwargs[key])))
    return axes


def _pmap_argument_checks(level: MapLevel, call: Call, trail: tuple[Step, ...]) -> None:
    """pmap's rules for static_broadcasted_argnums (pmap.py): passed positionally, hashable."""
    for i in level.static:
        if i >= len(call.args):
            raise Scene(trail, level.describe()).error(
                ArgumentError,
                f"static_broadcasted_argnums names argument {i}, but only {len(call.args)} positional"
                " argument(s) were passed; static arguments must be passed positionally",
            )
        value = jax.tree_util.tree_map(lambda leaf: leaf.value, call.args[i])  # the object itself
        if not hashable(value):
            raise Scene(trail, level.describe()).error(
                ArgumentError,
                f"static argument {call.arg_labels[i]} is not hashable; pmap needs hashable static arguments",
            )


def _pmap_size_checks(
    level: MapLevel, leaves: list[Leaf], axes: list[int | None], fail: Callable[..., AxisCheckError]
) -> None:
    """What pmap rejects (or answers wrongly) that vmap accepts."""
    if not any(a is not None and leaf.shape is not None for leaf, a in zip(leaves, axes, strict=True)):
        raise fail(
            ArgumentError,
            "pmap needs at least one argument with a mapped axis (axis_size cannot stand in for one)",
            hint="map at least one array argument (an int in in_axes)",
        )
    for leaf, axis in zip(leaves, axes, strict=True):
        if axis is not None and axis < 0 and leaf.shape is not None:
            raise fail(
                ArgumentError,
                f"pmap in_axes entry {int_text(axis)} for {leaf.label} is negative; JAX 0.10's pmap shards"
                " axis 0 but squeezes the negative axis, so it fails or silently gives wrong shapes",
                hint=f"write the axis counted from the front: {axis + len(leaf.shape)}",
            )


def map_inputs(level: MapLevel, call: Call, trail: tuple[Step, ...]) -> tuple[int, Call, MapStep, list[int | None]]:
    """Check ranks and batch sizes; strip the mapped axes. Mirrors api.py:vmap_f."""
    leaves, treedef = call.flat()
    axes = resolve_in_axes(level, call, trail)
    keywords = len(jax.tree_util.tree_leaves(dict(call.kwargs))) if call.kwargs else 0
    canon, size = _checked(level, leaves, axes, trail, first_keyword=len(leaves) - keywords)
    new_leaves = []
    per_example: list[Shape | None] = []
    stripped: dict[tuple[int, int], Shape] = {}  # leaves of one shape share it: strip it once
    traced_scalars = _traced_scalars(level, call, leaves)
    for k, (leaf, c) in enumerate(zip(leaves, canon, strict=True)):
        if k in traced_scalars:  # pmap traces what it does not map: a Python scalar too
            new_leaves.append(replace(leaf, value=scalar_struct(leaf.value)))
            per_example.append(leaf.shape)
            continue
        if c is None or leaf.shape is None:
            new_leaves.append(leaf)
            per_example.append(leaf.shape)  # None for a mapped non-array: refused above
            continue
        per = stripped.get((id(leaf.shape), c))
        if per is None:
            per = stripped[id(leaf.shape), c] = leaf.shape.delete(c)
        new_leaves.append(
            Leaf(
                leaf.label,
                per,
                resharded(leaf.value, per, abstract(leaf.value).dtype, drop=c),
                leaf.user_shape,
                leaf.origin[:c] + leaf.origin[c + 1 :],
            )
        )
        per_example.append(per)
    rows = ArgRows(_labels(leaves), _shapes(leaves), tuple(axes), tuple(per_example))
    step = MapStep(level.describe(), level.symbol, size, rows, keywords=frozenset(call.kwargs))
    return size, call.rebuilt(treedef, new_leaves), step, canon


def _traced_scalars(level: MapLevel, call: Call, leaves: list[Leaf]) -> set[int]:
    """The flat positions of the Python scalars a pmap passes to the function as tracers:
    every one not in a static argument (pmap is a jit: only static_broadcasted_argnums
    reach the function as Python values, so `range(n)` of another fails in JAX). vmap
    passes an unmapped Python scalar through as it is."""
    if level.kind != "pmap":
        return set()
    static: set[int] = set()
    start = 0
    for i, arg in enumerate(call.args):
        count = len(jax.tree_util.tree_leaves(arg))
        if i in level.static:
            static.update(range(start, start + count))
        start += count
    return {
        k for k, leaf in enumerate(leaves) if k not in static and isinstance(leaf.value, (bool, int, float, complex))
    }


def _labels(leaves: list[Leaf]) -> tuple[str, ...]:
    return tuple(leaf.label for leaf in leaves)


def _shapes(leaves: list[Leaf]) -> tuple[Shape | None, ...]:
    return tuple(leaf.shape for leaf in leaves)


def takes(level: MapLevel, call: Call) -> bool:
    """Whether `map_inputs` takes this call, found without stripping an axis or explaining
    a refusal: the fix search asks it of every candidate before it spends a trace on it."""
    leaves, _ = call.flat()
    try:
        axes = resolve_in_axes(level, call, ())
    except AxisCheckError:
        return False
    if len(_batch_sizes(level, leaves, axes)) != 1:
        return False  # `_checked` refuses too, but first names every mapped axis, for nobody
    try:
        _checked(level, leaves, axes, ())
    except AxisCheckError:
        return False
    return True


def _batch_sizes(level: MapLevel, leaves: list[Leaf], axes: list[int | None]) -> frozenset[int]:
    """The sizes `_checked` compares, when it gets that far (axes it cannot read, a
    negative pmap axis or a mapped non-array make it refuse first): the readable mapped
    axes' sizes and axis_size."""
    given = _compared_axis_size(level)
    return read_sizes(level, leaves, axes) | ({given} if given is not None else set())


def _compared_axis_size(level: MapLevel) -> int | None:
    """The axis_size the mapped sizes must equal: none for a pmap in a job of several
    processes, where it is the global size across them (pmap.py:_get_mesh_devices)."""
    if level.axis_size is None or (level.kind == "pmap" and level.job is not None):
        return None
    return int(level.axis_size)


def _checked(
    level: MapLevel,
    leaves: list[Leaf],
    axes: list[int | None],
    trail: tuple[Step, ...],
    first_keyword: int | None = None,
) -> tuple[list[int | None], int]:
    """Each leaf's canonical mapped axis (None: not mapped) and the batch size, checked
    in JAX's order (ranks, then sizes). Leaves from `first_keyword` on were passed by
    keyword: in_axes cannot name them, so no fix gives them an entry."""
    scene = Scene(trail, level.describe())

    def fail(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
        # The table says "batch size undetermined" only when the sizes conflict or nothing
        # sets one: a mistake elsewhere (a rank, a str argument, pmap's device count)
        # leaves the size the readable axes agree on.
        size = _agreed_size(level, leaves, axes)
        rows = (
            ArgRows(_labels(leaves), _shapes(leaves), tuple(axes), (None,) * len(leaves))
            if tables_read()
            else ArgRows()  # a trial of the fix search: nobody reads its table
        )
        keywords = frozenset(leaf.label.partition("[")[0] for leaf in leaves[first_keyword or len(leaves) :])
        step = MapStep(level.describe(), level.symbol, size, rows, keywords=keywords)
        return scene.then(step).error(cls, problem, **facts)

    if level.kind == "pmap":
        _pmap_size_checks(level, leaves, axes, fail)
    if not leaves and level.axis_size is None:
        raise fail(
            ArgumentError,
            "there is nothing to map: no argument holds an array, and axis_size is not given",
            hint="pass at least one array argument, or give axis_size",
        )
    canon: list[int | None] = []
    for i, (leaf, axis) in enumerate(zip(leaves, axes, strict=True)):
        if axis is None or leaf.shape is None:
            canon.append(None)
            continue
        c = canonical_axis(axis, len(leaf.shape))
        if c is None:
            need = axis + 1 if axis >= 0 else -axis
            by_keyword = first_keyword is not None and i >= first_keyword
            asked = (
                f"{leaf.label} is passed by keyword, so {level.kind} maps it over axis {int_text(axis)}"
                if by_keyword
                else f"in_axes entry {int_text(axis)} for {leaf.label} asks for axis {int_text(axis)}"
            )
            raise fail(
                ArgumentError,
                f"{asked}, but {leaf.label} has shape {format_shape(leaf.shape)} of rank {len(leaf.shape)}"
                f" (it needs rank >= {int_text(need)})",
                places=(leaf.place(None, leaf.shape),),
                hint=_keyword_fix(level, leaf) if by_keyword else _range_fix(leaf, axis),
            )
        canon.append(c)
    # Indices and ints, not a (leaf, axis) pair per mapped leaf: no object per leaf to collect.
    mapped = [i for i, c in enumerate(canon) if c is not None]  # canon is None for non-arrays
    sizes = [int(leaves[i].shape[canon[i]]) for i in mapped]  # type: ignore[index]
    given = _compared_axis_size(level)
    distinct = set(sizes) | ({given} if given is not None else set())
    if not distinct:
        _reject_mapped_non_arrays(leaves, axes, fail)
        raise fail(
            ArgumentError,
            "every in_axes entry is None, so there is no batch size",
            hint="map at least one argument (an int in in_axes), or give axis_size",
        )
    if len(distinct) > 1:
        text, places = _disagreement(leaves, canon, mapped, sizes)
        if given is not None:
            places = (Place("axis_size", None, None, given),) + places
            text = f"axis_size={given}; {text}"
        raise fail(
            ArgumentError,
            f"the mapped axes disagree on the batch size: {text}",
            symbol=f"batch size {level.symbol}",
            places=places,
        )
    size = int(next(iter(distinct)))
    _reject_mapped_non_arrays(leaves, axes, fail)
    if level.kind == "pmap" and level.job is not None and size > 0:
        _check_share(level, level.job, size, leaves[mapped[0]], cast(int, canon[mapped[0]]), fail)
    elif level.kind == "pmap" and (size == 0 or (level.devices is not None and size > level.devices)):
        raise fail(
            ArgumentError,
            f"pmap maps an axis of size {size} over devices, but {level.devices} device(s) are"
            " available: the size must be between 1 and the device count",
            symbol=f"batch size {level.symbol}",
            places=tuple(leaves[i].place(canon[i], sizes[0]) for i in mapped[:1]),
            hint=f"map at most {level.devices} per call (reshape to (devices, -1, ...) and vmap inside),"
            f" or run with {size} devices",
        )
    return canon, size


def _check_share(
    level: MapLevel, job: Job, size: int, leaf: Leaf, axis: int, fail: Callable[..., AxisCheckError]
) -> None:
    """pmap in a job of several processes (docs/jax-semantics.md#jobs-of-several-processes):
    each process passes its own part and maps it over its own devices, so the size a
    process maps must be the number of the mesh's devices that are its own. JAX says
    only `AssertionError` or "cannot select an axis to squeeze out" otherwise. Traced
    (inside jit or another transform), pmap uses this process's devices alone."""
    where = leaf.place(axis, size)
    mapped = f"axis {axis} of {leaf.label} (size {size})"
    facts: dict[str, Any] = {"symbol": f"batch size {level.symbol}", "places": (where,), "job": job}
    reshape = "reshape to (jax.local_device_count(), -1, ...) and vmap inside"
    if job.local_only:
        if size <= job.local_devices:
            return
        raise fail(
            ArgumentError,
            f"pmap maps {mapped} over devices, but traced inside jax.jit or another transform, a pmap in a job"
            f" of {job.processes} processes runs on this process's {job.local_devices} local devices alone"
            f" (of the job's {job.global_devices}): the size must be between 1 and {job.local_devices}",
            hint=f"map at most {job.local_devices} per call ({reshape})",
            **facts,
        )
    held = job.held_here(size, level.axis_size)
    if held == size:
        return
    share = job.share
    if share == 0:  # JAX fails converting this process's arguments: it has no device to put them on
        raise fail(
            ArgumentError,
            f"pmap maps {mapped} over devices, but this is process {job.process} of a job of {job.processes},"
            f" and none of the {job.global_devices} devices in pmap's devices= is this process's",
            hint="give pmap the same devices= on every process, with as many of each process's devices as it maps",
            **facts,
        )
    own = "local devices" if share == job.local_devices else "devices in pmap's devices="
    mesh = job.mesh(size, level.axis_size)
    over = (
        f"all {len(mesh)} devices of the job" if len(mesh) == job.global_devices else f"the first {len(mesh)} devices"
    )
    laid = f"JAX lays this pmap over {over}, {held} of them this process's"
    why = f"; {size} is the job's global device count" if size == job.global_devices and size != share else ""
    problem = (
        f"pmap maps {mapped} over devices, but this is process {job.process} of a job of {job.processes}:"
        f" each process passes its own part, one slice per device of its {share} {own}, so every process"
        f" maps {share}{why} ({laid})"
    )
    shape = leaf.shape or ()
    if size == share:  # the size is right: the global axis_size laid the mesh elsewhere
        hint = f"leave axis_size out: in a job it is the global size, here {share * job.processes}"
    elif size > share and size % share == 0:
        split = Shape((*shape[:axis], share, size // share, *shape[axis + 1 :]))
        hint = f"map {share} per call on each process: {reshape}, here to {split}"
        if size == job.global_devices:
            hint += f"; or, if {leaf.label} is the whole job's batch, pass each process only its own {share}"
    elif size > share:
        hint = f"map {share} per call on each process: pad axis {axis} to a multiple of {share}, then {reshape}"
    else:
        hint = (
            f"map {share} per call on each process (pad axis {axis} to {share}), or give pmap devices= listing"
            f" {size} device(s) of each process, the same list on every process"
        )
    raise fail(ArgumentError, problem, hint=hint, **facts)


def _disagreement(
    leaves: list[Leaf], canon: list[int | None], mapped: list[int], sizes: list[int]
) -> tuple[str, tuple[Place, ...]]:
    """The batch sizes the mapped leaves (`mapped`, with `sizes`) disagree on, the most
    common first (ties in the order met): each with its first `LISTED_AXES` axes and how
    many more (the text), and the first of them (a `Place`). As JAX's own message does,
    a size 16,000 leaves agree on is summed up, not spelled out: the odd one stays in
    sight. One `Place` per size, not per leaf."""
    groups: dict[int, list[int]] = {}
    for i, size in zip(mapped, sizes, strict=True):
        groups.setdefault(size, []).append(i)
    ordered = sorted(groups.items(), key=lambda group: -len(group[1]))  # stable: ties in the order met

    def where(i: int) -> str:
        c = cast(int, canon[i])
        return f"axis {_batched_axis(leaves[i], c)} of {leaves[i].label}"

    def listed(group: list[int]) -> str:
        more = len(group) - LISTED_AXES
        rest = f" and {more} more {'axis' if more == 1 else 'axes'}" if more > 0 else ""
        return ", ".join(map(where, group[:LISTED_AXES])) + rest

    text = "; ".join(f"size {size} at {listed(group)}" for size, group in ordered)
    return text, tuple(leaves[group[0]].place(canon[group[0]], size) for size, group in ordered)


LISTED_AXES = 5
"""Axes a batch-size disagreement names per size; the rest are counted."""


def _batched_axis(leaf: Leaf, axis: int) -> int | None:
    """The axis of the user's array that `axis` of `leaf` came from (as `Leaf.place` says)."""
    return leaf.origin[axis] if axis < len(leaf.origin) else None


def read_sizes(level: MapLevel, leaves: list[Leaf], axes: list[int | None]) -> frozenset[int]:
    """The sizes of the mapped axes that can be read (in range), and a vmap's axis_size:
    the batch sizes these in_axes point at, agreeing or not."""
    pmap = level.kind == "pmap"
    sizes = {  # an axis in range indexes the shape as it is, negative or not
        shape[a]
        for leaf, a in zip(leaves, axes, strict=True)
        if a is not None
        and (shape := leaf.shape) is not None
        and -len(shape) <= a < len(shape)
        and not (pmap and a < 0)  # pmap misreads those
    }
    if level.kind == "vmap" and level.axis_size is not None:  # pmap's axis_size stands in for nothing
        sizes.add(int(level.axis_size))
    return frozenset(sizes)


def _agreed_size(level: MapLevel, leaves: list[Leaf], axes: list[int | None]) -> int | None:
    """The batch size every readable mapped axis (and a vmap's axis_size) agrees on, for an
    error raised before the size is settled; None when they conflict or none is readable."""
    sizes = read_sizes(level, leaves, axes)
    return int(next(iter(sizes))) if len(sizes) == 1 else None


def _reject_mapped_non_arrays(leaves: list[Leaf], axes: list[int | None], fail: Callable[..., AxisCheckError]) -> None:
    for leaf, axis in zip(leaves, axes, strict=True):
        if axis is not None and leaf.shape is None:
            raise fail(
                ArgumentError,
                f"{leaf.label} is a {_kind_of(leaf.value)}, not an array or a pytree of arrays, so it cannot be mapped"
                f" (in_axes entry {axis})",
                hint=f"give {leaf.label} the in_axes entry None to pass it through unmapped",
            )


def _kind_of(value: Any) -> str:
    """`str ('tanh')`: a value's type, and the value itself where it is a short string."""
    kind = type(value).__name__
    return f"{kind} ({value!r})" if isinstance(value, str) and len(value) <= 40 else kind


def _keyword_fix(level: MapLevel, leaf: Leaf) -> str:
    """JAX maps every keyword argument over axis 0 and in_axes counts positions only, so
    an entry for it is no fix: binding it before mapping is."""
    name = leaf.label.split("[")[0]
    return f"bind {name} before mapping, so it stays unmapped: functools.partial({level.fn_name}, {name}=...)"


def _range_fix(leaf: Leaf, axis: int) -> str | None:
    assert leaf.shape is not None
    r = len(leaf.shape)
    if r == 0:
        return f"{leaf.label} is a scalar: give it the in_axes entry None (scalars cannot be mapped)"
    return f"in_axes entries for {leaf.label} must be in [{-r}, {r - 1}], or None to leave it unmapped"


# -------------------------------------------------------------------------- outputs


def _reduce_over(axis_name: Hashable | None) -> str:
    if axis_name is None:
        return "give the pmap an axis_name and apply jax.lax.pmean or psum over it"
    return f"jax.lax.pmean or psum over {axis_name!r}"


def _out_axes_mapping(out_axes: Any, shapes: Any, flat: list[int]) -> Any:
    """out_axes with the flat outputs `flat` mapped over axis 0 instead of None, where
    out_axes says it in one place per output: None for a tuple of outputs becomes one entry
    each (0 for those in `flat`, None for the others, which stay one value); None for one
    output, 0; a tuple's None entry for a whole output that is one array, 0. Else None."""
    leaves = (
        [len(jax.tree_util.tree_leaves(s, is_leaf=lambda x: isinstance(x, Shape))) for s in shapes]
        if isinstance(shapes, tuple)
        else []
    )
    starts = [sum(leaves[:k]) for k in range(len(leaves))]
    owners = {next(k for k in range(len(leaves)) if starts[k] + leaves[k] > j) for j in flat} if leaves else set()
    if out_axes is None:
        if not leaves or len(owners) == len(leaves):
            return 0
        return tuple(0 if k in owners else None for k in range(len(leaves)))
    if not isinstance(out_axes, tuple) or len(out_axes) != len(leaves):
        return None
    if any(leaves[k] != 1 or out_axes[k] is not None for k in owners):
        return None
    return tuple(0 if k in owners else a for k, a in enumerate(out_axes))


@dataclass(frozen=True, slots=True)
class Sources:
    """The mapped arguments an output is computed from: passed by position (an in_axes
    entry each) and by keyword (always mapped over axis 0)."""

    positional: tuple[str, ...]
    keywords: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.positional or self.keywords)

    def described(self) -> str:
        names = [*self.positional, *self.keywords]
        if not self.keywords:
            return f"{and_list(names)}, which in_axes maps"
        return f"{and_list(names)}, which {'is' if len(names) == 1 else 'are'} mapped"

    def unmapping(self) -> str:
        """How to leave them unmapped."""
        ways = []
        if self.positional:
            ways.append(f"leave {and_list(self.positional)} unmapped (in_axes entry None)")
        if self.keywords:
            them = "it" if len(self.keywords) == 1 else "them"
            ways.append(
                f"bind {and_list(self.keywords)} with functools.partial or pass {them} by position with the"
                " in_axes entry None (a keyword argument is always mapped)"
            )
        return " and ".join(ways)


def device_axis_size(level: MapLevel, size: int) -> int:
    """The size collectives over the level's axis name see: the mapped size, but for a pmap
    called in a job of several processes the devices of every process it spans (an
    `all_gather` there gathers from all of them)."""
    job = level.job
    if level.kind != "pmap" or job is None:
        return size
    return len(job.mesh(size, level.axis_size))


def map_outputs(
    level: MapLevel,
    size: int,
    shapes: Any,
    is_batched: Callable[[int], bool],
    trail: tuple[Step, ...],
    sources: Callable[[int], Sources | None] = lambda j: None,
) -> tuple[Any, tuple[OutRow, ...]]:
    """Insert the batch dim per out_axes (counted in the batched output's rank).
    `sources(j)`: the mapped arguments output `j` is computed from, where known."""
    leaves, treedef = jax.tree_util.tree_flatten(shapes)
    labels = ["output" + p for p in leaf_paths(shapes)]
    got = axes_of(level, level.out_axes.value, shapes)
    if isinstance(got, PrefixMismatch):
        raise _mismatch_error(level, "out_axes", "the output", got, trail, OutputError)
    out: list[Shape] = []
    rows: list[OutRow] = []
    device_zero: list[int] = []  # outputs a pmap's out_axes None takes from device 0
    for j, (label, shape, axis) in enumerate(zip(labels, leaves, got, strict=True)):
        if axis is None:
            if not level.sum_match and is_batched(j):
                name = "" if level.axis_name is None else f" (axis_name={level.axis_name!r})"
                if level.kind == "pmap":  # JAX answers with device 0's block: so do we, and say so (once)
                    device_zero.append(j)
                    out.append(shape)
                    rows.append(OutRow(label, shape, axis, shape))
                    continue
                found = sources(j)
                which = f"depends on {found.described()}" if found else "depends on the mapped arguments"
                shared = f"{found.unmapping()} if {label} is one value for the batch, or " if found else ""
                raise Scene(trail, level.describe()).error(
                    OutputError,
                    f"out_axes is None for {label}, but {label} {which}, so it"
                    f" has a batch dimension{name} that None would have to drop",
                    places=(Place(label, shape),),
                    hint=f"{shared}give {label} an integer out_axes entry (0 puts the batch first),"
                    " or pass sum_match=True to sum over the batch",
                )
            new = shape
        else:
            r = len(shape) + 1
            c = canonical_axis(axis, r)
            if level.kind == "pmap" and axis < 0:
                raise Scene(trail, level.describe()).error(
                    OutputError,
                    f"pmap out_axes entry {int_text(axis)} for {label} is negative; JAX 0.10's pmap silently"
                    " returns wrongly shaped outputs for negative out_axes",
                    places=(Place(label, shape),),
                    hint=f"count the axis from the front: out_axes={c if c is not None else 0}",
                )
            if c is None:
                raise Scene(trail, level.describe()).error(
                    OutputError,
                    f"out_axes entry {int_text(axis)} for {label} is out of range: the per-example output has"
                    f" shape {format_shape(shape)}, so the batched output has rank {r} and its axes"
                    f" are {-r}..{r - 1}",
                    places=(Place(label, shape),),
                    hint=f"use an out_axes entry in [{-r}, {r - 1}] for {label}",
                )
            new = shape.insert(c, size)
        out.append(new)
        rows.append(OutRow(label, shape, axis, new))
    if device_zero:
        _warn_device_zero(
            level, shapes, [labels[j] for j in device_zero], [leaves[j] for j in device_zero], device_zero
        )
    return jax.tree_util.tree_unflatten(treedef, out), tuple(rows)


def _warn_device_zero(level: MapLevel, shapes: Any, labels: list[str], blocks: list[Shape], flat: list[int]) -> None:
    """One warning per call for every output a pmap's out_axes None takes from device 0
    although it depends on the mapped arguments: JAX answers so, and so does axischeck."""
    mapped: Any = _out_axes_mapping(level.out_axes.value, shapes, flat)
    every = f"out_axes={mapped!r}" if mapped is not None else "an integer out_axes entry for each"
    if len(labels) == 1:
        what = f"{labels[0]}, but {labels[0]} depends"
        block = f"device 0's block {format_shape(blocks[0])}"
    else:
        what = f"{and_list(labels)}, but they depend"
        block = "device 0's block of each"
    warn_at_user(
        AxisCheckWarning(
            f"{level.describe()}: out_axes is None for {what} on the mapped arguments, so JAX's pmap returns"
            f" {block}. Hint: reduce over the devices first ({_reduce_over(level.axis_name)}) if one value was"
            f" meant; or {every} to get every device's block"
        )
    )
