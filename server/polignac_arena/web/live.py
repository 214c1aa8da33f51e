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
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polignac_arena.statuses import TournamentStatus
from polignac_arena.store import StoreError
from polignac_arena.web.models import Stamp, TournamentStamp

__all__ = ["DEFAULT_POLL_S", "LiveMark", "stamp"]

DEFAULT_POLL_S: Final = 5.0
"""How often a live page asks for the stamp, in seconds, unless the app is told otherwise."""


@dataclass(frozen=True)
class LiveMark:
    """What a live page is drawn with: the stamp's key when it read the store, and how often to poll for a new one."""

    key: str
    poll_ms: int


def stamp(db: str | Path) -> Stamp:
    """The latest result's id and each tournament's status, rated fixtures and last change; :class:`StoreError` if unreadable."""
    path = Path(db)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            conn.execute("BEGIN")  # one read transaction: the two reads see the same store
            last = conn.execute("SELECT coalesce(max(id), 0) FROM results").fetchone()[0]
            fixture = conn.execute("SELECT coalesce(max(rowid), 0) FROM fixtures").fetchone()[0]
            rows = conn.execute("SELECT name, status, rating_cursor, updated_at FROM tournaments ORDER BY id").fetchall()
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the store {str(path)!r}: {exc}") from None
    tournaments = [
        TournamentStamp(name=name, status=TournamentStatus.parse(status), rated=int(rated), updated_at=updated)
        for name, status, rated, updated in rows
    ]
    content = json.dumps([int(last), int(fixture), [t.model_dump(mode="json") for t in tournaments]], separators=(",", ":"))
    key = hashlib.sha256(content.encode()).hexdigest()[:16]
    return Stamp(key=key, last_result=int(last), last_fixture=int(fixture), tournaments=tournaments)
