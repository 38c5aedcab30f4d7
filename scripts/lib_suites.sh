#!/usr/bin/env bash
# Run JAX libraries' own tests plainly and with `pytest --axischeck`, and print the pass and
# fail counts of each mode: the drop-in promise, measured on code axischeck's authors did not
# write.
#
#   scripts/lib_suites.sh [pytest args...]
#
# LIB_SUITES: which libraries (default "optax equinox flax numpyro"). Everything lives under
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
# - flax, at $FLAX_VERSION (default 0.12.8): its source distribution (which has the tests),
#   fetched as optax's; needs absl-py and cloudpickle. Files: the tests under tests/nnx that call nnx.vmap,
#   nnx.pmap, jax.vmap or jax.pmap (Flax NNX's transforms and what they build on).
# - numpyro, at $NUMPYRO_VERSION (default 0.22.0): its source distribution (tests under
#   test/), and its wheel with multipledispatch and tqdm installed under $LIB_SUITES_DIR.
#   Files: the tests that call vmap or pmap (of test_distributions.py, the seven tests
#   that map; its other thousands of parametrized cases are left out).
#
# Opt-in (not in the default LIB_SUITES: each mode runs for about five minutes of one
# core's time, longer on a shared machine), as LIB_SUITES="blackjax diffrax lineax":
# - blackjax, at $BLACKJAX_VERSION (default 1.7.1): its source distribution (which has the
#   tests), fetched as optax's; needs chex and toolz. Its pytest.ini turns warnings into
#   errors, in both modes. Files: the tests that call jax.vmap, jax.pmap or jax.shard_map;
#   of them, the tests whose own code maps (the plugin tests/lib_suites/
#   axischeck_lib_mapping.py deselects the rest, most of them long statistical checks of
#   samplers).
# - diffrax, at $DIFFRAX_VERSION (default 0.7.2): its wheel, with lineax
#   ($LINEAX_VERSION), optimistix ($OPTIMISTIX_VERSION, default 0.1.0) and tqdm. Its tests
#   are not in the release: $DIFFRAX_TESTS names the `test` folder of a checkout of that
#   release (skipped, saying so, when it is unset). Its addopts (jaxtyping's beartype hook)
#   are left out in both modes. Files: those that call a map, but test_adjoint.py (its one
#   such test compiles for over ten minutes); of them, the tests whose own code maps.
# - lineax, at $LINEAX_VERSION (default 0.1.1): its wheel. Its tests are not in the
#   release: $LINEAX_TESTS names the `tests` folder of a checkout of that release (skipped
#   when unset); addopts left out as Diffrax's. Files: test_vmap.py whole, and the tests of
#   test_invert.py, test_misc.py and test_solve.py whose own code maps (not
#   test_vmap_jvp.py and test_vmap_vmap.py: test_vmap.py's cases again, under a second
#   transform).
#
# Each run lists every SharedRandomnessWarning it gave (`lib_suites: ...` lines, from the
# plugin tests/lib_suites/axischeck_lib_report.py): warned, or raised where a library's
# configuration turns warnings into errors.
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
      echo "$name $mode (${#files[@]} files): exit $rc: $(grep -E '(passed|failed|error).* in [0-9.]+s' "$out" | tail -n 1)"
      grep '^lib_suites:' "$out" | sed 's/^/  /'
      echo "  failed: $(grep -c '^FAILED' "$out"), errors: $(grep -c '^ERROR' "$out")"
    done
    exit $status
  )
}

# sdist_of NAME VERSION: the library's source distribution, unpacked read-only under $dir.
sdist_of() {
  local src=$dir/$1-$2
  if [[ ! -d $src ]]; then
    "$python" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
      "$1==$2" -d "$dir" || return 2
    tar -xzf "$dir/$1-$2.tar.gz" -C "$dir" || return 2
    chmod -R a-w "$src"
  fi
  echo "$src"
}

