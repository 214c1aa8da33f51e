"""How sure the leaderboard is (polignac_arena.web.confidence): adjacent-pair probabilities, tied runs at 95 %, the
average-place flag by schedule; and the page showing them (the "=" rank, the shaded bands, the hidden column, the
crosstable's one-match label)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac_arena.ratings import RatingEnv, stronger_probability
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus, TournamentStatus
from polignac_arena.store import LeaderboardRow, Store, Tournament
from polignac_arena.web import create_app
from polignac_arena.web.confidence import CONFIDENCE, average_place_meaningful, row_separations, separations
from tests.test_web_api import _rate

# -- the computation -------------------------------------------------------------------------------


def test_each_row_gets_the_probability_that_the_row_above_is_stronger() -> None:
    ratings = [(30.0, 1.0), (27.0, 1.0), (26.9, 1.0), (26.8, 0.5), (10.0, 1.0)]
    got = separations(ratings)
    assert got[0].p_above_stronger is None and not got[0].tied
    for above, row, separation in zip(ratings[:-1], ratings[1:], got[1:], strict=True):
        assert separation.p_above_stronger == pytest.approx(stronger_probability(above, row))
    assert [s.tied for s in got] == [False, False, True, True, False]  # a run: rows 3 and 4 tied to 2 (4 to 3 only, by chain)


def test_the_threshold_is_95_percent_and_sigma_matters() -> None:
    # the same gap of mu is separated when both are sure, not when one is new
    assert CONFIDENCE == 0.95
    assert separations([(26.0, 0.5), (25.0, 0.5)])[1].tied  # P = Phi(1 / sqrt(0.5)) = Phi(1.41) = 0.92
    sure = separations([(26.0, 0.3), (25.0, 0.3)])[1]
    unsure = separations([(26.0, 0.3), (25.0, 8.0)])[1]
    assert sure.p_above_stronger is not None and sure.p_above_stronger > CONFIDENCE and not sure.tied
    assert unsure.p_above_stronger is not None and unsure.p_above_stronger < 0.6 and unsure.tied


def test_unrated_rows_are_not_compared() -> None:
    got = separations([(25.0, 1.0), None, None])
    assert [(s.p_above_stronger, s.tied) for s in got] == [(None, False)] * 3
    assert separations([]) == []
    with pytest.raises(ValueError, match="confidence must be in"):
        separations([(1.0, 1.0)], confidence=1.0)


def _tournament(config: dict[str, Any]) -> Tournament:
    return Tournament(1, "t", config, None, TournamentStatus.FINISHED, "", "", 0)


@pytest.mark.parametrize(
    ("config", "meaningful"),
    [
        ({"format": "round-robin"}, True),
        ({"format": "duplicate"}, True),
        ({}, True),  # a tournament file's default format
        ({"format": "ladder"}, False),
        ({"league": "main", "table_size": 4}, False),
        ({"format": "synthetic"}, False),
    ],
)
def test_average_places_are_comparable_only_in_balanced_schedules(config: dict[str, Any], meaningful: bool) -> None:
    assert average_place_meaningful(_tournament(config)) is meaningful
    assert average_place_meaningful(None) is False  # all-time


def test_leaderboard_rows_are_separated_in_rank_order() -> None:
    def row(rank: int, mu: float | None, sigma: float | None) -> LeaderboardRow:
        return LeaderboardRow(rank, f"b{rank}@1", f"b{rank}", "1", mu, sigma, 1, 0, 1.0, 0.0, {})

    got = row_separations([row(1, 30.0, 1.0), row(2, 29.5, 1.0), row(3, None, None)])
    assert [s.tied for s in got] == [False, True, False]
    assert got[1].p_above_stronger == pytest.approx(stronger_probability((30.0, 1.0), (29.5, 1.0)))
    assert got[2].p_above_stronger is None


# -- the page and the API -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four bots in a synthetic round robin: a and b far apart and sure, c and d close to b (tied), plus a ladder."""
    path = tmp_path_factory.mktemp("confidence") / "arena.db"
    env = RatingEnv()
    with Store(path) as store:
        seats = ("a@1", "b@1", "c@1", "d@1")
        # a always wins; b, c, d share the other places in turn, so they stay close
        orders = [(1, 2, 3, 4), (1, 3, 4, 2), (1, 4, 2, 3)] * 8
        fixtures = [Fixture(i, seats, 100 + i) for i in range(len(orders))]
        tid = store.create_tournament("rr", {"format": "round-robin"}, fixtures)
        for i, places in enumerate(orders):
            store.record_result(
                tid, i, match_id=f"rr-{i}", status=MatchStatus.FINISHED, places=list(places), totals=[0, 1, 2, 3], hands=1,
                faults=[{}, {}, {}, {}], rate=_rate(env),
            )  # fmt: skip
        ladder = store.create_tournament("lad", {"format": "ladder"}, [Fixture(0, ("a@1", "b@1"), 1)])
        store.record_result(
            ladder,
            0,
            match_id="lad-0",
            status=MatchStatus.FINISHED,
            places=[1, 2],
            totals=[0, 1],
            hands=1,
            faults=[{}, {}],
            rate=_rate(env),
        )
    return path


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db, live_poll_s=0)) as test_client:
        yield test_client


