"""Authors' test matches in the league's store (table ``league_test_runs``, docs/store.md).

A test match is kept apart from the league's results: no fixture, no result row, no rating,
so no public page or list ever reads one.  Each is one row from its request to its end, with
its record compressed; an author's oldest finished ones go past :data:`KEPT_PER_AUTHOR`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Final

from polignac_arena.league.limits import LeagueLimits
from polignac_arena.league.store import LeagueStore, LimitReached
from polignac_arena.record_lines import JsonLine
from polignac_arena.store import StoreError
from polignac_arena.store.encoding import decode_record, encode_record, now_text, timestamp_text

__all__ = ["KEPT_PER_AUTHOR", "TestRun", "TestRunState", "TestRunStore"]

KEPT_PER_AUTHOR: Final = 20
"""Test matches kept per author: past it, the oldest finished or failed ones (and their records) are deleted."""
WAIT_RETRY_S: Final = 30.0
"""``Retry-After`` of a request refused because too many test matches are waiting."""


class TestRunState(StrEnum):
    """Where a test match stands."""

    __test__ = False  # not a pytest class, whatever its name

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    """Played to its end, or to an abort or forfeit: ``status`` says which."""
    FAILED = "failed"
    """Could not be played (a version's folder gone, the arena's own failure): ``reason`` says why."""


@dataclass(frozen=True)
class TestRun:
    """One author's test match: a league match's deals, from ``hand``, with ``version`` in their bot's seats."""

    __test__ = False

    id: int
    author: str
    match_id: str
    hand: int
    version: str
    """The label of the author's version that took their bot's seats."""
    seats: tuple[str, ...]
    state: TestRunState
    reason: str
    requested_at: str
    finished_at: str | None
    status: str | None
    places: tuple[int, ...] | None
    totals: tuple[int, ...] | None

    @property
    def author_seats(self) -> tuple[int, ...]:
        """The seats the author's version holds."""
        return tuple(seat for seat, label in enumerate(self.seats) if label == self.version)


_COLUMNS: Final = """t.id, a.name AS author, t.match_id, t.hand, b.name || '@' || v.version AS version, t.seats, t.state, t.reason,
    t.requested_at, t.finished_at, t.status, t.places, t.totals FROM league_test_runs t
    JOIN league_authors a ON a.id = t.author_id JOIN league_versions v ON v.id = t.version_id JOIN league_bots b ON b.id = v.bot_id"""


