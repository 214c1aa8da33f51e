"""``polignac league``: take part in a league run by ``polignac league serve`` (one command per function below)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from polignac_arena.cli._errors import fail

__all__ = ["league_app", "submit"]

league_app = typer.Typer(help="Take part in a league: submit bots to a league server.", no_args_is_help=True)


@league_app.callback()
def _league() -> None:
    """Take part in a league: submit bots to a league server."""


@league_app.command("submit")
def submit(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The submission folder (holding bot.toml).")],
    server: Annotated[
        str, typer.Option("--server", metavar="URL", help="The league server, https://HOST[:PORT] (http:// only to this machine).")
    ],
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="A file holding your API token (else $POLIGNAC_TOKEN, else token in ~/.config/polignac/league.toml).",
        ),
    ] = None,
    ca: Annotated[
        Path | None, typer.Option("--ca", metavar="FILE", help="Trust only this CA certificate (PEM) for the server: a private CA.")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", metavar="NAME", help="The bot to upload a version of (default: the name in bot.toml).")
    ] = None,
) -> None:
    """Pack DIR, upload it as a new version of the bot, and follow its validation until it is accepted (exit 0) or refused (exit 1)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from polignac_arena.league.archive import ArchiveError, pack_folder
    from polignac_arena.league.authoring import SubmissionState
    from polignac_arena.league.submit import LeagueClient, SubmitError, find_token
    from polignac_arena.plaintext import plain
    from polignac_arena.submission import SubmissionError, load_submission

    errors = Console(stderr=True, highlight=False)
    try:
        token = find_token(token_file, os.environ, lambda text: errors.print(f"polignac: warning: {plain(text)}", markup=False))
        bot = name or load_submission(folder).name
        data = pack_folder(folder)
    except (SubmitError, ArchiveError) as exc:
        fail(str(exc), 1)
    except SubmissionError as exc:
        fail(f"{folder} is not a submission to upload: {'; '.join(exc.problems)}", 1)
    try:
        with LeagueClient(server, token, ca=ca) as client:
            columns = (TextColumn(f"uploading {len(data)} bytes"), BarColumn(), DownloadColumn(binary_units=True), TransferSpeedColumn())
            with Progress(*columns, console=errors, transient=True) as progress:
                task = progress.add_task("upload", total=len(data))
                status = client.upload(bot, data, lambda sent: progress.advance(task, sent))
            print(f"uploaded {plain(str(folder))} as a version of {plain(bot)}: submission {plain(status.id)}, {status.state}")
            try:
                status = client.follow(status, lambda line: print(f"  {line}", flush=True))
            except KeyboardInterrupt:
                fail(f"stopped following; submission {plain(status.id)} is still being validated on the server", 130)
    except SubmitError as exc:
        fail(str(exc), 1)
    if status.state is SubmissionState.REFUSED:
        print(f"refused: {plain(status.reason)}")
        raise typer.Exit(1)
    print(f"accepted: {plain(status.label)} ({status.state})")
