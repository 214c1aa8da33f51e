"""Take up a seeded match at one of its hands: the same deals from there on, the totals so far.

A deal is a pure function of the match seed and the hand number (:mod:`polignac.deal`), and
the deal passes to the left after every regular hand, so hand k of a match is fixed by the
seed, k and its dealer.  :func:`hand_start` reads those from a played match (one rebuilt
from its record) and :meth:`HandStart.match` starts a new :class:`~polignac.engine.Match`
there: its hands k, k+1, ... are dealt exactly as the original's were, by the same dealers,
with each seat's total as it stood before hand k.  What the new players do from there may
differ, and with it how long the match lasts.

Refused, with a :class:`RerunError` naming why:

- a match whose hands were given (``deals``) rather than derived from its seed: the given
  hands are not reproducible from the seed, and a rerun would silently deal others;
- a hand number the match never dealt (below its first hand, or beyond its last);
- a tie-break hand (and a play-on hand after a tied finish): whether it is played, and by
  whom, depends on the play before it, so it is no position a new match can start from.
"""

from __future__ import annotations

from dataclasses import dataclass

from polignac.engine import Match
from polignac.errors import PolignacError
from polignac.events import HandDealt, HandEnded
from polignac.rules import Ruleset

__all__ = ["HandStart", "RerunError", "hand_start"]


class RerunError(PolignacError):
    """A match, or a hand of it, that a rerun cannot start from."""


@dataclass(frozen=True, slots=True)
class HandStart:
    """Where a seeded match is taken up: the hand number, its dealer, and the totals before it."""

    hand: int
    dealer: int
    totals: tuple[int, ...]

    def match(self, rules: Ruleset, seed: int) -> Match:
        """A new match of ``rules`` and ``seed`` that starts at this hand."""
        return Match(rules, seed, start_totals=self.totals, first_dealer=self.dealer, first_hand=self.hand)


def hand_start(match: Match, hand: int) -> HandStart:
    """Where hand ``hand`` of ``match`` (played, or replayed from its record) began.

    Raises :class:`RerunError` for a match with given deals, a hand it never dealt, and a
    tie-break hand (see the module's docstring).
    """
    if "deals" in match.record():
        raise RerunError("the match's hands were given, not derived from its seed: a rerun could not deal them again")
    dealt = [e for e in match.events if isinstance(e, HandDealt) and not e.tiebreak]
    if type(hand) is not int or not dealt or not dealt[0].hand_number <= hand:
        first = dealt[0].hand_number if dealt else 1
        raise RerunError(f"hand must be a hand number of the match, from {first}, got {hand!r}")
    found = next((e for e in dealt if e.hand_number == hand), None)
    if found is None:
        tiebreaks = [e.hand_number for e in match.events if isinstance(e, HandDealt) and e.tiebreak]
        if hand in tiebreaks:
            raise RerunError(f"hand {hand} is a tie-break hand: whether it is played, and by whom, depends on the play before it")
        raise RerunError(f"the match has no hand {hand}: it dealt hands {dealt[0].hand_number} to {dealt[-1].hand_number}")
    ended = [e for e in match.events if isinstance(e, HandEnded) and e.hand_number < hand]
    totals = ended[-1].totals if ended else _start_totals(match)
    return HandStart(hand, found.dealer, tuple(totals))


def _start_totals(match: Match) -> tuple[int, ...]:
    start = match.record().get("start_totals")
    return tuple(start) if start is not None else (0,) * match.players
