"""The models: how a call's outputs follow from its inputs.

Data flows one way: a `Call` of labelled leaves -> each `MapModel` maps it through its
level (`_levels.py`) -> the innermost model gives per-example outputs, from a signature
(`SignatureModel`, pure unification) or an abstract trace (`TraceModel`) -> each level
inserts its batch dim per out_axes on the way back out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

import jax

from .._core._dims import ANY, ArraySpec, Named, Variadic
from .._core._errors import (
    ArgumentError,
    AxisCheckError,
    AxisCheckWarning,
    CollectiveError,
    FunctionError,
    OutputError,
    Place,
    SpecError,
    warn_at_user,
)
from .._core._explain import tables_read
from .._core._jax_compat import (
    einsum_size_mismatch,
    mismatched_sizes,
    spmd_axis_in_shard_map_specs,
    tiled_scatter_indivisible,
    tracing,
    unbound_axis_name,
    vmap_shmap_error_enabled,
)
from .._core._leaves import Call, Leaf, check_jax_outputs
from .._core._scene import Scene
from .._core._shape import Shape
from .._core._spec import SigCore, SpecTree
from .._core._steps import BaseStep, MapStep, ShardStep, SpecRow, SpecRows, Step
from .._core._text import format_shape, int_text
from .._core._trees import PrefixMismatch, broadcast_flat, broadcast_prefix, leaf_paths, walk_prefix
from ._levels import MapLevel, Sources, device_axis_size, map_inputs, map_outputs
from ._trace import (
    Bound,
    Env,
    PerExample,
    Replay,
    SilentCollectiveError,
    batched_outputs,
    collective_names,
    eval_per_example,
    only_vmaps,
    recorded_first,
    under_pmap,
)
from ._unify import Bindings, Conflict, Unifier, resolve, unbound_symbols


@dataclass(frozen=True, slots=True)
class Outcome:
    """Per-level result: output shapes (pytree of `Shape`) and the steps below."""

    shapes: Any
    steps: tuple[Step, ...]
    bindings: Bindings
    inputs_only: bool = False  # Signature.unify stops before the outputs
    traced: bool = False  # the user's function was traced: the answer may depend on anything it saw
    replay: Replay | None = None  # the traced function as JAX recorded it, for the levels around it
    batched: list[bool] | None = None  # which flat outputs the innermost level batches, if a trace said


class Model(Protocol):
    """How outputs follow from a call: a signature or a trace (the innermost model), or a
    transform level (vmap, pmap, shard_map) of an `inner` model."""

    @property
    def inner(self) -> Model | None: ...

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome: ...


def chain(model: Model) -> Iterator[Model]:
    """`model`, then each model inside it, outermost first."""
    current: Model | None = model
    while current is not None:
        yield current
        current = current.inner


@dataclass(frozen=True, slots=True)
class MapModel:
    """A mapping level (vmap, or pmap over devices) around an inner model. `fn` (the mapped
    callable) settles out_axes=None."""

    level: MapLevel
    inner: Model
    fn: Callable[..., Any] | None = None

    @property
    def shape_keyed(self) -> bool:
        """Not for a pmap in a job of several processes: whether it runs over every
        process's devices or this one's alone depends on whether JAX is tracing it."""
        return self.level.job is None

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        level = self.level
        job = level.job
        if job is not None and not job.local_only and (env or tracing()):
            level = replace(level, job=replace(job, local_only=True))  # traced: this process's devices
        if level.kind == "pmap" and under_pmap(env):
            raise Scene(trail, level.describe()).error(
                ArgumentError,
                "pmap inside pmap fails in JAX 0.10 (a context-mesh error): nested pmap is not supported",
                hint="use one pmap over a flattened device axis, or jax.shard_map over a 2-D mesh",
            )
        self._check_spmd(trail)
        size, per_call, step, axes = map_inputs(level, call, trail)
        spmd = tuple(sorted(level.spmd, key=str))
        inner_env = (*env, Bound(level.axis_name, device_axis_size(level, size), tuple(axes), level.kind, spmd))
        inner = self.inner.predict(per_call, inner_env, trail + (step,))
        self._warn_shadowed(env, inner.replay)
        if inner.inputs_only:  # Signature.unify: no outputs to map
            return Outcome(None, (step,) + inner.steps, inner.bindings, inputs_only=True, traced=inner.traced)
        # Without a function to ask, an output is batched iff some input is mapped here.
        mapped = any(r.axis is not None and r.shape is not None for r in step.args)
        # The function this level maps, as the trace below recorded it (when it is the
        # innermost): which outputs are batched is asked of the record, not of the function.
        innermost = isinstance(self.inner, TraceModel)
        if inner.replay is not None and innermost:
            fn: Callable[..., Any] | None = inner.replay
        else:
            fn = recorded_first(self.fn) if self.fn is not None else None
        probe = _Probe(self, fn, call, axes, size, env, inner.shapes) if mapped or self.fn is not None else None
        if probe is not None and innermost and inner.batched is not None:
            probe.answered(inner.batched)  # the trace below replayed it under this very level

        def is_batched(j: int) -> bool:
            return probe is not None and probe.batched(j)

        def sources(j: int) -> Sources | None:
            """The mapped arguments output `j` is computed from, as the record says."""
            found = fn.sources(j) if isinstance(fn, Replay) else None
            if not found:
                return None
            positional = len(jax.tree_util.tree_leaves(call.args))
            mapped = [i for i in sorted(found) if step.args[i].axis is not None]
            return Sources(
                tuple(step.args[i].label for i in mapped if i < positional),
                tuple(step.args[i].label for i in mapped if i >= positional),
            )

        shapes, outs = map_outputs(level, size, inner.shapes, is_batched, trail + (step,) + inner.steps, sources)
        traced = inner.traced or (probe is not None and probe.asked)
        # The record of the function, for a level around this one (its shadowed names).
        return Outcome(
            shapes, (replace(step, outs=outs),) + inner.steps, inner.bindings, traced=traced, replay=inner.replay
        )

    def _warn_shadowed(self, env: Env, replay: Replay | None) -> None:
        """JAX lets a nested transform bind an axis name an outer one binds: the inner
        binding hides the outer, so a collective inside reduces over the inner axis alone,
        silently (equinox#49). Said where the nest is seen and the function's record shows
        a collective over the name, the one case the shadowing changes a result (lint's
        AX006 says it statically)."""
        name = self.level.axis_name
        if name is None or not any(bound.name == name for bound in env):
            return
        if replay is None or name not in collective_names(replay.closed):
            return
        warn_at_user(
            AxisCheckWarning(
                f"{self.level.describe()} binds axis_name={name!r}, which a transform around it binds too:"
                f" a collective over {name!r} inside reduces over this inner {self.level.kind}'s axis only,"
                " not over both. Hint: give each level its own name, and name both where a collective"
                f" must reduce over both (e.g. jax.lax.pmean(x, ({name!r}, 'outer')))"
            )
        )

    def _check_spmd(self, trail: tuple[Step, ...]) -> None:
        """JAX refuses a vmap whose spmd_axis_name a shard_map inside it also names."""
        if not self.level.spmd or not vmap_shmap_error_enabled():
            return
        inner: Any = self.inner
        while isinstance(inner, MapModel):
            inner = inner.inner
        for where, axes in getattr(inner, "spec_axes", dict)().items():
            clash = sorted(map(str, self.level.spmd & axes))
            if clash:
                raise Scene(trail, self.level.describe()).error(
                    ArgumentError,
                    f"spmd_axis_name {clash} is also named by the shard_map's {where}; JAX refuses"
                    " to shard the vmapped axis over a mesh axis the shard_map already splits",
                    hint=f"drop spmd_axis_name, or leave {clash} out of the shard_map's {where}",
                )


@dataclass(slots=True)
class _Probe:
    """Asks JAX which outputs are batched, only when out_axes has None entries: one
    trace answers for every output."""

    model: MapModel
    fn: Callable[..., Any] | None  # the mapped function (or its record); None for a signature
    call: Call
    axes: list[int | None]
    size: int
    env: Env
    shapes: Any
    _answers: list[bool] | None = None

    @property
    def asked(self) -> bool:
        return self._answers is not None

    def answered(self, batched: list[bool]) -> None:
        """What the trace below found, under this level's own vmap: nothing to ask again."""
        self._answers = list(batched)

    def batched(self, j: int) -> bool:
        fn = self.fn
        if fn is None:
            return True  # a signature cannot say; outputs depend on mapped inputs
        if self._answers is None:
            leaves, treedef = self.call.flat()
            try:
                self._answers = batched_outputs(
                    fn,
                    treedef,
                    [leaf.value for leaf in leaves],
                    self.axes,
                    self.size,
                    self.model.level.axis_name,
                    self.env,
                )
            except Exception:  # the probe follows vmap's rules; where they refuse, assume batched
                self._answers = []
        return self._answers[j] if j < len(self._answers) else True


@dataclass(frozen=True, slots=True)
class TraceModel:
    """No signature: the per-example output comes from an abstract trace of `fn`."""

    fn: Callable[..., Any]
    name: str = "f"

    @property
    def inner(self) -> None:
        return None

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        found = trace(self.fn, self.name, call, env, trail)
        return traced_outcome(found.shapes, found.replay, found.batched)


def traced_outcome(shapes: Any, replay: Replay | None = None, batched: list[bool] | None = None) -> Outcome:
    """The outcome of a trace: its output shapes, one row each."""
    outs = tuple(SpecRow(label, shape, "", "") for label, shape in _labelled(shapes))
    return Outcome(shapes, (BaseStep("traced", (), outs),), Bindings(), traced=True, replay=replay, batched=batched)


def _labelled(shapes: Any) -> list[tuple[str, Shape]]:
    return list(zip(["output" + p for p in leaf_paths(shapes)], jax.tree_util.tree_leaves(shapes), strict=True))


def trace(fn: Callable[..., Any], name: str, call: Call, env: Env, trail: tuple[Step, ...]) -> PerExample:
    leaves, treedef = call.flat()
    returned: list[bool] = []  # whether the function finished, in the last trace of it
    traced = recorded_first(fn)  # JAX's own traces of it, where a check rides them

    def recording(*args: Any, **kwargs: Any) -> Any:
        returned.clear()
        out = traced(*args, **kwargs)
        check_jax_outputs(out, name)
        returned.append(True)
        return out

    try:
        return eval_per_example(
            recording, treedef, [leaf.value for leaf in leaves], env, (fn, [leaf.label for leaf in leaves])
        )
    except AxisCheckError:
        raise
    except SilentCollectiveError as err:
        raise collective_error(name, str(err), only_vmaps(env), trail, err.hint) from None
    except Exception as err:
        unit = f"{unit_of(env)} arguments"
        if returned:  # the function itself finished: JAX failed batching what it returned
            raise Scene(trail).error(
                OutputError,
                f"{name} returns, but JAX cannot batch its outputs"
                f" ({unit} {_leaf_shapes(leaves) or 'none'}): {type(err).__name__}: {err}",
            ) from err
        if spmd_axis_in_shard_map_specs(err):
            raise Scene(trail, _innermost_transform(trail)).error(
                SpecError,
                f"vmap's spmd_axis_name is also a mesh axis that {name}'s inner shard_map specs use, which JAX refuses",
                hint="give vmap a spmd_axis_name the inner shard_map does not shard over",
            ) from err
        raise function_error(name, leaves, unit, err, trail) from err


def _leaf_shapes(leaves: list[Leaf], most: int = 4) -> str:
    """The arrays' shapes for a headline: the first `most`, then how many more."""
    shown = [f"{leaf.label}: {format_shape(leaf.shape)}" for leaf in leaves if leaf.shape is not None]
    more = f", and {len(shown) - most} more" if len(shown) > most else ""
    return ", ".join(shown[:most]) + more


def function_error(
    name: str, leaves: list[Leaf], unit: str, err: Exception, trail: tuple[Step, ...], hint: str | None = None
) -> FunctionError:
    """The function failed on these (per-example or per-device) arguments: JAX's words, our
    shapes, and, where JAX's message names two sizes that disagree and each sits in one
    argument only, which arguments and axes they are (blame without a signature)."""
    scene = Scene(trail, _innermost_transform(trail))
    jax_says = f"{type(err).__name__}: {err}"
    axis = unbound_axis_name(err)
    if axis is not None:  # JAX's words send the user to shard_map whatever the transform
        return scene.error(
            FunctionError,
            f"{name} calls a collective over axis name {axis!r}, which no enclosing transform binds",
            notes=(f"JAX: {jax_says}",),
            hint=hint,
        )
    blamed = _blame(str(err), leaves, unit.removesuffix(" arguments"))
    if blamed is None:
        return scene.error(
            FunctionError,
            f"{name} fails on the {unit} ({_leaf_shapes(leaves) or 'no arrays'}): {jax_says}",
            notes=_known_defects(str(err)),
        )
    symbol, places = blamed
    sizes = " vs ".join(f"{p.size} from {p.arg}" for p in places)
    return scene.error(
        FunctionError,
        f"{name} fails on the {unit}: {_quote_symbol(symbol)} disagrees, {sizes}; {jax_says}",
        symbol=symbol,
        places=places,
        notes=_known_defects(str(err)),
    )


def _quote_symbol(symbol: str) -> str:
    return symbol if symbol.startswith("the ") else f"dimension {symbol!r}"


def _blame(message: str, leaves: list[Leaf], unit: str) -> tuple[str, tuple[Place, ...]] | None:
    """The two places JAX's message sets against each other, when each size occurs in
    exactly one argument axis (else nothing: a guess would mislead)."""
    found = mismatched_sizes(message)
    if found is None:
        return None
    label, first, second = found
    places = []
    for size in (first, second):
        where = [(leaf, i) for leaf in leaves if leaf.shape is not None for i, d in enumerate(leaf.shape) if d == size]
        if len(where) != 1:
            return None
        leaf, axis = where[0]
        places.append(leaf.place(axis, size, unit))
    if places[0].arg == places[1].arg:
        return None
    return (label or "the contracted dimension"), tuple(places)


def collective_error(
    name: str, text: str, under_vmap: bool, trail: tuple[Step, ...], hint: str | None = None
) -> CollectiveError:
    """A collective that does not fit its axis (`text` names it first: "psum_scatter: ...");
    with `hint`, `text` is the whole account of a collective JAX rejects only when lowering."""
    detail = text.removeprefix("psum_scatter: ")
    if hint is not None:
        problem = f"{name} calls {text}; JAX finds this only when it compiles"
    elif text.startswith("ppermute"):
        problem = f"{name} calls {text}; " + (
            "under vmap JAX accepts duplicates silently (and the result is meaningless), so axischeck reports it"
            if under_vmap
            else "JAX finds this only when it compiles"
        )
        hint = "give each source and each destination at most once in perm"
    elif tiled_scatter_indivisible(text):  # only device axes get here; vmap raises itself
        problem = (
            f"{name} calls psum_scatter (tiled=True), which needs the scattered dimension to divide"
            f" evenly by the size of the device axis ({detail})"
        )
        hint = "make the scattered dimension a multiple of the axis size (pad it), or scatter another dimension"
    else:
        problem = (
            f"{name} calls psum_scatter (tiled=False), which needs the scattered dimension to equal"
            f" the size of the mapped axis ({detail})"
        )
        if under_vmap:
            problem += (
                "; under vmap JAX does not check this and silently returns a mislabelled batch sum,"
                " so axischeck reports it"
            )
        hint = (
            "pass tiled=True (the dimension must then divide evenly by the axis size), or make the mapped"
            " axis as long as the scattered dimension (under pmap and shard_map: that many devices on the axis)"
        )
    return Scene(trail, _innermost_transform(trail)).error(CollectiveError, problem, hint=hint)


def _known_defects(message: str) -> tuple[str, ...]:
    """Corrections for JAX messages known to mislead (docs/jax-semantics.md#misleading-jax-messages)."""
    found = einsum_size_mismatch(message)
    if found:
        label, operand, shown, previous = found
        return (
            f"(JAX's einsum message swaps the sizes: operand {operand} has '{label}' of size"
            f" {previous}, and the earlier operands have {shown}.)",
        )
    return ()


def _innermost_transform(trail: tuple[Step, ...]) -> str | None:
    maps = [s for s in trail if isinstance(s, (MapStep, ShardStep))]
    return maps[-1].transform if maps else None


@dataclass(frozen=True, slots=True)
class SignatureModel:
    """A declared per-example signature; `fn` is traced only for undeclared outputs."""

    core: SigCore
    fn: Callable[..., Any] | None = None
    name: str = "f"
    inputs_only: bool = False

    @property
    def inner(self) -> None:
        return None

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        unifier = Unifier(unit=unit_of(env))
        for level in env:
            if isinstance(level.name, str):  # innermost binding of a name wins (later in env)
                what = {"vmap": "mapped axis", "pmap": "device axis"}.get(level.kind, "mesh axis")
                place = Place(f"the {what} {level.name!r}", None, None, level.size)
                unifier.bind_axis_name(level.name, level.size, place)
        # The table's rows, column by column (no object per leaf).
        labels: list[str] = []
        shapes: list[Shape | None] = []
        specs: list[str] = []
        binds: list[str] = []
        notes: list[str] = []

        def rows() -> SpecRows:
            return SpecRows(tuple(labels), tuple(shapes), tuple(specs), tuple(binds), tuple(notes))

        first_conflict: Conflict | None = None

        def fail(cls: type[AxisCheckError], problem: str, **facts: Any) -> AxisCheckError:
            base = BaseStep("signature", rows(), ())
            return Scene(trail, self.transform(trail)).then(base).error(cls, problem, **facts)

        # Keep going past a conflict, so an error's table shows every argument; the first
        # conflict is reported. Nobody reads the table of a trial run (the fix search's):
        # there the first conflict ends the run.
        every_row = tables_read()
        seen: dict[int, _SpecText] = {}  # per spec object: a leaf tree shares a few among many leaves
        for spec, arg, param_label in self._pairs(call, fail):
            got = broadcast_flat(spec.leaves, spec.treedef, arg, partial(walk_prefix, spec.value, arg, _is_spec))
            if isinstance(got, PrefixMismatch):
                raise fail(
                    ArgumentError,
                    f"the signature of {param_label}{got.path} is {got.spec_kind}, but the argument is"
                    f" {got.value_kind} ({got.detail})",
                )
            for leaf, leaf_spec in zip(jax.tree_util.tree_leaves(arg), got, strict=True):
                known = seen.get(id(leaf_spec))
                if known is None:
                    known = seen[id(leaf_spec)] = _SpecText(leaf_spec)
                note = ""
                if known.unchecked:
                    bound = ""
                elif leaf.shape is None:
                    raise fail(
                        ArgumentError,
                        f"{leaf.label} is a {type(leaf.value).__name__}, not an array, but the"
                        f" signature declares {leaf_spec}",
                    )
                elif leaf.shape in known.fits:  # matched before, binding nothing new: so it does again
                    bound = known.bound
                else:
                    conflict = unifier.unify(leaf_spec, leaf.shape, _place_of(leaf, unifier.unit), leaf.label)
                    if conflict is None:
                        bound = known.binds(unifier, leaf.shape)
                    elif not every_row:
                        raise fail(ArgumentError, conflict.problem, symbol=conflict.symbol, places=conflict.places)
                    else:
                        first = conflict.places[0] if len(conflict.places) > 1 else None
                        note = (
                            f"<-- conflicts with {conflict.symbol}={_size_text(first.size)} from {first.arg}"
                            if first is not None and conflict.symbol is not None and first.size is not None
                            else "<-- does not match"
                        )
                        bound = _binds_raw(leaf_spec, leaf.shape)
                        first_conflict = first_conflict or conflict
                labels.append(leaf.label)
                shapes.append(leaf.shape)
                specs.append(known.text)
                binds.append(bound)
                notes.append(note)
        if first_conflict is not None:
            c = first_conflict
            raise fail(ArgumentError, c.problem, symbol=c.symbol, places=c.places)
        bindings = unifier.bindings()
        if self.inputs_only:
            return Outcome(None, (BaseStep("signature", rows(), ()),), bindings, inputs_only=True)
        table = rows()
        out_shapes, traced = self._outputs(bindings, call, env, trail, table, fail)
        outs = []
        out_specs = self.core.output.leaves if self.core.output is not None else ()
        for k, (label, shape) in enumerate(_labelled(out_shapes)):
            spec_text = str(out_specs[k]) if k < len(out_specs) else ""
            outs.append(SpecRow(label, shape, spec_text, ""))
        return Outcome(out_shapes, (BaseStep("signature", table, tuple(outs)),), bindings, traced=traced)

    def transform(self, trail: tuple[Step, ...]) -> str:
        return _innermost_transform(trail) or f"check({self.name}, signature={self.core})"

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
                    f"keyword arguments {sorted(call.kwargs)} cannot be matched to a signature without parameter names",
                    hint="pass them positionally, or decorate the function so its parameter names are known",
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
        rows: SpecRows,
        fail: Callable[..., AxisCheckError],
    ) -> tuple[Any, bool]:
        """The output shapes, and whether the function had to be traced for them."""
        out = self.core.output
        if out is not None:
            resolved = [resolve(spec, bindings.sizes) for spec in out.leaves]
            if all(r is not None for r in resolved):
                return jax.tree_util.tree_unflatten(out.treedef, resolved), False
        if self.fn is None:
            missing = sorted({m for spec in (out.leaves if out else ()) for m in unbound_symbols(spec, bindings.sizes)})
            raise fail(
                SpecError,
                "the signature does not determine the output shape"
                + (f": {', '.join(missing)} is not bound by any input" if out is not None else " (no '->' output)"),
                hint="name output dimensions after input dimensions, or decorate a function so it can be traced",
            )
        shapes = trace(self.fn, self.name, call, env, trail + (BaseStep("signature", rows, ()),)).shapes
        if out is not None:
            check_output(self.core, shapes, bindings, self.transform(trail), trail, unit_of(env))
        return shapes, True


