"""The words of the advice: what a failed call's message says of its candidates.

A candidate that computes what the program means is the `Fix` (its options also as
data, `err.suggestions`); readings the checks cannot tell from it are shown beside it,
with what would tell them apart; a candidate that only makes the shapes agree is
"Runs, but ..." with what it changes. Where no candidate is a fix, the engine's hint
stays, in words, and no line says "Fix".
"""

from __future__ import annotations

from .._core._errors import AxisCheckError
from ._suggestion import Suggestion


def worded(err: AxisCheckError, ranked: list[Suggestion], cause: str | None = None) -> AxisCheckError:
    """`err` (of its own type, JAX's exception type included) with the advice in it;
    `cause`, the real cause no option change fixes, is its hint where nothing is a fix."""
    if not ranked and cause is None:
        return err
    fixes = tuple(s for s in ranked if s.is_fix)
    ties = [s.text for s in ranked if s.tie]
    runs_but = tuple(f"Runs, but {s.shapes_only}: {s.text}" for s in ranked if s.shapes_only is not None)
    text = "; or ".join(s.text for s in fixes) or None
    if text and ties:
        text += f". The shapes fit {'another reading' if len(ties) == 1 else 'other readings'} as well:"
        text += f" {'; or '.join(ties)}; nothing in the call tells them apart: check which one you meant"
    new = type(err).__new__(type(err))
    new.__dict__.update(err.__dict__)
    new.notes = (*err.notes, *runs_but)
    new.fix = text
    new.fix_head = fixes[0].headline() if fixes else None
    if cause is not None and not fixes:
        new.hint = cause
    new.suggestions = fixes
    new.readings = tuple(s for s in ranked if s.shapes_only is not None)
    new._found_in = None
    ValueError.__init__(new, new.render())
    return new
