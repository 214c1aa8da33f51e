"""The store's aggregates (schema version 4) equal a full recomputation from the results, after
random tournaments (attempts, void results, ties, faults, a bot seated twice, results arriving out
of order); and the reads built on them: leaderboard pages, head-to-head of chosen bots, a bot's
summary, keyset pages of results with every filter, the fault log, rating trails."""

from __future__ import annotations

import dataclasses
import itertools
import random
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polignac_arena.statuses import MatchStatus
from polignac_arena.store import HeadToHead, LeaderboardRow, RatingPoint, Store, StoredResult, aggregates
from polignac_arena.store.aggregates import TRAIL_EXACT, TRAIL_SAMPLES
from tests.test_store import Fixture, elo

# -- the reference: every statistic recomputed from list_results, as the store computed it before version 4


def finished_results(store: Store, tournament_id: int | None) -> list[StoredResult]:
    chosen = [t.id for t in store.list_tournaments()] if tournament_id is None else [tournament_id]
    return [r for tid in chosen for r in store.list_results(tid) if r.status is MatchStatus.FINISHED]


def reference_leaderboard(store: Store, tournament_id: int | None) -> list[LeaderboardRow]:
    matches: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    place_sum: Counter[str] = Counter()
    penalty_sum: Counter[str] = Counter()
    hand_sum: Counter[str] = Counter()
    faults: dict[str, Counter[str]] = {}
    if tournament_id is None:
        ratings = store.latest_ratings()
        bots = set(ratings)
        trend = {}
        for t in store.list_tournaments():
            for bot in store.ratings(t.id):
                if store.ratings(t.id)[bot] == ratings.get(bot):
                    trend[bot] = t.id
    else:
        ratings = store.ratings(tournament_id)
        bots = set(ratings) | {bot for f in store.fixtures(tournament_id) for bot in f.seats}
    for r in finished_results(store, tournament_id):
        assert r.places is not None
        for seat, bot in enumerate(r.seats):
            bots.add(bot)
            matches[bot] += 1
            wins[bot] += r.places[seat] == 1
            place_sum[bot] += r.places[seat]
            penalty_sum[bot] += r.penalties[seat]
            hand_sum[bot] += r.hands
            faults.setdefault(bot, Counter()).update(r.faults[seat])
    rows = []
    for bot in bots:
        mu, sigma = ratings.get(bot, (None, None))
        name, _, version = bot.partition("@")
        played = matches[bot]
        rows.append(
            LeaderboardRow(
                0, bot, name, version, mu, sigma, played, wins[bot], place_sum[bot] / played if played else None,
                penalty_sum[bot] / hand_sum[bot] if hand_sum[bot] else None, dict(sorted(faults.get(bot, Counter()).items())),
            )
        )  # fmt: skip
    rows.sort(key=lambda row: (row.mu is None, -(row.conservative or 0.0), -(row.mu or 0.0), row.bot))
    return [dataclasses.replace(row, rank=rank) for rank, row in enumerate(rows, start=1)]


def reference_head_to_head(store: Store, tournament_id: int | None) -> dict[tuple[str, str], HeadToHead]:
    stats: dict[tuple[str, str], list[int]] = {}
    for r in finished_results(store, tournament_id):
        assert r.places is not None
        for i, a in enumerate(r.seats):
            for j, b in enumerate(r.seats):
                if a != b:
                    s = stats.setdefault((a, b), [0, 0, 0, 0])
                    diff = r.places[i] - r.places[j]
                    s[0] += 1
                    s[1] += diff < 0
                    s[2] += diff > 0
                    s[3] += diff
    return {
        (a, b): HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
        for (a, b), (n, ahead, behind, total) in sorted(stats.items())
    }


def all_final(store: Store) -> list[StoredResult]:
    return [r for t in store.list_tournaments() for r in store.list_results(t.id)]


