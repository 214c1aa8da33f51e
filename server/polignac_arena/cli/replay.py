"""``polignac replay``: read a match record back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from polignac_arena.cli._errors import fail
from polignac_arena.cli._options import NoNotes
from polignac_arena.plaintext import plain
from polignac_arena.referee.record import RecordFileError, read_lines
from polignac_arena.replay import Replay, replay_lines

app = typer.Typer(help="Show or verify a match record.", no_args_is_help=True)

RecordFile = Annotated[Path, typer.Argument(metavar="FILE", help="A match record (JSON lines) written by polignac match --replay.")]


def _load(path: Path) -> Replay:
    try:
        return replay_lines(read_lines(path))
    except (RecordFileError, ValueError) as exc:
        fail(str(exc))


@app.command("show")
def show(file: RecordFile, no_notes: NoNotes = False) -> None:
    """Print the match trick by trick, with the bots' debug text and stderr after each hand."""
    replay = _load(file)
    console = Console(highlight=False)
    for line in replay.render(notes=not no_notes):  # a record file may come from anywhere: its text is shown plain
        console.print(Text(plain(line)), soft_wrap=True)
    if replay.divergence:
        console.print(Text(plain(f"warning: the record does not replay: {replay.divergence}")))


@app.command("verify")
def verify(file: RecordFile) -> None:
    """Re-run the record through the engine; exit 1 with the first divergence if it does not reproduce."""
    replay = _load(file)
    if replay.divergence:
        print(plain(f"{file}: DIVERGES: {replay.divergence}"))
        raise typer.Exit(1)
    print(f"{file}: OK: {len(replay.match.actions)} actions replay exactly ({replay.status}, places {list(replay.match.places or ())})")
