"""The `shard_map` model: global arguments -> per-device blocks -> inner model -> global outputs.

Checks run in JAX's order (docs/jax-semantics.md#shard_map-and-meshes): spec names against the mesh, the
in_specs prefix, then per argument rank, divisibility and duplicate axes; the inner
model sees the blocks with the manual mesh axes bound (collectives follow the per-device
rules); out_specs reassemble the outputs. What only a trace can tell (the replication
promise of out_specs, collectives on invariant values) is settled by JAX's own
`eval_shape` of the shard_map on an abstract mesh, so a mesh larger than the machine works.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np
from jax.sharding import PartitionSpec

from .._core._errors import (
    ArgumentError,
    AxisCheckError,
    AxisCheckWarning,
    FunctionError,
    OutputError,
    Place,
    SpecError,
    warn_at_user,
)
from .._core._jax_compat import (
    INFER_SPECS,
    JAX_SHARD_MAP,
    equations,
    manual_types_differ,
    process_global_shape,
    psum_scatter_size_refused,
    quiet_tracebacks,
    replication_refusal_lines,
    replication_refused,
    size_one_axes_leave_types,
    spec_entries,
    sub_jaxprs,
    unbound_axis_name,
    varying_axes,
    varying_cast,
    varying_cast_refused,
)
from .._core._job import Job, process_local, spans_processes, this_job
from .._core._leaves import Call, Leaf, abstract, check_jax_outputs, struct
from .._core._scene import Scene
from .._core._shape import Shape
from .._core._steps import ShardRow, ShardStep, Step
from .._core._text import and_list, format_shape, short_repr
from .._core._trees import PrefixMismatch, broadcast_prefix, leaf_paths
from ._function import parameters_of
from ._mesh import (
    MeshShape,
    SpecDims,
    SpecMistake,
    as_partition_spec,
    block_shape,
    check_fits,
    concrete_mesh,
    context_conflict,
    context_mesh,
    global_shape,
    sharding_spec,
    spec_dims,
)
from ._models import Model, Outcome, TraceModel, collective_error, function_error, is_symbolic, traced_outcome
from ._trace import (
    Bound,
    Dependence,
    Env,
    SilentCollectiveError,
    called_jaxpr,
    check_ppermutes,
    flows_into,
    jaxpr_under_levels,
    only_vmaps,
    recorded_first,
    under_pmap,
    varying_sources,
    warn_repeated_sums,
)


def is_spec_leaf(x: object) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _is_spec(x: object) -> bool:
    return isinstance(x, PartitionSpec)


@dataclass(frozen=True, slots=True)
class OutputGap:
    """One output leaf that out_specs promise to be replicated along mesh axes it varies
    over (JAX's vma types say so): its flat index, label, per-device block, spec and the
    axes missing from that spec (in mesh order)."""

    index: int
    label: str
    block: Shape
    spec: PartitionSpec
    missing: tuple[str, ...]


class _Probed(Exception):
    """Ends the trace that only wanted the user's function as a jaxpr."""

    def __init__(self, jaxpr: Any, shapes: Any) -> None:
        super().__init__("probed")
        self.jaxpr = jaxpr
        self.shapes = shapes


def smap_specs(axis_name: Hashable, axes: Any) -> Any:
    """The PartitionSpecs jax.smap makes of in_axes or out_axes: for each axis,
    `axis_name` after `axis` Nones; P() for None.

    JAX 0.10.2 multiplies a list by the axis, so a negative axis gets no Nones and splits
    axis 0, not the axis counted from the end; axischeck predicts exactly that (and warns).
    """

    def spec(axis: int | None) -> PartitionSpec:
        entries: tuple[Hashable, ...] = () if axis is None else (None,) * max(int(axis), 0) + (axis_name,)
        return PartitionSpec(*entries)  # type: ignore[no-untyped-call]

    return jax.tree_util.tree_map(spec, axes, is_leaf=lambda x: x is None)


@dataclass(frozen=True, slots=True)
class ShardOptions:
    """`jax.shard_map`'s options, validated. `mesh=None`: the context mesh at call time.

    `smap_axes` is set for `jax.smap`: the user's (in_axes, out_axes) that the specs were
    made from, so that messages speak the options the user wrote.
    """

    mesh: MeshShape | None
    jax_mesh: Any  # what JAX is given: the user's Mesh/AbstractMesh, or None
    in_specs: Any
    out_specs: Any
    axis_names: frozenset[str]
    check_vma: bool
    name: str
    smap_axes: tuple[Any, Any] | None = None

    @property
    def kind(self) -> str:
        return "shard_map" if self.smap_axes is None else "smap"

    def with_smap_axes(self, in_axes: Any, out_axes: Any) -> ShardOptions:
        """These smap options with other in_axes and out_axes (and the specs they make)."""
        (name,) = self.axis_names
        in_specs = self.in_specs if in_axes is INFER_SPECS else smap_specs(name, in_axes)
        return replace(self, in_specs=in_specs, out_specs=smap_specs(name, out_axes), smap_axes=(in_axes, out_axes))

    def word(self, side: str) -> str:
        """`in_specs`/`out_specs`, or smap's `in_axes`/`out_axes` (`side` is "in" or "out")."""
        return f"{side}_specs" if self.smap_axes is None else f"{side}_axes"

    def describe(self) -> str:
        if self.smap_axes is not None:
            in_axes, out_axes = self.smap_axes
            ins = "Infer" if in_axes is INFER_SPECS else short_repr(in_axes)
            (name,) = self.axis_names
            return f"smap({self.name}, in_axes={ins}, out_axes={short_repr(out_axes)}, axis_name={name!r})"
        ins = "Infer" if self.in_specs is INFER_SPECS else short_repr(self.in_specs)
        names = f", axis_names={set(self.axis_names)}" if self.axis_names else ""
        vma = "" if self.check_vma else ", check_vma=False"
        return f"shard_map({self.name}, in_specs={ins}, out_specs={short_repr(self.out_specs)}{names}{vma})"

    def shown(self, side: str, tree: Any) -> list[str] | None:
        """For smap, each leaf of `tree` (the arguments or the outputs) with the axis the
        user gave it, as the specs pair with them; None for shard_map, whose specs are
        what the user wrote."""
        if self.smap_axes is None:
            return None
        axes = self.smap_axes[0 if side == "in" else 1]
        paired = [] if axes is INFER_SPECS else broadcast_prefix(axes, tree, lambda x: x is None)
        if isinstance(paired, PrefixMismatch) or not paired:
            return None
        # jax.smap turns axis k into P(None, ..., None, axis_name) with k Nones, so a
        # negative k (no Nones) splits axis 0, not axis ndim + k (JAX 0.10.2).
        return [f"{a!r} (which jax.smap reads as axis 0)" if a is not None and a < 0 else repr(a) for a in paired]


@dataclass(frozen=True, slots=True)
class ShardModel:
    """`shard_map` of an inner model; `fn` (the user's function) lets JAX settle what
    only a trace can tell."""

    options: ShardOptions
    inner: Model
    fn: Callable[..., Any] | None = None

    @property
    def shape_keyed(self) -> bool:
        """Not with the context mesh (it changes between calls) or Explicit axes (the
        arguments' shardings matter)."""
        mesh = self.options.mesh
        return mesh is not None and not mesh.explicit

    def spec_axes(self) -> dict[str, frozenset[str]]:
        """The mesh axes that in_specs and out_specs name (vmap's spmd_axis_name may not)."""
        named: dict[str, frozenset[str]] = {}
        for where, specs in (("in_specs", self.options.in_specs), ("out_specs", self.options.out_specs)):
            leaves = jax.tree_util.tree_leaves(specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
            named[where] = frozenset(
                a
                for spec in leaves
                if isinstance(spec, PartitionSpec)
                for entry in spec_entries(spec)
                if entry is not None
                for a in (entry if isinstance(entry, tuple) else (entry,))
            )
        return named

    def mesh(self, env: Env = ()) -> MeshShape:
        """The mesh given, else the enclosing shard_map's (JAX's context mesh there), else
        the `jax.set_mesh` context."""
        if self.options.mesh is not None:
            return self.options.mesh
        outer = {lv.name: lv.size for lv in env if lv.kind in ("shard_map", "mesh") and isinstance(lv.name, str)}
        return MeshShape(tuple(outer), tuple(outer.values())) if outer else context_mesh(self.options.describe())

    def predict(self, call: Call, env: Env, trail: tuple[Step, ...]) -> Outcome:
        o = self.options
        mesh = self.mesh(env)
        manual = o.axis_names or frozenset(mesh.names)
        transform = o.describe()
        sizes = tuple(zip(mesh.names, mesh.sizes, strict=True))

        scene = Scene(trail, transform)

        def fail(
            cls: type[AxisCheckError], problem: str, hint: str | None, rows: list[ShardRow], **facts: Any
        ) -> AxisCheckError:
            return scene.then(ShardStep(transform, sizes, tuple(rows))).error(cls, problem, hint=hint, **facts)

        self._check_setting(call, env, mesh, manual, fail)
        leaves, treedef = call.flat()
        specs = self._in_specs(call, leaves, mesh, manual, fail)
        rows, blocks = self._split(leaves, specs, o.shown("in", call.args), mesh, manual, fail)
        step = ShardStep(transform, sizes, tuple(rows))

        def assemble(block_shapes: Any) -> tuple[Any, list[ShardRow]]:
            return self._outputs(block_shapes, mesh, manual, lambda p, f: fail(OutputError, p, f, rows))

        # JAX's own trace of the shard_map (inside the vmaps around it, if any) is the
        # reference for what only a trace can tell; under pmap it cannot be re-created.
        jax_can_trace = self.fn is not None and only_vmaps(env)
        if jax_can_trace and isinstance(self.inner, TraceModel):
            inner = traced_outcome(self._ask_jax(call, leaves, specs, blocks, env, assemble, trail + (step,)))
            shapes, outs = assemble(inner.shapes)
        else:
            inner_env = env + tuple(Bound(n, s, (), "shard_map" if n in manual else "mesh") for n, s in sizes)
            inner = self.inner.predict(call.rebuilt(treedef, blocks), inner_env, trail + (step,))
            if inner.inputs_only:
                return Outcome(None, (step,) + inner.steps, inner.bindings, inputs_only=True, traced=inner.traced)
            shapes, outs = assemble(inner.shapes)
            if jax_can_trace and (not is_symbolic(self.inner) or self._promises_replication(mesh, manual)):
                self._ask_jax(call, leaves, specs, blocks, env, assemble, trail + (step,))
                inner = replace(inner, traced=True)
        steps = (ShardStep(transform, sizes, tuple(rows), tuple(outs)),) + inner.steps
        return Outcome(shapes, steps, inner.bindings, traced=inner.traced)

    def _check_setting(
        self, call: Call, env: Env, mesh: MeshShape, manual: frozenset[str], fail: Callable[..., AxisCheckError]
    ) -> None:
        """What JAX checks before any argument: manual axes, the enclosing transforms and
        context mesh, keyword arguments."""
        if not manual <= set(mesh.names):
            raise fail(SpecError, f"axis_names {set(manual)} are not all axes of the mesh {mesh}", None, [])
        if under_pmap(env):
            raise fail(
                ArgumentError,
                "shard_map inside pmap fails in JAX 0.10 (the context mesh pmap sets is not the shard_map's)",
                "use one shard_map over a mesh with both axes, or vmap instead of pmap outside",
                [],
            )
        conflict = context_conflict(self.options.jax_mesh) if only_vmaps(env) else None
        if conflict is not None:
            raise fail(SpecError, conflict, "pass the same mesh, or call it outside that jax.set_mesh block", [])
        if call.kwargs:
            raise fail(
                ArgumentError,
                f"{self.options.kind} passes arguments positionally only, but got keyword arguments"
                f" {sorted(call.kwargs)}",
                f"pass them positionally ({self.options.word('in')} then needs an entry for each)",
                [],
            )

    def _split(
        self,
        leaves: list[Leaf],
        specs: list[tuple[Any, SpecDims | None]],
        shown: list[str] | None,
        mesh: MeshShape,
        manual: frozenset[str],
        fail: Callable[..., AxisCheckError],
    ) -> tuple[list[ShardRow], list[Leaf]]:
        """Each argument's per-device block: rank, divisibility, repeated axes, sharding.
        `shown`: each argument's entry as the user wrote it (smap's axes), for messages."""
        o = self.options
        rows: list[ShardRow] = []
        blocks: list[Leaf] = []
        for i, (leaf, (spec, dims)) in enumerate(zip(leaves, specs, strict=True)):
            if leaf.shape is None:  # JAX reads every argument as an array, even a static one
                raise fail(
                    ArgumentError,
                    f"{leaf.label} is a {type(leaf.value).__name__}, not an array; {o.kind} takes arrays only",
                    f"close over it instead of passing it (functools.partial, or a lambda that supplies {leaf.label})",
                    rows,
                )
            if dims is None:  # in_specs None: passed whole to every device
                rows.append(ShardRow(leaf.label, leaf.shape, "static", leaf.shape))
                blocks.append(leaf)
                continue
            what = f"the {o.word('in')} entry of {leaf.label}"
            entry = shown[i] if shown is not None else spec
            try:
                check_fits(dims, entry, leaf.shape, what, leaf.label, mesh, split=True)
                self._check_explicit(leaf, entry, dims, mesh, manual, what)
            except SpecMistake as m:
                rows.append(ShardRow(leaf.label, leaf.shape, str(spec), None, dims))
                local = self._process_part(m, leaf, spec, mesh) if m.indivisible else None
                if local is not None:
                    problem, hint, job = local
                    raise fail(ArgumentError, problem, hint, rows, job=job) from None
                raise fail(ArgumentError, m.problem, m.hint, rows) from None
            block = block_shape(leaf.shape, dims, mesh)
            rows.append(ShardRow(leaf.label, leaf.shape, str(spec), block, dims))
            value = struct(block, abstract(leaf.value).dtype)
            blocks.append(Leaf(leaf.label, block, value, leaf.user_shape, leaf.origin))
        return rows, blocks

    def _process_part(
        self, mistake: SpecMistake, leaf: Leaf, spec: Any, mesh: MeshShape
    ) -> tuple[str, str, Job] | None:
        """In a job of several processes, a size that a mesh spanning them does not divide
        is most often one process's own part given where the whole global array belongs
        (docs/jax-semantics.md#jobs-of-several-processes): shard_map and jit read each
        argument as the global array. The remedy is JAX's
        `jax.make_array_from_process_local_data`, with the global shape it would build.
        None in a job of one process, for a mesh of this process's devices, or for an
        argument that is a global array already (its size is the mistake)."""
        job = this_job()
        if job is None:
            return None
        devices = concrete_mesh(self.options.jax_mesh)
        total = int(np.prod(mesh.sizes))
        local = process_local(leaf.value)
        if not spans_processes(job, devices, total) or local is False or leaf.shape is None:
            return None
        kind = self.options.kind
        built = f"jax.make_array_from_process_local_data(NamedSharding(mesh, {spec}), {leaf.label})"
        shape = process_global_shape(devices, spec, leaf.shape) if devices is not None else None
        of = f", of global shape {format_shape(shape)}" if shape is not None else ""
        spread = (
            f"the mesh spans the job's {job.processes} processes ({total} devices, {job.local_devices} of them"
            f" this process's), where {kind} reads each argument as the whole global array"
        )
        if local:
            problem = f"{mistake.problem}: {leaf.label} is this process's own data, but {spread}"
            hint = f"build the global array from every process's part: {built}{of}"
        else:
            problem = f"{mistake.problem}; {spread}"
            hint = f"if {leaf.label} is this process's part, build the global array before the call: {built}{of}"
        return problem, hint, job

    def _in_specs(
        self,
        call: Call,
        leaves: list[Leaf],
        mesh: MeshShape,
        manual: frozenset[str],
        fail: Callable[..., AxisCheckError],
    ) -> list[tuple[Any, SpecDims | None]]:
        """Each leaf's PartitionSpec and its mesh axes per dim (None: static)."""
        o = self.options
        if o.in_specs is INFER_SPECS:
            if not all(a in mesh.explicit for a in manual):
                what = "a PartitionSpec" if o.smap_axes is None else "the axis to split"
                raise fail(
                    SpecError,
                    f"{o.word('in')} was omitted, which needs every manual mesh axis to be Explicit, but {mesh}"
                    f" has non-Explicit axes {sorted(manual - mesh.explicit)}",
                    f"pass {o.word('in')} ({what} per argument), or build the mesh with AxisType.Explicit",
                    [],
                )
            return [self._inferred(leaf, manual) for leaf in leaves]
        paired = broadcast_prefix(o.in_specs, call.args, is_spec_leaf)
        if isinstance(paired, PrefixMismatch):
            for spec in jax.tree_util.tree_leaves(o.in_specs, is_leaf=is_spec_leaf):  # JAX checks names first
                if spec is not None:
                    self._dims(spec, mesh, manual, f"an {o.word('in')} entry", fail)
            word = o.word("in")
            raise fail(
                SpecError,
                self._missing_arguments(call)
                + f"{word}{paired.path} is {paired.spec_kind}, but the arguments{paired.path} are {paired.value_kind}"
                f" ({paired.detail}); {word} must be a tree prefix of the tuple of positional arguments",
                f"give a tuple with one entry per positional argument, or {_one(o)} for all of them",
                [],
            )
        return [
            (s, None if s is None else self._dims(s, mesh, manual, f"the {o.word('in')} entry of {leaf.label}", fail))
            for leaf, s in zip(leaves, paired, strict=True)
        ]

    def _missing_arguments(self, call: Call) -> str:
        """`add takes x and y, but y was not passed; `, when in_specs has an entry for
        each of the function's parameters and the call passed fewer (jax#15728)."""
        specs = self.options.in_specs
        found = parameters_of(self.fn) if self.fn is not None else None
        if not isinstance(specs, tuple) or found is None or len(call.args) >= len(specs):
            return ""
        params = found[0][: len(specs)]
        missing = params[len(call.args) :]
        if len(params) < len(specs) or not missing:
            return ""
        name = self.options.name
        what = f"{name} takes" if len(found[0]) == len(specs) else f"in_specs' entries stand for {name}'s"
        return (
            f"{what} {and_list(params)}, but {and_list(missing)} {'was' if len(missing) == 1 else 'were'} not passed; "
        )

    @staticmethod
    def _dims(
        spec: Any, mesh: MeshShape, manual: frozenset[str], what: str, fail: Callable[..., AxisCheckError]
    ) -> SpecDims:
        try:
            return spec_dims(spec, mesh, manual, what)
        except SpecMistake as m:
            raise fail(SpecError, m.problem, m.hint, []) from None

    @staticmethod
    def _inferred(leaf: Leaf, manual: frozenset[str]) -> tuple[Any, SpecDims]:
        """in_specs omitted: the argument's own sharding over the manual axes."""
        dims = tuple(tuple(a for a in d if a in manual) for d in sharding_spec(leaf.value, len(leaf.shape or ())))
        spec = as_partition_spec(dims)
        return spec, dims[: len(spec)]

    def _check_explicit(
        self, leaf: Leaf, spec: Any, dims: SpecDims, mesh: MeshShape, manual: frozenset[str], what: str
    ) -> None:
        """On an all-Explicit mesh an argument must already be sharded as its in_spec says."""
        if manual != set(mesh.names) or not manual <= mesh.explicit:
            return
        assert leaf.shape is not None
        want = dims + ((),) * (len(leaf.shape) - len(dims))
        have = sharding_spec(leaf.value, len(leaf.shape))
        if size_one_axes_leave_types():  # JAX drops size-1 mesh axes from array types
            ones = {n for n, s in zip(mesh.names, mesh.sizes, strict=True) if s == 1}
            want = tuple(tuple(a for a in d if a not in ones) for d in want)
            have = tuple(tuple(a for a in d if a not in ones) for d in have)
        if want != have:
            held = as_partition_spec(have)
            raise SpecMistake(
                f"{what} is {spec}, but {leaf.label} is sharded as {held}; on a mesh of Explicit axes"
                f" {self.options.kind} takes arguments as they are already sharded",
                f"omit {self.options.word('in')} to use the arguments' shardings, or jax.sharding.reshard the"
                " argument first",
            )

    def _outputs(
        self, blocks: Any, mesh: MeshShape, manual: frozenset[str], fail: Callable[[str, str | None], AxisCheckError]
    ) -> tuple[Any, list[ShardRow]]:
        o = self.options
        for spec in jax.tree_util.tree_leaves(o.out_specs, is_leaf=lambda x: isinstance(x, PartitionSpec)):
            try:
                spec_dims(spec, mesh, manual, f"an {o.word('out')} entry")
            except SpecMistake as m:
                raise fail(m.problem, m.hint) from None
        paired = broadcast_prefix(o.out_specs, blocks, lambda x: isinstance(x, PartitionSpec))
        if isinstance(paired, PrefixMismatch):
            word = o.word("out")
            raise fail(
                f"{word}{paired.path} is {paired.spec_kind}, but {o.name}'s output{paired.path} is"
                f" {paired.value_kind} ({paired.detail}); {word} must be a tree prefix of the output",
                f"give {word} the structure of the output, or {_one(o)} for all of it",
            )
        labels = ["output" + p for p in leaf_paths(blocks)]
        flat = jax.tree_util.tree_leaves(blocks)
        shown = o.shown("out", blocks)
        outs: list[ShardRow] = []
        for i, (label, block, spec) in enumerate(zip(labels, flat, paired, strict=True)):
            dims = spec_dims(spec, mesh, manual, "")
            entry = shown[i] if shown is not None else spec
            what = f"the {o.word('out')} entry of {label}"
            try:
                check_fits(dims, entry, block, what, f"the per-device {label}", mesh, split=False)
            except SpecMistake as m:
                raise fail(m.problem, m.hint) from None
            outs.append(ShardRow(label, global_shape(block, dims, mesh), str(spec), block, dims))
        treedef = jax.tree_util.tree_structure(blocks)
        return jax.tree_util.tree_unflatten(treedef, [r.shape for r in outs]), outs

    def _promises_replication(self, mesh: MeshShape, manual: frozenset[str]) -> bool:
        """Whether some out_spec leaves a manual axis out (JAX checks that by a trace)."""
        if not self.options.check_vma:
            return False
        for spec in jax.tree_util.tree_leaves(self.options.out_specs, is_leaf=lambda x: isinstance(x, PartitionSpec)):
            named = {a for axes in spec_dims(spec, mesh, manual, "") for a in axes}
            if manual - named:
                return True
        return False

    def _unbound_name(self, call: Call, blocks: list[Leaf], env: Env) -> NameError | None:
        """JAX's NameError for a collective over a name that neither the mesh nor an
        enclosing level binds, found by tracing the function alone on the blocks with
        those names bound: inside shard_map, JAX trips an assertion of its own instead."""
        mesh = self.mesh(env)
        names = [*((lv.name, lv.size) for lv in env if lv.name is not None), *zip(mesh.names, mesh.sizes, strict=True)]
        fn = self.fn
        if fn is None:
            return None
        try:
            _, treedef = call.flat()
            args, kwargs = jax.tree_util.tree_unflatten(treedef, [abstract(leaf.value) for leaf in blocks])
            jax.make_jaxpr(lambda a, k: fn(*a, **k), axis_env=names)(args, kwargs)
        except NameError as err:
            return err if unbound_axis_name(err) is not None else None
        except Exception:
            return None
        return None

    def jax_shard_map(self, body: Callable[..., Any]) -> Any:
        """JAX's own shard_map of `body` with these options (on an abstract mesh when the
        mesh is only planned)."""
        o = self.options
        mesh = o.jax_mesh if o.jax_mesh is not None or o.mesh is None else o.mesh.abstract()
        return JAX_SHARD_MAP(
            body,
            mesh=mesh,
            in_specs=o.in_specs,
            out_specs=o.out_specs,
            axis_names=set(o.axis_names),
            check_vma=o.check_vma,
        )

    def _ask_jax(
        self,
        call: Call,
        leaves: list[Leaf],
        specs: list[tuple[Any, SpecDims | None]],
        blocks: list[Leaf],
        env: Env,
        check_outputs: Callable[[Any], Any],
        trail: tuple[Step, ...],
    ) -> Any:
        """JAX's own trace of the whole shard_map (on an abstract mesh when the mesh is only
        planned, inside the vmaps of `env`): the per-device output shapes, and JAX's verdict
        on what only a trace can tell (collectives, vma, the replication promise of
        out_specs, its batching rules), in the user's terms."""
        o = self.options
        assert self.fn is not None
        fn = recorded_first(self.fn)  # JAX's own trace of it, where the check rides one
        recorded: list[Any] = []
        returned: list[Any] = []  # the traced outputs themselves: their vma types explain a refusal
        entered: list[bool] = []

        def recording(*args: Any) -> Any:
            entered.append(True)
            out = fn(*args)
            check_jax_outputs(out, o.name)
            recorded.append(jax.tree_util.tree_map(lambda x: Shape(np.shape(x)), out))
            returned.append(out)
            return out

        mapped = self.jax_shard_map(recording)
        try:
            _, treedef = call.flat()
            jaxpr = jaxpr_under_levels(mapped, treedef, [leaf.value for leaf in leaves], env)
            check_ppermutes(jaxpr)
            warn_repeated_sums(jaxpr)
        except AxisCheckError:
            raise
        except SilentCollectiveError as err:
            raise collective_error(o.name, str(err), False, trail, err.hint) from None
        except Exception as err:
            text = str(err)
            if psum_scatter_size_refused(err):
                raise collective_error(o.name, f"psum_scatter: {text}", False, trail) from None
            if not entered:  # JAX refused before calling the function: options or arguments
                raise Scene(trail, o.describe()).error(
                    ArgumentError,
                    f"jax.{o.kind} refuses these arguments or options before it calls {o.name}:"
                    f" {type(err).__name__}: {text}",
                ) from err
            if not recorded:
                differ = manual_types_differ(err)
                if differ is not None:
                    shown_in = o.shown("in", call.args)
                    raise self._types_differ(differ, leaves, specs, shown_in, blocks, err, trail) from err
                cast = varying_cast_refused(err)
                if cast is not None:
                    raise self._cast_refused(cast, err, trail) from err
                unbound = self._unbound_name(call, blocks, env)
                if unbound is not None:
                    bound = sorted(map(str, o.axis_names or self.mesh(env).names))
                    fix = f"call the collective over an axis this {o.kind} binds ({_quoted(tuple(bound))})"
                    raise function_error(o.name, blocks, "per-device arguments", unbound, trail, fix) from unbound
                raise function_error(o.name, blocks, "per-device arguments", err, trail) from err
            check_outputs(recorded[0])  # an out_specs mistake, explained by our own rules
            # JAX 0.12 under vmap reports a broken replication promise as a pytree error of
            # its own ("Too few leaves for PyTreeDef"): the vma types still tell.
            varying = [varying_axes(leaf) for leaf in jax.tree_util.tree_leaves(returned[0])]
            broken = o.check_vma and bool(self.output_gaps(recorded[0], varying, env))
            if replication_refused(err) is not None or broken:
                raise self._replication_error(call, leaves, specs, env, recorded[0], returned[0], err, trail) from None
            raise Scene(trail, o.describe()).error(
                OutputError,
                f"{o.name} returns, but JAX cannot assemble its per-device outputs by {o.word('out')}:"
                f" {type(err).__name__}: {text}",
            ) from err
        if not env:
            self._warn_copies_stacked(specs, returned[0], jaxpr, self.mesh(env))
        return recorded[0]

    def _warn_copies_stacked(
        self, specs: list[tuple[Any, SpecDims | None]], out: Any, jaxpr: Any, mesh: MeshShape
    ) -> None:
        """Warn of an output that out_specs split over a mesh axis that no argument is split
        over and that nothing in the function varies along (its vma type says so): every
        device computes the same block from the same whole arguments, and JAX stacks the
        copies silently (smap's `in_axes=None` meant for the weights alone, which replicates
        the batch too). An output the body computes from no argument (a fresh buffer of
        zeros) is made per device on purpose; a body with effects (a callback, a print) may
        give each device its own; a collective's result has a split argument behind it."""
        o = self.options
        if not o.check_vma or jaxpr.effects:
            return  # without vma types, no output is known to be the same on every device
        manual = o.axis_names or frozenset(mesh.names)
        split_in = {a for _, dims in specs if dims is not None for axes in dims for a in axes}
        paired = broadcast_prefix(o.out_specs, out, lambda x: isinstance(x, PartitionSpec))
        if isinstance(paired, PrefixMismatch):
            return
        dims_out = [spec_dims(spec, mesh, manual, "") for spec in paired]
        if all(a in split_in for dims in dims_out for axes in dims for a in axes):
            return  # every axis an output is split over splits an argument too
        sources = _body_sources(jaxpr)
        leaves = jax.tree_util.tree_leaves(out)
        if sources is None or len(sources) != len(leaves):
            return
        shown = o.shown("out", out)
        labels = ["output" + p for p in leaf_paths(out)]
        for i, (label, leaf, dims, source) in enumerate(zip(labels, leaves, dims_out, sources, strict=True)):
            varying = varying_axes(leaf)
            copied = [a for axes in dims for a in axes if a not in split_in]
            if varying is None or not source or not copied or set(copied) & varying:
                continue
            axes = tuple(copied)
            block = Shape(np.shape(leaf))
            entry = shown[i] if shown is not None else paired[i]
            warn_at_user(
                AxisCheckWarning(
                    f"{o.describe()}: {label} is the same on every device along {_quoted(axes)}: no argument is"
                    f" split over {_quoted(axes)} and nothing in {o.name} varies along it, yet its"
                    f" {o.word('out')} entry {entry} splits it there, so it comes back as {mesh.size(axes)}"
                    f" identical copies of one {format_shape(tuple(block))} block, stacked into"
                    f" {format_shape(tuple(global_shape(block, dims, mesh)))}. Hint: split the argument meant per"
                    f" device over {_quoted(axes)} in {o.word('in')}, or leave {_quoted(axes)} out of"
                    f" {label}'s {o.word('out')} entry if one copy was meant"
                )
            )
            return  # one warning per call

    # ------------------------------------------------------------ vma, explained

    def output_gaps(self, shapes: Any, varying: list[frozenset[str] | None], env: Env = ()) -> list[OutputGap]:
        """The output leaves (`shapes`: their per-device blocks; `varying`: the mesh axes
        each varies over) whose out_specs leave out a manual axis they vary over."""
        mesh = self.mesh(env)
        manual = self.options.axis_names or frozenset(mesh.names)
        paired = broadcast_prefix(self.options.out_specs, shapes, _is_spec)
        if isinstance(paired, PrefixMismatch):
            return []
        labels = ["output" + p for p in leaf_paths(shapes)]
        gaps = []
        for j, (label, block, spec, axes) in enumerate(
            zip(labels, jax.tree_util.tree_leaves(shapes), paired, varying, strict=True)
        ):
            if axes is None or not isinstance(spec, PartitionSpec):
                continue
            named = {a for dim in spec_dims(spec, mesh, manual, "") for a in dim}
            missing = tuple(a for a in mesh.names if a in manual and a in axes and a not in named)
            if missing:
                gaps.append(OutputGap(j, label, block, spec, missing))
        return gaps

    def vma_jaxpr(self, call: Call, env: Env = ()) -> tuple[Any, Any] | None:
        """The user's function as a jaxpr on the per-device blocks, typed with JAX's vma
        (which mesh axes each value varies over), and its output shapes: one more trace of
        the function, only to explain or fix a refusal. None where JAX cannot say."""
        fn = self.fn
        if fn is None or not only_vmaps(env):
            return None

        def probe(*args: Any) -> Any:
            closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
            raise _Probed(closed, shapes)

        leaves, treedef = call.flat()
        try:
            with quiet_tracebacks():  # the probe's exception is only read here
                jaxpr_under_levels(self.jax_shard_map(probe), treedef, [leaf.value for leaf in leaves], env)
        except _Probed as done:
            shapes = jax.tree_util.tree_map(lambda x: Shape(np.shape(x)), done.shapes)
            return done.jaxpr, shapes
        except Exception:  # JAX refused first: nothing to add
            return None
        return None

    def _replication_error(
        self,
        call: Call,
        leaves: list[Leaf],
        specs: list[tuple[Any, SpecDims | None]],
        env: Env,
        shapes: Any,
        out: Any,
        err: Exception,
        trail: tuple[Step, ...],
    ) -> AxisCheckError:
        """out_specs promise replication along an axis an output varies over: which output
        leaf, which axis, and why (which argument's spec splits that axis, or which
        collective makes it vary), from JAX's vma types."""
        o = self.options
        scene = Scene(trail, o.describe())
        jax_said = tuple(dict.fromkeys(f"JAX: {line}" for line in replication_refusal_lines(err)))
        jax_said = jax_said or (f"JAX: {type(err).__name__}: {err}",)
        varying = [varying_axes(leaf) for leaf in jax.tree_util.tree_leaves(out)]
        gaps = self.output_gaps(shapes, varying, env)
        if not gaps:  # JAX's types did not say: JAX's own sentence
            detail = replication_refused(err)
            return scene.error(
                OutputError,
                f"{_promise(o)} that an output is the same on every device along a mesh axis, but"
                f" {o.name}'s output varies along it: {detail}",
                hint=_replication_fix(o),
            )
        probed = self.vma_jaxpr(call, env)
        shown = o.shown("out", shapes)
        grouped: dict[tuple[str, tuple[str, ...], str], list[str]] = {}
        for gap in gaps:  # leaves with the same entry, axes and reason are told once
            entry = shown[gap.index] if shown is not None else repr(gap.spec)
            why = self._why_varying(probed, gap, leaves, specs, o.shown("in", call.args))
            grouped.setdefault((entry, gap.missing, why), []).append(gap.label)
        accounts = []
        for (entry, missing, why), labels in grouped.items():
            it = "it" if len(missing) == 1 else "them"
            one = len(labels) == 1
            if not one:
                why = why.replace("it is computed from", "they are computed from").replace(
                    "makes it vary", "makes them vary"
                )
            accounts.append(
                f"{and_list(labels)} {'is' if one else 'are'} the same on every device along {_axes_text(missing)}"
                f" ({'its' if one else 'their'} {o.word('out')} entry {entry} leaves {it} out), but"
                f" {o.name}'s {and_list(labels)} {'varies' if one else 'vary'} along {it}" + (f": {why}" if why else "")
            )
        problem = f"{_promise(o)} that " + "; and that ".join(accounts)
        return scene.error(
            OutputError,
            problem,
            places=tuple(Place(g.label, g.block, unit="per-device") for g in gaps),
            notes=jax_said,
            hint=_gap_fix(o, gaps),
        )

    def _why_varying(
        self,
        probed: tuple[Any, Any] | None,
        gap: OutputGap,
        leaves: list[Leaf],
        specs: list[tuple[Any, SpecDims | None]],
        shown: list[str] | None,
    ) -> str:
        """Where an output's variation along the gap's axes comes from, read from the jaxpr
        (`shown`: smap's in_axes entry of each argument leaf)."""
        if probed is None:
            return ""
        closed, _ = probed
        jaxpr = getattr(closed, "jaxpr", closed)
        if len(jaxpr.invars) != len(leaves) or gap.index >= len(jaxpr.outvars):
            return ""
        o = self.options
        from_inputs: dict[int, list[str]] = {}
        from_calls: dict[str, list[str]] = {}
        for axis in gap.missing:
            inputs, makers = varying_sources(closed, gap.index, axis)
            for i in inputs:
                from_inputs.setdefault(i, []).append(axis)
            for m in makers if not inputs else ():
                from_calls.setdefault(_COLLECTIVES.get(m, m), []).append(axis)
        reasons = []
        if from_inputs:
            named = []
            for i, axes in from_inputs.items():
                spec = shown[i] if shown is not None else repr(specs[i][0])
                over = and_list([repr(a) for a in axes])
                named.append(f"{leaves[i].label}, whose {o.word('in')} entry {spec} splits it over {over}")
            reasons.append("it is computed from " + "; and from ".join(named))
        for call_name, axes in from_calls.items():
            over = and_list([repr(a) for a in axes])
            reasons.append(f"{call_name} over {over} makes it vary (JAX counts its result as varying)")
        return "; ".join(reasons)

    def _types_differ(
        self,
        differ: tuple[str, str, str, frozenset[str], frozenset[str]],
        leaves: list[Leaf],
        specs: list[tuple[Any, SpecDims | None]],
        shown: list[str] | None,
        blocks: list[Leaf],
        err: Exception,
        trail: tuple[Step, ...],
    ) -> AxisCheckError:
        """A loop carry, or cond/switch branches, whose values vary over different mesh axes:
        which value, which axes, which arguments bring the variation in, and the cast that
        makes the invariant one varying (spelled for this JAX)."""
        o = self.options
        prim, first, second, first_only, second_only = differ
        order = list(o.mesh.names) if o.mesh is not None else []

        def ordered(axes: frozenset[str]) -> tuple[str, ...]:
            return tuple(a for a in order if a in axes) + tuple(sorted(a for a in axes if a not in order))

        loop = not second
        if loop:  # the body makes the carry vary along axes its start does not
            lacking = [(f"the initial carry {first}", ordered(second_only))] if second_only else []
            varied_by = "the carry the loop body returns"
        else:
            lacking = [
                (f"the output of {name}", ordered(axes))
                for name, axes in ((first, second_only), (second, first_only))
                if axes
            ]
            varied_by = ""
        if not lacking:
            return function_error(o.name, blocks, "per-device arguments", err, trail)
        accounts, fixes = [], []
        for what, axes in lacking:
            it = "it" if len(axes) == 1 else "them"
            other = varied_by or ("the output of " + (second if what.endswith(first) else first))
            accounts.append(
                f"{what} is the same on every device along {_axes_text(axes)}, but {other} varies along {it}"
            )
            if loop:
                fixes.append(
                    f"make the carry {first} vary along {_quoted(axes)} from the start: pass"
                    f" {varying_cast('init', axes)} as its initial value (init: the value it starts from now)"
                )
            else:
                branch = what.removeprefix("the output of ")
                fixes.append(f"in {branch}, return {varying_cast('out', axes)} (out: what {branch} returns now)")
        wanted = {a for _, axes in lacking for a in axes}
        sources = [
            f"{leaf.label} ({o.word('in')} entry {shown[i] if shown is not None else repr(spec)})"
            for i, (leaf, (spec, dims)) in enumerate(zip(leaves, specs, strict=True))
            if dims is not None and wanted & {a for dim in dims for a in dim}
        ]
        brought = (
            f" (the arguments that vary along {_quoted(tuple(sorted(wanted)))}: {and_list(sources)})" if sources else ""
        )
        account = (
            f"jax.lax.{prim} needs {'its carry to keep one type' if loop else 'its branches to return one type'}: "
            + "; and ".join(accounts)
            + brought
        )
        # The account says which value and which axis; JAX's words follow once.
        return Scene(trail, o.describe()).error(
            FunctionError,
            f"{o.name}'s {account}",
            symbol=f"mesh axis {lacking[0][1][0]!r}",
            notes=(f"JAX: {type(err).__name__}: {err}",),
            hint="; and ".join(fixes),
        )

    def _cast_refused(
        self, cast: tuple[frozenset[str], tuple[str, ...]], err: Exception, trail: tuple[Step, ...]
    ) -> AxisCheckError:
        """A cast to varying of a value that already varies along (some of) its axes."""
        o = self.options
        already, asked = cast
        rest = tuple(a for a in asked if a not in already)
        if already and rest:
            account = (
                f"jax.lax.pcast(..., {asked!r}, to='varying') is given a value that already varies along"
                f" {_quoted(tuple(sorted(already & set(asked))))}; a cast to varying takes only axes the value"
                " does not vary along yet"
            )
            fix = f"cast it along the others only: {varying_cast('x', rest)}"
        else:
            account = (
                "a cast to varying (jax.lax.pcast(..., to='varying')) is given a value that already varies"
                " along those axes"
            )
            fix = (
                "drop the cast: the value already varies (it is an argument its spec splits over those axes,"
                " or is computed from one)"
            )
        return Scene(trail, o.describe()).error(
            FunctionError,
            f"{o.name}'s {account}",
            notes=(f"JAX: {type(err).__name__}: {err}",),
            hint=fix,
        )


def _body_sources(jaxpr: Any) -> list[Dependence] | None:
    """Which arguments each output of the one shard_map in `jaxpr` (the whole call, traced)
    is computed from inside its body, by position among the shard_map's operands (the
    body's own constants are none: a buffer it makes); None where the jaxpr is not that one
    shard_map."""
    eqns = [eqn for eqn in equations(jaxpr) if eqn.primitive.name == "shard_map"]
    if len(eqns) != 1 or list(eqns[0].outvars) != list(jaxpr.outvars):
        return None
    subs = [sub for value in eqns[0].params.values() for sub in sub_jaxprs(value)]
    body = called_jaxpr(eqns[0], subs)
    if body is None:
        return None
    return flows_into(body, [frozenset({i}) for i in range(len(body.invars))])


def _quoted(axes: tuple[str, ...]) -> str:
    return and_list([repr(a) for a in axes])


_COLLECTIVES = {
    "axis_index": "jax.lax.axis_index",
    "ppermute": "jax.lax.ppermute",
    "all_gather": "jax.lax.all_gather",
    "all_to_all": "jax.lax.all_to_all",
    "reduce_scatter": "jax.lax.psum_scatter",
    "pvary": "a cast to varying",
    "pcast": "a cast to varying",
}


def _axes_text(axes: tuple[str, ...]) -> str:
    return f"mesh axis {axes[0]!r}" if len(axes) == 1 else "mesh axes " + and_list([repr(a) for a in axes])


def _gap_fix(o: ShardOptions, gaps: list[OutputGap]) -> str:
    """What to do where no option the engine tried works (a scalar cannot be split)."""
    same = [g for g in gaps if g.missing == gaps[0].missing]
    named = repr(same[0].missing[0]) if len(same[0].missing) == 1 else repr(same[0].missing)
    splittable = [g.label for g in same if len(g.block)]
    hints = []
    if splittable and o.smap_axes is None:
        hints.append(
            f"name {named} in the out_specs entry of {and_list(splittable)} (the blocks are then concatenated)"
        )
    elif splittable:
        hints.append(f"give {and_list(splittable)} an out_axes (the blocks are then concatenated)")
    labels = and_list([g.label for g in same])
    hints.append(
        f"reduce {labels} over {named} first (jax.lax.psum or jax.lax.pmean over {named}) where each device"
        " computes a partial result (a sum or contraction over its block of a split axis)"
    )
    if o.smap_axes is None:  # smap always checks: no opting out
        hints.append("pass check_vma=False if it is replicated in fact")
    return ", or ".join(hints)


def _one(o: ShardOptions) -> str:
    """One entry that applies to a whole tree, as the user would write it."""
    return "one P(...)" if o.smap_axes is None else "one int (or None)"


def _promise(o: ShardOptions) -> str:
    return "out_specs promise" if o.smap_axes is None else "out_axes None promises"


def _replication_fix(o: ShardOptions) -> str:
    if o.smap_axes is None:
        return (
            "name that mesh axis in the out_spec (the blocks are then concatenated), reduce over it"
            " first (jax.lax.psum / pmean), or pass check_vma=False if it is replicated in fact"
        )
    # smap always checks (check_vma=True): there is no opting out as with shard_map.
    return (
        "give the output an out_axes (the blocks are then concatenated along it), or reduce over"
        " the axis first (jax.lax.psum / pmean)"
    )
