"""One way in for the tests that must see inside a transform, so that no test reads
private state: the predictor it shares (its caches in `Predictor.stored()`)."""

from __future__ import annotations

from typing import Any

from ._engine._predictor import Predictor
from ._transform import Transformed


def predictor_of(transform: Transformed[..., Any]) -> Predictor:
    """The predictor `transform` shares with every transform of its function with the
    same options and signature (made now if none has been)."""
    return transform._predictor
