"""A league that stops mid-match plays the match on when it starts again: journals, suspension, resumption, damage."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from polignac import Match, Ruleset
from polignac.bot import run_async
from polignac.bots import builtin_bot
from polignac.events import HandEnded
from polignac_arena.league.interrupted import JOURNAL_UNREADABLE
from polignac_arena.league.ladder import Ladder
from polignac_arena.league.play import AWAY_AFTER_RESTART
from polignac_arena.record_lines import ActionLine
from polignac_arena.referee.journal import JournalHead, JournalWriter, read_journal, token_digest
from polignac_arena.referee.record import read_record
from polignac_arena.replay import replay_lines
from polignac_arena.statuses import ActionStatus, MatchStatus
from tests.league.test_ladder_loop import League, league
from tests.referee.helpers import run

SEATS = ["alpha@1", "beta@1", "gamma@1"]
MATCH_ID = "test-000000"
SEED = 11
STARTED_AT = "2026-12-03T20:00:00+00:00"


def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journals"


def ladder_of(lg: League, tmp_path: Path) -> Ladder:
    return lg.ladder(record_dir=tmp_path / "records", journal_dir=journal_dir(tmp_path))


def actions_in(path: Path) -> int:
    return sum(b'"type":"action"' in line for line in path.read_bytes().splitlines())


async def journal_grows(path: Path, actions: int) -> None:
    async with asyncio.timeout(60):
        while not path.exists() or actions_in(path) < actions:
            await asyncio.sleep(0.05)  # the journal is a file: nothing signals its growth


def write_journal(
    lg: League,
    tmp_path: Path,
    actions: int,
    scheduled_seed: int = SEED,
    rules: Ruleset | None = None,
    seats: Sequence[str] = SEATS,
    remote: Sequence[bytes | None] = (None, None, None),
) -> Path:
    """The journal a league killed after ``actions`` decisions of fixture 0 would have left (the fixture is scheduled,
    with ``scheduled_seed``; the match plays ``rules``, by default the league's; ``remote``: seat token digests)."""
    lg.store.schedule(lg.tournament_id, list(seats), scheduled_seed)
    rules = rules or lg.config.rules
    head = JournalHead(MATCH_ID, 0, SEED, rules, lg.config.time, tuple(seats), tuple(remote), STARTED_AT)
    path = journal_dir(tmp_path) / f"{MATCH_ID}.journal"
    writer = JournalWriter.create(path, head)
    writer.write({"type": "seated", "names": [label.split("@")[0] for label in seats], "versions": ["1"] * 3})
    match = Match(rules, SEED)
    for number in range(actions):
        seat, hand, decision = match.to_act, match.hand_number, match.legal_decisions()[0]
        match.apply(decision)
        text = str(decision)
        line = ActionLine(seat=seat, hand=hand, action=text, request_id=number + 1, reply=text, status=ActionStatus.OK, ms=3.0)
        writer.write(line.to_dict())
        writer.write({"type": "bank", "seat": seat, "bank_ms": 3000.0})
    writer.close()
    return path


def result_rows(lg: League, match_id: str) -> list[tuple[str, int]]:
    with sqlite3.connect(lg.config.store) as conn:
        return [(str(s), int(f)) for s, f in conn.execute("SELECT status, final FROM results WHERE match_id = ?", (match_id,))]


def test_a_match_resumed_from_its_journal_is_finished_and_counted_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            path = write_journal(lg, tmp_path, actions=5)
            ladder = ladder_of(lg, tmp_path)
            assert ladder.recover() == [0]
            assert ladder.running == [(MATCH_ID, tuple(SEATS))]
            assert ladder.start_due() == 0, "the resumed match holds its place among the parallel ones"
            await lg.until(lambda: bool(lg.recorded))
            await ladder.drain(30)
            assert lg.recorded == [(0, MatchStatus.FINISHED)]
            assert result_rows(lg, MATCH_ID) == [("finished", 1)]
            assert not path.exists(), "the journal goes once the result is stored"
            record = read_record(tmp_path / "records" / f"{MATCH_ID}.jsonl")
            assert replay_lines(record).divergence is None, "the record replays: the journal's actions, then the rest"
            header, *lines = record
            assert header["started_at"] == STARTED_AT and header["seed"] == SEED
            assert [line["type"] for line in lines[:6]] == ["action"] * 5 + ["resumed"]
            # The uploaded seats were started again and played on without a fault.
            assert lines[-1]["status"] == "finished" and lines[-1]["faults"] == [{}, {}, {}]

    run(scenario(), timeout=120)


def test_a_drain_suspends_a_journaled_match_and_the_next_start_finishes_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            # A match of several hands, so that the drain finds it running.
            lg.config = dataclasses.replace(lg.config, rules=Ruleset.from_dict({**lg.config.rules.to_dict(), "limit": 20}))
            ladder = ladder_of(lg, tmp_path)
            assert ladder.start_due() == 1
            (match_id,) = [match_id for match_id, _ in ladder.running]
            path = journal_dir(tmp_path) / f"{match_id}.journal"
            await journal_grows(path, 4)
            await ladder.drain(0)
            assert lg.recorded == [] and result_rows(lg, match_id) == [], "suspended: no result, not even a void one"
            assert [f.index for f in lg.store.arena.pending_fixtures(lg.tournament_id)] == [0]
            assert lg.server.running_matches == [] and ladder.running == []
            played = read_journal(path)
            assert played.match.event_count > 0 and not played.match.is_over

            again = ladder_of(lg, tmp_path)
            assert again.recover() == [0]
            await lg.until(lambda: bool(lg.recorded))
            await again.drain(30)
            assert lg.recorded == [(0, MatchStatus.FINISHED)] and result_rows(lg, match_id) == [("finished", 1)]
            record = read_record(tmp_path / "records" / f"{match_id}.jsonl")
            assert replay_lines(record).divergence is None
            assert sum(line["type"] == "resumed" for line in record) == 1
            assert not path.exists()

    run(scenario(), timeout=180)


@pytest.mark.parametrize("damage", ["truncated", "garbled", "another-match"])
def test_a_damaged_journal_voids_its_match_with_a_record_that_says_why(damage: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            path = write_journal(lg, tmp_path, actions=4, scheduled_seed=SEED + 1 if damage == "another-match" else SEED)
            data = path.read_bytes()
            lines = data.splitlines(keepends=True)
            if damage == "truncated":
                path.write_bytes(data[: len(data) - len(lines[-1]) // 2])  # the last line cut in its middle
                why = "it is cut short in line 10 (the line has no end)"
            elif damage == "garbled":
                assert b'"hand":1' in lines[4]
                lines[4] = lines[4].replace(b'"hand":1', b'"hand":7')  # still JSON, still a line of the right shape
                path.write_bytes(b"".join(lines))
                why = "line 5: its checksum does not match: the line is garbled"
            else:
                why = f"its seed {SEED} is not the scheduled match's ({SEED + 1})"
            ladder = ladder_of(lg, tmp_path)
            assert ladder.recover() == []
            assert lg.recorded == [(0, MatchStatus.ABORTED)]
            stored = lg.store.arena.get_result(MATCH_ID)
            assert stored is not None and stored.record is not None and stored.places is None
            last: dict[str, Any] = stored.record[-1]
            reason = last["reason"]
            assert reason.startswith(JOURNAL_UNREADABLE.split("(")[0]) and why in reason, reason
            assert list(journal_dir(tmp_path).iterdir()) == [], "the journal of a voided match goes"
            assert ladder.start_due() == 1, "and the ladder plays on"
            await ladder.drain(0)

    run(scenario(), timeout=60)


def test_a_finished_match_is_neither_replayed_nor_counted_twice_after_a_restart(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            path = write_journal(lg, tmp_path, actions=3)
            ladder = ladder_of(lg, tmp_path)
            assert ladder.recover() == [0]
            await lg.until(lambda: bool(lg.recorded))
            await ladder.drain(30)
            ratings = lg.store.arena.ratings(lg.tournament_id)
            cursor = lg.store.arena.get_tournament(lg.tournament_id).rating_cursor  # type: ignore[union-attr]  # the league's tournament exists
            # Killed after the result was stored and before its journal went: the journal is still there at the next start.
            assert not path.exists()
            head = JournalHead(MATCH_ID, 0, SEED, lg.config.rules, lg.config.time, tuple(SEATS), (None,) * 3, STARTED_AT)
            JournalWriter.create(path, head).close()
            again = ladder_of(lg, tmp_path)
            assert again.recover() == [], "a match with its result is not played again"
            assert not path.exists()
            assert result_rows(lg, MATCH_ID) == [("finished", 1)]
            assert lg.store.arena.ratings(lg.tournament_id) == ratings
            assert lg.store.arena.get_tournament(lg.tournament_id).rating_cursor == cursor  # type: ignore[union-attr]  # the league's tournament exists
            assert lg.recorded == [(0, MatchStatus.FINISHED)]

    run(scenario(), timeout=120)


def test_a_match_stopped_twice_and_cut_at_a_hand_end_replays_whole(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            rules = Ruleset.from_dict({**lg.config.rules.to_dict(), "limit": 20})  # a match of several hands: it outlives the stops
            match = Match(rules, SEED)
            first_hand = 0
            while match.hand_number == 1:
                match.apply(match.legal_decisions()[0])
                first_hand += 1
            # Killed between the last action of hand 1 and its hand_ended line: the journal has the actions only.
            path = write_journal(lg, tmp_path, actions=first_hand, rules=rules)
            assert b"hand_ended" not in path.read_bytes()
            ladder = ladder_of(lg, tmp_path)
            assert ladder.recover() == [0]
            await journal_grows(path, first_hand + 3)
            await ladder.drain(0)  # stopped again, a few decisions later
            assert lg.recorded == [] and [f.index for f in lg.store.arena.pending_fixtures(lg.tournament_id)] == [0]
            again = ladder_of(lg, tmp_path)
            assert again.recover() == [0]
            await lg.until(lambda: bool(lg.recorded))
            await again.drain(30)
            assert lg.recorded == [(0, MatchStatus.FINISHED)] and result_rows(lg, MATCH_ID) == [("finished", 1)]
            record = read_record(tmp_path / "records" / f"{MATCH_ID}.jsonl")
            replay = replay_lines(record)
            assert replay.divergence is None, replay.divergence
            ended = sum(isinstance(event, HandEnded) for event in replay.match.events)
            assert sum(line["type"] == "hand_ended" for line in record) == ended, "every hand's end line, the cut one too"
            assert sum(line["type"] == "resumed" for line in record) == 2, "each restart says so, the first too"

    run(scenario(), timeout=180)


@pytest.mark.parametrize("comes_back", [True, False], ids=["back", "gone"])
def test_a_remote_seat_of_a_resumed_match_comes_back_with_its_old_token_or_forfeits_after_the_grace(
    comes_back: bool, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with league(tmp_path, parallel=1) as lg:
            token = "the-seat-token-the-bot-was-given-before-the-restart"
            seats = ["alpha@1", "beta@1", "far@1.0"]
            path = write_journal(lg, tmp_path, actions=2, seats=seats, remote=(None, None, token_digest(token)))
            assert token not in path.read_text()
            ladder = ladder_of(lg, tmp_path)
            assert ladder.recover() == [0]
            await ladder.hosted()
            if comes_back:  # the bot that held seat 2 reattaches with the token it had: the journal's digest knows it
                lg.bots.append(asyncio.ensure_future(run_async(builtin_bot("cautious", 2), lg.server.address, token)))
            await lg.until(lambda: bool(lg.recorded))
            await ladder.drain(30)
            stored = lg.store.arena.get_result(MATCH_ID)
            assert stored is not None and stored.record is not None and stored.status == "finished"
            away = [line for line in stored.record if line["type"] == "away"]
            assert [(line["seat"], line["detail"]) for line in away] == [
                (2, f"{AWAY_AFTER_RESTART}; it may come back within {lg.config.reattach_grace_s:g} s")
            ]
            backs = [line["seat"] for line in stored.record if line["type"] == "back"]
            if comes_back:
                assert backs == [2] and list(stored.faults) == [{}, {}, {}], stored.faults
                (outcome,) = await asyncio.gather(*lg.bots)
                assert outcome is not None
            else:
                assert backs == [] and list(stored.faults) == [{}, {}, {"disconnected": 1}], stored.faults
                (forfeit,) = [line for line in stored.record if line.get("status") == "disconnected"]
                assert forfeit["detail"] == f"the stream ended and the bot did not come back within {lg.config.reattach_grace_s:g} s"
                assert stored.places is not None and stored.places[2] == 3

    run(scenario(), timeout=120)
