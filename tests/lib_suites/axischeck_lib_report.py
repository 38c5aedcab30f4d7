"""pytest plugin for scripts/lib_suites.sh: the last lines of a run say whether `jax.vmap`
was axischeck's at the end of the session, so a count from the `--axischeck` mode is known
to be a patched one (`-q` hides the session header that says so)."""

from __future__ import annotations

import sys

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    jax = sys.modules.get("jax")
    owner = getattr(getattr(jax, "vmap", None), "__module__", None) if jax is not None else None
    terminalreporter.write_line(f"lib_suites: jax.vmap at the end of the session is from {owner}")
