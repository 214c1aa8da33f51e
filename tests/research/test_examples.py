"""docs/research.md's worked example (train a policy, submit it) and the research benchmark, run small."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from polignac import preset
from polignac.envs.encoding import ACTIONS, observation_size
from polignac_arena.referee import TimeControl
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.seats.sandbox import SandboxLauncher
from tests.aio import run_sync
from tests.research.common import need_openspiel, need_pettingzoo

ROOT = Path(__file__).resolve().parents[2]


def test_the_worked_example_trains_a_policy_and_its_folder_plays_in_the_sandbox(tmp_path: Path) -> None:
    need_pettingzoo()
    pytest.importorskip("torch", reason="PyTorch is not installed (pip install -e '.[train]'; .ci/run installs it)")
    out = tmp_path / "trained-policy"
    script = ROOT / "examples" / "research" / "train_policy.py"
    args = ["--minutes", "0.05", "--out", str(out), "--eval-hands", "8", "--batch", "8", "--rules", "knaves"]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "uniform random policy" in done.stdout and f"submission written to {out}" in done.stdout
    weights = np.load(out / "weights.npz")
    assert weights["w1"].shape == (observation_size(3), 64) and weights["w2"].shape == (64, ACTIONS)
    submission = resolve_bot(str(out))
    assert submission.name == "trained-policy" and submission.games == ("knaves",)
    again = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 2 and "exists" in again.stderr  # an existing folder is never overwritten
    reason = SandboxLauncher().unavailable()
    if reason is not None:
        pytest.skip(f"the bubblewrap sandbox is not usable here: {reason}")
    bots = [submission, resolve_bot("heuristic"), resolve_bot("random")]
    clock = TimeControl(move_ms=1000, bank_ms=10_000, startup_ms=30_000)
    result, stderr = run_sync(run_local_match(bots, preset("knaves", limit=5), 3, clock, seat_kind="process"))
    assert result.status == "finished" and sum(result.faults[0].values()) == 0, (result.faults, stderr)


def test_the_research_benchmark_measures_both_environments_and_hearts() -> None:
    need_pettingzoo()
    need_openspiel()
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "research.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    for framework in ("pettingzoo", "openspiel", "hearts"):
        assert result[f"{framework}_steps_per_s"] > 0 and result[f"{framework}_episodes_per_s"] > 0, framework
    assert result["openspiel_vs_hearts_steps"] == pytest.approx(result["openspiel_steps_per_s"] / result["hearts_steps_per_s"])
