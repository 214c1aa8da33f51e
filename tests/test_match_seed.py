"""``polignac match --seed N``: the same seed and bots give the same record, in every seat kind.

For built-in bots and for the Python sample folders alike: an in-process seat runs a folder's
own code (never the built-in of its name), so its record is the process seat's and the
docker seat's.  The stdio sample, which no in-process seat runs, is compared between process
and docker seats.

A record holds four things that are not a function of (seed, bots, rules):

* ``started_at`` in the header: a clock reading;
* ``ms`` on each action and fault line: the measured decision time;
* ``match_id`` in the header: random, it names the match's cgroups and containers, so two
  matches running at once must never share it;
* the first ``request_id``: the referee starts its ids at a random offset, so a bot cannot
  answer a request it was not sent; the ids then count up one per request.

The first three are left out of the comparison and request ids are compared as offsets from
the first one.  Everything else must be byte for byte the same: every action, reply, hand
result, fault and the result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.runner import bot_seed
from polignac_arena.seats import launcher_for

CLOCK_AND_IDENTITY = {"header": {"started_at", "match_id"}, "action": {"ms"}, "fault": {"ms"}}
"""The only fields that may differ between two runs of the same match."""
KINDS = ["inprocess", "process", "docker"]


SAMPLES = Path(__file__).resolve().parents[1] / "sample_bots"
LINEUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (bots in seat order, the seat kinds that run them, the first being the reference)
    "built-ins": (("builtin:random", "cautious", "heuristic", "random"), tuple(KINDS)),
    "samples": (
        tuple(str(SAMPLES / name) for name in ("random", "cautious", "heuristic", "random")),  # one folder in two seats
        tuple(KINDS),
    ),
    "stdio": ((str(SAMPLES / "python_stdio"), str(SAMPLES / "random"), "cautious", "heuristic"), ("process", "docker")),
}


def play(tmp_path: Path, kind: str, run: int, seed: int = 7, bots: tuple[str, ...] = ("random",) * 4) -> list[dict[str, Any]]:
    record = tmp_path / f"{kind}-{run}.jsonl"
    options = [f"--bot={bot}" for bot in bots]
    args = ["match", *options, "--seed", str(seed), "--limit", "5", "--seat-kind", kind, "--trusted", "--replay", str(record), "-q"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in record.read_text().splitlines()]


def without_clock_and_identity(lines: list[dict[str, Any]]) -> list[str]:
    """The record as JSON lines, the fields of :data:`CLOCK_AND_IDENTITY` left out, request ids as offsets."""
    first = min(line["request_id"] for line in lines if line.get("request_id"))
    kept = []
    for line in lines:
        left_out = CLOCK_AND_IDENTITY.get(line["type"], set())
        shown = {k: v for k, v in line.items() if k not in left_out}
        if shown.get("request_id"):
            shown["request_id"] -= first
        kept.append(json.dumps(shown, separators=(",", ":")))
    return kept


def available(kind: str) -> None:
    reason = launcher_for(kind).unavailable()
    if reason is not None:
        pytest.skip(f"{kind} seats are not available here: {reason}")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return play(tmp_path_factory.mktemp("reference"), "inprocess", 0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_record_in_every_seat_kind(kind: str, tmp_path: Path, reference: list[dict[str, Any]]) -> None:
    if kind == "docker":
        available(kind)
    first, second = play(tmp_path, kind, 1), play(tmp_path, kind, 2)
    assert without_clock_and_identity(first) == without_clock_and_identity(second) == without_clock_and_identity(reference)
    assert first[0]["match_id"] != second[0]["match_id"], "match ids stay unique"
    assert first[-1]["status"] == "finished" and first[-1]["faults"] == [{}, {}, {}, {}]
    assert len({line["action"] for line in first if line["type"] == "action"}) > 10, "the bots really played"


@pytest.mark.slow
@pytest.mark.parametrize("lineup", sorted(LINEUPS))
def test_the_same_bots_give_the_same_record_in_every_seat_kind_that_runs_them(lineup: str, tmp_path: Path) -> None:
    bots, kinds = LINEUPS[lineup]
    if "docker" in kinds:
        available("docker")
    records = {kind: play(tmp_path, kind, 0, seed=29, bots=bots) for kind in kinds}
    reference = without_clock_and_identity(records[kinds[0]])
    for kind, record in records.items():
        assert without_clock_and_identity(record) == reference, f"{kind} seats play {lineup} otherwise than {kinds[0]} seats"
        assert record[-1]["status"] == "finished" and record[-1]["faults"] == [{}, {}, {}, {}], (kind, record[-1])
    seats = [(seat["name"], seat["version"]) for seat in records[kinds[0]][0]["seats"]]
    if lineup == "samples":  # the folders' own versions ran, not the built-ins of their names
        assert seats == [("random", "1.1"), ("cautious", "1.1"), ("heuristic", "1.1"), ("random", "1.1")]
    if lineup == "built-ins":
        assert seats[0] == seats[3] == ("random", "1.0")
    assert len({line["action"] for line in records[kinds[0]] if line["type"] == "action"}) > 10, "the bots really played"


def test_another_seed_gives_another_match(tmp_path: Path, reference: list[dict[str, Any]]) -> None:
    other = play(tmp_path, "inprocess", 1, seed=8)
    assert without_clock_and_identity(other) != without_clock_and_identity(reference)


def test_bot_seeds_are_derived_one_way_per_seat() -> None:
    seeds = [bot_seed(7, seat) for seat in range(6)]
    assert len(set(seeds)) == 6 and all(0 <= s < 2**64 for s in seeds) and 7 not in seeds
    assert seeds == [bot_seed(7, seat) for seat in range(6)] != [bot_seed(8, seat) for seat in range(6)]
