"""Batched random playouts: many deals of one position played out at once with numpy.

:meth:`polignac.playout.Playout.run_batch` is the entry point; this module is its engine,
loaded on first use so that ``import polignac`` does not import numpy.  Every deal of a
batch shares the position (the trick in progress, the cards taken, the contract, the
extra points, the seat to act); only the hidden hands differ.  The deals are played
array-at-a-time: one numpy step per card, whatever the batch size.

Hands are held with each suit in a field of ``width`` bits, ranks ascending (8 bits for
the 32-card pack, where that is the narrow card index itself; 16 for the 52-card pack).
That order (suits S H D C, ranks up) is the order in which :meth:`Playout.run` numbers the
legal cards on both its paths, so the ``int(r * count)``-th legal card is the same card
here and there, for the same random float ``r``.

>>> import numpy as np
>>> from polignac import Match, preset
>>> from polignac.playout import Playout
>>> match = Match(preset("no-contracts"), seed=3)
>>> playout = Playout.from_match(match)
>>> hands = np.array([playout.hands] * 3)  # three copies of the true deal
>>> scores = playout.run_batch(hands, rng=np.random.default_rng(1))
>>> scores.shape, scores.sum(axis=1).tolist()
((3, 4), [5, 5, 5])
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from polignac.batch_duck import DuckPolicy, duck_tables
from polignac.cards import card_index, cards_in
from polignac.errors import BatchError, PolignacError
from polignac.playout import _CONTRACTS, Playout, sample_hands
from polignac.rules import HandScore
from polignac.values import Contract

if TYPE_CHECKING:
    from polignac.view import PlayerView

__all__ = ["run_batch", "sample_hands_many"]

Int64Array = npt.NDArray[np.int64]
Array = npt.NDArray[Any]


@dataclass(frozen=True, slots=True)
class _Tables:
    """Look-up tables for one ruleset's play, by bit position in a hand; built once per ruleset and trump."""

    width: int  # bits per suit in a hand
    dtype: type[np.unsignedinteger[Any]]
    lead_power: npt.NDArray[np.int8]  # [position]: the card's power when it leads the trick
    power: npt.NDArray[np.int8]  # [led_base[led card] + position]: its power in a trick so led
    led_base: npt.NDArray[np.intp]  # [position]: where the powers with that card's suit led start
    led_mask: npt.NDArray[Any]  # [position]: the mask of that card's suit
    card_points: npt.NDArray[np.int16]  # [position]: the points for taking that card


def _position_to_index(width: int) -> list[int]:
    """Card index (``Card.index``) at each bit position of a hand ``width`` bits per suit; -1 for none."""
    out = [-1] * (4 * width)
    low = 7 if width == 8 else 2
    for suit in range(4):
        for rank in range(low, 15):
            out[suit * width + rank - low] = card_index(suit, rank)
    return out


@lru_cache(maxsize=1)
def _kth16() -> npt.NDArray[np.uint8]:
    """``[(pattern << 4) | r]``: the position of the ``r``-th set bit (from 0, ascending) of a 16-bit pattern."""
    rest = np.arange(1 << 16, dtype=np.uint32)
    table = np.zeros((1 << 16, 16), dtype=np.uint8)
    for r in range(16):
        low = rest & (~rest + np.uint32(1))  # the lowest set bit
        table[:, r] = np.bitwise_count(low - np.uint32(1)) * (rest != 0)
        rest ^= low
    return table.reshape(-1)


@lru_cache(maxsize=32)
def _tables(pack: int, strength: tuple[int, ...], trump: int, card_points: tuple[int, ...]) -> _Tables:
    width, shift = (8, 3) if pack == 32 else (16, 4)
    dtype: type[np.unsignedinteger[Any]] = np.uint32 if width == 8 else np.uint64
    suit_mask = (1 << (8 if width == 8 else 13)) - 1
    to_index = _position_to_index(width)
    positions = 4 * width
    lead_power = np.full(positions, -1, dtype=np.int8)
    power = np.full(4 * positions, -1, dtype=np.int8)
    points = np.zeros(positions, dtype=np.int16)
    for pos, index in enumerate(to_index):
        if index < 0:
            continue
        suit = pos >> shift
        bonus = 64 if suit == trump else 0
        lead_power[pos] = bonus + strength[index]
        points[pos] = card_points[index]
        for led in range(4):
            if suit in (trump, led):
                power[led * positions + pos] = bonus + strength[index]
    led_base = np.array([(pos >> shift) * positions for pos in range(positions)], dtype=np.intp)
    led_mask = np.array([suit_mask << (pos >> shift) * width for pos in range(positions)], dtype=dtype)
    return _Tables(width, dtype, lead_power, power, led_base, led_mask, points)


