"""Floods at a seat (connections, health watches, decisions, blank lines) cost the arena and the other seats nothing.

The last test puts one seat flooding all of these at once beside four polite seats and
compares their pace with the same match without it (the flooder's ``stderr_mb`` adds a
stderr flood).

Each flooder sits in seat 0 of a match played by :func:`tests.hostile.test_hostile.play` in
both sandboxed seat kinds, which checks the common outcome (the match finishes and
replays, the polite seats are not charged and keep their pace, nothing of the bot is
left). The tests here check the flood's own outcome and what it cost the arena process:
its open descriptors, sampled all through the match, and its CPU time.
"""

from __future__ import annotations

import json
import os
import resource
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from polignac import preset
from polignac_arena.referee import MatchResult
from polignac_arena.referee.listener import MAX_SEAT_CONNECTIONS
from polignac_arena.runner import run_local_match
from polignac_arena.submission import Submission, builtin_submission, load_submission
from tests.hostile.test_hostile import BOTS, CLOCK, KINDS, LIMITS, launcher_or_skip, leftover, play
from tests.referee.helpers import run

PROCESSES = 8
PER_PROCESS = 200


@dataclass
class ArenaCost:
    baseline_fds: int = 0
    peak_fds: int = 0
    cpu_s: float = 0.0

    @property
    def extra_fds(self) -> int:
        return self.peak_fds - self.baseline_fds


@contextmanager
def arena_cost() -> Iterator[ArenaCost]:
    """The arena's (this process's) peak open descriptors and CPU seconds over the block."""
    cost = ArenaCost(baseline_fds=len(os.listdir("/proc/self/fd")))
    cost.peak_fds = cost.baseline_fds
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            with suppress(OSError):  # a descriptor closed while listed
                cost.peak_fds = max(cost.peak_fds, len(os.listdir("/proc/self/fd")))

    sampler = threading.Thread(target=sample, daemon=True)
    before = resource.getrusage(resource.RUSAGE_SELF)
    sampler.start()
    try:
        yield cost
    finally:
        done.set()
        sampler.join()
        after = resource.getrusage(resource.RUSAGE_SELF)
        cost.cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


@pytest.mark.parametrize("kind", KINDS)
def test_a_connection_flood_holds_no_more_than_its_cap_of_the_arenas_descriptors(kind: str, tmp_path: Path) -> None:
    with arena_cost() as cost:
        outcome = play(kind, "connection_flooder", tmp_path, processes=str(PROCESSES), per_process=str(PER_PROCESS))
    floods = [line.split() for line in outcome.stderr.splitlines() if line.startswith("flood:")]
    assert len(floods) == PROCESSES, outcome.stderr
    connected = sum(int(words[1]) for words in floods)
    closed = sum(int(words[3]) for words in floods)
    assert connected >= PROCESSES * PER_PROCESS // 2, outcome.stderr  # the flood was real
    # Four seats' sockets, pipes and connections: a few dozen; the flood alone held 1,600 on an uncapped socket.
    assert cost.extra_fds < 150, f"the arena's open descriptors rose by {cost.extra_fds} during the match"
    assert closed >= connected - MAX_SEAT_CONNECTIONS, outcome.stderr  # the arena kept at most its cap of them
    assert "after hello: no room" in outcome.stderr, outcome.stderr  # a tarpit holds the socket's path once the seat joined
    assert outcome.faults == {}, outcome.faults


@pytest.mark.parametrize("kind", KINDS)
def test_a_seat_socket_answers_no_health_or_reflection(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "health_prober", tmp_path)
    for call in ("health check", "health watch", "reflection"):
        assert f"{call}: UNIMPLEMENTED" in outcome.stderr, outcome.stderr
    assert outcome.faults == {}, outcome.faults


@pytest.mark.parametrize("kind", KINDS)
def test_a_decision_flood_forfeits_is_held_back_and_still_hears_the_end(kind: str, tmp_path: Path) -> None:
    with arena_cost() as cost:
        outcome = play(kind, "decision_flooder", tmp_path)
    assert outcome.faults == {"stale": 3} and outcome.place == 4, outcome.faults
    assert "match ended: finished" in outcome.stderr, outcome.stderr
    assert cost.cpu_s < 20, f"the arena spent {cost.cpu_s:.1f} s of CPU"


@pytest.mark.parametrize("kind", KINDS)
def test_a_blank_line_flood_is_a_fault_and_costs_the_arena_little(kind: str, tmp_path: Path) -> None:
    with arena_cost() as cost:
        outcome = play(kind, "blank_flooder", tmp_path, transport="stdio")
    assert outcome.faults == {"malformed": 3} and outcome.place == 4, outcome.faults
    assert cost.cpu_s < 20, f"the arena spent {cost.cpu_s:.1f} s of CPU"


def _polite_ms(result: MatchResult, seats: range) -> list[float]:
    return [cast(float, line["ms"]) for line in result.record if line["type"] == "action" and line.get("seat") in seats and "ms" in line]


def _p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


@pytest.mark.parametrize("kind", KINDS)
def test_one_seat_flooding_everything_leaves_four_polite_seats_their_pace(kind: str, tmp_path: Path) -> None:
    launcher = launcher_or_skip(kind)
    marker = f"hostile{uuid.uuid4().hex[:12]}"
    folder = tmp_path / marker
    folder.mkdir()
    (folder / f"{marker}.py").write_text((BOTS / "everything_flooder.py").read_text())
    (folder / "params.json").write_text(json.dumps({"stdout_mb": 16, "stderr_mb": 8}))
    manifest = f'name = "everything-flooder"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "{marker}.py"]\n'
    (folder / "bot.toml").write_text(manifest + 'transport = "stdio"\n')
    rules = preset("classic", players=5, limit=6)
    polite = [builtin_submission(name) for name in ("random", "heuristic", "cautious", "heuristic")]

    def match(first: Submission) -> tuple[MatchResult, str]:
        result, stderrs = run(run_local_match([first, *polite], rules, 11, CLOCK, launcher=launcher, limits=LIMITS), timeout=240)
        assert result.status == "finished", result
        return result, stderrs[0]

    control, _ = match(builtin_submission("random"))
    with arena_cost() as cost:
        flooded, stderr = match(load_submission(folder))
    assert flooded.faults[1:] == [{}, {}, {}, {}], flooded.faults
    assert flooded.places is not None and flooded.places[0] == 5
    # It flooded for real: its stale answers and blank lines were faults (it did not simply crash),
    # its stderr went past the cap, and its connections found no socket (a stdio seat gets none).
    assert "crashed" not in flooded.faults[0] and sum(flooded.faults[0].values()) >= 3, flooded.faults
    assert "more bytes not kept" in stderr, stderr[-2000:]
    assert "connections: 0 held, 200 refused" in stderr, stderr[:2000]
    assert leftover(marker) == []
    quiet, loud = _p95(_polite_ms(control, range(1, 5))), _p95(_polite_ms(flooded, range(1, 5)))
    # Within 2x, give or take 20 ms of a shared machine's noise (a few ms each way here).
    assert loud <= 2 * quiet + 20, f"the polite seats' p95 went from {quiet:.1f} ms to {loud:.1f} ms"
    assert cost.extra_fds < 150, f"the arena's open descriptors rose by {cost.extra_fds}"
