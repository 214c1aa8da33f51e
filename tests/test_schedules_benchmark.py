"""Smoke test of benchmarks/schedules.py: a quick run prints one JSON object with the promised figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_quick_run_reports_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "schedules.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "sdk"), str(ROOT / "server")])},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [row["rounds"] for row in report["round_robin"]] == [1, 3]
    assert all(row["fixtures"] > 0 and row["ms_per_fixture"] >= 0 and row["pair_spread"] <= 2 for row in report["round_robin"])
    assert report["duplicate"][0]["fixtures"] == 4 * report["round_robin"][0]["fixtures"]
    assert report["ladder_next"]["tables"] == 40 and report["ladder_next"]["meetings"]
    assert report["stored_schedule"]["fixtures"] == report["round_robin"][-1]["fixtures"]
