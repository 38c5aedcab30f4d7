"""The benchmark script runs (quick mode), so it cannot rot. It asserts nothing about times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_benchmark_script_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert "ax predict, first sight of shapes" in proc.stdout
    results = json.loads(out.read_text())
    assert {"predict", "eager", "jit", "shard_map", "scale", "import", "monte_carlo"} <= set(results)
    assert results["predict"]["speedup_first_sight"] > 0
