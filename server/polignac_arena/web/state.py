"""What every route of the web app depends on: its store, opened read-only once, and the live pages' stamp."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request

from polignac_arena.store import Store, StoreError, schema_version
from polignac_arena.web import live

__all__ = ["LiveMarkDep", "StoreDep", "WebState", "current_store", "live_mark", "open_read_only"]


def open_read_only(db: str | Path) -> Store:
    """Open the store without ever writing to it: refused (:class:`StoreError`) when it is missing or needs a migration.

    ``Store`` migrates an older file when it opens it; the web face must not write, so the
    schema version is read first through a read-only SQLite connection.
    """
    path = Path(db)
    if not path.is_file():
        raise StoreError(f"there is no store at {str(path)!r}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the store {str(path)!r}: {exc}") from None
    if version < schema_version():
        raise StoreError(
            f"the store {str(path)!r} has schema version {version}, this arena writes {schema_version()}: "
            "open it once with another polignac command (which migrates it) before serving it"
        )
    return Store(path, create=False)


class WebState:
    """The app's shared state (``app.state.web``): the store at ``db``, and how often live pages poll."""

    def __init__(self, db: str | Path, live_poll_s: float) -> None:
        self.db = db
        self.live_poll_s = live_poll_s
        self.stamps = live.StampReader(db)  # its connection opens at the first read
        self._store: Store | None = None
        self._lock = threading.Lock()

    def open(self) -> None:
        """Open the store now (the app's start): a missing or unmigrated store is refused before any request."""
        self.store()

    def store(self) -> Store:
        """The store, opened at the first use when the app was not started (a TestClient outside a ``with`` block)."""
        with self._lock:
            if self._store is None:
                self._store = open_read_only(self.db)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
        self.stamps.close()

    def live_mark(self) -> live.LiveMark | None:
        """Taken before a page reads the store: a result stored while it is drawn makes the next poll redraw it."""
        return live.LiveMark(self.stamps.read().key, round(self.live_poll_s * 1000)) if self.live_poll_s else None


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def current_store(request: Request) -> Store:
    """The app's store."""
    return _state(request).store()


def live_mark(request: Request) -> live.LiveMark | None:
    """The stamp a live page is drawn with (None when the app does not poll)."""
    return _state(request).live_mark()


StoreDep = Annotated[Store, Depends(current_store)]
LiveMarkDep = Annotated[live.LiveMark | None, Depends(live_mark)]
