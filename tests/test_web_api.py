"""The web face's JSON API (polignac_arena.web), against a store filled by a real small tournament plus a synthetic one with faults.

Every /api/ route, its 404 and 400 cases, and a property-based sweep of the OpenAPI routes' query parameters (no 5xx).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polignac_arena.ratings import RatingEnv, rate_match, win_probability
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from polignac_arena.tournament.config import parse_config
from polignac_arena.tournament.runner import run_tournament
from polignac_arena.web import create_app
from tests.aio import run_sync

SMALL = """name = "small"
entrants = ["random", "cautious", "heuristic"]
table_size = 3
rounds = 4
seed = 11
parallel = 1

[rules]
limit = 5

[seats]
kind = "inprocess"
trusted = true
"""


def _rate(env: RatingEnv) -> Any:
    def rate(current: Any, seats: Any, places: Any) -> dict[str, tuple[float, float]]:
        before = [current.get(s) or env.initial for s in seats]
        return dict(zip(seats, rate_match(env, before, places), strict=True))

    return rate


def build_store(path: Path) -> Path:
    """A real 4-match tournament ("small") and a synthetic 3-match one ("faulty", with a fault in its second match)."""
    with Store(path) as store:
        run_sync(run_tournament(parse_config(SMALL, Path("small.toml")), store))
        seats = ("random@builtin", "cautious@builtin")
        fixtures = [Fixture(i, seats if i % 2 == 0 else seats[::-1], 100 + i) for i in range(3)]
        tid = store.create_tournament("faulty", {"format": "synthetic"}, fixtures)
        for i in range(len(fixtures)):
            store.record_result(
                tid, i, match_id=f"faulty-{i}", status=MatchStatus.FINISHED, places=[1, 2], totals=[0, 7], hands=1,
                faults=[{}, {"timeout": 1}] if i == 1 else [{}, {}], rate=_rate(RatingEnv()),
                record=[{"type": "header"}],
            )  # fmt: skip
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("web") / "arena.db")


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db)) as test_client:
        yield test_client


def ok(client: TestClient, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text)
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def error(client: TestClient, url: str, status: int) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    return str(body["error"])


# -- tournaments ---------------------------------------------------------------------------------


def test_tournaments(client: TestClient) -> None:
    listed = ok(client, "/api/tournaments")
    assert [t["name"] for t in listed] == ["small", "faulty"]
    small = listed[0]
    assert (small["status"], small["fixtures"], small["done"], small["rated"]) == ("finished", 4, 4, 4)
    assert listed[1]["faults"] == {"timeout": 1}


def test_tournament_detail_and_404(client: TestClient) -> None:
    detail = ok(client, "/api/tournaments/small")
    assert detail["entrants"] == ["random", "cautious", "heuristic"] and detail["config"]["rules"]["limit"] == 5
    assert "no tournament named 'nope'" in error(client, "/api/tournaments/nope", 404)


# -- leaderboards --------------------------------------------------------------------------------


def test_leaderboard_matches_the_store(client: TestClient, db: Path) -> None:
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        expected = store.leaderboard(small.id)
        all_time = store.leaderboard(None)
    board = ok(client, "/api/leaderboard?tournament=small")
    assert [r["bot"] for r in board] == [r.bot for r in expected]
    assert [r["rank"] for r in board] == [1, 2, 3]
    for got, want in zip(board, expected, strict=True):
        assert got["mu"] == pytest.approx(want.mu) and got["conservative"] == pytest.approx(want.conservative)
        assert (got["matches"], got["wins"], got["faults"]) == (want.matches, want.wins, want.faults)
    assert ok(client, "/api/tournaments/small/leaderboard") == board
    assert [r["bot"] for r in ok(client, "/api/leaderboard")] == [r.bot for r in all_time]
    conservative = [r["conservative"] for r in board]
    assert conservative == sorted(conservative, reverse=True)


@pytest.mark.parametrize(
    ("sort", "field", "descending"),
    [("mu", "mu", True), ("sigma", "sigma", False), ("matches", "matches", True), ("wins", "wins", True),
     ("average_place", "average_place", False), ("name", "name", False), ("faults", "fault_total", True)],
)  # fmt: skip
def test_leaderboard_sort(client: TestClient, sort: str, field: str, descending: bool) -> None:
    for url in (f"/api/leaderboard?sort={sort}", f"/api/tournaments/small/leaderboard?sort={sort}"):
        values = [r[field] for r in ok(client, url)]
        assert values == sorted(values, reverse=descending), url


def test_leaderboard_errors(client: TestClient) -> None:
    message = error(client, "/api/leaderboard?sort=elo", 400)
    assert "sort" in message and "'mu'" in message
    error(client, "/api/tournaments/small/leaderboard?sort=", 400)
    error(client, "/api/leaderboard?tournament=nope", 404)
    error(client, "/api/tournaments/nope/leaderboard", 404)


# -- crosstable ----------------------------------------------------------------------------------


def test_crosstable(client: TestClient, db: Path) -> None:
    table = ok(client, "/api/crosstable?tournament=small")
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        ratings = store.ratings(small.id)
        assert table["bots"] == [r.bot for r in store.leaderboard(small.id)]
    settings: Any = small.config["trueskill"]
    env = RatingEnv(**settings)
    n = len(table["bots"])
    for i, a in enumerate(table["bots"]):
        for j, b in enumerate(table["bots"]):
            cell = table["cells"][i][j]
            if i == j:
                assert cell["p"] is None
                continue
            assert cell["p"] == pytest.approx(win_probability(env, ratings[a], ratings[b]))
            assert cell["p"] + table["cells"][j][i]["p"] == pytest.approx(1.0)
            assert cell["meetings"] == 4 and cell["ahead"] + cell["behind"] + cell["ties"] == 4
            assert cell["ahead"] == table["cells"][j][i]["behind"]
    assert n == 3
    assert ok(client, "/api/crosstable")["bots"]
    error(client, "/api/crosstable?tournament=nope", 404)


# -- bots ----------------------------------------------------------------------------------------


def test_bots(client: TestClient) -> None:
    listed = ok(client, "/api/bots")
    assert [b["name"] for b in listed] == ["cautious", "heuristic", "random"]
    assert listed[0]["versions"][0]["key"] == "cautious@builtin"


def test_bot_detail(client: TestClient, db: Path) -> None:
    bot = ok(client, "/api/bots/random")
    assert [v["key"] for v in bot["versions"]] == ["random@builtin"]
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        history = store.rating_history(small.id, "random@builtin")
    mine = [(p["idx"], p["mu"], p["sigma"]) for p in bot["history"] if p["tournament"] == "small"]
    assert mine == [(p.idx, p.mu, p.sigma) for p in history]
    assert sum(bot["places"].values()) == 4 + 3
    assert len(bot["recent_matches"]) == 7
    assert [f["match_id"] for f in bot["fault_log"]] == ["faulty-1"]
    assert bot["fault_log"][0]["faults"] == {"timeout": 1}
    assert ok(client, "/api/bots/heuristic")["fault_log"] == []
    assert "no bot named 'nope'" in error(client, "/api/bots/nope", 404)


# -- matches -------------------------------------------------------------------------------------


def test_matches_and_filters(client: TestClient) -> None:
    everything = ok(client, "/api/matches")
    assert everything["total"] == 7 and len(everything["matches"]) == 7
    small = ok(client, "/api/matches?tournament=small")
    assert small["total"] == 4 and {m["tournament"] for m in small["matches"]} == {"small"}
    heuristic = ok(client, "/api/matches?bot=heuristic")  # with a bot or fault filter the total is not counted
    assert heuristic["total"] is None and len(heuristic["matches"]) == 4
    assert all("heuristic@builtin" in m["seats"] for m in heuristic["matches"])
    assert len(ok(client, "/api/matches?bot=random@builtin")["matches"]) == 7
    faulty = ok(client, "/api/matches?faults=true")
    assert [m["match_id"] for m in faulty["matches"]] == ["faulty-1"]
    assert len(ok(client, "/api/matches?faults=false")["matches"]) == 6
    assert len(ok(client, "/api/matches?tournament=faulty&faults=false&bot=cautious")["matches"]) == 2


def test_matches_paging(client: TestClient) -> None:
    pages = [ok(client, f"/api/matches?per_page=3&page={page}") for page in (1, 2, 3, 4)]
    assert [p["pages"] for p in pages] == [3, 3, 3, 3]
    assert [len(p["matches"]) for p in pages] == [3, 3, 1, 0]
    ids = [m["match_id"] for p in pages for m in p["matches"]]
    assert len(set(ids)) == 7
    assert ids == [m["match_id"] for m in ok(client, "/api/matches")["matches"]]


@pytest.mark.parametrize(
    ("query", "word"),
    [("page=-1", "page"), ("page=0", "page"), ("page=two", "page"), ("per_page=0", "per_page"), ("per_page=501", "per_page"),
     ("per_page=1.5", "per_page"), ("faults=maybe", "faults"), ("tournament=", "tournament")],
)  # fmt: skip
def test_matches_bad_parameters(client: TestClient, query: str, word: str) -> None:
    message = error(client, f"/api/matches?{query}", 400)
    assert word in message and message.startswith("bad query parameter")


def test_matches_unknown_filters(client: TestClient) -> None:
    error(client, "/api/matches?tournament=nope", 404)
    error(client, "/api/matches?bot=nope", 404)


def test_match_and_replay(client: TestClient, db: Path) -> None:
    first = ok(client, "/api/matches?tournament=small")["matches"][-1]
    match = ok(client, f"/api/matches/{first['match_id']}")
    assert match["idx"] == 0 and match["status"] == "finished" and sorted(match["places"]) == [1, 2, 3]
    replay = ok(client, f"/api/matches/{first['match_id']}/replay")
    assert replay["divergence"] is None
    kinds = {e["event"] for e in replay["events"]}
    assert {"hand_dealt", "declared", "card_played", "trick_won", "hand_ended", "match_ended"} <= kinds
    with Store(db, create=False) as store:
        stored = store.get_result(first["match_id"])
        assert stored is not None and stored.record is not None
    from polignac_arena.replay import replay_lines

    engine = replay_lines(stored.record).match.events
    assert replay["events"] == [e.to_dict() for e in engine]
    assert [e["winner"] for e in replay["events"] if e["event"] == "trick_won"] == [
        e.to_dict()["winner"] for e in engine if e.to_dict()["event"] == "trick_won"
    ]
    synthetic = ok(client, "/api/matches/faulty-0/replay")
    assert synthetic["events"] == [] and synthetic["divergence"]
    error(client, "/api/matches/nope", 404)
    error(client, "/api/matches/nope/replay", 404)


def test_unknown_api_path_is_a_json_404(client: TestClient) -> None:
    error(client, "/api/nothing/here", 404)


def test_openapi_describes_every_api_route(client: TestClient) -> None:
    spec = ok(client, "/openapi.json")
    assert set(spec["paths"]) == {
        "/api/tournaments", "/api/tournaments/{name}", "/api/leaderboard", "/api/tournaments/{name}/leaderboard", "/api/crosstable",
        "/api/bots", "/api/bots/{name}", "/api/matches", "/api/matches/{match_id}", "/api/matches/{match_id}/replay", "/api/stamp",
    }  # fmt: skip
    sort = spec["paths"]["/api/leaderboard"]["get"]["parameters"]
    assert any(p["name"] == "sort" for p in sort)


def test_the_store_is_not_written(db: Path) -> None:
    before = db.stat().st_mtime_ns, db.read_bytes()
    with TestClient(create_app(db)) as test_client:
        for url in ("/api/leaderboard", "/api/matches", "/api/bots/random", "/", "/matches"):
            test_client.get(url)
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before


# -- property-based: no query string makes the server fail ---------------------------------------

_TEXT = st.one_of(
    st.sampled_from(["", "small", "faulty", "nope", "random", "0", "-1", "1", "2", "true", "false", "mu", "rank", "1e9", "%", "é"]),
    st.text(max_size=12),
)
_ROUTES = st.sampled_from(
    ["/api/tournaments", "/api/tournaments/{x}", "/api/leaderboard", "/api/tournaments/{x}/leaderboard", "/api/crosstable",
     "/api/bots", "/api/bots/{x}", "/api/matches", "/api/matches/{x}", "/api/matches/{x}/replay"]
)  # fmt: skip
_PARAMS = st.dictionaries(st.sampled_from(["tournament", "sort", "bot", "faults", "page", "per_page", "other"]), _TEXT, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=_ROUTES, segment=_TEXT.filter(lambda s: s not in ("", ".", "..")), params=_PARAMS)
def test_no_query_makes_a_server_error(client: TestClient, route: str, segment: str, params: dict[str, str]) -> None:
    response = client.get(route.replace("{x}", quote(segment, safe="")), params=params)
    assert response.status_code in (200, 400, 404), (route, segment, params, response.status_code, response.text)
    body = response.json()
    if response.status_code != 200:
        assert set(body) == {"error"}


def test_results_stored_while_serving_show_up(tmp_path: Path) -> None:
    db = build_store(tmp_path / "live.db")
    with TestClient(create_app(db)) as test_client:
        assert ok(test_client, "/api/matches")["total"] == 7
        with Store(db, create=False) as writer:  # a runner writing while the server reads
            tid = writer.create_tournament("later", {"format": "synthetic"}, [Fixture(0, ("random@builtin", "heuristic@builtin"), 1)])
            writer.record_result(
                tid, 0, match_id="later-0", status=MatchStatus.FINISHED, places=[2, 1], totals=[5, 0], hands=1, faults=[{}, {}],
                rate=_rate(RatingEnv()),
            )  # fmt: skip
        assert [t["name"] for t in ok(test_client, "/api/tournaments")] == ["small", "faulty", "later"]
        assert ok(test_client, "/api/matches")["total"] == 8
        assert [r["bot"] for r in ok(test_client, "/api/leaderboard?tournament=later")] == ["heuristic@builtin", "random@builtin"]
