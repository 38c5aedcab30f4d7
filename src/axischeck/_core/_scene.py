"""The one way the engine builds an error: from the scene where it found the mistake.

A `Scene` is the transform being checked and the derivation so far. Every engine error
is built by `Scene.error`, so each one carries the same facts in the same order: the
headline, the table of the derivation so far (`_explain`), the steps themselves, and the
view that draws it in Jupyter (`_html`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from ._errors import AxisCheckError
from ._explain import named_in, table_so_far, tables_read
from ._html import ERROR_VIEW
from ._steps import Step

E = TypeVar("E", bound=AxisCheckError)


@dataclass(frozen=True, slots=True)
class Scene:
    """Where the engine stands when it finds a mistake: the transform it is checking and
    the derivation so far."""

    trail: tuple[Step, ...]
    transform: str | None = None

    def then(self, step: Step) -> Scene:
        """The same scene with one more derivation step (the rows of the current level)."""
        return Scene((*self.trail, step), self.transform)

    def error(self, cls: type[E], problem: str, **facts: Any) -> E:
        table = table_so_far(self.trail, named_in(problem, facts.get("places", ()))) if tables_read() else None
        return cls(problem, transform=self.transform, table=table, steps=self.trail, view=ERROR_VIEW, **facts)