def assert_aggregates_recompute(store: Store) -> None:
    """Every read built on the aggregates equals the same read recomputed from the results; check() is clean."""
    assert store.check() == []
    for tid in [None, *(t.id for t in store.list_tournaments())]:
        board = store.leaderboard(tid)
        assert [dataclasses.replace(r, recent_mu=()) for r in board] == reference_leaderboard(store, tid)
        assert store.head_to_head(tid) == reference_head_to_head(store, tid)
        assert store.leaderboard_size(tid) == len(board)
        assert store.leaderboard_size(tid, rated=True) == sum(r.mu is not None for r in board)
        places: dict[str, Counter[int]] = {}
        for r in finished_results(store, tid):
            for seat, bot in enumerate(r.seats):
                places.setdefault(bot, Counter())[r.places[seat] if r.places else 0] += 1
        for row in board:
            summary = store.bot_summary(row.bot, tid)
            assert summary is not None and summary.row == row
            assert summary.places == dict(sorted(places.get(row.bot, Counter()).items()))
        if tid is not None:
            for row in board:
                history = store.rating_history(tid, row.bot)
                assert row.recent_mu == tuple(p.mu for p in history[-20:])
                trail = store.rating_history(tid, row.bot, max_points=10_000)
                assert trail[-TRAIL_EXACT:] == history[-TRAIL_EXACT:] and trail[:1] == history[:1]
                assert set(trail) <= set(history) and len(trail) <= TRAIL_SAMPLES + TRAIL_EXACT + 1
    finals = all_final(store)
    newest = sorted(finals, key=lambda r: -result_id(store, r))
    assert store.count_results() == len(finals)
    assert [r.match_id for r in pages(store)] == [r.match_id for r in newest]


_IDS: dict[tuple[Path, str], int] = {}


def result_id(store: Store, result: StoredResult) -> int:
    """The row id of a final result (the match list's order)."""
    key = (store.path, result.match_id)
    if key not in _IDS:
        with store.read() as conn:
            _IDS[key] = conn.execute("SELECT id FROM results WHERE match_id = ? AND final = 1", (result.match_id,)).fetchone()[0]
    return _IDS[key]


def pages(store: Store, limit: int = 7, **filters: Any) -> list[StoredResult]:
    """Every result through results_page, page after page."""
    out: list[StoredResult] = []
    key: int | None = None
    while True:
        page, key = store.results_page(**filters, before=key, limit=limit)
        out += page
        assert len(page) <= limit
        if key is None:
            return out
        assert len(page) == limit


# -- random tournaments --------------------------------------------------------------------------

BOTS = ("a@1", "a@2", "b@1", "c@1", "d@1", "e@1")


def random_store(path: Path, seed: int, tournaments: int = 2) -> Store:
    """Tournaments of random tables (a bot seated twice now and then), results in random order: finished (ties,
    faults), attempts aborted or errored, void finals, and some fixtures left pending."""
    rng = random.Random(seed)
    store = Store(path)
    for t in range(tournaments):
        size = rng.choice([2, 3, 4])
        n = rng.randint(1, 14)
        fixtures = []
        for idx in range(n):
            seats = [rng.choice(BOTS) for _ in range(size)] if rng.random() < 0.2 else rng.sample(BOTS, size)
            fixtures.append(Fixture(idx, tuple(seats), rng.getrandbits(64), None))
        priors = {bot: (rng.uniform(20, 30), rng.uniform(4, 8)) for bot in rng.sample(BOTS, 2)} if rng.random() < 0.5 else None
        tid = store.create_tournament(f"t{t}", {"seed": seed, "t": t}, fixtures, initial_ratings=priors)
        order = [i for i in range(n) if rng.random() < 0.85]
        rng.shuffle(order)
        for idx in order:
            seated = fixtures[idx].seats
            faults = [rng.choice([{}, {}, {}, {"timeout": rng.randint(0, 2)}, {"timeout": 1, "illegal": 1}]) for _ in seated]
            for attempt in range(rng.choice([0, 0, 0, 1, 2])):
                status = rng.choice([MatchStatus.ABORTED, MatchStatus.ERROR])
                store.record_result(
                    tid, idx, match_id=f"t{t}-{idx}-a{attempt}", status=status, places=None, totals=[0] * size, faults=faults,
                    hands=rng.randint(0, 3), rate=elo,
                )  # fmt: skip
            if rng.random() < 0.1:
                store.record_result(
                    tid, idx, match_id=f"t{t}-{idx}", status=MatchStatus.ERROR, places=None, totals=[0] * size, faults=faults, hands=1,
                    rate=elo, final=True,
                )  # fmt: skip
                continue
            places = [rng.randint(1, size) for _ in seated]
            places = [1 + sorted(places).index(p) for p in places]  # ties share the better place
            penalties = [rng.randint(0, 9) for _ in seated]
            store.record_result(
                tid, idx, match_id=f"t{t}-{idx}", status=MatchStatus.FINISHED, places=places, totals=penalties, penalties=penalties,
                faults=faults, hands=rng.randint(1, 6), rate=elo,
            )  # fmt: skip
    return store