def _is_spec(x: object) -> bool:
    return isinstance(x, ArraySpec)


def _names(spec: ArraySpec) -> list[str]:
    """The symbols of `spec`, once each, in order."""
    return list(dict.fromkeys(d.name for d in spec.dims if isinstance(d, (Named, Variadic)) and d.name is not None))


def _binds(spec: ArraySpec, unifier: Unifier, names: list[str] | None = None) -> str:
    parts = []
    for sym in _names(spec) if names is None else names:
        if sym in unifier.sizes:
            size = unifier.sizes[sym]
            parts.append(f"{sym}={format_shape(size) if isinstance(size, tuple) else int_text(size)}")
    return "  ".join(parts)


class _SpecText:
    """One spec's texts for the table, worked out once for all the leaves it covers: as
    written, and what it binds once every symbol in it is bound. A bound size never
    changes within a run, so from then on a shape it matched (`fits`) matches again,
    binding nothing: the leaves of a tree that share a spec and a shape unify once."""

    __slots__ = ("_names", "bound", "fits", "spec", "text", "unchecked")

    def __init__(self, spec: ArraySpec) -> None:
        self.spec = spec  # held, so the id that keys this entry stays this spec's
        self.text = str(spec)
        self.unchecked = spec == ANY
        self._names = _names(spec)
        self.bound = ""
        self.fits: set[Shape] = set()

    def binds(self, unifier: Unifier, shape: Shape) -> str:
        """What the spec binds, just after `shape` matched it."""
        text = _binds(self.spec, unifier, self._names)
        if all(name in unifier.sizes for name in self._names):
            self.bound = text
            self.fits.add(shape)
        return text


