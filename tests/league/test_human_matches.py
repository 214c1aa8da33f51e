"""People's matches against the built-in bots: a whole match played through the human seat, and every limit.

The league of ``tests/league/league_process.py`` (three seats, built-ins started in the arena's
own process); the person's decisions are sent as the page sends them (:meth:`HumanSeat.answer`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.league.config import LeagueConfig, load_league_config
from polignac_arena.league.human_matches import HumanMatch, HumanMatches, HumanMatchRefused, describe
from polignac_arena.league.human_seat import AnswerRefused
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.tournament.config import ConfigError
from tests.league.league_process import write_league
from tests.referee.helpers import run

WAIT_S = 60.0


def league(tmp_path: Path, startup_ms: int = 10_000, **limits: Any) -> LeagueConfig:
    config = load_league_config(write_league(tmp_path / "league"))
    time = dataclasses.replace(config.time, startup_ms=startup_ms)
    return dataclasses.replace(config, time=time, author_limits=dataclasses.replace(config.author_limits, **limits))


async def until(match: HumanMatch, ready: object) -> None:
    """Wait (on the seat's change events) until ``ready(match)`` holds."""
    assert callable(ready)
    async with asyncio.timeout(WAIT_S):
        while not ready(match):
            await match.seat.changed.wait()


async def play_out(match: HumanMatch) -> int:
    """Answer every request with the first legal decision, as a person clicking would; the decisions sent."""
    sent = 0
    while match.live:
        await until(match, lambda m: m.seat.pending is not None or not m.live)
        state: Any = describe(match)  # the page's JSON, read as a page reads it
        if state["turn"] is None:
            continue
        choice = (state["legal_contracts"] or state["legal_cards"])[0]
        await match.seat.answer(state["turn"], choice)
        sent += 1
    return sent


def test_a_person_plays_a_whole_match_against_built_ins_through_the_seat(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path), launcher=InProcessLauncher())

    async def main() -> tuple[HumanMatch, int]:
        match = matches.start("ada", ["heuristic", "random"], 3)
        sent = await play_out(match)
        assert match.task is not None
        await match.task
        return match, sent

    match, sent = run(main())
    assert match.status == "finished", match.error
    assert sent > 0
    state: Any = describe(match)
    assert state["ended"]["places"] and len(state["ended"]["places"]) == 3
    assert max(state["ended"]["totals"]) >= 3
    assert any(line["type"] == "result" for line in match.record)
    header: Any = next(line for line in match.record if line["type"] == "header")
    assert header["rules"]["limit"] == 3 and header["time_control"]["move_ms"] == 120_000
    assert state["seat_names"][0] == "ada"


def test_only_the_pending_turns_legal_decisions_are_taken(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path), launcher=InProcessLauncher())

    async def main() -> list[str]:
        match = matches.start("ada", ["random", "random"], 2)
        refusals = []
        await until(match, lambda m: m.seat.pending is not None)
        state: Any = describe(match)
        legal = set(state["legal_cards"]) | set(state["legal_contracts"])
        illegal = next(card for card in ("7S", "8H", "KD", "AC", "QS", "9C", "TH", "JD") if card not in legal)
        for turn, text in ((state["turn"] + 1, next(iter(legal))), (state["turn"], illegal), (state["turn"], "not a card")):
            try:
                await match.seat.answer(turn, text)
            except AnswerRefused as exc:
                refusals.append(str(exc))
        assert match.seat.pending is not None  # still waiting for a legal answer
        await play_out(match)
        return refusals

    refusals = run(main())
    assert len(refusals) == 3
    assert "not your turn" in refusals[0] and "not one of your legal" in refusals[1]


def test_an_idle_person_is_timed_out_by_the_clock_and_forfeits_as_any_bot(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path, startup_ms=1000, human_move_s=0.2), launcher=InProcessLauncher())

    async def main() -> HumanMatch:
        match = matches.start("ada", ["random", "random"], 10)
        assert match.task is not None
        async with asyncio.timeout(WAIT_S):
            await match.task
        return match

    match = run(main())
    state: Any = describe(match)
    assert match.status == "finished"
    assert state["ended"]["places"][0] == 3  # the idle seat forfeited: last
    assert len(state["faults"]) == 3 and all("no decision within" in fault for fault in state["faults"]), state["faults"]
    assert "you forfeit" in state["faults"][-1] and "was played for you" in state["faults"][0]


def test_one_live_match_per_author_and_a_league_wide_cap(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path, human_matches=2), launcher=InProcessLauncher())

    async def main() -> list[int]:
        statuses = []
        first = matches.start("ada", ["random", "random"], 5)
        for author in ("ada", "cy"):
            try:
                matches.start(author, ["random", "random"], 5)
                statuses.append(201)
            except HumanMatchRefused as exc:
                statuses.append(exc.http_status)
        try:
            matches.start("dee", ["random", "random"], 5)
        except HumanMatchRefused as exc:
            statuses.append(exc.http_status)
        await matches.stop()
        assert not first.live
        matches.start("dee", ["random", "random"], 5)  # a stopped one frees its place
        await matches.stop()
        return statuses

    assert run(main()) == [409, 201, 429]


def test_a_league_may_switch_human_matches_off(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path, human_matches=0), launcher=InProcessLauncher())
    with pytest.raises(HumanMatchRefused) as refused:
        run(_start(matches, "ada", ["random", "random"], 5))
    assert refused.value.http_status == 429


@pytest.mark.parametrize(
    ("opponents", "limit", "says"),
    [
        (["random"], 5, "choose 2 opponents"),
        (["random", "random", "random"], 5, "choose 2 opponents"),
        (["random", "../etc/passwd"], 5, "no built-in bot"),
        (["random", "expert"], 0, "points limit"),
        (["random", "expert"], 10_000, "points limit"),
    ],
)
def test_a_bad_start_is_refused_with_a_clear_reason(tmp_path: Path, opponents: list[str], limit: int, says: str) -> None:
    matches = HumanMatches(league(tmp_path), launcher=InProcessLauncher())
    with pytest.raises(HumanMatchRefused) as refused:
        run(_start(matches, "ada", opponents, limit))
    assert refused.value.http_status == 400 and says in refused.value.message
    assert matches.live_count == 0


def test_another_author_cannot_reach_a_match(tmp_path: Path) -> None:
    matches = HumanMatches(league(tmp_path), launcher=InProcessLauncher())

    async def main() -> tuple[object, object]:
        match = matches.start("ada", ["random", "random"], 5)
        found = matches.get("bob", match.id), matches.get("ada", match.id)
        await matches.stop()
        return found

    other, own = run(main())
    assert other is None and own is not None


async def _start(matches: HumanMatches, author: str, opponents: list[str], limit: int) -> HumanMatch:
    match = matches.start(author, opponents, limit)
    await matches.stop()
    return match


def test_the_league_file_sets_the_human_match_limits_within_bounds(tmp_path: Path) -> None:
    config = load_league_config(write_league(tmp_path / "a", limits="human_matches = 2\nhuman_move_s = 60"))
    assert (config.author_limits.human_matches, config.author_limits.human_move_s) == (2, 60.0)
    defaults = load_league_config(write_league(tmp_path / "b")).author_limits
    assert (defaults.human_matches, defaults.human_move_s) == (4, 120.0)
    with pytest.raises(ConfigError, match="human_move_s"):
        load_league_config(write_league(tmp_path / "c", limits="human_move_s = 1"))
