"""The web face at scale: leaderboard pages, keyset match pages, the top-N crosstable and its CSV, against recomputations.

A synthetic store (120 bots, so the leaderboard has two pages; faults, a void result and an
attempt) is built once for the module; every figure the pages and API show is recomputed here
from the stored results.  A last test counts SQLite's work per page on a store before and
after it grows threefold: the pages cost what they show, not what the store holds.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac_arena.ratings import RatingEnv, rate_match, win_probability
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store, StoredResult
from polignac_arena.web import create_app

START = datetime(2026, 1, 1, tzinfo=UTC)


def _rate(env: RatingEnv) -> Any:
    def rate(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
        before = [current.get(s) or env.initial for s in seats]
        return dict(zip(seats, rate_match(env, before, places), strict=True))

    return rate


def fill(store: Store, name: str, keys: Sequence[str], matches: int, seed: int, clock: list[int], table: int = 4) -> None:
    """A tournament of ``matches`` synthetic results among ``keys``: faults now and then, the last fixture void."""
    rng = random.Random(seed)
    fixtures = [Fixture(i, tuple(rng.sample(list(keys), table)), rng.getrandbits(63)) for i in range(matches)]
    tid = store.create_tournament(name, {"format": "synthetic", "seed": seed}, fixtures)
    rate = _rate(RatingEnv())
    for fixture in fixtures:
        clock[0] += 1
        when = START + timedelta(seconds=clock[0])
        common = {"totals": [0] * table, "hands": 2, "rate": rate, "finished_at": when}
        faults = [{"timeout": 1} if rng.random() < 0.05 else {} for _ in range(table)]
        if fixture.index == matches - 1:  # an attempt kept for diagnosis, then the void result that completes the fixture
            store.record_result(
                tid, fixture.index, match_id=f"{name}-{fixture.index}-try", status=MatchStatus.ERROR, places=None, faults=faults, **common
            )
            store.record_result(
                tid,
                fixture.index,
                match_id=f"{name}-{fixture.index}",
                status=MatchStatus.ABORTED,
                places=None,
                faults=faults,
                final=True,
                **common,
            )
            continue
        places = rng.sample(range(1, table + 1), table)
        store.record_result(
            tid, fixture.index, match_id=f"{name}-{fixture.index}", status=MatchStatus.FINISHED, places=places, faults=faults, **common
        )


def keys_of(count: int) -> list[str]:
    return [f"b{n:03d}@1" for n in range(count)]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "arena.db"
    with Store(path) as store:
        store._conn.execute("PRAGMA synchronous = OFF")  # a throwaway file: not waiting for the disk makes it several times faster
        for key in keys_of(120):
            name, version = key.split("@")
            store.add_bot(name, version, f"/bots/{name}", f"digest-{name}", "python")
        store.add_bot("b000", "2", "/bots/b000-2", "digest-b000-2", "python")
        clock = [0]
        fill(store, "big", keys_of(120), 160, 1, clock)
        fill(store, "small", [*keys_of(6), "b000@2"], 40, 2, clock)
    return path


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def results(db: Path) -> list[StoredResult]:
    with Store(db, create=False) as store:
        return [r for t in store.list_tournaments() for r in store.list_results(t.id)]


def ok(client: TestClient, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return response.json() if response.headers["content-type"].startswith("application/json") else response.text


def status(client: TestClient, url: str) -> int:
    code: int = client.get(url).status_code
    return code


# -- the leaderboard, paged ---------------------------------------------------------------------------


def test_api_leaderboard_pages_are_slices_of_the_whole(client: TestClient) -> None:
    whole = ok(client, "/api/leaderboard?tournament=big&limit=1000")
    assert len(whole) == 120 and [r["rank"] for r in whole] == list(range(1, 121))
    assert ok(client, "/api/leaderboard?tournament=big") == whole[:100]  # the default limit
    assert ok(client, "/api/leaderboard?tournament=big&limit=30&offset=100") == whole[100:120]
    assert ok(client, "/api/leaderboard?tournament=big&offset=500") == []
    by_wins = ok(client, "/api/tournaments/big/leaderboard?sort=wins&limit=1000")
    assert ok(client, "/api/tournaments/big/leaderboard?sort=wins&limit=7&offset=7") == by_wins[7:14]
    assert [r["wins"] for r in by_wins] == sorted((r["wins"] for r in whole), reverse=True)
    for bad in ("limit=0", "limit=1001", "offset=-1", "limit=x"):
        assert status(client, f"/api/leaderboard?{bad}") == 400, bad


def test_leaderboard_page_two_and_its_links(client: TestClient) -> None:
    whole = [r["bot"] for r in ok(client, "/api/leaderboard?tournament=big&sort=name&limit=1000")]
    first, second = ok(client, "/tournaments/big?sort=name"), ok(client, "/tournaments/big?sort=name&page=2")
    rows = [line.split('"')[0] for line in second.split('<tr class="bot-row" data-bot="')[1:]]
    assert rows == whole[100:]
    assert first.count('class="bot-row"') == 100 and 'id="next-page" href="/tournaments/big?sort=name&amp;page=2"' in first
    assert "Rows 101\N{EN DASH}120" in second and 'href="/tournaments/big?sort=name"' in second and "next-page" not in second
    for bad in ("page=3", "page=0", "page=x"):
        assert status(client, f"/tournaments/big?{bad}") == 400, bad


# -- the match list, keyset pages -------------------------------------------------------------------


def _expected(results: Sequence[StoredResult], tournament: str | None, bot: str | None, faults: bool | None) -> list[str]:
    chosen = []
    for r in sorted(results, key=lambda r: r.finished_at, reverse=True):
        if tournament is not None and r.tournament != tournament:
            continue
        if bot is not None and bot not in {s.split("@")[0] for s in r.seats} | set(r.seats):
            continue
        if faults is not None and any(sum(f.values()) for f in r.faults) != faults:
            continue
        chosen.append(r.match_id)
    return chosen


def _walk(client: TestClient, query: str) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params = {k: v for k, v in (p.split("=") for p in query.split("&") if p)} | {"per_page": "7"}
        if cursor is not None:
            params["before"] = cursor
        page = client.get("/api/matches", params=params).json()
        seen += [m["match_id"] for m in page["matches"]]
        cursor = page["next"]
        if cursor is None:
            return seen
        assert len(page["matches"]) == 7


@pytest.mark.parametrize(
    ("tournament", "bot", "faults"),
    [(None, None, None), ("big", None, None), (None, "b000", None), (None, "b000@2", None), ("small", "b001", None),
     (None, None, True), ("big", None, False), (None, "b003", True), ("small", "b002", False)],
)  # fmt: skip
def test_keyset_pages_visit_every_match_once(
    client: TestClient, results: list[StoredResult], tournament: str | None, bot: str | None, faults: bool | None
) -> None:
    query = "&".join(
        f"{k}={v}" for k, v in (("tournament", tournament), ("bot", bot), ("faults", None if faults is None else str(faults).lower())) if v
    )
    seen = _walk(client, query)
    assert seen == _expected(results, tournament, bot, faults)
    assert len(seen) == len(set(seen)) and all(not m.endswith("-try") for m in seen)


def test_old_page_numbers_still_work(client: TestClient) -> None:
    pages = [ok(client, f"/api/matches?per_page=10&page={n}")["matches"] for n in (1, 2, 3)]
    cursor = ok(client, "/api/matches?per_page=10")["next"]
    assert pages[1] == ok(client, f"/api/matches?per_page=10&before={cursor}")["matches"]
    assert len({m["match_id"] for p in pages for m in p}) == 30
    moved = client.get("/matches?page=2&tournament=big", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"].startswith("/matches?tournament=big&before=")
    assert client.get("/matches?page=2&tournament=big").text.count('class="replay-link"') == 50
    assert ok(client, "/api/matches?page=999")["matches"] == []  # as an offset past the end gives
    assert status(client, "/matches?page=999") == 400  # no page to redirect to


def test_the_matches_page_links_the_next_page(client: TestClient) -> None:
    html = ok(client, "/matches?tournament=big")
    cursor = ok(client, "/api/matches?tournament=big")["next"]
    assert f'id="older" href="/matches?tournament=big&amp;before={cursor}"' in html
    older = ok(client, f"/matches?tournament=big&before={cursor}")
    assert "↞ newest" in older and older.count('class="replay-link"') == 50


@pytest.mark.parametrize("before", ["nonsense", "0", "-1", "1.5", "", "9" * 30, "1e3"])
def test_bad_cursors_are_refused(client: TestClient, before: str) -> None:
    assert status(client, f"/api/matches?before={before}") == 400
    assert status(client, f"/matches?before={before}") == 400


def test_a_cursor_past_the_oldest_match_gives_an_empty_last_page(client: TestClient) -> None:
    page = ok(client, "/api/matches?before=1")
    assert page["matches"] == [] and page["next"] is None and page["page"] is None
    assert ok(client, f"/api/matches?before={2**62}")["matches"]


def test_a_cursor_with_a_page_is_refused(client: TestClient) -> None:
    cursor = ok(client, "/api/matches")["next"]
    assert status(client, f"/api/matches?before={cursor}&page=2") == 400


# -- the crosstable: top N, and the whole of it as CSV -------------------------------------------------


def _records(results: Sequence[StoredResult], tournament: str | None) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = {}
    for r in results:
        if r.places is None or r.status != "finished" or tournament not in (None, r.tournament):
            continue
        for i, a in enumerate(r.seats):
            for j, b in enumerate(r.seats):
                if a != b:
                    cell = out.setdefault((a, b), [0, 0, 0])
                    cell[0] += 1
                    cell[1] += r.places[i] < r.places[j]
                    cell[2] += r.places[i] > r.places[j]
    return out


def _ratings(client: TestClient, tournament: str | None) -> list[dict[str, Any]]:
    query = "limit=1000" + ("" if tournament is None else f"&tournament={tournament}")
    return [r for r in ok(client, f"/api/leaderboard?{query}") if r["mu"] is not None]


@pytest.mark.parametrize(("tournament", "top"), [("big", 20), ("big", 5), (None, 100), ("small", 20)])
def test_top_n_crosstable_equals_a_recomputation(client: TestClient, results: list[StoredResult], tournament: str | None, top: int) -> None:
    query = f"top={top}" + ("" if tournament is None else f"&tournament={tournament}")
    table = ok(client, f"/api/crosstable?{query}")
    rated = _ratings(client, tournament)
    assert table["bots"] == [r["bot"] for r in rated[:top]] and table["rated"] == len(rated)
    records, env = _records(results, tournament), RatingEnv()
    for i, a in enumerate(rated[:top]):
        for j, b in enumerate(rated[:top]):
            cell = table["cells"][i][j]
            want = records.get((a["bot"], b["bot"]), [0, 0, 0])
            assert (cell["meetings"], cell["ahead"], cell["behind"], cell["ties"]) == (*want, want[0] - want[1] - want[2])
            expected = None if i == j else win_probability(env, (a["mu"], a["sigma"]), (b["mu"], b["sigma"]))
            assert cell["p"] == pytest.approx(expected)


@pytest.mark.parametrize("tournament", ["big", None])
def test_the_csv_is_the_whole_crosstable(client: TestClient, results: list[StoredResult], tournament: str | None) -> None:
    response = client.get("/crosstable.csv" + ("" if tournament is None else f"?tournament={tournament}"))
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(response.text)))
    rated = _ratings(client, tournament)
    keys = [r["bot"] for r in rated]
    assert rows[0] == ["bot", *keys] and [row[0] for row in rows[1:]] == keys
    records, env = _records(results, tournament), RatingEnv()
    for i, a in enumerate(rated):
        for j, b in enumerate(rated):
            cell = rows[i + 1][j + 1]
            if i == j:
                assert cell == ""
                continue
            meetings, ahead, behind, p = cell.split("/")
            assert [int(meetings), int(ahead), int(behind)] == records.get((a["bot"], b["bot"]), [0, 0, 0])
            assert float(p) == pytest.approx(win_probability(env, (a["mu"], a["sigma"]), (b["mu"], b["sigma"])), abs=5e-5)


def test_the_crosstable_page_shows_the_top_and_links_the_csv(client: TestClient) -> None:
    html = ok(client, "/crosstable?tournament=big")
    assert html.count("<tr><th>b") == 20 and "The top 20 of 120 rated bots" in html
    assert 'href="/crosstable.csv?tournament=big"' in html and "in a single match" in html
    assert ok(client, "/crosstable?tournament=big&top=50").count("<tr><th>b") == 50


@pytest.mark.parametrize("top", ["0", "101", "-3", "x", "2.5", ""])
def test_bad_top_is_refused(client: TestClient, top: str) -> None:
    assert status(client, f"/api/crosstable?top={top}") == 400
    assert status(client, f"/crosstable?top={top}") == 400


def test_unknown_tournaments_are_404(client: TestClient) -> None:
    for url in ("/crosstable.csv?tournament=nope", "/api/crosstable?tournament=nope", "/matches?tournament=nope&page=2"):
        assert status(client, url) == 404, url


# -- the pages cost what they show ----------------------------------------------------------------------

GROWTH_URLS = [
    "/", "/tournaments/t", "/api/leaderboard", "/api/tournaments/t/leaderboard", "/bots/b0", "/api/bots/b0", "/matches",
    "/matches?bot=b1", "/matches?faults=true", "/api/matches?tournament=t&faults=false", "/api/matches?bot=b2@1&faults=true",
    "/crosstable", "/api/crosstable?tournament=t", "/crosstable.csv?tournament=t",
]  # fmt: skip


def _cheap_rate(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    out = {}
    for seat, bot in enumerate(seats):
        mu, sigma = current.get(bot, (25.0, 8.0))
        out[bot] = (mu + (2.5 - places[seat]) * 0.1, max(sigma * 0.99, 1.0))
    return out


def _grown_store(path: Path, matches: int) -> Path:
    """Four bots (each at every table, so each history is past the chart's cap) and ``matches`` results, a tenth with faults."""
    rng = random.Random(5)
    keys = [f"b{n}@1" for n in range(4)]
    with Store(path) as store:
        store._conn.execute("PRAGMA synchronous = OFF")  # a throwaway file: not waiting for the disk makes it several times faster
        for key in keys:
            store.add_bot(key.split("@")[0], "1", "/bots", f"digest-{key}", "python")
        tid = store.create_tournament("t", {"format": "synthetic"}, [Fixture(i, tuple(rng.sample(keys, 4)), i) for i in range(matches)])
        for i in range(matches):
            faults = [{"timeout": 1} if rng.random() < 0.1 else {} for _ in range(4)]
            store.record_result(
                tid, i, match_id=f"t-{i}", status=MatchStatus.FINISHED, places=rng.sample(range(1, 5), 4), totals=[0] * 4, faults=faults,
                hands=1, rate=_cheap_rate, finished_at=START + timedelta(seconds=i),
            )  # fmt: skip
    return path


def _work(db: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """SQLite's virtual machine steps (in hundreds) each URL costs."""
    from polignac_arena.web import app as web_app

    steps = [0]
    opened = web_app.open_read_only

    def counted(path: str | Path) -> Store:
        store = opened(path)
        store._conn.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 100)  # the store hides its connection
        return store

    monkeypatch.setattr(web_app, "open_read_only", counted)
    out = {}
    with TestClient(web_app.create_app(db)) as test_client:
        for url in GROWTH_URLS:
            steps[0] = 0
            assert test_client.get(url).status_code == 200, url
            out[url] = steps[0]
    return out


def test_pages_cost_what_they_show_not_what_the_store_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = _work(_grown_store(tmp_path / "small.db", 150), monkeypatch)
    large = _work(_grown_store(tmp_path / "large.db", 600), monkeypatch)
    grown = {url: (small[url], large[url]) for url in GROWTH_URLS if large[url] > 1.25 * small[url] + 20}
    assert not grown, f"SQLite work (hundreds of steps) that grew with four times the results: {grown}"


def test_head_to_head_of_is_the_rows_of_head_to_head(db: Path) -> None:
    with Store(db, create=False) as store:
        big = store.get_tournament("big")
        assert big is not None
        for tid in (big.id, None):
            every = store.head_to_head(tid)
            chosen = {"b000@1", "b007@1", "b000@2"}
            assert store.head_to_head_of(chosen, tid) == {pair: record for pair, record in every.items() if pair[0] in chosen}
        with pytest.raises(ValueError, match="string"):
            store.head_to_head_of("b000@1")
