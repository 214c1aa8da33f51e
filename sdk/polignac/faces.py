"""How cards are named for people: French faces (``JS``, the jack of spades) or German (``GU``, the Gras-Unter).

A ruleset's ``faces`` setting changes only what a person reads (text renderings, the web,
the replay viewer); the wire and records always carry the French text (docs/rules.md,
"Faces").  The German pack maps one to one onto the 32-card French pack: Eichel (acorns) =
clubs, Gras (leaves) = spades, Herz = hearts, Schellen (bells) = diamonds; Daus = Ace,
König = King, Ober = Queen, Unter = Jack, and 10 9 8 7 as they are.

>>> from polignac import Card, Faces
>>> card_name(Card.parse("QC"), Faces.GERMAN), card_text(Card.parse("QC"), Faces.GERMAN)
('Eichel-Ober', 'EO')
>>> card_name(Card.parse("JS")), card_text(Card.parse("TH"))
('jack of spades', 'TH')
>>> parse_face("Schellen-Daus", Faces.GERMAN)
Card('AD')
"""

from __future__ import annotations

from typing import Final

from polignac.cards import CARDS, Card, Rank, Suit
from polignac.errors import CardParseError
from polignac.rules import Faces

__all__ = [
    "FRENCH_RANK_NAMES",
    "FRENCH_SUIT_NAMES",
    "GERMAN_RANK_LETTERS",
    "GERMAN_RANK_NAMES",
    "GERMAN_SUIT_LETTERS",
    "GERMAN_SUIT_NAMES",
    "card_name",
    "card_text",
    "legend",
    "parse_face",
    "rank_name",
    "suit_name",
]

FRENCH_SUIT_NAMES: Final = {Suit.SPADES: "spades", Suit.HEARTS: "hearts", Suit.DIAMONDS: "diamonds", Suit.CLUBS: "clubs"}
"""The French suits by name."""
GERMAN_SUIT_NAMES: Final = {Suit.SPADES: "Gras", Suit.HEARTS: "Herz", Suit.DIAMONDS: "Schellen", Suit.CLUBS: "Eichel"}
"""The German suit that stands for each French one: leaves, hearts, bells, acorns."""
GERMAN_SUIT_LETTERS: Final = {suit: name[0] for suit, name in GERMAN_SUIT_NAMES.items()}
"""The German suits' letters in short card text: G H S E."""

FRENCH_RANK_NAMES: Final = {Rank.ACE: "ace", Rank.KING: "king", Rank.QUEEN: "queen", Rank.JACK: "jack"}
"""The French court cards and the Ace by name (other ranks are named by their number)."""
GERMAN_RANK_NAMES: Final = {Rank.ACE: "Daus", Rank.KING: "König", Rank.QUEEN: "Ober", Rank.JACK: "Unter"}
"""The German rank that stands for each French one (other ranks are named by their number)."""
GERMAN_RANK_LETTERS: Final = {rank: name[0] for rank, name in GERMAN_RANK_NAMES.items()}
"""The German ranks' letters in short card text: D K O U."""


def suit_name(suit: Suit, faces: Faces = Faces.FRENCH) -> str:
    """The suit's name: ``spades`` (French) or ``Gras`` (German)."""
    return (GERMAN_SUIT_NAMES if faces is Faces.GERMAN else FRENCH_SUIT_NAMES)[Suit(suit)]


def rank_name(rank: Rank, faces: Faces = Faces.FRENCH) -> str:
    """The rank's name: ``jack`` or ``Unter``; a number card is its number, ``10``."""
    names = GERMAN_RANK_NAMES if faces is Faces.GERMAN else FRENCH_RANK_NAMES
    return names.get(Rank(rank), str(int(rank)))


def card_name(card: Card, faces: Faces = Faces.FRENCH) -> str:
    """The card's full name: ``jack of spades``, ``10 of hearts``; German ``Gras-Unter``, ``Herz-10``."""
    if faces is Faces.GERMAN:
        return f"{GERMAN_SUIT_NAMES[card.suit]}-{rank_name(card.rank, faces)}"
    return f"{rank_name(card.rank)} of {FRENCH_SUIT_NAMES[card.suit]}"


def card_text(card: Card, faces: Faces = Faces.FRENCH) -> str:
    """The card in at most three characters, for columns of cards.

    French: the wire text, rank then suit (``JS``, ``TH``).  German: suit then rank, so that
    it never reads as a French card (``GU`` Gras-Unter, ``SD`` Schellen-Daus, ``H10`` Herz-10).
    """
    if faces is Faces.GERMAN:
        return GERMAN_SUIT_LETTERS[card.suit] + GERMAN_RANK_LETTERS.get(card.rank, str(int(card.rank)))
    return str(card)


def legend(faces: Faces) -> str | None:
    """What the short card text means, for the top of a rendering; ``None`` for French (the usual text)."""
    if faces is not Faces.GERMAN:
        return None
    suits = ", ".join(f"{GERMAN_SUIT_LETTERS[s]} {GERMAN_SUIT_NAMES[s]}" for s in (Suit.CLUBS, Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS))
    ranks = ", ".join(f"{GERMAN_RANK_LETTERS[r]} {GERMAN_RANK_NAMES[r]}" for r in (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK))
    return f"German cards, suit then rank: {suits}; {ranks}, then 10 9 8 7 (EO is the Eichel-Ober)."


def _readings() -> dict[Faces, dict[str, Card]]:
    table: dict[Faces, dict[str, Card]] = {}
    for faces in Faces:
        names: dict[str, Card] = {}
        for card in CARDS:
            for text in (card_name(card, faces), card_text(card, faces)):
                names[text.casefold()] = card
        table[faces] = names
    return table


_READINGS: Final = _readings()


def parse_face(text: str, faces: Faces = Faces.FRENCH) -> Card:
    """Read a card as people write it under ``faces``: its name, its short text, or any text :meth:`Card.parse` reads.

    German names may be written in any case and with ``Koenig`` for ``König``.
    """
    if not isinstance(text, str):
        raise CardParseError(f"a card must be text such as 'JS', got {text!r}")
    key = text.strip().casefold().replace("koenig", "könig")
    found = _READINGS[Faces(faces)].get(key)
    if found is not None:
        return found
    try:
        return Card.parse(text)
    except CardParseError:
        if faces is not Faces.GERMAN:
            raise
    raise CardParseError(
        f"not a card: {text!r} (expected a German name such as 'Eichel-Ober', its short text 'EO', or French text such as 'QC')"
    )
