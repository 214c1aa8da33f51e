"""Whole matches through a real referee on real sockets, and their records replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from polignac import PRESETS, preset
from polignac.bots import builtin_bot
from polignac_arena.referee.record import read_record, write_record
from polignac_arena.replay import replay_lines
from tests.referee.helpers import polite_match, referee, run

LIMIT = 10
"""The point limit of the every-variant matches: half the presets' own, for shorter matches, each still played to its end."""


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_every_variant_and_table_size_plays_to_the_end_and_replays(transport: str, tmp_path: Path) -> None:
    """Every variant at every table size over a unix socket; over TCP, where only the transport differs, every variant once."""

    async def scenario() -> None:
        async with referee(transport) as server:
            for number, name in enumerate(PRESETS):
                sizes = PRESETS[name].table_sizes()
                for players in sizes if transport == "unix" else sizes[:1]:
                    seed = 1000 * number + players
                    path = tmp_path / f"{name}-{players}.jsonl"
                    result, outcomes = await polite_match(server, preset(name, players=players, limit=LIMIT), seed, record_path=path)
                    assert result.status == "finished", (name, players)
                    assert result.places is not None and sorted(result.places)[0] == 1
                    assert all(o.status == "finished" and o.places == result.places for o in outcomes)
                    assert result.faults == [{}] * players
                    replay = replay_lines(read_record(path))
                    assert replay.divergence is None, (name, players, replay.divergence)
                    assert replay.match.places == result.places and replay.match.totals == result.totals

    run(scenario(), timeout=120)


def test_record_names_seats_versions_engine_seed_and_timings(tmp_path: Path) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with referee() as server:
            result, _ = await polite_match(server, preset("classic"), 77, record_path=tmp_path / "m.jsonl")
            return result.record

    lines = run(scenario())
    header = lines[0]
    assert header["format"] == "polignac-match/1"
    assert header["seed"] == 77 and header["rules"]["name"] == "classic"
    assert [s["name"] for s in header["seats"]] == ["heuristic", "cautious", "random", "heuristic"]
    assert [s["version"] for s in header["seats"]] == [builtin_bot(s["name"], 0).version for s in header["seats"]]
    assert header["engine_version"]
    decisions = [line for line in lines if line["type"] == "action"]
    assert decisions and all(d["status"] == "ok" and d["ms"] >= 0 and d["request_id"] > 0 for d in decisions)
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "finished"
    on_disk = [json.loads(raw) for raw in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert on_disk == lines


def test_a_tampered_record_fails_verification_at_the_first_divergence(tmp_path: Path) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with referee() as server:
            result, _ = await polite_match(server, preset("classic"), 5)
            return result.record

    lines = run(scenario())
    index = next(i for i, line in enumerate(lines) if line["type"] == "hand_ended")
    tampered = [dict(line) for line in lines]
    tampered[index]["scores"] = [9, 9, 9, 9]
    replay = replay_lines(tampered)
    assert replay.divergence is not None and f"line {index + 1}" in replay.divergence and "scores" in replay.divergence
    # An action that was never legal.
    first_action = next(i for i, line in enumerate(lines) if line["type"] == "action" and line["action"] not in ("pass", "capot"))
    tampered = [dict(line) for line in lines]
    tampered[first_action]["action"] = "ZZ"
    assert "does not replay" in (replay_lines(tampered).divergence or "")
    # A cut-short record.
    write_record(tmp_path / "cut.jsonl", lines[:-1])
    assert "no result line" in (replay_lines(read_record(tmp_path / "cut.jsonl")).divergence or "")


def test_two_matches_at_once_on_one_referee() -> None:
    async def scenario() -> None:
        import asyncio

        async with referee() as server:
            results = await asyncio.gather(*(polite_match(server, preset("classic", players=p), seed=p) for p in (3, 4, 5, 6)))
            assert [r.status for r, _ in results] == ["finished"] * 4

    run(scenario())