def _run(row: sqlite3.Row) -> TestRun:
    places, totals = row["places"], row["totals"]
    return TestRun(
        id=int(row["id"]),
        author=row["author"],
        match_id=row["match_id"],
        hand=int(row["hand"]),
        version=row["version"],
        seats=tuple(json.loads(row["seats"])),
        state=TestRunState(row["state"]),
        reason=row["reason"],
        requested_at=row["requested_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        places=None if places is None else tuple(json.loads(places)),
        totals=None if totals is None else tuple(json.loads(totals)),
    )


class TestRunStore:
    """The test matches of a league's store; every write is one transaction."""

    __test__ = False

    def __init__(self, store: LeagueStore) -> None:
        self.arena = store.arena

    def add(
        self,
        author: str,
        match_id: str,
        hand: int,
        version_id: int,
        seats: Sequence[str],
        limits: LeagueLimits,
        now: datetime | None = None,
    ) -> TestRun:
        """Queue a test match, or raise :class:`LimitReached` (counting nothing) past a limit of ``limits``."""
        moment = now or datetime.now(UTC)
        with self.arena.write() as conn:
            row = conn.execute("SELECT id FROM league_authors WHERE name = ?", (author,)).fetchone()
            if row is None:
                raise StoreError(f"there is no author named {author!r}")
            author_id = int(row[0])
            self._check_limits(conn, author_id, limits, moment)
            run_id = conn.execute(
                "INSERT INTO league_test_runs (author_id, match_id, hand, version_id, seats, state, requested_at)"
                " VALUES (?, ?, ?, ?, ?, 'queued', ?)",
                (author_id, match_id, hand, version_id, json.dumps(list(seats)), timestamp_text(moment)),
            ).lastrowid
            conn.execute(
                """DELETE FROM league_test_runs WHERE id IN (SELECT id FROM league_test_runs WHERE author_id = ?
                   AND state IN ('finished', 'failed') ORDER BY id DESC LIMIT -1 OFFSET ?)""",
                (author_id, KEPT_PER_AUTHOR - 1),
            )
            found = conn.execute(f"SELECT {_COLUMNS} WHERE t.id = ?", (run_id,)).fetchone()
        return _run(found)

    @staticmethod
    def _check_limits(conn: sqlite3.Connection, author_id: int, limits: LeagueLimits, moment: datetime) -> None:
        since = timestamp_text(moment - timedelta(hours=1))
        recent = [
            r[0]
            for r in conn.execute(
                "SELECT requested_at FROM league_test_runs WHERE author_id = ? AND requested_at > ? ORDER BY requested_at",
                (author_id, since),
            ).fetchall()
        ]
        if len(recent) >= limits.reruns_per_hour:
            leaving = datetime.fromisoformat(recent[len(recent) - limits.reruns_per_hour])
            raise LimitReached(
                f"the limit of {limits.reruns_per_hour} test match(es) per hour is reached: try again later",
                retry_after_s=max(1.0, (leaving + timedelta(hours=1) - moment).total_seconds()),
            )
        waiting = conn.execute(
            "SELECT count(*) FROM league_test_runs WHERE author_id = ? AND state IN ('queued', 'running')", (author_id,)
        ).fetchone()[0]
        if waiting >= limits.reruns_waiting:
            raise LimitReached(
                f"you have {waiting} test match(es) waiting or being played, the most at once: wait for one to end",
                retry_after_s=WAIT_RETRY_S,
            )
        queued = conn.execute("SELECT count(*) FROM league_test_runs WHERE state IN ('queued', 'running')").fetchone()[0]
        if queued >= limits.reruns_queued:
            raise LimitReached(
                f"the league has {queued} test matches waiting, the most it takes: try again later", retry_after_s=WAIT_RETRY_S
            )

    def get(self, run_id: int) -> TestRun | None:
        with self.arena.read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} WHERE t.id = ?", (run_id,)).fetchone()
        return None if row is None else _run(row)

    def of_author(self, author: str, limit: int = KEPT_PER_AUTHOR) -> list[TestRun]:
        """The author's test matches, newest first."""
        with self.arena.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} WHERE a.name = ? ORDER BY t.id DESC LIMIT ?", (author, limit)).fetchall()
        return [_run(r) for r in rows]

    def every(self, limit: int = 100) -> list[TestRun]:
        """Every author's test matches, newest first (for the operator)."""
        with self.arena.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} ORDER BY t.id DESC LIMIT ?", (limit,)).fetchall()
        return [_run(r) for r in rows]

    def waiting(self) -> int:
        """Test matches queued or running."""
        with self.arena.read() as conn:
            return int(conn.execute("SELECT count(*) FROM league_test_runs WHERE state IN ('queued', 'running')").fetchone()[0])

    def record(self, run_id: int) -> list[JsonLine] | None:
        """The test match's record, once it has one."""
        with self.arena.read() as conn:
            row = conn.execute("SELECT record FROM league_test_runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None or row[0] is None else decode_record("zlib", row[0])

    def take_next(self) -> TestRun | None:
        """The oldest queued test match, marked running."""
        with self.arena.write() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} WHERE t.state = 'queued' ORDER BY t.id LIMIT 1").fetchone()
            if row is None:
                return None
            conn.execute("UPDATE league_test_runs SET state = 'running' WHERE id = ?", (row["id"],))
        return _run(row)

    def finish(self, run_id: int, status: str, places: Sequence[int] | None, totals: Sequence[int], record: Sequence[JsonLine]) -> None:
        with self.arena.write() as conn:
            conn.execute(
                "UPDATE league_test_runs SET state = 'finished', finished_at = ?, status = ?, places = ?, totals = ?, record = ?"
                " WHERE id = ?",
                (
                    now_text(),
                    status,
                    None if places is None else json.dumps(list(places)),
                    json.dumps(list(totals)),
                    encode_record(record),
                    run_id,
                ),
            )

    def fail(self, run_id: int, reason: str) -> None:
        with self.arena.write() as conn:
            conn.execute(
                "UPDATE league_test_runs SET state = 'failed', finished_at = ?, reason = ? WHERE id = ?",
                (now_text(), reason[:2000], run_id),
            )

    def requeue_running(self) -> int:
        """Put back in the queue what a stop left running (played again from the start); how many."""
        with self.arena.write() as conn:
            return int(conn.execute("UPDATE league_test_runs SET state = 'queued' WHERE state = 'running'").rowcount)
