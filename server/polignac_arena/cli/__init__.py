"""The ``polignac`` command: a Typer app with one module per command or noun, registered below."""

from __future__ import annotations

import typer

from polignac_arena.cli import bench, bot, leaderboard, league, match, play, ratings, replay, rules, store, tournament
from polignac_arena.cli._errors import OneLineErrors
from polignac_arena.cli.web import register as register_web
from polignac_arena.referee.server import raise_open_files_limit

app = typer.Typer(name="polignac", cls=OneLineErrors, help="Polignac Arena: rules engine, matches, tournaments.")


@app.callback()
def _root() -> None:
    """Polignac Arena: rules engine, matches, tournaments."""


app.command("rules")(rules.rules)
app.command("play")(play.play)
app.add_typer(match.app, name="match")
app.add_typer(tournament.app, name="tournament")
app.command("leaderboard")(leaderboard.leaderboard)
app.command("crosstable")(leaderboard.crosstable)
app.add_typer(replay.app, name="replay")
app.add_typer(bench.app, name="bench")
app.add_typer(bot.app, name="bot")
app.add_typer(ratings.app, name="ratings")
app.add_typer(league.app, name="league")
app.add_typer(store.app, name="store")
register_web(app)


def main() -> None:
    """Entry point of the ``polignac`` console script; see :class:`OneLineErrors` for errors."""
    raise_open_files_limit()  # every match holds sockets and pipes for each of its seats
    app(prog_name="polignac")
