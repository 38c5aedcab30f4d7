#!/usr/bin/env bash
# Run a JAX library's own tests plainly and with `pytest --axischeck`, and print the pass and
# fail counts of each mode: the drop-in promise, measured on code axischeck's authors did not
# write.
#
#   scripts/lib_suites.sh [pytest args...]
#
# The library is Optax at a pinned release ($OPTAX_VERSION), its source distribution fetched
# with `pip download --no-binary :all: --no-deps` and unpacked under $LIB_SUITES_DIR (default
# /tmp/axischeck-lib-suites), made read-only, never inside this repo. Its one test-only
# dependency the project's venv lacks (absl-py, for absltest) is installed there with
# `pip install --target`, never into the venv. Optax's tests that need flax or scikit-learn
# fail to import in both modes alike when those are not installed.
#
# LIB_SUITE_FILES: test files relative to the source root (default: the ones that call
# jax.vmap, jax.pmap or jax.shard_map, where the patch changes something). Each mode runs in
# one pytest process; the output of each is kept in $LIB_SUITES_DIR/optax-<mode>.txt.
set -uo pipefail

# All in one function: bash parses it whole, so editing this file mid-run is safe.
main() {
  local here python version dir src deps files mode out rc status
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  python=${PYTHON:-$here/.venv/bin/python}
  version=${OPTAX_VERSION:-0.2.8}
  dir=${LIB_SUITES_DIR:-/tmp/axischeck-lib-suites}
  src=$dir/optax-$version
  deps=$dir/deps
  mkdir -p "$dir"

  if [[ ! -d $src ]]; then
    "$python" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
      "optax==$version" -d "$dir" || return 2
    tar -xzf "$dir/optax-$version.tar.gz" -C "$dir" || return 2
    chmod -R a-w "$src"
  fi
  if [[ ! -d $deps/absl ]]; then
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$deps" absl-py || return 2
  fi

  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    mapfile -t files < <(cd "$src" && grep -rlE "jax\.(vmap|pmap|shard_map)|from jax import .*(vmap|pmap)" \
      --include='*_test.py' optax | sort)
  fi

  # 8 forced host devices for pmap tests, as JAX's own CPU CI runs them.
  export XLA_FLAGS="${XLA_FLAGS:-} --xla_force_host_platform_device_count=8"
  export JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
  # axischeck from this tree (AXISCHECK_SRC: a frozen copy instead), ahead of the venv's
  # install; pytest loads the plugin through axischeck's pytest11 entry point.
  export PYTHONPATH="$src:$deps:$here/tests/lib_suites:${AXISCHECK_SRC:-$here/src}${PYTHONPATH:+:$PYTHONPATH}"

  status=0
  cd "$src" || return 2
  for mode in plain axischeck; do
    out=$dir/optax-$mode.txt
    # axischeck_lib_report (tests/lib_suites/) says whose jax.vmap the session ended with.
    local flags=(-p no:cacheprovider -p axischeck_lib_report -q -rfE)
    [[ $mode == axischeck ]] && flags+=(--axischeck)
    "$python" -m pytest "${flags[@]}" "${files[@]}" "$@" > "$out" 2>&1
    rc=$?
    (( rc > 1 )) && status=$rc
    echo "optax $version $mode (${#files[@]} files): exit $rc: $(tail -n 1 "$out")"
    echo "  $(grep -m1 '^lib_suites:' "$out")"
  done
  return $status
}

main "$@"
exit $?
