"""Determinized playouts for bots that search: deal the unseen cards, play the hand out, score it.

The expert bot (:mod:`polignac.bots.expert`) reads positions through these few functions, so
that the engine under them (scalar playouts, a rollout policy, batched playouts) changes
in one place.  A *deal* is a list of card bitmasks by seat, as :func:`polignac.playout.sample_hands`
returns: one guess at every hidden hand, consistent with what the view shows.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Final

from polignac.cards import CARDS, SUIT_MASKS, Card, cards_in
from polignac.playout import Playout, sample_hands
from polignac.rules import HandScore, Ruleset
from polignac.values import Contract
from polignac.view import PlayerView

__all__ = [
    "Rollout",
    "contract_rollout",
    "deals",
    "distinct_cards",
    "duck_rollout",
    "play_out",
    "random_rollout",
    "start_after",
    "take_rollout",
    "tricks_wanted",
]

Deal = list[int]
NOISE: Final = 0.1
"""The share of random cards in :func:`duck_rollout`."""
_SUIT_OF: Final = tuple(int(c.suit) for c in CARDS)
_POWERS: dict[tuple[tuple[int, ...], int], list[list[int]]] = {}
_DESCENDING: dict[tuple[tuple[int, ...], int], list[list[tuple[int, int]]]] = {}

Rollout = Callable[[Playout, Callable[[], float]], list[int]]
"""Plays a :class:`Playout` to the end (mutating it) and returns the hand's scores."""


def deals(view: PlayerView, rng: random.Random, count: int) -> list[Deal]:
    """``count`` deals of the unseen cards consistent with ``view`` (voids, played cards, turned trump)."""
    return [sample_hands(view, rng) for _ in range(count)]


def distinct_cards(view: PlayerView) -> list[Card]:
    """``view``'s legal cards, one of each run of equivalent ones: the weakest.

    Two cards of a suit with no unseen card between them in trick order and the same
    points play alike (whichever is played, the same cards beat it and it beats the same
    cards): searching one of them is enough.
    """
    strength = view.rules.strength
    points = view.rules.card_points
    unseen = view.unseen_mask
    kept: list[Card] = []
    for suit_mask in SUIT_MASKS:
        cards = sorted((c for c in view.legal_cards if c.bit & suit_mask), key=lambda c: strength[c.index])
        between = sorted((c for c in cards_in(unseen & suit_mask)), key=lambda c: strength[c.index])
        for card in cards:
            if kept and kept[-1].bit & suit_mask and points[kept[-1].index] == points[card.index]:
                low = strength[kept[-1].index]
                if not any(low < strength[u.index] < strength[card.index] for u in between):
                    continue
            kept.append(card)
    return kept


def start_after(view: PlayerView, decision: Card | Contract, rng: random.Random) -> Playout:
    """The position after ``view``'s seat makes ``decision``: a playout whose other hands are to be replaced.

    A contract is played as declared by this seat, the auction then over (later seats are
    not asked in this model: the first declaration ends it, and they rarely declare).
    """
    if isinstance(decision, Contract):
        declared = decision is not Contract.PASS
        view = dataclasses.replace(view, contract=decision, declarer=view.seat if declared else None)
        return Playout.from_view(view, rng)
    start = Playout.from_view(view, rng)
    start.play(decision.index)
    return start


def play_out(start: Playout, seat: int, rows: Sequence[Deal], rollout: Rollout, rand: Callable[[], float]) -> list[list[int]]:
    """The hand's scores by seat, once per deal in ``rows``, from ``start``.

    ``seat`` keeps its hand of ``start`` (its own cards, less what it just played); every
    other seat takes its hand from the row.
    """
    mine = start.hands[seat]
    out = []
    for row in rows:
        playout = start.copy()
        hands = row[:]
        hands[seat] = mine
        playout.hands = hands
        out.append(rollout(playout, rand))
    return out


def round_costs(
    view: PlayerView, starts: Sequence[Playout], alive: Sequence[int], rng: random.Random, rollouts: Sequence[Rollout]
) -> dict[int, list[float]]:
    """Each alive option's outcome on one new deal (lower is better), as the expert judges a hand.

    The scalar counterpart of :func:`polignac.bots.batched.round_costs`: ``starts[i]`` is the
    position after option ``i``, played out with ``rollouts[i]``; the outcome is the seat's
    score against the mean of the others', signed so that lower is better.
    """
    seat = view.seat
    others = [s for s in view.seats if s != seat]
    rows = deals(view, rng, 1)
    # Every option's playout draws the same random numbers too: the options differ only by
    # the decision, which sharpens their comparison.
    draws = rng.getrandbits(64)
    out = {}
    for i in alive:
        scores = play_out(starts[i], seat, rows, rollouts[i], random.Random(draws).random)
        out[i] = [view.rules.against * (s[seat] - sum(s[o] for o in others) / len(others)) for s in scores]
    return out


