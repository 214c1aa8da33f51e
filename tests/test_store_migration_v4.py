"""Schema version 4 on a store written by version 3: the migration builds the aggregates, and every
read gives what the version-3 arena read from the same file (``tests/data/make_v3_store.py``)."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.store import Store
from tests.test_store_aggregates import assert_aggregates_recompute

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("v3") / "store.db"
    shutil.copyfile(DATA / "store_v3.db", path)
    with Store(path):
        pass
    return path


def expected() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "store_v3_expected.json").read_text())
    assert data["schema"] == 3
    return data


def plain(value: Any) -> Any:
    """As JSON would give it back (tuples become lists, int keys strings)."""
    return json.loads(json.dumps(value))


def without_trend(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "recent_mu"} for row in rows]


def test_the_migrated_store_reads_as_version_3_read_it(migrated: Path) -> None:
    want = expected()
    with Store(migrated, create=False) as store:
        assert plain(store.latest_ratings()) == want["latest_ratings"]
        assert without_trend(plain([asdict(r) for r in store.leaderboard()])) == want["leaderboard"]
        assert plain([asdict(h) for h in store.head_to_head().values()]) == want["head_to_head"]
        for tournament in store.list_tournaments():
            old = want["tournaments"][tournament.name]
            assert without_trend(plain([asdict(r) for r in store.leaderboard(tournament.id)])) == old["leaderboard"]
            assert plain([asdict(h) for h in store.head_to_head(tournament.id).values()]) == old["head_to_head"]
            assert plain(store.ratings(tournament.id)) == old["ratings"]
            assert plain([asdict(p) for p in store.rating_history(tournament.id)]) == old["history"]
            assert plain(asdict(store.progress(tournament.id))) == old["progress"]
            assert [r.match_id for r in store.list_results(tournament.id, attempts=True)] == old["results"]


def test_the_migrated_aggregates_equal_a_recomputation_and_check_clean(migrated: Path) -> None:
    with Store(migrated, create=False) as store:
        assert store.check() == []
        assert_aggregates_recompute(store)


def test_the_migration_fills_the_trends_and_the_seat_index(migrated: Path) -> None:
    with Store(migrated, create=False) as store:
        alpha = store.get_tournament("alpha")
        assert alpha is not None
        for row in store.leaderboard(alpha.id):
            history = [p.mu for p in store.rating_history(alpha.id, row.bot)]
            assert row.recent_mu == tuple(history[-20:]) and row.recent_mu
        finals = store.list_results(alpha.id)
        page, _ = store.results_page(alpha.id, limit=len(finals) + 5)
        assert sorted(r.match_id for r in page) == sorted(r.match_id for r in finals)
        faulted = {r.match_id for r in finals if any(f for f in r.faults)}
        assert {r.match_id for r in store.results_page(alpha.id, faults=True, limit=100)[0]} == faulted
