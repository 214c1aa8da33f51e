"""``polignac match --from MATCH[:HAND]``: a recorded match played again from one of its hands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from polignac_arena.ratings import RatingEnv
from polignac_arena.rerun_source import RerunSourceError, split_from
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from tests.test_web_api import _rate

runner = CliRunner()
# Deterministic built-ins: their decisions depend on their view alone, so the same deal gives the same play.
BOTS = ("cautious", "heuristic", "cautious", "heuristic")


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _from_hand(lines: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The record's actions and hand results from hand k on, without what varies between runs (timings, request ids)."""
    out = []
    for line in lines:
        if line["type"] == "action" and line.get("hand", 0) >= k:
            out.append({key: line.get(key) for key in ("seat", "hand", "action", "status")})
        elif line["type"] == "hand_ended" and line["hand_number"] >= k:
            out.append(line)
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rerun") / "original.jsonl"
    bots = [f"--bot={b}" for b in BOTS]
    result = polignac("match", *bots, "--seed", "2024", "--seat-kind", "inprocess", "--replay", str(path), "-q")
    assert result.exit_code == 0, result.output
    return path


def test_a_rerun_from_hand_k_with_the_same_bots_reproduces_the_record(recorded: Path, tmp_path: Path) -> None:
    original = _lines(recorded)
    hands = sorted({line["hand_number"] for line in original if line["type"] == "hand_ended" and not line.get("tiebreak")})
    assert len(hands) >= 3, "the seed should give a match of several hands"
    for k in (hands[1], hands[-1]):
        out = tmp_path / f"rerun-{k}.jsonl"
        result = polignac(
            "match", *(f"--bot={b}" for b in BOTS), "--from", f"{recorded}:{k}", "--seat-kind", "inprocess", "--replay", str(out)
        )
        assert result.exit_code == 0, result.output
        assert f"A rerun of {original[0]['match_id']} from hand {k}" in result.output
        rerun = _lines(out)
        assert _from_hand(rerun, k) == _from_hand(original, k)
        assert _from_hand(rerun, k), "the rerun played hands"
        assert min(line["hand"] for line in rerun if line["type"] == "action") == k
        header = rerun[0]
        assert header["rerun_of"] == original[0]["match_id"] and header["first_hand"] == k
        assert header["seed"] == original[0]["seed"] and header["rules"] == original[0]["rules"]
        assert header["time_control"] == original[0]["time_control"]
        assert rerun[-1]["totals"] == original[-1]["totals"] and rerun[-1]["places"] == original[-1]["places"]
        verified = polignac("replay", "verify", str(out))
        assert verified.exit_code == 0 and "OK" in verified.output
        shown = polignac("replay", "show", str(out))
        assert (
            f"A rerun of {original[0]['match_id']} from hand {k} (dealer seat" in shown.output and f"Hand {k}, dealer seat" in shown.output
        )


