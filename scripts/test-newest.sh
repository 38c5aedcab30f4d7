#!/usr/bin/env bash
# CI's second leg: the whole test command on the newest Python >= 3.12 this machine has
# (on PATH or under pyenv) with the newest jax, in its own venv (.venv-newest). It fails
# loudly when no such Python exists or the venv cannot be set up.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

best="" best_version=""
candidates=()
for name in python3.13 python3.12 python3.14; do
    if command -v "$name" > /dev/null 2>&1; then candidates+=("$(command -v "$name")"); fi
done
for exe in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 /usr/bin/python3.1[2-9] /usr/local/bin/python3.1[2-9]; do
    if [ -x "$exe" ]; then candidates+=("$exe"); fi
done
for exe in "${candidates[@]}"; do
    # A pyenv shim for a version that is not selected fails here and is skipped.
    version="$("$exe" -c 'import sys; print("%d.%02d.%03d" % sys.version_info[:3])' 2> /dev/null)" || continue
    if [[ "$version" > "3.11.999" ]] && [[ -z "$best" || "$version" > "$best_version" ]]; then
        best="$exe" best_version="$version"
    fi
done
if [ -z "$best" ]; then
    echo "test-newest: no Python >= 3.12 found on PATH or under pyenv; the newest-JAX leg cannot run" >&2
    exit 1
fi
if ! "$best" -c 'import venv, ensurepip' 2> /dev/null; then
    echo "test-newest: $best cannot make a venv (no venv/ensurepip module)" >&2
    exit 1
fi
echo "test-newest: $best ($("$best" --version 2>&1)), newest jax, venv .venv-newest"
export AXISCHECK_PYTHON="$best" AXISCHECK_VENV="$root/.venv-newest" AXISCHECK_NEWEST_JAX=1
exec bash "$root/scripts/test.sh" "$@"
