"""The suite's own device set-up (tests/conftest.py), run in a pytest of its own: a device
count the run sets in XLA_FLAGS is kept, and tests that need more devices than the run
has are skipped with the reason, not failed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a pytest in a subprocess, which imports jax

HERE = Path(__file__).resolve().parent

PROBE = """
import jax
import pytest

from conftest import cpu_devices, cpu_mesh


def test_count() -> None:
    print("devices:", jax.device_count(), jax.default_backend())


@pytest.mark.devices(2)
def test_marked() -> None:
    assert jax.device_count() >= 2


def test_cpu_devices() -> None:
    assert len(cpu_devices(2)) == 2


def test_cpu_mesh() -> None:
    assert cpu_mesh((2, 1), ("x", "y")).devices.shape == (2, 1)
"""


def _pytest(tmp_path: Path, count: int) -> subprocess.CompletedProcess[str]:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={count}"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-rs", "-p", "no:cacheprovider", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_count_the_run_sets_is_kept(tmp_path: Path) -> None:
    done = _pytest(tmp_path, 2)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "devices: 2 cpu" in done.stdout
    assert "4 passed" in done.stdout


def test_with_one_device_the_multi_device_tests_skip_with_the_reason(tmp_path: Path) -> None:
    done = _pytest(tmp_path, 1)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "devices: 1 cpu" in done.stdout
    assert "1 passed, 3 skipped" in done.stdout
    assert "needs 2 devices of the default backend, this run has 1" in done.stdout
    assert "needs 2 CPU devices, this run has 1" in done.stdout
    assert "--xla_force_host_platform_device_count=8" in done.stdout  # how to get them
