"""A consistent copy of a live store, and bringing one back: SQLite's online backup API, never a file copy.

A store is in WAL mode, so a file copy taken while the league or a runner writes can miss the
commits still in the ``-wal`` file, or catch a half-written page.  The backup API reads one
snapshot in a single read transaction instead; in WAL mode a reader never blocks a writer, so
a backup costs the running league nothing but the reading.

A backup is one self-contained file (rollback-journal mode, no ``-wal``), created ``0600``,
written beside its target under a temporary name and renamed into place only once SQLite's
integrity check passed: an interrupted backup never leaves a file that looks complete.
Restoring refuses a store that any process still has open: the running process would keep
the old file's pages in its cache and write them back over the restored one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from polignac_arena.store import schema
from polignac_arena.store.records import NewerSchemaError, StoreError
from polignac_arena.store.schema import APPLICATION_ID

__all__ = ["Copied", "backup", "restore"]

BUSY_MS = 30_000
"""How long a backup waits for a writer's checkpoint to let it read (milliseconds)."""


@dataclass(frozen=True, slots=True)
class Copied:
    """What a backup or a restore wrote: the file, its size and the store's schema version."""

    path: Path
    bytes: int
    schema_version: int


def backup(store: Path, target: Path, *, overwrite: bool = False) -> Copied:
    """Copy the store at ``store`` (live or not) to ``target``; an existing ``target`` only with ``overwrite``."""
    _require_file(store, "store")
    if _same_file(store, target):
        raise StoreError(f"cannot back {str(store)!r} up onto itself")
    if target.exists() and not overwrite:
        raise StoreError(f"{str(target)!r} exists: choose another name, or --force to replace it")
    with _connect(store) as source:
        version = _check_store(source, store)
        if target.exists():
            _take_from_its_users(target)
        _copy(source, target)
    return Copied(target, target.stat().st_size, version)


def restore(copy: Path, store: Path, *, overwrite: bool = False) -> Copied:
    """Bring the backup ``copy`` back as the store at ``store``; an existing ``store`` only with ``overwrite``.

    Refused when ``copy`` is no arena store, is damaged, or was written by a newer arena, and
    when ``store`` is open in another process (stop the league or runner first).
    """
    _require_file(copy, "backup")
    if _same_file(copy, store):
        raise StoreError(f"cannot restore {str(copy)!r} onto itself")
    if store.exists() and not overwrite:
        raise StoreError(f"{str(store)!r} exists: --force replaces it with the backup (stop what uses it first)")
    with _connect(copy) as source:
        version = _check_store(source, copy)
        if store.exists():
            _take_from_its_users(store)
        _copy(source, store)
    return Copied(store, store.stat().st_size, version)


def _require_file(path: Path, what: str) -> None:
    if path.is_dir():
        raise StoreError(f"{str(path)!r} is a directory, not a {what} file")
    if not path.is_file():
        raise StoreError(f"there is no {what} at {str(path)!r}")


def _same_file(a: Path, b: Path) -> bool:
    return b.exists() and a.resolve() == b.resolve()


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_MS / 1000)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {str(path)!r}: {exc}") from None
    try:
        yield conn
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    finally:
        conn.close()


def _error(path: Path, exc: sqlite3.Error) -> StoreError:
    message = str(exc)
    if "file is not a database" in message:
        return StoreError(f"{str(path)!r} is not a Polignac Arena store: not an SQLite database (or a damaged one)")
    if "locked" in message or "busy" in message:
        return StoreError(f"{str(path)!r} is in use: another process held its lock too long ({message})")
    return StoreError(f"{str(path)!r}: {message}")


def _check_store(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of the arena store ``conn`` reads, after checking it is one, readable by this arena, whole."""
    if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
        raise StoreError(f"{str(path)!r} is an SQLite database but not a Polignac Arena store")
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(schema.MIGRATIONS):
        raise NewerSchemaError(
            f"{str(path)!r} was written by a newer Polignac Arena (schema version {version}; "
            f"this one reads up to {len(schema.MIGRATIONS)}): upgrade polignac-arena to use it"
        )
    return version


def _take_from_its_users(store: Path) -> None:
    """Fold ``store``'s WAL into it and leave it in rollback mode: SQLite allows that only to its one connection.

    So this fails, and the file is left alone, while any other process has it open.
    """
    with _connect(store) as conn:
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        except sqlite3.OperationalError:
            mode = "wal"
        except sqlite3.DatabaseError:
            return  # not an SQLite file: nothing can have it open as a store
        if str(mode).lower() == "wal":
            raise StoreError(f"{str(store)!r} is open in another process: stop the league or runner that uses it, then restore")


def _copy(source: sqlite3.Connection, target: Path) -> None:
    """``source``'s snapshot into ``target``, through a checked temporary file renamed into place."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise StoreError(f"cannot write {str(target)!r}: {exc.strerror}") from None
    try:
        with _connect(partial) as copy:
            source.backup(copy)  # every page in one step: one snapshot, however much the source is written meanwhile
            if (verdict := copy.execute("PRAGMA integrity_check").fetchone()[0]) != "ok":
                raise StoreError(f"the copy failed SQLite's integrity check ({verdict}): the source may be damaged")
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        for leftover in (Path(f"{target}-wal"), Path(f"{target}-shm")):
            leftover.unlink(missing_ok=True)  # a stale WAL beside the new file would be replayed into it
        os.replace(partial, target)
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
