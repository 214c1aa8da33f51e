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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from polignac.cards import card_index
from polignac.errors import BatchError
from polignac.playout import _CONTRACTS, Playout, sample_hands
from polignac.rules import HandScore, Ruleset
from polignac.values import Contract

if TYPE_CHECKING:
    from polignac.view import PlayerView

__all__ = ["run_batch", "sample_hands_many", "widen_hands"]

Int64Array = npt.NDArray[np.int64]
Array = npt.NDArray[Any]

_NARROW_LIMIT: Final = 1 << 52
_PIQUET_RANKS: Final = range(7, 15)
_LOW_RANKS: Final = range(2, 7)


@dataclass(frozen=True, slots=True)
class _Tables:
    """Look-up tables for one ruleset's play, built once per (pack, trick order, trump, card points)."""

    width: int  # bits per suit in a hand
    shift: int  # log2(width)
    used: int  # bits of a suit's field that hold cards (8 or 13)
    dtype: type[np.unsignedinteger[Any]]
    suit_mask: int
    kth: npt.NDArray[np.uint8]  # [(pattern << 4) | r]: the position of pattern's r-th set bit
    lead_power: npt.NDArray[np.int8]  # [position]: the card's power when it leads the trick
    power: npt.NDArray[np.int8]  # [(led << (shift + 2)) | position]: its power with ``led`` led
    points: npt.NDArray[np.int64]  # [(suit << used) | pattern]: card points of those cards of that suit


def _position_to_index(width: int) -> list[int]:
    """Card index (``Card.index``) at each bit position of a hand ``width`` bits per suit; -1 for none."""
    out = [-1] * (4 * width)
    for suit in range(4):
        for rank in _PIQUET_RANKS if width == 8 else range(2, 15):
            out[suit * width + rank - (7 if width == 8 else 2)] = card_index(suit, rank)
    return out


@lru_cache(maxsize=32)
def _tables(pack: int, strength: tuple[int, ...], trump: int, card_points: tuple[int, ...]) -> _Tables:
    width, shift, used = (8, 3, 8) if pack == 32 else (16, 4, 13)
    dtype: type[np.unsignedinteger[Any]] = np.uint32 if width == 8 else np.uint64
    kth = np.zeros((1 << used) * 16, dtype=np.uint8)
    for pattern in range(1 << used):
        for r, bit in enumerate(b for b in range(used) if pattern >> b & 1):
            kth[pattern << 4 | r] = bit
    to_index = _position_to_index(width)
    lead_power = np.full(4 * width, -1, dtype=np.int8)
    power = np.full(4 * 4 * width, -1, dtype=np.int8)
    for pos, index in enumerate(to_index):
        if index < 0:
            continue
        suit = pos >> shift
        bonus = 64 if suit == trump else 0
        lead_power[pos] = bonus + strength[index]
        for led in range(4):
            if suit in (trump, led):
                power[led << (shift + 2) | pos] = bonus + strength[index]
    points = np.zeros(4 << used, dtype=np.int64)
    for suit in range(4):
        for pattern in range(1 << used):
            points[suit << used | pattern] = sum(card_points[to_index[suit * width + b]] for b in range(used) if pattern >> b & 1)
    return _Tables(width, shift, used, dtype, (1 << used) - 1, kth, lead_power, power, points)


def _tables_for(rules: Ruleset, trump: int) -> _Tables:
    return _tables(rules.pack, rules.strength, trump, rules.card_points)


def widen_hands(narrow: Array, pack: int) -> Array:
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
    over = masks >= np.uint64(_NARROW_LIMIT)
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
    union = np.bitwise_or.reduce(masks, axis=1)
    total = 0
    for h in playout.hands:
        total |= h
    overlap = np.bitwise_count(union) != counts.sum(axis=1, dtype=np.int64)
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


def run_batch(playout: Playout, hands: object, uniforms: object = None, rng: np.random.Generator | None = None) -> Int64Array:
    """Play out every row of ``hands`` from ``playout``'s position; see :meth:`Playout.run_batch`."""
    masks = _check_hands(playout, hands)
    deals = masks.shape[0]
    plays = sum(h.bit_count() for h in playout.hands)
    if uniforms is None:
        if rng is None:
            rng = np.random.default_rng(random.getrandbits(128))
        elif not isinstance(rng, np.random.Generator):
            raise BatchError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        steps = rng.random((plays, deals))
    else:
        steps = _check_uniforms(uniforms, deals, plays)
    return _play(playout, widen_hands(masks, playout.rules.pack), steps)


