#!/usr/bin/env bash
# Run JAX's own transform tests with jax.vmap/pmap/shard_map/smap swapped for axischeck's.
#
#   scripts/jax_suite.sh PATH_TO_JAX_TESTS [baseline|swapped] [pytest args...]
#
# PATH_TO_JAX_TESTS is the `tests/` directory of a JAX checkout matching the installed jax
# (kept outside this repo).  Each of the six files runs in its own pytest process, with the
# plugin tests/jax_suite/axischeck_jax_swap.py loaded in both modes (it only acts in
# `swapped`), so the two runs differ by the swap alone.  Results (junit xml + `-rA` text)
# go to $JAX_SUITE_OUT/<mode>/ (default /tmp/axischeck-jax-suite).  See tests/jax_suite/README.md.
set -uo pipefail

# All in one function: bash parses it whole, so editing this file mid-run is safe.
main() {
  local here tests_dir mode python root out config files status f name start rc
  if [[ $# -lt 1 ]]; then
    echo "usage: $0 PATH_TO_JAX_TESTS [baseline|swapped] [pytest args...]" >&2
    return 2
  fi
  tests_dir=$(cd "$1" && pwd) || return 2
  mode=${2:-baseline}
  shift $(( $# >= 2 ? 2 : 1 ))
  case "$mode" in baseline|swapped) ;; *) echo "mode must be baseline or swapped, not '$mode'" >&2; return 2 ;; esac

  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  python=${PYTHON:-$here/.venv/bin/python}
  root=$(dirname "$tests_dir")
  out=${JAX_SUITE_OUT:-/tmp/axischeck-jax-suite}/$mode
  mkdir -p "$out"

  # The settings JAX's own CPU CI uses (.github/workflows/ci-build.yaml at jax-v0.10.2):
  # one generated case per parameterized family, slow tests skipped; 8 forced host devices
  # for the pmap / shard_map tests.
  export XLA_FLAGS="${XLA_FLAGS:-} --xla_force_host_platform_device_count=8"
  export JAX_PLATFORMS=${JAX_PLATFORMS:-cpu}
  export JAX_NUM_GENERATED_CASES=${JAX_NUM_GENERATED_CASES:-1}
  export JAX_SKIP_SLOW_TESTS=${JAX_SKIP_SLOW_TESTS:-true}
  # AXISCHECK_SRC: measure a frozen copy of src/ instead of the live tree (default: ./src).
  export PYTHONPATH="$here/tests/jax_suite:${AXISCHECK_SRC:-$here/src}${PYTHONPATH:+:$PYTHONPATH}"
  if [[ $mode == swapped ]]; then export AXISCHECK_JAX_SWAP=1; else unset AXISCHECK_JAX_SWAP; fi

  # JAX's pytest settings (filterwarnings=error, importlib mode) come from its pyproject.toml.
  # The dev extra's pytest-asyncio and pytest-lsp (for axischeck's own server tests) are not
  # JAX's plugins: left out (pytest-asyncio warns under JAX's settings, which fails them).
  config=()
  [[ -f $root/pyproject.toml ]] && config=(-c "$root/pyproject.toml")

  files=(${JAX_SUITE_FILES:-batching_test.py pmap_test.py shard_map_test.py api_test.py lax_vmap_test.py lax_vmap_op_test.py})
  status=0
  cd "$root" || return 2
  for f in "${files[@]}"; do
    name=${f%.py}
    start=$(date +%s)
    "$python" -m pytest "${config[@]}" --rootdir "$root" -p axischeck_jax_swap -p no:cacheprovider \
      -p no:asyncio -p no:pytest-lsp \
      -q -rA --junitxml "$out/$name.xml" "$tests_dir/$f" "$@" > "$out/$name.txt" 2>&1
    rc=$?
    (( rc > 1 )) && status=$rc
    (( rc == 1 && status == 0 )) && status=1
    echo "$mode $f: exit $rc in $(( $(date +%s) - start ))s: $(tail -n 1 "$out/$name.txt")"
  done
  return $status
}

main "$@"
exit $?
