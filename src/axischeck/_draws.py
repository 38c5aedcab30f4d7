"""The check of a call's random draws, read from JAX's own trace of it once JAX has answered.

A checked map records the user's function inside JAX's trace of the call (see
`_engine._in_trace`), the first time JAX traces it for a given key (`draws_key`): JAX runs
the function as often as without axischeck. This module asks that record which samplers
draw the same numbers along the map's axes while their draws reach an output that varies
(`_engine._randomness`), and warns of each with a `SharedRandomnessWarning` at the user's
line: the sampler, the key and where it comes from (an argument the map does not map, a
closed-over value, a constant seed), the outputs, and the remedy in the user's terms,
checked on the record (the key made to vary, the draws no longer shared).

A library's transform built on JAX's (Equinox's `filter_vmap`, Flax NNX's `vmap`) speaks
through a `Speaker` while it runs: its title, the user's own names for the leaves it passed
on, and its own remedy (NNX's `split_rngs`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.core import Tracer

from ._core._cache import BoundedCache
from ._core._errors import AxisCheckWarning, SharedRandomnessWarning, warn_at_user
from ._core._jax_compat import INFER_SPECS, is_key_array
from ._core._keys import lookup, store
from ._core._leaves import Call
from ._core._text import format_shape
from ._core._trees import PrefixMismatch, broadcast_prefix, leaf_paths
from ._engine._function import fn_name
from ._engine._in_trace import Watch
from ._engine._levels import MapLevel, axes_of, resolve_in_axes
from ._engine._mesh import MeshShape, SpecDims, as_partition_spec, context_mesh, sharding_spec, spec_dims
from ._engine._randomness import MAPPED, Axes, SharedDraws, draws_anything, shared_draws, wrapped_inputs
from ._engine._shard_model import ShardOptions, is_spec_leaf
from ._engine._trace import Replay


@dataclass(frozen=True, slots=True)
class DrawMap:
    """How a transform maps one call, as the check of its draws reads it: per flat leaf of
    `(args, kwargs)`, the axes it varies along, how the options map it in the user's words
    (`"in_axes None"`, `"in_specs P()"`) and its label; the map's axes and their sizes."""

    transform: str
    kind: str  # "vmap", "pmap", "shard_map" or "smap"
    leaves: tuple[Axes, ...]
    entries: tuple[str, ...]
    labels: tuple[str, ...]
    axes: Axes
    sizes: tuple[tuple[Hashable, int], ...]
    unit: str  # what shares the draws: "example" or "device"
    # Which flat outputs the options declare the same along the map (out_axes None, an
    # out_specs naming none of its axes), given the record's output tree.
    declared_same: Callable[[Any], frozenset[int]] = field(default=lambda _tree: frozenset())
    # The flat leaves that would be raw keys mapped along their words (see `raw_keys_split`):
    # (leaf, its batched shape, the axis the map takes).
    along_last: tuple[tuple[int, tuple[int, ...], int], ...] = ()
    # The flat leaves the map takes along an axis that holds copies of one key: they vary
    # along nothing (see `_copies_of_one_key`).
    copies: frozenset[int] = frozenset()
    # The identities of the flat leaves' values, as the call passed them (a library's
    # transform names what its user passed by them: inside JAX's trace they are tracers).
    ids: tuple[int, ...] = ()

    def size(self, axes: Axes) -> int:
        return math.prod(size for axis, size in self.sizes if axis in axes)

    def along(self, axes: Axes) -> str:
        """`the mapped axis`, `axis 'i'`, `mesh axis 'x'`, `mesh axes 'x' and 'y'`."""
        named = sorted(repr(a) for a in axes if a != MAPPED)
        if not named:
            return "the mapped axis"
        kind = "mesh axis" if self.kind == "shard_map" else "axis"
        return f"{kind}{'es' if len(named) > 1 else ''} {' and '.join(named)}"