def _play(playout: Playout, hands: Array, steps: npt.NDArray[np.float64]) -> Int64Array:
    """The engine: ``hands`` (B, players) wide, ``steps`` (plays, B) uniforms; returns (B, players) scores."""
    rules = playout.rules
    t = _tables_for(rules, playout.trump)
    n = rules.players
    k = len(playout.seats)
    deals = hands.shape[0]
    dtype = t.dtype
    one = dtype(1)
    shift = t.shift
    width = t.width
    suit_mask = dtype(t.suit_mask)

    flat = np.ascontiguousarray(hands).reshape(-1)
    base = np.arange(deals, dtype=np.intp) * n
    next_seat = np.array(playout.next_seat, dtype=np.intp)
    power = t.power
    lead_power = t.lead_power
    taken = np.zeros(deals * n, dtype=dtype)
    won = np.zeros(deals * n, dtype=np.int64)

    to_act = np.full(deals, playout.to_act, dtype=np.intp)
    trick_pos = playout.trick_len
    trick_mask = np.full(deals, widen_hands(np.array(playout.trick_mask, dtype=np.uint64), rules.pack), dtype=dtype)
    led = np.full(deals, playout.led, dtype=np.intp)
    best = np.full(deals, playout.best_strength, dtype=np.int8)
    best_seat = np.full(deals, playout.best_seat, dtype=np.intp)
    first_winner: Array | int = playout.first_winner
    suit_shifts = np.array([s * width for s in range(4)], dtype=dtype)

    for u in steps:
        idx = base + to_act
        h = flat[idx]
        if trick_pos:
            follow = h & (suit_mask << (led.astype(dtype) << dtype(shift)))
            legal = np.where(follow != 0, follow, h)
        else:
            legal = h
        count = np.bitwise_count(legal)
        r = (u * count).astype(np.int64)
        card = _kth_card(legal, r, t, suit_shifts)
        bit = one << card.astype(dtype)
        flat[idx] = h ^ bit
        trick_mask |= bit
        if trick_pos == 0:
            led = card >> shift
            best = lead_power[card]
            best_seat = to_act
        else:
            p = power[(led << (shift + 2)) | card]
            better = p > best
            best = np.where(better, p, best)
            best_seat = np.where(better, to_act, best_seat)
        trick_pos += 1
        if trick_pos == k:
            widx = base + best_seat
            taken[widx] |= trick_mask
            won[widx] += 1
            if isinstance(first_winner, int) and first_winner < 0:
                first_winner = best_seat.copy()
            trick_mask = np.zeros(deals, dtype=dtype)
            trick_pos = 0
            to_act = best_seat
        else:
            to_act = next_seat[to_act]

    # The tricks taken before this position count too.
    before = widen_hands(np.array(playout.taken, dtype=np.uint64), rules.pack)
    taken_all = taken.reshape(deals, n) | before
    won_all = won.reshape(deals, n) + np.array(playout.won, dtype=np.int64)
    first = np.full(deals, first_winner, dtype=np.intp) if isinstance(first_winner, int) else first_winner
    return _score(playout, t, taken_all, won_all, first, best_seat)


def _kth_card(legal: Array, r: Array, t: _Tables, suit_shifts: Array) -> Array:
    """The position of the ``r``-th set bit of each ``legal`` (ascending), by suit then within it."""
    fields = [(legal >> suit_shifts[s]) & t.dtype(t.suit_mask) for s in range(4)]
    counts = [np.bitwise_count(f).astype(np.int64) for f in fields]
    suit = np.zeros(legal.shape, dtype=np.int64)
    before = np.zeros(legal.shape, dtype=np.int64)
    acc = counts[0]
    for s in range(1, 4):
        past = r >= acc
        suit += past
        before = np.where(past, acc, before)
        acc = acc + counts[s]
    pattern = np.choose(suit, fields).astype(np.int64)
    rank = t.kth[(pattern << 4) | (r - before)].astype(np.int64)
    card: Array = (suit << t.shift) | rank
    return card