def test_a_rerun_of_a_rerun_and_other_bots(recorded: Path, tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    result = polignac(
        "match", *(f"--bot={b}" for b in BOTS), "--from", f"{recorded}:2", "--seat-kind", "inprocess", "--replay", str(first), "-q"
    )
    assert result.exit_code == 0, result.output
    again = tmp_path / "again.jsonl"
    other = ("random", "heuristic", "random", "cautious")
    result = polignac(
        "match", *(f"--bot={b}" for b in other), "--from", str(first), "--seat-kind", "inprocess", "--replay", str(again), "-q"
    )
    assert result.exit_code == 0, result.output
    lines = _lines(again)
    assert lines[0]["first_hand"] == 2 and lines[0]["rerun_of"] == _lines(first)[0]["match_id"]
    assert min(line["hand"] for line in lines if line["type"] == "action") == 2


def test_the_record_rules_and_clock_hold_unless_given(recorded: Path, tmp_path: Path) -> None:
    out = tmp_path / "limit.jsonl"
    args = ["--from", f"{recorded}:1", "--seat-kind", "inprocess", "--replay", str(out), "--limit", "50", "--move-ms", "3000", "-q"]
    result = polignac("match", *(f"--bot={b}" for b in BOTS), *args)
    assert result.exit_code == 0, result.output
    header = _lines(out)[0]
    assert header["rules"]["limit"] == 50 and header["rules"]["name"] == _lines(recorded)[0]["rules"]["name"]
    assert header["time_control"]["move_ms"] == 3000 and header["time_control"]["bank_ms"] == _lines(recorded)[0]["time_control"]["bank_ms"]


@pytest.mark.parametrize(
    ("suffix", "bots", "extra", "words"),
    [
        (":0", BOTS, [], "hand must be a hand number of the match, from 1, got 0"),
        (":999", BOTS, [], "has no hand 999"),
        (":x", BOTS, [], "the hand after ':' must be a hand number, got 'x'"),
        (":2", BOTS[:3], [], "seats 4 players: give 4 --bot to rerun it, got 3"),
        (":2", (*BOTS, "random"), [], "seats 4 players: give 4 --bot to rerun it, got 5"),
        (":2", BOTS, ["--seed", "5"], "--seed goes without --from"),
        (":2", BOTS, ["--rules", "knaves"], "4 players share the 52 cards"),
    ],
)
def test_bad_rerun_options_are_one_line_errors(recorded: Path, suffix: str, bots: tuple[str, ...], extra: list[str], words: str) -> None:
    result = polignac("match", *(f"--bot={b}" for b in bots), "--from", f"{recorded}{suffix}", "--seat-kind", "inprocess", *extra)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output


def test_an_unknown_match_is_a_clear_error(tmp_path: Path) -> None:
    result = polignac("match", *(f"--bot={b}" for b in BOTS), "--from", "nosuchmatch:2", "--db", str(tmp_path / "none.db"))
    assert result.exit_code == 2 and "no record file 'nosuchmatch'" in result.output
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("", "the first line must be the match header"),
        ("not json\n", "not JSON"),
        ('{"type": "header", "format": "polignac-match/1", "rules": {"variant": "classic"}}\n', "the record has no seed"),
        ('{"type": "header", "format": "polignac-match/1", "rules": {"variant": "classic"}, "seed": "x"}\n', "not a match record"),
    ],
)
def test_bad_records_are_clear_errors(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    result = polignac("match", *(f"--bot={b}" for b in BOTS), "--from", f"{path}:1", "--seat-kind", "inprocess")
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output


def test_a_tampered_record_is_refused(recorded: Path, tmp_path: Path) -> None:
    lines = _lines(recorded)
    for line in lines:
        if line["type"] == "hand_ended":
            line["scores"] = [9, 9, 9, 9]
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = polignac("match", *(f"--bot={b}" for b in BOTS), "--from", f"{path}:2", "--seat-kind", "inprocess")
    assert result.exit_code == 2 and "does not replay" in result.output


@pytest.mark.parametrize(
    ("text", "expected"), [("abc", ("abc", None)), ("abc:3", ("abc", 3)), ("a:b:12", ("a:b", 12)), (":3", (":3", None))]
)
def test_split_from(text: str, expected: tuple[str, int | None]) -> None:
    assert split_from(text) == expected


@pytest.mark.parametrize("text", ["abc:", "abc:-1", "abc:1e3", "abc:\u0661", "abc:9999999999"])
def test_split_from_refuses_a_bad_hand(text: str) -> None:
    with pytest.raises(RerunSourceError, match="hand number"):
        split_from(text)


def test_a_match_stored_by_a_tournament_is_found_by_its_id(recorded: Path, tmp_path: Path) -> None:
    original = _lines(recorded)
    db = tmp_path / "arena.db"
    seats = ("cautious@builtin", "heuristic@builtin", "cautious2@builtin", "heuristic2@builtin")
    result = original[-1]
    with Store(db) as store:
        tid = store.create_tournament("stored", {"format": "synthetic"}, [Fixture(0, seats, original[0]["seed"]), Fixture(1, seats, 1)])
        for idx, (match_id, record) in enumerate([("stored-0", original), ("stored-1", [{"type": "header"}])]):
            store.record_result(
                tid, idx, match_id=match_id, status=MatchStatus.FINISHED, places=result["places"], totals=result["totals"], hands=1,
                faults=[{}] * 4, rate=_rate(RatingEnv()), record=record,
            )  # fmt: skip
    out = tmp_path / "rerun.jsonl"
    args = ["--from", "stored-0:2", "--db", str(db), "--seat-kind", "inprocess", "--replay", str(out), "-q"]
    rerun = polignac("match", *(f"--bot={b}" for b in BOTS), *args)
    assert rerun.exit_code == 0, rerun.output
    assert _from_hand(_lines(out), 2) == _from_hand(original, 2) and _lines(out)[0]["rerun_of"] == original[0]["match_id"]
    unknown = polignac("match", *(f"--bot={b}" for b in BOTS), "--from", "stored-9", "--db", str(db))
    assert unknown.exit_code == 2 and f"no match 'stored-9' in {db}" in unknown.output
    seedless = polignac("match", *(f"--bot={b}" for b in BOTS), "--from", "stored-1:2", "--db", str(db))
    assert seedless.exit_code == 2 and "the record has no seed" in seedless.output