@pytest.fixture(scope="module")
def quick_folder() -> Iterator[Path]:
    """A folder in memory when the machine has one: these stores test sums, not durability, and a commit's fsync is free there."""
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="polignac-agg-", dir=shm if shm.is_dir() else None) as folder:
        yield Path(folder)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), tournaments=st.integers(1, 3))
def test_aggregates_equal_a_recomputation_after_random_tournaments(quick_folder: Path, seed: int, tournaments: int) -> None:
    path = quick_folder / f"r{seed}-{tournaments}.db"
    with random_store(path, seed, tournaments) as store:
        assert_aggregates_recompute(store)
    for leftover in quick_folder.glob(f"{path.name}*"):
        leftover.unlink()


@pytest.fixture(scope="module")
def sample(quick_folder: Path) -> Iterator[Store]:
    store = random_store(quick_folder / "sample.db", seed=7, tournaments=3)
    yield store
    store.close()


def test_every_filter_of_the_result_pages_equals_filtering_the_results(sample: Store) -> None:
    finals = sorted(all_final(sample), key=lambda r: -result_id(sample, r))
    tids = [None, *(t.id for t in sample.list_tournaments())]
    for tid in tids:
        for bot in (None, "a", "a@2", "c@1", "nobody"):
            for faults in (None, True, False):
                for status in (None, MatchStatus.FINISHED, MatchStatus.ERROR):
                    want = [
                        r.match_id
                        for r in finals
                        if (tid is None or r.tournament_id == tid)
                        and (bot is None or any(bot in (s, s.partition("@")[0]) for s in r.seats))
                        and (faults is None or any(sum(f.values()) for f in r.faults) == faults)
                        and (status is None or r.status is status)
                    ]
                    filters = {"tournament_id": tid, "bot": bot, "faults": faults, "status": status}
                    assert [r.match_id for r in pages(sample, limit=3, **filters)] == want, filters
                    assert sample.count_results(tid, bot, faults, status) == len(want), filters


def test_recent_results_and_the_fault_log_of_a_bot(sample: Store) -> None:
    finals = sorted(all_final(sample), key=lambda r: -result_id(sample, r))
    for bot in ("a", "a@1", "d@1"):
        mine = [r for r in finals if any(bot in (s, s.partition("@")[0]) for s in r.seats)]
        assert [r.match_id for r in sample.recent_results(bot, 5)] == [r.match_id for r in mine[:5]]
        log = [
            (r.match_id, r.seats[i], i, r.faults[i])
            for r in mine
            for i, s in enumerate(r.seats)
            if bot in (s, s.partition("@")[0]) and sum(r.faults[i].values()) != 0
        ]
        entries = sample.fault_log(bot, 1000)
        assert [(e.match_id, e.bot, e.seat, e.faults) for e in entries] == log
        assert sample.fault_log(bot, 2) == entries[:2]
        tid = sample.list_tournaments()[0].id
        assert all(e.tournament_id == tid for e in sample.fault_log(bot, 1000, tid))


