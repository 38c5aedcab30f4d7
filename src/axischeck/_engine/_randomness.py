"""Whether a mapped function draws the same random numbers along its mapped axis.

A `jax.random` sampler draws from its key alone: where the key is the same on every
example (or device) of a map, so are the draws. That is the commonest silent axis bug: a
key passed with `in_axes=None`, closed over, replicated by a `P()` spec, or held by an
NNX module broadcast with its RNG state, feeds noise that every member of the map shares,
and nothing fails (docs/jax-semantics.md#random-keys-under-a-map).

This module reads one recorded trace of the function (the closed jaxpr JAX's own trace of
the call produced, see `_in_trace`) and says, for every sampler, along which of the map's
axes its key varies; a sampler whose draws reach an output that varies along an axis its
key does not is reported. Draws that reach only outputs that do not vary (common random
numbers, a noise shared on purpose) are not. Nothing here runs the user's Python.

Variation is of values, not of shard_map's types: a `pvary` changes a type and no value,
a `psum` makes its result the same on every member of its axes, `axis_index` differs on
each, so `fold_in(key, axis_index(name))` varies as a split key does.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .._core._jax_compat import (
    AXIS_INDEX_PRIMITIVE,
    SAME_ALONG_AXES,
    SAMPLER_PRIMITIVE,
    SPREAD_ALONG_AXES,
    TYPE_CASTS,
    collective_axes,
    equations,
    frames_of,
    is_literal,
    jax_internal,
    random_function,
    scan_layout,
    sub_jaxprs,
)
from ._trace import called_jaxpr

Axes = frozenset[Hashable]
"""The axes of the map a value may differ along: a named axis by its name, an unnamed
vmap's by a token of its own (`MAPPED`)."""

Source = tuple[str, int]
"""An input of the recorded jaxpr: `("arg", k)` its k-th input, `("const", k)` its k-th
constant (a value the function closed over, or an unmapped array JAX handed it as is)."""

Path = tuple[int, ...]
"""Where an equation is: its index in the top-level jaxpr, then in each jaxpr inside."""

Trail = tuple[tuple[int, Any], ...]
"""The equations a jaxpr being read is inside, outermost first, each with its index (a
branch's or loop part's index for the equation holding several jaxprs)."""

MAPPED = "<the mapped axis>"
"""The axis of a vmap or pmap without an axis name."""


class _Fact(NamedTuple):
    """What is known of one value: the axes it varies along, the samplers whose draws it
    is computed from, the inputs it is computed from, and the samplers whose draws reach
    it through a collective that makes them the same along its axes (a psum)."""

    varies: Axes
    draws: frozenset[Path]
    sources: frozenset[Source]
    reduced: frozenset[Path] = frozenset()


_NOTHING = _Fact(frozenset(), frozenset(), frozenset())


@dataclass(frozen=True, slots=True)
class Sampler:
    """One call of a `jax.random` sampler in the recorded function.

    `name`: the sampler as the user called it (`"jax.random.normal"`; the primitive's
    name where the traceback does not say); `caller`: the code that called it, as
    `"file.py:12 (function)"`, if known; `key_varies`: the axes its key varies along;
    `key_sources`: the inputs its key is computed from (none: a key made inside the
    function from constants, such as `jax.random.key(0)`)."""

    path: Path
    name: str
    caller: str | None
    key_varies: Axes
    key_sources: frozenset[Source]


@dataclass(frozen=True, slots=True)
class SharedDraws:
    """A sampler whose draws reach outputs that vary along axes its key does not: along
    `axes`, every member of the map draws the same numbers. `outputs`: the flat outputs
    (indices) they reach."""

    sampler: Sampler
    axes: Axes
    outputs: tuple[int, ...]


