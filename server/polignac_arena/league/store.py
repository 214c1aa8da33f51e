"""The league's part of the arena store: authors, their tokens (store_tokens.py), their bots and versions.

Its tables sit beside the arena's in one SQLite file; docs/store.md ("The league's tables") describes
them, a version's states, and what counts toward an author's limits.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Container
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final, Self

from polignac_arena.league.limits import LeagueLimits
from polignac_arena.league.store_tokens import AuthorsAndTokens, author_id_of, check_name
from polignac_arena.league.store_values import (
    BOT_COLUMNS,
    VERSION_COLUMNS,
    LeagueBot,
    LimitReached,
    NotOwner,
    Version,
    VersionKind,
    VersionState,
    bot_of,
    name_key,
    version_of,
)
from polignac_arena.settings import VERSION_MAX, VERSION_PATTERN
from polignac_arena.store import ConflictError, Store, StoreError
from polignac_arena.store.encoding import now_text, timestamp_text
from polignac_arena.store.records import Rating

__all__ = [
    "LeagueLimits",
    "LeagueStore",
    "LimitReached",
    "NotOwner",
    "Version",
    "VersionKind",
    "VersionState",
    "name_key",
]


class _DryRun(Exception):
    """Rolls back a transaction that only checked."""


HASHES_AT_ONCE: Final = 2
"""Old scrypt token hashes (16 MB and tens of milliseconds each) checked at once; more wait their turn (new hashes are cheap)."""


def _private_file(path: Path) -> None:
    """Make the store's file (and its WAL and shared-memory files, which SQLite creates with its mode) ``0600``.

    It holds every author's token hashes and validation logs: no other user of the machine reads it.
    """
    if path.exists():
        for each in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            with contextlib.suppress(OSError):  # absent, or another user's store: Store reports what matters
                if each.stat().st_mode & 0o077:
                    os.chmod(each, 0o600)
        return
    with contextlib.suppress(OSError):  # a folder that cannot be made: Store says so
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


def _mb(count: int) -> str:
    return f"{count / (1 << 20):.1f} MB"


class LeagueStore(AuthorsAndTokens):
    """The league's tables beside the arena's, in one SQLite file; every write is one transaction, as in :class:`Store`.

    :attr:`arena` is that file's :class:`Store`: the league's tournament, its fixtures, results and
    ratings.  Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 30.0) -> None:
        _private_file(Path(path))
        self.arena = Store(path, create=create, timeout=timeout)
        self._checked_tokens: dict[bytes, tuple[str, str]] = {}
        self._hashing = threading.BoundedSemaphore(HASHES_AT_ONCE)

    @property
    def path(self) -> Path:
        return self.arena.path

    def close(self) -> None:
        self.arena.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.arena.write()

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.arena.read()

    # -- bots ---------------------------------------------------------------------------------

    def bot(self, name: str) -> LeagueBot | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {BOT_COLUMNS} WHERE b.name = ?",
                (name,),
            ).fetchone()
        return None if row is None else bot_of(row)

    def bots(self, author: str | None = None) -> list[LeagueBot]:
        query = f"SELECT {BOT_COLUMNS}"
        with self._read() as conn:
            rows = (
                conn.execute(f"{query} WHERE a.name = ? ORDER BY b.name", (author,)).fetchall()
                if author is not None
                else conn.execute(f"{query} ORDER BY b.name").fetchall()
            )
        return [bot_of(row) for row in rows]

    def bots_page(self, after: str | None = None, limit: int = 50) -> tuple[list[LeagueBot], int]:
        """Up to ``limit`` bots by name, after the name ``after``; and how many bots there are in all."""
        query = f"SELECT {BOT_COLUMNS}"
        with self._read() as conn:
            total = int(conn.execute("SELECT count(*) FROM league_bots").fetchone()[0])
            rows = conn.execute(f"{query} WHERE b.name > ? ORDER BY b.name LIMIT ?", (after or "", max(0, limit))).fetchall()
        return [bot_of(row) for row in rows], total

    def latest_versions(self, bots: list[str], per_bot: int) -> dict[str, tuple[list[Version], int]]:
        """The newest ``per_bot`` versions of each of ``bots`` (newest first), and how many each has in all."""
        if not bots:
            return {}
        with self._read() as conn:
            # Every column of a Version but its log (the pages never show it: it may be long).
            rows = conn.execute(
                """SELECT * FROM (SELECT v.id AS id, b.name AS bot, a.name AS author, v.version, v.kind, v.archive, v.state,
                        v.reason, '' AS log, v.created_at, v.updated_at, v.activated_at, b.disabled AS bot_disabled,
                        row_number() OVER (PARTITION BY v.bot_id ORDER BY v.id DESC) AS n,
                        count(*) OVER (PARTITION BY v.bot_id) AS total
                    FROM league_versions v JOIN league_bots b ON b.id = v.bot_id JOIN league_authors a ON a.id = b.author_id
                    WHERE b.name IN (SELECT value FROM json_each(?))) WHERE n <= ? ORDER BY id DESC""",
                (json.dumps(bots), per_bot),
            ).fetchall()
        found: dict[str, tuple[list[Version], int]] = {}
        for row in rows:
            versions, _ = found.setdefault(row["bot"], ([], int(row["total"])))
            versions.append(version_of(row))
        return found

    def set_disabled(self, name: str, disabled: bool) -> None:
        """Take a bot out of matchmaking (or put it back); its versions and history stay."""
        with self._write() as conn:
            if conn.execute("UPDATE league_bots SET disabled = ? WHERE name = ?", (int(disabled), name)).rowcount == 0:
                raise StoreError(f"there is no bot named {name!r} in the league")

    def _claim(
        self, conn: sqlite3.Connection, author: str, name: str, limits: LeagueLimits, online: Container[str] = (), *, make: bool = True
    ) -> tuple[int, bool]:
        """The bot's id, made for ``author`` if new; refused for another author's bot, a look-alike name, or past a limit.

        ``online``: the names of the remote bots online now (they count, however long ago they joined).
        ``make`` False: only check (a new bot's id is then 0).
        """
        check_name("a bot's name", name)
        author_id = author_id_of(conn, author)
        rows = conn.execute(
            "SELECT b.id, b.author_id, b.name, b.disabled FROM league_bots b WHERE b.name_key = ? ORDER BY b.id", (name_key(name),)
        ).fetchall()
        row = next((r for r in rows if r[2] == name), None)
        if row is None and rows:
            other = rows[0]
            if int(other[1]) != author_id:
                raise NotOwner(f"the bot {name!r} reads as {other[2]!r}, another author's bot: choose another name")
            raise ValueError(f"you have the bot {other[2]!r}: use that name, not {name!r}")
        if row is not None and int(row[1]) != author_id:
            raise NotOwner(f"the bot {name!r} belongs to another author: choose another name")
        if row is not None and row[3]:
            raise LimitReached(f"the bot {name!r} is disabled by the league's operator")
        if self._over_active(conn, author_id, name, limits, online):
            names = self._counted(conn, author_id, limits, online)
            raise LimitReached(
                f"the limit of {limits.active_bots} active bot(s) per author is reached ({', '.join(sorted(names))}): "
                "submit a new version of one of them, retire one (polignac league retire BOT), "
                f"or let a remote one stay offline for {limits.remote_idle_s / 60:g} minutes"
            )
        if row is not None:
            return int(row[0]), False
        owned = int(conn.execute("SELECT count(*) FROM league_bots WHERE author_id = ?", (author_id,)).fetchone()[0])
        if owned >= limits.bots:
            raise LimitReached(
                f"the limit of {limits.bots} bot name(s) per author is reached: submit new versions of your bots under their names"
            )
        if not make:
            return 0, True
        now = now_text()
        return int(
            conn.execute(
                "INSERT INTO league_bots (name, author_id, created_at, name_key) VALUES (?, ?, ?, ?)",
                (name, author_id, now, name_key(name)),
            ).lastrowid
            or 0
        ), True

    def _counted(self, conn: sqlite3.Connection, author_id: int, limits: LeagueLimits, online: Container[str]) -> set[str]:
        """The names of the author's bots that count toward ``active_bots`` (see the module notes)."""
        since = timestamp_text(datetime.now(UTC) - timedelta(seconds=limits.remote_idle_s))
        rows = conn.execute(
            """SELECT DISTINCT b.name, v.kind, v.updated_at FROM league_bots b JOIN league_versions v ON v.bot_id = b.id
               WHERE b.author_id = ? AND b.disabled = 0 AND v.state IN ('queued', 'validating', 'active')""",
            (author_id,),
        ).fetchall()
        return {row[0] for row in rows if row[1] != VersionKind.REMOTE.value or row[0] in online or row[2] > since}

    def _over_active(self, conn: sqlite3.Connection, author_id: int, name: str, limits: LeagueLimits, online: Container[str]) -> bool:
        """Whether ``name`` would take the author past ``active_bots``: it does not count yet, and ``active_bots`` do.

        :meth:`_counted`, counted by SQLite: each Join asks it, and an author may have a
        thousand bots.  A bot counts when it has a version that counts by itself (uploaded,
        or remote and seen within ``remote_idle_s``), or a remote one that is online.
        """
        since = timestamp_text(datetime.now(UTC) - timedelta(seconds=limits.remote_idle_s))
        counting = """FROM league_bots b JOIN league_versions v ON v.bot_id = b.id
                      WHERE b.author_id = ? AND b.disabled = 0 AND v.state IN ('queued', 'validating', 'active')"""
        fresh, has = conn.execute(
            f"SELECT count(DISTINCT b.name), coalesce(max(b.name = ?), 0) {counting} AND (v.kind != 'remote' OR v.updated_at > ?)",
            (name, author_id, since),
        ).fetchone()
        stale = conn.execute(
            f"""SELECT DISTINCT b.name {counting} AND v.kind = 'remote' AND v.updated_at <= ? AND NOT EXISTS (
                    SELECT 1 FROM league_versions w WHERE w.bot_id = b.id AND w.state IN ('queued', 'validating', 'active')
                    AND (w.kind != 'remote' OR w.updated_at > ?))""",
            (author_id, since, since),
        ).fetchall()
        online_stale = {row[0] for row in stale if row[0] in online}
        counts = bool(has) or name in online_stale
        return not counts and int(fresh) + len(online_stale) >= limits.active_bots

    def counted_bots(self, author: str, limits: LeagueLimits, online: Container[str] = ()) -> set[str]:
        """The names of ``author``'s bots that count toward ``limits.active_bots`` now (``online``: remote bots online)."""
        with self._read() as conn:
            return self._counted(conn, author_id_of(conn, author), limits, online)

    def seen(self, label: str) -> None:
        """A remote version joined or left the lobby: its idle time counts from now."""
        bot, _, version = label.rpartition("@")
        with self._write() as conn:
            conn.execute(
                """UPDATE league_versions SET updated_at = ? WHERE kind = 'remote' AND version = ?
                   AND bot_id = (SELECT id FROM league_bots WHERE name = ?)""",
                (now_text(), version, bot),
            )

    def retire(self, author: str, bot: str) -> Version:
        """Retire ``author``'s bot: its active version leaves the ladder (a remote one comes back when it connects again).

        Raises :class:`NotOwner` for another author's bot, :class:`StoreError` when there is no
        such bot or it has no active version.
        """
        with self._write() as conn:
            author_id = author_id_of(conn, author)
            row = conn.execute("SELECT id, author_id FROM league_bots WHERE name = ?", (bot,)).fetchone()
            if row is None:
                raise StoreError(f"there is no bot named {bot!r} in the league")
            if int(row[1]) != author_id:
                raise NotOwner(f"the bot {bot!r} belongs to another author")
            active = conn.execute("SELECT id FROM league_versions WHERE bot_id = ? AND state = 'active'", (int(row[0]),)).fetchone()
            if active is None:
                raise StoreError(f"the bot {bot!r} has no active version to retire")
            conn.execute(
                "UPDATE league_versions SET state = 'retired', reason = 'retired by its author', updated_at = ? WHERE id = ?",
                (now_text(), int(active[0])),
            )
            return version_of(conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (int(active[0]),)).fetchone())

    # -- versions -----------------------------------------------------------------------------

    def check_upload(self, author: str, bot: str, limits: LeagueLimits, now: datetime | None = None, online: Container[str] = ()) -> None:
        """Raise what :meth:`count_upload` would raise for an upload of ``bot`` by ``author`` now, writing nothing."""
        try:
            with self._write() as conn:
                self._check_upload(conn, author, bot, limits, now or datetime.now(UTC), online)
                raise _DryRun
        except _DryRun:
            pass

    def count_upload(self, author: str, bot: str, limits: LeagueLimits, now: datetime | None = None, online: Container[str] = ()) -> None:
        """Admit an upload of ``bot`` by ``author`` and count it toward the hourly limit, whatever becomes of it.

        Raises :class:`NotOwner`, :class:`LimitReached` (counting nothing) as :meth:`add_upload` would.
        """
        moment = now or datetime.now(UTC)
        with self._write() as conn:
            self._check_upload(conn, author, bot, limits, moment, online, make=False)  # the name is taken once a version is stored
            self._count_newversion_of(conn, author_id_of(conn, author), VersionKind.UPLOAD, moment)

    def _check_upload(
        self,
        conn: sqlite3.Connection,
        author: str,
        bot: str,
        limits: LeagueLimits,
        moment: datetime,
        online: Container[str] = (),
        *,
        make: bool = True,
    ) -> int:
        self._check_hourly(conn, author_id_of(conn, author), limits, moment)
        bot_id, _ = self._claim(conn, author, bot, limits, online, make=make)
        return bot_id

    @staticmethod
    def _check_hourly(conn: sqlite3.Connection, author_id: int, limits: LeagueLimits, moment: datetime) -> None:
        """Refuse a new version past ``uploads_per_hour`` new versions (uploads, remote versions) in the last hour."""
        since = timestamp_text(moment - timedelta(hours=1))
        conn.execute("DELETE FROM league_new_versions WHERE author_id = ? AND at <= ?", (author_id, since))
        recent = int(
            conn.execute("SELECT count(*) FROM league_new_versions WHERE author_id = ? AND at > ?", (author_id, since)).fetchone()[0]
        )
        if recent >= limits.uploads_per_hour:
            # One more is taken once this one leaves the hour's window.
            nth = conn.execute(
                "SELECT at FROM league_new_versions WHERE author_id = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?",
                (author_id, since, recent - limits.uploads_per_hour),
            ).fetchone()
            leaving = datetime.fromisoformat(nth[0])
            raise LimitReached(
                f"the limit of {limits.uploads_per_hour} upload(s) per hour is reached (every upload counts, refused ones too,"
                " and every new remote version): try again later",
                retry_after_s=max(1.0, (leaving + timedelta(hours=1) - moment).total_seconds()),
            )

    @staticmethod
    def _count_newversion_of(conn: sqlite3.Connection, author_id: int, kind: VersionKind, moment: datetime) -> None:
        at = timestamp_text(moment)
        conn.execute("INSERT INTO league_new_versions (author_id, kind, at) VALUES (?, ?, ?)", (author_id, kind.value, at))

    def archives_in_use(self) -> set[str]:
        """The archives some version still holds."""
        with self._read() as conn:
            return {r[0] for r in conn.execute("SELECT DISTINCT archive FROM league_versions WHERE archive IS NOT NULL")}

    def archive_in_use(self, sha: str) -> bool:
        with self._read() as conn:
            return conn.execute("SELECT 1 FROM league_versions WHERE archive = ?", (sha,)).fetchone() is not None

    def add_upload(
        self,
        author: str,
        bot: str,
        archive: str,
        limits: LeagueLimits,
        now: datetime | None = None,
        online: Container[str] = (),
        *,
        disk_bytes: int = 0,
        counted: bool = False,
    ) -> tuple[Version, list[str]]:
        """Queue an uploaded version (its archive already stored); returns it and the archives to delete.

        Refused (:class:`NotOwner`, :class:`LimitReached`) before anything is written.  The upload
        counts toward the hourly limit here unless :meth:`count_upload` already ``counted`` it.
        ``disk_bytes``: what it takes on disk so far.  Past ``versions_kept`` the oldest inactive
        versions lose their archives (their rows stay).
        """
        moment = now or datetime.now(UTC)
        with self._write() as conn:
            if counted:
                bot_id, _ = self._claim(conn, author, bot, limits, online)
            else:
                bot_id = self._check_upload(conn, author, bot, limits, moment, online)
                self._count_newversion_of(conn, author_id_of(conn, author), VersionKind.UPLOAD, moment)
            count = conn.execute("SELECT count(*) FROM league_versions WHERE bot_id = ? AND kind = 'upload'", (bot_id,)).fetchone()[0]
            stamp = timestamp_text(moment)
            version_id = int(
                conn.execute(
                    "INSERT INTO league_versions (bot_id, version, kind, archive, state, created_at, updated_at, disk_bytes)"
                    " VALUES (?, ?, 'upload', ?, 'queued', ?, ?, ?)",
                    (bot_id, str(count + 1), archive, stamp, stamp, int(disk_bytes)),
                ).lastrowid
                or 0
            )
            kept = conn.execute(
                """SELECT id, archive FROM league_versions WHERE bot_id = ? AND archive IS NOT NULL
                   AND state IN ('refused', 'retired') ORDER BY id""",
                (bot_id,),
            ).fetchall()
            holding = conn.execute("SELECT count(*) FROM league_versions WHERE bot_id = ? AND archive IS NOT NULL", (bot_id,)).fetchone()[0]
            pruned: list[str] = []
            for old_id, old_archive in kept:
                if holding <= limits.versions_kept:
                    break
                conn.execute("UPDATE league_versions SET archive = NULL, disk_bytes = 0 WHERE id = ?", (old_id,))
                holding -= 1
                if not conn.execute("SELECT 1 FROM league_versions WHERE archive = ?", (old_archive,)).fetchone():
                    pruned.append(str(old_archive))
            version = version_of(conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (version_id,)).fetchone())
        return version, pruned

    def claim_remote(
        self,
        author: str,
        bot: str,
        version: str,
        limits: LeagueLimits,
        prior: Callable[[Rating | None], Rating],
        tournament_id: int,
        online: Container[str] = (),
    ) -> Version:
        """The active remote version ``bot@version`` of ``author``, made (and activated) on its first connection.

        ``online``: the names of the remote bots online now, which count toward ``active_bots``.
        """
        if not isinstance(version, str) or not VERSION_PATTERN.match(version):
            raise ValueError(
                f"a remote bot's version must be 1 to {VERSION_MAX} letters, digits, '.', '_', '+' or '-', starting with a letter"
                f" or digit, got {version!r}"
            )
        with self._write() as conn:
            bot_id, _ = self._claim(conn, author, bot, limits, online)
            row = conn.execute("SELECT id, kind, state FROM league_versions WHERE bot_id = ? AND version = ?", (bot_id, version)).fetchone()
            if row is not None and row[1] != VersionKind.REMOTE.value:
                raise ConflictError(f"{bot}@{version} is an uploaded version: connect under another version text")
            if row is None:
                moment = datetime.now(UTC)
                author_id = author_id_of(conn, author)
                self._check_hourly(conn, author_id, limits, moment)
                self._count_newversion_of(conn, author_id, VersionKind.REMOTE, moment)
                now = now_text()
                version_id = int(
                    conn.execute(
                        "INSERT INTO league_versions (bot_id, version, kind, state, created_at, updated_at)"
                        " VALUES (?, ?, 'remote', 'queued', ?, ?)",
                        (bot_id, version, now, now),
                    ).lastrowid
                    or 0
                )
            else:
                version_id = int(row[0])
            if row is None or row[2] != VersionState.ACTIVE.value:
                self._activate(conn, version_id, tournament_id, prior)
            else:
                conn.execute("UPDATE league_versions SET updated_at = ? WHERE id = ?", (now_text(), version_id))
            return version_of(conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (version_id,)).fetchone())

    def version(self, version_id: int) -> Version | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (version_id,)).fetchone()
        return None if row is None else version_of(row)

    def versions(self, bot: str | None = None, *, states: tuple[VersionState, ...] = ()) -> list[Version]:
        """Versions (of ``bot``; in ``states``), oldest first."""
        clauses, params = [], []
        if bot is not None:
            clauses.append("b.name = ?")
            params.append(bot)
        if states:
            clauses.append(f"v.state IN ({', '.join('?' * len(states))})")
            params.extend(s.value for s in states)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._read() as conn:
            return [version_of(r) for r in conn.execute(f"SELECT {VERSION_COLUMNS}{where} ORDER BY v.id", params).fetchall()]

    def start_validation(self, version_id: int) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE league_versions SET state = 'validating', log = '', updated_at = ?"
                " WHERE id = ? AND state IN ('queued', 'validating')",
                (now_text(), version_id),
            )

    def append_log(self, version_id: int, text: str, cap: int = 256_000) -> None:
        """Add to a version's validation log (capped: past ``cap`` characters the rest is dropped with a note)."""
        with self._write() as conn:
            row = conn.execute("SELECT length(log) FROM league_versions WHERE id = ?", (version_id,)).fetchone()
            if row is None or row[0] >= cap:
                return
            room = cap - row[0]
            piece = text if len(text) <= room else text[:room] + "\n[the log is cut here: too long]\n"
            conn.execute("UPDATE league_versions SET log = log || ?, updated_at = ? WHERE id = ?", (piece, now_text(), version_id))

    def finish_validation(
        self, version_id: int, ok: bool, reason: str, tournament_id: int, prior: Callable[[Rating | None], Rating]
    ) -> Version:
        """End a version's validation: active (retiring the bot's previous version) or refused with ``reason``."""
        with self._write() as conn:
            row = conn.execute("SELECT state FROM league_versions WHERE id = ?", (version_id,)).fetchone()
            if row is None:
                raise StoreError(f"there is no version {version_id}")
            if row[0] in (VersionState.QUEUED.value, VersionState.VALIDATING.value):
                if ok:
                    self._activate(conn, version_id, tournament_id, prior)
                else:
                    conn.execute(
                        "UPDATE league_versions SET state = 'refused', reason = ?, updated_at = ? WHERE id = ?",
                        (reason, now_text(), version_id),
                    )
            return version_of(conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (version_id,)).fetchone())

    def _activate(self, conn: sqlite3.Connection, version_id: int, tournament_id: int, prior: Callable[[Rating | None], Rating]) -> None:
        """Make a version active: the bot's previous active version retires; the new one's rating starts from ``prior``."""
        new = version_of(conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.id = ?", (version_id,)).fetchone())
        previous = conn.execute(
            f"SELECT {VERSION_COLUMNS} WHERE b.name = ? AND v.state = 'active' AND v.id != ? ORDER BY v.activated_at DESC",
            (new.bot, version_id),
        ).fetchall()
        now = now_text()
        inherited: Rating | None = None
        for row in previous:
            old = version_of(row)
            conn.execute(
                "UPDATE league_versions SET state = 'retired', reason = ?, updated_at = ? WHERE id = ?",
                (f"replaced by {new.label}", now, old.id),
            )
            rating = conn.execute(
                "SELECT mu, sigma FROM ratings WHERE tournament_id = ? AND bot = ?", (tournament_id, old.label)
            ).fetchone()
            if rating is not None and inherited is None:
                inherited = (float(rating[0]), float(rating[1]))
        conn.execute(
            "UPDATE league_versions SET state = 'active', reason = '', updated_at = ?, activated_at = ? WHERE id = ?",
            (now, now, version_id),
        )
        if conn.execute("SELECT 1 FROM ratings WHERE tournament_id = ? AND bot = ?", (tournament_id, new.label)).fetchone() is None:
            mu, sigma = self.arena.checked_rating(new.label, prior(inherited))
            self.arena.set_prior(conn, tournament_id, new.label, (mu, sigma), now)

    def disk_used(self, author: str) -> int:
        """The bytes ``author``'s versions take on disk (their archives, unpacked folders and builds)."""
        with self._read() as conn:
            row = conn.execute(
                """SELECT COALESCE(sum(v.disk_bytes), 0) FROM league_versions v JOIN league_bots b ON b.id = v.bot_id
                   JOIN league_authors a ON a.id = b.author_id WHERE a.name = ?""",
                (author,),
            ).fetchone()
        return int(row[0])

    def set_disk(self, version_id: int, disk_bytes: int) -> None:
        """What a version's files take on disk now (measured after its unpack, after its build)."""
        with self._write() as conn:
            conn.execute("UPDATE league_versions SET disk_bytes = ? WHERE id = ? AND archive IS NOT NULL", (int(disk_bytes), version_id))

    def make_room(self, author: str, need: int, budget: int) -> list[str]:
        """Free ``need`` bytes of ``author``'s ``budget``: the oldest inactive versions lose their archives; the archives to delete.

        Raises :class:`LimitReached` (freeing nothing) when the versions that may not go (queued,
        validating, active) leave too little room.
        """
        with self._write() as conn:
            rows = conn.execute(
                """SELECT v.id, v.archive, v.disk_bytes, v.state FROM league_versions v JOIN league_bots b ON b.id = v.bot_id
                   JOIN league_authors a ON a.id = b.author_id WHERE a.name = ? ORDER BY v.id""",
                (author,),
            ).fetchall()
            used = sum(int(r[2]) for r in rows)
            if used + need <= budget:
                return []
            kept = sum(int(r[2]) for r in rows if r[3] not in ("refused", "retired"))
            if kept + need > budget:
                raise LimitReached(
                    f"your versions take {_mb(used)} of your {_mb(budget)} on the league's disk and this one needs {_mb(need)}:"
                    " wait until a version is retired, or ask the operator to disable a bot"
                )
            freed: list[str] = []
            for version_id, archive, size, state in rows:
                if used + need <= budget:
                    break
                if state in ("refused", "retired") and int(size) > 0:
                    conn.execute("UPDATE league_versions SET archive = NULL, disk_bytes = 0 WHERE id = ?", (version_id,))
                    used -= int(size)
                    if archive is not None and not conn.execute("SELECT 1 FROM league_versions WHERE archive = ?", (archive,)).fetchone():
                        freed.append(str(archive))
            return freed

    def discard_files(self, version_id: int) -> str | None:
        """Let a refused version's files go (its row, reason and log stay); its archive, when no other version holds it."""
        with self._write() as conn:
            row = conn.execute("SELECT archive FROM league_versions WHERE id = ?", (version_id,)).fetchone()
            if row is None or row[0] is None:
                return None
            conn.execute("UPDATE league_versions SET archive = NULL, disk_bytes = 0 WHERE id = ?", (version_id,))
            held = conn.execute("SELECT 1 FROM league_versions WHERE archive = ?", (row[0],)).fetchone()
            return None if held else str(row[0])

    def unmeasured(self) -> list[Version]:
        """Versions holding an archive whose disk use is not known (stored before it was counted)."""
        with self._read() as conn:
            rows = conn.execute(f"SELECT {VERSION_COLUMNS} WHERE v.archive IS NOT NULL AND v.disk_bytes = 0 ORDER BY v.id").fetchall()
        return [version_of(r) for r in rows]

    def pending_validations(self) -> list[Version]:
        """Uploads waiting for (or interrupted in) their validation, oldest first."""
        return self.versions(states=(VersionState.QUEUED, VersionState.VALIDATING))

    def active_versions(self) -> list[Version]:
        """The versions in the ladder: active, their bot not disabled."""
        return [v for v in self.versions(states=(VersionState.ACTIVE,)) if not v.bot_disabled]

    # -- the ladder's switches and requests ----------------------------------------------------

    def setting(self, key: str, default: str = "") -> str:
        with self._read() as conn:
            row = conn.execute("SELECT value FROM league_settings WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO league_settings VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def request_rerun(self, match_id: str) -> int:
        """Ask the ladder to play a match again (same seats and deal); its request id."""
        if self.arena.get_result(match_id) is None:
            raise StoreError(f"there is no match {match_id!r} in the store")
        with self._write() as conn:
            return int(
                conn.execute("INSERT INTO league_reruns (match_id, requested_at) VALUES (?, ?)", (match_id, now_text())).lastrowid or 0
            )

    def pending_reruns(self) -> list[tuple[int, str]]:
        with self._read() as conn:
            return [(int(r[0]), r[1]) for r in conn.execute("SELECT id, match_id FROM league_reruns WHERE fixture_idx IS NULL ORDER BY id")]

    def mark_rerun(self, request_id: int, fixture_idx: int) -> None:
        with self._write() as conn:
            conn.execute("UPDATE league_reruns SET fixture_idx = ? WHERE id = ?", (fixture_idx, request_id))

    def schedule(self, tournament_id: int, seats: list[str], seed: int, rerun: int | None = None, *, index: int | None = None) -> int:
        """Add one match to the league's schedule (and close the rerun request it answers), in one transaction; its index.

        ``index``: the fixture's (one no fixture has); by default the next after the last.
        """
        with self._write() as conn:
            self.arena.require(conn, tournament_id)
            last = conn.execute("SELECT max(idx) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            idx = (-1 if last is None else int(last)) + 1 if index is None else index
            group = "null" if rerun is None else f'{{"rerun":{int(rerun)}}}'
            self.arena.insert_fixture(conn, tournament_id, idx, seats, seed, group)
            if rerun is not None:
                conn.execute("UPDATE league_reruns SET fixture_idx = ? WHERE id = ?", (idx, rerun))
            return idx
