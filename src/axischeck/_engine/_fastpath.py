"""The compiled fast path for signature predictions: structure once, shapes many times.

Everything that depends only on the structure of a call (which in_axes entry each leaf
gets, which spec each leaf is matched against, where each output's batch dims go) is
resolved once into a `Plan`; a shard_map around one is a `ShardPlan` (how many devices
split each argument dim and join each output dim). Running a plan is a tight loop over
integers that either yields the output shapes or gives up; giving up sends the call down
the full engine, which raises the explained error. The two paths share one source of
truth: a plan is built *by* the engine's own resolution functions, and only for models
whose outputs follow from the signature alone (not where JAX's own trace must settle
something, as a replication promise of out_specs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import PartitionSpec

from .._core._dims import ANY, ArraySpec, Fixed, Named, Variadic
from .._core._errors import AxisCheckError
from .._core._jax_compat import INFER_SPECS
from .._core._leaves import Call
from .._core._prediction import Prediction, ShardPrediction
from .._core._shape import Shape
from .._core._steps import Step
from .._core._trees import PrefixMismatch, broadcast_prefix
from ._levels import axes_of, resolve_in_axes
from ._mesh import MeshShape, SpecMistake, context_conflict, spec_dims
from ._models import MapModel, Model, SignatureModel
from ._shard_model import ShardModel, is_spec_leaf
from ._unify import resolve

Dims = tuple[int, ...]
Replay = Callable[[], tuple[Step, ...]]
"""Derives a planned prediction's table, only when someone reads it."""


@dataclass(frozen=True, slots=True)
class LevelPlan:
    """One vmap level, resolved against a call structure."""

    axes: tuple[int | None, ...]  # per flat argument leaf
    axis_size: int | None
    name: str | None  # the axis name, when it can stand for a dimension symbol
    out_axes: tuple[int | None, ...]  # per output leaf (None only with sum_match)


