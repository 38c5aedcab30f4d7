"""The real-bug corpus: axis bugs rebuilt from public reports, run under plain JAX and
under axischeck's patch (see harness.py for the case format).

The records of both sets (the tuning set `cases/` and the held-out set `heldout/`) are
checked here: each buggy.py shows its symptom and each real fix computes fixed.py's result.
What axischeck says of a buggy program (3 and 4 below) is tested on the tuning set; the
held-out set is scored apart, by `scripts/realbugs_report.py --heldout`.

For every case:
1. fixed.py gives the same bits under plain JAX and under axischeck;
2. buggy.py shows the recorded symptom under plain JAX (JAX's error, or a silently
   different result);
3. under axischeck, buggy.py's message states every recorded fact;
4. every fix axischeck offers, applied, computes what fixed.py computes.
Where axischeck falls short of 3 or 4 today, the case's `[known_gap]` says how, and the
test is a strict xfail.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from harness import (
    HELDOUT,
    LIBRARY_TRANSFORMS,
    OPTIONS,
    TRANSFORMS,
    Case,
    applicable,
    fixes,
    load_cases,
    real_fix,
    run_checked,
    run_plain,
    run_with_fix,
    same_bits,
    same_values,
)

import axischeck as ax

CASES = load_cases()
RECORDS = CASES + load_cases(HELDOUT)


def _on_devices(case: Case) -> list[Any]:
    """A case of a transform over devices runs on the suite's 8 CPU devices: skipped where
    fewer exist."""
    devices = any(kind in case.transform for kind in ("pmap", "shard_map", "smap"))
    return [pytest.mark.devices(8)] if devices else []


def _params(gap: str) -> list[Any]:
    out = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=getattr(case, gap))] if getattr(case, gap) else []
        if case.fixed_by_jax:  # nothing to say: `test_buggy_symptom` checks it runs as under JAX
            marks = [pytest.mark.skip(reason=f"jax {case.jax_fixed_in} fixed this bug itself")]
        out.append(pytest.param(case, id=case.name, marks=[*marks, *_on_devices(case)]))
    return out


def _ids(runs: bool = True) -> list[Any]:
    """Every record; `runs`: the test runs the case's programs (on devices, for some)."""
    return [
        pytest.param(case, id=f"{case.folder.parent.name}/{case.name}", marks=_on_devices(case) if runs else [])
        for case in RECORDS
    ]


def test_corpus_size() -> None:
    assert len(CASES) >= 30
    assert {"vmap", "pmap", "shard_map", "smap"} <= {case.transform for case in CASES}
    assert {case.symptom for case in CASES} == {"error", "silent"}


def test_sets_are_disjoint() -> None:
    """A report is in one set only: a held-out case that was tuned to moves to `cases/`."""
    assert not {c.url for c in load_cases(HELDOUT)} & {c.url for c in CASES}


@pytest.mark.parametrize("case", _ids(runs=False))
def test_case_record(case: Case) -> None:
    assert case.url.startswith("https://")
    assert case.transform in TRANSFORMS or case.transform in LIBRARY_TRANSFORMS
    assert case.symptom in ("error", "silent")
    assert case.symptom == "silent" or case.jax_error
    assert case.facts, "every case records what a good message says"
    lines = case.buggy.read_text().splitlines()
    assert 0 <= case.lint_line <= len(lines)


@pytest.mark.parametrize("case", _ids())
def test_real_fix_is_fixed_py(case: Case) -> None:
    """The recorded real fix, applied to buggy.py, computes what fixed.py computes."""
    fix = real_fix(case)
    if fix is None:
        assert not case.real_fix.startswith(OPTIONS), f"unreadable real_fix: {case.real_fix}"
        return
    outcome = run_with_fix(case.buggy, fix)
    assert outcome.error is None, outcome.text()
    assert same_values(outcome.result, run_plain(case.fixed).result)


@pytest.mark.parametrize("case", _ids())
def test_fixed_agrees(case: Case) -> None:
    plain = run_plain(case.fixed)
    checked = run_checked(case.fixed)
    assert plain.error is None, plain.text()
    assert checked.error is None, checked.text()
    assert same_bits(plain.result, checked.result)


@pytest.mark.parametrize("case", _ids())
def test_fixed_draws_are_not_shared(case: Case) -> None:
    """A fixed program gives no `SharedRandomnessWarning`: its random draws differ along
    the map (for the cases of that class, the buggy program's warning is among the facts)."""
    checked = run_checked(case.fixed)
    assert not [w for w in checked.warnings if w.startswith("SharedRandomnessWarning")], checked.text()


@pytest.mark.parametrize("case", _ids())
def test_buggy_symptom(case: Case) -> None:
    plain = run_plain(case.buggy)
    if case.fixed_by_jax:  # this JAX runs it: so must axischeck, with the same result
        checked = run_checked(case.buggy)
        assert plain.error is None and checked.error is None, (plain.text(), checked.text())
        assert same_bits(plain.result, checked.result)
        return
    if case.symptom == "error":
        assert plain.error is not None, "the bug no longer raises in JAX"
        assert re.search(case.jax_error, plain.text()), plain.text()
    else:
        assert plain.error is None, plain.text()
        fixed = run_plain(case.fixed).result
        assert not same_values(plain.result, fixed), "the silent bug gives the fixed result"


@pytest.mark.parametrize("case", _params("gap_facts"))
def test_axischeck_states_the_facts(case: Case) -> None:
    checked = run_checked(case.buggy)
    if case.symptom == "error":
        plain = run_plain(case.buggy)
        assert checked.error is not None
        assert isinstance(checked.error, (ax.AxisCheckError, type(plain.error))), checked.text()
    text = checked.text()
    assert text, "axischeck says nothing"
    missing = [fact for fact in case.facts if not re.search(fact, text)]
    assert not missing, f"missing {missing} in:\n{text}"


def _heldout() -> list[Any]:
    """The held-out cases, for the one check that holds on every case whatever its score:
    no fix offered computes something else."""
    return [
        pytest.param(
            case,
            id=f"heldout/{case.name}",
            marks=[
                *_on_devices(case),
                *([pytest.mark.skip(reason="fixed by jax itself")] if case.fixed_by_jax else []),
            ],
        )
        for case in RECORDS[len(CASES) :]
    ]


@pytest.mark.parametrize("case", _params("gap_fix") + _heldout())
def test_no_wrong_fix(case: Case) -> None:
    checked = run_checked(case.buggy)
    offered = [fix for fix in fixes(checked) if applicable(fix)]
    expected = run_plain(case.fixed).result
    wrong = []
    for fix in offered:
        outcome = run_with_fix(case.buggy, fix)
        if outcome.error is not None or not same_values(outcome.result, expected):
            wrong.append(fix.text)
    assert not wrong, f"fixes that do not compute fixed.py's result: {wrong}"
