"""The models of one transform of one function: what predicts a call, what diagnoses a
failure, what a wrapping transform maps, and what a checked call needs to know of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .._core._errors import AxisCheckWarning, SpecError, warn_at_user
from ._function import Nestable, annotates_itself, declared_core, fn_name
from ._levels import MapLevel
from ._models import MapModel, Model, SignatureModel, TraceModel, chain, inputs_only, is_symbolic, model_symbols
from ._shard_model import ShardModel, ShardOptions
from ._signature import Signature, fresh_symbol


class Models:
    """The models of one transform: what predicts, what diagnoses failures, what a
    wrapping transform sees, and what the checked call needs to know of them (read in
    one walk of the nest: they are made for every new function)."""

    __slots__ = (
        "_input_model",
        "batched_signature",
        "declares_inputs",
        "fallback",
        "model",
        "reads_context_mesh",
        "signature",
        "symbolic",
        "trace_checks",
    )

    def __init__(
        self,
        model: Model,
        fallback: Model | None,
        signature: Signature | None,
        batched_signature: Signature | None,
    ) -> None:
        self.model = model
        self.fallback = fallback
        self.signature = signature
        self.batched_signature = batched_signature
        *outer, innermost = chain(model)
        self.declares_inputs = isinstance(innermost, SignatureModel)
        self.symbolic = is_symbolic(innermost)
        # Where JAX may answer silently and wrongly, a call is checked by a trace first: a
        # collective over a vmap axis (docs/jax-semantics.md#where-jax-answers-silently),
        # a pmap's out_axes=None (device 0's block). pmap checks its collectives itself,
        # and shard_map rejects its own mistakes (at trace or lowering, where a failed call
        # is diagnosed), so they cost no trace of ours: JAX's trace counts stay JAX's.
        self.trace_checks = any(isinstance(m, MapModel) and _answers_silently(m.level) for m in outer)
        self.reads_context_mesh = any(isinstance(m, ShardModel) and m.options.jax_mesh is not None for m in outer)
        self._input_model: Model | None = None

    @property
    def input_model(self) -> Model | None:
        """The model checking the signature's inputs only (no outputs, no trace), if any."""
        if self._input_model is None and self.declares_inputs:
            self._input_model = inputs_only(self.model)
        return self._input_model


def _answers_silently(level: MapLevel) -> bool:
    """Whether JAX may answer a call of this level silently and wrongly, where only a
    trace of the function tells: a vmap binding an axis name (collectives whose vmap rule
    does not check), a pmap with out_axes None (which output varies over the devices) or
    with a negative axis (JAX's pmap shards axis 0 and squeezes or inserts the negative
    axis: docs/jax-semantics.md#pmap)."""
    if level.kind == "pmap":
        axes = (*level.in_axes.leaves, *level.out_axes.leaves)
        return None in level.out_axes.leaves or any(a is not None and a < 0 for a in axes)
    return level.axis_name is not None


Build = Callable[[Callable[..., Any], Callable[..., Any]], Models]
"""Makes the models from the function and a caller of it that holds it weakly. It depends
on the options alone (it is shared by every function with the same options): what it
needs of the function (its name, its parameters) it reads from the function it is given."""


def inner_model(
    fun: Callable[..., Any], held: Callable[..., Any], signature: Any, name: str
) -> tuple[Model, Signature | None, Model | None]:
    """The per-example model for `fun`: declared signature, annotations, or trace.

    `held` calls `fun` (through a weak reference) for the models that trace it.
    Returns (model, its per-example signature, a trace-based model for diagnosis).
    """
    from .._core._annotations import core_from_annotations

    if isinstance(fun, Nestable) and not fun.defers_to_jax and signature is None:
        nested = fun.models  # what the wrapped transform returns
        return nested.model, nested.batched_signature, None
    if signature is not None:
        core = declared_core(fun, signature, name)
        return SignatureModel(core, held, name), Signature._make(core), TraceModel(held, name)
    try:
        core_a = core_from_annotations(fun) if annotates_itself(fun) else None
    except SpecError as err:  # JAX runs this function: an annotation axischeck cannot read must not stop it
        warn_at_user(
            AxisCheckWarning(f"{err.problem}; {name} is traced instead (hint: {err.hint})" if err.hint else err.problem)
        )
        core_a = None
    if core_a is not None:
        return SignatureModel(core_a, held, name), Signature._make(core_a), TraceModel(held, name)
    return TraceModel(held, name), None, None


def mapped_models(
    fun: Callable[..., Any],
    held: Callable[..., Any],
    signature: Any,
    options: MapLevel,
) -> Models:
    """The models of a one-level transform (vmap, pmap) of `fun`: `options` is the level
    its options make, named here after the function, its batch symbol one the
    per-example signature does not use."""
    name = fn_name(fun)
    inner, per_example, fallback_inner = inner_model(fun, held, signature, name)
    taken = (per_example.symbols if per_example is not None else frozenset()) | model_symbols(inner)
    level = replace(options, fn_name=name, symbol=fresh_symbol(taken, options.axis_name))
    fallback = MapModel(level, fallback_inner, held) if fallback_inner is not None else None
    batched = Signature._make(per_example.core, per_example.levels + (level,)) if per_example is not None else None
    return Models(MapModel(level, inner, held), fallback, per_example, batched)


def level_models(
    level: MapLevel | None, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None
) -> Models:
    """The models of a vmap or pmap of `fun` whose options were validated into `level`
    (None: options axischeck cannot model, answered by JAX)."""
    return jax_models(held) if level is None else mapped_models(fun, held, signature, level)


def shard_models(
    fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None, options: ShardOptions
) -> Models:
    """The models of a shard_map (or smap) of `fun`: `options` as validated, named here
    after the function (one validation serves every function with these options)."""
    options = replace(options, name=fn_name(fun))
    inner, per_device, fallback_inner = inner_model(fun, held, signature, options.name)
    fallback = ShardModel(options, fallback_inner, held) if fallback_inner is not None else None
    return Models(ShardModel(options, inner, held), fallback, per_device, None)


def jax_models(held: Callable[..., Any]) -> Models:
    """The models of a transform whose options axischeck cannot model: JAX answers."""
    return Models(TraceModel(held), None, None, None)
