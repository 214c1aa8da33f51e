"""Smoke test of benchmarks/store.py: a small run prints one JSON object with the promised keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_store_benchmark_writes_and_reports() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "store.py"), "--json", "--results", "30", "--bots", "12"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["results"], out["bots"]) == (30, 12)
    assert 0 < out["write_median_ms"] <= out["write_p99_ms"] and out["write_total_s"] > 0
