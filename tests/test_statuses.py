"""Statuses as enums end to end: the store, the records, the referee's MatchEnded and the SDK."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from polignac import Card, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1 import referee_pb2_grpc as pb_grpc
from polignac.bot import Bot, BotConnectionError, MatchOutcome, play_local, run_async
from polignac.faults import Fault
from polignac.view import PlayerView
from polignac.wire import ruleset_to_pb
from polignac_arena.referee import MatchResult
from polignac_arena.replay import replay_lines
from polignac_arena.statuses import ActionStatus, MatchStatus, TournamentStatus, UnknownStatusError
from polignac_arena.store import Store
from tests.referee.helpers import match_with_raw_seat, polite_match, referee, run

# -- the enums ------------------------------------------------------------------------------------


def test_the_enums_keep_the_texts_stores_and_records_have_always_held() -> None:
    assert [s.value for s in MatchStatus] == ["finished", "aborted", "error"]
    assert [s.value for s in TournamentStatus] == ["scheduled", "running", "finished", "stopped"]
    assert {s.value for s in ActionStatus} == {"ok"} | {f.value for f in Fault}
    assert all(ActionStatus.of(f).value == f.value for f in Fault) and ActionStatus.of(None) is ActionStatus.OK
    # JSON (the records, the web API) writes the same text as before.
    assert json.dumps({"status": MatchStatus.ABORTED, "tournament": TournamentStatus.RUNNING}) == (
        '{"status": "aborted", "tournament": "running"}'
    )


def test_parsing_an_unknown_status_names_it_and_what_is_known() -> None:
    assert MatchStatus.parse("error") is MatchStatus.ERROR and TournamentStatus.parse("stopped") is TournamentStatus.STOPPED
    for bad in ("Finished", "", None, 1, "paused"):
        with pytest.raises(UnknownStatusError, match=r"unknown match status .*: it must be one of finished, aborted, error"):
            MatchStatus.parse(bad)
    with pytest.raises(ValueError, match="unknown tournament status 'paused'"):  # a ValueError, as before
        TournamentStatus.parse("paused")


def test_the_proto_enum_names_every_match_status() -> None:
    names = {pb.MatchStatus.Name(number) for number in pb.MatchStatus.values()}
    assert names == {"MATCH_STATUS_UNSPECIFIED"} | {f"MATCH_STATUS_{s.name}" for s in MatchStatus}


# -- the store ------------------------------------------------------------------------------------


def _elo(current: Any, seats: Any, places: Any) -> dict[str, tuple[float, float]]:
    return {bot: (25.0, 8.0) for bot in seats}


class _Fixture:
    def __init__(self, index: int) -> None:
        self.index, self.seats, self.seed, self.group = index, ("a@1", "b@1"), index, index


def _store(tmp_path: Path) -> tuple[Store, int]:
    store = Store(tmp_path / "arena.db")
    return store, store.create_tournament("t", {"format": "round-robin"}, [_Fixture(i) for i in range(4)])


@contextlib.contextmanager
def _raw(store: Store) -> Iterator[sqlite3.Connection]:
    """A second connection to the file, for what only a hand (or another program) could write."""
    with contextlib.closing(sqlite3.connect(store.path, isolation_level=None)) as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        yield conn


def test_statuses_round_trip_through_the_store_as_enums_and_as_the_same_text(tmp_path: Path) -> None:
    store, tid = _store(tmp_path)
    with store:
        tournament = store.get_tournament(tid)
        assert tournament is not None and tournament.status is TournamentStatus.SCHEDULED
        for status in TournamentStatus:
            store.set_status(tid, status)
            named = store.get_tournament("t")
            assert named is not None and named.status is status
            assert store.list_tournaments()[0].status is status
        store.set_status(tid, "running")  # type: ignore[arg-type]  # the text is taken as well
        running = store.get_tournament(tid)
        assert running is not None and running.status is TournamentStatus.RUNNING
        for idx, match_status in enumerate(MatchStatus):
            places = [1, 2] if match_status is MatchStatus.FINISHED else None
            store.record_result(
                tid,
                idx,
                match_id=f"m{idx}",
                status=match_status,
                places=places,
                totals=[0, 5],
                faults=[{}, {}],
                hands=1,
                rate=_elo,
                final=True,
            )
            stored = store.get_result(f"m{idx}")
            assert stored is not None and stored.status is match_status
        assert [r.status for r in store.list_results(tid)] == list(MatchStatus)
        progress = store.progress(tid)
        assert (progress.done, progress.void) == (3, 2)
        with _raw(store) as raw:
            texts = [row[0] for row in raw.execute("SELECT status FROM results ORDER BY idx")]
            assert texts == ["finished", "aborted", "error"] and all(type(t) is str for t in texts)
            assert raw.execute("SELECT status FROM tournaments").fetchone()[0] == "running"
        assert store.check() == []


def test_the_schema_accepts_exactly_the_enums(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    with store, _raw(store) as raw:
        schema = {name: sql for name, sql in raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
    for table, kind in (("tournaments", TournamentStatus), ("results", MatchStatus)):
        [allowed] = re.findall(r"CHECK \(status IN \(([^)]*)\)\)", schema[table])
        assert [text.strip().strip("'") for text in allowed.split(",")] == [s.value for s in kind], table


def test_an_unknown_status_in_a_stored_row_raises_a_clear_error(tmp_path: Path) -> None:
    store, tid = _store(tmp_path)
    with store:
        finished = MatchStatus.FINISHED
        store.record_result(tid, 0, match_id="m0", status=finished, places=[1, 2], totals=[0, 5], faults=[{}, {}], hands=1, rate=_elo)
        with _raw(store) as raw:
            raw.execute("UPDATE tournaments SET status = 'paused'")
        where = re.escape(repr(str(store.path)))
        with pytest.raises(UnknownStatusError, match=rf"the store {where}: tournament 't' has an unknown tournament status 'paused'"):
            store.get_tournament("t")
        with pytest.raises(UnknownStatusError, match="'paused'"):
            store.list_tournaments()
        assert "t: unknown tournament status 'paused': it must be one of scheduled, running, finished, stopped" in store.check()
        with _raw(store) as raw:
            raw.execute("UPDATE tournaments SET status = 'running'")
            raw.execute("UPDATE results SET status = 'cancelled'")
        with pytest.raises(UnknownStatusError, match=r"match 'm0' has an unknown match status 'cancelled': it must be one of finished"):
            store.get_result("m0")
        with pytest.raises(UnknownStatusError, match="'cancelled'"):
            store.list_results(tid)
        with pytest.raises(UnknownStatusError, match="'cancelled'"):
            store.progress(tid)
        assert "t: fixture 0: unknown match status 'cancelled'" in "\n".join(store.check())


def test_writing_an_unknown_status_is_refused(tmp_path: Path) -> None:
    store, tid = _store(tmp_path)
    with store:
        with pytest.raises(ValueError, match="unknown tournament status 'paused'"):
            store.set_status(tid, "paused")  # type: ignore[arg-type]  # no such status, on purpose
        with pytest.raises(ValueError, match="unknown match status 'lost'"):
            store.record_result(tid, 0, match_id="m", status="lost", places=None, totals=[0, 0], faults=[{}, {}], hands=0, rate=_elo)  # type: ignore[arg-type]  # no such status, on purpose


# -- the referee and the records ------------------------------------------------------------------


def _ended(messages: list[pb.PlayResponse]) -> pb.MatchEnded:
    [ended] = [m.match_ended for m in messages if m.WhichOneof("payload") == "match_ended"]
    return ended


def _result_line(result: MatchResult) -> dict[str, Any]:
    line: dict[str, Any] = json.loads(json.dumps(result.record))[-1]  # as written to the file
    return line


def test_a_finished_match_ends_with_both_fields_and_the_sdk_reads_them() -> None:
    async def scenario() -> tuple[MatchResult, pb.MatchEnded, list[MatchOutcome]]:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server, preset("classic", limit=3))
            await raw.open()
            await raw.hello()
            assert await raw.play_politely() is not None
            await raw.close()
            return await result, _ended(raw.received), list(await asyncio.gather(*polite))

    result, ended, outcomes = run(scenario())
    assert (ended.status, ended.status_code) == ("finished", pb.MATCH_STATUS_FINISHED) and list(ended.places) == list(result.places or ())
    assert result.status is MatchStatus.FINISHED
    assert all(o.status is MatchStatus.FINISHED for o in outcomes)
    assert _result_line(result)["status"] == "finished"
    replay = replay_lines(result.record)
    assert replay.divergence is None and replay.status is MatchStatus.FINISHED


def test_an_aborted_match_ends_with_both_fields_and_the_sdk_reads_them() -> None:
    async def scenario() -> tuple[MatchResult, pb.MatchEnded, list[MatchOutcome]]:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)
            await raw.open()
            await raw.hello()
            assert await raw.next_payload("decision_request") is not None  # every seat has joined
            host.abort("the test stops it")
            assert await raw.next_payload("match_ended") is not None
            await raw.close()
            return await result, _ended(raw.received), list(await asyncio.gather(*polite))

    result, ended, outcomes = run(scenario())
    assert (ended.status, ended.status_code, list(ended.places)) == ("aborted", pb.MATCH_STATUS_ABORTED, [])
    assert result.status is MatchStatus.ABORTED and result.places is None
    assert all(o.status is MatchStatus.ABORTED and o.places == () for o in outcomes)
    line = _result_line(result)
    assert (line["status"], line["places"], line["reason"]) == ("aborted", None, "the test stops it")
    assert replay_lines(result.record).status is MatchStatus.ABORTED


def test_a_referee_failure_ends_with_both_fields_saying_error(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> tuple[MatchResult, pb.MatchEnded]:
        async with referee() as server:
            host, raw, result, polite = await match_with_raw_seat(server)

            async def broken_turn() -> None:
                raise RuntimeError("a bug in the referee")

            monkeypatch.setattr(host, "_turn", broken_turn)
            await raw.open()
            await raw.hello()
            assert await raw.next_payload("match_ended") is not None
            await raw.close()
            await asyncio.gather(*polite)
            return await result, _ended(raw.received)

    result, ended = run(scenario())
    assert (ended.status, ended.status_code) == ("error", pb.MATCH_STATUS_ERROR)
    assert result.status is MatchStatus.ERROR


def test_a_record_with_an_unknown_status_is_refused_naming_the_line() -> None:
    async def scenario() -> MatchResult:
        async with referee() as server:
            result, _ = await polite_match(server, preset("classic", limit=3))
            return result

    lines: list[dict[str, Any]] = json.loads(json.dumps(run(scenario()).record))
    statuses = {line["status"] for line in lines if line["type"] == "action"}
    assert statuses == {"ok"}  # the texts records have always held
    last = len(lines)
    with pytest.raises(UnknownStatusError, match=rf"line {last}: unknown match status 'won'"):
        replay_lines([*lines[:-1], {**lines[-1], "status": "won"}])
    with pytest.raises(ValueError, match=rf"line {last}: unknown match status None"):
        replay_lines([*lines[:-1], {k: v for k, v in lines[-1].items() if k != "status"}])
    first_action = next(n for n, line in enumerate(lines) if line["type"] == "action")
    tampered = [dict(line) for line in lines]
    tampered[first_action]["status"] = "great"
    with pytest.raises(UnknownStatusError, match=rf"line {first_action + 1}: unknown action status 'great'"):
        replay_lines(tampered)


# -- the SDK ----------------------------------------------------------------------------------------


class _Listener(Bot):
    name = "listener"

    def __init__(self) -> None:
        self.ends: list[tuple[tuple[int, ...], tuple[int, ...], MatchStatus]] = []

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]

    def on_match_end(self, places: tuple[int, ...], totals: tuple[int, ...], status: MatchStatus) -> None:
        self.ends.append((places, totals, status))


class _ScriptedReferee(pb_grpc.RefereeServiceServicer):
    """A referee that seats the bot and at once ends the match with the MatchEnded it is given."""

    def __init__(self, ended: pb.MatchEnded | None) -> None:
        self.ended = ended

    async def Play(self, request_iterator: AsyncIterator[pb.PlayRequest], context: Any) -> AsyncIterator[pb.PlayResponse]:
        hello = await anext(aiter(request_iterator))
        assert hello.WhichOneof("message") == "hello"
        yield pb.PlayResponse(
            welcome=pb.Welcome(match_id="scripted", seat=0, ruleset=ruleset_to_pb(preset("classic")), seat_names=["listener"] * 4)
        )
        if self.ended is not None:
            yield pb.PlayResponse(match_ended=self.ended)


def _against(ended: pb.MatchEnded | None) -> tuple[MatchOutcome, _Listener]:
    async def scenario() -> tuple[MatchOutcome, _Listener]:
        server = grpc.aio.server()
        pb_grpc.add_RefereeServiceServicer_to_server(_ScriptedReferee(ended), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            bot = _Listener()
            return await run_async(bot, f"127.0.0.1:{port}", "token"), bot
        finally:
            await server.stop(grace=None)

    return run(scenario())


@pytest.mark.parametrize(
    ("status_code", "status", "expected"),
    [
        pytest.param(pb.MATCH_STATUS_ABORTED, "", MatchStatus.ABORTED, id="the enum alone"),
        pytest.param(pb.MATCH_STATUS_FINISHED, "aborted", MatchStatus.FINISHED, id="the enum wins over the text"),
        pytest.param(pb.MATCH_STATUS_UNSPECIFIED, "aborted", MatchStatus.ABORTED, id="a 1.0 referee: the text"),
        pytest.param(99, "error", MatchStatus.ERROR, id="an enum value from a later version: the text"),
    ],
)
def test_the_sdk_reads_the_enum_and_falls_back_to_the_text(status_code: int, status: str, expected: MatchStatus) -> None:
    places = [1, 2, 3, 4] if expected is MatchStatus.FINISHED else []
    outcome, bot = _against(pb.MatchEnded(places=places, totals=[0, 1, 2, 3], status=status, status_code=status_code))  # type: ignore[arg-type]  # 99: no such enum value, on purpose
    assert outcome.status is expected and outcome.seat == 0
    assert bot.ends == [(tuple(places), (0, 1, 2, 3), expected)] and bot.ends[0][2] is expected


def test_the_sdk_refuses_a_status_it_cannot_read_and_tells_a_match_without_an_end() -> None:
    with pytest.raises(BotConnectionError, match="a status this SDK does not know: 'paused' \\(status_code 7\\)"):
        _against(pb.MatchEnded(totals=[0, 0, 0, 0], status="paused", status_code=7))  # type: ignore[arg-type]  # no such status, on purpose
    outcome, bot = _against(None)
    assert outcome.status is None and bot.ends == []


def test_the_local_harness_reports_the_enum() -> None:
    bot = _Listener()
    play_local(bot, opponents=["random"] * 3, matches=2, seed=5)
    assert [end[2] for end in bot.ends] == [MatchStatus.FINISHED] * 2 and all(end[2] is MatchStatus.FINISHED for end in bot.ends)
