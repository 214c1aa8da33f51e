"""Which node played each result (schema version 3), and the throughput per node that `tournament status` shows."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from polignac import MatchStatus
from polignac_arena.store import NodeThroughput, Store
from tests.test_store import record, schedule


def test_results_keep_their_node_and_the_throughput_is_per_node(tmp_path: Path) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with Store(tmp_path / "a.db") as store:
        tid = store.create_tournament("t", {"k": 1}, schedule(5))
        # node-a: matches of 10 s ending at 10, 20 and 30 s: three matches in 30 s; node-b: one of 5 s.
        for idx, (node, end, duration) in enumerate([("node-a", 10, 10), ("node-a", 20, 10), ("node-b", 5, 5), ("node-a", 30, 10)]):
            record(store, tid, idx, node=node, duration_s=duration, finished_at=start + timedelta(seconds=end))
        record(store, tid, 4)  # a result that names no node
        assert [r.node for r in store.list_results(tid)] == ["node-a", "node-a", "node-b", "node-a", None]
        third = store.get_result(store.list_results(tid)[2].match_id)
        assert third is not None and third.node == "node-b"
        throughput = {row.node: row for row in store.node_throughput(tid)}
    assert set(throughput) == {"", "node-a", "node-b"}
    a, b = throughput["node-a"], throughput["node-b"]
    assert (a.matches, a.busy_s, a.span_s) == (3, 30.0, 30.0) and a.per_minute == pytest.approx(6.0)
    assert (b.matches, b.span_s) == (1, 5.0) and b.per_minute == pytest.approx(12.0)
    assert throughput[""].per_minute == 0.0  # untimed: no pace to show
    assert NodeThroughput("x", 0, 0.0, 0.0).per_minute == 0.0


def test_a_version_2_store_gains_the_node_column_and_keeps_its_results(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(Path(__file__).parent / "data" / "store_v3.db", path)  # written by version 3 (tests/data/make_v3_store.py)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # back to what version 2 wrote: no node column
        conn.execute("DROP INDEX results_node")
        conn.execute("ALTER TABLE results DROP COLUMN node")
        conn.execute("PRAGMA user_version = 2")
    with Store(path) as new:
        tournament = new.get_tournament("gamma")
        assert tournament is not None
        tid = tournament.id
        kept = new.list_results(tid)
        assert len(kept) == 9 and all(r.node is None for r in kept)
        assert [row.matches for row in new.node_throughput(tid)] == [9]
        new.record_result(
            tid, 5, match_id="g5", status=MatchStatus.FINISHED, places=[1, 2, 3, 4, 5], totals=[0] * 5, faults=[{}] * 5, hands=1,
            rate=lambda current, seats, places: {bot: (25.0, 8.0) for bot in seats}, node="node-a",
        )  # fmt: skip
        assert [r.node for r in new.list_results(tid)][5] == "node-a"
        assert new.check() == []