def test_a_leaderboard_page_is_a_slice_of_the_whole(sample: Store) -> None:
    for tid in (None, sample.list_tournaments()[0].id):
        whole = sample.leaderboard(tid)
        assert sample.leaderboard(tid, limit=3) == whole[:3]
        assert sample.leaderboard(tid, limit=2, offset=3) == whole[3:5]
        assert sample.leaderboard(tid, limit=0) == []
        with pytest.raises(ValueError, match="offset must be 0 or more, got -1"):
            sample.leaderboard(tid, offset=-1)


def test_head_to_head_of_chosen_bots(sample: Store) -> None:
    whole = sample.head_to_head()
    chosen = {"a@1", "b@1", "e@1"}
    assert sample.head_to_head(None, chosen) == {k: v for k, v in whole.items() if set(k) <= chosen}
    assert sample.head_to_head(None, []) == {}
    with pytest.raises(ValueError, match="got the string 'a@1'"):
        sample.head_to_head(None, "a@1")


def test_a_bot_summary_and_its_keys(sample: Store) -> None:
    summary = sample.bot_summary("a@1")
    assert summary is not None
    assert summary.tournaments == tuple(t.id for t in sample.list_tournaments() if sample.bot_summary("a@1", t.id) is not None)
    assert sample.bot_summary("nobody@1") is None
    assert sample.bot_keys("a") == ["a@1", "a@2"] and sample.bot_keys("nobody") == []


def rate_flat(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    """A rating that moves one step per match: the trail's points are easy to tell apart."""
    return {bot: (current.get(bot, (0.0, 8.0))[0] + 1, 8.0) for bot in set(seats)}


def test_a_long_rating_history_is_charted_from_a_thinned_trail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    samples, exact = 8, 4  # small, so that a short history doubles the stride several times
    monkeypatch.setattr(aggregates, "TRAIL_SAMPLES", samples)
    monkeypatch.setattr(aggregates, "TRAIL_EXACT", exact)
    n = 150
    with Store(tmp_path / "long.db") as store:
        fixtures = [Fixture(i, ("x@1", "y@1"), i, None) for i in range(n)]
        tid = store.create_tournament("long", {}, fixtures, initial_ratings={"x@1": (0.0, 8.0)})
        for idx in range(n):
            store.record_result(
                tid,
                idx,
                match_id=f"m{idx}",
                status=MatchStatus.FINISHED,
                places=[1, 2],
                totals=[0, 1],
                faults=[{}, {}],
                hands=1,
                rate=rate_flat,
            )
            if idx % 37 == 0:
                assert store.check() == []  # the trail is right at every length, not only at the end
        history = store.rating_history(tid, "x@1")
        assert len(history) == n + 1
        chart = store.rating_history(tid, "x@1", max_points=1000)
        assert len(chart) <= samples + exact + 1 and chart[0] == history[0] and chart[-exact:] == history[-exact:]
        gaps = {b.idx - a.idx for a, b in itertools.pairwise(chart[:-exact])}
        assert len(gaps) == 1 and gaps.pop() == aggregates.trail_stride(n + 1)  # evenly spaced
        small = store.rating_history(tid, "x@1", max_points=6)
        assert len(small) == 6 and small[0] == history[0] and small[-3:] == history[-3:]
        assert store.rating_history(tid, "y@1", max_points=1) == [RatingPoint(n - 1, "y@1", float(n), 8.0)]
        with pytest.raises(ValueError, match="max_points needs a bot"):
            store.rating_history(tid, max_points=10)
        with pytest.raises(ValueError, match="max_points must be 1 or more, got 0"):
            store.rating_history(tid, "x@1", max_points=0)
        assert store.check() == []


def test_the_shipped_trail_keeps_a_few_hundred_points() -> None:
    for points in (1, 100, TRAIL_SAMPLES + TRAIL_EXACT + 1, 10_000, 50_000):
        kept = list(aggregates.trail_keeps(points))
        assert kept[0] == 0 and kept[-TRAIL_EXACT:] == list(range(points))[-TRAIL_EXACT:]
        assert len(kept) <= TRAIL_SAMPLES + TRAIL_EXACT + 1 <= 300
