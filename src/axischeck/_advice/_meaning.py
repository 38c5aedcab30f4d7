"""What a program means, and whether a candidate change computes it.

The engine accepts a candidate when every shape agrees; that is not enough to call it
a fix. Each transform's meaning is checked against a reference, written down here once
and run on the call's own arguments (or stand-ins of their shapes and dtypes):

- `shard_map` and `smap`: the same program on a one-device mesh (every mesh axis of
  size 1), which computes the body on the whole arrays. A candidate must give the same
  shapes and values.
- `pmap`: `vmap` with the user's own options (axis name and negative axes included):
  pmap maps over devices what vmap maps over a batch. A candidate must compute what that
  computes; where that reference fails too, the rules for every transform apply.
- every transform: a candidate must not leave unmapped every argument the user mapped,
  and must not make a mapped output the same for every example where an argument the
  user mapped differs from example to example (three "ensemble members" built from one
  unsplit key are one member three times).

A declared output signature is checked by the engine itself. The budget: at most
`RUNS` runs of the program for one failed call, each on at most `MAX_ELEMENTS` argument
elements. A candidate that cannot be checked within it is not called a fix.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer
from jax.sharding import PartitionSpec

from .._core._errors import AxisCheckError, OutputError
from .._core._jax_compat import spec_axes, sub_jaxprs, tracing_now, varying_axes
from .._core._leaves import Call
from .._core._text import and_list, format_shape
from .._core._trees import PrefixMismatch, broadcast_prefix, hashable
from .._engine._models import MapModel, Model
from .._engine._shard_model import ShardModel
from ._rank import per_argument
from ._suggestion import Suggestion

RUNS = 6
"""How many times the meaning check may run the program for one failed call."""

MAX_ELEMENTS = 1 << 22
"""The most argument elements (all leaves together) a run may take: 4M (16 MB of float32)."""

RunWith = Callable[[Mapping[str, Any]], Callable[..., Any]]
"""JAX's own transform of the user's function, with some options changed (none: as given)."""


@dataclass
class Program:
    """A failed call, as what is needed to run it again: JAX's transform with changed
    options, the model the options were read into, and the call's values (the user's
    arrays, or stand-ins of their shapes and dtypes)."""

    run_with: RunWith
    fun: Callable[..., Any]
    model: Model
    call: Call
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    runs: int = RUNS
    _reference: _Reference | None = None

    def reference(self) -> _Reference:
        """The reference the candidates are held to (one per failed call: what it ran is
        kept for every question asked of it)."""
        if self._reference is None:
            self._reference = _Reference(self)
        return self._reference

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`fn(*args, **kwargs)` evaluated now (also inside a trace JAX is making), counted
        against the budget; raises `_NotChecked` past it."""
        if self.runs <= 0:
            raise _NotChecked("the meaning check's runs are spent")
        self.runs -= 1
        with jax.ensure_compile_time_eval() if tracing_now() else contextlib.nullcontext():
            out = fn(*args, **kwargs)
            return jax.tree_util.tree_map(np.asarray, out)


class _NotChecked(Exception):
    """The candidate could not be run within the budget, or on this machine."""


