"""The store's stamp: what a live page polls to learn, cheaply, that a result was stored since it was drawn.

It reads three things only: the highest result id and the highest fixture row id (index
lookups, whatever the store holds: a ladder adds fixtures as it starts matches) and the
tournaments' rows (a handful), through its own read-only SQLite connection, so a poll every few
seconds from many browsers costs next to nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polignac_arena.statuses import TournamentStatus
from polignac_arena.store import StoreError
from polignac_arena.web.models import StampOut, TournamentStampOut

__all__ = ["DEFAULT_POLL_S", "LiveMark", "StampReader", "stamp"]

DEFAULT_POLL_S: Final = 5.0
"""How often a live page asks for the stamp, in seconds, unless the app is told otherwise."""


@dataclass(frozen=True)
class LiveMark:
    """What a live page is drawn with: the stamp's key when it read the store, and how often to poll for a new one."""

    key: str
    poll_ms: int


class StampReader:
    """Reads the stamp of the store at ``db`` through one read-only connection kept open (a page asks on every request).

    Safe to share between threads: one read at a time.
    """

    def __init__(self, db: str | Path) -> None:
        self.path = Path(db)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def read(self) -> StampOut:
        """The latest result's and fixture's ids and each tournament's progress; :class:`StoreError` if unreadable."""
        try:
            with self._lock:
                if self._conn is None:
                    uri = f"{self.path.resolve().as_uri()}?mode=ro"
                    self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
                conn = self._conn
                conn.execute("BEGIN")  # one read transaction: the three reads see the same store
                try:
                    last = conn.execute("SELECT coalesce(max(id), 0) FROM results").fetchone()[0]
                    fixture = conn.execute("SELECT coalesce(max(rowid), 0) FROM fixtures").fetchone()[0]
                    rows = conn.execute("SELECT name, status, rating_cursor, updated_at FROM tournaments ORDER BY id").fetchall()
                finally:
                    conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self.close()
            raise StoreError(f"cannot read the store {str(self.path)!r}: {exc}") from None
        tournaments = [
            TournamentStampOut(name=name, status=TournamentStatus.parse(status), rated=int(rated), updated_at=updated)
            for name, status, rated, updated in rows
        ]
        content = json.dumps([int(last), int(fixture), [t.model_dump(mode="json") for t in tournaments]], separators=(",", ":"))
        key = hashlib.sha256(content.encode()).hexdigest()[:16]
        return StampOut(key=key, last_result=int(last), last_fixture=int(fixture), tournaments=tournaments)

    def close(self) -> None:
        """Close the connection (the next read opens another)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def stamp(db: str | Path) -> StampOut:
    """The stamp of the store at ``db``, read once (a server keeps a :class:`StampReader`)."""
    reader = StampReader(db)
    try:
        return reader.read()
    finally:
        reader.close()
