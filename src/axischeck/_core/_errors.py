"""The exception hierarchy. Every message is rendered from the facts it carries."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ._text import format_shape

if TYPE_CHECKING:  # not imported at run time: the linter reads errors without importing JAX
    from ._job import Job

Size = int | tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a size was seen: one axis (or a run of axes) of one argument or output.

    `arg` is the parameter name plus pytree path (`"params['W']"`), or `"output[0]"`.
    `batched_axis` counts in the array the user passed (`batched_shape`);
    `axis` counts in the per-example array (`shape`) that the signature describes.
    For a variadic dimension `axis` is the first axis of the run and `size` a tuple.

    ```python
    >>> conflict = ax.Signature("(a,b),(b,c)->(a,c)").unify((8, 4), (5, 2))
    >>> [place.describe() for place in conflict.places]
    ['axis 1 of args[0] (size 4)', 'axis 0 of args[1] (size 5)']
    ```
    """

    arg: str
    shape: tuple[int, ...] | None = None
    axis: int | None = None
    size: Size | None = None
    batched_shape: tuple[int, ...] | None = None
    batched_axis: int | None = None
    unit: str = "per-example"  # what `shape` is: one example, or one device's block

    def describe(self) -> str:
        """`axis 2 of x (size 4)`, naming the batched axis when it differs."""
        size = "" if self.size is None else f" (size {_size(self.size)})"
        if self.axis is None:
            return f"{self.arg}{size}"
        if self.unit != "per-example":  # a device's block: its sizes are not the global ones
            return f"axis {self.axis} of {self.arg}'s {self.unit} block {format_shape(self.shape or ())}{size}"
        if self.batched_axis is not None and self.batched_shape is not None and (self.batched_shape != self.shape):
            return (
                f"axis {self.batched_axis} of {self.arg}{size}"
                f" [per-example axis {self.axis} of {format_shape(self.shape or ())}]"
            )
        return f"axis {self.axis} of {self.arg}{size}"


def _size(size: Size) -> str:
    return format_shape(size) if isinstance(size, tuple) else str(size)


class HtmlView(Protocol):
    """Renders an error as HTML (`_html.ErrorView`, which the engine attaches: the
    rendering sits above the errors, in the layer of the derivation it draws)."""

    def html(self, err: AxisCheckError) -> str: ...


