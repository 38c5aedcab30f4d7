# Sourced by the quick-start scripts: makes the venv and installs the project with its dev
# extra, reinstalling only when pyproject.toml (or the leg) changes.
#
# The defaults are the quick start's: `python3` and `.venv`. CI's newest leg
# (scripts/test-newest.sh) sets AXISCHECK_PYTHON (the interpreter), AXISCHECK_VENV (its own
# venv) and AXISCHECK_NEWEST_JAX=1 (upgrade jax and jaxlib to the newest release on the index).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${AXISCHECK_VENV:-$root/.venv}"
if [ ! -x "$venv/bin/python" ]; then
    "${AXISCHECK_PYTHON:-python3}" -m venv "$venv"
fi
stamp="$venv/.axischeck-installed"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) newest-jax=${AXISCHECK_NEWEST_JAX:-0}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[dev]"
    if [ "${AXISCHECK_NEWEST_JAX:-0}" = 1 ]; then
        # The newest jax and jaxlib on the index (pyproject.toml sets no upper bound).
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade jax jaxlib
    fi
    echo "$want" > "$stamp"
fi
py="$venv/bin/python"
