"""pytest plugin for scripts/lib_suites.sh: the last lines of a run say whether `jax.vmap`
was axischeck's at the end of the session, so a count from the `--axischeck` mode is known
to be a patched one (`-q` hides the session header that says so), and list every
`SharedRandomnessWarning` the run gave: warned (recorded by pytest), or raised where the
library's own configuration turns warnings into errors (a failed test), each with its test."""

from __future__ import annotations

import sys
from typing import Any

import pytest

_SHARED = "SharedRandomnessWarning"
_found: list[tuple[str, str, str]] = []  # (how, test, the message's first line)


def pytest_warning_recorded(warning_message: Any, when: str, nodeid: str, location: Any) -> None:
    if type(warning_message.message).__name__ == _SHARED:
        _found.append(("warned", nodeid, str(warning_message.message).splitlines()[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and _SHARED in str(report.longrepr):
        lines = [line for line in str(report.longrepr).splitlines() if _SHARED in line]
        _found.append(("raised", report.nodeid, lines[-1].strip() if lines else _SHARED))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    jax = sys.modules.get("jax")
    owner = getattr(getattr(jax, "vmap", None), "__module__", None) if jax is not None else None
    seen = set()
    for how, nodeid, line in _found:
        if (how, nodeid, line) in seen:
            continue
        seen.add((how, nodeid, line))
        terminalreporter.write_line(f"lib_suites: {_SHARED} {how} in {nodeid}: {line}")
    terminalreporter.write_line(f"lib_suites: {len(seen)} {_SHARED}(s)")
    terminalreporter.write_line(f"lib_suites: jax.vmap at the end of the session is from {owner}")
