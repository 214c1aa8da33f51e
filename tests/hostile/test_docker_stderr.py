"""A docker seat flooding stderr costs the other seats (and the arena) nothing measurable.

Seat 0 plays politely while ``yes`` writes its stderr as fast as the pipe takes it
(``bots/stderr_yes_flooder.py``); the same match, the same bot without the flood, is the baseline.
The arena keeps the cap and then reads the rest slowly, so the flood is held back at the bot.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
from pathlib import Path
from typing import Any, cast

import pytest

from polignac import preset
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatLimits
from polignac_arena.seats.docker import DockerLauncher
from polignac_arena.submission import Submission, builtin_submission, load_submission
from tests import docker_images as images
from tests.referee.helpers import run

BOTS = Path(__file__).parent / "bots"
CLOCK = TimeControl(move_ms=1000, bank_ms=2000, startup_ms=20_000)
LIMITS = SeatLimits(memory_mb=256, cpus=1.0, pids=48, cpu_seconds=120, stderr_bytes=32 << 10)


def flooder(tmp: Path, flood: bool) -> Submission:
    folder = tmp / ("flooder" if flood else "quiet")
    folder.mkdir(mode=0o755)
    script = "stderr_yes_flooder.py"
    (folder / script).write_text((BOTS / script).read_text())
    (folder / "params.json").write_text(json.dumps({"flood": flood}))
    (folder / "bot.toml").write_text(f'name = "flooder"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "{script}"]\n')
    return load_submission(folder)


def daemon_cpu_s() -> float:
    """CPU seconds used so far by dockerd and the containerd shims (shared with anything else the daemon does)."""
    ticks = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError, ValueError):
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            if name == "dockerd" or name.startswith("containerd-shim"):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def play(first: Submission) -> tuple[MatchResult, list[str], float, float]:
    """A 4-player match in docker seats, ``first`` in seat 0: the result, stderrs, the arena's and the daemon's CPU seconds."""
    bots = [first, builtin_submission("heuristic"), builtin_submission("cautious"), builtin_submission("heuristic")]
    before, daemon_before = resource.getrusage(resource.RUSAGE_SELF), daemon_cpu_s()
    result, stderrs = run(run_local_match(bots, preset("classic"), 5, CLOCK, launcher=DockerLauncher(), limits=LIMITS), timeout=240)
    after, daemon_after = resource.getrusage(resource.RUSAGE_SELF), daemon_cpu_s()
    arena = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, stderrs, arena, daemon_after - daemon_before


def polite_times(result: MatchResult) -> list[float]:
    return [float(cast(float, line["ms"])) for line in result.record if line["type"] == "action" and line.get("seat") != 0 and "ms" in line]


def p95(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.95 * len(values)))]


@pytest.mark.docker
def test_a_stderr_flood_costs_the_other_seats_and_the_arena_nothing(tmp_path: Path) -> None:
    problem = images.daemon_problem()
    if problem is not None:
        pytest.skip(problem)
    quiet, _, quiet_cpu, quiet_daemon = play(flooder(tmp_path, flood=False))
    flood, stderrs, flood_cpu, flood_daemon = play(flooder(tmp_path, flood=True))
    figures: dict[str, Any] = {
        "quiet_cpu_s": round(quiet_cpu, 2),
        "flood_cpu_s": round(flood_cpu, 2),
        "quiet_daemon_cpu_s": round(quiet_daemon, 2),  # not asserted: other users of the daemon count too
        "flood_daemon_cpu_s": round(flood_daemon, 2),
        "quiet_p95_ms": p95(polite_times(quiet)),
        "flood_p95_ms": p95(polite_times(flood)),
        "flood_median_ms": statistics.median(polite_times(flood)),
    }
    print(figures)
    assert quiet.status == flood.status == "finished", (quiet, flood)
    assert [line.get("action") for line in quiet.record if line["type"] == "action"] == [
        line.get("action") for line in flood.record if line["type"] == "action"
    ], "not the same match"
    assert flood.faults == [{}, {}, {}, {}], flood.faults  # the flooder too: its flood waits, its play does not
    head, _, note = stderrs[0].partition("\n[arena] ")
    assert head.startswith("stderr flood") and len(stderrs[0].encode()) <= LIMITS.stderr_bytes + 256, stderrs[0][:200]
    assert f"more bytes not kept (the cap is {LIMITS.stderr_bytes} bytes); the last " in note, note[:200]
    assert stderrs[0].endswith("stderr flood\n"), stderrs[0][-200:]  # its last whole line
    assert flood_cpu < 1.5 * quiet_cpu + 0.3, figures
    assert figures["flood_p95_ms"] < 2 * figures["quiet_p95_ms"] + 20, figures
