"""The ``--db`` option shared by every command that reads or writes the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.store import Store, StoreError

__all__ = ["DEFAULT_DB", "DbOption", "open_store"]

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