def shared_draws(
    closed: Any,
    varying: Sequence[Axes],
    axes: Axes,
    varying_consts: Mapping[int, Axes] | None = None,
    declared_same: frozenset[int] = frozenset(),
) -> tuple[SharedDraws, ...]:
    """The samplers of `closed` (a closed jaxpr) whose draws are the same along some of
    `axes` (the map's) while reaching an output that varies along them. `varying[k]`: the
    axes the k-th input varies along; its constants vary along none, but for those in
    `varying_consts` (a remedy asked about: a closed-over key made to vary). A sampler
    whose draws reach an output in `declared_same` (one the map's options declare the
    same along it: out_axes None, a parameter initialised once for the batch) as they
    are, not through a psum of them, is shared on purpose, and not reported."""
    read = _read(closed, varying, varying_consts or {})
    if read is None:
        return ()
    reading, outs = read
    found: dict[Path, tuple[Axes, list[int]]] = {}
    meant = {path for j in declared_same if j < len(outs) for path in outs[j].draws - outs[j].reduced}
    for j, out in enumerate(outs):
        for path in sorted(out.draws - meant):
            sampler = reading.samplers[path]
            lacking = (out.varies & axes) - sampler.key_varies
            if lacking:
                shared, reached = found.setdefault(path, (frozenset(), []))
                found[path] = (shared | lacking, [*reached, j])
    return tuple(
        SharedDraws(reading.samplers[path], shared, tuple(reached)) for path, (shared, reached) in found.items()
    )


def samplers(closed: Any, varying: Sequence[Axes]) -> tuple[Sampler, ...]:
    """Every sampler of `closed` (a closed jaxpr) with the axes its key varies along,
    where the k-th input varies along `varying[k]` and its constants along none."""
    read = _read(closed, varying, {})
    return tuple(read[0].samplers.values()) if read is not None else ()


def _read(
    closed: Any, varying: Sequence[Axes], varying_consts: Mapping[int, Axes]
) -> tuple[_Reading, list[_Fact]] | None:
    """One reading of `closed` and the facts of its outputs (None: it draws nothing)."""
    jaxpr = getattr(closed, "jaxpr", closed)
    reading = _Reading()
    if not reading.draws(jaxpr):
        return None
    consts = [
        _Fact(frozenset(varying_consts.get(k, ())), frozenset(), frozenset({("const", k)}))
        for k in range(len(jaxpr.constvars))
    ]
    ins = [_Fact(frozenset(v), frozenset(), frozenset({("arg", k)})) for k, v in enumerate(varying)]
    return reading, reading.flow(jaxpr, consts + ins, (), constvars=True)


def wrapped_inputs(closed: Any) -> frozenset[int]:
    """The inputs of a recorded function that it makes keys of as they are (`random_wrap`
    of the input itself: raw `uint32` keys passed in)."""
    jaxpr = getattr(closed, "jaxpr", closed)
    return _wrapped(jaxpr, jaxpr.invars)


def wraps_handed_keys(closed: Any) -> bool:
    """Whether a recorded function makes keys of raw `uint32` keys as it was handed them: an
    input, or an array passed whole that the trace took as a constant."""
    jaxpr = getattr(closed, "jaxpr", closed)
    return bool(_wrapped(jaxpr, [*jaxpr.constvars, *jaxpr.invars]))


def _wrapped(jaxpr: Any, handed: Sequence[Any]) -> frozenset[int]:
    """The positions in `handed` (variables of `jaxpr`) that `jaxpr` makes keys of as they are."""
    position = {id(v): k for k, v in enumerate(handed)}
    return frozenset(
        position[id(eqn.invars[0])]
        for eqn in jaxpr.eqns
        if eqn.primitive.name == "random_wrap" and id(eqn.invars[0]) in position
    )


def draws_anything(jaxpr: Any) -> bool:
    """Whether a sampler is bound anywhere in `jaxpr`, closed or not (most mapped functions
    draw nothing: they cost one walk of their equations)."""
    return _Reading().draws(jaxpr)