def program(
    run_with: RunWith, fun: Callable[..., Any], model: Model, call: Call, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Program | None:
    """The failed call as a `Program`, with stand-ins for abstract or traced arguments;
    None where its arguments are too large to run within `MAX_ELEMENTS` (or one has a
    dim beyond it: an empty array of a dim no allocation takes)."""
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    shapes = [tuple(leaf.shape) if isinstance(leaf, _ARRAYS) else () for leaf in leaves]
    if sum(math.prod(shape) for shape in shapes) > MAX_ELEMENTS or any(d > MAX_ELEMENTS for s in shapes for d in s):
        return None
    rng = np.random.default_rng(0)
    values = [_concrete(leaf, rng) for leaf in leaves]
    args, kwargs = jax.tree_util.tree_unflatten(treedef, values)
    return Program(run_with, fun, model, call, tuple(args), dict(kwargs))


_ARRAYS = (jax.Array, np.ndarray, Tracer, jax.ShapeDtypeStruct)
"""The leaves a program's arguments are counted by (anything else is passed as it is)."""


def _concrete(leaf: Any, rng: np.random.Generator) -> Any:
    """The leaf as a value to compute with: the user's array as it is, a stand-in of the
    same shape and dtype for a struct or a tracer (values that differ from example to
    example, as data does)."""
    if not isinstance(leaf, Tracer | jax.ShapeDtypeStruct):
        return leaf
    shape, dtype = tuple(leaf.shape), leaf.dtype
    if jnp.issubdtype(dtype, jax.dtypes.prng_key):
        keys = jax.random.split(jax.random.key(0), max(1, int(np.prod(shape))))
        return keys[: int(np.prod(shape))].reshape(shape)
    if np.issubdtype(dtype, np.bool_):
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def judged(found: list[Suggestion], prog: Program | None, declared: bool) -> list[Suggestion]:
    """Each candidate with `shapes_only` set where it does not compute what the program
    means (what it changes, in words), or could not be checked. `declared`: the function
    declares its signature, the user's word for its shapes, which the engine has checked
    the candidate against: one the program cannot be run for here (a stub body, the
    budget spent) stands on that word."""
    if not found:
        return found
    reference = prog.reference() if prog is not None else None
    out = []
    for s in found:
        if s.shapes_only is not None:
            out.append(s)
            continue
        try:
            if reference is None:
                raise _NotChecked("the arguments are too large to run it here")
            why = reference.differs(s)
        except _NotChecked as not_checked:
            stands = declared and not s.checked_only  # on the signature's word
            why = None if stands else f"it could not be checked against what the program means ({not_checked})"
        out.append(replace(s, shapes_only=why) if why else s)
    return out


def partial_results(prog: Program | None, err: AxisCheckError) -> str | None:
    """The real cause of a shard_map output promised replicated where each device's block
    already has the shape the program gives that whole output (a sum or contraction over a
    split axis, computed on one block: a partial result), which no out_specs assembles:
    said only where it is checked, the output summed over the mesh axes it varies along
    (`jax.lax.psum`) computing what the program computes on one device. None otherwise
    (the engine's hint, which names the alternatives, stands)."""
    if prog is None or not isinstance(prog.model, ShardModel) or not isinstance(err, OutputError):
        return None
    model = prog.model
    try:
        want = prog.reference().one_device(model)
        probed = model.vma_jaxpr(prog.call) if want is not None and want is not _MESH else None
    except Exception:
        return None
    if probed is None:
        return None
    closed, shapes = probed
    gaps = model.output_gaps(shapes, [varying_axes(v) for v in getattr(closed, "jaxpr", closed).outvars])
    wanted = jax.tree_util.tree_leaves(want)
    if not gaps or len(wanted) != len(jax.tree_util.tree_leaves(shapes)):
        return None
    if any(tuple(np.shape(wanted[gap.index])) != tuple(gap.block) for gap in gaps):
        return None
    fun = prog.fun

    def summed(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten(fun(*args, **kwargs))
        for gap in gaps:
            leaves[gap.index] = jax.lax.psum(leaves[gap.index], gap.missing)  # type: ignore[no-untyped-call]
        return jax.tree_util.tree_unflatten(tree, leaves)

    try:
        if _difference(prog.run(model.jax_shard_map(summed), prog.args, prog.kwargs), want, "") is not None:
            return None
    except Exception:  # a mesh this machine does not have, the budget spent: not checked
        return None
    labels = and_list([gap.label for gap in gaps])
    blocks = {tuple(gap.block) for gap in gaps}
    size = f" {format_shape(next(iter(blocks)))}" if len(blocks) == 1 else ""
    axes = list(dict.fromkeys(a for gap in gaps for a in gap.missing))
    over = axes[0] if len(axes) == 1 else tuple(axes)
    return (
        f"each device's {labels} already has the shape the program gives the whole{size}: a partial result"
        " of its blocks (a sum or contraction over an axis the in_specs split), which no out_specs entry"
        f" assembles; sum it before returning it, jax.lax.psum(..., {over!r}), and keep its out_specs entry"
        " (checked: the program then computes what it computes on one device)"
    )


class _Reference:
    """What the program means, for one failed call: the reference output (computed once,
    when first asked) and the rules a candidate is held to."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self._want: Any = _UNSET
        self._other_want: Any = _UNSET  # the reference on other values (see `_on_other_values`)
        self._other_values: tuple[tuple[Any, ...], dict[str, Any]] = ((), {})

    def differs(self, s: Suggestion) -> str | None:
        """None where `s` computes what the program means, else what it changes."""
        model = self.prog.model
        if s.pads:
            raise _NotChecked("a padded argument changes the program's data")
        if isinstance(model, ShardModel):
            return self._shard_differs(s, model)
        if isinstance(model, MapModel):
            unmapped = self._unmaps_every_mapped_argument(s, model)
            if unmapped is not None:
                return unmapped
            if model.level.kind == "pmap":
                want = self._vmap_reference(model)
                if want is not None:
                    got = self._as_vmap(s, model)
                    return _difference(got, want, "vmap with your options")
            return self._same_for_every_example(s, model)
        return None

    # --------------------------------------------------------------- shard_map

    def _shard_differs(self, s: Suggestion, model: ShardModel) -> str | None:
        """The candidate's output against the program on a one-device mesh. A program whose
        values depend on the mesh itself (a device's index, a permutation or gather over
        its devices) has no whole-array meaning to compare with: there a candidate that
        only changes how the blocks are assembled (out_specs, smap's out_axes) keeps what
        every device computes, and one that changes more is not checked."""
        self.one_device(model)
        if self._want is _MESH:
            if set(s.as_kwargs()) <= {"out_specs", "out_axes"} and not s.reassigns:
                return self._repeats_one_block(s, model)
            raise _NotChecked("the program's values depend on its mesh, which one device does not have")
        if self._want is None:
            raise _NotChecked("the program fails on a one-device mesh")
        other_shapes = self._other_shapes(s)
        if other_shapes is not None:
            return other_shapes
        try:
            got = self.prog.run(self.prog.run_with(s.as_kwargs()), *self._call_values(s.by_position, s.transposes))
        except _NotChecked:
            raise
        except Exception as err:
            if set(s.as_kwargs()) <= {"out_specs", "out_axes"} and s.outcome is not None:
                # A mesh this machine does not have: an assembly that gives the output the
                # shape the body gives the whole arrays is read as keeping its layout.
                shapes = jax.tree_util.tree_map(lambda x: np.shape(x), self._want)
                return _difference(s.outcome.shapes, shapes, "the program on one device", shapes_only=True)
            raise _NotChecked(f"it does not run here: {type(err).__name__}") from None
        differs = _difference(got, self._want, "the program on one device")
        if differs is None and s.checked_only:
            return self._on_other_values(s, model)
        return differs

    def _on_other_values(self, s: Suggestion, model: ShardModel) -> str | None:
        """A candidate only the program's values tell from the others, run again on values
        of the call's shapes that are no special case: the user's own may be one (rows of
        ones, where a max over the split axis agrees with each block's by chance). Floats
        are drawn anew; indices, ids and keys kept. Two more runs of the budget."""
        if self._other_want is _UNSET:
            self._other_values = _redrawn(self._call_values(()))
            try:
                self._other_want = self.prog.run(_one_device(model, self.prog.fun), *self._other_values)
            except _NotChecked:
                raise
            except Exception:
                self._other_want = None
        if self._other_want is None:
            raise _NotChecked("the program fails on a one-device mesh on other values")
        try:
            got = self.prog.run(self.prog.run_with(s.as_kwargs()), *self._other_values)
        except _NotChecked:
            raise
        except Exception as err:
            raise _NotChecked(f"it does not run here on other values: {type(err).__name__}") from None
        return _difference(got, self._other_want, "the program on one device (on other values of these shapes)")

    def _other_shapes(self, s: Suggestion) -> str | None:
        """Where the engine's outcome already gives an output another shape than the
        program on one device does, how: no run of the budget is spent on a candidate the
        shapes rule out (None where they agree, or cannot be compared leaf for leaf)."""
        if s.outcome is None:
            return None
        got = jax.tree_util.tree_leaves(s.outcome.shapes, is_leaf=_is_shape)
        want = [np.shape(leaf) for leaf in jax.tree_util.tree_leaves(self._want)]
        if len(got) != len(want) or not all(map(_is_shape, got)):
            return None
        return _difference([tuple(g) for g in got], want, "the program on one device", shapes_only=True)

    def _repeats_one_block(self, s: Suggestion, model: ShardModel) -> str | None:
        """For a program whose values depend on its mesh, an out_specs candidate keeps what
        every device computes; it is still no fix where the axes it names concatenate
        blocks that are all the same (an `all_gather`'s result, the same on every device in
        fact): the output is then that block repeated. None where the blocks differ."""
        new_specs = s.as_kwargs().get("out_specs")
        if new_specs is None:
            return None
        try:
            got = self.prog.run(self.prog.run_with(s.as_kwargs()), *self._call_values(()))
        except _NotChecked:
            raise
        except Exception as err:
            raise _NotChecked(f"it does not run here: {type(err).__name__}") from None
        leaves = jax.tree_util.tree_leaves(got)
        is_spec = lambda x: isinstance(x, PartitionSpec)  # noqa: E731
        before = broadcast_prefix(model.options.out_specs, got, is_spec)
        after = broadcast_prefix(new_specs, got, is_spec)
        if isinstance(before, PrefixMismatch) or isinstance(after, PrefixMismatch) or model.options.mesh is None:
            return None
        for leaf, old, new in zip(leaves, before, after, strict=True):
            named = {a for dim in spec_axes(old) for a in dim}
            for d, axes in enumerate(spec_axes(new)):
                added = tuple(a for a in axes if a not in named)
                if added and _same_blocks(np.asarray(leaf), d, model.options.mesh.size(added)):
                    return (
                        f"its output repeats one block {model.options.mesh.size(added)} times along axis {d}: the"
                        f" blocks are the same on every device along {and_list([repr(a) for a in added])} in"
                        " fact (pass check_vma=False to promise what they are)"
                    )
        return None

    def one_device(self, model: ShardModel) -> Any:
        """The program's output on a one-device mesh (run once); `_MESH` where its values
        depend on the mesh, None where it fails there."""
        if self._want is _UNSET:
            one_device = _one_device(model, self.prog.fun)
            args, kwargs = self._call_values(())
            try:
                self._want = (
                    _MESH
                    if _uses_the_mesh(model, self.prog.fun, args, kwargs)
                    else self.prog.run(one_device, args, kwargs)
                )
            except _NotChecked:
                raise
            except Exception:
                self._want = None  # the program fails on one device: nothing to compare with
        return self._want

    # --------------------------------------------------------------------- pmap

    def _vmap_reference(self, model: MapModel) -> Any:
        """`vmap` with the user's pmap options, on the call (None where it fails too, or
        where pmap refuses the options themselves: a static argument it cannot hash, an
        array, is no program to mean anything)."""
        if self._want is _UNSET:
            level = model.level
            args, kwargs = self._call_values(())
            try:
                if not all(hashable(args[i]) for i in level.static if i < len(args)):
                    self._want = None
                else:
                    self._want = self.prog.run(
                        _as_vmap(
                            self.prog.fun, level.in_axes.value, level.out_axes.value, level.axis_name, level.static
                        ),
                        args,
                        kwargs,
                    )
            except _NotChecked:
                raise
            except Exception:
                self._want = None
        return self._want

    def _as_vmap(self, s: Suggestion, model: MapModel) -> Any:
        level, options = model.level, s.as_kwargs()
        static = options.get("static_broadcasted_argnums", level.static)
        static = (static,) if isinstance(static, int) else tuple(static)
        fn = _as_vmap(
            self.prog.fun,
            options.get("in_axes", level.in_axes.value),
            options.get("out_axes", level.out_axes.value),
            options.get("axis_name", level.axis_name),
            static,
        )
        try:
            return self.prog.run(fn, *self._call_values(s.by_position, s.transposes))
        except _NotChecked:
            raise
        except Exception as err:
            raise _NotChecked(f"vmap with it does not run: {type(err).__name__}") from None

    # ---------------------------------------------------------- every transform

    def _unmaps_every_mapped_argument(self, s: Suggestion, model: MapModel) -> str | None:
        """A candidate that maps no argument at all, where the user mapped some: every
        example would get the same arguments (and JAX refuses it without an axis_size)."""
        axes = s.as_kwargs().get("in_axes")
        n = len(self.prog.call.args)
        before = per_argument(model.level.in_axes.value, n)
        after = per_argument(axes, n) if axes is not None else None
        if before is None or after is None or s.by_position or self.prog.call.kwargs:
            return None
        mapped = [i for i, entry in enumerate(before) if entry is not None]
        if mapped and all(a is None for a in after):
            names = and_list([self.prog.call.arg_labels[i] for i in mapped])
            return f"it maps nothing: {names}, which you mapped, would be passed whole to every example"
        return None

    def _same_for_every_example(self, s: Suggestion, model: MapModel) -> str | None:
        """A candidate whose every mapped output is the same for each example, where an
        argument the user mapped differs from example to example. (Under an axis name, a
        collective may make the examples agree on purpose: a `psum` over the batch.)"""
        options = s.as_kwargs()
        if options.get("axis_name", model.level.axis_name) is not None:
            return None
        varying = self._user_mapped_varying(model)
        if not varying:
            return None
        try:
            got = self.prog.run(self.prog.run_with(options), *self._call_values(s.by_position, s.transposes))
        except _NotChecked:
            raise
        except Exception as err:
            raise _NotChecked(f"it does not run here: {type(err).__name__}") from None
        out_axes = options.get("out_axes", model.level.out_axes.value)
        treedef: Any
        leaves, treedef = jax.tree_util.tree_flatten(got)
        try:
            axes = treedef.flatten_up_to(out_axes) if not isinstance(out_axes, int | type(None)) else None
        except (ValueError, TypeError):
            return None
        mapped = [(leaf, a if axes is not None else out_axes) for leaf, a in zip(leaves, axes or leaves, strict=True)]
        mapped = [(leaf, a) for leaf, a in mapped if a is not None and np.ndim(leaf) > 0]
        if not mapped or any(not _same_along(leaf, a) for leaf, a in mapped):
            return None
        return (
            f"it gives every example the same output, though {and_list(varying)} (which you mapped)"
            " differs from example to example"
        )

    def _user_mapped_varying(self, model: MapModel) -> list[str]:
        """The arguments the user mapped whose examples differ (along the user's axes)."""
        n = len(self.prog.call.args)
        entries = per_argument(model.level.in_axes.value, n)
        if entries is None:
            return []
        names = []
        for i, (value, entry) in enumerate(zip(self.prog.args, entries, strict=False)):
            if type(entry) is not int:
                continue
            leaves = [leaf for leaf in jax.tree_util.tree_leaves(value) if np.ndim(leaf) > 0]
            if any(-np.ndim(leaf) <= entry < np.ndim(leaf) and not _same_along(leaf, entry) for leaf in leaves):
                names.append(self.prog.call.arg_labels[i])
        return names

    # ---------------------------------------------------------------- the call

    def _call_values(
        self, by_position: tuple[str, ...], transposes: tuple[tuple[int, tuple[int, ...]], ...] = ()
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's values as a candidate changes them: keyword arguments passed by
        position, an argument transposed."""
        kwargs = dict(self.prog.kwargs)
        args = [*self.prog.args, *(kwargs.pop(name) for name in by_position)]
        for i, order in transposes:
            args[i] = np.transpose(np.asarray(args[i]), order)
        return tuple(args), kwargs


def _redrawn(values: tuple[tuple[Any, ...], dict[str, Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's values with every numeric array drawn anew, of the same shape and dtype
    and within the range of its own values (positive data stays positive, indices stay
    indices): values that differ along every axis, as data does. An array of one value
    is drawn from that value to one more. Bools and keys are kept (a mask, a key mean
    what they hold)."""
    rng = np.random.default_rng(1)

    def redraw(leaf: Any) -> Any:
        dtype = getattr(leaf, "dtype", None)
        if (
            dtype is None
            or not np.size(leaf)
            or not (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer))
        ):
            return leaf
        held = np.asarray(leaf)
        low, high = held.min().item(), held.max().item()
        high = high if high > low else low + 1
        if jnp.issubdtype(dtype, jnp.integer):
            drawn = rng.integers(low, high, np.shape(leaf), endpoint=True).astype(dtype)
        else:
            drawn = rng.uniform(low, high, np.shape(leaf)).astype(dtype)
        return jnp.asarray(drawn) if isinstance(leaf, jax.Array) else drawn  # a JAX array has `.at`, numpy's not

    args, kwargs = jax.tree_util.tree_map(redraw, values)
    return tuple(args), dict(kwargs)


def _same_blocks(x: np.ndarray, axis: int, parts: int) -> bool:
    """Whether `x` cut into `parts` equal blocks along `axis` is one block repeated."""
    if axis >= x.ndim or parts < 2 or x.shape[axis] % parts:
        return False
    blocks = np.split(x, parts, axis=axis)
    return all(np.array_equal(blocks[0], b) for b in blocks[1:])


_UNSET: Any = object()
_MESH: Any = object()  # the reference of a program whose values depend on its mesh: none


def _as_vmap(fun: Callable[..., Any], in_axes: Any, out_axes: Any, axis_name: Any, static: tuple[int, ...]) -> Any:
    """`vmap` of `fun` with a pmap's options: what the pmap means, batch for devices. Its
    static arguments are passed whole (vmap has no static arguments: they are bound)."""

    def mapped(*args: Any, **kwargs: Any) -> Any:
        fixed = {i: args[i] for i in static if 0 <= i < len(args)}
        dynamic = [a for i, a in enumerate(args) if i not in fixed]
        axes = in_axes
        if isinstance(in_axes, tuple | list) and len(in_axes) == len(args):
            axes = tuple(a for i, a in enumerate(in_axes) if i not in fixed)

        def per_example(*dyn: Any, **kw: Any) -> Any:
            it = iter(dyn)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            return fun(*full, **kw)

        return jax.vmap(per_example, in_axes=axes, out_axes=out_axes, axis_name=axis_name)(*dynamic, **kwargs)

    return mapped


def _one_device(model: ShardModel, fun: Callable[..., Any]) -> Callable[..., Any]:
    """The shard_map of `fun` on a one-device mesh of the same axis names: every mesh axis
    has size 1, so each argument's block is the whole array and every output's is the
    whole output, whatever the specs say. Written as nested vmaps of size 1 that bind the
    mesh's axis names (a collective over them answers as over one device) around the body
    on the whole arrays: no mesh to set, so it runs inside a trace JAX is making too."""
    o = model.options
    names = tuple(o.mesh.names) if o.mesh is not None else tuple(sorted(o.axis_names))
    if not names:
        raise _NotChecked("no mesh to shrink")

    def whole(*args: Any, **kwargs: Any) -> Any:
        body: Callable[..., Any] = lambda a, k: fun(*a, **k)  # noqa: E731
        for name in reversed(names):
            body = jax.vmap(body, in_axes=None, axis_size=1, axis_name=name)
        out = body(args, kwargs)
        return jax.tree_util.tree_map(lambda x: x.reshape(x.shape[len(names) :]), out)

    return whole


_MESH_DEPENDENT = frozenset(
    {"axis_index", "ppermute", "all_gather", "all_gather_invariant", "psum_scatter", "reduce_scatter", "all_to_all"}
)
"""Collectives whose values depend on the mesh's size or a device's place in it."""

_TILED = frozenset({"all_gather", "all_gather_invariant", "psum_scatter", "reduce_scatter"})
"""Of those, the ones that, tiled over whole groups, compute on one device what the whole
program means: a gather of the one block, or a sum of it, is the block itself, and the
blocks assembled along the tiled dim are the whole (a tensor-parallel layer's
`psum_scatter(x @ w, tiled=True)`, an FSDP weight's tiled `all_gather`). Untiled, they
add or drop an axis of the mesh's size."""


def _mesh_dependent(eqn: Any) -> bool:
    name, params = eqn.primitive.name, eqn.params
    if name in _TILED:
        return not params.get("tiled", False) or params.get("axis_index_groups") is not None
    return name in _MESH_DEPENDENT


def _uses_the_mesh(model: ShardModel, fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the body calls a collective of `_MESH_DEPENDENT`, read from one abstract
    trace of it on the whole arrays with the mesh's names bound (a vmap would rewrite the
    collectives it batches). A body that cannot even be traced so depends on its mesh."""
    o = model.options
    names = tuple(o.mesh.names) if o.mesh is not None else tuple(sorted(o.axis_names))
    try:
        closed = jax.make_jaxpr(lambda a, k: fun(*a, **k), axis_env=[(n, 1) for n in names])(args, kwargs)
    except Exception:
        return True
    pending = [closed.jaxpr]
    while pending:
        for eqn in pending.pop().eqns:
            if _mesh_dependent(eqn):
                return True
            pending += [sub for value in eqn.params.values() for sub in sub_jaxprs(value)]
    return False


def _same_along(value: Any, axis: int) -> bool:
    """Whether every slice of `value` along `axis` equals the first (typed keys compared
    by their key data, which has a trailing dim of its own)."""
    ndim = np.ndim(value)
    if ndim == 0 or np.shape(value)[axis] < 2:
        return False
    array = _comparable(value)
    moved = np.moveaxis(array, axis % ndim, 0)
    try:
        return all(np.array_equal(moved[0], moved[k], equal_nan=True) for k in range(1, moved.shape[0]))
    except TypeError:  # values that do not compare: say nothing
        return False


def _comparable(value: Any) -> np.ndarray:
    """`value` as a NumPy array; a typed key as its key data (computed now, also inside a
    trace JAX is making: a raw `uint32` key is data already)."""
    if not jnp.issubdtype(getattr(value, "dtype", np.float32), jax.dtypes.prng_key):
        return np.asarray(value)
    with jax.ensure_compile_time_eval():
        return np.asarray(jax.random.key_data(value))


def _is_shape(x: Any) -> bool:
    """Whether `x` is a shape (a tuple of ints), a leaf where shapes are compared."""
    return isinstance(x, tuple) and all(type(d) is int for d in x)


def _difference(got: Any, want: Any, what: str, shapes_only: bool = False) -> str | None:
    """None where `got` equals `want` (structure, shapes and values, up to float
    rounding; with `shapes_only`, `got` and `want` hold shapes), else how they differ."""
    is_shape = _is_shape if shapes_only else None
    got_def: Any
    got_leaves, got_def = jax.tree_util.tree_flatten(got, is_leaf=is_shape)
    want_leaves, want_def = jax.tree_util.tree_flatten(want, is_leaf=is_shape)
    if got_def != want_def:
        return f"its output is {got_def}, where {what} gives {want_def}"
    if shapes_only:
        return next(
            (
                f"its output has shape {tuple(g)}, where {what} gives {tuple(w)}"
                for g, w in zip(got_leaves, want_leaves, strict=True)
                if tuple(g) != tuple(w)
            ),
            None,
        )
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"its output has shape {g.shape}, where {what} gives {w.shape}"
        try:
            close = np.allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)
        except TypeError:
            close = bool(np.array_equal(g, w))
        if not close:
            diff = np.max(np.abs(g.astype(np.float64) - w.astype(np.float64))) if g.size else 0.0
            return f"it computes other values than {what} (they differ by up to {diff:.3g})"
    return None
