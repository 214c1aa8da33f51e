"""Cards of the 52-card pack (of which the 32-card Piquet pack is a part) and int-bitmask card sets.

A card is identified by an index: the 32 Piquet cards (ranks 7 to A) come first, as
``suit * 8 + (rank - 7)`` (0..31), then the low cards of the full pack (ranks 2 to 6) as
``32 + suit * 5 + (rank - 2)`` (32..51); suits are in the order S H D C.  The 32-card games
never see an index above 31, so their masks fit in 32 bits.  A set of cards is an ``int``
bitmask with bit ``index`` set for each card, which keeps the engine and the playout path
free of per-card objects in their inner loops.  :class:`Card` objects are interned: there
are exactly 52 of them, so ``Card.parse("JS") is Card.parse("J♠")``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final

from polignac.errors import CardParseError

__all__ = [
    "ALL_CARDS_MASK",
    "CARDS",
    "PIQUET_MASK",
    "PIQUET_RANKS",
    "SUIT_MASKS",
    "Card",
    "CardMask",
    "Rank",
    "Suit",
    "card_index",
    "cards_in",
    "mask_of",
    "parse_cards",
]

CardMask = int
"""A set of cards as a bitmask: bit ``card.index`` is set for each card in the set."""


class Suit(IntEnum):
    """The four suits, in the order S H D C used for card indices and tie-breaks."""

    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        """The suit's letter in the text form of a card: S, H, D or C."""
        return "SHDC"[self]

    @property
    def symbol(self) -> str:
        """The suit's symbol: ♠ ♥ ♦ ♣."""
        return "♠♥♦♣"[self]

    @property
    def is_red(self) -> bool:
        """Hearts and diamonds are red; spades and clubs are black."""
        return self in (Suit.HEARTS, Suit.DIAMONDS)


class Rank(IntEnum):
    """The thirteen ranks, valued in natural order 2..14 (not trick order: see ``Ruleset.trick_order``).

    The 32-card games use SEVEN to ACE; the 52-card games all thirteen.
    """

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def letter(self) -> str:
        """The rank's character in the text form of a card; ten is ``T``."""
        return "23456789TJQKA"[self - 2]

    @property
    def text(self) -> str:
        """The rank for people: ``10`` for ten, else its letter."""
        return "10" if self is Rank.TEN else self.letter

    @property
    def in_piquet(self) -> bool:
        """True for the ranks of the 32-card pack (7 to A)."""
        return self >= Rank.SEVEN


PIQUET_RANKS: Final = tuple(r for r in Rank if r.in_piquet)
"""The ranks of the 32-card pack, 7 up to A."""


def card_index(suit: int, rank: int) -> int:
    """The index of the card of ``suit`` and ``rank`` (see the module doc)."""
    if rank >= Rank.SEVEN:
        return suit * 8 + rank - 7
    return 32 + suit * 5 + rank - 2


_SUIT_BY_TEXT: Final = {
    **{s.letter: s for s in Suit},
    **{s.letter.lower(): s for s in Suit},
    **{s.symbol: s for s in Suit},
    # The white (outline) symbols are common in text too.
    "♤": Suit.SPADES,
    "♡": Suit.HEARTS,
    "♢": Suit.DIAMONDS,
    "♧": Suit.CLUBS,
}
_RANK_BY_TEXT: Final = {
    **{r.letter: r for r in Rank},
    **{r.letter.lower(): r for r in Rank},
    "10": Rank.TEN,
}


