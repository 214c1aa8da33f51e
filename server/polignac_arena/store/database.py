"""The store's SQLite file: opening and migrating it, one transaction per write, consistent reads."""

from __future__ import annotations

import contextlib
import itertools
import json
import sqlite3
import threading
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Self, TypeVar

from polignac.jsontypes import JsonObject
from polignac_arena.statuses import MatchStatus, TournamentStatus, UnknownStatusError, parse_status
from polignac_arena.store import schema
from polignac_arena.store.records import (
    NewerSchemaError,
    Rating,
    StoredFixture,
    StoredResult,
    StoreError,
    Tournament,
)
from polignac_arena.store.schema import APPLICATION_ID

S = TypeVar("S", bound=StrEnum)

CACHE_KIB = 32 * 1024
"""The page cache of each connection (SQLite's default is 2 MiB)."""


class Database:
    """One SQLite store file, opened (created or migrated) once: the connection the writer and the queries share.

    Safe to share between threads (one operation at a time); every process opens its own.
    """

    _BOT = "SELECT id, name, version, path, digest, language, added_at FROM bots"  # named columns: later versions may add some
    _TOURNAMENT = "SELECT id, name, config, source, status, created_at, updated_at, rating_cursor FROM tournaments"
    _RESULT = """SELECT r.tournament_id, t.name, r.idx, f.seats, f.seed, r.match_id, r.status, r.final, r.places, r.totals,
                 r.faults, r.hands, r.penalties, r.duration_s, r.finished_at, r.record_path, r.id, r.node
                 FROM results r JOIN tournaments t ON t.id = r.tournament_id
                 JOIN fixtures f ON f.tournament_id = r.tournament_id AND f.idx = r.idx"""
    # The leaderboard's order (LeaderboardRow.conservative, then mu, then the key; unrated last), in SQL.
    _BOARD_ORDER = "ORDER BY mu IS NULL OR sigma IS NULL, mu - 3 * sigma DESC, mu DESC, bot"
    _BOARD_COLUMNS = "bot, mu, sigma, recent, matches, wins, place_sum, places, penalty_sum, hands, faults, first_played, last_played"
    # The all-time leaderboard's bots (rated somewhere, or with a finished match) and each one's latest rating.
    _ALL_TIME_BOTS = (
        """SELECT bot FROM bot_stats b GROUP BY bot HAVING sum(matches) > 0 OR EXISTS (SELECT 1 FROM ratings r WHERE r.bot = b.bot)"""
    )
    _LATEST = """SELECT bot, mu, sigma, recent FROM ratings r WHERE NOT EXISTS (
                   SELECT 1 FROM ratings n WHERE n.bot = r.bot
                   AND (n.idx >= 0, n.updated_at, n.tournament_id) > (r.idx >= 0, r.updated_at, r.tournament_id))"""
    # The all-time board's bots with their ratings only: enough to order them.
    _RANKING = f"""(SELECT s.bot AS bot, l.mu AS mu, l.sigma AS sigma FROM ({_ALL_TIME_BOTS}) s LEFT JOIN ({_LATEST}) l ON l.bot = s.bot)"""
    _PAIR = "meetings, a_ahead, b_ahead, place_diff_sum"

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 30.0) -> None:
        """Open (or, with ``create``, create) the store at ``path``; wait up to ``timeout`` seconds for a lock."""
        self.path = Path(path)
        self._lock = threading.RLock()
        if self.path.is_dir():
            raise StoreError(f"cannot open the store {str(self.path)!r}: it is a directory")
        if not self.path.exists():
            if not create:
                raise StoreError(f"there is no store at {str(self.path)!r}")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store {str(self.path)!r}: {exc.strerror}") from None
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        self._conn.row_factory = sqlite3.Row  # rows are read by column name
        try:
            self._open(timeout)
        except BaseException:
            self._conn.close()
            raise

    def _open(self, timeout: float) -> None:
        with self._guard():
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            version = self._check_identity()
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"cannot use the store {str(self.path)!r}: its file system does not support WAL mode (got {mode!r})")
            self._conn.execute("PRAGMA synchronous = FULL")  # a commit survives a power cut too, not only a kill
            # The aggregates' rows of a bot are scattered over a league's pages: a cache that
            # holds them spares a read (a write: a read and a write) of each from the OS.
            self._conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        if version == len(schema.MIGRATIONS):
            return  # up to date: no write lock needed (a reader opening the store never waits for the runner)
        with self.write() as conn:
            version = self._check_identity()  # again, under the lock: another process may have migrated it
            for number in range(version, len(schema.MIGRATIONS)):
                schema.MIGRATIONS[number](conn)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            if version < len(schema.MIGRATIONS):
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def _check_identity(self) -> int:
        """The file's schema version, after checking that the file is an arena store this arena reads."""
        app = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        foreign = app not in (0, APPLICATION_ID)
        if app == 0 and version == 0:
            foreign = self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        if foreign:
            raise StoreError(f"{str(self.path)!r} is an SQLite database but not a Polignac Arena store")
        if version > len(schema.MIGRATIONS):
            raise NewerSchemaError(
                f"{str(self.path)!r} was written by a newer Polignac Arena (schema version {version}; "
                f"this one reads up to {len(schema.MIGRATIONS)}): upgrade polignac-arena to use it"
            )
        return version

    def close(self) -> None:
        """Close the file (a checkpoint folds the WAL back into it when this is the last connection)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(self, exc: sqlite3.Error) -> StoreError:
        message = str(exc)
        where = repr(str(self.path))
        if "file is not a database" in message:
            return StoreError(f"{where} is not a Polignac Arena store: not an SQLite database (or an encrypted or damaged one)")
        if "malformed" in message:
            return StoreError(f"the store {where} is damaged ({message}); restore it from a copy")
        if "locked" in message or "busy" in message:
            return StoreError(f"the store {where} is busy: another process held its lock too long ({message})")
        if "unable to open" in message:
            return StoreError(f"cannot open the store {where}: {message}")
        return StoreError(f"the store {where}: {message}")

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """A transaction begun with ``begin``: committed when its body ends, rolled back when the body raises."""
        with self._lock, self._guard():
            self._conn.execute(begin)
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction: all of it is committed, or none of it."""
        return self._transaction("BEGIN IMMEDIATE")

    def read(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One read transaction: every query sees the same snapshot (a body that raises ends it with a rollback: it wrote nothing)."""
        return self._transaction("BEGIN")

    @contextlib.contextmanager
    def read_in(self, tournament_id: int | None) -> Iterator[sqlite3.Connection]:
        """:meth:`read`, for queries of one tournament (None: of all): it must exist (:meth:`require`)."""
        with self.read() as conn:
            if tournament_id is not None:
                self.require(conn, tournament_id)
            yield conn

    def _tournament(self, row: sqlite3.Row) -> Tournament:
        """A row of :attr:`_TOURNAMENT`."""
        status = self._status(TournamentStatus, row["status"], "tournament status", f"tournament {row['name']!r}")
        return Tournament(
            row["id"], row["name"], json.loads(row["config"]), row["source"], status, row["created_at"], row["updated_at"],
            row["rating_cursor"],
        )  # fmt: skip

    def _status(self, kind: type[S], text: object, what: str, owner: str) -> S:
        """A status column's text as its enum: an unknown text (a file edited by hand) is an error, never passed on."""
        try:
            return parse_status(kind, text, what)
        except UnknownStatusError as exc:
            raise UnknownStatusError(f"the store {str(self.path)!r}: {owner} has an {exc}") from None

    def require(self, conn: sqlite3.Connection, tournament_id: int) -> Tournament:
        """The tournament with this id (inside an open transaction); :class:`StoreError` if there is none."""
        row = conn.execute(f"{self._TOURNAMENT} WHERE id = ?", (tournament_id,)).fetchone()
        if row is None:
            raise StoreError(f"the store {str(self.path)!r} has no tournament with id {tournament_id!r}")
        return self._tournament(row)

    @staticmethod
    def _fixture(row: sqlite3.Row) -> StoredFixture:
        """A row of ``SELECT idx, seats, seed, grp FROM fixtures``."""
        return StoredFixture(row["idx"], tuple(json.loads(row["seats"])), int(row["seed"]), json.loads(row["grp"]))

    @staticmethod
    def _unknown_status(conn: sqlite3.Connection, tournament_id: int) -> str | None:
        """A final result's status text that is no :class:`MatchStatus` (a file edited by hand), if any.

        One index probe below, between and above the known texts, so it costs the same at any size.
        """
        known = sorted(status.value for status in MatchStatus)
        bounds = [(None, known[0]), *itertools.pairwise(known), (known[-1], None)]
        for low, high in bounds:
            where = "".join((" AND status > ?" if low is not None else "", " AND status < ?" if high is not None else ""))
            args = [a for a in (low, high) if a is not None]
            row = conn.execute(  # through the index by status ("+" keeps the tournament's index out of it)
                f"SELECT status FROM results WHERE final = 1{where} AND +tournament_id = ? LIMIT 1", (*args, tournament_id)
            ).fetchone()
            if row is not None:
                return str(row[0])
        return None

    def _result(self, row: sqlite3.Row, record: list[JsonObject] | None = None) -> StoredResult:
        """A row of :attr:`_RESULT`."""
        places = None if row["places"] is None else tuple(json.loads(row["places"]))
        status = self._status(MatchStatus, row["status"], "match status", f"match {row['match_id']!r}")
        return StoredResult(
            tournament_id=row["tournament_id"],
            tournament=row["name"],
            idx=row["idx"],
            seats=tuple(json.loads(row["seats"])),
            seed=int(row["seed"]),
            match_id=row["match_id"],
            status=status,
            final=bool(row["final"]),
            places=places,
            totals=tuple(json.loads(row["totals"])),
            faults=tuple(json.loads(row["faults"])),
            hands=row["hands"],
            penalties=tuple(json.loads(row["penalties"])),
            duration_s=row["duration_s"],
            finished_at=row["finished_at"],
            record_path=row["record_path"],
            record=record,
            node=row["node"],
        )

    @staticmethod
    def _latest(conn: sqlite3.Connection) -> dict[str, Rating]:
        rows = conn.execute("SELECT bot, mu, sigma FROM ratings ORDER BY idx >= 0, updated_at, tournament_id").fetchall()
        return {bot: (mu, sigma) for bot, mu, sigma in rows}  # the last row of each bot wins
