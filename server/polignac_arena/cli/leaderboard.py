"""``polignac leaderboard`` and ``polignac crosstable``: the ratings, as a table or JSON."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Annotated, cast

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.ratings import RatingEnv, win_probability
from polignac_arena.store import LeaderboardRow, Store
from polignac_arena.web.confidence import CONFIDENCE, separations

__all__ = ["crosstable", "leaderboard", "leaderboard_table"]

TournamentOption = Annotated[str | None, typer.Option("--tournament", "-t", metavar="NAME", help="One tournament (default: all-time).")]


def _tournament_id(store: Store, name: str | None) -> int | None:
    if name is None:
        return None
    tournament = store.get_tournament(name)
    if tournament is None:
        known = ", ".join(t.name for t in store.list_tournaments()) or "none yet"
        fail(f"no tournament {name!r} in the store; known: {known}")
    return tournament.id


def _env(store: Store, tournament_id: int | None) -> RatingEnv:
    if tournament_id is None:
        return RatingEnv()
    tournament = store.get_tournament(tournament_id)
    settings = tournament.config.get("trueskill") if tournament else None
    return RatingEnv(**cast("dict[str, float]", settings)) if isinstance(settings, dict) and settings else RatingEnv()


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _floored(p: float) -> str:
    """``p`` to two decimals, rounded down: 0.998 is shown 0.99, never a certainty it is not."""
    return f"{math.floor(p * 100) / 100:.2f}"


def _rating(row: LeaderboardRow) -> tuple[float, float] | None:
    return None if row.mu is None or row.sigma is None else (row.mu, row.sigma)


def leaderboard_table(rows: list[LeaderboardRow], title: str) -> Table:
    """The leaderboard as a rich table, compact enough for an 80-column terminal."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True)
    widest = max((len(row.name) for row in rows), default=3)
    table.add_column("#", justify="right")
    table.add_column("bot", min_width=min(widest, 24), no_wrap=True)
    # Wins are left to --json and the web: at tables of 3 to 6 the average place says more, in less width.
    for name in ("ver", "mu", "sd", "rating", "P>", "games", "place", "pts"):
        table.add_column(name, justify="left" if name == "ver" else "right", no_wrap=True)
    table.add_column("faults")
    ranked = sorted(rows, key=lambda row: row.rank)
    sure = {id(row): s for row, s in zip(ranked, separations([_rating(row) for row in ranked]), strict=True)}
    for row in rows:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(row.faults.items())) or "-"
        separation = sure[id(row)]
        p_above = "-" if separation.p_above_stronger is None else _floored(separation.p_above_stronger) + ("=" if separation.tied else "")
        table.add_row(
            str(row.rank), Text(plain(row.name)), Text(plain(row.version)), _number(row.mu), _number(row.sigma), _number(row.conservative),
            p_above, str(row.matches), _number(row.average_place), _number(row.average_penalty_per_hand), Text(plain(faults)),
        )  # fmt: skip
    table.caption = (
        "rating = mu - 3 sd (the order); P>: the probability that the bot ranked above is really stronger"
        f" ('=': below {CONFIDENCE:.2f}, not separated); place: average place; pts: the game's points per hand"
    )
    return table


def leaderboard(
    tournament: TournamentOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The bots ordered by conservative rating (mu - 3 sigma), with their statistics."""
    with open_store(db, create=False) as store:
        tournament_id = _tournament_id(store, tournament)
        rows = store.leaderboard(tournament_id)
    if as_json:
        print(json.dumps([{**asdict(row), "conservative": row.conservative} for row in rows], indent=2))
        return
    if not rows:
        print("no rated bots yet: run a tournament first (polignac tournament run FILE)")
        return
    Console().print(leaderboard_table(rows, f"Leaderboard: {tournament or 'all-time'}"))


def crosstable(tournament: TournamentOption = None, db: DbOption = DEFAULT_DB) -> None:
    """Head to head: average place difference (row minus column) and P(row ranks above column)."""
    with open_store(db, create=False) as store:
        tournament_id = _tournament_id(store, tournament)
        rows = [row for row in store.leaderboard(tournament_id) if row.mu is not None and row.sigma is not None]
        ratings = {row.bot: (row.mu, row.sigma) for row in rows if row.mu is not None and row.sigma is not None}
        meetings = store.head_to_head(tournament_id)
        env = _env(store, tournament_id)
    if not rows:
        print("no rated bots yet: run a tournament first (polignac tournament run FILE)")
        return
    table = Table(title=f"Crosstable: {tournament or 'all-time'} (place difference row-column; P(row above column))")
    table.add_column("bot")
    for row in rows:
        table.add_column(Text(plain(row.bot)), justify="center")
    for a in rows:
        cells = []
        for b in rows:
            if a.bot == b.bot:
                cells.append("·")
                continue
            p = win_probability(env, ratings[a.bot], ratings[b.bot])
            h2h = meetings.get((a.bot, b.bot))
            diff = f"{h2h.mean_place_diff:+.2f} ({h2h.meetings})" if h2h else "-"
            colour = "green" if p >= 0.75 else "red" if p <= 0.25 else "default"
            cells.append(f"[{colour}]{diff}\n{p:.0%}[/{colour}]")
        table.add_row(Text(plain(a.bot)), *cells)
    Console().print(table)