@dataclass(frozen=True, slots=True)
class Plan:
    """A call structure's whole prediction, minus the sizes."""

    levels: tuple[LevelPlan, ...]  # outermost first
    specs: tuple[ArraySpec | None, ...]  # per flat argument leaf; None: unchecked
    out_specs: tuple[ArraySpec, ...]
    out_treedef: Any
    single: bool = False  # the output is one array (no unflatten needed)

    def run_flat(self, shapes: list[Dims | None], sizes: dict[str, int | Dims]) -> tuple[list[Dims], int | None] | None:
        """The flat output shapes and the outermost batch size, or None to take the full
        engine. `sizes`: symbols bound before the arguments (mesh axes), updated in place."""
        batch: list[int] = []
        for level in self.levels:
            size = level.axis_size
            for i, axis in enumerate(level.axes):
                if axis is None:
                    continue
                s = shapes[i]
                assert s is not None
                r = len(s)
                if axis < -r or axis >= r:
                    return None
                c = axis + r if axis < 0 else axis
                if size is None:
                    size = s[c]
                elif s[c] != size:
                    return None
                shapes[i] = s[:c] + s[c + 1 :]
            if size is None:
                return None
            batch.append(size)
            if level.name is not None:
                sizes[level.name] = size
        for spec, shape in zip(self.specs, shapes, strict=True):
            if spec is not None and (shape is None or not _match(spec, shape, sizes)):
                return None
        outs: list[Dims] = []
        for spec in self.out_specs:
            out = resolve(spec, sizes)
            if out is None:
                return None
            outs.append(out)
        for level, size in zip(reversed(self.levels), reversed(batch), strict=True):
            for j, axis in enumerate(level.out_axes):
                if axis is None:
                    continue  # sum_match: the batch is summed away
                r = len(outs[j]) + 1
                if axis < -r or axis >= r:
                    return None
                c = axis + r if axis < 0 else axis
                outs[j] = outs[j][:c] + (size,) + outs[j][c:]
        return outs, (batch[0] if batch else None)

    def unflatten(self, outs: list[Dims]) -> Any:
        shaped = [tuple.__new__(Shape, o) for o in outs]  # already ints: skip Shape's checks
        return shaped[0] if self.single else jax.tree_util.tree_unflatten(self.out_treedef, shaped)

    def predict(self, keys: tuple[Any, ...], replay: Replay) -> Prediction | None:
        """The prediction for arguments keyed as `shape_key` keys them, or None to take the
        full engine (which raises the explained error, or agrees)."""
        ran = self.run_flat([k if type(k) is tuple else None for k in keys], {})
        if ran is None:
            return None
        outs, axis_size = ran
        return Prediction(self.unflatten(outs), axis_size, replay=replay)


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """A shard_map's prediction for one call structure, minus the sizes: how many devices
    split each argument dim, the plan of the function on the blocks, and how many devices
    each output dim is assembled from."""

    splits: tuple[tuple[int, ...] | None, ...]  # per flat argument leaf, per leading dim; None: passed whole
    mesh: tuple[tuple[str, int], ...]  # every mesh axis: bound inside, so signatures may name them
    inner: Plan
    joins: tuple[tuple[int, ...], ...]  # per output leaf, per leading dim
    in_treedef: Any  # the positional arguments' structure (in_block_shapes)
    jax_mesh: Any  # the mesh the user passed, which a `jax.set_mesh` context must not contradict

    def predict(self, keys: tuple[Any, ...], replay: Replay) -> ShardPrediction | None:
        blocks: list[Dims] = []
        for split, key in zip(self.splits, keys, strict=True):
            if type(key) is not tuple:
                return None  # JAX reads every argument as an array
            if split is None:
                blocks.append(key)
                continue
            if len(split) > len(key):
                return None
            block = list(key)
            for d, n in enumerate(split):
                if key[d] % n:
                    return None
                block[d] = key[d] // n
            blocks.append(tuple(block))
        if context_conflict(self.jax_mesh) is not None:
            return None
        ran = self.inner.run_flat(list[Dims | None](blocks), dict(self.mesh))
        if ran is None:
            return None
        outs, _ = ran
        assembled: list[Dims] = []
        for out, join in zip(outs, self.joins, strict=True):
            if len(join) > len(out):
                return None
            assembled.append(tuple([s * join[d] for d, s in enumerate(out[: len(join)])]) + out[len(join) :])
        in_blocks = jax.tree_util.tree_unflatten(self.in_treedef, [tuple.__new__(Shape, b) for b in blocks])
        inner = self.inner
        return ShardPrediction(
            inner.unflatten(assembled), None, inner.unflatten(outs), in_blocks, dict(self.mesh), replay=replay
        )


def _match(spec: ArraySpec, shape: Dims, sizes: dict[str, int | Dims]) -> bool:
    dims = spec.dims
    v = spec.variadic_index
    r = len(shape)
    if v is None:
        if r != len(dims):
            return False
        pairs = zip(dims, shape, strict=True)
    else:
        tail = len(dims) - v - 1
        if r < len(dims) - 1:
            return False
        var = dims[v]
        assert isinstance(var, Variadic)
        if var.name is not None:
            run = shape[v : r - tail]
            if sizes.setdefault(var.name, run) != run:
                return False
        pairs = zip(dims[:v] + dims[v + 1 :], shape[:v] + shape[r - tail :], strict=True)
    for dim, size in pairs:
        if isinstance(dim, Named):
            if dim.broadcast and size == 1:
                continue
            if sizes.setdefault(dim.name, size) != size:
                return False
        elif isinstance(dim, Fixed) and dim.size != size:
            return False
    return True


def compile_plan(model: Model, call: Call, treedef: Any) -> Plan | ShardPlan | None:
    """A plan for `model` on calls shaped like `call` (flattened by `treedef`), or None
    if it needs the engine."""
    if isinstance(model, ShardModel):
        return _shard_plan(model, call, treedef)
    return _map_plan(model, call)