def _widen(narrow: Array, pack: int) -> Array:
    """Narrow card masks (``Card.index`` bits) as hands ``width`` bits per suit (see the module doc)."""
    if pack == 32:
        return narrow.astype(np.uint32)
    m = narrow.astype(np.uint64)
    out = np.zeros_like(m)
    for suit in range(4):
        high = (m >> np.uint64(8 * suit)) & np.uint64(0xFF)
        low = (m >> np.uint64(32 + 5 * suit)) & np.uint64(0x1F)
        out |= (high << np.uint64(16 * suit + 5)) | (low << np.uint64(16 * suit))
    return out


# -- input checks -----------------------------------------------------------------------------


def _check_hands(playout: Playout, hands: object) -> Array:
    """``hands`` as a (B, players) uint64 array of narrow masks, each row a deal of ``playout``'s cards."""
    n = playout.rules.players
    try:
        array = np.asarray(hands)
    except (ValueError, TypeError, OverflowError) as exc:
        raise BatchError(f"hands must be a (deals, {n}) array of card masks: {exc}") from None
    if array.ndim != 2 or array.shape[1] != n or array.shape[0] == 0:
        raise BatchError(f"hands must be a (deals, {n}) array of card masks, got shape {array.shape!r}")
    if array.dtype.kind not in "iu":
        raise BatchError(f"hands must hold integer card masks, got dtype {str(array.dtype)!r}")
    if array.dtype.kind == "i" and (array < 0).any():
        row = int(np.nonzero((array < 0).any(axis=1))[0][0])
        raise BatchError(f"hands row {row}: a card mask is negative: {array[row].tolist()!r}")
    masks = array.astype(np.uint64)
    over = masks >> np.uint64(52)
    if over.any():
        row = int(np.nonzero(over.any(axis=1))[0][0])
        raise BatchError(f"hands row {row}: a card mask has bits beyond the 52 cards: {array[row].tolist()!r}")
    expected = np.array([h.bit_count() for h in playout.hands], dtype=np.uint8)
    counts = np.bitwise_count(masks)
    wrong = counts != expected
    if wrong.any():
        row = int(np.nonzero(wrong.any(axis=1))[0][0])
        seat = int(np.nonzero(wrong[row])[0][0])
        raise BatchError(f"hands row {row}: seat {seat} holds {int(counts[row, seat])} cards, this position needs {int(expected[seat])}")
    union = masks[:, 0].copy()
    for seat in range(1, n):
        union |= masks[:, seat]
    total = 0
    for h in playout.hands:
        total |= h
    # Each seat holds the right number of cards: they are disjoint when the union holds them all.
    overlap = np.bitwise_count(union) != total.bit_count()
    if overlap.any():
        row = int(np.nonzero(overlap)[0][0])
        raise BatchError(f"hands row {row}: a card is dealt to two seats: {masks[row].tolist()!r}")
    other = union != np.uint64(total)
    if other.any():
        row = int(np.nonzero(other)[0][0])
        raise BatchError(
            f"hands row {row}: the cards differ from this position's cards (expected mask {total:#x}, got {int(union[row]):#x})"
        )
    return masks


def _check_uniforms(uniforms: object, deals: int, plays: int) -> npt.NDArray[np.float64]:
    """``uniforms`` as a (plays, deals) float64 array (one row per card step), checked to lie in [0, 1)."""
    try:
        array = np.asarray(uniforms)
    except (ValueError, TypeError) as exc:
        raise BatchError(f"uniforms must be a ({deals}, {plays}) array of floats in [0, 1): {exc}") from None
    if array.shape != (deals, plays):
        raise BatchError(f"uniforms must have shape ({deals}, {plays}) (deals, cards left to play), got {array.shape!r}")
    if array.dtype != np.float64:
        raise BatchError(f"uniforms must be float64, got dtype {str(array.dtype)!r}")
    bad = ~((array >= 0.0) & (array < 1.0))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise BatchError(f"uniforms row {row}: value {float(array[row, col])!r} at step {col} is not in [0, 1)")
    return np.ascontiguousarray(array.T)


# -- the engine -------------------------------------------------------------------------------


POLICIES: Final = ("random", "duck")
"""The play policies of :func:`run_batch`: uniform random legal cards, or trick avoidance (:mod:`polignac.batch_duck`)."""