def tricks_wanted(rules: Ruleset) -> bool:
    """True when a trick without points is worth taking (Knaves), as :meth:`polignac.bots.tactics.Tactics.plain_worth` reads it."""
    if rules.hand_score is HandScore.PLACE:
        return rules.trick_points < 0
    return rules.against * rules.trick_points < 0


def _descending(rules: Ruleset) -> list[list[tuple[int, int]]]:
    """By suit, the pack's cards as (index, strength), strongest first."""
    key = (rules.strength, rules.pack)
    cached = _DESCENDING.get(key)
    if cached is None:
        in_pack = [c for c in CARDS if c.index < 32 or rules.pack == 52]
        cached = [
            sorted(((c.index, rules.strength[c.index]) for c in in_pack if c.suit == suit), key=lambda cs: -cs[1]) for suit in range(4)
        ]
        _DESCENDING[key] = cached
    return cached


def random_rollout(playout: Playout, rand: Callable[[], float]) -> list[int]:
    """Every seat plays a uniformly random legal card: the fast scalar playout."""
    return playout.run(rand)


def contract_rollout(playout: Playout, rand: Callable[[], float]) -> list[int]:
    """A hand under a contract: the declarer plays its strongest card to win every trick, the others their strongest to stop it.

    Random play would make almost every contract fail and so never declare one; this
    is the play both sides aim at once a contract is declared.
    """
    strength = playout.rules.strength
    trump = playout.trump
    while not playout.is_over:
        legal = playout.legal_mask()
        best, best_power = -1, -2
        while legal:
            low = legal & -legal
            index = low.bit_length() - 1
            legal ^= low
            power = strength[index] + (64 if CARDS[index].suit == trump else 0)
            if power > best_power or (power == best_power and rand() < 0.5):
                best, best_power = index, power
        playout.play(best)
    return playout.scores()


def duck_rollout(playout: Playout, rand: Callable[[], float]) -> list[int]:
    """Trick avoidance in every seat, with a little noise: the rollout of the games where taking costs.

    Following suit, a seat plays its highest card that loses the trick (a point card
    first), else its lowest; void, it discards its worst point card, else its strongest
    card; leading, the lowest card of a suit picked at random.  One card in
    :data:`NOISE` is random instead, so that the deals' outcomes spread.
    """
    desc = _descending(playout.rules)
    strength = playout.rules.strength
    points = playout.rules.card_points
    hands = playout.hands
    taken = playout.taken
    won = playout.won
    nxt = playout.next_seat
    k = len(playout.seats)
    trump = playout.trump
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    to_act = playout.to_act
    trick_len = playout.trick_len
    trick_mask = playout.trick_mask
    led = playout.led
    best_s = playout.best_strength
    best_seat = playout.best_seat
    first_winner = playout.first_winner
    tricks_left = playout.tricks_left
    while tricks_left:
        h = hands[to_act]
        follow = h & SUIT_MASKS[led] if trick_len else 0
        pool = follow or h
        if rand() < NOISE:
            # A random card of the pool: the r-th set bit.
            c = _kth_card(pool, int(rand() * pool.bit_count()))
        elif not trick_len:
            # Lead the lowest card of the suit of a random card.
            suit = _SUIT_OF[_kth_card(h, int(rand() * h.bit_count()))]
            c = next(c for c, s in reversed(desc[suit]) if h & 1 << c)
        elif follow:
            c = -1
            if best_s < 64:  # no trump on the trick: a lower card of the suit led loses
                for card, s in desc[led]:
                    if follow >> card & 1 and s < best_s and (c < 0 or points[card] > points[c]):
                        c = card
            if c < 0:
                # Every card wins (or the trump wins anyway): the lowest, a point card last.
                for card, _ in reversed(desc[led]):
                    if follow >> card & 1 and (c < 0 or points[card] < points[c]):
                        c = card
        else:
            # Void: the worst point card, else the strongest card; trumps kept.
            m = h & ~trump_mask or h
            c, key = -1, -1
            while m:
                low = m & -m
                card = low.bit_length() - 1
                m ^= low
                if points[card] * 64 + strength[card] > key:
                    c, key = card, points[card] * 64 + strength[card]
        # Play card c (as Playout.play, without its checks).
        bit = 1 << c
        hands[to_act] = h ^ bit
        suit = _SUIT_OF[c]
        power = 64 + strength[c] if suit == trump else (strength[c] if not trick_len or suit == led else -1)
        if not trick_len:
            led = suit
            best_s, best_seat = power, to_act
        elif power > best_s:
            best_s, best_seat = power, to_act
        trick_mask |= bit
        trick_len += 1
        if trick_len == k:
            taken[best_seat] |= trick_mask
            won[best_seat] += 1
            if first_winner < 0:
                first_winner = best_seat
            trick_len = trick_mask = 0
            tricks_left -= 1
            to_act = best_seat
        else:
            to_act = nxt[to_act]
    return playout._end_hand(to_act, led, best_s, best_seat, first_winner)


