"""Checks that ride JAX's own trace of the user's function.

Where JAX may answer a call silently and wrongly (see `Predictor.check_call`), only a trace
of the function tells whether it does: which outputs a pmap's `out_axes=None` would take
from device 0 alone. Tracing the function for that before JAX traces it again would run
the user's Python twice where JAX runs it once (Equinox's `filter_pmap` tests count).

So the function JAX's transform is given is a `Recorder` of the user's function. While a
checked call is being watched (`Watch.run`), the recorder, called by JAX inside its trace,
records the function once (a closed jaxpr, at the very values JAX traces it with, kept in
the predictor's `Records`) and hands JAX the record's outputs; once JAX has answered, the
engine answers the call from the records (`RECORDED`: the trace model replays a record
instead of running the function). Where JAX answers from its cache, an earlier record of
the same abstract values answers the check. Otherwise, and whenever no check is due, the
recorder is the user's function, called straight.

pmap caches its traces and traces every array argument, so its records, keyed by the
arguments' abstract values, are kept by the predictor for the calls JAX answers from its
cache. vmap traces the function at every call and passes unmapped arrays as they are (a
function may branch on their values), so a vmap record serves its own call only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

import jax
from jax.core import Tracer

from .._core._errors import FunctionError
from .._core._jax_compat import JitsKept, is_literal, literal_array, name_trace
from ._trace import RECORDED, Records, Replay, recorded_first, substituting


class Checker(Protocol):
    """What a watch asks of the predictor whose check it carries (`Predictor`, which
    makes the watches: this module is below it)."""

    records: Records

    def label(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...

    def checked_answer(self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: tuple[list[Any], Any]) -> Any: ...


class Recorder:
    """The user's function as JAX's transform holds it: called straight, except inside a
    watched call's trace (see the module's docstring). Two recorders of one function are
    equal, so JAX's caches keyed on the function still hit when a transform of it is made
    again (`ax.pmap(f)(x)` inline in a loop traces once, as `jax.pmap(f)(x)` does)."""

    # Its own fields in slots, out of the instance dict: JAX's transform copies that dict
    # (the user's function's attributes, through `functools.update_wrapper`) onto the
    # function it returns, and a function wrapping that one copies them again; a field
    # there would be read by the next recorder as its own.
    __slots__ = ("__dict__", "__weakref__", "caches_traces", "fun", "kind")

    def __init__(self, fun: Callable[..., Any], kind: str, caches_traces: bool) -> None:
        self.fun = fun
        self.kind = kind  # the transform's name, as JAX's messages about its trace say it
        # Whether JAX's transform answers calls from its cache of traces (pmap): records are
        # then kept for later calls; otherwise (vmap) each call's record serves that call.
        self.caches_traces = caches_traces
        _wraps(self, fun)  # JAX names, and reads the parameters of, the user's function

    def __eq__(self, other: object) -> bool:
        return type(other) is Recorder and other.fun is self.fun

    def __hash__(self) -> int:
        return hash((Recorder, id(self.fun)))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        watch = WATCHING.get()
        if watch is None or watch.recorder is not self or watch.recorded:
            # A check asking a transform around this one (shard_map's trace of the nest)
            # takes the function from the records JAX's trace made, as the check's own trace does.
            return recorded_first(self.fun)(*args, **kwargs)
        return watch.record(self, args, kwargs)


def _wraps(wrapper: Recorder, fun: Callable[..., Any]) -> None:
    """`functools.update_wrapper`, where reading one of the function's attributes may fail
    (an object whose `__dict__` is a property that raises): as JAX's own `wraps`, what
    cannot be read is left out."""
    for name in functools.WRAPPER_ASSIGNMENTS:
        try:
            setattr(wrapper, name, getattr(fun, name))
        except Exception:  # noqa: S112 - an attribute the function does not give
            continue
    try:
        wrapper.__dict__.update(fun.__dict__)
    except Exception:  # noqa: S110 - its __dict__ cannot be read: nothing to copy
        pass
    wrapper.__wrapped__ = fun  # type: ignore[attr-defined]


class Watch:
    """One checked call whose check rides JAX's trace of it: the predictor, the call as
    the user made it, and whether JAX traced (and the recorder recorded) the function."""

    def __init__(
        self,
        recorder: Recorder | None,
        predictor: Checker,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        flat: tuple[list[Any], Any] | None,
        caches_traces: bool,
        draws_key: Hashable | None = None,
    ) -> None:
        self.recorder = recorder  # None: the function is an axischeck transform, whose watch records for this one
        self.predictor = predictor
        self.call = (args, kwargs, flat)  # flat None: only the draws are checked (no `check`)
        self.recorded = False
        # The record of this very call's trace, and the flat arguments as JAX handed them to
        # the function (tracers, and the unmapped arrays a vmap passes as they are): what
        # the check of the draws reads (see `_engine._randomness`).
        self.replay: Replay | None = None
        self.seen: list[Any] = []
        self.draws_key = draws_key  # the key its draws are checked under, once JAX has answered
        # Where JAX's transform answers a call from its cache of traces (pmap, around the
        # user's function or around another checked transform), the records are kept for
        # the calls JAX answers without tracing; otherwise each call's serve that call.
        self.records = predictor.records if caches_traces else Records()
        self.enclosing: Watch | None = None  # the watch of a transform around this one's, collecting its records

    def run(self, jax_fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """JAX's transform called with the watch on: JAX's answer, the function recorded
        if JAX traced it; `check` next."""
        if collecting():
            self.enclosing = WATCHING.get()
        with _watching(self):
            return jax_fn(*args, **kwargs)

    def record(self, recorder: Recorder, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Inside JAX's trace: the function recorded once at JAX's tracers (kept in the
        watch's `records`), its outputs handed to JAX. The function's own failure is
        JAX's to report, from this trace."""
        self.recorded = True
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
        dyn = tuple(i for i, leaf in enumerate(leaves) if isinstance(leaf, Tracer))
        fun = recorder.fun
        traced = [leaves[i] for i in dyn]
        if not dyn and self.call[2] is None:  # nothing traced, so nothing varies: no draws to check
            return fun(*args, **kwargs)
        substituted = substituting(recorded_first(fun), treedef, leaves, dyn)
        returned: list[Any] = []

        def keeping(*values: Any) -> Any:  # what the function itself returns, for the outputs no tracer carries
            out = substituted(*values)
            returned[:] = jax.tree_util.tree_leaves(out)
            return out

        # Replayed in JAX's trace, the record computes what JAX would: its jits are kept
        # as the calls JAX runs or stages (see `JitsKept`).
        recorded = JitsKept(keeping)
        labels = [leaf.label for leaf in self.predictor.label(args, kwargs).flat()[0]]
        if len(labels) == len(leaves):
            name_trace(recorded, fun, [labels[i] for i in dyn], traced_for=recorder.kind)
        try:
            made = recorded.record(*traced)
        except Exception:
            # The function fails. Recorded, it may fail otherwise than in JAX's own
            # evaluation (which runs the transform's rules op by op): JAX's is the error
            # the user must see, so the function runs as JAX would run it.
            return fun(*args, **kwargs)
        if made is None:  # a record that could not keep its jits: JAX runs the function itself
            return fun(*args, **kwargs)
        closed, out = made
        replay = Replay(closed, jax.tree_util.tree_structure(out), dyn)
        self.replay, self.seen = replay, leaves
        self.records.keep(fun, args, kwargs, replay)
        around = self.enclosing
        while around is not None:  # the same function at the same values, for each check of the nest
            around.records.keep(fun, args, kwargs, replay)
            around = around.enclosing
        return _as_returned(replay, traced, returned)

    def check(self) -> None:
        """The engine's answer for the call (among it, JAX's answer to the silent question),
        from JAX's records of the function (this call's trace, or an earlier one JAX's
        cache answered from). The function's own failure is JAX's to raise; where the
        records cannot answer, the function itself is traced, as without a watch. Raises
        axischeck's error for a call it refuses."""
        args, kwargs, flat = self.call
        if flat is None:
            return  # a watch of the draws alone
        for records in (self.records, None):
            token = RECORDED.set(records)
            try:
                self.predictor.checked_answer(args, kwargs, flat)
            except FunctionError:
                continue
            finally:
                RECORDED.reset(token)
            return


