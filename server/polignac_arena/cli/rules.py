"""``polignac rules``: the named rulesets, and every setting of one of them."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from polignac import PRESETS, Ruleset
from polignac_arena.cli._options import Limit, Players, ruleset

__all__ = ["RULES_DOC", "rules", "summary"]

RULES_DOC = "docs/rules.md"
"""Where the rules of every named ruleset are written out, in the arena's repository."""


def summary(rules: Ruleset) -> tuple[str, str, str]:
    """Trick order, penalty points and contracts of a ruleset, each short enough for one line."""
    points = [f"{card}={value}" for card, value in rules.penalty_cards]
    if rules.first_trick_points:
        points.append(f"first trick={rules.first_trick_points}")
    if rules.last_trick_points:
        points.append(f"last trick={rules.last_trick_points}")
    contracts = [name for name, on in (("capot", rules.capot), ("general", rules.general)) if on]
    return rules.rank_text(), " ".join(points) or "none", ", ".join(contracts) or "none"


def rules(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="A ruleset to show in full; without it, list them all.", show_default=False)
    ] = None,
    players: Players = None,
    limit: Limit = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the settings as JSON (Ruleset.to_dict).")] = False,
) -> None:
    """List the named rulesets, or show every setting of one."""
    names = [name] if name is not None else list(PRESETS)
    chosen = {n: ruleset(n, players, limit) for n in names}
    if as_json:
        data = chosen[names[0]].to_dict() if name is not None else {n: r.to_dict() for n, r in chosen.items()}
        typer.echo(json.dumps(data, indent=2))
        return
    console = Console(highlight=False)
    if name is None:
        # No vertical rules, so that the longest description still fits on one 80-column line.
        table = Table(
            title="Named rulesets (polignac rules NAME shows every setting)",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
        )
        for column in ("Name", "Trick order", "Penalty points", "Contracts"):
            table.add_column(column)
        for n, r in chosen.items():
            table.add_row(n, *summary(r))
    else:
        table = Table(title=f"Ruleset {name}", title_justify="left")
        table.add_column("Setting")
        table.add_column("Value")
        for key, value in chosen[name].describe():
            table.add_row(key, value)
    console.print(table)
    which = "every ruleset" if name is None else name
    typer.echo(f"The rules of {which}: {RULES_DOC} (named rulesets: section 10).")
