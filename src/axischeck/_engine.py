"""The prediction engine: mapping levels applied to a call, then the per-example model.

Data flows one way: a `Call` of labelled leaves -> each `VmapLevel` resolves its
in_axes against the leaves, checks ranks and batch sizes (in JAX's order) and strips
the mapped axes -> the per-example model (signature unification, or an abstract
trace) gives per-example outputs -> each level inserts its batch dim per out_axes.
Every failure is raised with the derivation so far, so messages name the user's
arguments and axes.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import jax

from ._axes import Axes, _is_axis, canonical_axis
from ._dims import ANY, ArraySpec, Named, Variadic
from ._errors import ArgumentError, AxisCheckError, CollectiveError, FunctionError, OutputError, Place, SpecError
from ._explain import render_steps
from ._leaves import Call, Leaf, abstract, struct
from ._prediction import ArgRow, BaseStep, MapStep, OutRow, SpecRow, Step
from ._shape import Shape, format_shape
from ._spec import SigCore, SpecTree
from ._trace import Env, SilentCollectiveError, eval_per_example, vmap_accepts_out_axes
from ._trees import PrefixMismatch, broadcast_prefix, leaf_paths
from ._unify import Bindings, Conflict, Unifier, resolve, unbound_symbols


@dataclass(frozen=True, slots=True)
class Outcome:
    """Per-level result: output shapes (pytree of `Shape`) and the steps below."""

    shapes: Any
    steps: tuple[Step, ...]
    bindings: Bindings
    inputs_only: bool = False  # Signature.unify stops before the outputs


class Model(Protocol):
    """How outputs follow from a call: a signature, a trace, or a mapped model."""

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome: ...


def _table(trail: tuple[Step, ...]) -> str | None:
    return render_steps(trail, outputs=False) or None


@dataclass(frozen=True, slots=True)
class VmapLevel:
    """One mapping level (`vmap`, or `pmap` over devices): validated options and names.

    A pmap level differs from a vmap level only where JAX's pmap does (jax_semantics.md
    §6): `devices` bounds the size, `static` argument positions are not mapped, and
    negative axes and `out_axes=None` on mapped outputs, which JAX answers silently and
    wrongly, are reported.
    """

    in_axes: Axes
    out_axes: Axes
    axis_size: int | None = None
    axis_name: Hashable | None = None
    sum_match: bool = False
    fn_name: str = "f"
    symbol: str = "B"
    kind: str = "vmap"  # or "pmap"
    devices: int | None = None  # pmap: how many devices the size may use
    static: tuple[int, ...] = ()  # pmap: static_broadcasted_argnums (non-negative)

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


def _mismatch_error(level: VmapLevel, where: str, owner: str, m: PrefixMismatch, trail: tuple[Step, ...], cls: type[AxisCheckError]) -> AxisCheckError:
    return cls(
        f"{where}{m.path} is {m.spec_kind}, but {owner}{m.path} is {m.value_kind} ({m.detail});"
        f" {where} must be a tree prefix of it (lists and tuples differ, dict keys must match)",
        transform=level.describe(),
        table=_table(trail),
    )


def resolve_in_axes(level: VmapLevel, call: Call, trail: tuple[Step, ...]) -> list[int | None]:
    """The in_axes entry of every flat leaf (kwargs always 0), as `jax.vmap` resolves it."""
    spec = level.in_axes.value
    if level.kind == "pmap":
        _pmap_argument_checks(level, call, trail)
        if isinstance(spec, list):  # pmap keeps a top-level list: JAX's prefix check fails
            raise ArgumentError(
                f"pmap in_axes is a list, {spec!r}, but the positional arguments form a tuple;"
                " unlike vmap, pmap does not read a top-level list as a tuple",
                transform=level.describe(),
                table=_table(trail),
                fix=f"write in_axes={tuple(spec)!r}",
            )
    if isinstance(spec, tuple) and len(spec) != len(call.args):
        fix = None
        one: Any = jax.tree_util.tree_structure(call.args[0]) if len(call.args) == 1 else None
        if one is not None and one.num_nodes > 1 and one.node_data()[0] in (tuple, list):
            fix = f"to give the axes inside one tuple argument, nest them: in_axes=({spec!r},)"
        raise ArgumentError(
            f"in_axes has {len(spec)} entries but the function got {len(call.args)} positional"
            f" argument{'s' if len(call.args) != 1 else ''}; a tuple in_axes needs one entry per"
            " positional argument (keyword arguments are always mapped over axis 0)",
            transform=level.describe(),
            table=_table(trail),
            fix=fix,
        )
    axes: list[int | None] = []
    for i, arg in enumerate(call.args):
        if i in level.static:  # pmap ignores the in_axes entry of a static argument
            axes.extend([None] * len(jax.tree_util.tree_leaves(arg)))
            continue
        entry = spec[i] if isinstance(spec, tuple) else spec
        got = broadcast_prefix(entry, arg, _is_axis)
        if isinstance(got, PrefixMismatch):
            where = f"in_axes[{i}]" if isinstance(spec, tuple) else "in_axes"
            raise _mismatch_error(level, where, f"argument {call.arg_labels[i]}", got, trail, ArgumentError)
        axes.extend(got)
    for key in sorted(call.kwargs):
        axes.extend([0] * len(jax.tree_util.tree_leaves(call.kwargs[key])))
    return axes


def _pmap_argument_checks(level: VmapLevel, call: Call, trail: tuple[Step, ...]) -> None:
    """pmap's rules for static_broadcasted_argnums (pmap.py): passed positionally, hashable."""
    for i in level.static:
        if i >= len(call.args):
            raise ArgumentError(
                f"static_broadcasted_argnums names argument {i}, but only {len(call.args)} positional"
                " argument(s) were passed; static arguments must be passed positionally",
                transform=level.describe(),
                table=_table(trail),
            )
        value = jax.tree_util.tree_map(lambda leaf: leaf.value, call.args[i])  # the object itself
        try:
            hash(value)
        except TypeError:
            raise ArgumentError(
                f"static argument {call.arg_labels[i]} is not hashable; pmap needs hashable static arguments",
                transform=level.describe(),
                table=_table(trail),
            ) from None