def _size_text(size: Any) -> str:
    return format_shape(size) if isinstance(size, tuple) else str(size)


def _binds_raw(spec: ArraySpec, shape: Shape) -> str:
    """What this leaf alone would bind (for the row that conflicts)."""
    u = Unifier()
    u.unify(spec, shape, lambda axis, size: Place("", None, axis, size), "")
    return _binds(spec, u)


def _place_of(leaf: Leaf, unit: str) -> Callable[[int | None, Any], Place]:
    if unit == "per-example":
        return leaf.place
    return lambda axis, size: leaf.place(axis, size, unit)


def unit_of(env: Env) -> str:
    """What the innermost function sees: one example (vmap) or one device's block."""
    return "per-device" if env and env[-1].kind != "vmap" else "per-example"


def check_output(
    core: SigCore, shapes: Any, bindings: Bindings, transform: str, trail: tuple[Step, ...], unit: str = "per-example"
) -> None:
    """Raise `OutputError` if per-example output `shapes` contradict the declared output."""
    assert core.output is not None
    got = broadcast_prefix(core.output.value, shapes, lambda x: isinstance(x, ArraySpec))
    if isinstance(got, PrefixMismatch):
        raise Scene(trail, transform).error(
            OutputError,
            f"the output{got.path} is {got.value_kind}, but the signature declares {got.spec_kind} ({got.detail})",
        )
    unifier = Unifier(dict(bindings.sizes), dict(bindings.places))
    for (label, shape), spec in zip(_labelled(shapes), got, strict=True):
        conflict = unifier.unify(spec, shape, _output_place(label, shape), label)
        if conflict is not None:
            raise Scene(trail, transform).error(
                OutputError,
                f"the function's output contradicts its signature: {label} is declared {spec}"
                f" but has {unit} shape {format_shape(shape)} ({conflict.problem})",
                symbol=conflict.symbol,
                places=conflict.places,
            )


