"""Record lines as types (polignac_arena.record_lines): the same bytes as ever, and bad lines as clear errors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from polignac import Card, Contract, Forfeit, Penalty, preset
from polignac.bot import Bot
from polignac.bots import CautiousBot, HeuristicBot, RandomBot
from polignac.faults import Fault
from polignac.values import ScoreException
from polignac.view import PlayerView
from polignac_arena.record_lines import (
    ActionLine,
    AwayLine,
    BackLine,
    FaultLine,
    HandEndedLine,
    HandParts,
    HeaderLine,
    ResultLine,
    SeatEntry,
    UnknownLine,
    parse_line,
    parse_lines,
)
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.referee.record import read_lines, read_record, write_record
from polignac_arena.replay import replay_lines
from polignac_arena.runner import run_local_match
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.statuses import ActionStatus, MatchStatus, UnknownStatusError
from polignac_arena.submission import builtin_submission
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
OLD_RECORDS = sorted((ROOT / "tests" / "data" / "records_v1_0").glob("*.match.jsonl"))


def json_text(lines: list[Any]) -> str:
    """Lines as a record file holds them."""
    return "".join(json.dumps(line if isinstance(line, dict) else line.to_dict(), separators=(",", ":")) + "\n" for line in lines)


class Revoker(Bot):
    """Plays a card it may not play on every third turn it holds one: a revoke scored, then a forfeit (max_faults 2)."""

    name = "revoker"

    def __init__(self) -> None:
        self.turns = 0

    def play(self, view: PlayerView) -> Card:
        self.turns += 1
        illegal = [c for c in view.hand if c not in view.legal_cards]
        if illegal and self.turns % 3 == 0:
            return illegal[0]
        return min(view.legal_cards, key=lambda c: (view.rules.strength[c.index], c.suit))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> tuple[MatchResult, Path]:
    """A referee match with revokes and a forfeit, its record written to a file."""
    path = tmp_path_factory.mktemp("record") / "match.jsonl"
    launcher = InProcessLauncher(dict(enumerate([Revoker(), CautiousBot(), HeuristicBot(), RandomBot(11)])))
    bots = [builtin_submission(name) for name in ("random", "cautious", "heuristic", "random")]
    clock = TimeControl(move_ms=10_000, bank_ms=10_000, startup_ms=20_000)
    result, _ = run_sync(
        run_local_match(
            bots, preset("classic", limit=10, max_faults=2), 5, clock, seat_kind="inprocess", launcher=launcher, record_path=path
        )
    )
    return result, path


def test_a_referee_record_is_its_typed_lines_json_byte_for_byte(faulty: tuple[MatchResult, Path]) -> None:
    result, path = faulty
    lines = list(result.lines)
    assert path.read_text(encoding="utf-8") == json_text(lines)
    assert result.record == [line.to_dict() for line in lines]
    assert read_lines(path) == lines == parse_lines(read_record(path)) == parse_lines(result.record)
    actions = [line.action for line in lines if isinstance(line, ActionLine)]
    assert Penalty(0, 5, "illegal") in actions and Forfeit(0, "max_faults") in actions, "the match shows what it is for"
    assert isinstance(lines[0], HeaderLine) and isinstance(lines[-1], ResultLine)
    assert any(isinstance(line, HandEndedLine) and line.result is not None for line in lines)
    assert replay_lines(lines).divergence is None and replay_lines(result.record).divergence is None


@pytest.mark.parametrize("path", OLD_RECORDS, ids=lambda p: p.name)
def test_an_old_record_reads_as_types_and_writes_back_byte_for_byte(path: Path, tmp_path: Path) -> None:
    lines = read_lines(path)
    assert json_text(lines) == path.read_text(encoding="utf-8")
    write_record(tmp_path / "again.jsonl", lines)
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


EVERY_KIND: list[tuple[Any, dict[str, Any]]] = [
    (
        HeaderLine(
            format="polignac-match/1",
            match_id="m1",
            engine_version="1.1.0",
            rules={"name": "classic", "players": 3},
            seed=7,
            time_control=TimeControl(1000, 0, 5000),
            seats=(SeatEntry(seat=0, name="a", version="1"), SeatEntry(name="b")),
            started_at="2026-12-01T20:40:41+00:00",
        ),
        {
            "type": "header",
            "format": "polignac-match/1",
            "match_id": "m1",
            "engine_version": "1.1.0",
            "rules": {"name": "classic", "players": 3},
            "seed": 7,
            "time_control": {"move_ms": 1000, "bank_ms": 0, "startup_ms": 5000},
            "seats": [{"seat": 0, "name": "a", "version": "1"}, {"name": "b"}],
            "started_at": "2026-12-01T20:40:41+00:00",
        },
    ),
    (
        ActionLine(seat=1, hand=2, action="JS", request_id=9, reply="js", status=ActionStatus.MALFORMED, ms=1.5, detail="why"),
        {
            "type": "action",
            "seat": 1,
            "hand": 2,
            "action": "JS",
            "request_id": 9,
            "reply": "js",
            "status": "malformed",
            "ms": 1.5,
            "detail": "why",
        },
    ),
    (
        ActionLine(seat=1, hand=2, action=Penalty(1, 5, "timeout"), status=ActionStatus.TIMEOUT),
        {"type": "action", "seat": 1, "hand": 2, "action": {"penalty": 1, "points": 5, "reason": "timeout"}, "status": "timeout"},
    ),
    (ActionLine(action=Forfeit(2, "crashed")), {"type": "action", "action": {"forfeit": 2, "reason": "crashed"}}),
    (
        FaultLine(seat=0, hand=1, fault=Fault.STALE, request_id=0, reply="7H", detail="late"),
        {"type": "fault", "seat": 0, "hand": 1, "fault": "stale", "request_id": 0, "reply": "7H", "detail": "late"},
    ),
    (
        AwayLine(seat=3, hand=4, detail="its stream broke; it may come back within 30 s"),
        {"type": "away", "seat": 3, "hand": 4, "detail": "its stream broke; it may come back within 30 s"},
    ),
    (BackLine(seat=3, hand=4), {"type": "back", "seat": 3, "hand": 4}),
    (
        HandEndedLine(
            hand_number=2,
            contract=Contract.CAPOT,
            declarer=1,
            contract_made=False,
            scores=(5, 7, 0),
            totals=(6, 9, 1),
            tiebreak=False,
            result=HandParts(
                seats=(0, 1, 2),
                tricks=(1, 8, 1),
                card_points=(1, 2, 2),
                trick_points=(0, 0, 0),
                first_last_points=(0, 0, 0),
                fault_points=(0, 0, 0),
                exception=ScoreException.NONE,
            ),
        ),
        {
            "type": "hand_ended",
            "hand_number": 2,
            "contract": "capot",
            "declarer": 1,
            "contract_made": False,
            "scores": [5, 7, 0],
            "totals": [6, 9, 1],
            "tiebreak": False,
            "result": {
                "seats": [0, 1, 2],
                "tricks": [1, 8, 1],
                "card_points": [1, 2, 2],
                "trick_points": [0, 0, 0],
                "first_last_points": [0, 0, 0],
                "fault_points": [0, 0, 0],
                "exception": "",
            },
        },
    ),
    (
        HandEndedLine(hand_number=1, contract=Contract.PASS, scores=(1, 0), totals=(1, 0), tiebreak=True),
        {"type": "hand_ended", "hand_number": 1, "contract": "pass", "scores": [1, 0], "totals": [1, 0], "tiebreak": True},
    ),
    (
        ResultLine(status=MatchStatus.FINISHED, places=(2, 1), totals=(20, 3), faults=({}, {"timeout": 2})),
        {"type": "result", "status": "finished", "places": [2, 1], "totals": [20, 3], "faults": [{}, {"timeout": 2}], "reason": None},
    ),
    (
        ResultLine(status=MatchStatus.ABORTED, totals=(0, 0), faults=({}, {}), reason="stopped"),
        {"type": "result", "status": "aborted", "places": None, "totals": [0, 0], "faults": [{}, {}], "reason": "stopped"},
    ),
    (UnknownLine("note", {"type": "note", "text": "from a newer arena"}), {"type": "note", "text": "from a newer arena"}),
]


@pytest.mark.parametrize(("line", "form"), EVERY_KIND, ids=lambda x: getattr(x, "type", ""))
def test_every_kind_writes_the_records_keys_in_their_order_and_reads_back(line: Any, form: dict[str, Any]) -> None:
    """Keys in the order records have always had, None left out (a result's places and reason always written)."""
    written = line.to_dict()
    assert json.dumps(written) == json.dumps(form)
    assert parse_line(json.loads(json.dumps(written)), 1) == line


def test_a_line_of_an_unknown_kind_is_kept_and_passed_over(faulty: tuple[MatchResult, Path], tmp_path: Path) -> None:
    result, _ = faulty
    note = {"type": "commentary", "hand": 1, "text": "a newer arena's line"}
    lines: list[Mapping[str, object]] = [result.record[0], note, *result.record[1:]]
    assert replay_lines(lines).divergence is None
    path = tmp_path / "newer.jsonl"
    path.write_text(json_text(lines), encoding="utf-8")
    typed = read_lines(path)
    assert typed[1] == UnknownLine("commentary", note)
    write_record(tmp_path / "again.jsonl", typed)
    assert (tmp_path / "again.jsonl").read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


BAD_LINES: list[tuple[object, str]] = [
    ([1, 2], "line 3: each line must be an object with a 'type'"),
    ({"kind": "action"}, "line 3: each line must be an object with a 'type'"),
    ({"type": 5}, "line 3: each line must be an object with a 'type'"),
    ({"type": "header", "rules": {}}, "line 3: the header does not describe a match: seed: Field required"),
    ({"type": "header", "rules": [], "seed": 1}, "line 3: the header does not describe a match: rules"),
    ({"type": "header", "rules": {}, "seed": "1"}, "line 3: the header does not describe a match: seed"),
    ({"type": "header", "rules": {}, "seed": 1, "seats": [1]}, "line 3: the header does not describe a match: seats.0"),
    (
        {"type": "header", "rules": {}, "seed": 1, "time_control": {"move_ms": -1}},
        "line 3: the header does not describe a match: time_control",
    ),
    ({"type": "action"}, "line 3: a bad action line: action: Field required"),
    ({"type": "action", "action": 7}, "line 3: a bad action line: action: an action is a decision's text"),
    ({"type": "action", "action": {"penalty": 0, "points": 5}}, "line 3: a bad action line: action"),
    ({"type": "action", "action": {"forfeit": "0", "reason": "x"}}, "line 3: a bad action line: action"),
    ({"type": "action", "action": "JS", "seat": "0"}, "line 3: a bad action line: seat: Input should be a valid integer"),
    ({"type": "action", "action": "JS", "seat": True}, "line 3: a bad action line: seat"),
    ({"type": "action", "action": "JS", "ms": "fast"}, "line 3: a bad action line: ms"),
    ({"type": "fault", "seat": 0, "hand": 1, "fault": "bored", "request_id": 0}, "line 3: a bad fault line: fault"),
    ({"type": "away", "seat": 0, "hand": 1}, "line 3: a bad away line: detail: Field required"),
    ({"type": "back", "seat": 0}, "line 3: a bad back line: hand: Field required"),
    (
        {"type": "hand_ended", "hand_number": 1, "contract": "pass", "scores": ["1"], "totals": [1], "tiebreak": False},
        "line 3: a bad hand_ended line: scores.0",
    ),
    (
        {"type": "hand_ended", "hand_number": 1, "contract": "grand", "scores": [1], "totals": [1], "tiebreak": False},
        "line 3: a bad hand_ended line: contract",
    ),
    ({"type": "result", "status": "finished"}, "line 3: a bad result line: totals: Field required"),
    ({"type": "result", "status": "finished", "totals": [1], "faults": [{"timeout": "2"}]}, "line 3: a bad result line: faults.0.timeout"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_LINES, ids=lambda x: x if isinstance(x, str) else "")
def test_a_bad_line_is_a_value_error_naming_the_line_and_the_key(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_line(raw, 3)


def test_an_unknown_status_is_named_as_the_statuses_name_it() -> None:
    with pytest.raises(UnknownStatusError, match=r"line 4: unknown match status 'won'"):
        parse_line({"type": "result", "status": "won", "totals": [0]}, 4)
    with pytest.raises(UnknownStatusError, match=r"line 4: unknown match status None"):
        parse_line({"type": "result", "totals": [0]}, 4)
    with pytest.raises(UnknownStatusError, match=r"line 4: unknown action status 'great'"):
        parse_line({"type": "action", "action": "JS", "status": "great"}, 4)


@pytest.mark.parametrize(("raw", "message"), BAD_LINES[3:], ids=lambda x: x if isinstance(x, str) else "")
def test_a_bad_line_in_a_record_file_is_a_one_line_error(raw: Any, message: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from polignac_arena.cli import app

    path = tmp_path / "bad.jsonl"
    header = read_record(OLD_RECORDS[0])[0]
    path.write_text(json_text([header, {"type": "note"}, raw]), encoding="utf-8")
    for command in ("show", "verify"):
        result = CliRunner().invoke(app, ["replay", command, str(path)], env={"COLUMNS": "300", "NO_COLOR": "1"})
        assert result.exit_code == 2, result.output
        assert result.output.count("polignac: error:") == 1 and message in result.output, result.output


def test_records_are_read_as_types_outside_the_record_modules() -> None:
    """No module of the arena picks a record line's kind from its JSON (``line["type"]``) but the record's own."""
    # The conformance probe's lines are the stdio bridge's JSON messages, not a record's; a match's journal picks out
    # its own kinds (head, seated, bank) and hands every other line to the record's reader.
    own = {Path("polignac_arena/record_lines.py"), Path("polignac_arena/conformance/probe.py"), Path("polignac_arena/referee/journal.py")}
    found = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        if path.relative_to(ROOT / "server") in own:
            continue
        text = path.read_text(encoding="utf-8")
        found += [
            f"{path.relative_to(ROOT)}: {m.group(0)}"
            for m in re.finditer(r"""\b(?:line|record|entry)\w*(?:\[\s*["']type["']\s*\]|\.get\(\s*["']type["'])""", text)
        ]
    assert found == []


def test_a_decision_line_keeps_the_bots_text_for_the_engine_to_judge() -> None:
    """A decision's text is read as it is: the replay, not the reader, says it is no card."""
    assert parse_line({"type": "action", "action": "ZZ"}, 2) == ActionLine(action="ZZ")