def level_draw_map(level: MapLevel, call: Call, transform: str) -> DrawMap:
    """A vmap's or pmap's `DrawMap`: each leaf varies along the map's axis where its
    in_axes entry maps it (keyword arguments always do)."""
    axes = resolve_in_axes(level, call, ())
    leaves, _ = call.flat()
    axis: Hashable = level.axis_name if level.axis_name is not None else MAPPED
    size = level.axis_size
    if size is None:
        size = next((leaf.shape[a] for leaf, a in zip(leaves, axes, strict=True) if a is not None and leaf.shape), 0)
    copies = frozenset(
        i
        for i, (leaf, a) in enumerate(zip(leaves, axes, strict=True))
        if a is not None and _copies_of_one_key(leaf.value, a)
    )
    return DrawMap(
        transform,
        level.kind,
        tuple(frozenset() if a is None or i in copies else frozenset({axis}) for i, a in enumerate(axes)),
        tuple(f"in_axes {a}" for a in axes),
        tuple(leaf.label for leaf in leaves),
        frozenset({axis}),
        ((axis, size),),
        "example" if level.kind == "vmap" else "device",
        functools.partial(_declared_same, functools.partial(axes_of, level, level.out_axes.value), _is_none),
        tuple(
            (i, tuple(leaf.shape), a)
            for i, (leaf, a) in enumerate(zip(leaves, axes, strict=True))
            if a is not None and leaf.shape is not None and _uint32_mapped_along_last(leaf.value, leaf.shape, a)
        ),
        copies,
        tuple(id(leaf.value) for leaf in leaves),
    )


def _copies_of_one_key(value: Any, axis: int) -> bool:
    """Whether a concrete array of PRNG keys, mapped along its axis 0 (`axis`), holds one
    key copied along it (`jnp.stack([key] * n)`, a helper replicating every leaf to the
    devices): every member gets the same key. Read from the values once per trace of the
    call, where the map draws random numbers."""
    if isinstance(value, Tracer) or not isinstance(value, (jax.Array, np.ndarray)) or not is_key_array(value):
        return False
    typed = jax.numpy.issubdtype(value.dtype, jax.dtypes.prng_key)
    rank = len(value.shape)
    if rank == 0 or axis % rank != 0 or (not typed and rank < 2) or value.shape[0] < 2:
        return False  # the keys' axis 0 only (the remedy splits the first of them)
    words = np.asarray(jax.random.key_data(value) if typed else value)
    return bool((words == words[:1]).all())


def _uint32_mapped_along_last(value: Any, shape: tuple[int, ...], axis: int) -> bool:
    """Whether a leaf is a uint32 array of rank 2 or more mapped along its last axis: the
    words of each key, where it is an array of raw keys (`jax.random.split`'s `(n, 2)`)."""
    rank = len(shape)
    return rank >= 2 and axis % rank == rank - 1 and getattr(value, "dtype", None) == jax.numpy.uint32


def shard_draw_map(options: ShardOptions, call: Call, transform: str) -> DrawMap | None:
    """A shard_map's or smap's `DrawMap`: each leaf varies along the manual mesh axes its
    spec splits it over (an inferred spec is read from the leaf's sharding); None where the
    specs do not pair with the arguments (JAX has refused the call then)."""
    mesh: MeshShape = options.mesh if options.mesh is not None else context_mesh(transform)
    manual = options.axis_names or frozenset(mesh.names)
    leaves, _ = call.flat()
    dims: list[SpecDims] = []
    if options.in_specs is INFER_SPECS:
        dims = [sharding_spec(leaf.value, len(leaf.shape or ())) for leaf in leaves]
        entries = tuple(f"in_specs inferred as {as_partition_spec(d)}" for d in dims)
    else:
        specs = broadcast_prefix(options.in_specs, call.args, is_spec_leaf)
        if isinstance(specs, PrefixMismatch) or len(specs) != len(leaves):
            return None
        dims = [() if spec is None else spec_dims(spec, mesh, manual, "") for spec in specs]
        shown = options.shown("in", call.args)
        entries = tuple(f"in_axes {a}" for a in shown) if shown is not None else tuple(f"in_specs {s}" for s in specs)
    return DrawMap(
        transform,
        options.kind,
        tuple(frozenset(a for d in dim for a in d) & manual for dim in dims),
        entries,
        tuple(leaf.label for leaf in leaves),
        frozenset(manual),
        tuple((name, size) for name, size in zip(mesh.names, mesh.sizes, strict=True) if name in manual),
        "device",
        functools.partial(
            _declared_same,
            lambda tree: broadcast_prefix(options.out_specs, tree, is_spec_leaf),
            lambda spec: spec is None or not any(spec_dims(spec, mesh, manual, "out_specs")),
        ),
    )


