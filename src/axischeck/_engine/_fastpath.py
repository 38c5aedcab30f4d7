"""The compiled fast path for signature predictions: structure once, shapes many times.

Everything that depends only on the structure of a call (which in_axes entry each leaf
gets, which spec each leaf is matched against, where each output's batch dims go) is
resolved once into a `Plan`. Running a plan is a tight loop over integers that either
yields the output shapes or gives up; giving up sends the call down the full engine,
which raises the explained error. The two paths share one source of truth: a plan is
built *by* the engine's own resolution functions, and only for models whose outputs
follow from the signature alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax

from .._core._axes import _is_axis
from .._core._dims import ANY, ArraySpec, Fixed, Named, Variadic
from .._core._errors import AxisCheckError
from .._core._leaves import Call
from .._core._shape import Shape
from .._core._trees import PrefixMismatch, broadcast_prefix
from ._levels import resolve_in_axes
from ._models import MapModel, Model, SignatureModel
from ._unify import resolve

Dims = tuple[int, ...]


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

    def run(self, shapes: list[Dims | None]) -> tuple[Any, int | None] | None:
        """Output shapes and the outermost batch size, or None to take the full engine."""
        sizes: dict[str, int | Dims] = {}
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
        shaped = [tuple.__new__(Shape, o) for o in outs]  # already ints: skip Shape's checks
        tree = shaped[0] if self.single else jax.tree_util.tree_unflatten(self.out_treedef, shaped)
        return tree, (batch[0] if batch else None)


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


def compile_plan(model: Model, call: Call) -> Plan | None:
    """A plan for `model` on calls shaped like `call`, or None if it needs the engine."""
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
            out_axes = broadcast_prefix(lv.out_axes.value, out_value, lambda x: _is_axis(x))
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


def _give_up(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
    return cls(problem)
