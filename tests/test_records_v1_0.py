"""Records written before the family of the seeds replay identically (issue 11: old records replay).

tests/data/records_v1_0/ holds matches recorded by the arena at commit 8ee2076 (engine 1.0.0),
with the old engine's compact record and events of each (its README says how they were made).
Today's code must verify the arena records with ``polignac replay verify`` and rebuild each match
from its compact record with the very events the old engine produced: the 32-card games keep
their exact behaviour, and an old ruleset table (without pack, trumps, direction...) reads as
the same game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from polignac import ENGINE_VERSION, Match, Ruleset
from polignac.rules import Direction, Faces, HandScore, Tiebreak, Trumps
from polignac_arena.cli import app
from polignac_arena.referee.record import read_record
from polignac_arena.replay import replay_lines
from polignac_arena.statuses import MatchStatus

DATA = Path(__file__).resolve().parent / "data" / "records_v1_0"
NAMES = sorted(p.name.removesuffix(".match.jsonl") for p in DATA.glob("*.match.jsonl"))


def lines(name: str) -> list[dict[str, Any]]:
    return read_record(DATA / f"{name}.match.jsonl")


def test_the_records_cover_what_they_are_for() -> None:
    headers = {name: lines(name)[0] for name in NAMES}
    assert any(h["rules"]["name"] == "classic" and h["rules"]["players"] == 5 for h in headers.values()), "a 5-player classic"
    assert any(h["rules"]["name"] == "slobberhannes" for h in headers.values())
    assert {h["rules"]["players"] for h in headers.values()} == {3, 4, 5, 6}
    every_line = [line for name in NAMES for line in lines(name)]
    assert any(line.get("type") == "hand_ended" and line.get("tiebreak") for line in every_line), "a tie-break hand"
    actions = [line.get("action") for line in every_line if line.get("type") == "action"]
    assert any(isinstance(a, dict) and "penalty" in a for a in actions), "a revoke scored"
    assert any(isinstance(a, dict) and "forfeit" in a for a in actions), "a forfeit"
    assert "capot" in actions, "a contract declared"
    for header in headers.values():
        assert header["engine_version"] == "1.0.0" and "pack" not in header["rules"], "written before the family"


@pytest.mark.parametrize("name", NAMES)
def test_replay_verify_passes(name: str) -> None:
    path = DATA / f"{name}.match.jsonl"
    result = CliRunner().invoke(app, ["replay", "verify", str(path)], env={"COLUMNS": "200", "NO_COLOR": "1"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "OK" in result.output and "replay exactly" in result.output


@pytest.mark.parametrize("name", NAMES)
def test_the_arena_record_replays_to_its_result(name: str) -> None:
    record = lines(name)
    replay = replay_lines(record)
    assert replay.divergence is None
    assert replay.status is MatchStatus.FINISHED
    result = record[-1]
    assert result["type"] == "result"
    assert list(replay.match.places or ()) == result["places"] and list(replay.match.totals) == result["totals"]


@pytest.mark.parametrize("name", NAMES)
def test_the_engine_record_rebuilds_the_old_events(name: str) -> None:
    old = json.loads((DATA / f"{name}.record.json").read_text(encoding="utf-8"))
    match = Match.from_record(old)
    assert match.is_over
    old_events = [json.loads(line) for line in (DATA / f"{name}.events.jsonl").read_text(encoding="utf-8").splitlines()]
    events = [event.to_dict() for event in match.events]
    # A hand's end now carries the parts of its scores too (``result``); nothing else may differ.
    for event in events:
        if event["event"] == "hand_ended":
            parts = event.pop("result")
            assert isinstance(parts, dict) and set(parts) >= {"tricks", "card_points", "fault_points"}
        assert "turned" not in event, "the 32-card games turn no card"
    assert events == old_events
    # The record written today is the old one, with the new settings at the values the old games had
    # (and today's engine version: the same actions, read by an engine that settles more points).
    again = match.record()
    assert (again["seed"], again["actions"]) == (old["seed"], old["actions"])
    assert old["engine_version"] == "1.0.0" and again["engine_version"] == ENGINE_VERSION
    assert old["rules"].items() <= again["rules"].items()
    assert again["rules"]["general_points"] == -old["rules"]["contract_points"]
    assert Ruleset.from_dict(again["rules"]) == Ruleset.from_record(old["rules"]) == match.rules
    result = lines(name)[-1]
    assert list(match.places or ()) == result["places"] and list(match.totals) == result["totals"]


@pytest.mark.parametrize("name", NAMES)
def test_an_old_ruleset_table_reads_as_a_32_card_french_game(name: str) -> None:
    rules = Ruleset.from_dict(lines(name)[0]["rules"])
    assert (rules.pack, rules.trumps, rules.trick_points, rules.hand_score, rules.direction, rules.tiebreak, rules.faces) == (
        32,
        Trumps.NONE,
        0,
        HandScore.POINTS,
        Direction.LOWER,
        Tiebreak.TIED,
        Faces.FRENCH,
    )