def _is_none(axis: Any) -> bool:
    return axis is None


def _declared_same(
    pair: Callable[[Any], list[Any] | PrefixMismatch], same: Callable[[Any], bool], out_tree: Any
) -> frozenset[int]:
    """The flat outputs (of a record whose outputs have the structure `out_tree`) whose
    out_axes entry or out_specs (paired with them by `pair`) says they are the same along
    the map: draws that reach one are shared on purpose (a parameter initialised once for
    the batch). Empty where the options do not pair with the outputs."""
    paired = pair(jax.tree_util.tree_unflatten(out_tree, list(range(out_tree.num_leaves))))
    if isinstance(paired, PrefixMismatch):
        return frozenset()
    return frozenset(j for j, entry in enumerate(paired) if same(entry))


class Passed(NamedTuple):
    """A leaf the user passed a library's transform: its name and its mapping, in the
    library's terms, and whether it is an NNX RNG stream's key."""

    name: str
    entry: str
    rng: bool = False


class Speaker:
    """A library transform built on JAX's, while it runs one call (see `speaking`): how the
    check of the draws of the JAX transform it calls speaks the user's terms. `package`:
    the library's (its internal function is the one JAX's transform maps); `passed`: the
    leaves the user passed, by identity; `checked`: the calls of this library transform
    whose draws were checked (kept per function and options by the wrapper)."""

    __slots__ = ("_find_passed", "_passed", "checked", "outputs", "package", "title")

    def __init__(
        self,
        title: str,
        package: str,
        passed: Callable[[], dict[int, Passed]],
        checked: BoundedCache[bool],
        outputs: str = "output",
    ) -> None:
        self.title = title
        self.package = package
        self.outputs = outputs  # where the user's outputs are among the library function's ("output[1]")
        self._find_passed = passed  # read only for a warning: the user's arguments may be many
        self._passed: dict[int, Passed] | None = None
        self.checked = checked

    @property
    def passed(self) -> dict[int, Passed]:
        """The leaves the user passed (alive while the call runs), by identity."""
        if self._passed is None:
            self._passed = self._find_passed()
        return self._passed

    def draws_due(self, key: Hashable | None) -> bool:
        return lookup(self.checked, key) is None

    def draws_checked(self, key: Hashable | None) -> None:
        store(self.checked, key, True)

    def speaks_for(self, fun: Callable[..., Any]) -> bool:
        """Whether `fun` is the library's own (what its transform hands JAX's), not a
        function of the user's that a transform inside it maps."""
        # A function's own module; a callable object's class's (Flax's `VmapFn` copies
        # the user's function's `__module__` onto itself).
        module = fun.__module__ if isinstance(fun, FunctionType) else type(fun).__module__
        return isinstance(module, str) and module.split(".")[0] == self.package

    def remedy(self, key: Key, dm: DrawMap, n: int) -> str | None:
        """NNX's remedy for a module's RNG stream broadcast: split the streams and map
        the RNG state (never None in in_axes for RNG state); None: the generic remedy."""
        streams = [p for p in key.passed if p.rng]
        if not streams:
            return None
        module = streams[0].name.split("[", 1)[0].split(".", 1)[0]
        return (
            f"split the RNG streams, one per {dm.unit}: decorate the function with"
            f" @nnx.split_rngs(splits={n}) and give {module} the in_axes entry"
            " nnx.StateAxes({nnx.RngState: 0, ...: None})"
        )


class Sites:
    """The calls whose random draws were checked, per code, options and call key (see
    `site_key`): a map written once and run many times (a lambda inside a loop, a
    transform made anew at each call) is read once per shape, as the warning it may give
    is said once per place in the code. Bounded, thread-safe."""

    __slots__ = ("_checked",)

    def __init__(self) -> None:
        self._checked: BoundedCache[bool] = BoundedCache(4096)

    def draws_due(self, key: Hashable | None) -> bool:
        return key is None or lookup(self._checked, key) is None

    def draws_checked(self, key: Hashable | None) -> None:
        store(self._checked, key, True)


