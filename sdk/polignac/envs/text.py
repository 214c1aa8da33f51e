"""A hand in progress as text, every hand face up: what the environments' ``render`` and ``str`` show."""

from __future__ import annotations

from collections.abc import Sequence

from polignac.cards import Card, cards_in
from polignac.faces import card_text
from polignac.rules import Ruleset
from polignac.values import Contract, Trick

__all__ = ["table_text"]


def table_text(
    rules: Ruleset,
    *,
    hand_number: int,
    dealer: int,
    seats: Sequence[int],
    hands: Sequence[int],
    auction: Sequence[tuple[int, Contract]],
    tricks: Sequence[Trick],
    current_trick: Sequence[tuple[int, Card]],
    totals: Sequence[int],
    turned: Card | None,
    to_act: int | None,
) -> str:
    """Several lines: the hand, the auction, each seat's cards and takings, the trick on the table."""
    faces = rules.faces

    def show(cards: Sequence[Card]) -> str:
        return " ".join(card_text(c, faces) for c in cards) or "-"

    head = f"{rules.name}, hand {hand_number}, dealer seat {dealer}"
    if turned is not None:
        head += f", turned {card_text(turned, faces)} (trumps)"
    lines = [head]
    if auction:
        lines.append("auction: " + ", ".join(f"seat {s} {c.value}" for s, c in auction))
    taken: dict[int, list[Card]] = {s: [] for s in seats}
    won = dict.fromkeys(seats, 0)
    for trick in tricks:
        taken[trick.winner].extend(c for _, c in trick.plays if rules.card_points[c.index])
        won[trick.winner] += 1
    for seat in seats:
        mark = " <" if seat == to_act else ""
        lines.append(
            f"seat {seat}: {show(cards_in(hands[seat]))} | tricks {won[seat]}, took {show(taken[seat])} | total {totals[seat]}{mark}"
        )
    if current_trick:
        lines.append("trick: " + ", ".join(f"seat {s} {card_text(c, faces)}" for s, c in current_trick))
    return "\n".join(lines)
