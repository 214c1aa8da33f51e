"""A seat that floods its stderr: capped, and the other seats and the arena do not pay for it.

The flooder (bots/stderr_flooder.py) plays politely while a thread writes its stderr as fast
as it can for the whole match.  Its seat's monitor passes the first ``stderr_bytes`` to the
arena and drops the rest itself, inside the seat's cgroups: the arena reads no more than the
cap, so the polite seats keep their pace.  The same match with the bot quiet is the baseline.
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import statistics
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from polignac import preset
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatContext, SeatLimits
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.submission import Submission, builtin_submission, load_submission
from tests.hostile.test_hostile import launcher_or_skip, leftover
from tests.referee.helpers import run

BOTS = Path(__file__).parent / "bots"
CLOCK = TimeControl(move_ms=400, bank_ms=300, startup_ms=15_000)
LIMITS = SeatLimits(memory_mb=256, cpus=1.0, pids=48, cpu_seconds=60, stderr_bytes=64 * 1024)
KINDS = [
    pytest.param("process", id="bubblewrap"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


@dataclass
class Measured:
    result: MatchResult
    stderr: str
    cpu_s: float
    """The arena's CPU time (user + system) for the match."""
    read_bytes: int
    """Bytes the arena's event loop read (rchar of its thread) during the match."""
    marker: str


def arena_read_bytes() -> int:
    """Bytes read by this thread, the arena's event loop (the process's count would add its reaped children's)."""
    for line in Path(f"/proc/self/task/{threading.get_native_id()}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def match(kind: str, tmp_path: Path, flood: bool) -> Measured:
    launcher = launcher_or_skip(kind)
    marker = f"hostile{uuid.uuid4().hex[:12]}"
    folder = tmp_path / marker
    folder.mkdir()
    script = f"{marker}.py"
    (folder / script).write_text((BOTS / "stderr_flooder.py").read_text())
    (folder / "params.json").write_text(json.dumps({"flood": "yes" if flood else "no"}))
    (folder / "bot.toml").write_text(f'name = "stderr-flooder"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "{script}"]\n')
    bots = [load_submission(folder), builtin_submission("random"), builtin_submission("heuristic"), builtin_submission("cautious")]
    before, read_before = resource.getrusage(resource.RUSAGE_SELF), arena_read_bytes()
    result, stderrs = run(run_local_match(bots, preset("classic", limit=8), 7, CLOCK, launcher=launcher, limits=LIMITS), timeout=240)
    after, read_after = resource.getrusage(resource.RUSAGE_SELF), arena_read_bytes()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Measured(result, stderrs[0], cpu, read_after - read_before, marker)


def others_ms(result: MatchResult) -> list[float]:
    return [cast(float, line["ms"]) for line in result.record if line["type"] == "action" and line.get("seat") != 0 and "ms" in line]


@pytest.mark.parametrize("kind", KINDS)
def test_a_stderr_flood_is_capped_and_costs_the_others_nothing(kind: str, tmp_path: Path) -> None:
    quiet = match(kind, tmp_path, flood=False)
    flood = match(kind, tmp_path, flood=True)
    print(
        f"\n{kind}: arena CPU {quiet.cpu_s:.2f} s quiet, {flood.cpu_s:.2f} s flooded;"
        f" arena read {quiet.read_bytes / 1e6:.1f} MB quiet, {flood.read_bytes / 1e6:.1f} MB flooded"
    )
    for measured in (quiet, flood):
        assert measured.result.status == "finished", measured.result
        assert measured.result.faults[1:] == [{}, {}, {}], f"polite seats were charged: {measured.result.faults}"
        assert leftover(measured.marker) == []
    times = others_ms(flood.result)
    late = sorted(times)[-len(times) // 20 or -1]
    median = statistics.median(times)
    assert median < 150 and late < 600, f"others' decision times: median {median:.0f} ms, p95 {late:.0f} ms"
    assert len(flood.stderr.encode()) <= LIMITS.stderr_bytes + 256, len(flood.stderr)
    kept = re.search(rf"more bytes not kept \(the cap is {LIMITS.stderr_bytes} bytes\); the last (\d+):\n", flood.stderr)
    assert kept is not None and 4096 - 61 < int(kept[1]) <= 4096, flood.stderr[-5000:]  # its last whole lines (61 bytes each)
    assert flood.stderr.rstrip().endswith("flood flood"), flood.stderr[-300:]  # the end of what it wrote
    if kind == "process":  # pipes: the arena's reads count in rchar (docker's socket reads do not)
        # The arena reads the cap and no more: what the flooder wrote past it never reaches the arena.
        assert flood.read_bytes - quiet.read_bytes < 32 << 20, (quiet.read_bytes, flood.read_bytes)
    assert flood.cpu_s < 3 * quiet.cpu_s + 2.0, (quiet.cpu_s, flood.cpu_s)


def test_an_unsandboxed_seat_has_its_stderr_capped_by_its_monitor_too(tmp_path: Path) -> None:
    """Trusted bots without a sandbox get the same monitor (no cgroups there: it still keeps the arena's loop out)."""
    folder = tmp_path / "chatty"
    folder.mkdir()
    (folder / "bot.py").write_text("import os\nfor _ in range(100):\n    os.write(2, b'e' * 10_000)\n")
    submission = Submission(path=folder, name="chatty", version="1", language="python", command=("python", "bot.py"))
    (tmp_path / "seat").mkdir()
    context = SeatContext(
        seat=0,
        token="t",
        submission=submission,
        # What is dropped past the cap goes as fast as the bot writes it: the pace of the drop is not what is tested here.
        limits=SeatLimits(stderr_bytes=1000, stderr_drain_bytes_per_s=16 << 20),
        referee_socket=tmp_path / "referee.sock",
        workdir=tmp_path / "seat",
        trusted=True,
    )

    async def scenario() -> str:
        seat = await ProcessLauncher().start(context)
        assert await asyncio.wait_for(seat.wait(), 30) == 0
        await seat.stop()
        return seat.stderr_text()

    note = "\n[arena] 999000 more bytes not kept (the cap is 1000 bytes); the last 250:\n"
    assert run(scenario(), timeout=60) == "e" * 750 + note + "e" * 250