SITES = Sites()
"""Every map's checked calls, but for a library transform's (kept by its `Speaker`)."""


def site_key(code: object, options_key: Hashable | None, call_key: Hashable | None) -> Hashable | None:
    """The key of a map's call in `SITES`: the code the map runs (`code_of` the function:
    a function made anew from the same code is the same place), its options and the call's
    key; None where one of them is not known (the call is then checked each time)."""
    if code is None or options_key is None or call_key is None:
        return None
    return (code, options_key, call_key)


SPEAKING: ContextVar[Speaker | None] = ContextVar("axischeck_speaking", default=None)


@contextmanager
def speaking(speaker: Speaker | None) -> Iterator[None]:
    """Inside: the draws of the JAX transform a library runs are spoken of in its terms
    (None: as they are)."""
    if speaker is None:
        yield
        return
    token = SPEAKING.set(speaker)
    try:
        yield
    finally:
        SPEAKING.reset(token)


def speaker_for(fun: Callable[..., Any]) -> Speaker | None:
    """The library transform running `fun` (its own function) in this call, if any."""
    speaker = SPEAKING.get()
    return speaker if speaker is not None and speaker.speaks_for(fun) else None


@dataclass(frozen=True, slots=True)
class Key:
    """Where a shared sampler's key comes from: flat leaves of the call (`leaves`), values
    the function closed over (`closed`: the record's constant, and the name the function
    reaches it by, if found), or neither (a key made inside the function from constants)."""

    leaves: tuple[int, ...] = ()
    closed: tuple[tuple[int, str | None], ...] = ()
    consts: tuple[int, ...] = ()  # every constant of the record it comes from (an unmapped leaf JAX passed as is too)
    passed: tuple[Passed, ...] = ()  # the parts the user passed a library's transform (see `Speaker`)
    names: tuple[str, ...] = field(default=())  # how the message names each part, in order

    def described(self) -> str:
        return " and ".join(self.names)


def check_draws(
    watch: Watch, draw_map: Callable[[], DrawMap | None], fun: Callable[..., Any], speaker: Speaker | None
) -> None:
    """After JAX answered a watched call: a `SharedRandomnessWarning` for each sampler of
    the recorded function whose draws are the same along some of the map's axes and reach
    an output that varies along them, at the user's line. Reads the record only; a call
    this check cannot read (one beyond the engine's model) gets no warning. `speaker`: the
    library transform the call is made by, if any."""
    replay = watch.replay
    if replay is None or not draws_anything(replay.closed):
        return
    try:
        found_map = draw_map()
        if found_map is None or len(found_map.leaves) != len(watch.seen):
            return
        varying = [found_map.leaves[i] for i in replay.dyn]
        meant = found_map.declared_same(replay.out_tree)
        found = [
            _warning(s, found_map, watch, fun, speaker)
            for s in shared_draws(replay.closed, varying, found_map.axes, declared_same=meant)
            if found_map.size(s.axes) != 1  # one member along the axes: nothing to share the draws with
        ]
    except Exception:  # a call the engine would refuse (JAX accepted it), a record it cannot read: JAX's answer stands
        return
    for warning in found + raw_keys_split(replay, found_map):
        warn_at_user(warning, also_skipped=() if speaker is None else (speaker.package,))


def raw_keys_split(replay: Replay, dm: DrawMap) -> list[AxisCheckWarning]:
    """A warning for each array of raw keys (uint32, one key per row of its last axis's
    words: what `jax.random.split` of a `PRNGKey` gives) that the map takes along that
    last axis while the function uses what it gets as a key: each example then gets one
    word of every key, not a key, and JAX draws from it silently (JEP 9263)."""
    if not dm.along_last:
        return []
    wrapped = wrapped_inputs(replay.closed)
    found = []
    for leaf, shape, axis in dm.along_last:
        if leaf not in replay.dyn or replay.dyn.index(leaf) not in wrapped:
            continue
        label, n, words = dm.labels[leaf], shape[0] if len(shape) == 2 else "the", shape[-1]
        found.append(
            AxisCheckWarning(
                f"{dm.transform}: {label} (uint32, shape {format_shape(shape)}) is used as raw PRNG keys, and"
                f" its in_axes entry {axis} maps axis {axis % len(shape)}, the axis of each key's {words} words:"
                f" every {dm.unit} gets one word of each of {n} keys, not a key of its own, and draws from it."
                f" Hint: map the keys' axis (in_axes entry 0 for keys from jax.random.split), or use typed keys"
                f" (jax.random.key), whose words no in_axes can reach"
            )
        )
    return found