class Card:
    """One card: an interned, hashable value object with a text round trip.

    >>> Card.parse("TH")
    Card('TH')
    >>> str(Card.parse("10♥")), Card.parse("J♠").index
    ('TH', 4)
    """

    __slots__ = ("bit", "index", "rank", "suit")

    index: int
    suit: Suit
    rank: Rank
    bit: CardMask

    def __new__(cls, suit: Suit, rank: Rank) -> Card:
        """Return the interned card of ``suit`` and ``rank``."""
        return CARDS[card_index(Suit(suit), Rank(rank))]

    @classmethod
    def _make(cls, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "index", index)
        if index < 32:
            suit, rank = Suit(index >> 3), Rank(7 + (index & 7))
        else:
            suit, rank = Suit((index - 32) // 5), Rank(2 + (index - 32) % 5)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "bit", 1 << index)
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card.from_index, (self.index,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with ``index`` (see the module doc); raises ``CardParseError`` out of 0..51."""
        if type(index) is not int or not 0 <= index < 52:
            raise CardParseError(f"card index must be an int in 0..51, got {index!r}")
        return CARDS[index]

    @staticmethod
    def parse(text: str) -> Card:
        """Parse ``7S``, ``TH``, ``10H``, ``J♠``, ``2C`` (case and surrounding space ignored)."""
        if not isinstance(text, str):
            raise CardParseError(f"a card must be text such as 'JS', got {text!r}")
        card = _CARD_BY_TEXT.get(text)  # the canonical text, as the wire carries it
        if card is not None:
            return card
        body = text.strip()
        if len(body) >= 2:
            rank = _RANK_BY_TEXT.get(body[:-1])
            suit = _SUIT_BY_TEXT.get(body[-1])
            if rank is not None and suit is not None:
                return CARDS[card_index(suit, rank)]
        raise CardParseError(
            f"not a card: {text!r} (expected a rank 2 to 9, T/10, J, Q, K or A then a suit S H D C or ♠ ♥ ♦ ♣, for example 'JS' or '10♥')"
        )

    @staticmethod
    def from_wire(text: str) -> Card:
        """The card whose wire text is exactly ``text`` (``7S``, ``TH``, ``JS``, ``AC``, ``2C``).

        The wire is strict (docs/protocol.md): an uppercase rank letter then an uppercase
        suit letter, ten as ``T``, nothing around them; anything else raises
        ``CardParseError``.  :meth:`parse` is the lenient reader, for people.
        """
        card = _CARD_BY_TEXT.get(text) if isinstance(text, str) else None
        if card is None:
            ranks = " ".join(r.letter for r in Rank)
            suits = " ".join(s.letter for s in Suit)
            raise CardParseError(
                f"not a card as the wire writes it: {text!r} (exactly a rank {ranks} then a suit {suits}, uppercase, such as 'JS' or 'TH')"
            )
        return card

    @property
    def symbol_text(self) -> str:
        """The card with its suit symbol, for people: ``J♠``."""
        return self.rank.letter + self.suit.symbol

    def __str__(self) -> str:
        return _TEXT[self.index]

    def __repr__(self) -> str:
        return f"Card({_TEXT[self.index]!r})"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return self.index

    def __lt__(self, other: Card) -> bool:
        # Natural order (suit S H D C, then rank), used only to sort for display and records.
        return _NATURAL[self.index] < _NATURAL[other.index]


CARDS: Final[tuple[Card, ...]] = tuple(Card._make(i) for i in range(52))
"""All 52 cards, indexed by ``Card.index``: the 32 Piquet cards first."""
_TEXT: Final = tuple(c.rank.letter + c.suit.letter for c in CARDS)
_CARD_BY_TEXT: Final = {_TEXT[c.index]: c for c in CARDS}
_NATURAL: Final = tuple(c.suit * 16 + c.rank for c in CARDS)

PIQUET_MASK: Final = (1 << 32) - 1
"""The 32-card pack: ranks 7 to A."""
ALL_CARDS_MASK: Final = (1 << 52) - 1
"""The 52-card pack."""
SUIT_MASKS: Final = tuple(0xFF << (8 * s) | 0x1F << (32 + 5 * s) for s in range(4))
"""``SUIT_MASKS[suit]`` is the mask of the cards of that suit (eight of them in the 32-card pack)."""

# For each suit and each 8-bit pattern of its Piquet cards (and 5-bit pattern of its low
# cards), the cards it holds: ``cards_in`` turns a mask into cards with table look-ups.
_SUIT_BYTE_CARDS: Final = tuple(tuple(tuple(CARDS[s * 8 + r] for r in range(8) if byte >> r & 1) for byte in range(256)) for s in range(4))
_SUIT_LOW_CARDS: Final = tuple(
    tuple(tuple(CARDS[32 + s * 5 + r] for r in range(5) if bits >> r & 1) for bits in range(32)) for s in range(4)
)


def cards_in(mask: CardMask) -> list[Card]:
    """The cards of ``mask`` in natural order: suits S H D C, ranks up to A within a suit.

    For the 32-card pack that is index order.
    """
    t = _SUIT_BYTE_CARDS
    if mask <= PIQUET_MASK:
        return [*t[0][mask & 0xFF], *t[1][mask >> 8 & 0xFF], *t[2][mask >> 16 & 0xFF], *t[3][mask >> 24 & 0xFF]]
    low = _SUIT_LOW_CARDS
    return [
        *low[0][mask >> 32 & 0x1F], *t[0][mask & 0xFF],
        *low[1][mask >> 37 & 0x1F], *t[1][mask >> 8 & 0xFF],
        *low[2][mask >> 42 & 0x1F], *t[2][mask >> 16 & 0xFF],
        *low[3][mask >> 47 & 0x1F], *t[3][mask >> 24 & 0xFF],
    ]  # fmt: skip


def mask_of(cards: Iterable[Card | str]) -> CardMask:
    """The bitmask of ``cards`` (Card objects or card text); duplicates are an error."""
    mask = 0
    for item in cards:
        card = item if isinstance(item, Card) else Card.parse(item)
        if mask & card.bit:
            raise CardParseError(f"card {str(card)!r} appears twice")
        mask |= card.bit
    return mask


def parse_cards(text: str) -> list[Card]:
    """Parse cards separated by spaces or commas: ``"JS 10H Q♦ 2C"``."""
    if not isinstance(text, str):
        raise CardParseError(f"cards must be text such as 'JS 10H', got {text!r}")
    return [Card.parse(part) for part in text.replace(",", " ").split()]
