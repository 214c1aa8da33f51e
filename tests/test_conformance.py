"""The conformance report (``polignac bot check --conformance``): it holds for a good bot, and names what a bad one breaks.

The bots here are small stdio programs in Python (no SDK: quick to start in the sandbox), each
declaring few games so that a report plays few matches.  The kits pass it in tests/test_kits.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.conformance import ConformanceReport, run_conformance
from polignac_arena.conformance.checks import table_sizes
from polignac_arena.conformance.probe import FUTURE_FIELD, FUTURE_KEY, add_future_fields, add_future_keys
from polignac_arena.seats import launcher_for
from polignac_arena.submission import load_submission
from tests.aio import run_sync

# A stdio bot that plays the first legal card, and misbehaves as its arguments say:
#   strict  exits on a key or a line type it does not know (a parser that refuses them)
#   narrow  exits on a card of rank 2 to 6 (it knows only the 32-card pack)
#   pairs   exits in a hand of two players (it assumes three or more)
#   slow    takes 800 ms over a request that allows less than a second
#   general declares "general" in every auction (a contract classic does not enable: illegal)
BOT = r"""
import json, sys, time

KNOWN = {"welcome", "event", "decision_request", "fault_notice", "match_ended"}
modes = set(sys.argv[1:])
for line in sys.stdin:
    message = json.loads(line)
    if "strict" in modes and ("future_field" in message or message["type"] not in KNOWN):
        sys.exit("refusing a message I do not know")
    if message["type"] == "match_ended":
        break
    if message["type"] != "decision_request":
        continue
    view = message["view"]
    if "pairs" in modes and len(view["seats"]) == 2:
        sys.exit("a hand of two: I did not expect that")
    if "narrow" in modes and any(card[0] in "23456" for card in message["legal_cards"]):
        sys.exit("a card I do not know")
    if "slow" in modes and message["move_ms"] < 1000:
        time.sleep(0.8)
    answer = {"request_id": message["request_id"]}
    if message["kind"] == "contract":
        answer["contract"] = "general" if "general" in modes else "pass"
    else:
        answer["card"] = message["legal_cards"][0]
    print(json.dumps(answer), flush=True)
