#!/usr/bin/env bash
# Quick start, command 2: set up and run the whole test suite (ruff, pytest, then mypy --strict,
# then pyright on src and the user code in tests/typing).
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
"$py" -c 'import sys, jax; print(f"python {sys.version.split()[0]}, jax {jax.__version__}")'
"$py" -m ruff format --check --quiet src tests benchmarks scripts
"$py" -m ruff check --quiet src tests benchmarks scripts
status=0
"$py" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
fi
if [ "$status" -ne 0 ]; then
    exit "$status"
fi
"$py" -m mypy --strict src tests/typing
# pyright: the library and what a pyright user sees of its public API.
# PYRIGHT_PYTHON_IGNORE_WARNINGS: no look-up of newer pyright releases on PyPI.
PYRIGHT_PYTHON_IGNORE_WARNINGS=1 "$py" -m pyright --pythonpath "$py" src tests/typing/user_code.py
