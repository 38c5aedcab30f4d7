#!/usr/bin/env bash
# Quick start, command 2: set up and run the whole test suite (pytest, then mypy --strict).
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
status=0
"$py" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
fi
if [ "$status" -ne 0 ]; then
    exit "$status"
fi
"$py" -m mypy --strict src tests/typing
