"""The benchmark script runs (quick mode), so it cannot rot. It asserts nothing about times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # runs the benchmark script in a subprocess
BENCH = ROOT / "benchmarks" / "bench.py"

GROUPS = {
    "construct",
    "inline",
    "eager",
    "predict",
    "shard_map",
    "leaves",
    "failure",
    "model",
    "draws",
    "memory",
    "jit",
    "import",
    "monte_carlo",
    "jaxtyping",
    "lint",
}


def test_benchmark_script_runs_in_quick_mode(tmp_path: Path) -> None:
    out, table = tmp_path / "bench.json", tmp_path / "table.md"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json", str(out), "--markdown", str(table)],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    assert proc.stdout.splitlines()[1].split() == ["what", "jax", "axischeck", "ratio", "target", "met?"]
    assert "predict, new transform + new shapes (signature)" in proc.stdout
    assert "targets met:" in proc.stdout
    results = json.loads(out.read_text())
    assert GROUPS <= set(results)
    assert results["predict"]["sig_speedup_first_sight"] > 0
    assert results["predict"]["nosig_speedup_repeated"] > 0
    for tag in ("sig", "nosig"):
        for name in ("vmap", "pmap", "shard_map"):
            assert results["construct"][f"{name}_{tag}_ratio"] > 0
        assert f"{tag}_overhead_us" in results["inline"]
        assert f"{tag}_overhead_us" in results["eager"]
        assert results["failure"][f"{tag}_predict_us"] > 0
        assert results["failure"][f"{tag}_call_us"] > 0
    assert results["shard_map"]["speedup_first_sight_new_transform"] > 0
    assert results["draws"]["mlp_first_ax_us"] > 0 and results["draws"]["analysis_us"] > 0
    assert {"parse_per_input_growth", "error_signature_1000_us_per_leaf", "str_prediction_1000_us"} <= set(
        results["leaves"]
    )
    assert {"mlp_jit_ax_us", "pmap_first_ax_us", "pmap_steady_ax_us"} <= set(results["model"])
    assert results["model"]["pmap_leaves"] > 0
    for kind in ("predict_sig", "predict_nosig", "inline", "train"):
        for side in ("jax", "ax"):
            assert f"{kind}_{side}_growth_mb" in results["memory"]
    assert results["jit"]["jit_ratio"] > 0
    rows = results["table"]
    assert {row["group"] for row in rows} == GROUPS
    assert all(set(row) == {"group", "what", "jax", "ax", "ratio", "target", "met", "signature"} for row in rows)
    assert any(row["met"] is not None for row in rows)
    assert table.read_text().startswith("| what | jax | axischeck | ratio | target | signature | met |")


def test_only_runs_the_groups_named(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "jit,failure", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    results = json.loads(out.read_text())
    assert {"jit", "failure"} <= set(results)
    assert not (GROUPS - {"jit", "failure"}) & set(results)
    assert {row["group"] for row in results["table"]} == {"jit", "failure"}


def test_only_refuses_unknown_groups() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--only", "jit,nonesuch"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 2
    assert "unknown group(s) nonesuch" in proc.stderr


def test_lsp_benchmark_runs(tmp_path: Path) -> None:
    """bench_lsp.py starts the server, edits a file and reads the server's memory."""
    pytest.importorskip("pygls", reason="needs the lsp extra (pygls), which the dev extra installs")
    out = tmp_path / "lsp.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_lsp.py"),
            "--lines",
            "200",
            "--edits",
            "6",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result = json.loads(out.read_text())
    assert result["lines"] >= 200 and result["edits"] == 6
    # Every other edit adds a finding and the next removes it: the diagnostics follow.
    assert result["findings_on_open"] == 0 and result["findings_alternate"] == [0, 1]
    assert result["change_to_diagnostics_ms_median"] > 0 and result["rss_mb_after_all"] > 0
