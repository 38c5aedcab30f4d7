"""What the advice knows of the calls of a transform that passed before one failed.

A change of options that the failed call needs is no fix where it refuses a call that
passed: a pmap fed its own stacked output gets copies where its first call got one value,
and mapping them refuses that first call; a transform written twice with the same options
(`pmap(convolve, in_axes=(0, None))` for two passes) is one transform to a fix. The
transform says whether a call of it passed (True where it cannot know: a library's
transform checked through an inner one), and its predictor keeps the first that passed,
as shapes, which the engine's level checks answer for without running the function.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .._core._axes import freeze_in_axes
from .._core._explain import tables_unread
from .._core._leaves import Call
from .._engine._levels import MapLevel, takes
from .._engine._models import MapModel, Model
from ._suggestion import Suggestion


@dataclass(frozen=True, slots=True)
class Passed:
    """Whether a call of the transform may have passed before (`may_have`), and the first
    that did, as shapes, where it was kept (`call`)."""

    may_have: bool
    call: Call | None

    def refused_by(self, level: MapLevel) -> bool | None:
        """Whether `level` refuses the call that passed: False where none passed, None where
        one may have and none was kept."""
        if not self.may_have:
            return False
        if self.call is None:
            return None
        try:
            with tables_unread():
                return not takes(level, self.call)
        except Exception:  # a level the call cannot be read against: it refuses it
            return True


UNSEEN = Passed(True, None)
"""What is known where the transform cannot say: a call may have passed, none was kept."""


def kept_to_passed(model: Model, ranked: list[Suggestion], passed: Passed) -> list[Suggestion]:
    """The candidates, each fix that changes a map's in_axes so that the call which passed
    is refused said as what it changes instead (a transform written twice with the same
    options, the second call of which fails: the fix for it breaks the first)."""
    if not isinstance(model, MapModel) or passed.call is None:
        return ranked
    kept = []
    for s in ranked:
        axes = dict(s.options).get("in_axes")
        if s.is_fix and isinstance(axes, tuple):
            level = replace(model.level, in_axes=freeze_in_axes(axes))
            if passed.refused_by(level):
                why = (
                    f"a call of this {model.level.kind} with the same options passed before, and {s.headline()}"
                    f" refuses it: if the two calls mean different things, give each its own {model.level.kind}"
                )
                s = replace(s, shapes_only=why)
        kept.append(s)
    return kept