def _pmap_size_checks(level: VmapLevel, leaves: list[Leaf], axes: list[int | None], fail: Callable[..., AxisCheckError]) -> None:
    """What pmap rejects (or answers wrongly) that vmap accepts."""
    if not any(a is not None and leaf.shape is not None for leaf, a in zip(leaves, axes, strict=True)):
        raise fail(
            ArgumentError,
            "pmap needs at least one argument with a mapped axis (axis_size cannot stand in for one)",
            fix="map at least one array argument (an int in in_axes)",
        )
    for leaf, axis in zip(leaves, axes, strict=True):
        if axis is not None and axis < 0 and leaf.shape is not None:
            raise fail(
                ArgumentError,
                f"pmap in_axes entry {axis} for {leaf.label} is negative; JAX 0.10's pmap shards"
                " axis 0 but squeezes the negative axis, so it fails or silently gives wrong shapes",
                fix=f"write the axis counted from the front: {axis + len(leaf.shape)}",
            )


def map_inputs(level: VmapLevel, call: Call, trail: tuple[Step, ...]) -> tuple[int, Call, MapStep, list[int | None]]:
    """Check ranks and batch sizes; strip the mapped axes. Mirrors api.py:vmap_f."""
    leaves, treedef = call.flat()
    axes = resolve_in_axes(level, call, trail)
    rows = [ArgRow(leaf.label, leaf.shape, axis, None) for leaf, axis in zip(leaves, axes, strict=True)]

    def fail(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
        step = MapStep(level.describe(), level.symbol, None, tuple(rows))
        return cls(problem, transform=level.describe(), table=_table(trail + (step,)), **facts)

    if level.kind == "pmap":
        _pmap_size_checks(level, leaves, axes, fail)
    if not leaves and level.axis_size is None:
        raise fail(
            ArgumentError,
            "there is nothing to map: no argument holds an array, and axis_size is not given",
            fix="pass at least one array argument, or give axis_size",
        )
    canon: list[int | None] = []
    for leaf, axis in zip(leaves, axes, strict=True):
        if axis is None or leaf.shape is None:
            canon.append(None)
            continue
        c = canonical_axis(axis, len(leaf.shape))
        if c is None:
            need = axis + 1 if axis >= 0 else -axis
            raise fail(
                ArgumentError,
                f"in_axes entry {axis} for {leaf.label} asks for axis {axis}, but {leaf.label} has"
                f" shape {format_shape(leaf.shape)} of rank {len(leaf.shape)} (it needs rank >= {need})",
                places=(leaf.place(None, leaf.shape),),
                fix=_range_fix(leaf, axis),
            )
        canon.append(c)
    sized = [
        leaf.place(c, leaf.shape[c])
        for leaf, c in zip(leaves, canon, strict=True)
        if c is not None and leaf.shape is not None
    ]
    sizes = [int(p.size) for p in sized]  # type: ignore[arg-type]
    distinct = set(sizes) | ({int(level.axis_size)} if level.axis_size is not None else set())
    if not distinct:
        _reject_mapped_non_arrays(leaves, axes, fail)
        raise fail(
            ArgumentError,
            "every in_axes entry is None, so there is no batch size",
            fix="map at least one argument (an int in in_axes), or give axis_size",
        )
    if len(distinct) > 1:
        groups = [[p for p in sized if p.size == size] for size, _ in Counter(sizes).most_common()]
        text = "; ".join(
            f"size {group[0].size} at " + ", ".join(f"axis {p.batched_axis} of {p.arg}" for p in group)
            for group in groups
        )
        places = tuple(group[0] for group in groups)
        if level.axis_size is not None:
            places = (Place("axis_size", None, None, int(level.axis_size)),) + places
            text = f"axis_size={level.axis_size}; {text}"
        raise fail(
            ArgumentError,
            f"the mapped axes disagree on the batch size: {text}",
            symbol=f"batch size {level.symbol}",
            places=places,
        )
    size = int(next(iter(distinct)))
    _reject_mapped_non_arrays(leaves, axes, fail)
    if level.kind == "pmap" and (size == 0 or (level.devices is not None and size > level.devices)):
        raise fail(
            ArgumentError,
            f"pmap maps an axis of size {size} over devices, but {level.devices} device(s) are"
            " available: the size must be between 1 and the device count",
            symbol=f"batch size {level.symbol}",
            places=tuple(sized[:1]),
            fix=f"map at most {level.devices} per call (reshape to (devices, -1, ...) and vmap inside),"
            f" or run with {size} devices",
        )
    new_leaves = []
    for i, (leaf, c) in enumerate(zip(leaves, canon, strict=True)):
        if c is None or leaf.shape is None:
            new_leaves.append(leaf)
            continue
        per = leaf.shape.delete(c)
        new_leaves.append(
            Leaf(leaf.label, per, struct(per, abstract(leaf.value).dtype), leaf.user_shape, leaf.origin[:c] + leaf.origin[c + 1 :])
        )
        rows[i] = replace(rows[i], per_example=per)
    for i, (leaf, c) in enumerate(zip(leaves, canon, strict=True)):
        if c is None:
            rows[i] = replace(rows[i], per_example=leaf.shape)
    step = MapStep(level.describe(), level.symbol, size, tuple(rows))
    return size, call.rebuilt(treedef, new_leaves), step, canon


def _reject_mapped_non_arrays(leaves: list[Leaf], axes: list[int | None], fail: Callable[..., AxisCheckError]) -> None:
    for leaf, axis in zip(leaves, axes, strict=True):
        if axis is not None and leaf.shape is None:
            raise fail(
                ArgumentError,
                f"{leaf.label} is a {type(leaf.value).__name__}, not a JAX array, so it cannot be mapped"
                f" (in_axes entry {axis})",
                fix=f"give {leaf.label} the in_axes entry None to pass it through unmapped",
            )


def _range_fix(leaf: Leaf, axis: int) -> str | None:
    assert leaf.shape is not None
    r = len(leaf.shape)
    if r == 0:
        return f"{leaf.label} is a scalar: give it the in_axes entry None (scalars cannot be mapped)"
    return f"in_axes entries for {leaf.label} must be in [{-r}, {r - 1}], or None to leave it unmapped"


# -------------------------------------------------------------------------- outputs


def map_outputs(
    level: VmapLevel,
    size: int,
    shapes: Any,
    is_batched: Callable[[int], bool],
    trail: tuple[Step, ...],
) -> tuple[Any, tuple[OutRow, ...]]:
    """Insert the batch dim per out_axes (counted in the batched output's rank)."""
    leaves, treedef = jax.tree_util.tree_flatten(shapes)
    labels = ["output" + p for p in leaf_paths(shapes)]
    got = broadcast_prefix(level.out_axes.value, shapes, _is_axis)
    if isinstance(got, PrefixMismatch):
        raise _mismatch_error(level, "out_axes", "the output", got, trail, OutputError)
    out: list[Shape] = []
    rows: list[OutRow] = []
    for j, (label, shape, axis) in enumerate(zip(labels, leaves, got, strict=True)):
        if axis is None:
            if not level.sum_match and is_batched(j):
                name = "" if level.axis_name is None else f" (axis_name={level.axis_name!r})"
                silently = " (JAX's pmap would silently return device 0's block)" if level.kind == "pmap" else ""
                raise OutputError(
                    f"out_axes is None for {label}, but {label} depends on the mapped arguments, so it"
                    f" has a batch dimension{name} that None would have to drop{silently}",
                    transform=level.describe(),
                    table=_table(trail),
                    places=(Place(label, shape),),
                    fix=f"give {label} an integer out_axes entry (0 puts the batch first), or pass sum_match=True to sum over the batch",
                )
            new = shape
        else:
            r = len(shape) + 1
            c = canonical_axis(axis, r)
            if level.kind == "pmap" and axis < 0:
                raise OutputError(
                    f"pmap out_axes entry {axis} for {label} is negative; JAX 0.10's pmap silently"
                    " returns wrongly shaped outputs for negative out_axes",
                    transform=level.describe(),
                    table=_table(trail),
                    places=(Place(label, shape),),
                    fix=f"count the axis from the front: out_axes={c if c is not None else 0}",
                )
            if c is None:
                raise OutputError(
                    f"out_axes entry {axis} for {label} is out of range: the per-example output has"
                    f" shape {format_shape(shape)}, so the batched output has rank {r} and its axes"
                    f" are {-r}..{r - 1}",
                    transform=level.describe(),
                    table=_table(trail),
                    places=(Place(label, shape),),
                    fix=f"use an out_axes entry in [{-r}, {r - 1}] for {label}",
                )
            new = shape.insert(c, size)
        out.append(new)
        rows.append(OutRow(label, shape, axis, new))
    return jax.tree_util.tree_unflatten(treedef, out), tuple(rows)


# ---------------------------------------------------------------------------- models


@dataclass(frozen=True, slots=True)
class VmapModel:
    """`vmap` of an inner model. `fn` (the mapped callable) settles out_axes=None."""

    level: VmapLevel
    inner: Model
    fn: Callable[..., Any] | None = None

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        if self.level.kind == "pmap" and any(kind == "pmap" for *_, kind in env):
            raise ArgumentError(
                "pmap inside pmap fails in JAX 0.10 (a context-mesh error): nested pmap is not supported",
                transform=self.level.describe(),
                table=_table(trail),
                fix="use one pmap over a flattened device axis, or jax.shard_map over a 2-D mesh",
            )
        size, per_call, step, axes = map_inputs(self.level, call, trail)
        inner_env = env + ((self.level.axis_name, size, tuple(axes), self.level.kind),)
        inner = self.inner.predict(per_call, inner_env, trail + (step,))
        if inner.inputs_only:  # Signature.unify: no outputs to map
            return Outcome(None, (step,) + inner.steps, inner.bindings, inputs_only=True)
        # Without a function to ask, an output is batched iff some input is mapped here.
        mapped = any(r.axis is not None and r.shape is not None for r in step.args)
        probe = _Probe(self, call, axes, size, env, inner.shapes) if mapped or self.fn is not None else None

        def is_batched(j: int) -> bool:
            return probe is not None and probe.batched(j)

        shapes, outs = map_outputs(self.level, size, inner.shapes, is_batched, trail + (step,) + inner.steps)
        return Outcome(shapes, (replace(step, outs=outs),) + inner.steps, inner.bindings)


@dataclass(slots=True)
class _Probe:
    """Asks JAX which outputs are batched, only when out_axes has None entries."""

    model: VmapModel
    call: Call
    axes: list[int | None]
    size: int
    env: Env
    shapes: Any
    _answers: dict[int, bool] | None = None

    def batched(self, j: int) -> bool:
        fn = self.model.fn
        if fn is None:
            return True  # a signature cannot say; outputs depend on mapped inputs
        if self._answers is None:
            self._answers = {}
        if j not in self._answers:
            leaves, treedef = self.call.flat()
            n = len(jax.tree_util.tree_leaves(self.shapes))
            spec = jax.tree_util.tree_unflatten(
                jax.tree_util.tree_structure(self.shapes), [None if k == j else 0 for k in range(n)]
            )
            try:
                self._answers[j] = not vmap_accepts_out_axes(
                    fn, treedef, [leaf.value for leaf in leaves], self.axes, spec, self.size, self.model.level.axis_name, self.env
                )
            except Exception:  # the probe follows vmap's rules; where they refuse, assume batched
                self._answers[j] = True
        return self._answers[j]


@dataclass(frozen=True, slots=True)
class TraceModel:
    """No signature: the per-example output comes from an abstract trace of `fn`."""

    fn: Callable[..., Any]
    name: str = "f"

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        shapes = trace(self.fn, self.name, call, env, trail)
        outs = tuple(SpecRow(label, shape, "", "") for label, shape in _labelled(shapes))
        return Outcome(shapes, (BaseStep("traced", (), outs),), Bindings())


def _labelled(shapes: Any) -> list[tuple[str, Shape]]:
    return list(zip(["output" + p for p in leaf_paths(shapes)], jax.tree_util.tree_leaves(shapes), strict=True))


def trace(fn: Callable[..., Any], name: str, call: Call, env: Env, trail: tuple[Step, ...]) -> Any:
    leaves, treedef = call.flat()
    returned: list[bool] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        returned.append(True)
        return out

    try:
        return eval_per_example(recording, treedef, [leaf.value for leaf in leaves], env)
    except AxisCheckError:
        raise
    except SilentCollectiveError as err:
        text = str(err)
        if text.startswith("ppermute"):
            raise CollectiveError(
                f"{name} calls {text}; under vmap JAX accepts duplicates silently (and the result"
                " is meaningless), so axischeck reports it",
                transform=_innermost_transform(trail),
                table=_table(trail),
                fix="give each source and each destination at most once in perm",
            ) from None
        silent = not any(kind == "pmap" for *_, kind in env)
        raise CollectiveError(
            f"{name} calls psum_scatter (tiled=False), which needs the scattered dimension to equal"
            f" the size of the mapped axis ({text.removeprefix('psum_scatter: ')})"
            + (
                "; under vmap JAX does not check this and silently returns a mislabelled batch sum,"
                " so axischeck reports it"
                if silent
                else ""
            ),
            transform=_innermost_transform(trail),
            table=_table(trail),
            fix="pass tiled=True (the dimension must then divide evenly by the axis size), or make"
            " the mapped axis as long as the scattered dimension (that many devices under pmap)",
        ) from None
    except Exception as err:
        shapes = ", ".join(
            f"{leaf.label}: {format_shape(leaf.shape)}" for leaf in leaves if leaf.shape is not None
        )
        if returned:  # the function itself finished: JAX failed batching what it returned
            raise OutputError(
                f"{name} returns, but JAX cannot batch its outputs over the named axes in scope"
                f" (per-example arguments {shapes or 'none'}): {type(err).__name__}: {err}",
                table=_table(trail),
            ) from err
        raise FunctionError(
            f"{name} fails on the per-example arguments ({shapes or 'no arrays'}):"
            f" {type(err).__name__}: {err}",
            transform=_innermost_transform(trail),
            table=_table(trail),
            notes=_known_defects(str(err)),
        ) from err


_EINSUM_SIZES = re.compile(r"Size of label '(\w)' for operand (\d+) \((\d+)\) does not match previous terms \((\d+)\)")


def _known_defects(message: str) -> tuple[str, ...]:
    """Corrections for JAX messages known to mislead (jax_semantics.md §9)."""
    m = _EINSUM_SIZES.search(message)
    if m:
        label, operand, shown, previous = m.groups()
        return (
            f"(JAX's einsum message swaps the sizes: operand {operand} has '{label}' of size"
            f" {previous}, and the earlier operands have {shown}.)",
        )
    return ()


def _innermost_transform(trail: tuple[Step, ...]) -> str | None:
    maps = [s for s in trail if isinstance(s, MapStep)]
    return maps[-1].transform if maps else None


@dataclass(frozen=True, slots=True)
class SignatureModel:
    """A declared per-example signature; `fn` is traced only for undeclared outputs."""

    core: SigCore
    fn: Callable[..., Any] | None = None
    name: str = "f"
    inputs_only: bool = False

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        unifier = Unifier()
        for axis_name, size, *_ in env:
            if isinstance(axis_name, str):  # innermost binding of a name wins (later in env)
                unifier.bind_axis_name(axis_name, size, Place(f"the mapped axis {axis_name!r}", None, None, size))
        rows: list[SpecRow] = []
        first_conflict: Conflict | None = None

        def fail(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
            base = BaseStep("signature", tuple(rows), ())
            return cls(problem, transform=self.transform(trail), table=_table(trail + (base,)), **facts)

        for spec, arg, param_label in self._pairs(call, fail):
            got = broadcast_prefix(spec.value, arg, lambda x: isinstance(x, ArraySpec))
            if isinstance(got, PrefixMismatch):
                raise fail(
                    ArgumentError,
                    f"the signature of {param_label}{got.path} is {got.spec_kind}, but the argument is"
                    f" {got.value_kind} ({got.detail})",
                )
            for leaf, leaf_spec in zip(jax.tree_util.tree_leaves(arg), got, strict=True):
                if leaf_spec == ANY:
                    rows.append(SpecRow(leaf.label, leaf.shape, str(leaf_spec), ""))
                    continue
                if leaf.shape is None:
                    raise fail(
                        ArgumentError,
                        f"{leaf.label} is a {type(leaf.value).__name__}, not an array, but the"
                        f" signature declares {leaf_spec}",
                    )
                conflict = unifier.unify(leaf_spec, leaf.shape, leaf.place, leaf.label)
                if conflict is None:
                    rows.append(SpecRow(leaf.label, leaf.shape, str(leaf_spec), _binds(leaf_spec, unifier)))
                    continue
                first = conflict.places[0] if len(conflict.places) > 1 else None
                note = (
                    f"<-- conflicts with {conflict.symbol}={_size_text(first.size)} from {first.arg}"
                    if first is not None and conflict.symbol is not None and first.size is not None
                    else "<-- does not match"
                )
                rows.append(SpecRow(leaf.label, leaf.shape, str(leaf_spec), _binds_raw(leaf_spec, leaf.shape), note))
                # Keep going, so the table shows every argument; the first conflict is reported.
                first_conflict = first_conflict or conflict
        if first_conflict is not None:
            c = first_conflict
            raise fail(ArgumentError, c.problem, symbol=c.symbol, places=c.places)
        bindings = unifier.bindings()
        if self.inputs_only:
            return Outcome(None, (BaseStep("signature", tuple(rows), ()),), bindings, inputs_only=True)
        shapes = self._outputs(bindings, call, env, trail, rows, fail)
        outs = []
        out_specs = self.core.output.leaves if self.core.output is not None else ()
        for k, (label, shape) in enumerate(_labelled(shapes)):
            spec_text = str(out_specs[k]) if k < len(out_specs) else ""
            outs.append(SpecRow(label, shape, spec_text, ""))
        return Outcome(shapes, (BaseStep("signature", tuple(rows), tuple(outs)),), bindings)

    def transform(self, trail: tuple[Step, ...]) -> str:
        maps = [s for s in trail if isinstance(s, MapStep)]
        return maps[-1].transform if maps else f"check({self.name}, signature={self.core})"

    def _pairs(self, call: Call, fail: Callable[..., AxisCheckError]) -> list[tuple[SpecTree, Any, str]]:
        if self.fn is not None:
            try:
                bindable = inspect.signature(self.fn)
            except (TypeError, ValueError):
                bindable = None
            if bindable is not None:
                try:
                    bindable.bind(*call.args, **call.kwargs)
                except TypeError as err:
                    raise fail(ArgumentError, f"{self.name} cannot be called with these arguments: {err}") from None
        core = self.core
        pairs: list[tuple[SpecTree, Any, str]] = []
        if core.params is None:
            if call.kwargs:
                raise fail(
                    SpecError,
                    f"keyword arguments {sorted(call.kwargs)} cannot be matched to a signature without"
                    " parameter names",
                    fix="pass them positionally, or decorate the function so its parameter names are known",
                )
            if len(call.args) != len(core.inputs):
                raise fail(
                    ArgumentError,
                    f"the signature declares {len(core.inputs)} inputs ({core}) but got"
                    f" {len(call.args)} positional arguments",
                )
            for i, (spec, arg) in enumerate(zip(core.inputs, call.args, strict=True)):
                pairs.append((spec, arg, f"argument {i}"))
            return pairs
        index = {name: i for i, name in enumerate(core.params)}
        for i, arg in enumerate(call.args):
            param = call.arg_params[i]
            k = index.get(param) if param is not None else (i if i < len(core.inputs) else None)
            if k is not None:
                pairs.append((core.inputs[k], arg, param or f"args[{i}]"))
        for name, arg in call.kwargs.items():
            k = index.get(name)
            if k is not None:
                pairs.append((core.inputs[k], arg, name))
        return pairs

    def _outputs(
        self,
        bindings: Bindings,
        call: Call,
        env: Env,
        trail: tuple[Step, ...],
        rows: list[SpecRow],
        fail: Callable[..., AxisCheckError],
    ) -> Any:
        out = self.core.output
        if out is not None:
            resolved = [resolve(spec, bindings.sizes) for spec in out.leaves]
            if all(r is not None for r in resolved):
                return jax.tree_util.tree_unflatten(out.treedef, resolved)
        if self.fn is None:
            missing = sorted({m for spec in (out.leaves if out else ()) for m in unbound_symbols(spec, bindings.sizes)})
            raise fail(
                SpecError,
                "the signature does not determine the output shape"
                + (f": {', '.join(missing)} is not bound by any input" if out is not None else " (no '->' output)"),
                fix="name output dimensions after input dimensions, or decorate a function so it can be traced",
            )
        shapes = trace(self.fn, self.name, call, env, trail + (BaseStep("signature", tuple(rows), ()),))
        if out is not None:
            check_output(self.core, shapes, bindings, self.transform(trail), trail)
        return shapes


def _binds(spec: ArraySpec, unifier: Unifier) -> str:
    parts = []
    names = [d.name for d in spec.dims if isinstance(d, (Named, Variadic)) and d.name is not None]
    for sym in dict.fromkeys(names):
        if sym in unifier.sizes:
            size = unifier.sizes[sym]
            parts.append(f"{sym}={format_shape(size) if isinstance(size, tuple) else size}")
    return "  ".join(parts)


def _size_text(size: Any) -> str:
    return format_shape(size) if isinstance(size, tuple) else str(size)


def _binds_raw(spec: ArraySpec, shape: Shape) -> str:
    """What this leaf alone would bind (for the row that conflicts)."""
    u = Unifier()
    u.unify(spec, shape, lambda axis, size: Place("", None, axis, size), "")
    return _binds(spec, u)


def check_output(core: SigCore, shapes: Any, bindings: Bindings, transform: str, trail: tuple[Step, ...]) -> None:
    """Raise `OutputError` if per-example output `shapes` contradict the declared output."""
    assert core.output is not None
    got = broadcast_prefix(core.output.value, shapes, lambda x: isinstance(x, ArraySpec))
    if isinstance(got, PrefixMismatch):
        raise OutputError(
            f"the output{got.path} is {got.value_kind}, but the signature declares {got.spec_kind} ({got.detail})",
            transform=transform,
            table=_table(trail),
        )
    unifier = Unifier(dict(bindings.sizes), dict(bindings.places))
    for (label, shape), spec in zip(_labelled(shapes), got, strict=True):
        conflict = unifier.unify(spec, shape, _output_place(label, shape), label)
        if conflict is not None:
            raise OutputError(
                f"the function's output contradicts its signature: {label} is declared {spec}"
                f" but has per-example shape {format_shape(shape)} ({conflict.problem})",
                transform=transform,
                symbol=conflict.symbol,
                places=conflict.places,
                table=_table(trail),
            )


def has_axis_names(model: Model) -> bool:
    """Whether any vmap level inside `model` names its axis (collectives may use it)."""
    return isinstance(model, VmapModel) and (model.level.axis_name is not None or has_axis_names(model.inner))


def model_symbols(model: Model) -> frozenset[str]:
    """The batch symbols of every vmap level inside `model` (so new ones stay fresh)."""
    if isinstance(model, VmapModel):
        return model_symbols(model.inner) | {model.level.symbol}
    if isinstance(model, SignatureModel):
        return model.core.symbols
    return frozenset()


def _output_place(label: str, shape: Shape) -> Callable[[int | None, Any], Place]:
    return lambda axis, size: Place(label, shape, axis, size)


def run(model: Model, call: Call) -> Outcome:
    return model.predict(call, (), ())

