"""``polignac store``: look after the store file itself."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.store import StoreError
from polignac_arena.store import backup as copies

app = typer.Typer(help="Look after the store file: check it, back it up, restore it.", no_args_is_help=True)

ForceOption = Annotated[bool, typer.Option("--force", help="Replace the destination file if it exists.")]

PROBLEMS_EXIT = 1
"""``polignac store check``'s exit code when it found a difference (2 stays Click's, for bad usage)."""


@app.command("check")
def check(db: DbOption = DEFAULT_DB) -> None:
    """Check the store's integrity, rating bookkeeping and aggregates (recomputed from the results); exit 1 on a difference."""
    with open_store(db, create=False) as store:
        try:
            problems = store.check()
        except StoreError as exc:
            fail(str(exc))
    for problem in problems:
        print(plain(problem))
    if problems:
        raise typer.Exit(PROBLEMS_EXIT)
    print(f"{db}: clean")


@app.command("backup")
def backup(
    target: Annotated[Path, typer.Argument(metavar="BACKUP", help="The file to write the copy to.")],
    db: DbOption = DEFAULT_DB,
    force: ForceOption = False,
) -> None:
    """Copy the store to BACKUP, consistently even while a league or runner writes to it.

    The copy is one SQLite file (mode 0600) holding one moment of the store; it appears only
    once complete and checked. `polignac store restore BACKUP` brings it back.
    """
    try:
        copied = copies.backup(db, target, overwrite=force)
    except StoreError as exc:
        fail(str(exc))
    print(f"{db} backed up to {copied.path} ({copied.bytes:,} bytes, schema version {copied.schema_version})")


@app.command("restore")
def restore(
    source: Annotated[Path, typer.Argument(metavar="BACKUP", help="A copy made by `polignac store backup`.")],
    db: DbOption = DEFAULT_DB,
    force: ForceOption = False,
) -> None:
    """Make BACKUP the store again, then check it as `polignac store check` does (exit 1 on a difference).

    Stop the league or runner that uses the store first: a store open in another process is
    refused. An existing store is replaced only with --force.
    """
    try:
        copied = copies.restore(source, db, overwrite=force)
    except StoreError as exc:
        fail(str(exc))
    print(f"{source} restored to {copied.path} ({copied.bytes:,} bytes, schema version {copied.schema_version})")
    check(db)