# -- scoring ----------------------------------------------------------------------------------


def _card_points(t: _Tables, taken: Array) -> Int64Array:
    total = np.zeros(taken.shape, dtype=np.int64)
    for suit in range(4):
        pattern = ((taken >> t.dtype(suit * t.width)) & t.dtype(t.suit_mask)).astype(np.int64)
        total += t.points[(suit << t.used) | pattern]
    return total


def _score(playout: Playout, t: _Tables, taken: Array, won: Int64Array, first: Array, last: Array) -> Int64Array:
    """``polignac.scoring.score_hand`` for every deal at once: (B, players) scores."""
    rules = playout.rules
    deals, n = won.shape
    seats = playout.seats
    start = seats.index(playout.eldest)
    order = np.array(seats[start:] + seats[:start], dtype=np.intp)
    k = len(order)
    against = rules.against
    rows = np.arange(deals)

    cards = _card_points(t, taken)
    trick_points = rules.trick_points * won
    first_last = np.zeros((deals, n), dtype=np.int64)
    np.add.at(first_last, (rows, first), rules.first_trick_points)
    np.add.at(first_last, (rows, last), rules.last_trick_points)
    penalties = np.array(playout.penalties, dtype=np.int64)
    scores = np.zeros((deals, n), dtype=np.int64)
    all_tricks = won.sum(axis=1)

    if rules.hand_score is HandScore.PLACE:
        w = won[:, order]
        c = cards[:, order]
        everything = w == all_tricks[:, None]
        big: Array = c >= rules.big_take_points if rules.big_take_points else np.zeros_like(everything)
        # Fewest points first; on equal points a seat without a trick, then the one nearer eldest hand.
        points = (c + first_last[:, order] + trick_points[:, order]).astype(np.int64)
        key = (points * 2 + (w > 0)) * k + np.arange(k)
        ranked = np.argsort(key, axis=1, kind="stable")
        table = np.array(rules.place_table(k), dtype=np.int64)
        placed = np.empty((deals, k), dtype=np.int64)
        np.put_along_axis(placed, ranked, np.broadcast_to(table, (deals, k)), axis=1)
        result = placed
        if rules.big_take_scores:
            taker, other = rules.big_take_scores
            first_big: Array = np.argmax(big, axis=1)
            by_big = np.where(np.arange(k) == first_big[:, None], taker, other)
            any_big: Array = np.any(big, axis=1, keepdims=True)
            result = np.where(any_big, by_big, result)
        if rules.every_trick_scores:
            taker, other = rules.every_trick_scores
            by_every = np.where(everything, taker, other)
            result = np.where(everything.any(axis=1)[:, None], by_every, result)
        scores[:, order] = result
    else:
        playing = scores[:, order]
        playing[:] = trick_points[:, order] + against * (cards[:, order] + first_last[:, order])
        contract = _CONTRACTS[playout.contract]
        declarer = playout.declarer
        if contract is not Contract.PASS and declarer >= 0:
            made = won[:, declarer] == all_tricks
            position = int(np.nonzero(order == declarer)[0][0])
            made_row = np.full(k, against * rules.contract_points, dtype=np.int64)
            made_row[position] = -against * rules.contract_points if contract is Contract.GENERAL else 0
            failed = playing.copy()
            failed[:, position] += against * rules.contract_points
            playing = np.where(made[:, None], made_row, failed)
        scores[:, order] = playing
    scores[:, order] += against * penalties[order]
    return scores


# -- determinizations -------------------------------------------------------------------------


def sample_hands_many(view: PlayerView, rng: random.Random, count: int) -> npt.NDArray[np.uint64]:
    """``count`` deals of ``view``'s unseen cards (:func:`polignac.playout.sample_hands` each), as a (count, players) array.

    The rows are hands for :meth:`Playout.run_batch` of ``Playout.from_view(view, ...)``.
    """
    if type(count) is not int or count < 1:
        raise BatchError(f"count must be a positive int, got {count!r}")
    rows: Sequence[list[int]] = [sample_hands(view, rng) for _ in range(count)]
    return np.array(rows, dtype=np.uint64)
