"""Smoke test of benchmarks/ratings.py: a quick run (seconds when idle) prints one JSON object with every figure it promises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "ratings.py"


def test_ratings_benchmark_quick_run() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "sdk"), str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["params"]) == {"today", "shipped"}
    assert set(report["families"]) == {"random-play", "deterministic"}
    for row in report["families"].values():
        for schedule in ("round_robin", "duplicate", "ladder", "league"):
            for label in ("today", "shipped"):
                figures = row[schedule][label]
                assert figures["median"] is None or figures["median"] >= 0
                assert 0 <= figures["settled_share"] <= 1
        assert 0 <= row["ladder"]["shipped"]["exact_share"] <= 1 and 0 <= row["league"]["today"]["exact_share"] <= 1
        assert row["pool_matches"]["scheduled"] > 0


def test_ratings_benchmark_refuses_bad_options() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--seeds", "0"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert "--seeds must be at least 1, got 0" in done.stderr