def model_symbols(model: Model) -> frozenset[str]:
    """The batch symbols of every vmap level inside `model` (so new ones stay fresh)."""
    symbols: set[str] = set()
    for m in chain(model):
        if isinstance(m, SignatureModel):
            symbols |= m.core.symbols
        elif isinstance(m, MapModel):
            symbols.add(m.level.symbol)
    return frozenset(symbols)


def shape_keyed(model: Model) -> bool:
    """Whether `model`'s answer depends on the argument shapes alone (so caches may key on
    them): not when a level reads shardings or the context mesh."""
    return all(getattr(m, "shape_keyed", True) for m in chain(model))


def is_symbolic(model: Model) -> bool:
    """Whether `model` predicts without tracing (a signature with a declared output)."""
    *_, innermost = chain(model)
    return isinstance(innermost, SignatureModel) and innermost.core.output is not None


def inputs_only(model: Model) -> Model | None:
    """`model` checking arguments only (no outputs, no trace), if it has a signature."""
    if isinstance(model, SignatureModel):
        return replace(model, inputs_only=True)
    checked = inputs_only(model.inner) if model.inner is not None else None
    return None if checked is None else replace(model, inner=checked)  # type: ignore[type-var]


def _output_place(label: str, shape: Shape) -> Callable[[int | None, Any], Place]:
    return lambda axis, size: Place(label, shape, axis, size)


def run(model: Model, call: Call) -> Outcome:
    return model.predict(call, (), ())
