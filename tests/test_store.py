"""The SQLite store: schema and migrations, bots, tournaments, results exactly once, the rating
cursor, statistics, bad files, and a writer killed with SIGKILL at random moments."""

from __future__ import annotations

import inspect
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from polignac import MatchStatus
from polignac_arena import store as store_module
from polignac_arena.statuses import TournamentStatus
from polignac_arena.store import (
    APPLICATION_ID,
    ConflictError,
    NewerSchemaError,
    Store,
    StoreError,
    schema_version,
)
from polignac_arena.store import schema as store_schema

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Fixture:
    """Shaped like ``schedule.Fixture``."""

    index: int
    seats: tuple[str, ...]
    seed: int
    group: object


def elo(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    """A fake rating function whose outcome depends on the order it is applied in (like TrueSkill)."""
    r = {bot: current.get(bot, (25.0, 8.0)) for bot in seats}
    new = {}
    for bot in set(seats):
        mu, sigma = r[bot]
        i = seats.index(bot)
        delta = 0.0
        for j, other in enumerate(seats):
            if other != bot:
                expected = 1 / (1 + 10 ** ((r[other][0] - mu) / 10))
                actual = 1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0
                delta += actual - expected
        new[bot] = (mu + sigma * delta / 2, sigma * 0.95)
    return new


def schedule(n: int, bots: Sequence[str] = ("a@1", "b@1", "c@1", "d@1"), size: int = 3) -> list[Fixture]:
    return [Fixture(i, tuple(bots[(i + k) % len(bots)] for k in range(size)), 1000 + i, i // 2) for i in range(n)]


def places_of(idx: int, size: int = 3) -> list[int]:
    """Deterministic, varied standings with a tie now and then."""
    order = random.Random(idx).sample(range(1, size + 1), size)
    return [min(p, 2) if idx % 5 == 0 else p for p in order]


def record(store: Store, tid: int, idx: int, size: int = 3, **kw: Any) -> store_module.Recorded:
    fields: dict[str, Any] = {
        "match_id": f"m{tid}-{idx}",
        "status": "finished",
        "places": places_of(idx, size),
        "totals": [idx % 7, 3, 5][:size] + [0] * (size - 3),
        "faults": [{} for _ in range(size)],
        "hands": 4,
        "rate": elo,
    }
    fields.update(kw)
    return store.record_result(tid, idx, **fields)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "arena.db") as s:
        yield s


def pragma(path: Path, name: str) -> Any:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


# -- opening, schema, migrations ---------------------------------------------------------------


def test_a_new_store_is_marked_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "arena.db"  # parent folders are made
    with Store(path) as s:
        assert s.list_tournaments() == [] and s.list_bots() == []
        assert s._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert s._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
    assert pragma(path, "user_version") == schema_version() == len(store_schema.MIGRATIONS)
    assert pragma(path, "application_id") == APPLICATION_ID
    assert pragma(path, "journal_mode") == "wal"
    with Store(path) as s:  # opening again changes nothing
        assert s.list_tournaments() == []


def test_an_older_file_is_migrated_once_and_keeps_its_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "arena.db"
    with Store(path) as s:
        s.add_bot("alpha", "1", "/bots/alpha", "d1", "python")
    runs = []

    def v2(conn: sqlite3.Connection) -> None:
        runs.append(1)
        conn.execute("ALTER TABLE bots ADD COLUMN author TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE bots SET author = 'migrated'")

    current = schema_version()
    monkeypatch.setattr(store_schema, "MIGRATIONS", [*store_schema.MIGRATIONS, v2])
    assert schema_version() == current + 1
    with Store(path) as s:
        assert s.get_bot("alpha") is not None
    with Store(path) as s:
        pass
    assert runs == [1]
    assert pragma(path, "user_version") == current + 1
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name, author FROM bots").fetchall() == [("alpha", "migrated")]
    conn.close()


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "arena.db"
    Store(path).close()

    def v2(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("migration bug")

    current = schema_version()
    monkeypatch.setattr(store_schema, "MIGRATIONS", [*store_schema.MIGRATIONS, v2])
    with pytest.raises(RuntimeError, match="migration bug"):
        Store(path)
    assert pragma(path, "user_version") == current
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0
    conn.close()


def test_a_file_from_a_newer_arena_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    expected = rf"newer Polignac Arena \(schema version 7; this one reads up to {schema_version()}\)"
    with pytest.raises(NewerSchemaError, match=expected) as info:
        Store(path)
    assert str(path) in str(info.value)
    assert pragma(path, "user_version") == 7


def test_files_that_are_not_stores_give_a_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("these are not the pages you are looking for\n" * 100)
    with pytest.raises(StoreError, match="not an SQLite database") as info:
        Store(text)
    assert str(text) in str(info.value)
    assert text.read_text().startswith("these are not")  # left alone

    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE accounts (id)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="an SQLite database but not a Polignac Arena store"):
        Store(other)

    with pytest.raises(StoreError, match="it is a directory"):
        Store(tmp_path)
    with pytest.raises(StoreError, match="there is no store at"):
        Store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_a_damaged_store_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(path) as s:
        s.create_tournament("t", {}, schedule(3))
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\x5a" * (4096 - 100)  # the schema page, past the file header
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="is damaged") as info:
        Store(path)
    assert str(path) in str(info.value)


# -- bots --------------------------------------------------------------------------------------


def test_adding_a_bot_is_idempotent_and_a_changed_bot_needs_a_new_version(store: Store) -> None:
    first = store.add_bot("alpha", "1.0", "/bots/alpha", "sha256:aa", "python")
    assert store.add_bot("alpha", "1.0", "/moved/alpha", "sha256:aa", "python") == first
    with pytest.raises(ConflictError, match=r"alpha@1\.0 is already registered with other code .*new version"):
        store.add_bot("alpha", "1.0", "/bots/alpha", "sha256:bb", "python")
    second = store.add_bot("alpha", "1.1", "/bots/alpha", "sha256:bb", "python")
    store.add_bot("beta", "0.1", "/bots/beta", "sha256:cc", "c")
    assert second != first
    bot = store.get_bot("alpha", "1.0")
    assert bot is not None and bot.id == first and bot.path == "/moved/alpha" and bot.key == "alpha@1.0"
    latest = store.get_bot("alpha")
    assert latest is not None and latest.version == "1.1"
    assert store.get_bot("gamma") is None and store.get_bot("alpha", "9") is None
    assert [b.key for b in store.list_bots()] == ["alpha@1.0", "alpha@1.1", "beta@0.1"]
    with pytest.raises(ValueError, match="cannot contain '@'"):
        store.add_bot("a@b", "1", "/x", "d", "python")


# -- tournaments -------------------------------------------------------------------------------


def test_a_tournament_keeps_its_schedule_and_resuming_finds_it(store: Store) -> None:
    config = {"name": "league", "seed": 1, "rules": {"variant": "classic", "limit": 20}}
    fixtures = [*schedule(4), Fixture(4, ("a@1", "b@1", "c@1"), 2**64 - 1, "dup-2")]
    tid = store.create_tournament("league", config, fixtures, source='name = "league"\n')
    reordered = json.dumps({"rules": {"limit": 20, "variant": "classic"}, "seed": 1, "name": "league"})
    assert store.create_tournament("league", reordered, []) == tid  # equal config: the stored schedule wins
    assert [f.index for f in store.fixtures(tid)] == [0, 1, 2, 3, 4]
    last = store.fixtures(tid)[4]
    assert (last.seats, last.seed, last.group) == (("a@1", "b@1", "c@1"), 2**64 - 1, "dup-2")
    assert store.fixtures(tid)[3].group == 1
    with pytest.raises(ConflictError, match=r"'league' is already stored with another configuration \(differs in: rules\.limit\)"):
        store.create_tournament("league", {**config, "rules": {"variant": "classic", "limit": 30}}, fixtures)
    tournament = store.get_tournament("league")
    assert tournament is not None and tournament == store.get_tournament(tid)
    assert (tournament.status, tournament.config, tournament.source, tournament.rating_cursor) == (
        "scheduled",
        config,
        'name = "league"\n',
        0,
    )
    store.set_status(tid, TournamentStatus.RUNNING)
    running = store.get_tournament(tid)
    assert running is not None and running.status == "running"
    with pytest.raises(ValueError, match="must be one of"):
        store.set_status(tid, "paused")  # type: ignore[arg-type]  # not a status, on purpose
    with pytest.raises(StoreError, match="no tournament with id 99"):
        store.set_status(99, TournamentStatus.RUNNING)
    assert store.get_tournament("nope") is None
    other = store.create_tournament("ladder", {}, [])
    store.add_fixtures(other, schedule(2))
    store.add_fixtures(other, [Fixture(2, ("a@1", "b@1"), 5, None)])
    with pytest.raises(ValueError, match="must run 3, 4"):
        store.add_fixtures(other, [Fixture(4, ("a@1", "b@1"), 5, None)])
    assert [t.name for t in store.list_tournaments()] == ["league", "ladder"]
    assert len(store.pending_fixtures(other)) == 3


def test_a_bad_schedule_stores_nothing(store: Store) -> None:
    with pytest.raises(ValueError, match="without gaps or repeats"):
        store.create_tournament("t", {}, [schedule(3)[0], schedule(3)[2]])
    with pytest.raises(ValueError, match="seats must be non-empty bot keys"):
        store.create_tournament("t", {}, [Fixture(0, (), 1, None)])
    with pytest.raises(ValueError, match="must be JSON"):
        store.create_tournament("t", "{not json", [])
    assert store.list_tournaments() == []


# -- results and the rating cursor -------------------------------------------------------------


def test_a_result_is_stored_exactly_once(store: Store) -> None:
    tid = store.create_tournament("t", {}, schedule(3))
    assert record(store, tid, 0, record=[{"type": "header"}]).stored
    again = record(store, tid, 0)  # the same match again (a retry): ignored
    assert (again.stored, again.rated, again.cursor) == (False, (), 1)
    with pytest.raises(ConflictError, match=r"fixture 0 of tournament 't' already has its result \(match m1-0\)"):
        record(store, tid, 0, match_id="another")
    with pytest.raises(ConflictError, match="already the result of another fixture"):
        record(store, tid, 1, match_id="m1-0")
    with pytest.raises(StoreError, match="has no fixture 3"):
        record(store, tid, 3)
    with pytest.raises(ValueError, match="places must give one integer per seat"):
        record(store, tid, 1, places=[1, 2])
    with pytest.raises(ValueError, match="faults must give one mapping"):
        record(store, tid, 1, faults=[{"timeout": "x"}, {}, {}])
    assert [r.idx for r in store.list_results(tid)] == [0]
    assert [f.index for f in store.pending_fixtures(tid)] == [1, 2]
    kept = store.get_result("m1-0")
    assert kept is not None and kept.record == [{"type": "header"}]
    assert store.get_result("nope") is None
    assert store.check() == []


def in_order_ratings(tmp_path: Path, n: int) -> tuple[dict[str, tuple[float, float]], list[Any]]:
    with Store(tmp_path / "reference.db") as ref:
        tid = ref.create_tournament("t", {}, schedule(n))
        for idx in range(n):
            assert record(ref, tid, idx).rated == (idx,)
        return ref.ratings(tid), ref.rating_history(tid)


def test_ratings_wait_for_the_schedule_order(store: Store, tmp_path: Path) -> None:
    tid = store.create_tournament("t", {}, schedule(4))
    calls: list[tuple[str, ...]] = []

    def spy(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
        calls.append(tuple(seats))
        return elo(current, seats, places)

    first = record(store, tid, 2, rate=spy)
    assert (first.stored, first.rated, first.cursor) == (True, (), 0)
    assert record(store, tid, 1, rate=spy).rated == ()
    assert store.ratings(tid) == {} and store.rating_history(tid) == [] and calls == []
    assert store.progress(tid).rated == 0
    assert record(store, tid, 0, rate=spy).rated == (0, 1, 2)
    assert calls == [f.seats for f in schedule(3)]
    assert record(store, tid, 3, rate=spy).rated == (3,)
    tournament = store.get_tournament(tid)
    assert tournament is not None and tournament.rating_cursor == 4
    ratings, history = in_order_ratings(tmp_path, 4)
    assert store.ratings(tid) == ratings
    assert store.rating_history(tid) == history
    assert store.rating_history(tid, "a@1") == [p for p in history if p.bot == "a@1"]
    assert store.check() == []


def test_any_arrival_order_gives_the_same_ratings(tmp_path: Path) -> None:
    ratings, history = in_order_ratings(tmp_path, 12)
    for trial in range(4):
        with Store(tmp_path / f"shuffled{trial}.db") as s:
            tid = s.create_tournament("t", {}, schedule(12))
            order = random.Random(trial).sample(range(12), 12)
            for idx in order:
                record(s, tid, idx)
            assert s.ratings(tid) == ratings and s.rating_history(tid) == history, order
            assert s.check() == []
    # and the fake rating function does depend on the order, as TrueSkill does
    first, second = (("a", "b"), (1, 2)), (("a", "b", "c"), (3, 1, 2))
    assert apply_in_order([first, second]) != apply_in_order([second, first])


def apply_in_order(matches: Sequence[tuple[Sequence[str], Sequence[int]]]) -> dict[str, tuple[float, float]]:
    current: dict[str, tuple[float, float]] = {}
    for seats, places in matches:
        current.update(elo(current, seats, places))
    return current


def test_priors_are_stored_once_and_rated_from(store: Store) -> None:
    priors = {"a@1": (30.0, 4.0)}
    tid = store.create_tournament("t", {}, schedule(2), initial_ratings=priors)
    assert store.create_tournament("t", {}, schedule(2), initial_ratings={"a@1": (0.0, 1.0)}) == tid
    seen: list[dict[str, tuple[float, float]]] = []

    def spy(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
        seen.append(dict(current))
        return elo(current, seats, places)

    record(store, tid, 0, rate=spy)
    assert seen == [priors]  # b@1 and c@1 have no rating yet: absent, the rate function gives their prior
    assert [(p.idx, p.bot) for p in store.rating_history(tid)][:1] == [(-1, "a@1")]
    with pytest.raises(ValueError, match="sigma > 0"):
        store.create_tournament("u", {}, [], initial_ratings={"a@1": (1.0, 0.0)})


def test_aborted_matches_are_rerun_and_void_results_pass_unrated(store: Store) -> None:
    tid = store.create_tournament("t", {}, schedule(4))
    attempt = record(store, tid, 0, match_id="try-1", status="aborted", places=None, record=[{"type": "result", "status": "aborted"}])
    assert (attempt.stored, attempt.rated) == (True, ())
    assert record(store, tid, 1).rated == ()  # the cursor waits for fixture 0
    assert [f.index for f in store.pending_fixtures(tid)] == [0, 2, 3]
    kept = store.get_result("try-1")
    assert kept is not None and not kept.final and kept.status == "aborted" and kept.record == [{"type": "result", "status": "aborted"}]
    assert record(store, tid, 0, match_id="try-2").rated == (0, 1)
    with pytest.raises(ConflictError, match="refusing an attempt"):
        record(store, tid, 0, match_id="try-3", status="error", places=None)
    # giving up on fixture 2: a void result completes it and is passed without a rating
    assert record(store, tid, 2, status="error", places=None, final=True).rated == (2,)
    assert {p.idx for p in store.rating_history(tid)} == {0, 1}
    assert record(store, tid, 3).rated == (3,)
    progress = store.progress(tid)
    assert (progress.total, progress.done, progress.void, progress.rated, progress.attempts, progress.pending) == (4, 4, 1, 4, 1, 0)
    assert [r.match_id for r in store.list_results(tid, attempts=True)] == ["try-1", "try-2", "m1-1", "m1-2", "m1-3"]
    assert sum(row.matches for row in store.leaderboard(tid)) == 3 * 3  # the void result is not counted
    with pytest.raises(ValueError, match="final=False is for aborted or errored ones"):
        store.record_result(
            tid,
            0,
            match_id="x",
            status=MatchStatus.FINISHED,
            places=[1, 2, 3],
            totals=[0, 0, 0],
            faults=[{}] * 3,
            hands=0,
            rate=elo,
            final=False,
        )
    assert store.check() == []


def test_a_failing_rate_function_stores_nothing(store: Store) -> None:
    tid = store.create_tournament("t", {}, schedule(2))

    def broken(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
        raise ZeroDivisionError("rating bug")

    with pytest.raises(ZeroDivisionError):
        record(store, tid, 0, rate=broken)
    with pytest.raises(ValueError, match="must return a rating for each of"):
        record(store, tid, 0, rate=lambda current, seats, places: {"a@1": (1.0, 1.0)})
    with pytest.raises(ValueError, match="must be finite"):
        record(store, tid, 0, rate=lambda current, seats, places: dict.fromkeys(seats, (float("nan"), 1.0)))
    assert store.list_results(tid) == [] and store.get_result("m1-0") is None
    assert store.progress(tid).done == 0 and store.ratings(tid) == {}
    assert record(store, tid, 0).rated == (0,)


def test_records_are_compressed_and_come_back_whole(store: Store, tmp_path: Path) -> None:
    tid = store.create_tournament("t", {}, schedule(1))
    lines: list[dict[str, object]] = [{"type": "header", "match_id": "m1-0", "seats": ["a", "b", "c"]}]
    lines += [{"type": "action", "seat": i % 3, "action": {"card": f"{i % 13}S"}, "ms": 1.25} for i in range(3000)]
    record(store, tid, 0, record=lines, record_path=tmp_path / "m.jsonl", duration_s=1.5)
    result = store.get_result("m1-0")
    assert result is not None and result.record == lines
    assert (result.record_path, result.duration_s, result.seed) == (str(tmp_path / "m.jsonl"), 1.5, 1000)
    size = store._conn.execute("SELECT length(data) FROM records").fetchone()[0]
    assert size * 10 < sum(len(json.dumps(line)) for line in lines)
    text = "".join(json.dumps(line) + "\n" for line in lines[:5])
    tid2 = store.create_tournament("u", {}, schedule(1))
    record(store, tid2, 0, match_id="text", record=text)
    text_result = store.get_result("text")
    assert text_result is not None and text_result.record == lines[:5]


# -- statistics --------------------------------------------------------------------------------


def simple(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    """mu gains 2 - place, sigma shrinks by one: easy to follow by hand."""
    out: dict[str, tuple[float, float]] = {}
    for seat, bot in enumerate(seats):
        mu, sigma = out.get(bot, current.get(bot, (20.0, 5.0)))
        out[bot] = (mu + 2 - places[seat], sigma - 1)
    return out


def test_leaderboard_and_head_to_head_on_a_small_dataset(store: Store) -> None:
    a, b, c, d = "alpha@1", "beta@2", "gamma@1", "delta@1"
    fixtures = [Fixture(0, (a, b, c), 1, 0), Fixture(1, (b, c, a), 2, 0), Fixture(2, (c, a, b), 3, 0), Fixture(3, (a, b, d), 4, 1)]
    tid = store.create_tournament("t", {}, fixtures)
    common: dict[str, Any] = {"status": MatchStatus.FINISHED, "rate": simple, "hands": 2}
    store.record_result(tid, 0, match_id="x0", places=[1, 2, 3], totals=[1, 4, 5], faults=[{}, {"timeout": 1}, {}], **common)
    store.record_result(tid, 1, match_id="x1", places=[1, 1, 3], totals=[2, 2, 6], faults=[{}, {"illegal": 2}, {}], **common)
    common["hands"] = 3
    store.record_result(
        tid, 2, match_id="x2", places=[2, 1, 3], totals=[3, 1, 6], penalties=[3, 1, 5], faults=[{"timeout": 1}, {}, {}], **common
    )
    board = store.leaderboard(tid)
    # alpha: places 1, 3, 1 -> mu 20 + 1 - 1 + 1 = 21, sigma 2; beta: 2, 1, 3 -> 20, 2; gamma: 3, 1, 2 -> 20, 2
    assert [(r.rank, r.bot, r.name, r.version, r.mu, r.sigma) for r in board] == [
        (1, a, "alpha", "1", 21.0, 2.0),
        (2, b, "beta", "2", 20.0, 2.0),
        (3, c, "gamma", "1", 20.0, 2.0),
        (4, d, "delta", "1", None, None),  # scheduled, not yet played
    ]
    alpha, beta, gamma, delta = board
    assert alpha.conservative == 15.0 and delta.conservative is None
    assert (alpha.matches, alpha.wins, alpha.average_place, alpha.faults) == (3, 2, 5 / 3, {})
    assert (beta.matches, beta.wins, beta.average_place, beta.faults) == (3, 1, 2.0, {"timeout": 1})
    assert (gamma.wins, gamma.faults) == (1, {"illegal": 2, "timeout": 1})  # the shared first place counts
    # penalties per hand: alpha 1 + 6 + 1 over 2 + 2 + 3 hands; beta 4 + 2 + 5; gamma 5 + 2 + 3
    assert (alpha.average_penalty_per_hand, beta.average_penalty_per_hand, gamma.average_penalty_per_hand) == (8 / 7, 11 / 7, 10 / 7)
    assert (delta.matches, delta.wins, delta.average_place, delta.average_penalty_per_hand) == (0, 0, None, None)

    h2h = store.head_to_head(tid)
    assert set(h2h) == {(x, y) for x in (a, b, c) for y in (a, b, c) if x != y}
    ab = h2h[a, b]  # alpha - beta: 1-2, 3-1, 1-3
    assert (ab.meetings, ab.a_ahead, ab.b_ahead, ab.ties, ab.mean_place_diff) == (3, 2, 1, 0, -1 / 3)
    assert h2h[b, a].mean_place_diff == 1 / 3 and (h2h[b, a].a_ahead, h2h[b, a].b_ahead) == (1, 2)
    bc = h2h[b, c]  # beta - gamma: 2-3, 1-1, 3-2
    assert (bc.meetings, bc.a_ahead, bc.b_ahead, bc.ties, bc.mean_place_diff) == (3, 1, 1, 1, 0.0)
    progress = store.progress(tid)
    assert (progress.total, progress.done, progress.rated, progress.faults) == (4, 3, 3, {"illegal": 2, "timeout": 2})

    # a second tournament: all-time ratings are each bot's latest, statistics are summed
    later = store.create_tournament("later", {}, [Fixture(0, (a, d), 9, None)])
    store.record_result(
        later, 0, match_id="y0", status=MatchStatus.FINISHED, places=[2, 1], totals=[5, 0], faults=[{}, {}], hands=1, rate=simple
    )
    everything = {row.bot: row for row in store.leaderboard()}
    assert (everything[a].mu, everything[a].sigma, everything[a].matches, everything[a].wins) == (20.0, 4.0, 4, 2)
    assert (everything[b].mu, everything[b].matches) == (20.0, 3)
    assert (everything[d].mu, everything[d].matches, everything[d].wins) == (21.0, 1, 1)
    assert store.latest_ratings()[a] == (20.0, 4.0)
    assert [r.bot for r in store.leaderboard()] == [b, c, d, a]  # by mu - 3 sigma: 14, 14 (then by key), 9, 8
    assert store.head_to_head()[a, d].meetings == 1 and (a, d) not in h2h


def test_the_leaderboard_orders_by_the_conservative_rating(store: Store) -> None:
    tid = store.create_tournament("t", {}, [Fixture(0, ("steady@1", "lucky@1"), 1, None)])

    def fixed(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
        return {"steady@1": (25.0, 1.0), "lucky@1": (30.0, 5.0)}

    store.record_result(
        tid, 0, match_id="z", status=MatchStatus.FINISHED, places=[2, 1], totals=[1, 0], faults=[{}, {}], hands=1, rate=fixed
    )
    assert [(r.bot, r.conservative) for r in store.leaderboard(tid)] == [("steady@1", 22.0), ("lucky@1", 15.0)]


# -- concurrency and kills ---------------------------------------------------------------------


def test_readers_see_the_last_commit_while_a_write_is_open(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with Store(path) as writer, Store(path) as reader, Store(path, timeout=0.2) as impatient:
        tid = writer.create_tournament("t", {}, schedule(2))
        record(writer, tid, 0)
        seen = []

        def peek(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
            progress = reader.progress(tid)  # inside the writer's open transaction
            seen.append((progress.done, progress.rated, len(reader.leaderboard(tid))))
            with pytest.raises(StoreError, match="is busy"):
                impatient.set_status(tid, TournamentStatus.RUNNING)
            return elo(current, seats, places)

        record(writer, tid, 1, rate=peek)
        assert seen == [(1, 1, 4)]
        assert reader.progress(tid).rated == 2


KILL_N, KILL_BOTS = 30, ("a@1", "b@1", "c@1", "d@1", "e@1")
KILL_FIXTURES = schedule(KILL_N, KILL_BOTS)


def kill_record(idx: int) -> list[dict[str, Any]]:
    """About 100 KB of JSON lines, so a write takes a while."""
    rng = random.Random(idx)
    return [{"type": "action", "n": i, "noise": rng.getrandbits(64)} for i in range(2500)]


WRITER_MAIN = """
store = Store(sys.argv[1])
print("ready", flush=True)
tid = store.create_tournament("kill", {"n": len(KILL_FIXTURES)}, KILL_FIXTURES)
pending = [f.index for f in store.pending_fixtures(tid)]
rng = random.Random(int(sys.argv[2]))
while pending:  # results arrive out of order, as from a pool of matches
    idx = pending.pop(rng.randrange(min(3, len(pending))))
    store.record_result(tid, idx, match_id=f"k{idx}", status="finished", places=places_of(idx), totals=[1, 2, 3],
                        faults=[{}, {"timeout": idx % 2}, {}], hands=5, rate=elo, record=kill_record(idx))
    print("wrote", idx, flush=True)
print("done", flush=True)
"""


def writer_script(main: str = WRITER_MAIN) -> str:
    """A writer that shares this module's helpers without importing it (and pytest): their source, then ``main``."""
    header = "from __future__ import annotations\nimport random, sys\nfrom collections.abc import Mapping, Sequence\n"
    header += "from dataclasses import dataclass\nfrom typing import Any\nfrom polignac_arena.store import Store\n"
    helpers = "\n".join(inspect.getsource(f) for f in (Fixture, elo, schedule, places_of, kill_record))
    return f"{header}{helpers}\nKILL_FIXTURES = schedule({KILL_N}, {KILL_BOTS!r})\n{main}"


def consistent(path: Path, verified: set[str]) -> int:
    """Check the store after a kill; return the number of fixtures done.  ``verified``: records already checked whole."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    with Store(path) as s:
        assert s.check() == []
        tournament = s.get_tournament("kill")
        if tournament is None:
            return 0
        results = s.list_results(tournament.id)
        done = {r.idx for r in results}
        cursor = tournament.rating_cursor
        assert set(range(cursor)) <= done and cursor not in done
        rated = {p.idx for p in s.rating_history(tournament.id)}
        assert rated == set(range(cursor))
        for r in results:  # never half a result
            assert r.places == tuple(places_of(r.idx)) and r.hands == 5
            if r.match_id not in verified:
                full = s.get_result(r.match_id)
                assert full is not None and full.record == kill_record(r.idx)
                verified.add(r.match_id)
        return len(done)


def test_a_writer_killed_at_random_moments_leaves_a_consistent_store(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    rng = random.Random(5)
    kills = []
    verified: set[str] = set()
    script = writer_script()
    for run in range(len(KILL_FIXTURES) + 1):
        writer = subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(run)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        # Kill it after a few results, at a random moment of the next write (or of the schedule's creation).
        seen = [writer.stdout.readline() for _ in range(rng.randrange(4))]
        time.sleep(rng.uniform(0.0, 0.03))
        writer.send_signal(signal.SIGKILL)  # a writer that has already finished is not signalled
        # Read the rest through the same buffered reader as the lines above: communicate() with a
        # timeout reads the raw pipe and would miss what readline() already buffered ("done").
        out = "".join(seen) + writer.stdout.read()
        writer.wait(timeout=60)
        done = consistent(path, verified)
        if writer.returncode == -signal.SIGKILL:
            kills.append(done)
        if "done" in out:
            assert done == len(KILL_FIXTURES)
            break
        assert writer.returncode == -signal.SIGKILL, (writer.returncode, out)
    else:
        pytest.fail("the writer never finished")
    assert len(kills) >= 8 and len(set(kills)) >= 5, kills  # killed at many points of the run
    with Store(path) as s:
        killed = s.get_tournament("kill")
        assert killed is not None
        tid = killed.id
        assert s.progress(tid).rated == len(KILL_FIXTURES)
        ratings, history = s.ratings(tid), s.rating_history(tid)
    with Store(tmp_path / "calm.db") as calm:  # the same results stored without interruption, in order
        tid = calm.create_tournament("kill", {"n": len(KILL_FIXTURES)}, KILL_FIXTURES)
        for idx in range(len(KILL_FIXTURES)):
            calm.record_result(tid, idx, match_id=f"k{idx}", status=MatchStatus.FINISHED, places=places_of(idx), totals=[1, 2, 3],
                               faults=[{}, {"timeout": idx % 2}, {}], hands=5, rate=elo)  # fmt: skip
        assert calm.ratings(tid) == ratings and calm.rating_history(tid) == history


SUICIDE_MAIN = """
import os, signal
store = Store(sys.argv[1])
tid = store.create_tournament("kill", {"n": len(KILL_FIXTURES)}, KILL_FIXTURES)
def record(idx, rate):
    store.record_result(tid, idx, match_id=f"k{idx}", status="finished", places=places_of(idx), totals=[1, 2, 3],
                        faults=[{}, {}, {}], hands=5, rate=rate, record=kill_record(idx))
record(1, elo)
calls = []
def die_on_the_second(current, seats, places):
    calls.append(seats)
    if len(calls) == 2:  # fixture 0 is rated and its rows written, in the open transaction: die now
        os.kill(os.getpid(), signal.SIGKILL)
    return elo(current, seats, places)
record(0, die_on_the_second)
"""


def test_a_kill_inside_the_transaction_leaves_nothing_of_it(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    done = subprocess.run([sys.executable, "-c", writer_script(SUICIDE_MAIN), str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert consistent(path, set()) == 1
    with Store(path) as s:
        killed = s.get_tournament("kill")
        assert killed is not None
        tid = killed.id
        assert [r.idx for r in s.list_results(tid)] == [1] and s.get_result("k0") is None
        assert s.ratings(tid) == {} and s.progress(tid).rated == 0
        assert record(s, tid, 0, match_id="k0").rated == (0, 1)