def _map_plan(model: Model, call: Call) -> Plan | None:
    """vmap levels (maybe none) around a declared signature."""
    levels: list[MapModel] = []
    while isinstance(model, MapModel):
        levels.append(model)
        model = model.inner
    if not isinstance(model, SignatureModel) or model.core.output is None or model.inputs_only:
        return None
    if any(vm.level.kind != "vmap" for vm in levels):
        return None  # pmap's extra rules (devices, statics, signs) live in the engine only
    leaves, _ = call.flat()
    out_value = model.core.output.value
    level_plans = []
    try:
        for vm in levels:
            lv = vm.level
            axes = resolve_in_axes(lv, call, ())
            if any(a is not None and leaf.shape is None for leaf, a in zip(leaves, axes, strict=True)):
                return None
            out_axes = axes_of(lv, lv.out_axes.value, out_value)
            if isinstance(out_axes, PrefixMismatch) or (None in out_axes and not lv.sum_match):
                return None
            name = lv.axis_name if isinstance(lv.axis_name, str) else None
            level_plans.append(LevelPlan(tuple(axes), lv.axis_size, name, tuple(out_axes)))
        by_leaf: dict[int, ArraySpec] = {}
        for tree, arg, _label in model._pairs(call, _give_up):
            got = broadcast_prefix(tree.value, arg, lambda x: isinstance(x, ArraySpec))
            if isinstance(got, PrefixMismatch):
                return None
            for leaf, leaf_spec in zip(jax.tree_util.tree_leaves(arg), got, strict=True):
                by_leaf[id(leaf)] = leaf_spec
    except AxisCheckError:
        return None
    specs: list[ArraySpec | None] = []
    for leaf in leaves:
        spec = by_leaf.get(id(leaf), ANY)
        if spec == ANY:
            specs.append(None)
        elif leaf.shape is None:
            return None
        else:
            specs.append(spec)
    out_leaves, out_treedef = jax.tree_util.tree_flatten(out_value)
    td: Any = out_treedef
    single = bool(td.num_nodes == 1 and len(out_leaves) == 1)
    return Plan(tuple(level_plans), tuple(specs), tuple(out_leaves), out_treedef, single)


def _shard_plan(model: ShardModel, call: Call, treedef: Any) -> ShardPlan | None:
    """A shard_map on a given mesh of a function planned by `_map_plan`. Not for what the
    engine leaves to JAX's own trace (out_specs that promise replication, checked by
    JAX), nor for Explicit axes or in_specs read from the arguments' shardings."""
    o = model.options
    mesh = o.mesh
    if mesh is None or mesh.explicit or o.in_specs is INFER_SPECS or call.kwargs:
        return None
    manual = o.axis_names or frozenset(mesh.names)
    if not manual <= set(mesh.names):
        return None
    inner = _map_plan(model.inner, call)
    if inner is None:
        return None
    try:
        if model._promises_replication(mesh, manual):
            return None
        in_specs = broadcast_prefix(o.in_specs, call.args, is_spec_leaf)
        out_specs = broadcast_prefix(o.out_specs, inner.out_treedef.unflatten(inner.out_specs), _is_spec)
        if isinstance(in_specs, PrefixMismatch) or isinstance(out_specs, PrefixMismatch):
            return None
        leaves, _ = call.flat()
        splits: list[tuple[int, ...] | None] = []
        for leaf, spec in zip(leaves, in_specs, strict=True):
            if leaf.shape is None:
                return None
            splits.append(None if spec is None else _devices_per_dim(spec, mesh, manual))
        joins = tuple(_devices_per_dim(spec, mesh, manual) for spec in out_specs)
    except SpecMistake:
        return None
    mesh_sizes = tuple(zip(mesh.names, mesh.sizes, strict=True))
    return ShardPlan(tuple(splits), mesh_sizes, inner, joins, treedef.children()[0], o.jax_mesh)


def _devices_per_dim(spec: Any, mesh: MeshShape, manual: frozenset[str]) -> tuple[int, ...]:
    dims = spec_dims(spec, mesh, manual, "")
    named = [a for axes in dims for a in axes]
    if len(set(named)) != len(named):
        raise SpecMistake("a mesh axis splits two dims")
    return tuple(mesh.size(axes) for axes in dims)


def _is_spec(x: object) -> bool:
    return isinstance(x, PartitionSpec)


def _give_up(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
    return cls(problem)
