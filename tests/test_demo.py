"""The README demo runs and shows the key lines."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_runs_and_shows_predictions_and_explanations() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "axischeck", "demo"], capture_output=True, text=True, timeout=300, check=True
    ).stdout
    assert "MISMATCH" not in out
    assert "vmap(complex_operation, in_axes=(0, 1, 0)): predicted (16, 8, 2), real (16, 8, 2)  [OK]" in out
    assert "Size of label 'b' for operand 1 (4) does not match previous terms (5)" in out
    assert "'b' is axis 2 of x (size 4)" in out and "but axis 0 of y (size 5)" in out
    assert "output has shape (32, 1), but the signature predicts (32,)" in out
    assert "speed-up" in out
    assert "size 16 must match shard count 8" in out and "on 16 devices: predicted (16,)" in out
    assert "on 16 devices: predicted (64,), each device holding (4,)" in out
    assert "size 16 must be divisible by shard_count 64" in out