def take_rollout(playout: Playout, rand: Callable[[], float]) -> list[int]:
    """The games where a trick scores for its taker (Knaves), with a little noise.

    The policy reads every hand of the deal.  Leading, a seat cashes its strongest card
    without points when no other hand can beat it (a higher card of the suit, or a trump
    when void), else leads the lowest card of a random suit.  Following, it takes a trick
    worth having with its cheapest card that no seat still to play can beat; otherwise it
    drops its worst point card (a Jack) on the winner, else its lowest card.  One card in :data:`NOISE` is random instead.
    """
    rules = playout.rules
    desc = _descending(rules)
    points = rules.card_points
    plain = -rules.against * rules.trick_points  # the worth of a trick without points
    hands = playout.hands
    taken = playout.taken
    won = playout.won
    nxt = playout.next_seat
    seats = playout.seats
    k = len(seats)
    trump = playout.trump
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    powers = _powers(rules, trump)
    to_act = playout.to_act
    trick_len = playout.trick_len
    trick_mask = playout.trick_mask
    trick_points = sum(points[c] for c in range(52) if trick_mask >> c & 1)
    led = playout.led
    best_s = playout.best_strength
    best_seat = playout.best_seat
    first_winner = playout.first_winner
    tricks_left = playout.tricks_left
    while tricks_left:
        h = hands[to_act]
        follow = h & SUIT_MASKS[led] if trick_len else 0
        pool = follow or h
        c = -1
        if rand() < NOISE:
            c = _kth_card(pool, int(rand() * pool.bit_count()))
        elif not trick_len:
            # Cash a sure winner, the strongest first.
            others = 0
            ruffers = 0  # suits some other hand lacks while holding trumps
            for s in seats:
                if s != to_act:
                    o = hands[s]
                    others |= o
                    if o & trump_mask:
                        for suit in range(4):
                            if not o & SUIT_MASKS[suit]:
                                ruffers |= 1 << suit
            key = -1
            for suit in range(4):
                if not h & SUIT_MASKS[suit] or (suit != trump and ruffers >> suit & 1):
                    continue
                for card, st in desc[suit]:
                    if h >> card & 1:
                        if not points[card] and st > key:
                            c, key = card, st
                        break
                    if others >> card & 1:
                        break
            if c < 0:
                suit = _SUIT_OF[_kth_card(h, int(rand() * h.bit_count()))]
                c = next(card for card, _ in reversed(desc[suit]) if h >> card & 1)
        else:
            power = powers[led]
            # The strongest card the seats still to play could put on the trick.
            threat = best_s
            s = nxt[to_act]
            for _ in range(k - 1 - trick_len):
                o = hands[s]
                o = o & SUIT_MASKS[led] or o & trump_mask
                while o:
                    low = o & -o
                    o ^= low
                    if power[low.bit_length() - 1] > threat:
                        threat = power[low.bit_length() - 1]
                s = nxt[s]
            key = -1
            m = pool
            while m:
                low = m & -m
                card = low.bit_length() - 1
                m ^= low
                if power[card] > threat and plain - trick_points - points[card] > 0:
                    # A sure winner worth it: the cheapest.
                    wkey = 1000 + 128 - power[card]
                    if wkey > key:
                        c, key = card, wkey
                elif key < 1000:
                    # A loser: the worst point card, else the lowest.
                    lkey = points[card] * 256 + 128 - power[card]
                    if lkey > key:
                        c, key = card, lkey
        # Play card c (as Playout.play, without its checks).
        bit = 1 << c
        hands[to_act] = h ^ bit
        if not trick_len:
            led = _SUIT_OF[c]
            best_s, best_seat = powers[led][c], to_act
        elif powers[led][c] > best_s:
            best_s, best_seat = powers[led][c], to_act
        trick_mask |= bit
        trick_points += points[c]
        trick_len += 1
        if trick_len == k:
            taken[best_seat] |= trick_mask
            won[best_seat] += 1
            if first_winner < 0:
                first_winner = best_seat
            trick_len = trick_mask = trick_points = 0
            tricks_left -= 1
            to_act = best_seat
        else:
            to_act = nxt[to_act]
    return playout._end_hand(to_act, led, best_s, best_seat, first_winner)


def _kth_card(mask: int, r: int) -> int:
    """The ``r``-th lowest card (from 0) of ``mask``."""
    for _ in range(r):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


def _powers(rules: Ruleset, trump: int) -> list[list[int]]:
    """``powers[led][card]``: how a card bids for a trick with ``led`` led (trumps above, discards -1)."""
    key = (rules.strength, trump)
    cached = _POWERS.get(key)
    if cached is None:
        cached = [
            [64 + rules.strength[c] if _SUIT_OF[c] == trump else (rules.strength[c] if _SUIT_OF[c] == led else -1) for c in range(52)]
            for led in range(4)
        ]
        _POWERS[key] = cached
    return cached
