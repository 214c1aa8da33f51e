"""``polignac web`` (serve the web face of the store) and ``polignac report`` (write it as a static site)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption

__all__ = ["register", "report", "web"]


def web(
    db: DbOption = DEFAULT_DB,
    host: Annotated[str, typer.Option("--host", help="The address to bind: loopback unless told otherwise.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The TCP port (0: any free one).")] = 8000,
    openapi: Annotated[
        bool, typer.Option("--openapi", help="Print the JSON API's OpenAPI schema (docs/openapi/web.json) and exit; no store is read.")
    ] = False,
    notes: Annotated[
        bool,
        typer.Option(
            "--notes",
            help="Show every bot's own notes (debug text and stderr per decision) in replays, to anyone who can reach the server.",
        ),
    ] = False,
) -> None:
    """Serve the leaderboards, bot pages, crosstables, matches, replays and the JSON API (/api/; /openapi.json), read-only."""
    if openapi:
        import json

        from polignac_arena.web.app import web_openapi

        print(json.dumps(web_openapi(), indent=2, ensure_ascii=False))
        return
    import uvicorn

    from polignac_arena.store import StoreError
    from polignac_arena.web import create_app
    from polignac_arena.web.app import open_read_only
    from polignac_arena.web.note_access import every_seat

    try:
        open_read_only(db).close()  # a one-line error now rather than a traceback at the first request
    except StoreError as exc:
        fail(str(exc))
    print(f"polignac web: serving {db} on http://{host}:{port}/ (Ctrl-C stops)")
    try:
        app = create_app(db, notes_policy=(lambda _request: every_seat) if notes else None)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")


def report(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="The folder to write the site into (created if needed).")],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write the web pages as a static site (relative links: open DIR/index.html from the file system or any static host)."""
    from polignac_arena.store import StoreError
    from polignac_arena.web import write_report
    from polignac_arena.web.app import open_read_only

    try:
        store = open_read_only(db)
    except StoreError as exc:
        fail(str(exc))
    with store:
        try:
            count = write_report(store, out)
        except OSError as exc:
            fail(f"cannot write the report into {str(out)!r}: {exc.strerror or exc}")
    print(f"wrote {count} pages to {out} (open {out / 'index.html'})")


def register(app: typer.Typer) -> None:
    """Add ``web`` and ``report`` to the ``polignac`` command."""
    app.command("web")(web)
    app.command("report")(report)
