"""The :class:`Store`: one SQLite file, every write one transaction (see the package's docstring)."""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from polignac_arena.statuses import MatchStatus, TournamentStatus, UnknownStatusError, parse_status
from polignac_arena.store import aggregates, schema
from polignac_arena.store.encoding import (
    canonical_config,
    check_fixture,
    checked_ints,
    decode_record,
    differences,
    encode_record,
    now_text,
    split_key,
    timestamp_text,
    to_json,
)
from polignac_arena.store.records import (
    Bot,
    BotSummary,
    ConflictError,
    FaultEntry,
    FixtureLike,
    GroupRate,
    HeadToHead,
    LeaderboardRow,
    NewerSchemaError,
    NodeThroughput,
    Progress,
    RateFunction,
    Rating,
    RatingPoint,
    Recorded,
    StoredFixture,
    StoredResult,
    StoreError,
    Tournament,
)
from polignac_arena.store.schema import APPLICATION_ID

S = TypeVar("S", bound=StrEnum)

CACHE_KIB = 32 * 1024
"""The page cache of each connection (SQLite's default is 2 MiB)."""


class Store:
    """An arena store in one SQLite file; ``Store(path)`` creates or migrates it.

    Safe to share between threads (one operation at a time); every process opens its own.
    Use it as a context manager, or call :meth:`close`.
    """

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
        with self._write() as conn:
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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions -------------------------------------------------------------------------

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
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is committed, or none of it."""
        with self._lock, self._guard():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every query sees the same snapshot."""
        with self._lock, self._guard():
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("COMMIT")

    # -- bots ---------------------------------------------------------------------------------

    _BOT = "SELECT id, name, version, path, digest, language, added_at FROM bots"  # named columns: later versions may add some

    def add_bot(self, name: str, version: str, path: str | Path, digest: str, language: str) -> int:
        """Register a bot version and return its id.

        Adding the same name, version and digest again returns the same id (and records the new
        path if the folder moved); another digest under a registered name and version raises
        :class:`ConflictError`: a changed bot needs a new version.
        """
        for what, value in (("name", name), ("version", version), ("digest", digest), ("language", language)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"a bot's {what} must be a non-empty string, got {value!r}")
        if "@" in name:
            raise ValueError(f"a bot's name cannot contain '@', got {name!r}")
        with self._write() as conn:
            row = conn.execute("SELECT id, digest FROM bots WHERE name = ? AND version = ?", (name, version)).fetchone()
            if row is not None:
                if row[1] != digest:
                    raise ConflictError(
                        f"bot {name}@{version} is already registered with other code (digest {row[1]}, now {digest}); "
                        "give the changed bot a new version"
                    )
                conn.execute("UPDATE bots SET path = ?, language = ? WHERE id = ?", (str(path), language, row[0]))
                return int(row[0])
            cursor = conn.execute(
                "INSERT INTO bots (name, version, path, digest, language, added_at) VALUES (?, ?, ?, ?, ?, ?)",
                (name, version, str(path), digest, language, now_text()),
            )
            return int(cursor.lastrowid or 0)

    def get_bot(self, name: str, version: str | None = None) -> Bot | None:
        """The bot ``name`` at ``version``, or its latest added version when ``version`` is None; None if unknown."""
        with self._read() as conn:
            if version is None:
                row = conn.execute(f"{self._BOT} WHERE name = ? ORDER BY added_at DESC, id DESC LIMIT 1", (name,)).fetchone()
            else:
                row = conn.execute(f"{self._BOT} WHERE name = ? AND version = ?", (name, version)).fetchone()
        return None if row is None else Bot(*row)

    def list_bots(self) -> list[Bot]:
        """Every registered bot version, by name then in the order added."""
        with self._read() as conn:
            rows = conn.execute(f"{self._BOT} ORDER BY name, added_at, id").fetchall()
        return [Bot(*row) for row in rows]

    # -- tournaments and their schedules -------------------------------------------------------

    _TOURNAMENT = "SELECT id, name, config, source, status, created_at, updated_at, rating_cursor FROM tournaments"

    def _tournament(self, row: Sequence[Any]) -> Tournament:
        status = self._status(TournamentStatus, row[4], "tournament status", f"tournament {row[1]!r}")
        return Tournament(row[0], row[1], json.loads(row[2]), row[3], status, row[5], row[6], row[7])

    def _status(self, kind: type[S], text: object, what: str, owner: str) -> S:
        """A status column's text as its enum: an unknown text (a file edited by hand) is an error, never passed on."""
        try:
            return parse_status(kind, text, what)
        except UnknownStatusError as exc:
            raise UnknownStatusError(f"the store {str(self.path)!r}: {owner} has an {exc}") from None

    def create_tournament(
        self,
        name: str,
        config: Mapping[str, Any] | str,
        fixtures: Iterable[FixtureLike],
        *,
        source: str | None = None,
        initial_ratings: Mapping[str, Rating] | None = None,
    ) -> int:
        """Store a tournament with its schedule and return its id, all in one transaction.

        ``config`` is a JSON object (or its text); it is compared by value, keys in any order.
        ``fixtures`` must have the indices 0, 1, 2... (a ladder may start with none and
        :meth:`add_fixtures` as it goes).  ``initial_ratings`` are the bots' priors (say a new
        version's inherited mu): stored once here, so a resumed run rates from the same priors.
        ``source`` (the TOML text) is kept for display.

        Creating it again with an equal config returns the existing id and changes nothing (the
        stored schedule and priors win): this is how ``--resume`` finds it.  Another config
        under the same name raises :class:`ConflictError`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a tournament needs a name, got {name!r}")
        canonical = canonical_config(config)
        rows = self._fixture_rows(fixtures, 0)
        priors = [(bot, *self._rating(bot, rating)) for bot, rating in (initial_ratings or {}).items()]
        with self._write() as conn:
            row = conn.execute("SELECT id, config FROM tournaments WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if row[1] != canonical:
                    keys = ", ".join(differences(json.loads(row[1]), json.loads(canonical))[:5])
                    raise ConflictError(
                        f"a tournament named {name!r} is already stored with another configuration (differs in: {keys}); "
                        "resume it with its own file, or give this one another name"
                    )
                return int(row[0])
            now = now_text()
            tid = int(
                conn.execute(
                    "INSERT INTO tournaments (name, config, source, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, canonical, source, TournamentStatus.SCHEDULED.value, now, now),
                ).lastrowid
                or 0
            )
            conn.execute("INSERT INTO tournament_stats (tournament_id) VALUES (?)", (tid,))
            conn.executemany("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", [(tid, *r) for r in rows])
            aggregates.add_fixture_bots(conn, tid, (json.loads(r[1]) for r in rows))
            aggregates.add_ratings(conn, tid, {bot: (mu, sigma) for bot, mu, sigma in priors}, -1, now, {})
            return tid

    @staticmethod
    def _fixture_rows(fixtures: Iterable[FixtureLike], start: int) -> list[tuple[int, str, str, str]]:
        checked = sorted((check_fixture(f) for f in fixtures), key=lambda f: f[0])
        indices = [f[0] for f in checked]
        if indices != list(range(start, start + len(checked))):
            shown = indices if len(indices) <= 10 else [*indices[:10], "..."]
            raise ValueError(f"fixture indices must run {start}, {start + 1}, ... without gaps or repeats, got {shown}")
        return [(idx, to_json(seats), str(seed), group) for idx, seats, seed, group in checked]

    @staticmethod
    def _set_prior(conn: sqlite3.Connection, tournament_id: int, bot: str, rating: Rating, when: str) -> None:
        """Give a bot without a rating in the tournament its prior (inside an open write transaction)."""
        aggregates.add_ratings(conn, tournament_id, {bot: rating}, -1, when, {})

    @staticmethod
    def _insert_fixture(conn: sqlite3.Connection, tournament_id: int, idx: int, seats: Sequence[str], seed: int, group: str) -> None:
        """Append one fixture (inside an open write transaction), its bots joining the tournament's leaderboard."""
        conn.execute("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", (tournament_id, idx, to_json(list(seats)), str(seed), group))
        aggregates.add_fixture_bots(conn, tournament_id, [seats])

    @staticmethod
    def _rating(bot: str, rating: Rating) -> Rating:
        try:
            mu, sigma = (float(x) for x in rating)
        except (TypeError, ValueError):
            raise ValueError(f"the rating of {bot!r} must be (mu, sigma), got {rating!r}") from None
        if not (math.isfinite(mu) and math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"the rating of {bot!r} must be finite with sigma > 0, got {rating!r}")
        return mu, sigma

    def add_fixtures(self, tournament_id: int, fixtures: Iterable[FixtureLike]) -> None:
        """Extend a tournament's schedule (a ladder's matchmaking); indices continue from the last one."""
        with self._write() as conn:
            self._require(conn, tournament_id)
            count = conn.execute("SELECT count(*) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            rows = self._fixture_rows(fixtures, count)
            conn.executemany("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", [(tournament_id, *r) for r in rows])
            aggregates.add_fixture_bots(conn, tournament_id, (json.loads(r[1]) for r in rows))
            conn.execute("UPDATE tournaments SET updated_at = ? WHERE id = ?", (now_text(), tournament_id))

    def _require(self, conn: sqlite3.Connection, tournament_id: int) -> Tournament:
        row = conn.execute(f"{self._TOURNAMENT} WHERE id = ?", (tournament_id,)).fetchone()
        if row is None:
            raise StoreError(f"the store {str(self.path)!r} has no tournament with id {tournament_id!r}")
        return self._tournament(row)

    def get_tournament(self, key: str | int) -> Tournament | None:
        """The tournament of that name (a ``str``) or id (an ``int``); None if there is none."""
        column = "id" if isinstance(key, int) else "name"
        with self._read() as conn:
            row = conn.execute(f"{self._TOURNAMENT} WHERE {column} = ?", (key,)).fetchone()
        return None if row is None else self._tournament(row)

    def list_tournaments(self) -> list[Tournament]:
        """Every tournament, oldest first."""
        with self._read() as conn:
            rows = conn.execute(f"{self._TOURNAMENT} ORDER BY id").fetchall()
        return [self._tournament(row) for row in rows]

    def set_status(self, tournament_id: int, status: TournamentStatus) -> None:
        """Set a tournament's status (its text is taken too); :class:`UnknownStatusError` for any other."""
        status = TournamentStatus.parse(status)
        with self._write() as conn:
            self._require(conn, tournament_id)
            conn.execute("UPDATE tournaments SET status = ?, updated_at = ? WHERE id = ?", (status.value, now_text(), tournament_id))

    @staticmethod
    def _fixture(row: Sequence[Any]) -> StoredFixture:
        return StoredFixture(row[0], tuple(json.loads(row[1])), int(row[2]), json.loads(row[3]))

    def fixtures(self, tournament_id: int) -> list[StoredFixture]:
        """A tournament's whole schedule, in order."""
        with self._read() as conn:
            self._require(conn, tournament_id)
            rows = conn.execute(
                "SELECT idx, seats, seed, grp FROM fixtures WHERE tournament_id = ? ORDER BY idx", (tournament_id,)
            ).fetchall()
        return [self._fixture(row) for row in rows]

    def pending_fixtures(self, tournament_id: int) -> list[StoredFixture]:
        """The fixtures without a final result, in schedule order: what a (resumed) run still has to play."""
        with self._read() as conn:
            self._require(conn, tournament_id)
            rows = conn.execute(
                """SELECT idx, seats, seed, grp FROM fixtures f WHERE tournament_id = ? AND NOT EXISTS
                   (SELECT 1 FROM results r WHERE r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1)
                   ORDER BY idx""",
                (tournament_id,),
            ).fetchall()
        return [self._fixture(row) for row in rows]

    def progress(self, tournament_id: int) -> Progress:
        """Fixtures in all, done, void, rated, attempts, and faults by kind over the final results."""
        with self._read() as conn:
            tournament = self._require(conn, tournament_id)
            last = conn.execute("SELECT max(idx) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            row = conn.execute(
                "SELECT done, void, attempts, faults FROM tournament_stats WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
            unknown = self._unknown_status(conn, tournament_id)
        if unknown is not None:
            self._status(MatchStatus, unknown, "match status", f"a result of tournament {tournament.name!r}")
        done, void, attempts, faults = (0, 0, 0, "{}") if row is None else row
        return Progress(0 if last is None else last + 1, done, void, tournament.rating_cursor, attempts, json.loads(faults))

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

    # -- results and the rating cursor ---------------------------------------------------------

    def record_result(
        self,
        tournament_id: int,
        idx: int,
        *,
        match_id: str,
        status: MatchStatus,
        places: Sequence[int] | None,
        totals: Sequence[int],
        faults: Sequence[Mapping[str, int]],
        hands: int,
        rate: RateFunction | GroupRate,
        penalties: Sequence[int] | None = None,
        record: Iterable[Mapping[str, Any]] | str | None = None,
        record_path: str | Path | None = None,
        duration_s: float | None = None,
        finished_at: datetime | None = None,
        final: bool | None = None,
        node: str | None = None,
    ) -> Recorded:
        """Store the result of fixture ``idx`` and apply every rating now due, in one transaction.

        ``places``, ``totals``, ``faults`` (counts by kind) and ``penalties`` (penalty points;
        default: ``totals``) are by seat, as in the fixture.  ``record`` is the match record
        (its lines, or their JSON-lines text), stored compressed; ``record_path`` where a copy
        lives, if anywhere; ``node`` the machine (or cluster node) that played it.  ``final``
        defaults to ``status is MatchStatus.FINISHED``: see the module docstring for aborted and
        errored matches.  ``status`` may be given as its text.

        A final result is stored exactly once per fixture: storing the same match id again
        changes nothing and returns ``stored=False``; another match id raises
        :class:`ConflictError`.  Then the tournament's rating cursor advances over every
        consecutive fixture that has a final result, from the cursor on, calling
        ``rate(current, seats, places)`` (see :data:`RateFunction`) for each finished one and
        storing the new ratings and their history rows; void results are passed unrated.  A
        :class:`GroupRate` rates a group of fixtures together instead (duplicate deals).  So
        results may arrive in any order and the ratings are still applied in schedule order:
        the ratings depend on the results only, never on the order they arrived in.

        If anything fails (``rate`` raising included), nothing at all is stored.
        """
        status = MatchStatus.parse(status)
        finished = status is MatchStatus.FINISHED
        final = finished if final is None else bool(final)
        if finished and not final:
            raise ValueError("a finished match is the fixture's final result: final=False is for aborted or errored ones")
        if not isinstance(match_id, str) or not match_id:
            raise ValueError(f"a result needs a match id, got {match_id!r}")
        if not isinstance(hands, int) or hands < 0:
            raise ValueError(f"hands must be a count, got {hands!r}")
        stamp = timestamp_text(finished_at) if finished_at is not None else now_text()
        blob = None if record is None else encode_record(record)
        with self._write() as conn:
            tournament = self._require(conn, tournament_id)
            fixture = conn.execute("SELECT seats FROM fixtures WHERE tournament_id = ? AND idx = ?", (tournament_id, idx)).fetchone()
            if fixture is None:
                raise StoreError(f"tournament {tournament.name!r} has no fixture {idx!r}")
            seats = json.loads(fixture[0])
            n = len(seats)
            checked_places = None if not finished and places is None else checked_ints(places, "places", n, minimum=1)
            checked_faults = self._faults(faults, n)
            checked_penalties = checked_ints(totals if penalties is None else penalties, "penalties", n)
            values = (
                None if checked_places is None else to_json(checked_places),
                to_json(checked_ints(totals, "totals", n)),
                to_json(checked_faults),
                to_json(checked_penalties),
            )
            existing = conn.execute(
                "SELECT match_id FROM results WHERE tournament_id = ? AND idx = ? AND final = 1", (tournament_id, idx)
            ).fetchone()
            if existing is not None:
                if existing[0] == match_id and final:
                    return Recorded(False, (), tournament.rating_cursor)
                raise ConflictError(
                    f"fixture {idx} of tournament {tournament.name!r} already has its result (match {existing[0]}); "
                    f"refusing {'another' if final else 'an attempt'} (match {match_id})"
                )
            if final and conn.execute("SELECT 1 FROM results WHERE match_id = ? AND final = 1", (match_id,)).fetchone():
                raise ConflictError(f"match id {match_id!r} is already the result of another fixture")
            result_id = conn.execute(
                """INSERT INTO results (tournament_id, idx, match_id, status, final, places, totals, faults, penalties,
                   hands, duration_s, finished_at, record_path, node, faulted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    tournament_id,
                    idx,
                    match_id,
                    status.value,
                    int(final),
                    *values,
                    hands,
                    duration_s,
                    stamp,
                    None if record_path is None else str(record_path),
                    node,
                    int(aggregates.faulted(checked_faults)),
                ),
            ).lastrowid
            assert result_id is not None
            aggregates.add_result(
                conn, result_id, tournament_id, seats, final=final, finished=finished, places=checked_places,
                faults=checked_faults, hands=hands, penalties=checked_penalties, when=stamp,
            )  # fmt: skip
            if blob is not None:
                conn.execute("INSERT INTO records VALUES (?, 'zlib', ?)", (result_id, blob))
            rated = self._advance(conn, tournament, rate) if final else ()
            return Recorded(True, rated, tournament.rating_cursor + len(rated))

    @staticmethod
    def _faults(faults: Sequence[Mapping[str, int]], n: int) -> list[dict[str, int]]:
        if isinstance(faults, str | bytes | Mapping) or len(faults) != n:
            raise ValueError(f"faults must give one mapping of kind to count per seat ({n}), got {faults!r}")
        out = []
        for counts in faults:
            if not isinstance(counts, Mapping) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in counts.items()
            ):
                raise ValueError(f"faults must give one mapping of kind to count per seat ({n}), got {faults!r}")
            out.append({k: int(v) for k, v in counts.items()})
        return out

    def _group(
        self, conn: sqlite3.Connection, tid: int, group: str, cursor: int
    ) -> tuple[dict[str, Rating], list[tuple[list[str], list[int]]]]:
        """The ratings before fixture ``cursor``'s group began, and the group's finished results up to ``cursor``."""
        rows = conn.execute(
            """SELECT f.seats, r.places FROM fixtures f JOIN results r
               ON r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1
               WHERE f.tournament_id = ? AND f.grp = ? AND f.idx <= ? AND r.status = ? ORDER BY f.idx""",
            (tid, group, cursor, MatchStatus.FINISHED.value),
        ).fetchall()
        results = [(json.loads(seats), json.loads(places)) for seats, places in rows]
        (first,) = conn.execute("SELECT MIN(idx) FROM fixtures WHERE tournament_id = ? AND grp = ?", (tid, group)).fetchone()
        before: dict[str, Rating] = {}
        for bot in sorted({bot for seats, _ in results for bot in seats}):
            found = conn.execute(
                "SELECT mu, sigma FROM rating_history WHERE tournament_id = ? AND bot = ? AND idx < ? ORDER BY idx DESC LIMIT 1",
                (tid, bot, first),
            ).fetchone()
            if found is not None:
                before[bot] = (found[0], found[1])
        return before, results

    def _advance(self, conn: sqlite3.Connection, tournament: Tournament, rate: RateFunction | GroupRate) -> tuple[int, ...]:
        """Move the rating cursor over the consecutive fixtures with a final result; the indices passed."""
        tid, cursor = tournament.id, tournament.rating_cursor
        passed: list[int] = []
        while True:
            row = conn.execute(
                """SELECT f.seats, r.status, r.places, r.finished_at, f.grp FROM fixtures f JOIN results r
                   ON r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1
                   WHERE f.tournament_id = ? AND f.idx = ?""",
                (tid, cursor),
            ).fetchone()
            if row is None:
                break
            status = self._status(MatchStatus, row[1], "match status", f"the result of fixture {cursor} of {tournament.name!r}")
            if status is MatchStatus.FINISHED:
                seats = tuple(json.loads(row[0]))
                bots = sorted(set(seats))
                group: list[tuple[list[str], list[int]]] = []
                if isinstance(rate, GroupRate):
                    before, group = self._group(conn, tid, row[4], cursor)
                    bots = sorted({bot for seated, _ in group for bot in seated})
                marks = ", ".join("?" * len(bots))
                stored = {
                    bot: ((mu, sigma), (recent, points))
                    for bot, mu, sigma, recent, points in conn.execute(
                        f"SELECT bot, mu, sigma, recent, points FROM ratings WHERE tournament_id = ? AND bot IN ({marks})", (tid, *bots)
                    ).fetchall()
                }
                current = {bot: rating for bot, (rating, _trend) in stored.items()}
                new = rate.rate(before, group) if isinstance(rate, GroupRate) else rate(current, seats, tuple(json.loads(row[2])))
                if sorted(new) != bots:
                    raise ValueError(
                        f"rating fixture {cursor}: the rate function must return a rating for each of {bots}, got {sorted(new)}"
                    )
                checked = {bot: self._rating(bot, new[bot]) for bot in bots}
                aggregates.add_ratings(conn, tid, checked, cursor, row[3], {bot: trend for bot, (_rating, trend) in stored.items()})
            passed.append(cursor)
            cursor += 1
        if passed:
            conn.execute("UPDATE tournaments SET rating_cursor = ?, updated_at = ? WHERE id = ?", (cursor, now_text(), tid))
        return tuple(passed)

    # -- reading results -----------------------------------------------------------------------

    _RESULT = """SELECT r.tournament_id, t.name, r.idx, f.seats, f.seed, r.match_id, r.status, r.final, r.places, r.totals,
                 r.faults, r.hands, r.penalties, r.duration_s, r.finished_at, r.record_path, r.id, r.node
                 FROM results r JOIN tournaments t ON t.id = r.tournament_id
                 JOIN fixtures f ON f.tournament_id = r.tournament_id AND f.idx = r.idx"""

    def _result(self, row: Sequence[Any], record: list[dict[str, Any]] | None = None) -> StoredResult:
        places = None if row[8] is None else tuple(json.loads(row[8]))
        status = self._status(MatchStatus, row[6], "match status", f"match {row[5]!r}")
        return StoredResult(
            row[0], row[1], row[2], tuple(json.loads(row[3])), int(row[4]), row[5], status, bool(row[7]), places,
            tuple(json.loads(row[9])), tuple(json.loads(row[10])), row[11], tuple(json.loads(row[12])), row[13], row[14], row[15],
            record, row[17],
        )  # fmt: skip

    def get_result(self, match_id: str) -> StoredResult | None:
        """The match with that id, with its record: the final result, else the latest attempt; None if unknown."""
        with self._read() as conn:
            row = conn.execute(f"{self._RESULT} WHERE r.match_id = ? ORDER BY r.final DESC, r.id DESC LIMIT 1", (match_id,)).fetchone()
            if row is None:
                return None
            blob = conn.execute("SELECT encoding, data FROM records WHERE result_id = ?", (row[16],)).fetchone()
        return self._result(row, None if blob is None else decode_record(blob[0], blob[1]))

    def list_results(self, tournament_id: int, *, attempts: bool = False) -> list[StoredResult]:
        """A tournament's final results in schedule order (with ``attempts``, the attempts too), without records."""
        with self._read() as conn:
            self._require(conn, tournament_id)
            where = "" if attempts else " AND r.final = 1"
            rows = conn.execute(f"{self._RESULT} WHERE r.tournament_id = ?{where} ORDER BY r.idx, r.id", (tournament_id,)).fetchall()
        return [self._result(row) for row in rows]

    def node_throughput(self, tournament_id: int) -> list[NodeThroughput]:
        """Per node that played its final results: how many, and the time they span (by node name)."""
        with self._read() as conn:
            self._require(conn, tournament_id)
            rows = conn.execute(
                """SELECT COALESCE(node, ''), COUNT(*), COALESCE(SUM(duration_s), 0), MAX(COALESCE(duration_s, 0)),
                   MIN(finished_at), MAX(finished_at) FROM results WHERE tournament_id = ? AND final = 1
                   GROUP BY COALESCE(node, '') ORDER BY 1""",
                (tournament_id,),
            ).fetchall()
        out = []
        for node, matches, busy, longest, first, last in rows:
            # The span runs from the first match's start (its end less a match's length) to the last one's end.
            span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds() + busy / matches
            out.append(NodeThroughput(node, matches, float(busy), span if longest > 0 else 0.0))
        return out

    # -- ratings and statistics ----------------------------------------------------------------

    def ratings(self, tournament_id: int) -> dict[str, Rating]:
        """The current ratings of a tournament's bots (those rated or given a prior), by bot key."""
        with self._read() as conn:
            self._require(conn, tournament_id)
            rows = conn.execute("SELECT bot, mu, sigma FROM ratings WHERE tournament_id = ? ORDER BY bot", (tournament_id,)).fetchall()
        return {bot: (mu, sigma) for bot, mu, sigma in rows}

    def rating_history(self, tournament_id: int, bot: str | None = None, *, max_points: int | None = None) -> list[RatingPoint]:
        """Ratings after each rated fixture (idx -1: the priors), in schedule order, for one bot or all.

        With ``max_points`` (and a ``bot``), at most that many points, for a chart: read from the
        bot's rating trail (its last points exact, evenly spaced ones before them), so a long
        history costs no more than a short one.
        """
        if max_points is not None:
            if bot is None:
                raise ValueError("max_points needs a bot: a chart reads one bot's trail")
            if max_points < 1:
                raise ValueError(f"max_points must be 1 or more, got {max_points!r}")
            with self._read() as conn:
                self._require(conn, tournament_id)
                rows = conn.execute(
                    "SELECT idx, bot, mu, sigma FROM rating_trail WHERE tournament_id = ? AND bot = ? ORDER BY n", (tournament_id, bot)
                ).fetchall()
            return [RatingPoint(*row) for row in aggregates.thin(rows, max_points)]
        query = "SELECT idx, bot, mu, sigma FROM rating_history WHERE tournament_id = ?"
        args: tuple[Any, ...] = (tournament_id,)
        if bot is not None:
            query, args = query + " AND bot = ?", (*args, bot)
        with self._read() as conn:
            self._require(conn, tournament_id)
            rows = conn.execute(query + " ORDER BY idx, bot", args).fetchall()
        return [RatingPoint(*row) for row in rows]

    def latest_ratings(self) -> dict[str, Rating]:
        """Each bot's most recent rating across tournaments (by the time of the result that set it).

        A rating from a played match wins over a prior that was never played.  To seed a new
        tournament's priors, call this once and pass them to :meth:`create_tournament`.
        """
        with self._read() as conn:
            return self._latest(conn)

    @staticmethod
    def _latest(conn: sqlite3.Connection) -> dict[str, Rating]:
        rows = conn.execute("SELECT bot, mu, sigma FROM ratings ORDER BY idx >= 0, updated_at, tournament_id").fetchall()
        return {bot: (mu, sigma) for bot, mu, sigma in rows}  # the last row of each bot wins

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

    @staticmethod
    def _board(tournament_id: int | None, only: str = "") -> str:
        """The leaderboard's rows as a subquery (its columns: :attr:`_BOARD_COLUMNS`; ``places`` and ``faults`` as JSON lists to add up).

        All-time: each bot's rows summed over the tournaments, with its latest rating
        (:meth:`latest_ratings`' order), for the bots rated or with a finished match.
        """
        if tournament_id is not None:
            return f"""(SELECT s.bot, r.mu, r.sigma, COALESCE(r.recent, '[]') AS recent, s.matches, s.wins, s.place_sum,
                        '[' || s.places || ']' AS places, s.penalty_sum, s.hands, '[' || s.faults || ']' AS faults, s.first_played,
                        s.last_played FROM bot_stats s LEFT JOIN ratings r ON r.tournament_id = s.tournament_id AND r.bot = s.bot
                        WHERE s.tournament_id = {int(tournament_id)})"""
        return f"""(SELECT s.bot, l.mu, l.sigma, COALESCE(l.recent, '[]') AS recent, s.matches, s.wins, s.place_sum, s.places,
                   s.penalty_sum, s.hands, s.faults, s.first_played, s.last_played
                   FROM (SELECT bot, sum(matches) AS matches, sum(wins) AS wins, sum(place_sum) AS place_sum,
                         '[' || group_concat(places) || ']' AS places, sum(penalty_sum) AS penalty_sum, sum(hands) AS hands,
                         '[' || group_concat(faults) || ']' AS faults, min(first_played) AS first_played, max(last_played) AS last_played
                         FROM bot_stats {only} GROUP BY bot) s
                   LEFT JOIN ({Store._LATEST}) l ON l.bot = s.bot
                   WHERE s.matches > 0 OR l.bot IS NOT NULL)"""

    @staticmethod
    def _board_row(rank: int, row: Sequence[Any]) -> LeaderboardRow:
        bot, mu, sigma, recent, matches, wins, place_sum, _places, penalty_sum, hands, faults = row[:11]
        name, version = split_key(bot)
        return LeaderboardRow(
            rank, bot, name, version, mu, sigma, matches, wins, place_sum / matches if matches else None,
            penalty_sum / hands if hands else None, Store._added_faults(faults), tuple(aggregates.floats_of(recent)),
        )  # fmt: skip

    @staticmethod
    def _added_faults(text: str) -> dict[str, int]:
        """A board row's faults by kind: its tournaments' counts (a JSON list of objects) added up."""
        total: dict[str, int] = {}
        if '"' not in text:
            return total  # no kind named: no faults (most rows)
        for counts in json.loads(text):
            for kind, count in counts.items():
                total[kind] = total.get(kind, 0) + count
        return dict(sorted(total.items()))

    @staticmethod
    def _added_places(text: str) -> dict[int, int]:
        """A board row's finished matches by place: its tournaments' counts (a JSON list of lists) added up."""
        total: dict[int, int] = {}
        for counts in json.loads(text):
            for place, count in enumerate(counts, start=1):
                total[place] = total.get(place, 0) + count
        return {place: count for place, count in sorted(total.items()) if count}

    def leaderboard(self, tournament_id: int | None = None, *, limit: int | None = None, offset: int = 0) -> list[LeaderboardRow]:
        """The leaderboard of one tournament, or all-time (None), best first; ``limit`` rows from ``offset`` (0: the best).

        Ordered by the conservative rating ``mu - 3 sigma`` (then mu, then key); bots without a
        rating yet come last.  One tournament: its current ratings, and every bot of its
        schedule.  All-time: each bot's :meth:`latest_ratings`, statistics summed over every
        tournament.  A bot seated twice at a table counts twice.  Statistics count the final
        finished results.  Read from the aggregates: the cost is the rows returned, not the results.
        """
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be 0 or more, got {limit!r}")
        if offset < 0:
            raise ValueError(f"offset must be 0 or more, got {offset!r}")
        window = (-1 if limit is None else limit, offset)
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            if tournament_id is None and limit is not None:
                # A page of the all-time board: its bots are ordered by their ratings alone, and only theirs are summed.
                page = [bot for (bot,) in conn.execute(f"SELECT bot FROM {self._RANKING} {self._BOARD_ORDER} LIMIT ? OFFSET ?", window)]
                chosen = self._board(None, "WHERE bot IN (SELECT value FROM json_each(?))")
                found = {row[0]: row for row in conn.execute(f"SELECT {self._BOARD_COLUMNS} FROM {chosen}", (to_json(page),))}
                rows = [found[bot] for bot in page]
            else:
                rows = conn.execute(
                    f"SELECT {self._BOARD_COLUMNS} FROM {self._board(tournament_id)} {self._BOARD_ORDER} LIMIT ? OFFSET ?", window
                ).fetchall()
        return [self._board_row(rank, row) for rank, row in enumerate(rows, start=offset + 1)]

    def leaderboard_size(self, tournament_id: int | None = None, *, rated: bool = False) -> int:
        """How many rows :meth:`leaderboard` has (with ``rated``: only the rated ones, which come first)."""
        with self._read() as conn:
            if tournament_id is None:  # every rated bot is on the all-time board
                query = "SELECT count(DISTINCT bot) FROM ratings" if rated else f"SELECT count(*) FROM ({self._ALL_TIME_BOTS})"
                return int(conn.execute(query).fetchone()[0])
            self._require(conn, tournament_id)  # a tournament's rated bots are on its board (a prior makes a row)
            table = "ratings" if rated else "bot_stats"
            return int(conn.execute(f"SELECT count(*) FROM {table} WHERE tournament_id = ?", (tournament_id,)).fetchone()[0])

    def bot_summary(self, bot: str, tournament_id: int | None = None) -> BotSummary | None:
        """One bot's leaderboard row (ranked), place distribution and dates, in one tournament or all-time; None if absent."""
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            if tournament_id is None:  # the bot's row alone, ranked among the board's ratings alone
                one = self._board(None, "WHERE bot = ?")
                board = self._RANKING
            else:
                one = board = self._board(tournament_id)
            row = conn.execute(
                f"SELECT {self._BOARD_COLUMNS} FROM {one} WHERE bot = ?", (bot,) * (2 if tournament_id is None else 1)
            ).fetchone()
            if row is None:
                return None
            mu, sigma = row[1], row[2]
            if mu is None or sigma is None:
                ahead = conn.execute(f"SELECT count(*) FROM {board} WHERE (mu IS NOT NULL AND sigma IS NOT NULL) OR bot < ?", (bot,))
            else:
                ahead = conn.execute(
                    f"""SELECT count(*) FROM {board} WHERE mu IS NOT NULL AND sigma IS NOT NULL AND (mu - 3 * sigma > ?
                        OR (mu - 3 * sigma = ? AND (mu > ? OR (mu = ? AND bot < ?))))""",
                    (mu - 3 * sigma, mu - 3 * sigma, mu, mu, bot),
                )
            rank = int(ahead.fetchone()[0]) + 1
            tournaments = tuple(
                tid for (tid,) in conn.execute("SELECT tournament_id FROM bot_stats WHERE bot = ? ORDER BY tournament_id", (bot,))
            )
        return BotSummary(self._board_row(rank, row), self._added_places(row[7]), row[8], row[9], row[11], row[12], tournaments)

    def bot_keys(self, name: str) -> list[str]:
        """The keys (``name@version``) of a bot name on the all-time leaderboard (registered or not), sorted."""
        with self._read() as conn:
            rows = conn.execute(
                """SELECT bot FROM bot_stats s WHERE bot >= ? AND bot < ? GROUP BY bot
                   HAVING sum(matches) > 0 OR EXISTS (SELECT 1 FROM ratings r WHERE r.bot = s.bot) ORDER BY bot""",
                (f"{name}@", f"{name}A"),  # "A" follows "@": the range is exactly the keys "name@..."
            )
            return [bot for (bot,) in rows]

    def head_to_head(self, tournament_id: int | None = None, bots: Iterable[str] | None = None) -> dict[tuple[str, str], HeadToHead]:
        """For each ordered pair of bots that met at a table, in one tournament or all-time: their record.

        Both ``(a, b)`` and ``(b, a)`` are keys.  Each pair of seats counts as one meeting (a bot
        seated twice meets its rival twice; a bot never meets itself).  With ``bots``, only the
        pairs of those bots (a crosstable of the top N reads N x N rows, not every pair).
        """
        if isinstance(bots, str):
            raise ValueError(f"bots must be a collection of bot keys, got the string {bots!r}")
        where, args = ["1"], list[Any]()
        if bots is not None:
            chosen = to_json(sorted(set(bots)))
            where.append("a IN (SELECT value FROM json_each(?)) AND b IN (SELECT value FROM json_each(?))")
            args += [chosen, chosen]
        if tournament_id is not None:
            where.append("tournament_id = ?")
            args.append(tournament_id)
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            rows = conn.execute(
                f"SELECT a, b, sum(meetings), sum(a_ahead), sum(b_ahead), sum(place_diff_sum) FROM pair_stats "
                f"WHERE {' AND '.join(where)} GROUP BY a, b",
                args,
            ).fetchall()
        pairs = {}
        for a, b, n, ahead, behind, total in rows:  # each pair is stored once, a < b
            pairs[a, b] = HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
            pairs[b, a] = HeadToHead(b, a, n, behind, ahead, n - ahead - behind, -total / n)
        return dict(sorted(pairs.items()))

    _PAIR = "meetings, a_ahead, b_ahead, place_diff_sum"

    def head_to_head_of(self, bots: Iterable[str], tournament_id: int | None = None) -> dict[tuple[str, str], HeadToHead]:
        """Each of ``bots`` against every bot it met, in one tournament or all-time: keys ``(bot, other)``.

        The rows of a crosstable, a block at a time: one pass over the pairs per call, where
        :meth:`head_to_head` with ``bots`` reads the pairs among them only.
        """
        if isinstance(bots, str):
            raise ValueError(f"bots must be a collection of bot keys, got the string {bots!r}")
        mine = set(bots)
        chosen = to_json(sorted(mine))
        where = "(a IN (SELECT value FROM json_each(?)) OR b IN (SELECT value FROM json_each(?)))"
        args: list[Any] = [chosen, chosen]
        if tournament_id is not None:
            where, args = where + " AND tournament_id = ?", [*args, tournament_id]
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            rows = conn.execute(
                f"SELECT a, b, sum(meetings), sum(a_ahead), sum(b_ahead), sum(place_diff_sum) FROM pair_stats WHERE {where} GROUP BY a, b",
                args,
            ).fetchall()
        pairs = {}
        for a, b, n, ahead, behind, total in rows:  # each pair is stored once, a < b
            if a in mine:
                pairs[a, b] = HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
            if b in mine:
                pairs[b, a] = HeadToHead(b, a, n, behind, ahead, n - ahead - behind, -total / n)
        return pairs

    # -- finding results -----------------------------------------------------------------------

    @staticmethod
    def _bot_filter(bot: str) -> tuple[str, list[Any]]:
        """The condition on ``result_seats s`` for ``bot``: one version (``name@version``), or every version of a name."""
        if "@" in bot:
            return "s.bot = ?", [bot]
        return "s.bot >= ? AND s.bot < ?", [f"{bot}@", f"{bot}A"]  # "A" follows "@": exactly the keys "name@..."

    def results_page(
        self,
        tournament_id: int | None = None,
        bot: str | None = None,
        faults: bool | None = None,
        status: MatchStatus | None = None,
        *,
        before: int | None = None,
        limit: int = 50,
    ) -> tuple[list[StoredResult], int | None]:
        """One page of final results, newest first (by result id), and the key of the next page (None: the last page).

        Filters: a tournament; a bot (``name@version``, or a name for every version); with
        ``faults`` True only matches where some seat faulted, False only those without; a
        status.  ``before`` is the key a previous page returned: the page starts after it.
        Every filter is an index read, so a page costs its rows, wherever it starts.
        """
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, got {limit!r}")
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            source, key, where, args = self._result_filter(tournament_id, bot, faults, status)
            if before is not None:
                where.append(f"{key} < ?")
                args.append(int(before))
            group = "" if bot is None else f" GROUP BY {key}"
            ids = [
                rid
                for (rid,) in conn.execute(
                    f"SELECT {key} FROM {source} WHERE {' AND '.join(where)}{group} ORDER BY {key} DESC LIMIT ?", (*args, limit + 1)
                )
            ]
            rows = self._results_by_id(conn, ids[:limit])
        return [self._result(row) for row in rows], ids[limit - 1] if len(ids) > limit else None

    def _results_by_id(self, conn: sqlite3.Connection, ids: Sequence[int]) -> list[Sequence[Any]]:
        """The results with these ids, in the order given."""
        rows = {
            row[16]: row for row in conn.execute(f"{self._RESULT} WHERE r.id IN (SELECT value FROM json_each(?))", (to_json(list(ids)),))
        }
        return [rows[rid] for rid in ids]

    def count_results(
        self, tournament_id: int | None = None, bot: str | None = None, faults: bool | None = None, status: MatchStatus | None = None
    ) -> int:
        """How many final results :meth:`results_page` pages through with these filters."""
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            if bot is None and faults is None and status is None:
                if tournament_id is None:
                    return int(conn.execute("SELECT COALESCE(sum(done), 0) FROM tournament_stats").fetchone()[0])
                row = conn.execute("SELECT done FROM tournament_stats WHERE tournament_id = ?", (tournament_id,)).fetchone()
                return 0 if row is None else int(row[0])
            source, key, where, args = self._result_filter(tournament_id, bot, faults, status)
            return int(conn.execute(f"SELECT count(DISTINCT {key}) FROM {source} WHERE {' AND '.join(where)}", args).fetchone()[0])

    def _result_filter(
        self, tournament_id: int | None, bot: str | None, faults: bool | None, status: MatchStatus | None
    ) -> tuple[str, str, list[str], list[Any]]:
        """The tables, the result id column and the conditions that select final results by these filters."""
        where, args = ["r.final = 1"], list[Any]()
        if faults is not None:
            where.append("r.faulted = ?")
            args.append(int(bool(faults)))
        if status is not None:
            where.append("r.status = ?")
            args.append(MatchStatus.parse(status).value)
        if bot is None:
            source, key, table = "results r", "r.id", "r"
        else:
            source, key, table = "result_seats s JOIN results r ON r.id = s.result_id", "s.result_id", "s"
            condition, values = self._bot_filter(bot)
            where.append(condition)
            args += values
        if tournament_id is not None:
            where.append(f"{table}.tournament_id = ?")
            args.append(tournament_id)
        return source, key, where, args

    def recent_results(self, bot: str, limit: int = 20, tournament_id: int | None = None) -> list[StoredResult]:
        """A bot's last ``limit`` final results, newest first (``bot``: ``name@version``, or a name for every version)."""
        return self.results_page(tournament_id, bot, limit=limit)[0]

    def fault_log(self, bot: str, limit: int = 50, tournament_id: int | None = None) -> list[FaultEntry]:
        """The last ``limit`` seats where the bot faulted in a final result, newest first (``bot`` as in :meth:`recent_results`)."""
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, got {limit!r}")
        condition, args = self._bot_filter(bot)
        where = f"{condition} AND s.fault_total > 0"
        if tournament_id is not None:
            where, args = where + " AND s.tournament_id = ?", [*args, tournament_id]
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            rows = conn.execute(
                f"""SELECT r.match_id, r.tournament_id, t.name, s.bot, s.seat, r.faults, r.finished_at FROM result_seats s
                    JOIN results r ON r.id = s.result_id JOIN tournaments t ON t.id = r.tournament_id
                    WHERE {where} ORDER BY s.result_id DESC, s.seat LIMIT ?""",
                (*args, limit),
            ).fetchall()
        return [FaultEntry(m, tid, name, key, seat, json.loads(faults)[seat], when) for m, tid, name, key, seat, faults, when in rows]

    # -- checking ------------------------------------------------------------------------------

    def check(self) -> list[str]:
        """Problems found in the file and in the ratings' bookkeeping; empty when all is well.

        SQLite's integrity and foreign key checks, then, per tournament: no final result before
        the rating cursor is missing, the cursor stopped at the first fixture without one, every
        finished result before the cursor has a history row per bot and none after it, the
        current ratings are the last history rows, and every status is one this arena knows.
        Then every aggregate (the leaderboards, head-to-head counts, seat index, trends and
        rating trails) against a recomputation from the results: one line per difference,
        naming the table, the row (tournament, bot...) and the field.
        """
        problems: list[str] = []
        with self._read() as conn:
            problems += [f"integrity: {row[0]}" for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
            problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
            for tid, name, cursor, tournament_status in conn.execute("SELECT id, name, rating_cursor, status FROM tournaments").fetchall():
                try:
                    TournamentStatus.parse(tournament_status)
                except UnknownStatusError as exc:
                    problems.append(f"{name}: {exc}")
                finals = dict(conn.execute("SELECT idx, status FROM results WHERE tournament_id = ? AND final = 1", (tid,)).fetchall())
                seats = {
                    idx: set(json.loads(s)) for idx, s in conn.execute("SELECT idx, seats FROM fixtures WHERE tournament_id = ?", (tid,))
                }
                history: dict[int, set[str]] = {}
                last: dict[str, tuple[int, float, float]] = {}
                for idx, bot, mu, sigma in conn.execute(
                    "SELECT idx, bot, mu, sigma FROM rating_history WHERE tournament_id = ? ORDER BY idx", (tid,)
                ):
                    history.setdefault(idx, set()).add(bot)
                    last[bot] = (idx, mu, sigma)
                current = {bot: (idx, mu, sigma) for bot, idx, mu, sigma in conn.execute(
                    "SELECT bot, idx, mu, sigma FROM ratings WHERE tournament_id = ?", (tid,))}  # fmt: skip
                missing = [idx for idx in range(cursor) if idx not in finals]
                if missing:
                    problems.append(f"{name}: the rating cursor ({cursor}) passed fixtures without a result: {missing[:10]}")
                if cursor in finals:
                    problems.append(f"{name}: the rating cursor ({cursor}) stopped at a fixture that has its result")
                for idx, status in sorted(finals.items()):
                    rated = history.get(idx, set())
                    try:
                        finished = MatchStatus.parse(status) is MatchStatus.FINISHED
                    except UnknownStatusError as exc:
                        problems.append(f"{name}: fixture {idx}: {exc}")
                        continue
                    want = seats.get(idx, set()) if finished and idx < cursor else set()
                    if rated != want:
                        problems.append(f"{name}: fixture {idx} has rating history for {sorted(rated)}, expected {sorted(want)}")
                if current != last:
                    problems.append(f"{name}: the current ratings are not the last rows of the rating history")
            names = dict(conn.execute("SELECT id, name FROM tournaments").fetchall())
            problems += aggregates.differences(conn, names)
        return problems
