"""Tracebacks the JAX way: axischeck's files are registered with JAX's traceback
filtering, so a user sees their own frames and the message by default, and every frame
with `JAX_TRACEBACK_FILTERING=off` (nothing is thrown away)."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import axischeck as ax

PACKAGE_DIR = Path(ax.__file__).resolve().parent
EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def op(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


@pytest.fixture
def filtering_off() -> Iterator[None]:
    before = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    try:
        yield
    finally:
        jax.config.update("jax_traceback_filtering", before)


FAILURES: dict[str, Callable[[], Any]] = {
    "call": lambda: ax.vmap(op, in_axes=(0, 1, 0), signature=EINSUM)(
        jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2))
    ),
    "predict": lambda: ax.vmap(op, in_axes=(0, 1, 0)).predict((16, 8, 4), (5, 16, 2), (16, 8, 2)),
    "construction": lambda: ax.vmap(op, in_axes="0"),  # axischeck: ignore[AX002] - the mistake under test
}


def _ours(err: BaseException) -> list[traceback.FrameSummary]:
    frames = traceback.extract_tb(err.__traceback__)
    return [f for f in frames if Path(f.filename).resolve().is_relative_to(PACKAGE_DIR)]


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_axischecks_frames_are_hidden_by_default(failure: str) -> None:
    with pytest.raises(ax.AxisCheckError) as info:
        FAILURES[failure]()
    assert _ours(info.value) == []
    assert Path(traceback.extract_tb(info.value.__traceback__)[0].filename).resolve() == Path(__file__).resolve()


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_every_frame_is_there_with_filtering_off(failure: str, filtering_off: None) -> None:
    with pytest.raises(ax.AxisCheckError) as info:
        FAILURES[failure]()
    assert _ours(info.value), "axischeck's frames were thrown away"
