"""Run the real-bug corpus (tests/realbugs) and print how axischeck's advice measures up.

    python scripts/realbugs_report.py [--verbose] [--no-lint] [--heldout]

`--heldout` scores the held-out set (tests/realbugs/heldout) instead of the tuning set.

For each case: does axischeck's message add a fact JAX's own message lacks, is its top
fix the real fix (or does it compute what the real fix computes), how many of the fixes it
offers compute something else, and (with the linter) does lint point at the buggy line.
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "realbugs"))

from harness import (  # noqa: E402
    CASES,
    HELDOUT,
    Case,
    applicable,
    fix_texts,
    fixes,
    load_cases,
    real_fix_options,
    run_checked,
    run_plain,
    run_with_fix,
    same_values,
)


def _lint(paths: list[Path]) -> dict[str, set[int]] | None:
    """Lines with findings per file, from `python -m axischeck lint --format json`."""
    done = subprocess.run(
        [sys.executable, "-m", "axischeck", "lint", "--no-config", "--format", "json", *map(str, paths)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    if done.returncode == 2:
        return None
    found: dict[str, set[int]] = {}
    for finding in json.loads(done.stdout or "[]"):
        found.setdefault(str(Path(finding["path"]).resolve()), set()).add(int(finding["line"]))
    return found


def _row(case: Case, verbose: bool) -> dict[str, object]:
    plain = run_plain(case.buggy)
    checked = run_checked(case.buggy)
    expected = run_plain(case.fixed).result
    text = checked.text()
    jax_text = plain.text()
    said = [f for f in case.facts if re.search(f, text)]
    added = [f for f in said if not re.search(f, jax_text)]
    offered = [f for f in fixes(checked) if applicable(f)]
    results = []
    for fix in offered:
        outcome = run_with_fix(case.buggy, fix)
        results.append(outcome.error is None and same_values(outcome.result, expected))
    real = real_fix_options(case)
    top_right = bool(offered) and (results[0] or (real is not None and offered[0].options == real))
    row = {
        "case": case.name,
        "transform": case.transform,
        "symptom": case.symptom,
        "says": bool(text),
        "facts": f"{len(said)}/{len(case.facts)}",
        "facts_said": len(said),
        "facts_total": len(case.facts),
        "adds_fact": bool(added),
        "fixes": len(offered),
        "text_fixes": len(fix_texts(checked.error)),
        "top_fix_right": top_right,
        "wrong_fixes": results.count(False),
    }
    if verbose:
        print(f"=== {case.name}")
        print("JAX:", jax_text[:600])
        print("axischeck:", text[:2500])
        for fix, ok in zip(offered, results, strict=True):
            print("  fix", "OK " if ok else "BAD", fix.text, fix.options)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--no-lint", action="store_true")
    parser.add_argument("--heldout", action="store_true", help="score the held-out set")
    parser.add_argument("cases", nargs="*", help="case folder names (default: all)")
    args = parser.parse_args()
    cases = [c for c in load_cases(HELDOUT if args.heldout else CASES) if not args.cases or c.name in args.cases]
    for case in (c for c in cases if c.fixed_by_jax):
        print(f"{case.name}: not scored (jax {case.jax_fixed_in} fixed this bug itself)")
    cases = [c for c in cases if not c.fixed_by_jax]
    rows = [_row(case, args.verbose) for case in cases]

    width = max(len(str(r["case"])) for r in rows)
    print(f"{'case':<{width}}  says  facts  adds  fixes  top-right  wrong")
    for r in rows:
        top = "yes" if r["top_fix_right"] else ("no" if r["fixes"] else "-")
        print(
            f"{r['case']:<{width}}  {'yes' if r['says'] else 'no':<4}  {r['facts']:<5}  "
            f"{'yes' if r['adds_fact'] else 'no':<4}  {r['fixes']:<5}  {top:<9}  {r['wrong_fixes']}"
        )

    n = len(rows)
    kinds: dict[tuple[str, str], int] = {}
    for case in cases:
        kinds[case.transform, case.symptom] = kinds.get((case.transform, case.symptom), 0) + 1
    every_fact = sum(r["facts_said"] == r["facts_total"] for r in rows)
    option_fixes = {c.name for c in cases if real_fix_options(c) is not None or c.real_fix.startswith("in_specs")}
    top_real = sum(bool(r["top_fix_right"]) for r in rows if r["case"] in option_fixes)
    wrong = sum(int(str(r["wrong_fixes"])) for r in rows)
    print()
    print(f"cases: {n}  " + ", ".join(f"{t}/{s}: {k}" for (t, s), k in sorted(kinds.items())))
    print(f"axischeck says something: {sum(bool(r['says']) for r in rows)}/{n}")
    print(f"message states every recorded fact: {every_fact}/{n}")
    print(f"message adds a true fact JAX's message lacks: {sum(bool(r['adds_fact']) for r in rows)}/{n}")
    fix_lines = sum(bool(r["text_fixes"]) for r in rows)
    print(f"a Fix line: {fix_lines}/{n}; a checkable one: {sum(bool(r['fixes']) for r in rows)}/{n}")
    print(
        f"top fix equals or computes the real fix: {top_real}/{len(option_fixes)} (cases whose real fix is an option)"
    )
    print(f"top fix computes fixed.py's result: {sum(bool(r['top_fix_right']) for r in rows)}/{n}")
    print(f"wrong checked fixes: {wrong} in {sum(bool(r['wrong_fixes']) for r in rows)} cases")

    if not args.no_lint:
        found = _lint([c.folder for c in cases])
        if found is None:
            print("lint: not available")
            return
        targets = [c for c in cases if c.lint_line > 0]
        hit = sum(c.lint_line in found.get(str(c.buggy.resolve()), set()) for c in targets)
        anywhere = sum(bool(found.get(str(c.buggy.resolve()))) for c in targets)
        noisy = sum(len(found.get(str(c.fixed.resolve()), set())) for c in cases)
        print(f"lint: {hit}/{len(targets)} buggy.py flagged on the recorded line ({anywhere} anywhere)")
        print(f"lint: findings on fixed.py files: {noisy}")


if __name__ == "__main__":
    main()
