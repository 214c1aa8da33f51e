"""The deal: a version-stable shuffle derived from (match seed, hand number), and the packets.

The generator, ``polignac-deal-v1``, is specified here so that any implementation can
reproduce a deal bit for bit:

1. Random words.  Block ``b`` (0, 1, 2, ...) of hand ``h`` is
   ``SHA-256(b"polignac-deal-v1" + seed.to_bytes(8, "big") + h.to_bytes(4, "big") + b.to_bytes(4, "big"))``;
   its 32 bytes are eight big-endian unsigned 32-bit words, used in order.
2. Uniform integers.  ``below(m)`` draws words until one is smaller than
   ``2**32 - 2**32 % m`` and returns it modulo ``m`` (rejection sampling: no bias).
3. Shuffle.  The pack starts in natural order: suits S H D C, and within a suit the
   ranks upward (7 8 9 T J Q K A in the 32-card pack, the removed sevens left out; 2 3 4 5
   6 7 8 9 T J Q K A in the 52-card pack), and is Fisher-Yates shuffled: for ``i`` from
   ``len - 1`` down to 1, swap positions ``i`` and ``below(i + 1)``.  Position 0 is the top.
4. Deal.  From the top, each player in turn from eldest hand (the dealer's left) receives
   a packet, for each packet size of :func:`polignac.rules.packet_sizes` (one card at a
   time in the 52-card pack).  Where the ruleset turns a card for trumps, the one card
   left at the bottom of the pack is turned.

The seed is an integer in ``0 .. 2**64 - 1``; hands are numbered from 1, tie-break hands
continuing the count.  Python's ``random`` module is not used because its algorithms may
change between versions.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Final

from polignac.cards import cards_in
from polignac.errors import PolignacError

__all__ = ["GENERATOR", "MAX_HAND", "MAX_SEED", "deal_hands", "shuffled_pack"]

GENERATOR: Final = "polignac-deal-v1"
MAX_SEED: Final = 2**64 - 1
MAX_HAND: Final = 2**20
"""The highest hand number a match may start at (far beyond any match's length, within the stream's 4 bytes)."""
_PREFIX: Final = GENERATOR.encode()
_EIGHT_WORDS: Final = struct.Struct(">8I")
_TWO_32: Final = 2**32


class _WordStream:
    """The 32-bit words of one hand's random stream (step 1 above)."""

    def __init__(self, seed: int, hand_number: int) -> None:
        self._key = _PREFIX + seed.to_bytes(8, "big") + hand_number.to_bytes(4, "big")
        self._block = 0
        self.words: list[int] = []
        self.extend(5)  # 40 words: enough for a 32-card shuffle unless rejections are unlucky

    def extend(self, blocks: int = 1) -> None:
        """Append the words of the next ``blocks`` blocks."""
        for _ in range(blocks):
            digest = hashlib.sha256(self._key + self._block.to_bytes(4, "big")).digest()
            self._block += 1
            self.words.extend(_EIGHT_WORDS.unpack(digest))


def check_seed(seed: object) -> int:
    """Return ``seed`` if it is an int in 0..2**64-1, else raise a clear error."""
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise PolignacError(f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
    return seed


def shuffled_pack(seed: int, hand_number: int, deck: int) -> list[int]:
    """The card indices of ``deck`` (a mask) in shuffled order, top first (steps 1-3)."""
    check_seed(seed)
    if type(hand_number) is not int or not 1 <= hand_number < 2**32:
        raise PolignacError(f"hand number must be an integer in 1..{2**32 - 1}, got {hand_number!r}")
    pack = [c.index for c in cards_in(deck)]
    stream = _WordStream(seed, hand_number)
    words = stream.words
    pos = 0
    for i in range(len(pack) - 1, 0, -1):
        m = i + 1
        limit = _TWO_32 - _TWO_32 % m
        while True:
            if pos == len(words):
                stream.extend()
            word = words[pos]
            pos += 1
            if word < limit:
                break
        j = word % m
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def deal_hands(pack: Sequence[int], order: Sequence[int], packets: Sequence[int]) -> dict[int, int]:
    """Deal ``pack`` (top first) in ``packets`` to the seats of ``order`` (eldest first), as masks."""
    hands = dict.fromkeys(order, 0)
    pos = 0
    for size in packets:
        for seat in order:
            for index in pack[pos : pos + size]:
                hands[seat] |= 1 << index
            pos += size
    if pos != len(pack):
        raise PolignacError(f"packets {tuple(packets)} for {len(order)} players do not use the {len(pack)} cards")
    return hands