"""


def stdio_bot(folder: Path, games: list[str], *modes: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(BOT)
    command = json.dumps(["python", "bot.py", *modes])
    (folder / "bot.toml").write_text(
        f'name = "probe"\nversion = "1"\nlanguage = "python"\ncommand = {command}\ntransport = "stdio"\ngames = {json.dumps(games)}\n'
    )
    return folder


def conformance(folder: Path) -> ConformanceReport:
    return run_sync(run_conformance(load_submission(folder), launcher_for("process"), trusted=True), timeout=300)


def held(report: ConformanceReport) -> dict[str, bool | None]:
    return {line.situation: line.held for line in report.lines}


def test_a_bot_that_follows_the_rules_holds_every_situation_and_the_others_do_not_apply(tmp_path: Path) -> None:
    report = conformance(stdio_bot(tmp_path / "good", ["knaves"]))
    assert held(report) == {
        "knaves, 3 players": True,
        "the auction": None,  # Knaves has no contracts
        "a void in the suit led": True,
        "the last trick": True,
        "a tie-break hand": None,  # Knaves plays ties on: no tie-break hands among the tied
        "a reattach": True,
        "a later protocol version": True,
        "a time-pressed request": True,
    }, report.lines
    assert report.ok and report.transport == "stdio" and report.seat_kind == "process"
    lines = {line.situation: line for line in report.lines}
    assert "went away and back" in lines["a reattach"].detail
    assert lines["a later protocol version"].doc == "docs/stdio-protocol.md, Lines"
    assert lines["a time-pressed request"].doc == "docs/protocol.md, The clock"


def test_a_strict_parser_and_a_bot_of_the_32_card_pack_fail_where_they_break(tmp_path: Path) -> None:
    report = conformance(stdio_bot(tmp_path / "strict", ["classic", "knaves"], "strict", "narrow"))
    results = held(report)
    assert results["classic, 3, 4, 5, 6 players"] is True and results["the auction"] is True and results["a tie-break hand"] is True
    assert results["knaves, 3 players"] is False and results["a later protocol version"] is False
    assert not report.ok
    lines = {line.situation: line for line in report.lines}
    assert "crashed" in lines["knaves, 3 players"].detail and "a card I do not know" in lines["knaves, 3 players"].detail
    assert "refusing a message I do not know" in lines["a later protocol version"].detail


def test_a_bot_that_breaks_in_a_hand_of_two_and_one_that_ignores_its_clock_fail_those_lines(tmp_path: Path) -> None:
    report = conformance(stdio_bot(tmp_path / "pairs", ["classic"], "pairs", "slow"))
    results = held(report)
    assert results["a tie-break hand"] is False and results["a time-pressed request"] is False
    assert results["classic, 3, 4, 5, 6 players"] is True or "two" in report.lines[0].detail  # a limit-1 match may tie too
    lines = {line.situation: line for line in report.lines}
    assert "a hand of two" in lines["a tie-break hand"].detail
    assert "timeout" in lines["a time-pressed request"].detail


def test_a_fault_in_one_situation_fails_that_situation_and_the_games_it_came_up_in(tmp_path: Path) -> None:
    report = conformance(stdio_bot(tmp_path / "general", ["classic"], "general"))
    results = held(report)
    assert results["the auction"] is False and results["classic, 3, 4, 5, 6 players"] is False
    assert results["a void in the suit led"] is True and results["the last trick"] is True
    lines = {line.situation: line for line in report.lines}
    assert "of them faults" in lines["the auction"].detail and "illegal" in lines["classic, 3, 4, 5, 6 players"].detail


def test_bot_check_prints_the_report_and_its_json(tmp_path: Path) -> None:
    folder = stdio_bot(tmp_path / "good", ["knaves"])
    result = CliRunner().invoke(app, ["bot", "check", str(folder), "--trusted", "--conformance"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "held  a tie-break hand" not in result.output and "n/a  a tie-break hand" in result.output
    assert "held  a reattach" in result.output and "[docs/protocol.md, Reattaching to a match]" in result.output
    assert result.output.rstrip().endswith("The bot is ready to enter a tournament.")
    as_json = CliRunner().invoke(app, ["bot", "check", str(folder), "--trusted", "--conformance", "--json"], catch_exceptions=False)
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    assert report["ok"] is True and report["bot"] == "probe@1"
    assert [step["step"] for step in report["steps"]] == ["bot.toml", "smoke match", "replay"]
    situations = [line["situation"] for line in report["conformance"]["lines"]]
    assert situations[0] == "knaves, 3 players" and situations[-1] == "a time-pressed request"
    assert {line["held"] for line in report["conformance"]["lines"]} == {True, None}
    assert "held  a reattach" in as_json.stderr  # the progress goes to stderr
    steps_only = json.loads(CliRunner().invoke(app, ["bot", "check", str(folder), "--trusted", "--json"]).stdout)
    assert steps_only["ok"] is True and steps_only["conformance"] is None


def test_bot_check_fails_with_the_situation_named_and_skips_the_report_after_a_failed_step(tmp_path: Path) -> None:
    strict = stdio_bot(tmp_path / "strict", ["knaves"], "strict")
    result = CliRunner().invoke(app, ["bot", "check", str(strict), "--trusted", "--conformance"], catch_exceptions=False)
    assert result.exit_code == 1 and "FAILED  a later protocol version" in result.output
    assert "see the FAILED situation above" in result.output
    broken = stdio_bot(tmp_path / "broken", ["knaves"], "narrow")  # its smoke match is Knaves: it crashes
    as_json = CliRunner().invoke(app, ["bot", "check", str(broken), "--trusted", "--conformance", "--json"], catch_exceptions=False)
    assert as_json.exit_code == 1
    report = json.loads(as_json.stdout)
    assert report["ok"] is False and report["conformance"] is None
    assert [step["ok"] for step in report["steps"] if step["step"] == "smoke match"] == [False]
    text = CliRunner().invoke(app, ["bot", "check", str(broken), "--trusted", "--conformance"], catch_exceptions=False)
    assert "The conformance report was not run: a step above failed." in text.output


def test_the_probe_adds_fields_a_parser_skips_and_keys_at_the_end() -> None:
    from polignac._proto.polignac.v1 import referee_pb2 as pb

    message = pb.PlayResponse(decision_request=pb.DecisionRequest(request_id=7, legal_cards=["7S"]))
    add_future_fields(message)
    again = pb.PlayResponse.FromString(message.SerializeToString())
    assert again.decision_request.request_id == 7 and list(again.decision_request.legal_cards) == ["7S"]
    assert [event.WhichOneof("event") for event in again.events] == [None]  # an event of a kind this version cannot name
    assert FUTURE_FIELD.bit_length() > 5  # beyond every field number the protocol uses
    lines: list[dict[str, Any]] = add_future_keys(
        [{"type": "event", "event": "declared"}, {"type": "decision_request", "request_id": 7, "view": {"seat": 0}}]
    )
    assert [line["type"] for line in lines] == ["event", "event", "future_message", "decision_request"]
    assert list(lines[-1])[-1] == FUTURE_KEY and list(lines[-1]["view"])[-1] == FUTURE_KEY and lines[-1]["request_id"] == 7


def test_every_game_is_played_at_each_table_size_it_allows() -> None:
    assert table_sizes("classic") == [3, 4, 5, 6] and table_sizes("bassadewitz") == [3, 4, 5] and table_sizes("knaves") == [3]