def _as_returned(replay: Replay, traced: list[Any], returned: list[Any]) -> Any:
    """The record's outputs at JAX's tracers, as the function returns them: an output the
    record holds as a constant (a Python scalar returned, a value computed from constants
    alone) is what the function returned where that was no tracer, else a JAX array of
    the constant, as JAX's own evaluation of the function gives it."""
    outs = replay.flat_traced(*traced)
    outvars = getattr(replay.closed, "jaxpr", replay.closed).outvars
    for j, var in enumerate(outvars):
        if is_literal(var):
            value = returned[j] if j < len(returned) else None
            outs[j] = value if value is not None and not isinstance(value, Tracer) else literal_array(var)
    return jax.tree_util.tree_unflatten(replay.out_tree, outs)


WATCHING: ContextVar[Watch | None] = ContextVar("axischeck_watching", default=None)
"""The checked call whose check rides the trace JAX is making, if any."""


def records_wanted() -> bool:
    """Whether a transform called now should have JAX trace its function through a
    recorder: a transform around it collects the records (`collecting`), or a check is
    answering from them (`RECORDED`), which the recorder then asks in place of the function."""
    return collecting() or RECORDED.get() is not None


def collecting() -> bool:
    """Whether an axischeck transform around the one being called collects the records of
    the user's function for its own check (see `Watch`): the inner transform records it
    even where it has no check of its own due."""
    around = WATCHING.get()
    return around is not None and around.recorder is None


@contextmanager
def _watching(watch: Watch) -> Iterator[None]:
    token = WATCHING.set(watch)
    try:
        yield
    finally:
        WATCHING.reset(token)
