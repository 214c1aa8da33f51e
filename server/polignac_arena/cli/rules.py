"""``polignac rules``: the named rulesets, and every setting of one of them."""

from __future__ import annotations

import json
from typing import Annotated, Final

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from polignac import PRESETS, Card, Direction, Faces, Rank, Ruleset, Suit, card_name, card_text
from polignac.faces import FRENCH_SUIT_NAMES, GERMAN_RANK_LETTERS, GERMAN_RANK_NAMES, GERMAN_SUIT_LETTERS, GERMAN_SUIT_NAMES
from polignac_arena.cli._options import Limit, Players, ruleset

__all__ = ["RULES_DOC", "card_points_text", "rules", "settings", "summary"]

RULES_DOC = "docs/rules.md"
"""Where the rules of every named ruleset are written out, in the arena's repository."""

_SECTION: Final = {name: 11 for name in ("eichel-obern", "gras-obern", "bassadewitz", "knaves")}
"""The section of RULES_DOC that describes a named ruleset beyond the table of section 10."""
_SETTINGS_SECTION: Final = 12
"""The section of RULES_DOC that describes every setting of a ruleset."""


def card_points_text(rules: Ruleset, sep: str = ", ", short: bool = False) -> str:
    """The points of ``penalty_cards``, short: a rank worth the same in every suit is written once.

    With German faces each card is followed by its German name; ``short`` leaves the names
    out, and "in every suit" (a rank without a suit says it).

    >>> from polignac import preset
    >>> card_points_text(preset("bassadewitz"))
    'A=11, 10=10, K=4, Q=3, J=2 in every suit'
    >>> card_points_text(preset("classic"), " ")
    'JS=2 JH=1 JD=1 JC=1'
    """
    points = dict(rules.penalty_cards)
    grouped: list[str] = []
    for rank in rules.trick_order:
        values = {points.get(Card(suit, rank)) for suit in Suit}
        if len(values) == 1 and None not in values:
            grouped.append(f"{rank.text}={values.pop()}")
            for suit in Suit:
                del points[Card(suit, rank)]
    single = [f"{card}={value}" for card, value in points.items()]
    if not short and rules.faces is Faces.GERMAN:
        single = [f"{text} ({card_name(card, rules.faces)})" for text, card in zip(single, points, strict=True)]
    parts = [sep.join(grouped) + ("" if short else " in every suit")] if grouped else []
    return "; ".join([*parts, sep.join(single)] if single else parts)


def summary(rules: Ruleset) -> tuple[str, str, str]:
    """Trick order, what scores and contracts of a ruleset, each short enough for one line.

    Where higher is better, points against the taker are written with a minus sign.
    """
    points = card_points_text(rules, " ", short=True)
    if rules.direction is Direction.HIGHER:
        points = " ".join(f"{card}-{value}" for card, value in rules.penalty_cards)
    extras = []
    if rules.first_trick_points and rules.first_trick_points == rules.last_trick_points:
        extras.append(f"first/last trick={rules.first_trick_points}")
    else:
        extras += [f"first trick={rules.first_trick_points}"] if rules.first_trick_points else []
        extras += [f"last trick={rules.last_trick_points}"] if rules.last_trick_points else []
    if rules.trick_points:
        extras.append(f"trick{rules.trick_points:+d}")
    contracts = [name for name, on in (("capot", rules.capot), ("general", rules.general)) if on]
    return rules.rank_text(), " ".join([points, *extras]).strip() or "none", ", ".join(contracts) or "none"


def settings(rules: Ruleset) -> list[tuple[str, str]]:
    """Every setting and its value for people: :meth:`Ruleset.describe`, card points written short."""
    return [(key, card_points_text(rules) if key == "penalty_cards" and rules.penalty_cards else value) for key, value in rules.describe()]


def _german_names(rules: Ruleset) -> Table:
    """How the German pack maps onto the French one, suit by suit and rank by rank."""
    table = Table(title="Card names (faces german; the wire keeps the French text)", title_justify="left")
    for column in ("German suit", "French suit", "German rank", "French rank"):
        table.add_column(column)
    suits = (Suit.CLUBS, Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS)
    ranks = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK)
    for suit, rank in zip(suits, ranks, strict=True):
        table.add_row(
            f"{GERMAN_SUIT_NAMES[suit]} ({GERMAN_SUIT_LETTERS[suit]})",
            f"{FRENCH_SUIT_NAMES[suit]} ({suit.letter})",
            f"{GERMAN_RANK_NAMES[rank]} ({GERMAN_RANK_LETTERS[rank]})",
            f"{rank.name.lower()} ({rank.letter})",
        )
    table.add_row("", "", "10 9 8 7", "10 9 8 7")
    card = rules.penalty_cards[0][0] if rules.penalty_cards else Card(Suit.CLUBS, Rank.QUEEN)
    table.caption = f"Suit then rank: the {card_name(card, Faces.GERMAN)} is {card_text(card, Faces.GERMAN)}, {card} on the wire."
    table.caption_justify = "left"
    return table


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
            collapse_padding=True,
        )
        for column in ("Name", "Trick order", "Points", "Contract"):
            table.add_column(column, no_wrap=True)
        for n, r in chosen.items():
            table.add_row(n, *summary(r))
        console.print(table)
        typer.echo(f"The rules of every ruleset: {RULES_DOC} (named rulesets: sections 10 and 11).")
        return
    chosen_rules = chosen[name]
    table = Table(title=f"Ruleset {name}", title_justify="left")
    table.add_column("Setting")
    table.add_column("Value")
    for key, value in settings(chosen_rules):
        table.add_row(key, value)
    console.print(table)
    if chosen_rules.faces is Faces.GERMAN:
        console.print(_german_names(chosen_rules))
    typer.echo(f"The rules of {name}: {RULES_DOC} (section {_SECTION.get(name, 10)}; settings: section {_SETTINGS_SECTION}).")
