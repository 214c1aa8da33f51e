"""The :class:`Store`: one SQLite file, every write one transaction (see the package's docstring)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from polignac_arena.statuses import MatchStatus, TournamentStatus, UnknownStatusError, parse_status
from polignac_arena.store import schema
from polignac_arena.store.encoding import (
    _canonical_config,
    _check_fixture,
    _decode_record,
    _differences,
    _encode_record,
    _ints,
    _json,
    _now,
    _split_key,
    _timestamp,
)
from polignac_arena.store.records import (
    Bot,
    ConflictError,
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
    _Finished,
)
from polignac_arena.store.schema import APPLICATION_ID

S = TypeVar("S", bound=StrEnum)


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
                (name, version, str(path), digest, language, _now()),
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
        canonical = _canonical_config(config)
        rows = self._fixture_rows(fixtures, 0)
        priors = [(bot, *self._rating(bot, rating)) for bot, rating in (initial_ratings or {}).items()]
        with self._write() as conn:
            row = conn.execute("SELECT id, config FROM tournaments WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if row[1] != canonical:
                    keys = ", ".join(_differences(json.loads(row[1]), json.loads(canonical))[:5])
                    raise ConflictError(
                        f"a tournament named {name!r} is already stored with another configuration (differs in: {keys}); "
                        "resume it with its own file, or give this one another name"
                    )
                return int(row[0])
            now = _now()
            tid = int(
                conn.execute(
                    "INSERT INTO tournaments (name, config, source, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, canonical, source, TournamentStatus.SCHEDULED.value, now, now),
                ).lastrowid
                or 0
            )
            conn.executemany("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", [(tid, *r) for r in rows])
            conn.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, -1, ?)", [(tid, bot, mu, sigma, now) for bot, mu, sigma in priors])
            conn.executemany("INSERT INTO rating_history VALUES (?, -1, ?, ?, ?)", [(tid, bot, mu, sigma) for bot, mu, sigma in priors])
            return tid

    @staticmethod
    def _fixture_rows(fixtures: Iterable[FixtureLike], start: int) -> list[tuple[int, str, str, str]]:
        checked = sorted((_check_fixture(f) for f in fixtures), key=lambda f: f[0])
        indices = [f[0] for f in checked]
        if indices != list(range(start, start + len(checked))):
            shown = indices if len(indices) <= 10 else [*indices[:10], "..."]
            raise ValueError(f"fixture indices must run {start}, {start + 1}, ... without gaps or repeats, got {shown}")
        return [(idx, _json(seats), str(seed), group) for idx, seats, seed, group in checked]

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
            conn.execute("UPDATE tournaments SET updated_at = ? WHERE id = ?", (_now(), tournament_id))

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
            conn.execute("UPDATE tournaments SET status = ?, updated_at = ? WHERE id = ?", (status.value, _now(), tournament_id))

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
            total = conn.execute("SELECT count(*) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            rows = conn.execute("SELECT final, status, faults FROM results WHERE tournament_id = ?", (tournament_id,)).fetchall()
        faults: Counter[str] = Counter()
        done = void = attempts = 0
        for final, status, seat_faults in rows:
            if not final:
                attempts += 1
                continue
            done += 1
            ended = self._status(MatchStatus, status, "match status", f"a result of tournament {tournament.name!r}")
            void += ended is not MatchStatus.FINISHED
            for counts in json.loads(seat_faults):
                faults.update(counts)
        return Progress(total, done, void, tournament.rating_cursor, attempts, dict(sorted(faults.items())))

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
        stamp = _timestamp(finished_at) if finished_at is not None else _now()
        blob = None if record is None else _encode_record(record)
        with self._write() as conn:
            tournament = self._require(conn, tournament_id)
            fixture = conn.execute("SELECT seats FROM fixtures WHERE tournament_id = ? AND idx = ?", (tournament_id, idx)).fetchone()
            if fixture is None:
                raise StoreError(f"tournament {tournament.name!r} has no fixture {idx!r}")
            n = len(json.loads(fixture[0]))
            values = (
                None if not finished and places is None else _json(_ints(places, "places", n, minimum=1)),
                _json(_ints(totals, "totals", n)),
                _json(self._faults(faults, n)),
                _json(_ints(totals if penalties is None else penalties, "penalties", n)),
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
                   hands, duration_s, finished_at, record_path, node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
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
                ),
            ).lastrowid
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
                if isinstance(rate, GroupRate):
                    before, group = self._group(conn, tid, row[4], cursor)
                    new = rate.rate(before, group)
                    bots = sorted({bot for seated, _ in group for bot in seated})
                else:
                    marks = ", ".join("?" * len(bots))
                    current = {
                        bot: (mu, sigma)
                        for bot, mu, sigma in conn.execute(
                            f"SELECT bot, mu, sigma FROM ratings WHERE tournament_id = ? AND bot IN ({marks})", (tid, *bots)
                        ).fetchall()
                    }
                    new = rate(current, seats, tuple(json.loads(row[2])))
                if sorted(new) != bots:
                    raise ValueError(
                        f"rating fixture {cursor}: the rate function must return a rating for each of {bots}, got {sorted(new)}"
                    )
                for bot in bots:
                    mu, sigma = self._rating(bot, new[bot])
                    conn.execute(
                        "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tournament_id, bot) DO UPDATE SET "
                        "mu = excluded.mu, sigma = excluded.sigma, idx = excluded.idx, updated_at = excluded.updated_at",
                        (tid, bot, mu, sigma, cursor, row[3]),
                    )
                    conn.execute("INSERT INTO rating_history VALUES (?, ?, ?, ?, ?)", (tid, cursor, bot, mu, sigma))
            passed.append(cursor)
            cursor += 1
        if passed:
            conn.execute("UPDATE tournaments SET rating_cursor = ?, updated_at = ? WHERE id = ?", (cursor, _now(), tid))
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
        return self._result(row, None if blob is None else _decode_record(blob[0], blob[1]))

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

    def rating_history(self, tournament_id: int, bot: str | None = None) -> list[RatingPoint]:
        """Ratings after each rated fixture (idx -1: the priors), in schedule order, for one bot or all."""
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

    _FINISHED = """SELECT f.seats, r.places, r.faults, r.hands, r.penalties FROM results r
                   JOIN fixtures f ON f.tournament_id = r.tournament_id AND f.idx = r.idx
                   WHERE r.final = 1 AND r.status = ?"""

    def _finished(self, conn: sqlite3.Connection, tournament_id: int | None) -> Iterator[_Finished]:
        if tournament_id is None:
            rows = conn.execute(self._FINISHED, (MatchStatus.FINISHED.value,))
        else:
            rows = conn.execute(self._FINISHED + " AND r.tournament_id = ?", (MatchStatus.FINISHED.value, tournament_id))
        for seats, places, faults, hands, penalties in rows:
            yield json.loads(seats), json.loads(places), json.loads(faults), hands, json.loads(penalties)

    def leaderboard(self, tournament_id: int | None = None) -> list[LeaderboardRow]:
        """The leaderboard of one tournament, or all-time (None), best first.

        Ordered by the conservative rating ``mu - 3 sigma`` (then mu, then key); bots without a
        rating yet come last.  One tournament: its current ratings, and every bot of its
        schedule.  All-time: each bot's :meth:`latest_ratings`, statistics summed over every
        tournament.  A bot seated twice at a table counts twice.
        """
        matches: Counter[str] = Counter()
        wins: Counter[str] = Counter()
        place_sum: Counter[str] = Counter()
        penalty_sum: Counter[str] = Counter()
        hand_sum: Counter[str] = Counter()
        faults: dict[str, Counter[str]] = {}
        with self._read() as conn:
            if tournament_id is None:
                ratings = self._latest(conn)
                bots = set(ratings)
            else:
                self._require(conn, tournament_id)
                ratings = {
                    bot: (mu, sigma)
                    for bot, mu, sigma in conn.execute("SELECT bot, mu, sigma FROM ratings WHERE tournament_id = ?", (tournament_id,))
                }
                bots = set(ratings)
                for (seats,) in conn.execute("SELECT seats FROM fixtures WHERE tournament_id = ?", (tournament_id,)):
                    bots.update(json.loads(seats))
            for seats, places, seat_faults, hands, penalties in self._finished(conn, tournament_id):
                for seat, bot in enumerate(seats):
                    bots.add(bot)
                    matches[bot] += 1
                    wins[bot] += places[seat] == 1
                    place_sum[bot] += places[seat]
                    penalty_sum[bot] += penalties[seat]
                    hand_sum[bot] += hands
                    faults.setdefault(bot, Counter()).update(seat_faults[seat])
        rows = []
        for bot in bots:
            mu, sigma = ratings.get(bot, (None, None))
            name, version = _split_key(bot)
            played = matches[bot]
            rows.append(
                LeaderboardRow(
                    0, bot, name, version, mu, sigma, played, wins[bot],
                    place_sum[bot] / played if played else None,
                    penalty_sum[bot] / hand_sum[bot] if hand_sum[bot] else None,
                    dict(sorted(faults.get(bot, Counter()).items())),
                )
            )  # fmt: skip

        def order(row: LeaderboardRow) -> tuple[bool, float, float, str]:
            rated = row.mu is not None and row.sigma is not None
            return (not rated, -(row.conservative or 0.0), -(row.mu or 0.0), row.bot)

        rows.sort(key=order)
        return [dataclasses.replace(row, rank=rank) for rank, row in enumerate(rows, start=1)]

    def head_to_head(self, tournament_id: int | None = None) -> dict[tuple[str, str], HeadToHead]:
        """For each ordered pair of bots that met at a table, in one tournament or all-time: their record.

        Both ``(a, b)`` and ``(b, a)`` are keys.  Each pair of seats counts as one meeting (a bot
        seated twice meets its rival twice; a bot never meets itself).
        """
        stats: dict[tuple[str, str], list[int]] = {}  # meetings, a ahead, b ahead, sum of place(a) - place(b)
        with self._read() as conn:
            if tournament_id is not None:
                self._require(conn, tournament_id)
            for seats, places, _faults, _hands, _penalties in self._finished(conn, tournament_id):
                for i, a in enumerate(seats):
                    for j, b in enumerate(seats):
                        if a == b:
                            continue
                        s = stats.setdefault((a, b), [0, 0, 0, 0])
                        diff = places[i] - places[j]
                        s[0] += 1
                        s[1] += diff < 0
                        s[2] += diff > 0
                        s[3] += diff
        return {
            (a, b): HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
            for (a, b), (n, ahead, behind, total) in sorted(stats.items())
        }

    # -- checking ------------------------------------------------------------------------------

    def check(self) -> list[str]:
        """Problems found in the file and in the ratings' bookkeeping; empty when all is well.

        SQLite's integrity and foreign key checks, then, per tournament: no final result before
        the rating cursor is missing, the cursor stopped at the first fixture without one, every
        finished result before the cursor has a history row per bot and none after it, the
        current ratings are the last history rows, and every status is one this arena knows.
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
        return problems