optax_suite() {
  local version=${OPTAX_VERSION:-0.2.8} src deps files
  src=$(sdist_of optax "$version") || return 2
  deps=$dir/optax-deps
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

flax_suite() {
  local version=${FLAX_VERSION:-0.12.8} src deps files
  src=$(sdist_of flax "$version") || return 2
  deps=$dir/flax-deps
  [[ -d $deps/cloudpickle ]] || pip_target "$deps" absl-py cloudpickle || return 2
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    mapfile -t files < <(cd "$src" && grep -rlE "nnx\.(vmap|pmap)|jax\.(vmap|pmap)" --include='*_test.py' tests/nnx | sort)
  fi
  run_modes flax "$src" "$deps" "${files[@]}" -- "$@"
}

numpyro_suite() {
  local version=${NUMPYRO_VERSION:-0.22.0} src deps files
  src=$(sdist_of numpyro "$version") || return 2
  deps=$dir/numpyro-$version-deps
  if [[ ! -d $deps/numpyro ]]; then
    pip_target "$deps" "numpyro==$version" multipledispatch tqdm || return 2
    chmod -R a-w "$deps"
  fi
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    # The tests that call vmap or pmap: whole files, and of test_distributions.py (thousands
    # of parametrized cases) the tests that map.
    mapfile -t files < <(cd "$src" && grep -rlE "\b(vmap|pmap)\(" --include='test_*.py' test | grep -v test_distributions.py | sort)
    local mapped
    for mapped in test_vmap_dist test_vmap_validate_args test_vmapped_binomial_p0 \
      test_promote_batch_shape_expanded_preserves_input test_promote_batch_shape_shares_data_and_preserves_input \
      test_log_prob_LKJCholesky test_kl_multivariate_normal_consistency_with_independent_normals; do
      files+=("test/test_distributions.py::$mapped")
    done
  fi
  run_modes numpyro "$src" "$deps" "${files[@]}" -- "$@"
}

blackjax_suite() {
  local version=${BLACKJAX_VERSION:-1.7.1} src deps files
  src=$(sdist_of blackjax "$version") || return 2
  deps=$dir/blackjax-deps
  [[ -d $deps/chex ]] || pip_target "$deps" chex toolz || return 2
  local only=()
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    # Of the files that call jax's maps, the tests whose own code maps (axischeck_lib_mapping
    # deselects the rest: most of these files' tests check samplers' statistics at length).
    mapfile -t files < <(cd "$src" && grep -rlE "jax\.(vmap|pmap|shard_map)|from jax import .*(vmap|pmap)" \
      --include='test_*.py' tests | sort)
    only=(-p axischeck_lib_mapping --lib-suites-mapping)
  fi
  run_modes blackjax "$src" "$deps" "${files[@]}" -- "${only[@]}" "$@"
}

diffrax_suite() {
  local version=${DIFFRAX_VERSION:-0.7.2} deps files only=()
  if [[ -z ${DIFFRAX_TESTS:-} ]]; then
    echo "diffrax $version: skipped (set DIFFRAX_TESTS to the test folder of a checkout of diffrax v$version)"
    return 0
  fi
  deps=$dir/diffrax-$version-deps
  if [[ ! -d $deps/diffrax ]]; then
    pip_target "$deps" "diffrax==$version" "lineax==${LINEAX_VERSION:-0.1.1}" "optimistix==${OPTIMISTIX_VERSION:-0.1.0}" tqdm || return 2
    chmod -R a-w "$deps"
  fi
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    # Of the files that call a map, the tests whose own code maps (axischeck_lib_mapping);
    # not test_adjoint.py, whose one such test (test_against, marked slow) compiles for
    # over ten minutes, and crashed XLA's CPU compiler (a segmentation fault) on jax 0.10.2.
    mapfile -t files < <(cd "$DIFFRAX_TESTS/.." && grep -lE "vmap|pmap|shard_map" test/test_*.py |
      grep -v test_adjoint.py | sort)
    only=(-p axischeck_lib_mapping --lib-suites-mapping)
  fi
  run_modes diffrax "$(dirname "$DIFFRAX_TESTS")" "$deps" "${files[@]}" -- "${only[@]}" "$@"
}

lineax_suite() {
  local version=${LINEAX_VERSION:-0.1.1} deps files only=()
  if [[ -z ${LINEAX_TESTS:-} ]]; then
    echo "lineax $version: skipped (set LINEAX_TESTS to the tests folder of a checkout of lineax v$version)"
    return 0
  fi
  deps=$dir/lineax-$version-deps
  if [[ ! -d $deps/lineax ]]; then
    pip_target "$deps" "lineax==$version" || return 2
    chmod -R a-w "$deps"
  fi
  if [[ -n ${LIB_SUITE_FILES:-} ]]; then
    read -r -a files <<< "$LIB_SUITE_FILES"
  else
    # Of the files that call a map, the tests whose own code maps (axischeck_lib_mapping);
    # not test_vmap_jvp.py and test_vmap_vmap.py, which run test_vmap.py's 336 cases again
    # under a second transform, each as long again.
    mapfile -t files < <(cd "$LINEAX_TESTS/.." && grep -lE "vmap|pmap|shard_map" tests/test_*.py |
      grep -vE "test_vmap_(jvp|vmap).py" | sort)
    only=(-p axischeck_lib_mapping --lib-suites-mapping)
  fi
  run_modes lineax "$(dirname "$LINEAX_TESTS")" "$deps" "${files[@]}" -- "${only[@]}" "$@"
}

main() {
  local lib status=0 rc
  mkdir -p "$dir"
  for lib in ${LIB_SUITES:-optax equinox flax numpyro}; do
    "${lib}_suite" "$@"
    rc=$?
    (( rc > status )) && status=$rc
  done
  return $status
}

main "$@"
exit $?