class AxisCheckError(ValueError):
    """Base class of every failure axischeck reports (a `ValueError`).

    **Attributes** (all optional facts; the message is rendered from them):

    - `transform`: the transform and its axes, e.g. `"vmap(f, in_axes=(0, 1, 0), out_axes=0)"`.
    - `problem`: one line saying what is wrong.
    - `symbol`: the dimension symbol or batch size that conflicts, if any.
    - `places`: the `Place`s that disagree, first binding first.
    - `table`: the derivation table (argument rows), if one was built.
    - `hint`: what to change, in words, where the engine can say it (not checked).
    - `fix`: a change that was checked against what the program means (see `suggestions`).
    - `fix_head`: the checked fix in a few words (`in_axes=(0, 0)`), ending the headline.
    - `job`: in a job of several processes, when the failure is about how its processes
      share the devices: their count, this one's index, its local devices and the global
      count (`job.processes`, `job.process`, `job.local_devices`, `job.global_devices`).
    - `steps`: the derivation so far (the table's rows as values), if the engine made one.

    In Jupyter an error shown as a cell's value is drawn as HTML (`_repr_html_`): the table
    with the conflicting rows highlighted and each argument's axes, the conflicting axes
    marked. Its text is the message, unchanged.

    ```python
    >>> f = ax.vmap(lambda x, y: x @ y, in_axes=(0, 1), signature="(a,b),(b,c)->(a,c)")
    >>> try:
    ...     f.predict((16, 8, 4), (5, 16, 2))
    ... except ax.AxisCheckError as err:
    ...     print(err.problem)
    ...     print(err.symbol, [place.describe() for place in err.places])
    dimension 'b' disagrees: 4 from x, 5 from y
    b ['axis 2 of x (size 4) [per-example axis 1 of (8, 4)]', 'axis 0 of y (size 5) [per-example axis 0 of (5, 2)]']
    ```
    """

    transform: str | None
    problem: str
    symbol: str | None
    places: tuple[Place, ...]
    table: str | None
    hint: str | None
    fix: str | None
    job: Job | None = None  # a class default too: an error unpickled from an older release lacks it

    def __init__(
        self,
        problem: str,
        *,
        transform: str | None = None,
        symbol: str | None = None,
        places: tuple[Place, ...] = (),
        table: str | None = None,
        notes: tuple[str, ...] = (),
        hint: str | None = None,
        fix: str | None = None,
        fix_head: str | None = None,
        job: Job | None = None,
        steps: tuple[Any, ...] = (),
        view: HtmlView | None = None,
    ) -> None:
        self.transform = transform
        self.problem = problem
        self.symbol = symbol
        self.places = places
        self.table = table
        self.notes = notes
        self.hint = hint
        self.fix = fix
        self.fix_head = fix_head
        self.job = job
        self.steps = steps
        self.view = view
        self.suggestions: tuple[Any, ...] = ()  # the checked fixes, as data (see axischeck._advice)
        self.readings: tuple[Any, ...] = ()  # the changes that only run ("Runs, but ..." in the notes)
        # The arguments and labelled call the engine found this in, carried to the fix
        # search (labelling 16,000 leaves again costs 20-45 ms), which takes it; never
        # pickled or copied into another error.
        self._found_in: Any = None
        super().__init__(self.render())

    def render(self) -> str:
        """The message: headline (what is wrong and, where one was checked, the fix in a
        few words, so a one-line log says both), table, the places that disagree, notes,
        and the fix in full (or, where none was checked, the hint)."""
        head = f"{self.transform}: {self.problem}" if self.transform else self.problem
        lines = [f"{head}; fix: {self.fix_head}" if self._fix_head_holds() else head]
        if self.table:
            lines.extend("  " + row for row in self.table.splitlines())
        disagreement = self.disagreement()
        if disagreement is not None and not self._headline_places():
            lines.append(f"  {disagreement}")
        else:
            lines.extend(f"  {p.describe()}" for p in self.places if self.table is None)
        lines.extend(f"  {note}" for note in self.notes)
        if self.fix:
            lines.append(f"  Fix: {self.fix}")
        elif self.hint:
            lines.append(f"  Hint: {self.hint}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The error as HTML, for Jupyter: drawn where the engine found it, else its text."""
        view: HtmlView | None = getattr(self, "view", None)  # a state rebuilt without it has none
        if view is not None:
            return view.html(self)
        import html

        text = html.escape(f"{type(self).__name__}: {self}")
        return f"<pre style='color:#b91c1c'>{text}</pre>"

    def disagreement(self) -> str | None:
        """`'b' is axis 2 of x (size 4) but axis 0 of y (size 5).`, when places disagree."""
        if len(self.places) < 2 or self.symbol is None:
            return None
        first, *rest = self.places
        return f"{_quote(self.symbol)} is {first.describe()}" + "".join(f" but {p.describe()}" for p in rest) + "."

    def _fix_head_holds(self) -> bool:
        """Whether the headline's fix says what the full fix does: a wrapper that writes
        the fix in its own terms (NNX's `StateAxes`) leaves the raw one out of the head."""
        head, fix = self.fix_head, self.fix
        if not head or not fix:
            return False
        return all(part in fix for part in head.split(", with "))

    def _headline_places(self) -> bool:
        """Whether the problem already names every place (`axis 0 of x`): then the
        disagreement line would only say it again."""
        return all(p.axis is not None and f"axis {p.axis} of {p.arg}" in self.problem for p in self.places)

    def __str__(self) -> str:
        """The rendered message, whichever JAX exception type this one is too (some
        build their text from attributes of their own)."""
        return ValueError.__str__(self)

    def __reduce__(self) -> tuple[object, ...]:
        # The advice's outcomes (the engine's records of each candidate, jaxprs among them)
        # stay in this process: the suggestions travel as their text and options.
        state = {
            **self.__dict__,
            "_found_in": None,
            "suggestions": _without_outcomes(self.suggestions),
            "readings": _without_outcomes(getattr(self, "readings", ())),
        }
        jax_type = getattr(type(self), "_jax_type", None)
        if jax_type is not None:  # a class made by `with_jax_error`: rebuilt from its parts
            return (_rebuild_with_jax_type, (type(self).__mro__[1], jax_type, state))
        return (_rebuild, (type(self), state))


def _without_outcomes(suggestions: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        replace(s, outcome=None) if is_dataclass(s) and not isinstance(s, type) and hasattr(s, "outcome") else s
        for s in suggestions
    )


def _rebuild(cls: type[AxisCheckError], state: dict[str, object]) -> AxisCheckError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    ValueError.__init__(err, err.render())
    return err


def _rebuild_with_jax_type(
    cls: type[AxisCheckError], jax_type: type[BaseException], state: dict[str, object]
) -> AxisCheckError:
    return _rebuild(_also(cls, jax_type), state)


_COMBINED: dict[tuple[type, type], type] = {}


def _also(cls: type[AxisCheckError], jax_type: type[BaseException]) -> type[AxisCheckError]:
    """`cls`, made an instance of `jax_type` too (so `except TypeError` still catches it)."""
    if issubclass(cls, jax_type) or not issubclass(jax_type, Exception):
        return cls
    combined = _COMBINED.get((cls, jax_type))
    if combined is None:
        try:
            combined = type(cls.__name__, (cls, jax_type), {"_jax_type": jax_type, "__module__": "axischeck"})
        except TypeError:  # an exception type whose layout cannot be combined: keep ours
            return cls
        if len(_COMBINED) < 256:
            _COMBINED[(cls, jax_type)] = combined
    return combined


LIBRARY_FAILURES: tuple[type[Exception], ...] = (ValueError, TypeError, IndexError, NameError, AssertionError)
"""The exceptions an axis mistake surfaces as from a library's transform (Equinox's,
Flax's): JAX's refusals, and the function's own failures on shapes it did not expect (a
user's `assert x.ndim == 1` among them), which axischeck explains in their type (see
`replaces`)."""


def replaces(err: AxisCheckError, lib_err: BaseException) -> bool:
    """Whether axischeck's `err` is raised in place of a library's exception: always for
    JAX's refusals; for the function's own AssertionError only where it says what to
    change (a user's `assert x.dtype == jnp.int32` stays the user's)."""
    return not isinstance(lib_err, AssertionError) or err.fix is not None or err.hint is not None


def with_jax_error(err: AxisCheckError, jax_err: BaseException) -> AxisCheckError:
    """`err` for a failure JAX also reports: JAX's own message kept as the last note, and
    the error an instance of JAX's exception type too, so code that catches or matches
    JAX's error keeps working."""
    cls = _also(type(err), type(jax_err))
    new = cls.__new__(cls)
    new.__dict__.update(err.__dict__)
    for name, value in vars(jax_err).items():  # what JAX's exception carries (a DuplicateSpecError's mesh, pspec)
        if not name.startswith("__"):
            new.__dict__.setdefault(name, value)
    text = str(jax_err)
    said = f"JAX: {type(jax_err).__name__}: {text}" if text else f"JAX: {type(jax_err).__name__} (with no message)"
    # What the engine's own traces quoted of JAX (a line of the same message, or the
    # NameError of a probe where JAX's shard_map trips an assertion) gives way to the
    # exception JAX raised for the call: JAX's text once.
    new.notes = (*(n for n in err.notes if not n.startswith("JAX: ")), said)
    ValueError.__init__(new, new.render())
    return new


def _quote(symbol: str) -> str:
    return symbol if symbol.startswith(("batch size", "the ")) else f"'{symbol}'"


class SpecError(AxisCheckError, TypeError):
    """A malformed signature, `in_axes`, `out_axes` or other transform option.

    Also a `TypeError`, where `jax.vmap` raises `TypeError` for the same mistakes.

    ```python
    >>> try:
    ...     ax.vmap(jnp.sin, in_axes="0")
    ... except ax.SpecError as err:
    ...     print(isinstance(err, TypeError), str(err).splitlines()[0])
    True vmap in_axes must be an int, None, or a tuple with one entry per positional argument, but got '0' (of type str)
    ```
    """


class ArgumentError(AxisCheckError):
    """The arguments disagree with the axes or the signature (sizes, ranks, structure).

    ```python
    >>> f = ax.vmap(jnp.add)
    >>> try:
    ...     f.predict((16, 3), (15, 3))
    ... except ax.ArgumentError as err:
    ...     print(err.symbol)
    batch size B
    ```
    """


class OutputError(AxisCheckError):
    """An output disagrees with `out_axes`, or contradicts its declared signature.

    ```python
    >>> try:
    ...     ax.vmap(jnp.sin, out_axes=2).predict((3, 4))
    ... except ax.OutputError as err:
    ...     print(str(err).splitlines()[0].split(': ', 1)[1])
    out_axes entry 2 for output is out of range: the per-example output has shape (4,), so the batched output ...
    ```
    """


class FunctionError(AxisCheckError):
    """The function itself failed when traced on per-example shapes.

    Raised by `predict` for unannotated functions; JAX's original error is chained
    as `__cause__`. A checked call lets the function's own error through untouched.

    ```python
    >>> try:
    ...     ax.vmap(lambda x: x @ x).predict((3, 4, 5))
    ... except ax.FunctionError as err:
    ...     print(type(err.__cause__).__name__, "per-example arguments (x: (4, 5))" in str(err))
    TypeError True
    ```
    """


class CollectiveError(AxisCheckError):
    """A collective used where JAX answers silently but meaninglessly under vmap: a
    non-tiled `psum_scatter` whose dimension is not the axis size, or a `ppermute` with
    duplicate sources or destinations (docs/jax-semantics.md#collectives-under-vmap); under pmap and shard_map,
    a collective whose sizes the device axis cannot satisfy.

    ```python
    >>> f = ax.vmap(lambda x: jax.lax.psum_scatter(x, "i"), axis_name="i")
    >>> try:
    ...     f.predict((8, 16))
    ... except ax.CollectiveError as err:
    ...     print("size 16 must match shard count 8" in str(err))
    True
    ```
    """


for _cls in (AxisCheckError, SpecError, ArgumentError, OutputError, FunctionError, CollectiveError):
    _cls.__module__ = "axischeck"
Place.__module__ = "axischeck"


class AxisCheckWarning(UserWarning):
    """JAX answers, but probably not what was meant: for example pmap with `out_axes=None`
    on an output that depends on the mapped input returns device 0's block.

    ```python
    >>> import warnings
    >>> f = ax.pmap(lambda x: x * 2, out_axes=None)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     shapes = f.predict((1, 3)).shapes
    >>> shapes, caught[0].category.__name__
    (Shape(3), 'AxisCheckWarning')
    ```
    """


AxisCheckWarning.__module__ = "axischeck"


class SharedRandomnessWarning(AxisCheckWarning):
    """A PRNG key that does not vary over a mapped axis feeds draws that reach an output
    that does: every example (or device) gets the same random numbers. JAX answers, and
    nothing fails. Filter it like any warning
    (`warnings.filterwarnings("ignore", category=ax.SharedRandomnessWarning)`) where the
    sharing is meant.

    **Attributes** (the message is rendered from them):

    - `transform`: the transform and its options, e.g. `"vmap(f, in_axes=(0, None), out_axes=0)"`.
    - `sampler`: the sampler, e.g. `"jax.random.normal"`, and `caller`: where it is
      called (`"model.py:12 (loss)"`), if known.
    - `key`: the key, in the user's terms (`"key (in_axes None)"`, a closed-over name).
    - `outputs`: the outputs its draws reach, which vary over the map.
    - `unit`: what shares the draws (`"example"`, `"device"`), and `axes`: along which
      axes (as the transform names them).
    - `fix`: the remedy, where it was checked against the recorded trace of the call (the
      key made to vary along the axes, the sampler's draws differ along them); else
      None, and `hint` holds the remedy in words (not checked), as on errors.

    ```python
    >>> import warnings
    >>> f = ax.vmap(lambda x, key: x + jax.random.normal(key, x.shape), in_axes=(0, None))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = f(jnp.ones((4, 3)), jax.random.key(0))
    >>> warning = caught[0].message
    >>> type(warning).__name__, warning.sampler, warning.key, warning.unit
    ('SharedRandomnessWarning', 'jax.random.normal', 'key (in_axes None)', 'example')
    ```
    """

    def __init__(
        self,
        *,
        transform: str,
        sampler: str,
        caller: str | None,
        key: str,
        outputs: tuple[str, ...],
        unit: str,
        axes: str,
        fix: str | None,
        hint: str | None = None,
    ) -> None:
        self.transform = transform
        self.sampler = sampler
        self.caller = caller
        self.key = key
        self.outputs = outputs
        self.unit = unit
        self.axes = axes
        self.fix = fix
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        where = f" at {self.caller}" if self.caller else ""
        reached = " and ".join(self.outputs) if len(self.outputs) <= 3 else f"{len(self.outputs)} outputs"
        verb = "varies" if len(self.outputs) == 1 else "vary"
        lines = [
            f"{self.transform}: every {self.unit} draws the same random numbers: {self.sampler}{where}"
            f" draws from {self.key}, which is the same along {self.axes}, and its draws reach"
            f" {reached}, which {verb} along it"
        ]
        if self.fix:
            lines.append(f"  Fix: {self.fix}")
        elif self.hint:
            lines.append(f"  Hint: {self.hint}")
        lines.append("  (if the sharing is meant, filter ax.SharedRandomnessWarning)")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[object, ...]:
        facts = {k: v for k, v in self.__dict__.items()}
        return (_rebuild_warning, (type(self), facts))


def _rebuild_warning(cls: type[SharedRandomnessWarning], facts: dict[str, Any]) -> SharedRandomnessWarning:
    return cls(**facts)


SharedRandomnessWarning.__module__ = "axischeck"


_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)