def _warning(
    shared: SharedDraws, dm: DrawMap, watch: Watch, fun: Callable[..., Any], speaker: Speaker | None
) -> SharedRandomnessWarning:
    """The warning's facts: the remedy is checked on the record (the key's sources made to
    vary along the shared axes, the sampler's draws are no longer shared)."""
    replay = watch.replay
    assert replay is not None
    key = _key_of(shared, dm, watch, fun, speaker)
    n = dm.size(shared.axes)
    remedy = speaker.remedy(key, dm, n) if speaker is not None else None
    if remedy is None:
        remedy = _remedy(key, shared, dm, fun, n)
    checked = bool(key.leaves or key.consts) and _clears(shared, dm, watch, key)
    outputs = _output_labels(replay.out_tree)
    if speaker is not None:
        outputs = [("output" + o[len(speaker.outputs) :]) if o.startswith(speaker.outputs) else o for o in outputs]
    return SharedRandomnessWarning(
        transform=speaker.title if speaker is not None else dm.transform,
        sampler=shared.sampler.name,
        caller=shared.sampler.caller,
        key=key.described(),
        outputs=tuple(outputs[j] for j in shared.outputs),
        unit=dm.unit,
        axes=dm.along(shared.axes),
        fix=remedy if checked else None,
        hint=None if checked else remedy,
    )


def _key_of(shared: SharedDraws, dm: DrawMap, watch: Watch, fun: Callable[..., Any], speaker: Speaker | None) -> Key:
    """The key's sources, key-like ones only where there are some (a fold_in's data is a
    source too): call leaves (an unmapped array a vmap handed the function as it is is a
    constant of the record, matched by identity) and closed-over values, each named (in a
    library's terms where its user passed the value)."""
    replay = watch.replay
    assert replay is not None
    consts = getattr(replay.closed, "consts", ())
    parts: list[tuple[Any, int | None, int | None]] = []  # (value, call leaf, record constant)
    for kind, k in sorted(shared.sampler.key_sources):
        if kind == "arg":
            parts.append((watch.seen[replay.dyn[k]], replay.dyn[k], None))
        else:
            same = next((i for i, seen in enumerate(watch.seen) if seen is consts[k]), None)
            parts.append((consts[k], same, k))
    if any(is_key_array(value) for value, _, _ in parts):
        parts = [part for part in parts if is_key_array(part[0])]
    name = fn_name(fun)
    leaves: list[int] = []
    closed: list[tuple[int, str | None]] = []
    passed: list[Passed] = []
    names: list[str] = []
    for value, leaf, const in parts:
        own = speaker.passed.get(id(value)) if speaker is not None else None
        if own is None and speaker is not None and leaf is not None and dm.ids:
            own = speaker.passed.get(dm.ids[leaf])  # a mapped leaf: a tracer in the record
        copied = f", {dm.size(dm.axes)} copies of one key" if leaf in dm.copies else ""
        if own is not None:
            passed.append(own)
            names.append(f"{own.name} ({own.entry}{copied})")
        elif leaf is not None:
            names.append(f"{dm.labels[leaf]} ({dm.entries[leaf]}{copied})")
        if leaf is not None:
            leaves.append(leaf)
        elif const is not None:
            found = None if own is not None else _closure_name(fun, value)
            closed.append((const, found))
            if own is None:
                names.append(f"{found} (closed over by {name})" if found else f"a key {name} closes over")
    if not names:
        names.append(f"a key made inside {name} from a constant seed")
    in_record = tuple(const for _, _, const in parts if const is not None)
    return Key(tuple(leaves), tuple(closed), in_record, tuple(passed), tuple(names))


