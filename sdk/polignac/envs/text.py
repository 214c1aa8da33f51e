"""A hand in progress as text, every hand face up: what the environments' ``render`` and ``str`` show."""

from __future__ import annotations

from collections.abc import Sequence

from polignac.cards import Card, cards_in
from polignac.faces import card_text
from polignac.view import PlayerView

__all__ = ["table_text"]


def table_text(view: PlayerView, hands: Sequence[int]) -> str:
    """Several lines: the hand, the auction, each seat's cards and takings, the trick on the table.

    ``view`` gives the hand as the table sees it; ``hands`` the cards held, a mask by seat.
    """
    rules = view.rules
    faces = rules.faces
    seats, totals, to_act = view.seats, view.totals, view.to_act

    def show(cards: Sequence[Card]) -> str:
        return " ".join(card_text(c, faces) for c in cards) or "-"

    head = f"{rules.name}, hand {view.hand_number}, dealer seat {view.dealer}"
    if view.turned is not None:
        head += f", turned {card_text(view.turned, faces)} (trumps)"
    lines = [head]
    if view.auction:
        lines.append("auction: " + ", ".join(f"seat {s} {c.value}" for s, c in view.auction))
    taken: dict[int, list[Card]] = {s: [] for s in seats}
    won = dict.fromkeys(seats, 0)
    for trick in view.tricks:
        taken[trick.winner].extend(c for _, c in trick.plays if rules.card_points[c.index])
        won[trick.winner] += 1
    for seat in seats:
        mark = " <" if seat == to_act else ""
        lines.append(
            f"seat {seat}: {show(cards_in(hands[seat]))} | tricks {won[seat]}, took {show(taken[seat])} | total {totals[seat]}{mark}"
        )
    if view.current_trick:
        lines.append("trick: " + ", ".join(f"seat {s} {card_text(c, faces)}" for s, c in view.current_trick))
    return "\n".join(lines)