_HELD: ContextVar[bool] = ContextVar("axischeck_warnings_held", default=False)


@contextmanager
def warnings_held() -> Iterator[None]:
    """axischeck's warnings left unsaid within: the fix search's trials are not the
    user's calls (the process's warning filters are not touched)."""
    token = _HELD.set(True)
    try:
        yield
    finally:
        _HELD.reset(token)


def warn_at_user(warning: Warning, also_skipped: tuple[str, ...] = ()) -> None:
    """Issue `warning` at the user's line: the first calling frame outside axischeck and
    JAX (how many of their frames lie between differs by transform, nesting and `jit`,
    so no fixed `stacklevel` points at it), and outside the packages `also_skipped` names
    (a library whose transform the user called). Not within `warnings_held()`."""
    if _HELD.get():
        return
    import jax  # already imported: warnings are issued while JAX runs

    dirs = [_PACKAGE_DIR, str(Path(jax.__file__).resolve().parent)]
    for name in also_skipped:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(str(Path(module.__file__).resolve().parent))  # type: ignore[arg-type]
    skipped = tuple(d + os.sep for d in dirs)
    frame = sys._getframe(1)  # the caller: `stacklevel=2`
    level = 2
    while frame.f_back is not None and os.path.realpath(frame.f_code.co_filename).startswith(skipped):
        frame = frame.f_back
        level += 1
    warnings.warn(warning, stacklevel=level)
