"""The league writes priors and fixtures through the store's helpers: its leaderboard reads them from
the aggregates, which stay equal to a recomputation."""

from __future__ import annotations

from pathlib import Path

from polignac_arena.league.store import LeagueLimits, LeagueStore
from polignac_arena.statuses import MatchStatus
from tests.test_store_aggregates import assert_aggregates_recompute


def prior(inherited: tuple[float, float] | None) -> tuple[float, float]:
    return ((inherited[0] if inherited else 25.0), 25.0 / 3)


def test_activated_versions_and_scheduled_matches_keep_the_aggregates_true(tmp_path: Path) -> None:
    with LeagueStore(tmp_path / "league.db") as store:
        tid = store.arena.create_tournament("league", {"league": True}, [])
        store.add_author("ada")
        for name in ("x", "y", "z"):
            version, _ = store.add_upload("ada", name, name * 64, LeagueLimits())
            store.finish_validation(version.id, True, "", tid, prior)
        assert [row.bot for row in store.arena.leaderboard(tid)] == ["x@1", "y@1", "z@1"]  # rated by their priors, before any match
        assert store.arena.leaderboard(tid)[0].recent_mu == (25.0,)
        for idx, places in enumerate(([1, 2, 3], [3, 1, 2])):
            assert store.schedule(tid, ["x@1", "y@1", "z@1"], 7 + idx) == idx
            store.arena.record_result(
                tid, idx, match_id=f"m{idx}", status=MatchStatus.FINISHED, places=places, totals=[0, 1, 2], faults=[{}, {}, {}], hands=1,
                rate=lambda current, seats, places: {b: (current[b][0] + 1, 8.0) for b in seats},
            )  # fmt: skip
        newer, _ = store.add_upload("ada", "x", "n" * 64, LeagueLimits())
        store.finish_validation(newer.id, True, "", tid, prior)  # x@2 inherits x@1's mu with a fresh sigma
        row = store.arena.bot_summary("x@2", tid)
        assert row is not None and (row.row.mu, row.row.matches, row.row.recent_mu) == (27.0, 0, (27.0,))
        assert store.arena.bot_keys("x") == ["x@1", "x@2"]
        assert_aggregates_recompute(store.arena)
