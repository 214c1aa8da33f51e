"""The ``duck`` policy of :meth:`polignac.playout.Playout.run_batch`: trick avoidance, array-at-a-time.

Uniform random playouts misjudge the games where taking costs (a seat plays its Ace on a
trick it could have ducked as often as its Seven); this policy plays as a careful player
would, with a little noise so that the deals' outcomes spread.  It mirrors
:func:`polignac.bots.search.duck_rollout`, one float per card (docs/playouts.md):

- ``u < NOISE``: the ``min(int(u / NOISE * n), n - 1)``-th of the ``n`` legal cards (suit
  order S H D C, ranks up, as :meth:`Playout.run` numbers them);
- leading: with ``v = (u - NOISE) / (1 - NOISE)``, the ``min(int(v * n), n - 1)``-th card of
  the hand picks a suit; the hand's weakest card of that suit is led;
- following suit with no trump on the trick: the losing card (weaker than the best card of
  the trick) with the most points, ties to the strongest; when none loses, the card with
  the fewest points, ties to the weakest;
- following suit with a trump on the trick (or trumps led): the card with the fewest points,
  ties to the weakest;
- void: the card with the most points, ties to the strongest, then to the first suit; a
  trump only when the hand holds nothing else.

Every choice is a look-up in small tables indexed by a suit's bit pattern, so a step costs a
few numpy operations whatever the batch size.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from polignac.cards import card_index

__all__ = ["NOISE", "DuckPolicy", "DuckTables", "duck_tables"]

NOISE: Final = 0.1
"""The share of uniformly random cards in the ``duck`` policy."""
_NO_LOSER: Final = 64  # a best power from 64 up is a trump: no card of the suit led loses to it


@dataclass(frozen=True, slots=True)
class DuckTables:
    """Per-suit look-ups by suit pattern (``suit * patterns + pattern``); positions are within the suit."""

    bits: int  # cards in a suit of the pack
    weakest: npt.NDArray[np.intp]  # the weakest card of the pattern
    most: npt.NDArray[np.intp]  # the card with most points, ties to the strongest
    most_key: npt.NDArray[np.int16]  # its points * 64 + strength; -1 for an empty pattern
    least: npt.NDArray[np.intp]  # the card with fewest points, ties to the weakest
    below: npt.NDArray[np.intp]  # [suit * 65 + power]: the pattern of the suit's cards weaker than that power


@lru_cache(maxsize=32)
def duck_tables(pack: int, strength: tuple[int, ...], card_points: tuple[int, ...]) -> DuckTables:
    """The ``duck`` policy's tables for a pack (32 or 52 cards), built once per ruleset."""
    bits, low = (8, 7) if pack == 32 else (13, 2)
    patterns = np.arange(1 << bits, dtype=np.intp)
    weakest = np.zeros(4 << bits, dtype=np.intp)
    most = np.zeros(4 << bits, dtype=np.intp)
    most_key = np.full(4 << bits, -1, dtype=np.int16)
    least = np.zeros(4 << bits, dtype=np.intp)
    below = np.zeros(4 * (_NO_LOSER + 1), dtype=np.intp)
    for suit in range(4):
        at = slice(suit << bits, (suit + 1) << bits)
        weak_s = np.full(1 << bits, 1 << 10, dtype=np.int32)
        least_key = np.full(1 << bits, 1 << 20, dtype=np.int32)
        for j in range(bits):
            index = card_index(suit, low + j)
            s, key = strength[index], card_points[index] * 64 + strength[index]
            has = (patterns >> j & 1).astype(np.bool_)
            better = has & (s < weak_s)
            weakest[at][better], weak_s[better] = j, s
            better = has & (key > most_key[at])
            most[at][better], most_key[at][better] = j, key
            better = has & (key < least_key)
            least[at][better], least_key[better] = j, key
            for power in range(s + 1, _NO_LOSER):
                below[suit * (_NO_LOSER + 1) + power] |= 1 << j
    return DuckTables(bits, weakest, most, most_key, least, below)


