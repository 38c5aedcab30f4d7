"""What the advice knows of the calls of a transform that passed before one failed.

A pmap fed its own stacked output gets copies where its first call got one value:
mapping the copies fixes the call that fails and refuses the first, which passed one copy
whole (out_axes=None where they were stacked is the remedy then). The transform says
whether a call of it passed (True where it cannot know: a library's transform checked
through an inner one), and its predictor keeps the first that passed as the shapes of
each positional argument's arrays (no user data, no pytree metadata held).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .._core._leaves import Call

ArgumentShapes = tuple[tuple[tuple[int, ...], ...], ...]
"""Per positional argument, the shapes of its leaves in order (`Predictor.note_passed`)."""


@dataclass(frozen=True, slots=True)
class Passed:
    """Whether a call of the transform may have passed before (`may_have`), and the first
    that did, as its arguments' shapes, where it was kept (`shapes`)."""

    may_have: bool
    shapes: ArgumentShapes | None

    def changed(self, call: Call, positions: list[int]) -> bool | None:
        """Whether the arguments at `positions` had other shapes in the call that passed
        (so mapping them now refuses it): False where none passed, None where one may have
        and none was kept."""
        if not self.may_have:
            return False
        if self.shapes is None or max(positions) >= len(self.shapes):
            return None
        return any(_leaf_shapes(call.args[i]) != self.shapes[i] for i in positions)


def _leaf_shapes(arg: Any) -> tuple[tuple[int, ...], ...]:
    """The shapes of a labelled argument's leaves, as `Predictor.note_passed` keeps them."""
    leaves = jax.tree_util.tree_leaves(arg)
    return tuple(tuple(leaf.shape) if leaf.shape is not None else tuple(np.shape(leaf.value)) for leaf in leaves)


UNSEEN = Passed(True, None)
"""What is known where the transform cannot say: a call may have passed, none was kept."""
