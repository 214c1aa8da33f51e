"""``polignac store``: look after the store file itself."""

from __future__ import annotations

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.store import StoreError

app = typer.Typer(help="Look after the store file: check it.", no_args_is_help=True)

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
