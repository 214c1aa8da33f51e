"""The final places of a match (docs/rules.md 7 and 8), from who forfeited, who was tied and the totals."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["final_places"]


def final_places(
    totals: Sequence[int],
    *,
    against: int,
    forfeited: Sequence[int],
    contenders: Sequence[int],
    knocked_out: Sequence[int],
    play_on: bool,
) -> tuple[int, ...]:
    """Places by seat (1 is first; equal places are ties).

    ``against`` is 1 where lower totals are better and -1 where higher are.  Forfeiters rank
    last, the earlier one lower; without play-on, the players still tied for first after the
    tie-break hands share first place, those knocked out of the tie-break share the next, and
    the rest follow by their totals.
    """
    keys: list[tuple[int, int]] = []
    for seat, total in enumerate(totals):
        if seat in forfeited:
            keys.append((3, -forfeited.index(seat)))
        elif play_on:
            keys.append((0, against * total))
        elif seat in contenders:
            keys.append((0, 0))
        elif seat in knocked_out:
            keys.append((1, 0))
        else:
            keys.append((2, against * total))
    return tuple(1 + sum(other < key for other in keys) for key in keys)