def run_batch(
    playout: Playout,
    hands: npt.ArrayLike,
    uniforms: npt.ArrayLike | None = None,
    rng: np.random.Generator | None = None,
    policy: str = "random",
) -> Int64Array:
    """Play out every row of ``hands`` from ``playout``'s position; see :meth:`Playout.run_batch`."""
    if policy not in POLICIES:
        raise BatchError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    masks = _check_hands(playout, hands)
    deals = masks.shape[0]
    plays = sum(h.bit_count() for h in playout.hands)
    if uniforms is None:
        if rng is None:
            rng = np.random.default_rng(random.getrandbits(128))
        elif not isinstance(rng, np.random.Generator):
            raise BatchError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        steps: Iterable[npt.NDArray[np.float64]] = _draws(rng, plays, deals)
    else:
        steps = _check_uniforms(uniforms, deals, plays)
    duck = None
    if policy == "duck":
        rules = playout.rules
        t = _tables(rules.pack, rules.strength, playout.trump, rules.card_points)
        tables = duck_tables(rules.pack, rules.strength, rules.card_points)
        duck = DuckPolicy(tables, t.width, t.dtype, playout.trump, _kth16())
    cards, won, first, last = _play(playout, _widen(masks, playout.rules.pack), steps, duck)
    return _score(playout, cards, won, first, last)


def _draws(rng: np.random.Generator, plays: int, deals: int) -> Iterator[npt.NDArray[np.float64]]:
    """``rng.random((plays, deals))`` row by row (the same floats), into one buffer that stays in cache."""
    row = np.empty(deals, dtype=np.float64)
    for _ in range(plays):
        rng.random(out=row)
        yield row