def test_the_api_marks_the_tied_run(client: TestClient) -> None:
    rows = client.get("/api/tournaments/rr/leaderboard").json()
    assert rows[0]["bot"] == "a@1" and not rows[0]["tied"]
    assert rows[1]["p_above_stronger"] > CONFIDENCE and not rows[1]["tied"]  # a is surely above the rest
    assert [r["tied"] for r in rows[2:]] == [True, True]
    by_name = client.get("/api/tournaments/rr/leaderboard?sort=name").json()
    assert {r["bot"]: r["tied"] for r in by_name} == {r["bot"]: r["tied"] for r in rows}  # computed in rank order, whatever the sort


def test_a_page_of_the_board_has_the_whole_boards_confidence(client: TestClient) -> None:
    whole = client.get("/api/tournaments/rr/leaderboard").json()
    for offset in range(4):
        page = client.get(f"/api/tournaments/rr/leaderboard?limit=2&offset={offset}").json()
        assert [r["bot"] for r in page] == [r["bot"] for r in whole[offset : offset + 2]]
        assert page == whole[offset : offset + 2], offset  # the first row compares with the row above the page


def test_tie_bands_alternate_and_continue_across_a_page() -> None:
    from polignac_arena.web.pages import _tie_bands

    tied = [False, True, False, False, True, True, False, True]
    assert _tie_bands(tied) == ["even", "even", None, "odd", "odd", "odd", "even", "even"]
    assert _tie_bands([True, False]) == ["even", None]  # a page starting inside a run


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr class="bot-row"[^>]*>.*?</tr>', html, re.S)


def test_the_page_shows_ties_bands_and_the_probability(client: TestClient) -> None:
    html = client.get("/tournaments/rr").text
    rows = _rows(html)
    assert len(rows) == 4
    ranks = [re.search(r'<td class="rank"[^>]*>([^<]*)</td>', row).group(1) for row in rows]  # type: ignore[union-attr]  # every row has its rank cell
    assert ranks == ["1", "2", "=", "="]
    assert "data-band" not in rows[0] and all('data-band="even"' in row for row in rows[1:])
    assert all("data-tied" in row for row in rows[2:]) and "data-tied" not in rows[1]
    assert re.search(r'<td class="p-above">(&gt;99%|\d+%)</td>', rows[1])
    assert "avg place" in html  # a round robin: comparable
    assert "not separated yet" in html


def test_average_place_is_hidden_on_the_ladder_and_all_time(client: TestClient) -> None:
    for url, why in (("/tournaments/lad", "matches bots by rating"), ("/", "mixes tournaments")):
        html = client.get(url).text
        assert "avg place" not in html and "Average places are not shown" in html and why in html, url
        assert client.get(url + "?sort=average_place").status_code == 200


def test_the_crosstable_says_its_p_is_for_one_match(client: TestClient) -> None:
    html = client.get("/crosstable?tournament=rr").text
    assert "in a single match" in html
    schema = client.get("/openapi.json").json()["components"]["schemas"]["CrosstableCell"]
    assert "in one match" in schema["properties"]["p"]["description"].lower()
