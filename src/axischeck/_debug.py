"""The way in for the tests that must see inside a transform, so that no test reads private
state: the predictor a transform shares (its caches in `Predictor.stored()`), and how many
predictors and per-function verdicts are kept."""

from __future__ import annotations

from typing import Any

from ._engine._function import verdicts_kept as verdicts_kept
from ._engine._predictor import PREDICTORS, Predictor
from ._transform import Transformed


def predictor_of(transform: Transformed[..., Any], *, make: bool = True) -> Predictor | None:
    """The predictor `transform` shares with every transform of its function with the
    same options and signature: made now if none has been (`make=False`: the one it has
    found so far, or None; a transform finds its predictor at first use)."""
    return transform._predictor if make else transform._shared


def predictors_kept() -> int:
    """How many predictors are kept (each goes with its function)."""
    return len(PREDICTORS)