def _play(
    playout: Playout, hands: Array, steps: Iterable[npt.NDArray[np.float64]], duck: DuckPolicy | None = None
) -> tuple[Int64Array, Int64Array, Array, Array]:
    """The engine: plays ``hands`` (B, players, wide) with ``steps``, one row of B uniforms per card.

    With ``duck``, that policy chooses each card from the hand and the trick; otherwise a
    uniform random legal card is played, as follows.
    Returns each deal's card points and tricks taken by seat (B, players), and the seats that
    took the first and the last trick (B,).  Each step plays one card in every deal.  The
    legal cards are the hand's cards of the suit led, or the whole hand; the ``r``-th of them
    is found by halving (the half holding it, by counting set bits) down to 16 bits, then a
    table look-up.  Everything is branch-free arithmetic on small integers and ``take`` from
    small tables: numpy's masked selections (``where``) stall on random masks, and fancy
    indexing is slower than ``take``.  Seats are positions in a trick: the seat at position
    ``i`` of a trick led from seat position ``lead`` is ``seat_at[lead + i]``.
    """
    rules = playout.rules
    t = _tables(rules.pack, rules.strength, playout.trump, rules.card_points)
    n = rules.players
    k = len(playout.seats)
    deals = hands.shape[0]
    dtype = t.dtype
    halves = (16,) if t.width == 8 else (32, 16)
    low_half = {size: dtype((1 << size) - 1) for size in halves}
    everything = dtype((1 << (4 * t.width)) - 1)
    kth = _kth16()
    power, lead_power, led_base, led_mask, card_points = t.power, t.lead_power, t.led_base, t.led_mask, t.card_points
    with_points = bool(rules.penalty_mask)

    seats = np.array(playout.seats, dtype=np.intp)
    position = {seat: i for i, seat in enumerate(playout.seats)}
    seat_at = np.concatenate([seats, seats])  # seat_at[lead + i], lead < k, i < k
    wrap = np.concatenate([np.arange(k), np.arange(k)]).astype(np.intp)

    flat = np.ascontiguousarray(hands).reshape(-1)
    base = np.arange(deals, dtype=np.intp) * n
    # Who took each trick of the rest of the hand, and its card points: summed by seat at the end.
    winner_of = np.zeros((playout.tricks_left, deals), dtype=np.uint8)
    points_of = np.zeros((playout.tricks_left, deals), dtype=np.int16)
    trick = 0

    trick_pos = playout.trick_len
    lead_at = (position[playout.to_act] - trick_pos) % k
    lead = np.full(deals, lead_at, dtype=np.intp)
    trick_points = np.full(deals, sum(rules.card_points[c] for c in range(52) if playout.trick_mask >> c & 1), dtype=np.int16)
    led_pos = playout.led * t.width  # a position in the suit led, for the look-ups by led card
    current_led_mask = np.full(deals, led_mask[led_pos], dtype=dtype)
    current_led_base = np.full(deals, led_base[led_pos], dtype=np.intp)
    best = np.full(deals, playout.best_strength, dtype=np.int8)
    best_at = np.full(deals, (position.get(playout.best_seat, lead_at) - lead_at) % k, dtype=np.uint8)
    last_winner = np.full(deals, playout.best_seat, dtype=np.intp)
    first_winner = np.full(deals, playout.first_winner, dtype=np.intp)
    first_done = playout.first_winner >= 0

    idx = np.empty(deals, dtype=np.intp)
    legal = np.empty(deals, dtype=dtype)
    void_hand = np.empty(deals, dtype=dtype)
    scaled = np.empty(deals, dtype=np.float64)
    remaining = np.full(deals, everything, dtype=dtype)  # the cards not played yet: hands stay as dealt
    one = dtype(1)
    led_suit = np.full(deals, max(playout.led, 0), dtype=np.intp)  # for the duck policy
    for u in steps:
        np.add(base, seat_at.take(lead + trick_pos), out=idx)
        h = flat.take(idx)
        h &= remaining
        if duck is not None:
            small = duck.choose(h, u, trick_pos, led_suit, best)
        else:
            if trick_pos:
                # The cards of the suit led, or the whole hand when it has none.
                np.bitwise_and(h, current_led_mask, out=legal)
                np.multiply(h, legal == 0, out=void_hand)
                legal |= void_hand
            else:
                np.copyto(legal, h)
            np.multiply(u, np.bitwise_count(legal), out=scaled)
            r = scaled.astype(np.uint8)
            x = legal
            offset: Array | None = None
            for size in halves:
                below = np.bitwise_count(x & low_half[size])
                upper = (r >= below).view(np.uint8)
                r -= below * upper
                upper <<= size.bit_length() - 1
                x = x >> upper
                offset = upper if offset is None else offset + upper
            key = x & dtype(0xFFFF)
            key <<= dtype(4)
            key |= r
            small = kth.take(key)
            small += offset
        remaining ^= one << small
        card = small.astype(np.intp)  # take() is quicker with intp indices
        if with_points:
            trick_points += card_points.take(card)
        if trick_pos == 0:
            current_led_mask = led_mask.take(card)
            current_led_base = led_base.take(card)
            best = lead_power.take(card)
            best_at = np.zeros(deals, dtype=np.uint8)
            if duck is not None:
                led_suit = card // t.width
        else:
            p = power.take(current_led_base + card)
            # Positions in a trick only grow, so the latest better card has the largest position.
            np.maximum(best_at, (p > best).view(np.uint8) * np.uint8(trick_pos), out=best_at)
            np.maximum(best, p, out=best)
        trick_pos += 1
        if trick_pos == k:
            lead = wrap.take(lead + best_at)
            last_winner = seats.take(lead)
            winner_of[trick] = last_winner
            if with_points:
                points_of[trick] = trick_points
                trick_points[:] = 0
            if not first_done:
                first_winner, first_done = last_winner, True
            trick += 1
            trick_pos = 0

    # The tricks taken before this position count too.
    cards = np.zeros((deals, n), dtype=np.int64)
    won = np.zeros((deals, n), dtype=np.int64)
    for seat in playout.seats:
        took = winner_of == seat
        won[:, seat] = playout.won[seat] + took.sum(axis=0)
        before = sum(rules.card_points[c] for c in range(52) if playout.taken[seat] >> c & 1)
        cards[:, seat] = before + (points_of * took).sum(axis=0, dtype=np.int64) if with_points else before
    return cards, won, first_winner, last_winner


# -- scoring ----------------------------------------------------------------------------------


