"""Abstract evaluation of the user's function (the path without a signature).

The per-example output is found with `jax.eval_shape` of the *unbatched* function on
per-example shapes. Unmapped leaves are closed over unchanged (as `jax.vmap` passes
them), so Python scalars stay Python scalars. Axis names in scope are bound by
size-only `vmap`s with `in_axes=None`, so collectives follow vmap's own shape rules.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import jax
import numpy as np
from jax.core import Tracer

from .._core._cache import BoundedCache, held_function
from .._core._errors import AxisCheckWarning, warn_at_user
from .._core._jax_compat import (
    JAX_VERSION,
    JAX_VMAP,
    NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING,
    abstract_values,
    batched_here,
    canonical_dtype,
    cast_to_varying,
    equations,
    is_literal,
    jaxpr_function,
    jaxpr_function_unvaried,
    name_trace,
    ppermute_axes_in_mesh_order,
    psum_scatter_size_refused,
    quiet_tracebacks,
    scan_layout,
    sub_jaxprs,
    unbound_axis_name,
    varying_axes,
)
from .._core._keys import lookup, store
from .._core._leaves import abstract, resharded
from .._core._shape import Shape
from .._core._text import format_shape


def _is_abstract(x: object) -> bool:
    return isinstance(x, jax.ShapeDtypeStruct)


LevelKind = Literal["vmap", "pmap", "shard_map", "mesh"]


class Bound(NamedTuple):
    """One mapping level in scope: its axis name (or None), its size, the canonical axis it
    mapped of each flat argument leaf, and its kind: "vmap", "pmap", "shard_map", or
    "mesh" for a mesh axis a shard_map leaves automatic (so a shard_map nested inside can
    find its mesh)."""

    name: Hashable | None
    size: int
    axes: tuple[int | None, ...]
    kind: LevelKind
    spmd: tuple[Hashable, ...] = ()  # a vmap's spmd_axis_name (the mesh axes it shards over)


Env = tuple[Bound, ...]
"""Every mapping level in scope, outermost first. Collectives depend on where batch dims
sit (JAX's psum_scatter rule even fails for some positions), so when names are in scope
the trace re-creates the real vmap nesting: same levels, same mapped axes. pmap and
shard_map levels are device axes: their names are bound as an axis environment
(per-device semantics), with no batch dimension."""


def only_vmaps(env: Env) -> bool:
    """Whether every level in scope is a vmap (JAX can then trace the nest as it is)."""
    return all(level.kind == "vmap" for level in env)


def under_pmap(env: Env) -> bool:
    return any(level.kind == "pmap" for level in env)


def _named_scope(env: Env) -> Env:
    """The levels to bind: from the outermost named one inward (none if no names). A vmap
    with a spmd_axis_name counts as named: JAX's rules for what it maps (an inner
    shard_map's) read it."""
    for k, level in enumerate(env):
        if level.name is not None or level.spmd:
            return env[k:]
    return ()


def _vmap_levels(env: Env) -> Env:
    return tuple(level for level in env if level.kind == "vmap")


def _device_axes(env: Env) -> list[tuple[Hashable, int]]:
    return [(lv.name, lv.size) for lv in env if lv.kind in ("pmap", "shard_map") and lv.name is not None]


def _bind_names(fn: Callable[..., Any], env: Env, dyn: Sequence[int]) -> Callable[..., Any]:
    """Wrap `fn` in the vmap levels of `env` (innermost closest to `fn`), mapping each
    traced leaf where the real level mapped it."""
    for level in reversed(_vmap_levels(env)):
        in_axes = tuple(level.axes[i] for i in dyn)
        fn = JAX_VMAP(
            fn,
            in_axes=in_axes if in_axes else None,
            axis_size=level.size,
            axis_name=level.name,
            spmd_axis_name=level.spmd or None,
        )
    return fn


def _with_env_dims(structs: list[Any], dyn: Sequence[int], env: Env) -> list[Any]:
    """The structs the binders expect (`structs[k]` for leaf `dyn[k]`): the vmap levels'
    axes put back where they were. Without vmap levels, the structs as they are."""
    levels = _vmap_levels(env)[::-1]
    if not levels:
        return structs
    out = []
    for value, i in zip(structs, dyn, strict=True):
        shape = list(value.shape)
        inserted = []
        for level in levels:
            axis, size = level.axes[i], level.size
            if axis is not None:
                shape.insert(axis, size)
                inserted.append(axis)
        out.append(resharded(value, tuple(shape), value.dtype, insert=inserted) if inserted else value)
    return out


def _shapes_of(
    fn: Callable[..., Any], env: Env, structs: Sequence[Any], named: tuple[Callable[..., Any], list[str]] | None = None
) -> tuple[Any, Any]:
    """What `jax.eval_shape` gives (one trace), with any device axes of `env` bound as an
    axis environment, and the closed jaxpr JAX recorded; `named`: the user's function and
    the names of `fn`'s arguments, for JAX's messages."""
    devices = _device_axes(env)
    avals = abstract_values(list(structs))
    if named is not None:
        name_trace(fn, *named, traced_for="make_jaxpr" if devices else "jit")
    if not devices:
        traced = jax.jit(fn).trace(*avals)  # what `jax.eval_shape` runs, its jaxpr kept
        return traced.out_info, traced.jaxpr
    closed, shapes = jax.make_jaxpr(fn, axis_env=devices, return_shape=True)(*avals)
    return shapes, closed


@dataclass(frozen=True, slots=True)
class Replay:
    """The user's per-example function as one trace recorded it (a closed jaxpr and its
    output structure), taking the flat argument leaves at `dyn`: asked again under other
    transforms (which outputs a vmap batches, the shapes under vmap's rules), it answers
    by JAX's own rule for each primitive and runs none of the user's Python."""

    closed: Any
    out_tree: Any
    dyn: tuple[int, ...]

    def traced(self, *leaves: Any) -> Any:
        """The recorded function of the traced leaves (those at `dyn`)."""
        return jax.tree_util.tree_unflatten(self.out_tree, self.flat_traced(*leaves))

    def flat_traced(self, *leaves: Any) -> list[Any]:
        """`traced`'s outputs, flat.

        A record made inside a shard_map that checks vma types its inputs as varying over
        mesh axes. Asked with leaves that do not vary so (a vmap's check inside that
        shard_map traces its own, untyped arguments), the leaves are cast to the
        record's types where the mesh axes are in scope, so its collectives answer as in
        JAX's trace; elsewhere it answers without its varying casts (shapes only)."""
        varied = [varying_axes(v) or frozenset() for v in self.closed.jaxpr.invars]
        given = [varying_axes(leaf) or frozenset() for leaf in leaves]
        run = jaxpr_function(self.closed)
        if any(varied) and varied != given:
            try:
                cast = [
                    cast_to_varying(leaf, tuple(sorted(want - have))) if want - have else leaf
                    for leaf, want, have in zip(leaves, varied, given, strict=True)
                ]
            except Exception:  # the mesh axes are not in scope here
                cast = None
            if cast is not None and [varying_axes(leaf) or frozenset() for leaf in cast] == varied:
                leaves = tuple(cast)
            else:  # no shard_map that checks vma here: the record without its types
                run = jaxpr_function_unvaried(self.closed)
        if run is None:  # pragma: no cover - a future JAX layout
            raise RuntimeError("this JAX cannot run a recorded jaxpr")
        return list(run(*leaves))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The recorded function of a call flattened like the recorded one."""
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        return self.traced(*[leaves[i] for i in self.dyn])

    def sources(self, j: int) -> frozenset[int] | None:
        """The flat argument leaves (their indices in the call) that flat output `j` is
        computed from, read from the record (see `flows_into`); None where the record
        cannot say."""
        dependence = flows_into(self.closed, [frozenset({i}) for i in self.dyn])
        return dependence[j]


Dependence = frozenset[int] | None  # the inputs a value is computed from (None: not known)


def flows_into(jaxpr: Any, inputs: Sequence[Dependence]) -> list[Dependence]:
    """Which of `inputs` each output of `jaxpr` is computed from. A call (jit, remat, a custom
    rule, a shard_map's body) is followed inside, a scan until its carries settle, a cond
    through every branch and its index; any other equation with one output takes all of
    its inputs. Any other equation with several outputs cannot say which output came from
    which input: its outputs are not known (None), so nothing is claimed of them."""
    came_from: dict[Any, Dependence] = dict(zip(jaxpr.invars, inputs, strict=True))

    def of(v: Any) -> Dependence:
        return frozenset() if is_literal(v) else came_from.get(v, frozenset())

    for eqn in equations(jaxpr):
        ins = [of(v) for v in eqn.invars]
        came_from.update(zip(eqn.outvars, _equation_flows(eqn, ins), strict=True))
    return [of(v) for v in jaxpr.outvars]


def _equation_flows(eqn: Any, ins: list[Dependence]) -> list[Dependence]:
    subs = [sub for value in eqn.params.values() for sub in sub_jaxprs(value)]
    if len(eqn.outvars) == 1:
        body = called_jaxpr(eqn, subs)  # a call's one output may use only some operands
        return flows_into(body, ins) if body is not None else [_union(ins)]
    name = eqn.primitive.name
    if name == "cond" and subs and all(len(sub.invars) == len(ins) - 1 for sub in subs):
        flows = [flows_into(sub, ins[1:]) for sub in subs]
        return [_union([ins[0], *outs]) for outs in zip(*flows, strict=True)]
    body = called_jaxpr(eqn, subs)
    layout = scan_layout(eqn.params) if name == "scan" else None
    if layout is not None and body is not None:
        return _scan_flows(body, ins, *layout)
    if body is not None:
        return flows_into(body, ins)
    return [None] * len(eqn.outvars)


def called_jaxpr(eqn: Any, subs: list[Any]) -> Any | None:
    """The one jaxpr an equation runs on its own operands, giving its own outputs (jit,
    remat, a custom rule, a scan's body, a shard_map's), if it is that kind of equation
    (`subs`: the jaxprs among its parameters)."""
    if len(subs) == 1 and len(subs[0].invars) == len(eqn.invars) and len(subs[0].outvars) == len(eqn.outvars):
        return subs[0]
    return None


def _scan_flows(body: Any, ins: list[Dependence], consts: int, carries: int) -> list[Dependence]:
    """A scan's outputs: its body followed again with each carry's inputs widened by what
    the body makes of it, until no carry takes more."""
    ins = list(ins)
    while True:
        outs = flows_into(body, ins)
        carried = [_union([ins[consts + k], outs[k]]) for k in range(carries)]
        if carried == ins[consts : consts + carries]:
            return outs
        ins[consts : consts + carries] = carried


def _union(parts: Sequence[Dependence]) -> Dependence:
    known = [part for part in parts if part is not None]
    return frozenset().union(*known) if len(known) == len(parts) else None


def replay_of(closed: Any, out: Any, dyn: Sequence[int]) -> Replay | None:
    """The record of one trace (`closed`, taking the leaves at `dyn`; `out`, its output),
    or None where the jaxpr takes more: an argument that is a tracer of a trace around
    this one (under `jit` or `eval_shape`) is closed over, and JAX made it an input."""
    if len(closed.in_avals) != len(dyn):
        return None
    return Replay(closed, jax.tree_util.tree_structure(out), tuple(dyn))


class Records:
    """The user's function as JAX's own traces of it recorded it (see
    `axischeck._in_trace`), by which function and what those traces saw: per argument
    leaf, a tracer's shape, dtype and weak type, or the value of anything else (as JAX keys
    its static arguments), and the x64 setting. A concrete array keys as a tracer of its
    type: the transform that keeps records for later calls (pmap) traces every array
    argument. A check asks them in place of the function (JAX answered a call like it from
    its cache without tracing, or traced it just now), so it runs none of the user's
    Python; a key that cannot be made finds nothing. The function is held weakly (its
    identity keys it), so a record never answers for another function."""

    __slots__ = ("_replays",)

    def __init__(self) -> None:
        self._replays: BoundedCache[tuple[weakref.ref[Any], Replay]] = BoundedCache(8)

    def keep(self, fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], replay: Replay) -> None:
        fun = held_function(fun)
        try:
            ref = weakref.ref(fun)
        except TypeError:  # a function that cannot be held weakly is not kept
            return
        key = _record_key(args, kwargs)
        store(self._replays, None if key is None else (id(fun), key), (ref, replay))

    def find(self, fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Replay | None:
        fun = held_function(fun)
        key = _record_key(args, kwargs)
        found = lookup(self._replays, None if key is None else (id(fun), key))
        if found is None or found[0]() is not fun:
            return None
        return found[1]  # type: ignore[no-any-return]


def _record_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable | None:
    try:
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    except Exception:
        return None
    parts: list[Hashable] = []
    for x in leaves:
        if isinstance(x, Tracer | jax.Array):  # an array is never static: JAX traces it
            parts.append(("traced", x.shape, x.dtype, getattr(x.aval, "weak_type", False)))
            continue
        # Anything else the function was traced with as it is (a Python scalar, a frozen
        # dataclass of settings, an enum): by its type and value, as JAX keys a static
        # argument (hash and equality); one that cannot be hashed keys nothing.
        try:
            hash(x)
        except Exception:
            return None
        parts.append((type(x), x))
    return (treedef, tuple(parts), canonical_dtype(np.float64) == np.float64)  # x64 on


def recorded_first(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, answered from JAX's records of it where a check rides them (`RECORDED`)."""
    records = RECORDED.get()
    if records is None:
        return fn

    def call(*args: Any, **kwargs: Any) -> Any:
        return (records.find(fn, args, kwargs) or fn)(*args, **kwargs)

    return call


RECORDED: ContextVar[Records | None] = ContextVar("axischeck_recorded", default=None)
"""JAX's own traces of the function whose call is being checked, while a check that rides
them runs (see `axischeck._in_trace`): the trace model asks them first."""


class PerExample(NamedTuple):
    """The per-example output (a pytree of `Shape`) and, where one trace of the function
    recorded it as it is, its `Replay`; `batched`: which flat outputs carry the innermost
    level's batch dim, where the replay under the real vmap nesting has said (the level
    around the function then need not ask again)."""

    shapes: Any
    replay: Replay | None
    batched: list[bool] | None = None


def substituting(fn: Callable[..., Any], treedef: Any, values: Sequence[Any], dyn: Sequence[int]) -> Callable[..., Any]:
    """`fn` of the flattened `(args, kwargs)`, taking the leaves at `dyn` as its arguments
    (traced) and closing over the others as they are."""

    def call(*traced: Any) -> Any:
        vals = list(values)
        for i, t in zip(dyn, traced, strict=True):
            vals[i] = t
        args, kwargs = jax.tree_util.tree_unflatten(treedef, vals)
        return fn(*args, **kwargs)

    return call


def eval_per_example(
    fn: Callable[..., Any],
    treedef: Any,
    values: Sequence[Any],
    env: Env,
    named: tuple[Callable[..., Any], Sequence[str]] | None = None,
) -> PerExample:
    """The output pytree of `fn(*args, **kwargs)` with `Shape` leaves, from one trace of
    `fn` where it can: JAX traces a function once per call, and so does this.

    `treedef`/`values` are the flattened `(args, kwargs)`; `ShapeDtypeStruct`
    values are traced, everything else is closed over. `named`: the user's function
    and the labels of `values`, which JAX's messages about the trace then name.

    With vmap axis names in scope, `fn` is traced once with the names bound as devices'
    (collectives kept in its jaxpr, for the checks JAX's vmap skips), and that record is
    asked under the real vmap nesting for the shapes. Where the record cannot answer, the
    function itself is traced under the nesting, then with the names bound, as before.
    """
    dyn = [i for i, v in enumerate(values) if _is_abstract(v)]
    per_example = substituting(fn, treedef, values, dyn)
    scope = _named_scope(env)
    structs = _with_env_dims([values[i] for i in dyn], dyn, scope)
    shown = None if named is None else (named[0], [named[1][i] for i in dyn])
    skip = len(_vmap_levels(scope))
    if scope and only_vmaps(scope):
        replay = _recorded(per_example, scope, [values[i] for i in dyn], dyn, shown)
        if replay is not None:
            batched: list[bool] = []

            def replayed(*leaves: Any) -> Any:  # innermost under the nesting: it sees that level's tracers
                out = replay.traced(*leaves)
                batched[:] = [batched_here(leaf) for leaf in jax.tree_util.tree_leaves(out)]
                return out

            try:
                out, _ = _shapes_of(_bind_names(replayed, scope, dyn), scope, structs)
            except Exception:  # the record cannot answer: the function itself, as before
                pass
            else:
                check_ppermutes(replay.closed)
                warn_repeated_sums(replay.closed)
                shapes = jax.tree_util.tree_map(lambda s: Shape(s.shape[skip:]), out)
                return PerExample(shapes, replay, batched)
    try:
        out, closed = _shapes_of(_bind_names(per_example, scope, dyn), scope, structs, shown)
    except ValueError as err:  # under pmap JAX checks psum_scatter itself: same report
        if psum_scatter_size_refused(err):
            raise SilentCollectiveError(f"psum_scatter: {err}") from err
        raise
    if scope:
        _check_silent_collectives(per_example, scope, [values[i] for i in dyn])
    shapes = jax.tree_util.tree_map(lambda s: Shape(s.shape[skip:]), out)
    if skip:  # the jaxpr is of the nesting, not of the function alone
        return PerExample(shapes, None)
    return PerExample(shapes, replay_of(closed, out, dyn))


def _recorded(
    per_example: Callable[..., Any],
    env: Env,
    structs: list[Any],
    dyn: Sequence[int],
    shown: tuple[Callable[..., Any], list[str]] | None,
) -> Replay | None:
    """One trace of the per-example function with `env`'s axis names bound as devices'
    (its collectives kept as they are), or None where that trace fails: then the real
    vmap nesting, traced next, has its say. A collective over a name `env` does not bind
    fails there the same way, so its NameError is raised at once (no second trace)."""
    names = [(level.name, level.size) for level in env if level.name is not None]
    avals = abstract_values(structs)
    if shown is not None:
        name_trace(per_example, *shown, traced_for="make_jaxpr")
    try:
        with quiet_tracebacks():
            closed, out = jax.make_jaxpr(per_example, axis_env=names, return_shape=True)(*avals)
    except NameError as err:
        if unbound_axis_name(err) is not None:
            raise
        return None
    except Exception:
        return None
    return replay_of(closed, out, dyn)


def jaxpr_under_levels(fn: Callable[..., Any], treedef: Any, values: Sequence[Any], env: Env) -> Any:
    """The closed jaxpr of `fn(*args, **kwargs)` under every vmap level of `env`, each
    re-created as it maps (name, size, axes), so that JAX's own batching rules, quirks
    included, have their say. `env` must hold vmap levels only."""
    assert only_vmaps(env)
    dyn = [i for i, v in enumerate(values) if _is_abstract(v)]
    flat = substituting(fn, treedef, values, dyn)
    structs = _with_env_dims([values[i] for i in dyn], dyn, env)
    return jax.make_jaxpr(_bind_names(flat, env, dyn))(*abstract_values(structs))


class SilentCollectiveError(Exception):
    """A collective that JAX accepts when tracing but that is an accident: its vmap result
    is silently wrong, or lowering rejects it. `hint` is set where the text alone is the
    whole account (else `collective_error` knows the collective's rule)."""

    def __init__(self, text: str, hint: str | None = None) -> None:
        super().__init__(text)
        self.hint = hint


def _check_silent_collectives(fn: Callable[..., Any], env: Env, structs: Sequence[Any]) -> None:
    """Two collectives JAX accepts silently under vmap (docs/jax-semantics.md#where-jax-answers-silently):

    - non-tiled psum_scatter whose scattered dimension is not the axis size (JAX returns
      a mislabelled batch sum): tracing with the names bound as device axes applies the
      check vmap skips; only that one message is taken from this trace;
    - ppermute with duplicate sources or destinations (the device rule rejects them,
      but only when lowering): read from the same trace's jaxpr.
    """
    try:
        closed = jax.make_jaxpr(fn, axis_env=[(lv.name, lv.size) for lv in env if lv.name is not None])(*structs)
    except ValueError as err:
        if psum_scatter_size_refused(err):
            raise SilentCollectiveError(f"psum_scatter: {err}") from None
        return
    except Exception:
        return  # every other rule is vmap's, already applied by the real trace
    check_ppermutes(closed)
    warn_repeated_sums(closed)


def check_ppermutes(jaxpr: Any) -> None:
    """Raise `SilentCollectiveError` for a collective that traces (so `eval_shape` alone
    would accept it) but that JAX rejects when lowering: a ppermute with a repeated source
    or destination; on this JAX (see `_jax_compat`), a ppermute over mesh axes named out of
    the mesh's order, and psum_scatter or all_to_all with a negative axis."""
    in_order = ppermute_axes_in_mesh_order()
    for eqn, mesh_names in _equations(jaxpr, ()):
        name, params = eqn.primitive.name, eqn.params
        if name == "ppermute":
            perm = params.get("perm", ())
            sources = [s for s, _ in perm]
            dests = [d for _, d in perm]
            if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
                raise SilentCollectiveError(
                    f"ppermute: its sources and destinations must be unique, got perm={tuple(perm)}"
                )
            axes = params.get("axis_name", ())
            axes = axes if isinstance(axes, tuple) else (axes,)
            on_mesh = [a for a in axes if a in mesh_names]
            if in_order and len(on_mesh) == len(axes) > 1 and on_mesh != sorted(on_mesh, key=mesh_names.index):
                ordered = tuple(a for a in mesh_names if a in axes)
                raise SilentCollectiveError(
                    f"ppermute over {axes}, which names the mesh axes out of the mesh's order {ordered}",
                    hint=f"write axis_name={ordered} (perm then indexes the devices in that order),"
                    ' or allow it with jax.config.update("jax_raise_on_ppermute_sort_diff", False)',
                )
        elif NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING and name in _AXIS_PARAMS:
            negative = [p for p in _AXIS_PARAMS[name] if params.get(p, 0) < 0]
            if negative:
                shown = "psum_scatter" if name == "reduce_scatter" else name
                version = ".".join(map(str, JAX_VERSION))
                shape = tuple(eqn.invars[0].aval.shape)
                from_front = ", ".join(f"{p}={params[p] + len(shape)}" for p in negative)
                raise SilentCollectiveError(
                    f"{shown} with {', '.join(f'{p}={params[p]}' for p in negative)}: a negative axis, which"
                    f" JAX {version} traces but cannot lower",
                    hint=f"count the axis from the front of the operand of shape {format_shape(shape)}: {from_front}",
                )


_AXIS_PARAMS = {"reduce_scatter": ("scatter_dimension",), "all_to_all": ("split_axis", "concat_axis")}

_SUMS = frozenset({"psum", "psum_invariant"})
_CASTS = frozenset({"pvary", "pcast"})  # shard_map casts an invariant operand before a psum


def warn_repeated_sums(jaxpr: Any) -> None:
    """Warn of a psum of a value that is already a psum over some of the same axes
    (jax#19175): JAX accepts it and multiplies the sum by those axes' size, silently. A
    psum of anything else that is the same along the axes (`psum(1, 'i')`, the axis size)
    is meant, and so is a pmean (a psum divided by the size: the value itself)."""
    found = _repeated_sum(jaxpr, [frozenset()] * len(jaxpr.invars))[0]
    if found is None:
        return
    axes, twice = (a[0] if len(a) == 1 else a for a in found)
    warn_at_user(
        AxisCheckWarning(
            f"psum over {axes!r} of a value that is already a psum over {twice!r}: JAX multiplies"
            f" the sum by the size of {twice!r} (the value is the same on every member). Hint: sum once"
        )
    )


Summed = frozenset[Any]  # the axes a value is already summed over


Repeat = tuple[tuple[Any, ...], tuple[Any, ...]]  # a psum's axes, and those its operand is summed over already


def _repeated_sum(jaxpr: Any, inputs: list[Summed]) -> tuple[Repeat | None, list[Summed]]:
    """The first psum in `jaxpr` of a value already summed over some of its axes (None:
    none), and the axes each output is summed over. A call (jit, remat, a custom rule) is
    followed with its inputs; inside any other sub-jaxpr (a loop's body, a branch, a
    shard_map) the search starts afresh."""
    summed: dict[Any, Summed] = dict(zip(jaxpr.invars, inputs, strict=True))
    eqns = list(equations(jaxpr))

    def of(v: Any) -> Summed:
        return frozenset() if is_literal(v) else summed.get(v, frozenset())

    for k, eqn in enumerate(eqns):
        name, ins = eqn.primitive.name, [of(v) for v in eqn.invars]
        subs = [sub for value in eqn.params.values() for sub in sub_jaxprs(value)]
        if name in _SUMS:
            axes = _axes_param(eqn.params)
            twice = tuple(a for a in axes if any(a in prior for prior in ins))
            if twice and not _divided(eqn.outvars, eqns[k + 1 :], jaxpr.outvars):
                return (axes, twice), []
            outs = [frozenset(axes).union(*ins)] * len(eqn.outvars)
        elif name in _CASTS and len(ins) == len(eqn.outvars):
            outs = ins
        elif name != "shard_map" and (body := called_jaxpr(eqn, subs)) is not None:
            found, outs = _repeated_sum(body, ins)
            if found is not None:
                return found, []
        else:
            for sub in subs:
                found, _ = _repeated_sum(sub, [frozenset()] * len(sub.invars))
                if found is not None:
                    return found, []
            outs = [frozenset()] * len(eqn.outvars)
        summed.update(zip(eqn.outvars, outs, strict=False))
    return None, [of(v) for v in jaxpr.outvars]


def _divided(values: Any, later: list[Any], returned: Any) -> bool:
    """Whether every use of `values` divides them (a pmean: the psum divided by the size)."""
    uses = [(eqn, i) for eqn in later for i, v in enumerate(eqn.invars) if not is_literal(v) and v in values]
    kept = any(not is_literal(v) and v in values for v in returned)
    return bool(uses) and not kept and all(eqn.primitive.name == "div" and i == 0 for eqn, i in uses)


def _axes_param(params: Any) -> tuple[Any, ...]:
    axes = params.get("axes", params.get("axis_name", ()))
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


def collective_names(jaxpr: Any) -> frozenset[Hashable]:
    """The axis names the collectives of `jaxpr` (sub-jaxprs included) reduce, gather or
    index over: psum's `axes`, all_gather's and axis_index's `axis_name`, ..."""
    names: set[Hashable] = set()
    for eqn, _ in _equations(jaxpr, ()):
        for key in ("axes", "axis_name"):
            value = eqn.params.get(key)
            if value is None:
                continue
            for name in value if isinstance(value, tuple | list) else (value,):
                if not isinstance(name, int):  # an int is a positional (array) axis, not a name
                    names.add(name)
    return frozenset(names)


def _equations(jaxpr: Any, mesh_names: tuple[str, ...]) -> Any:
    """Every equation of `jaxpr`, sub-jaxprs (cond, scan, jit, shard_map, ...) included,
    each with the axis names of the innermost shard_map mesh around it."""
    for eqn in equations(jaxpr):
        yield eqn, mesh_names
        mesh = eqn.params.get("mesh") if eqn.primitive.name == "shard_map" else None
        inner_names = tuple(getattr(mesh, "axis_names", ())) or mesh_names
        for value in eqn.params.values():
            for sub in sub_jaxprs(value):
                yield from _equations(sub, inner_names)


def batched_outputs(
    fn: Callable[..., Any],
    treedef: Any,
    values: Sequence[Any],
    axes: Sequence[int | None],
    axis_size: int,
    axis_name: Hashable | None,
    env: Env,
) -> list[bool]:
    """Which flat outputs of `fn` carry this level's batch dim under real `jax.vmap`.

    Only JAX knows which outputs data-depend on a mapped input (a `psum` over the axis
    does not), so `out_axes=None` is settled by asking it: one abstract trace for every
    output, only on this rare path.
    """
    dyn = [i for i, (v, a) in enumerate(zip(values, axes, strict=True)) if a is not None or _is_abstract(v)]
    flat = substituting(fn, treedef, values, dyn)
    answers: list[bool] = []

    def recording(*traced: Any) -> Any:
        out = flat(*traced)
        answers[:] = [batched_here(leaf) for leaf in jax.tree_util.tree_leaves(out)]
        return out

    mapped = JAX_VMAP(
        recording, in_axes=tuple(axes[i] for i in dyn), out_axes=0, axis_size=axis_size, axis_name=axis_name
    )
    scope = _named_scope(env)
    structs = _with_env_dims([abstract(values[i]) for i in dyn], dyn, scope)
    _shapes_of(_bind_names(mapped, scope, dyn), scope, structs)
    return answers


def varying_sources(closed: Any, out_index: int, axis: str) -> tuple[list[int], list[str]]:
    """Why output `out_index` of `closed` (the user's function traced inside a shard_map
    that checks vma) varies over mesh axis `axis`: the inputs whose variation flows into
    it, and, where none does, the primitives that make it vary (`axis_index`, or a
    collective such as `ppermute` whose result JAX counts as varying). The `pvary` JAX
    inserts where an invariant value meets a varying one is not a reason of its own: the
    varying operand is, or the collective that needed it."""
    jaxpr = getattr(closed, "jaxpr", closed)
    inputs = {v: i for i, v in enumerate(jaxpr.invars)}
    made_by = {v: eqn for eqn in equations(jaxpr) for v in eqn.outvars}
    found: list[int] = []
    makers: list[str] = []
    inserted: list[str] = []  # collectives fed only by JAX's own pvary

    def varies(v: Any) -> bool:  # a literal (unhashable in JAX 0.10) is a constant: never varies
        return not is_literal(v) and axis in (varying_axes(v) or ())

    seen: set[Any] = set()
    todo = [(jaxpr.outvars[out_index], "")]
    while todo:
        v, consumer = todo.pop()
        if v in seen or not varies(v):
            continue
        seen.add(v)
        if v in inputs:
            found.append(inputs[v])
            continue
        eqn = made_by.get(v)
        if eqn is None:
            continue
        varying_in = [u for u in eqn.invars if varies(u)]
        name = eqn.primitive.name
        if not varying_in:
            (inserted if name == "pvary" else makers).append(consumer if name == "pvary" else name)
            continue
        todo.extend((u, name) for u in varying_in)
    if found or makers:
        return sorted(set(found)), list(dict.fromkeys(makers))
    return [], list(dict.fromkeys(c for c in inserted if c))
