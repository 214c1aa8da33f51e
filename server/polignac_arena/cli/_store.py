"""The ``--db`` option shared by every command that reads or writes the store."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.store import Store, StoreError

__all__ = ["DEFAULT_DB", "DbOption", "open_store", "store_for_a_run"]

DEFAULT_DB = Path("polignac.db")

DbOption = Annotated[
    Path,
    typer.Option("--db", metavar="PATH", help="The SQLite store (default: polignac.db in the working directory)."),
]


def open_store(path: Path, *, create: bool = True) -> Store:
    """Open the store or end with a one-line error naming the file."""
    try:
        return Store(path, create=create)
    except StoreError as exc:
        fail(str(exc))


@contextlib.contextmanager
def store_for_a_run(path: Path) -> Iterator[Store]:
    """The store, opened (created if need be) for a command that stores a tournament.

    A store this call created is removed again when the command fails before a tournament was
    stored in it (a cluster that does not answer, a bot that is missing; the bots it registered
    on the way were this run's alone): a failed start leaves no empty store file behind.
    """
    created = not path.exists()
    store = open_store(path)
    try:
        with store:
            yield store
    except BaseException:
        if created:
            _remove_unless_it_holds_a_tournament(path)
        raise


def _remove_unless_it_holds_a_tournament(path: Path) -> None:
    try:
        with Store(path, create=False) as store:
            if store.list_tournaments():
                return
    except StoreError:
        return
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        part.unlink(missing_ok=True)