def _score(playout: Playout, cards: Int64Array, won: Int64Array, first: Array, last: Array) -> Int64Array:
    """``polignac.scoring.score_hand`` for every deal at once: (B, players) scores."""
    rules = playout.rules
    deals, n = won.shape
    seats = playout.seats
    start = seats.index(playout.eldest)
    order = np.array(seats[start:] + seats[:start], dtype=np.intp)
    k = len(order)
    against = rules.against
    base = np.arange(deals, dtype=np.intp) * n

    # Columns in turn order from eldest hand, as score_hand walks the seats.
    c = cards[:, order]
    w = won[:, order]
    first_last = np.zeros(deals * n, dtype=np.int64)
    first_last[base + first] += rules.first_trick_points
    first_last[base + last] += rules.last_trick_points
    fl = first_last.reshape(deals, n)[:, order]
    tp = rules.trick_points * w
    all_tricks = w.sum(axis=1, keepdims=True)

    if rules.hand_score is HandScore.PLACE:
        # Fewest points first; on equal points a seat without a trick, then the one nearer eldest hand.
        key = ((c + fl + tp) * 2 + (w > 0)) * k + np.arange(k)
        ranked = np.argsort(key, axis=1)
        result = np.empty((deals, k), dtype=np.int64)
        np.put_along_axis(result, ranked, np.broadcast_to(np.array(rules.place_table(k), dtype=np.int64), (deals, k)), axis=1)
        if rules.big_take_points:
            taker, other = rules.big_take_scores
            big: Array = c >= rules.big_take_points
            first_big: Array = np.argmax(big, axis=1)
            any_big: Array = np.any(big, axis=1, keepdims=True)
            result = np.where(any_big, np.where(np.arange(k) == first_big[:, None], taker, other), result)
        if rules.every_trick_scores:
            taker, other = rules.every_trick_scores
            everything: Array = w == all_tricks
            any_every: Array = np.any(everything, axis=1, keepdims=True)
            result = np.where(any_every, np.where(everything, taker, other), result)
    else:
        result = tp + against * (c + fl)
        contract = _CONTRACTS[playout.contract]
        if contract is not Contract.PASS and playout.declarer >= 0:
            at = int(np.nonzero(order == playout.declarer)[0][0])
            made: Array = w[:, at : at + 1] == all_tricks
            made_row = np.full(k, against * rules.contract_points, dtype=np.int64)
            made_row[at] = against * rules.general_points if contract is Contract.GENERAL else 0
            result[:, at] += against * rules.contract_points
            result = np.where(made, made_row, result)
    scores = np.zeros((deals, n), dtype=np.int64)
    scores[:, order] = result + against * np.array(playout.penalties, dtype=np.int64)[order]
    return scores


# -- determinizations -------------------------------------------------------------------------


def sample_hands_many(view: PlayerView, rng: random.Random | np.random.Generator, count: int) -> npt.NDArray[np.uint64]:
    """``count`` deals of ``view``'s unseen cards at once, as a (count, players) array of card masks.

    The rows are hands for :meth:`Playout.run_batch` of ``Playout.from_view(view, ...)``: each
    other seat gets as many cards as it holds, and no card of a suit it is known to lack.
    Each row is dealt as :func:`polignac.playout.sample_hands` deals, all rows at once:
    the unseen cards, the most constrained suits first, each go to a random place among the
    seats that may hold them (uniform deals when no void is known).  The rare rows where
    that greedy deal paints itself into a corner are dealt by ``sample_hands`` itself.
    ``rng`` is a ``random.Random`` or a ``numpy.random.Generator``.
    """
    if type(count) is not int or count < 1:
        raise BatchError(f"count must be a positive int, got {count!r}")
    if isinstance(rng, random.Random):
        scalar, generator = rng, np.random.default_rng(rng.getrandbits(128))
    elif isinstance(rng, np.random.Generator):
        scalar, generator = random.Random(int(rng.integers(2**63))), rng
    else:
        raise BatchError(f"rng must be a random.Random or a numpy.random.Generator, got {type(rng).__name__}")
    others = [s for s in view.seats if s != view.seat]
    voids = view.known_voids()
    unseen = cards_in(view.unseen_mask)
    places = sum(view.hand_size(s) for s in others)
    if len(unseen) != places:
        raise PolignacError(f"view is inconsistent: {len(unseen)} unseen cards for {places} places")
    holders = {suit: [s for s in others if suit not in voids[s]] for suit in {c.suit for c in unseen}}
    scalar.shuffle(unseen)
    unseen.sort(key=lambda c: len(holders[c.suit]))  # stable: random within equal constraint
    hands = np.zeros((view.rules.players, count), dtype=np.uint64)
    hands[view.seat] = view.hand_mask
    room = np.zeros((view.rules.players, count), dtype=np.int32)
    for seat in others:
        room[seat] = view.hand_size(seat)
    stuck = np.zeros(count, dtype=np.bool_)
    for card in unseen:
        eligible = holders[card.suit]
        free = sum((room[s] for s in eligible), np.zeros(count, dtype=np.int32))
        stuck |= free == 0
        pick = (generator.random(count) * free).astype(np.int32)
        bit = np.uint64(card.bit)
        for seat in eligible:
            here = (pick >= 0) & (pick < room[seat])
            hands[seat] |= bit * here
            pick -= room[seat]
            room[seat] -= here
    out = np.ascontiguousarray(hands.T)
    for row in np.nonzero(stuck)[0]:
        out[row] = sample_hands(view, scalar)
    return out
