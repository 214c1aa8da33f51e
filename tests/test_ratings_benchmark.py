"""Smoke test of benchmarks/ratings.py: a quick run (seconds when idle) prints one JSON object with every figure it promises."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        for schedule in ("ladder", "league"):
            runs = row[schedule]["shipped"]
            assert len(runs["exact_from"]) == len(runs["final_tau"])
            assert all((start is None) == (tau < 1.0) for start, tau in zip(runs["exact_from"], runs["final_tau"], strict=True))
        assert set(row["place_variance"]) == {"bots", "seats", "rest"}
        assert abs(sum(row["place_variance"].values()) - 1) < 0.01


@functools.cache
def _bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("ratings_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ratings_bench"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_exact_from_is_the_start_of_the_last_exact_stretch() -> None:
    bench = _bench_module()
    tracker = bench.Tracker(["a", "b", "c"])
    for ratings in ([(20, 1), (25, 1), (10, 1)], [(25, 1), (20, 1), (10, 1)], [(20, 1), (25, 1), (10, 1)], [(25, 1), (20, 1), (10, 1)]):
        tracker.after(dict(zip("abc", ratings, strict=True)))
    assert tracker.exact_from == 3  # exact after matches 2 and 4, not after 3
    tracker.after({"a": (1, 1), "b": (20, 1), "c": (10, 1)})
    assert tracker.exact_from is None


def test_place_variance_puts_the_deal_s_luck_in_the_seats_share() -> None:
    bench = _bench_module()
    pool = bench.Pool(None, 1)
    levels = (0.0, 0.2, 0.4, 0.6)
    for rotation in range(4):
        seats = bench.seating(("", levels, 0, rotation))
        # Whoever holds seat s's cards finishes in place s + 1: only the deal decides.
        pool.results[("x", levels, 0, rotation)] = tuple(seats.index(level) + 1 for level in levels)
    assert bench.place_variance_shares(pool, levels) == {"bots": 0.0, "seats": 1.0, "rest": 0.0}
    for rotation in range(4):
        pool.results[("x", levels, 0, rotation)] = (1, 2, 3, 4)  # only the bots decide
    assert bench.place_variance_shares(pool, levels) == {"bots": 1.0, "seats": 0.0, "rest": 0.0}


def test_ratings_benchmark_refuses_bad_options() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--seeds", "0"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert "--seeds must be at least 1, got 0" in done.stderr
