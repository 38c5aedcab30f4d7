"""The JAX-suite swap (tests/jax_suite/axischeck_jax_swap.py) on a small stand-in for JAX's
test files, so the helper that measures axischeck against JAX's own tests stays working.

A stand-in test module binds JAX's transforms every way JAX's tests do (`jax.vmap`,
`from jax import vmap`, a JAX-internal module used as `api.vmap`) and records what it
sees; the swap must hand it axischeck's in every case, and JAX's untouched without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWAP_DIR = Path(__file__).resolve().parent / "jax_suite"

STAND_IN = """
import jax
import jax.numpy as jnp
import pytest
import warnings
from jax import vmap
from jax._src import api


def test_what_the_module_sees():
    import axischeck
    swapped = jax.vmap is axischeck.vmap
    assert (vmap is axischeck.vmap) == swapped
    assert (api.vmap is axischeck.vmap) == swapped
    assert (api.jit is jax.jit)  # the proxy passes everything else through
    print("SWAPPED" if swapped else "PLAIN")
    assert jnp.array_equal(jax.vmap(jnp.sum)(jnp.ones((3, 2))), jnp.full((3,), 2.0))


def test_axischeck_warning_is_not_an_error():  # JAX's suite turns warnings into errors
    import axischeck
    if jax.vmap is axischeck.vmap:
        warnings.warn("a deliberate axischeck warning", axischeck.AxisCheckWarning)
"""


def _run(tmp_path: Path, swapped: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "stand_in_test.py").write_text(STAND_IN)
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings =\n    error\n")  # as JAX's config
    env = {k: v for k, v in os.environ.items() if k != "AXISCHECK_JAX_SWAP"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SWAP_DIR), env.get("PYTHONPATH", "")]))
    if swapped:
        env["AXISCHECK_JAX_SWAP"] = "1"
    args = [sys.executable, "-m", "pytest", "-s", "-p", "axischeck_jax_swap", "-p", "no:cacheprovider"]
    args += ["-p", "no:asyncio", "-p", "no:pytest-lsp"]  # as scripts/jax_suite.sh: not JAX's plugins
    args += ["-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(tmp_path / "stand_in_test.py")]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("swapped", [True, False], ids=["swapped", "baseline"])
def test_the_swap_reaches_every_way_jax_tests_bind_a_transform(tmp_path: Path, swapped: bool) -> None:
    run = _run(tmp_path, swapped)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert ("SWAPPED" if swapped else "PLAIN") in run.stdout
    if swapped:
        assert "axischeck jax swap: on" in run.stdout
        assert "stand_in_test.api (proxy of jax._src.api: vmap)" in run.stdout
    else:
        assert "axischeck jax swap: off (baseline)" in run.stdout
