"""Scoring one finished hand (docs/rules.md 6 and 11), shared by the engine and the fast playout.

Pure integer work on card bitmasks, so that a playout scores a hand exactly as the engine
does without building a :class:`polignac.HandResult`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from polignac.rules import HandScore, Ruleset
from polignac.values import Contract, ScoreException

__all__ = ["HandScoring", "score_hand"]


class HandScoring(NamedTuple):
    """The scores of a hand by seat, and the parts they were made of (seats not playing: 0)."""

    scores: list[int]
    card_points: list[int]
    trick_points: list[int]
    first_last_points: list[int]
    exception: ScoreException


def score_hand(
    rules: Ruleset,
    order: Sequence[int],
    taken: Sequence[int],
    tricks_won: Sequence[int],
    first_winner: int,
    last_winner: int,
    contract: Contract,
    declarer: int | None,
    penalties: Sequence[int],
) -> HandScoring:
    """Score a finished hand.

    ``order`` is the seats of the hand in turn order from eldest hand (the dealer last);
    ``taken[seat]`` the cards it took (a mask), ``tricks_won[seat]`` how many tricks;
    ``penalties[seat]`` the referee's extra points, which always count against the seat.
    """
    n = rules.players
    points = rules.card_points
    pmask = rules.penalty_mask
    against = rules.against
    per_trick = rules.trick_points
    cards = [0] * n
    trick_points = [0] * n
    first_last = [0] * n
    for seat in order:
        mine = taken[seat] & pmask
        total = 0
        while mine:
            low = mine & -mine
            total += points[low.bit_length() - 1]
            mine ^= low
        cards[seat] = total
        trick_points[seat] = per_trick * tricks_won[seat]
    first_last[first_winner] += rules.first_trick_points
    first_last[last_winner] += rules.last_trick_points
    scores = [0] * n
    exception = ScoreException.NONE
    if rules.hand_score is HandScore.PLACE:
        exception = _by_place(rules, order, tricks_won, cards, trick_points, first_last, scores)
    else:
        for seat in order:
            scores[seat] = trick_points[seat] + against * (cards[seat] + first_last[seat])
        if declarer is not None and contract is not Contract.PASS:
            if tricks_won[declarer] == sum(tricks_won):
                for seat in order:
                    scores[seat] = against * rules.contract_points
                scores[declarer] = against * rules.general_points if contract is Contract.GENERAL else 0
            else:
                scores[declarer] += against * rules.contract_points
    for seat in order:
        scores[seat] += against * penalties[seat]
    return HandScoring(scores, cards, trick_points, first_last, exception)


def _by_place(
    rules: Ruleset,
    order: Sequence[int],
    tricks_won: Sequence[int],
    cards: list[int],
    trick_points: list[int],
    first_last: list[int],
    scores: list[int],
) -> ScoreException:
    """Fill ``scores`` by place, or by an exception (every trick, a big take); return which."""
    all_tricks = sum(tricks_won)
    everything = next((s for s in order if tricks_won[s] == all_tricks), None)
    if everything is not None and rules.every_trick_scores:
        taker, other = rules.every_trick_scores
        for seat in order:
            scores[seat] = taker if seat == everything else other
        return ScoreException.EVERY_TRICK
    big = next((s for s in order if rules.big_take_points and cards[s] >= rules.big_take_points), None)
    if big is not None:
        taker, other = rules.big_take_scores
        for seat in order:
            scores[seat] = taker if seat == big else other
        return ScoreException.BIG_TAKE
    # Fewest points first; on equal points a seat without a trick, then the one nearer eldest hand.
    turn = {seat: i for i, seat in enumerate(order)}
    ranked = sorted(order, key=lambda s: (cards[s] + first_last[s] + trick_points[s], tricks_won[s] > 0, turn[s]))
    for seat, score in zip(ranked, rules.place_table(len(order)), strict=True):
        scores[seat] = score
    return ScoreException.NONE
