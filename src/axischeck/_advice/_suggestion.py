"""One candidate change, as text and as data, and what was found of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._core._trees import option_repr


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One change the engine accepts, as text and as data: transform options to pass
    again, and changes to the call (an argument passed transposed, padded along one
    axis, or keyword arguments passed by position instead), which `as_kwargs()` leaves
    out: the options alone are the fix only where the call needs no change.

    What the advice found of it: `shapes_only` says why it runs without doing what the
    program means (it is then shown as "Runs, but ...", never as the fix); `tie` marks
    another reading the checks cannot tell from the fix, shown beside it for the user to
    choose.

    ```python
    >>> f = ax.vmap(lambda x, s: x * s)
    >>> try:
    ...     f.predict((4, 3), ())
    ... except ax.AxisCheckError as err:
    ...     print(err.suggestions[0].as_kwargs())
    {'in_axes': (0, None)}
    ```
    """

    text: str
    options: tuple[tuple[str, Any], ...]  # e.g. (("in_axes", (0, 1, 0)),)
    transposes: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (argument position, axis order)
    pads: tuple[tuple[int, int, int], ...] = ()  # (argument position, axis, padded size)
    by_position: tuple[str, ...] = ()  # keyword arguments to pass next by position, in this order
    tie: bool = False
    reassigns: bool = False  # moves entries between outputs, not only the failing outputs' own
    # A fix only where the meaning check ran: a declared signature, which the engine has
    # checked it against, cannot tell its readings apart (which dim a spec splits).
    checked_only: bool = False
    shapes_only: str | None = None
    head: str | None = None  # the change in a few words, where the options' reprs are long (a mesh)
    # The arguments the user mapped that it passes whole and that are no example's data:
    # the function reads only their shapes and cannot take their examples as mapped (a
    # sample input given to an initialiser for its last dim). See `with_shapes_read`.
    shapes_read: frozenset[int] = frozenset()
    # The engine's outcome with this change (the ranking reads its batch size and output
    # ranks); not part of the value.
    outcome: Any = field(default=None, compare=False, repr=False)

    def as_kwargs(self) -> dict[str, Any]:
        """The transform options to pass again ({} when the change is to the arguments)."""
        return dict(self.options)

    def headline(self) -> str | None:
        """The change in a few words for a message's first line (`in_axes=(0, 0)`,
        `pass b by position`), or None when only the full text says it (a transposed or
        padded argument)."""
        if self.head is not None or self.transposes or self.pads:
            return self.head
        options = ", ".join(f"{k}={option_repr(v)}" for k, v in self.options)
        if self.by_position:
            moved = f"pass {', '.join(self.by_position)} by position"
            return f"{moved}, with {options}" if options else moved
        return options or None

    @property
    def is_fix(self) -> bool:
        """Whether this is a fix: it does what the program means, and no other reading
        the checks cannot tell from it comes first."""
        return not self.tie and self.shapes_only is None