class _Reading:
    """One reading of a recorded jaxpr: the samplers met, by where they are. A jaxpr that
    draws nothing (a jit of `jnp.where`, a transpose) is read once per distinct inputs:
    what it gives depends on those alone."""

    def __init__(self) -> None:
        self.samplers: dict[Path, Sampler] = {}
        self._draws: dict[int, bool] = {}  # id of a jaxpr (alive as long as the record) -> whether it draws
        self._read: dict[tuple[int, tuple[_Fact, ...]], list[_Fact]] = {}  # a jaxpr that draws nothing, read

    def draws(self, jaxpr: Any) -> bool:
        """Whether a sampler is bound anywhere in `jaxpr` (asked once per jaxpr)."""
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        found = self._draws.get(id(jaxpr))
        if found is None:
            found = any(
                eqn.primitive.name == SAMPLER_PRIMITIVE
                or any(self.draws(sub) for value in eqn.params.values() for sub in sub_jaxprs(value))
                for eqn in equations(jaxpr)
            )
            self._draws[id(jaxpr)] = found
        return found

    def flow(self, jaxpr: Any, ins: list[_Fact], trail: Trail, constvars: bool = False) -> list[_Fact]:
        """The facts of `jaxpr`'s outputs from its inputs' (`ins`: its constants' first
        where `constvars`; a closed sub-jaxpr's own constants vary along nothing).
        `trail`: the equations it is inside, outermost first, with their indices."""
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        if not constvars and not self.draws(jaxpr):
            key = (id(jaxpr), tuple(ins))
            read = self._read.get(key)
            if read is None:
                read = self._read[key] = self._flow(jaxpr, ins, trail, constvars)
            return read
        return self._flow(jaxpr, ins, trail, constvars)

    def _flow(self, jaxpr: Any, ins: list[_Fact], trail: Trail, constvars: bool) -> list[_Fact]:
        inputs = list(jaxpr.constvars) + list(jaxpr.invars) if constvars else list(jaxpr.invars)
        facts: dict[Any, _Fact] = dict(zip(inputs, ins, strict=True))

        def of(v: Any) -> _Fact:
            return _NOTHING if is_literal(v) else facts.get(v, _NOTHING)

        for k, eqn in enumerate(equations(jaxpr)):
            outs = self._equation(eqn, [of(v) for v in eqn.invars], (*trail, (k, eqn)))
            facts.update(zip(eqn.outvars, outs, strict=True))
        return [of(v) for v in jaxpr.outvars]

    def _equation(self, eqn: Any, ins: list[_Fact], trail: Trail) -> list[_Fact]:
        name, n_out = eqn.primitive.name, len(eqn.outvars)
        if name == SAMPLER_PRIMITIVE:
            key = _join(ins)
            path = tuple(k for k, _ in trail)
            self.samplers[path] = _sampler(path, [e for _, e in trail], key)
            return [key._replace(draws=key.draws | {path})] * n_out
        if name == AXIS_INDEX_PRIMITIVE:
            return [_Fact(frozenset(collective_axes(eqn.params)), frozenset(), frozenset())] * n_out
        if name in SAME_ALONG_AXES and n_out == len(ins):
            named = frozenset(collective_axes(eqn.params))
            return [fact._replace(varies=fact.varies - named, reduced=fact.reduced | fact.draws) for fact in ins]
        if name in SPREAD_ALONG_AXES:
            whole = _join(ins)
            return [whole._replace(varies=whole.varies | frozenset(collective_axes(eqn.params)))] * n_out
        if name in TYPE_CASTS and n_out == len(ins):
            return ins
        subs = [sub for value in eqn.params.values() for sub in sub_jaxprs(value)]
        if not subs:
            return [_join(ins)] * n_out
        if name == "cond" and all(len(getattr(s, "jaxpr", s).invars) == len(ins) - 1 for s in subs):
            branches = [self.flow(sub, ins[1:], (*trail, (b, eqn))) for b, sub in enumerate(subs)]
            return [_join([ins[0], *outs]) for outs in zip(*branches, strict=True)]
        if name == "while":
            return self._while(eqn, ins, trail)
        layout = scan_layout(eqn.params) if name == "scan" else None
        body = called_jaxpr(eqn, subs)
        if layout is not None and body is not None:
            return self._scan(body, ins, trail, *layout)
        if body is not None:
            return self.flow(body, ins, trail)
        whole = _join(ins)  # a jaxpr this reading does not follow: each output from every input
        for b, sub in enumerate(subs):  # its samplers are still met, their keys as varying as all its inputs
            inner = getattr(sub, "jaxpr", sub)
            self.flow(inner, [whole] * len(inner.invars), (*trail, (b, eqn)))
        return [whole] * n_out

    def _scan(self, body: Any, ins: list[_Fact], trail: Trail, consts: int, carries: int) -> list[_Fact]:
        """A scan's outputs: its body read again, each carry joined with what the body
        makes of it, until no carry changes."""
        ins = list(ins)
        while True:
            outs = self.flow(body, ins, trail)
            carried = [_join([ins[consts + k], outs[k]]) for k in range(carries)]
            if carried == ins[consts : consts + carries]:
                return outs
            ins[consts : consts + carries] = carried

    def _while(self, eqn: Any, ins: list[_Fact], trail: Trail) -> list[_Fact]:
        """A while loop's carries: the body read until they settle; a predicate that
        varies makes every carry vary with it (members stop at different steps)."""
        params = eqn.params
        n_cond, n_body = int(params.get("cond_nconsts", 0)), int(params.get("body_nconsts", 0))
        cond_consts, body_consts = ins[:n_cond], ins[n_cond : n_cond + n_body]
        carries = list(ins[n_cond + n_body :])
        while True:
            predicate = self.flow(params["cond_jaxpr"], cond_consts + carries, (*trail, (0, eqn)))[0]
            outs = self.flow(params["body_jaxpr"], body_consts + carries, (*trail, (1, eqn)))
            settled = [
                _join([c, o])._replace(varies=c.varies | o.varies | predicate.varies)
                for c, o in zip(carries, outs, strict=True)
            ]
            if settled == carries:
                return carries
            carries = settled


