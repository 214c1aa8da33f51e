"""Cards of the 32-card Piquet pack and int-bitmask card sets.

A card is identified by an index ``suit * 8 + rank`` (0..31), where suits are in the
order S H D C and ranks in natural order 7 8 9 T J Q K A.  A set of cards is an ``int``
bitmask with bit ``index`` set for each card, which keeps the engine and the playout path
free of per-card objects in their inner loops.  :class:`Card` objects are interned: there
are exactly 32 of them, so ``Card.parse("JS") is Card.parse("J♠")``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final

from polignac.errors import CardParseError

__all__ = [
    "ALL_CARDS_MASK",
    "CARDS",
    "SUIT_MASKS",
    "Card",
    "CardMask",
    "Rank",
    "Suit",
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
    """The eight ranks in natural order (not trick order: see ``Ruleset.trick_order``)."""

    SEVEN = 0
    EIGHT = 1
    NINE = 2
    TEN = 3
    JACK = 4
    QUEEN = 5
    KING = 6
    ACE = 7

    @property
    def letter(self) -> str:
        """The rank's character in the text form of a card; ten is ``T``."""
        return "789TJQKA"[self]


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
        return CARDS[Suit(suit) * 8 + Rank(rank)]

    @classmethod
    def _make(cls, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "index", index)
        object.__setattr__(card, "suit", Suit(index >> 3))
        object.__setattr__(card, "rank", Rank(index & 7))
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
        """The card with index ``suit * 8 + rank``; raises ``CardParseError`` out of 0..31."""
        if type(index) is not int or not 0 <= index < 32:
            raise CardParseError(f"card index must be an int in 0..31, got {index!r}")
        return CARDS[index]

    @staticmethod
    def parse(text: str) -> Card:
        """Parse ``7S``, ``TH``, ``10H``, ``J♠`` (case and surrounding space ignored)."""
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
                return CARDS[suit * 8 + rank]
        raise CardParseError(
            f"not a card: {text!r} (expected a rank 7 8 9 T/10 J Q K A then a suit S H D C or ♠ ♥ ♦ ♣, for example 'JS' or '10♥')"
        )

    @staticmethod
    def from_wire(text: str) -> Card:
        """The card whose wire text is exactly ``text`` (``7S``, ``TH``, ``JS``, ``AC``).

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
        # Natural order by index, used only to sort for display and records.
        return self.index < other.index


_TEXT: Final = tuple(Rank(i & 7).letter + Suit(i >> 3).letter for i in range(32))
CARDS: Final[tuple[Card, ...]] = tuple(Card._make(i) for i in range(32))
"""All 32 cards, indexed by ``Card.index``."""
_CARD_BY_TEXT: Final = {_TEXT[c.index]: c for c in CARDS}

ALL_CARDS_MASK: Final = (1 << 32) - 1
SUIT_MASKS: Final = tuple(0xFF << (8 * s) for s in range(4))
"""``SUIT_MASKS[suit]`` is the mask of the eight cards of that suit."""

# For each suit and each 8-bit pattern of that suit, the cards it holds: lets
# ``cards_in`` turn a mask into cards with four table look-ups instead of a bit loop.
_SUIT_BYTE_CARDS: Final = tuple(tuple(tuple(CARDS[s * 8 + r] for r in range(8) if byte >> r & 1) for byte in range(256)) for s in range(4))


def cards_in(mask: CardMask) -> list[Card]:
    """The cards of ``mask`` in index order (suits S H D C, ranks 7 up to A)."""
    t = _SUIT_BYTE_CARDS
    return [*t[0][mask & 0xFF], *t[1][mask >> 8 & 0xFF], *t[2][mask >> 16 & 0xFF], *t[3][mask >> 24 & 0xFF]]


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
    """Parse cards separated by spaces or commas: ``"JS 10H Q♦"``."""
    if not isinstance(text, str):
        raise CardParseError(f"cards must be text such as 'JS 10H', got {text!r}")
    return [Card.parse(part) for part in text.replace(",", " ").split()]
