"""A checked call's pieces after JAX has answered, which `Transformed.__call__` puts
together: the check that rode JAX's trace, the account of a failure (JAX's exception
kept: its type, and its message as the last line), and the output against the
prediction. Each takes what it needs (the predictor, the transform's name) as arguments.
"""

from __future__ import annotations

from typing import Any

import jax

from ._advice import advise
from ._core._errors import AxisCheckError, FunctionError, OutputError, with_jax_error
from ._core._html import ERROR_VIEW
from ._core._jax_compat import committed_sharding_refused, unbound_axis_name
from ._core._keys import arrays_by_position
from ._core._leaves import flatten_call, shape_of
from ._core._prediction import Prediction
from ._core._steps import BaseStep
from ._core._text import format_shape
from ._core._trees import leaf_paths
from ._engine._in_trace import Watch
from ._engine._levels import MapLevel, resolve_in_axes
from ._engine._models import MapModel
from ._engine._predictor import ASKING_JAX, Predictor


def refuse_unflattenable(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A call with nothing to check before JAX runs may still hold a cyclic or too deep
    argument, which JAX's own flatten must not meet (it recurses until the interpreter
    cannot): refused as an `ArgumentError`. Arrays by position need no look."""
    if not arrays_by_position(args, kwargs):
        flatten_call(args, kwargs)


def raised_inside(inner: AxisCheckError, outer: str, axis_name: Any) -> None:
    """Notes on an error an inner transform raised, from the transform it was raised
    inside (`outer`, as messages name it): where it sits (what this one passed whole
    reaches the inner one unsplit), and, for a collective over a name nothing binds
    where this transform binds none, that the name may be this one's to bind (a
    library's map inside the user's, such as Equinox's `BatchNorm`, expects it there).
    `axis_name`: the name this transform binds, None for none (False for a transform that
    binds names otherwise: a shard_map's mesh axes)."""
    inner.add_note(f"axischeck: raised inside {outer}")
    name = unbound_axis_name(inner.__cause__ or inner)
    if name is not None and axis_name is None:
        inner.add_note(
            f"  Hint: {outer} binds no axis name: if the collective over {name!r} is meant over its map, give"
            f" it axis_name={name!r}"
        )


def checks_after(watch: Watch, predictor: Predictor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The check of a call JAX has run (see `Predictor.check_call`): axischeck's error,
    with the advice, for a call it refuses (JAX accepted it)."""
    try:
        watch.check()
    except AxisCheckError as err:
        raise advise(predictor, err, args, kwargs) from err.__cause__


def diagnosis(
    predictor: Predictor, name: str, err: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> AxisCheckError | None:
    """After JAX failed: our account of it (JAX's message kept), or None to let JAX's
    exception through untouched, with a note when the function itself fails per example.
    A failure the engine can name the cause and fix of (a collective over a name nothing
    binds, whose JAX message misleads; a carry whose vma type changes) is raised as ours."""
    if checking_leaks() or ASKING_JAX.get():  # the function must not run again: leaks checked, or JAX asked
        return None
    ours = predictor.diagnose(args, kwargs)
    if ours is None:
        if committed_sharding_refused(err):
            err.add_note(_split_whole_note(predictor, name, args, kwargs))
        return None
    if not isinstance(ours, FunctionError):
        return with_jax_error(advise(predictor, ours, args, kwargs), err)
    if unbound_axis_name(ours.__cause__ or err) is not None:
        # JAX's message sends the user to shard_map; ours names the axis and binds it.
        return with_jax_error(advise(predictor, ours, args, kwargs), err)
    if ours.hint is not None:
        return with_jax_error(ours, err)  # a failure the engine understands (a carry's vma type)
    # The real cause, where the call shows it (a list as an array), or a fix its facts point to.
    advised = advise(predictor, ours, args, kwargs)
    if advised.hint is not None or advised.fix is not None:
        return with_jax_error(advised, err)
    notes = getattr(err, "__notes__", None)
    if isinstance(notes, list):  # an inner axischeck transform's note gives way to this one
        notes[:] = [n for n in notes if not (isinstance(n, str) and n.startswith("axischeck: "))]
    err.add_note(_per_example_note(advised, name))  # with what any change the search found alters ("Runs, but")
    return None


def _split_whole_note(predictor: Predictor, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The note JAX's refusal of a committed sharding gets from a pmap: the arguments split
    over the devices already (another pmap's outputs are, along the axis its out_axes
    gives) along another axis than this pmap asks for: in_axes None asks for them whole
    on every device, and an int for slices along that axis."""
    plain = f"axischeck: {name}: an argument is committed to another sharding than the transform asks for"
    model = predictor.models.model
    if not isinstance(model, MapModel) or model.level.kind != "pmap":
        return plain
    call = predictor.label(args, kwargs)
    leaves, _ = call.flat()
    axes = resolve_in_axes(model.level, call, ())
    mapped = {leaf.shape[a] for leaf, a in zip(leaves, axes, strict=True) if a is not None and leaf.shape}
    # The positional arguments' leaves come first; keyword arguments, always mapped, after.
    roots = [
        label for label, arg in zip(call.arg_labels, call.args, strict=True) for _ in jax.tree_util.tree_leaves(arg)
    ]
    lines = [f"axischeck: {name}: JAX does not move an array split over the devices to another axis or device"]
    hints = []
    for root, leaf, axis in zip(roots, leaves, axes, strict=False):
        if leaf.shape is None or not _split_over_devices(leaf.value):
            continue
        devices = len(leaf.value.sharding.device_set)
        dim = _split_dim(leaf.value.sharding)
        if axis is not None and (dim is None or dim == axis % len(leaf.shape)):
            continue  # split as this pmap maps it: another device count, which JAX words itself
        along = f" along axis {dim}" if dim is not None else ""
        returned = f"a pmap's outputs are with out_axes={dim}" if dim is not None else "a pmap's outputs are"
        lines.append(
            f"  {leaf.label} (in_axes {axis}, shape {format_shape(leaf.shape)}) is split over {devices} devices"
            f"{along}, as {returned}"
        )
        entry = "its in_axes entry" if root == leaf.label else f"the in_axes entry for {root} at its place"
        if axis is not None and dim is not None and leaf.shape[dim] == devices and _fits(model.level, devices):
            hints.append(f"map {leaf.label} along axis {dim}, the axis it is split along ({entry} {dim})")
        elif axis is None and dim is not None and {leaf.shape[dim]} == mapped:
            hints.append(f"map {leaf.label} ({entry} {dim}) where each device is to get its own slice")
    if any(axis is None for axis in axes):
        hints.append(
            "where every slice is the same value (a pmean'd update), return it from the pmap that makes it with"
            " out_axes=None, or pass one copy"
        )
    if len(lines) == 1:  # no argument this pmap gets split otherwise: JAX's words stand
        return plain
    if hints:
        lines.append(f"  Hint: {'; '.join(hints)}")
    return "\n".join(lines)


def _fits(level: MapLevel, size: int) -> bool:
    """Whether a pmap's devices (all of them, or those its `devices=` lists) can map `size`."""
    return level.devices is None or size <= level.devices


def _split_over_devices(value: Any) -> bool:
    sharding = getattr(value, "sharding", None)
    return isinstance(value, jax.Array) and sharding is not None and not sharding.is_fully_replicated


def _split_dim(sharding: Any) -> int | None:
    """The dim a sharding splits (its spec's first entry that names a mesh axis), if one."""
    spec = getattr(sharding, "spec", None)
    entries = list(spec) if spec is not None else []
    return next((d for d, entry in enumerate(entries) if entry is not None), None)


def _per_example_note(ours: AxisCheckError, name: str) -> str:
    """The note JAX's own exception gets when the function itself fails: where (per
    example or per device), the blame when JAX's message names two sizes, the table (of
    the whole nest, where transforms are nested)."""
    unit = "per device" if "per-device" in ours.problem else "per example"
    head = f"axischeck: {ours.transform or name}: the failure happens {unit}"
    disagreement = ours.disagreement()
    lines = [f"{head}: {disagreement}" if disagreement else f"{head}:"]
    lines += ["  " + row for row in (ours.table or "").splitlines()]
    lines += ["  " + note for note in ours.notes]
    lines += [f"  Hint: {ours.hint}"] if ours.hint else []
    return "\n".join(lines)


def verify_output(
    predictor: Predictor, name: str, out: Any, pred: Prediction, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """A declared signature that lies is reported: the leaf, declared vs actual."""
    got_leaves, got_def = jax.tree_util.tree_flatten(out)
    want_leaves, want_def = pred.flat
    if got_def != want_def:
        raise OutputError(
            f"the function returned an output of structure {got_def}, but its signature declares {want_def}",
            transform=name,
        )
    if all(getattr(g, "shape", None) == w for g, w in zip(got_leaves, want_leaves, strict=True)):
        return  # the common case: it runs on every eager call
    pred = predictor.derive(args, kwargs)  # the derivation, for the message
    base = next((s for s in pred.steps if isinstance(s, BaseStep)), None)
    specs = {r.label: r.spec for r in base.outs} if base is not None else {}
    for label, got, want in zip(leaf_paths(out), got_leaves, want_leaves, strict=True):
        shape = shape_of(got)
        if shape != want:
            leaf = "output" + label
            declared = f" (declared {specs[leaf]})" if specs.get(leaf) else ""
            raise OutputError(
                f"the function's output contradicts its signature: {leaf} has shape"
                f" {format_shape(shape) if shape is not None else type(got).__name__}, but"
                f" the signature predicts {format_shape(want)}{declared}",
                transform=name,
                table=str(pred),
                steps=pred.steps,
                view=ERROR_VIEW,
            )


def checking_leaks() -> bool:
    """Whether JAX checks for leaked tracers (the function must then run as JAX runs it, once)."""
    return bool(getattr(jax.config, "jax_check_tracer_leaks", False))
