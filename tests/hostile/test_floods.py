"""Floods at a seat (connections, health watches, decisions, blank lines) cost the arena and the other seats nothing.

Each flooder sits in seat 0 of a match played by :func:`tests.hostile.test_hostile.play` in
both sandboxed seat kinds, which checks the common outcome (the match finishes and
replays, the polite seats are not charged and keep their pace, nothing of the bot is
left). The tests here check the flood's own outcome and what it cost the arena process:
its open descriptors, sampled all through the match, and its CPU time.
"""

from __future__ import annotations

import os
import resource
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from polignac_arena.referee.listener import MAX_SEAT_CONNECTIONS
from tests.hostile.test_hostile import KINDS, play

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
    assert "after hello: FileNotFoundError" in outcome.stderr, outcome.stderr  # the socket is gone once the seat joined
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
