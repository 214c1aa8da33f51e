"""``polignac ratings fit``: the beta and draw rate a store's results support, per ruleset and table size."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from polignac.jsontypes import JsonObject
from polignac_arena.cli._errors import fail
from polignac_arena.cli._store import DEFAULT_DB, DbOption, open_store
from polignac_arena.plaintext import plain
from polignac_arena.rating_fit import BETA_GRID, MIN_RESULTS, FitError, FitResult, fit
from polignac_arena.ratings import RatingEnv
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store

__all__ = ["app", "fit_store"]

app = typer.Typer(help="Rating parameters: fit them to the game from a store's results.", no_args_is_help=True)

Group = tuple[str, int]
"""(ruleset name, players per match)."""


def _ruleset_name(config: Mapping[str, object]) -> str:
    rules = config.get("rules")
    name = rules.get("name") if isinstance(rules, dict) else None
    return name if isinstance(name, str) and name else "unknown"


def fit_store(store: Store, tournament: str | None) -> dict[Group, FitResult | FitError]:
    """Each (ruleset, table size) of the store's finished results (or one tournament's), fitted."""
    if tournament is None:
        tournaments = store.list_tournaments()
    else:
        found = store.get_tournament(tournament)
        if found is None:
            known = ", ".join(t.name for t in store.list_tournaments()) or "none yet"
            fail(f"no tournament {tournament!r} in the store; known: {known}")
        tournaments = [found]
    groups: dict[Group, list[list[dict[str, int]]]] = {}
    for t in tournaments:
        name = _ruleset_name(t.config)
        by_size: dict[int, list[dict[str, int]]] = {}
        for result in store.list_results(t.id):
            if result.status is not MatchStatus.FINISHED or result.places is None:
                continue
            by_size.setdefault(len(result.seats), []).append(dict(zip(result.seats, result.places, strict=True)))
        for size, sized in by_size.items():
            groups.setdefault((name, size), []).append(sized)
    if not groups:
        where = f"tournament {tournament!r}" if tournament else "the store"
        fail(f"{where} has no finished match to fit: play some first (polignac tournament run FILE)")
    fitted: dict[Group, FitResult | FitError] = {}
    for group, tournaments_results in sorted(groups.items()):
        try:
            fitted[group] = fit(tournaments_results, RatingEnv())
        except FitError as exc:
            fitted[group] = exc
    return fitted


def _table(fitted: Mapping[Group, FitResult | FitError]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title="Rating parameters fitted to the results (tau 0)")
    for column in ("ruleset", "players", "matches", "draw rate", "beta", "ll/match", "at 25/6", "at 25/3"):
        table.add_column(column, justify="left" if column == "ruleset" else "right")
    for (name, size), found in fitted.items():
        if isinstance(found, FitError):
            table.add_row(Text(plain(name)), str(size), "-", "-", "-", Text(plain(str(found))), "", "")
            continue
        scores = found.log_likelihood
        table.add_row(
            Text(plain(name)), str(size), str(found.matches), f"{found.draw_rate:.3f}", f"{found.beta:.2f}",
            f"{scores[found.beta]:.4f}", f"{scores.get(25 / 6, float('nan')):.4f}", f"{scores.get(25 / 3, float('nan')):.4f}",
        )  # fmt: skip
    return table


def _json_row(name: str, size: int, found: FitResult | FitError) -> JsonObject:
    if isinstance(found, FitError):
        return {"ruleset": name, "players": size, "error": str(found)}
    return {
        "ruleset": name,
        "players": size,
        "matches": found.matches,
        "draw_probability": round(found.draw_rate, 4),
        "beta": round(found.beta, 4),
        "log_likelihood": {f"{beta:.4f}": round(score, 5) for beta, score in found.log_likelihood.items()},
    }


@app.command("fit")
def fit_command(
    db: DbOption = DEFAULT_DB,
    tournament: Annotated[str | None, typer.Option("--tournament", "-t", metavar="NAME", help="One tournament (default: all).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Estimate beta and the draw rate from the store's results, per ruleset and table size (docs/ratings.md)."""
    if not db.exists():
        fail(f"no store at {str(db)!r}: give the file with --db")
    with open_store(db, create=False) as store:
        fitted = fit_store(store, tournament)
    usable = {group: found for group, found in fitted.items() if isinstance(found, FitResult)}
    if as_json:
        print(json.dumps([_json_row(name, size, found) for (name, size), found in fitted.items()], indent=2))
    else:
        Console().print(_table(fitted))
        for (name, size), found in usable.items():
            if found.beta == max(BETA_GRID):
                print(f"# {plain(name)}, {size} players: the best beta is the grid's largest: one match says very little about skill")
            print(f"# {plain(name)}, {size} players, {found.matches} matches: paste into the tournament or league file")
            print(f"[trueskill]\nbeta = {found.beta:.4g}\ndraw_probability = {found.draw_rate:.3f}\ntau = 0.0\n")
    if not usable:
        fail(f"too few finished matches to fit: each ruleset and table size needs at least {MIN_RESULTS}", code=1)