def _closure_name(fun: Callable[..., Any], value: Any, depth: int = 0) -> str | None:
    """The name `fun` reaches `value` by: a free variable, a global it reads, an argument
    a `functools.partial` binds, or an attribute path of the object a method is bound to
    (by identity, one pytree deep), or those of a function it closes over (a helper
    defined beside it: two levels)."""
    seen: set[int] = set()
    current: Any = fun
    while current is not None and id(current) not in seen:
        fun = current
        seen.add(id(fun))
        places: list[tuple[str, Any]] = []
        code = getattr(fun, "__code__", None)
        cells = getattr(fun, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells, strict=False):
                try:
                    places.append((name, cell.cell_contents))
                except ValueError:  # an empty cell
                    continue
            glob = getattr(fun, "__globals__", {})
            places += [(name, glob[name]) for name in code.co_names if name in glob]
        for k, arg in enumerate(getattr(fun, "args", None) or ()):
            places.append((f"partial argument {k}", arg))
        bound = getattr(fun, "__self__", None)
        if bound is not None:
            places.append(("self", bound))
        for name, held in places:
            found = _inside(name, held, value)
            if found is None and depth < 2 and isinstance(held, FunctionType) and held is not fun:
                found = _closure_name(held, value, depth + 1)
            if found is not None:
                return found
        current = getattr(fun, "__wrapped__", None) or getattr(fun, "func", None)
    return None


def _inside(name: str, held: Any, value: Any) -> str | None:
    if held is value:
        return name
    try:
        flat, _ = jax.tree_util.tree_flatten_with_path(held)
    except Exception:
        return None
    if len(flat) > 10_000:
        return None
    for path, leaf in flat:
        if leaf is value:
            return name + jax.tree_util.keystr(path)
    return None


def _remedy(key: Key, shared: SharedDraws, dm: DrawMap, fun: Callable[..., Any], n: int) -> str:
    """The remedy in the transform's terms: split the key and map it (a vmap or pmap), or
    fold in the member's index inside the function (a named map, shard_map, smap)."""
    axes = sorted((a for a in shared.axes if a != MAPPED), key=repr)
    index = f"jax.lax.axis_index({axes[0]!r})" if len(axes) == 1 else f"jax.lax.axis_index({tuple(axes)!r})"
    name = fn_name(fun)
    shown = [p.name for p in key.passed] + [dm.labels[i] for i in key.leaves] + [f or "key" for _, f in key.closed]
    what = shown[0] if shown else "key"
    fold = f"draw from jax.random.fold_in({what}, {index}) inside {name}"
    split = f"jax.random.split({what}, {n})"
    if key.leaves and set(key.leaves) <= dm.copies:
        one = f"jax.random.split({what}[0], {n})"
        return f"pass {one} for {what}, one key per {dm.unit}, in place of {n} copies of one key"
    if (key.leaves or key.passed) and dm.kind in ("vmap", "pmap"):
        text = f"pass {split} for {what}, one key per {dm.unit}, and map it (its in_axes entry 0)"
        return f"{text}; or {fold}" if axes else text
    if axes and len(axes) == len(shared.axes):
        return fold
    return f"pass the key in as an argument, {split}, one per {dm.unit}, and map it (its in_axes entry 0)"


def _clears(shared: SharedDraws, dm: DrawMap, watch: Watch, key: Key) -> bool:
    """Whether the remedy, asked of the record, works: with the key's leaves (or closed-over
    values) varying along the shared axes, this sampler's draws are no longer shared."""
    replay = watch.replay
    assert replay is not None
    varying = [dm.leaves[i] | shared.axes if i in key.leaves else dm.leaves[i] for i in replay.dyn]
    still = shared_draws(replay.closed, varying, dm.axes, dict.fromkeys(key.consts, shared.axes))
    return not any(s.sampler.path == shared.sampler.path and s.axes & shared.axes for s in still)


def _output_labels(out_tree: Any) -> list[str]:
    n = out_tree.num_leaves
    return ["output" + path for path in leaf_paths(jax.tree_util.tree_unflatten(out_tree, list(range(n))))]