def _pick(
    x: npt.NDArray[Any], r: npt.NDArray[np.uint8], halves: tuple[int, ...], dtype: type[np.unsignedinteger[Any]], kth: npt.NDArray[np.uint8]
) -> npt.NDArray[np.uint8]:
    """The position of the ``r``-th set bit of each ``x`` (by halving down to 16 bits, then a table)."""
    offset = np.zeros(len(x), dtype=np.uint8)
    for size in halves:
        below = np.bitwise_count(x & dtype((1 << size) - 1))
        upper = (r >= below).view(np.uint8)
        r = r - below * upper
        upper <<= size.bit_length() - 1
        x = x >> upper
        offset += upper
    key = (x & dtype(0xFFFF)) << dtype(4)
    key |= r
    small: npt.NDArray[np.uint8] = kth.take(key) + offset
    return small


@dataclass(frozen=True, slots=True)
class DuckPolicy:
    """The ``duck`` choice of one card in every deal, for a pack laid out ``width`` bits per suit."""

    tables: DuckTables
    width: int
    dtype: type[np.unsignedinteger[Any]]
    trump: int  # -1 for none
    kth: npt.NDArray[np.uint8]

    def choose(
        self, h: npt.NDArray[Any], u: npt.NDArray[np.float64], trick_pos: int, led: npt.NDArray[np.intp], best: npt.NDArray[np.int8]
    ) -> npt.NDArray[np.uint8]:
        """The position of the card each hand ``h`` plays, with ``u`` its floats (see the module doc)."""
        t, dtype, width = self.tables, self.dtype, self.width
        halves = (16,) if width == 8 else (32, 16)
        suit_mask = dtype((1 << t.bits) - 1)
        patterns = 1 << t.bits
        noise = u < NOISE
        if trick_pos == 0:
            count = np.bitwise_count(h)
            scaled = np.where(noise, u / NOISE, (u - NOISE) / (1 - NOISE)) * count
            r = np.minimum(scaled.astype(np.uint8), count - np.uint8(1))
            card = _pick(h, r, halves, dtype, self.kth)
            suit = (card // width).astype(np.intp)
            pattern = ((h >> (suit * width).astype(dtype)) & suit_mask).astype(np.intp)
            low = t.weakest.take(suit * patterns + pattern) + suit * width
            return np.where(noise, card, low.astype(np.uint8))
        shift = (led * width).astype(dtype)
        follow = ((h >> shift) & suit_mask).astype(np.intp)
        void = follow == 0
        legal = np.where(void, h, follow.astype(dtype) << shift)
        count = np.bitwise_count(legal)
        r = np.minimum((u / NOISE * count).astype(np.uint8), count - np.uint8(1))
        random_card = _pick(legal, r, halves, dtype, self.kth)
        # Following suit: a loser with most points, else the cheapest, weakest card.
        loser = follow & t.below.take(led * (_NO_LOSER + 1) + np.minimum(best, _NO_LOSER).astype(np.intp))
        base = led * patterns
        follow_card = np.where(loser != 0, t.most.take(base + loser), t.least.take(base + follow)) + led * width
        # Void: the card with most points, then the strongest; a trump only when nothing else is left.
        rest = h
        if self.trump >= 0:
            rest = h & ~(suit_mask << dtype(self.trump * width))
            rest = np.where(rest == 0, h, rest)
        void_key = np.full(len(h), -1, dtype=np.int16)
        void_card = np.zeros(len(h), dtype=np.intp)
        for s in range(4):
            pattern = ((rest >> dtype(s * width)) & suit_mask).astype(np.intp) + s * patterns
            key = t.most_key.take(pattern)
            better = key > void_key
            void_card = np.where(better, t.most.take(pattern) + s * width, void_card)
            np.maximum(void_key, key, out=void_key)
        chosen = np.where(void, void_card, follow_card).astype(np.uint8)
        return np.where(noise, random_card, chosen)
