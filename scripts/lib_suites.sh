#!/usr/bin/env bash
# Run JAX libraries' own tests plainly and with `pytest --axischeck`, and print the pass and
# fail counts of each mode: the drop-in promise, measured on code axischeck's authors did not
# write.
#
#   scripts/lib_suites.sh [pytest args...]
#
# LIB_SUITES: which libraries (default "optax equinox"). Everything lives under
# $LIB_SUITES_DIR (default /tmp/axischeck-lib-suites), made read-only, never inside this repo;
# each library's test-only dependencies the project's venv lacks are installed there with
# `pip install --target`, never into the venv.
#
# - optax, at $OPTAX_VERSION (default 0.2.8): its source distribution (which has the tests),
#   fetched with `pip download --no-binary :all: --no-deps`; needs absl-py. Files: the
#   tests that call jax.vmap, jax.pmap or jax.shard_map. Tests that need flax or
#   scikit-learn fail to import in both modes alike when those are not installed.
# - equinox, at $EQUINOX_VERSION (default 0.13.8): its wheel from PyPI, with wadler_lindig
#   (jaxtyping is the venv's). Its tests are not in the release: $EQUINOX_TESTS names the
#   `tests` folder of a checkout of that release (skipped, saying so, when it is unset).
#   Its pytest addopts (a beartype-checked jaxtyping import hook) are left out in both
#   modes. Files: test_vmap.py, test_pmap.py and test_nn.py (its layers call filter_vmap).
#
# LIB_SUITE_FILES: test files relative to the library's test root, instead of the default
# (one library at a time). Each mode runs in one pytest process; the output of each is kept
# in $LIB_SUITES_DIR/<library>-<mode>.txt.
set -uo pipefail

# All in functions: bash parses them whole, so editing this file mid-run is safe.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
dir=${LIB_SUITES_DIR:-/tmp/axischeck-lib-suites}

pip_target() {  # pip_target DEST PACKAGE...: install without touching the venv
  "$python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$1" "${@:2}"
}

# run_modes NAME ROOT DEPS FILE... -- PYTEST_ARGS...: plain, then patched; prints counts.
run_modes() {
  local name=$1 root=$2 deps=$3 mode out rc status=0
  shift 3
  local files=() extra=()
  while (($#)) && [[ $1 != -- ]]; do files+=("$1"); shift; done
  (($#)) && shift
  extra=("$@")
  (
    # 8 forced host devices for pmap tests, as JAX's own CPU CI runs them.
    export XLA_FLAGS="${XLA_FLAGS:-} --xla_force_host_platform_device_count=8"
    export JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
    # axischeck from this tree (AXISCHECK_SRC: a frozen copy instead), ahead of the venv's
    # install; pytest loads the plugin through axischeck's pytest11 entry point.
    export PYTHONPATH="$root:$deps:$here/tests/lib_suites:${AXISCHECK_SRC:-$here/src}${PYTHONPATH:+:$PYTHONPATH}"
    cd "$root" || exit 2
    for mode in plain axischeck; do
      out=$dir/$name-$mode.txt
      # axischeck_lib_report (tests/lib_suites/) says whose jax.vmap the session ended with.
      # The dev extra's pytest-asyncio and pytest-lsp (axischeck's server tests) are not the
      # libraries' plugins: left out, so each suite runs with its own.
      local flags=(-p no:cacheprovider -p no:asyncio -p no:pytest-lsp -p axischeck_lib_report -o addopts= -q -rfE)
      [[ $mode == axischeck ]] && flags+=(--axischeck)
      "$python" -m pytest "${flags[@]}" "${files[@]}" "${extra[@]}" > "$out" 2>&1
      rc=$?
      (( rc > 1 )) && status=$rc
      echo "$name $mode (${#files[@]} files): exit $rc: $(tail -n 1 "$out")"
      echo "  $(grep -m1 '^lib_suites:' "$out")"
    done
    exit $status
  )
}

optax_suite() {
  local version=${OPTAX_VERSION:-0.2.8} src deps files
  src=$dir/optax-$version
  deps=$dir/optax-deps
  if [[ ! -d $src ]]; then
    "$python" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
      "optax==$version" -d "$dir" || return 2
    tar -xzf "$dir/optax-$version.tar.gz" -C "$dir" || return 2
    chmod -R a-w "$src"
  fi
  [[ -d $deps/absl ]] || pip_target "$deps" absl-py || return 2
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    mapfile -t files < <(cd "$src" && grep -rlE "jax\.(vmap|pmap|shard_map)|from jax import .*(vmap|pmap)" \
      --include='*_test.py' optax | sort)
  fi
  run_modes optax "$src" "$deps" "${files[@]}" -- "$@"
}

equinox_suite() {
  local version=${EQUINOX_VERSION:-0.13.8} deps files
  if [[ -z ${EQUINOX_TESTS:-} ]]; then
    echo "equinox $version: skipped (set EQUINOX_TESTS to the tests folder of a checkout of equinox v$version)"
    return 0
  fi
  deps=$dir/equinox-$version-deps
  if [[ ! -d $deps/equinox ]]; then
    pip_target "$deps" "equinox==$version" "wadler_lindig>=0.1.0" || return 2
    chmod -R a-w "$deps"
  fi
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    files=(tests/test_vmap.py tests/test_pmap.py tests/test_nn.py)
  fi
  run_modes equinox "$(dirname "$EQUINOX_TESTS")" "$deps" "${files[@]}" -- "$@"
}

main() {
  local lib status=0 rc
  mkdir -p "$dir"
  for lib in ${LIB_SUITES:-optax equinox}; do
    "${lib}_suite" "$@"
    rc=$?
    (( rc > status )) && status=$rc
  done
  return $status
}

main "$@"
exit $?