def _join(facts: Sequence[_Fact]) -> _Fact:
    if len(facts) == 1:
        return facts[0]
    varies: set[Hashable] = set()
    draws: set[Path] = set()
    sources: set[Source] = set()
    reduced: set[Path] = set()
    for fact in facts:
        varies |= fact.varies
        draws |= fact.draws
        sources |= fact.sources
        reduced |= fact.reduced
    return _Fact(frozenset(varies), frozenset(draws), frozenset(sources), frozenset(reduced))


def _sampler(path: Path, trail: list[Any], key: _Fact) -> Sampler:
    name, caller = _called_as(trail)
    return Sampler(path, name, caller, key.varies, key.sources)


def _called_as(trail: list[Any]) -> tuple[str, str | None]:
    """The `jax.random` function the user called and the code that called it, read from
    the tracebacks JAX kept: of the outermost equation on the way to the sampler whose
    traceback passes through `jax.random` (an inner jit's body may have been traced
    elsewhere, and cached)."""
    for eqn in trail:
        frames = frames_of(eqn)  # innermost first
        for k, (file_name, function, _line) in enumerate(frames):
            if not random_function(file_name):
                continue
            outer = frames[k + 1 :]
            if outer and random_function(outer[0][0]):
                continue  # a jax.random function called by another: the outer one is the user's
            caller = next(((f, fn, line) for f, fn, line in outer if not jax_internal(f)), None)
            where = None if caller is None else f"{_short(caller[0])}:{caller[2]} ({caller[1]})"
            return f"jax.random.{function.rsplit('.', 1)[-1]}", where
    return SAMPLER_PRIMITIVE, None


def _short(file_name: str) -> str:
    return file_name.replace("\\", "/").rsplit("/", 1)[-1]
