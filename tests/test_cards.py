"""Acceptance tests for cards (docs/rules.md sections 1 and 11): text round trip, parsing, errors, bitmasks.

The 52-card pack keeps the 32 Piquet cards (7 to A) at indices 0..31 as ``suit * 8 + rank - 7``,
so every 32-card mask is what it always was; the low cards (2 to 6) follow at 32..51 as
``32 + suit * 5 + rank - 2``.
"""

from __future__ import annotations

import pytest

import polignac
from polignac import CARDS, Card, CardParseError, Rank, Suit, cards_in, mask_of, parse_cards
from polignac.cards import ALL_CARDS_MASK, PIQUET_MASK, PIQUET_RANKS

RANK_LETTERS = "789TJQKA"
LOW_LETTERS = "23456"
SUIT_LETTERS = "SHDC"
PIQUET_TEXTS = [r + s for s in SUIT_LETTERS for r in RANK_LETTERS]  # index order: suit * 8 + rank - 7
LOW_TEXTS = [r + s for s in SUIT_LETTERS for r in LOW_LETTERS]  # index order: 32 + suit * 5 + rank - 2
ALL_TEXTS = PIQUET_TEXTS + LOW_TEXTS
NATURAL_TEXTS = [r + s for s in SUIT_LETTERS for r in LOW_LETTERS + RANK_LETTERS]  # suit S H D C, then rank 2 up to A


# -- the 52 cards and their text ----------------------------------------------------------


def test_pack_has_52_distinct_cards_the_piquet_cards_first() -> None:
    assert len(CARDS) == 52
    assert [str(c) for c in CARDS] == ALL_TEXTS
    assert len({str(c) for c in CARDS}) == 52
    for i, card in enumerate(CARDS):
        assert card.index == i
        assert card.bit == 1 << i
        if i < 32:
            assert card.suit == Suit(i // 8)
            assert card.rank == Rank(7 + i % 8)
            assert card.rank.in_piquet
        else:
            assert card.suit == Suit((i - 32) // 5)
            assert card.rank == Rank(2 + (i - 32) % 5)
            assert not card.rank.in_piquet
    assert [str(c) for c in CARDS[:32]] == PIQUET_TEXTS, "the 32-card indices are unchanged"
    assert PIQUET_MASK == (1 << 32) - 1 and ALL_CARDS_MASK == (1 << 52) - 1


def test_ranks_have_their_natural_values() -> None:
    assert [int(r) for r in Rank] == list(range(2, 15))
    assert "".join(r.letter for r in Rank) == "23456789TJQKA"
    assert [r.text for r in Rank][8] == "10"
    assert PIQUET_RANKS == (Rank.SEVEN, Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE)


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_text_round_trip(text: str) -> None:
    card = Card.parse(text)
    assert str(card) == text
    assert Card.parse(str(card)) is card
    assert card.rank.letter + card.suit.letter == text
    # The symbol form parses back to the same card.
    assert Card.parse(card.symbol_text) is card
    assert Card.parse(text.lower()) is card


def test_ten_is_written_t() -> None:
    assert str(Card.parse("TH")) == "TH"
    assert all("10" not in str(c) for c in CARDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10H", "TH"),
        ("10S", "TS"),
        ("10♣", "TC"),
        ("J♠", "JS"),
        ("Q♥", "QH"),
        ("K♦", "KD"),
        ("A♣", "AC"),
        ("7♠", "7S"),
        ("2C", "2C"),
        ("6h", "6H"),
        ("5♦", "5D"),
        (" 3s ", "3S"),
        ("js", "JS"),
        ("th", "TH"),
        ("10h", "TH"),
        ("aC", "AC"),
        ("j♠", "JS"),
        ("  JS  ", "JS"),
        ("\tAC\n", "AC"),
        (" 10H ", "TH"),
    ],
)
def test_accepted_forms(text: str, expected: str) -> None:
    assert str(Card.parse(text)) == expected


def test_cards_are_interned() -> None:
    assert Card.parse("JS") is Card.parse("J♠") is Card.parse(" js ")
    assert Card(Suit.SPADES, Rank.JACK) is Card.parse("JS")
    assert Card.parse("JS") == Card.parse("J♠")
    assert hash(Card.parse("JS")) == hash(Card.parse("J♠"))
    assert Card.parse("JS") != Card.parse("JH")


def test_card_is_immutable() -> None:
    card = Card.parse("JS")
    with pytest.raises(AttributeError):
        card.index = 3  # refused at run time: Card sets its slots once
    assert str(card) == "JS"


@pytest.mark.parametrize(
    "bad",
    [
        *["", " ", "XS", "1H", "11H", "JSS", "J", "S", "10", "0H", "JX", "TT", "J S", "1 0H", "♠J", "SJ", "JS,", "7Z", "1S", "0S"],
        *["10HH", "06S", "66S", "1C", "2", "6"],
    ],
)
def test_bad_text_raises_card_parse_error_quoting_it(bad: str) -> None:
    with pytest.raises(CardParseError) as info:
        Card.parse(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [None, 5, 4.0, b"JS", ["JS"]])
def test_non_text_raises_card_parse_error_quoting_it(bad: object) -> None:
    with pytest.raises(CardParseError) as info:
        Card.parse(bad)  # type: ignore[arg-type]  # not text, on purpose
    assert repr(bad) in str(info.value)


def test_card_parse_error_is_a_value_error() -> None:
    assert issubclass(CardParseError, ValueError)
    assert issubclass(CardParseError, polignac.PolignacError)
    with pytest.raises(ValueError, match="XS"):
        Card.parse("XS")


@pytest.mark.parametrize("bad", [-1, 52, 100, True, "3", 3.0, None])
def test_from_index_refuses_out_of_range(bad: object) -> None:
    with pytest.raises(CardParseError):
        Card.from_index(bad)  # type: ignore[arg-type]  # not always an int, on purpose


def test_from_index() -> None:
    assert Card.from_index(0) is Card.parse("7S")
    assert Card.from_index(4) is Card.parse("JS")
    assert Card.from_index(31) is Card.parse("AC")
    assert Card.from_index(32) is Card.parse("2S")
    assert Card.from_index(36) is Card.parse("6S")
    assert Card.from_index(37) is Card.parse("2H")
    assert Card.from_index(51) is Card.parse("6C")


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_wire_text_is_exactly_the_canonical_text(text: str) -> None:
    assert Card.from_wire(text) is Card.parse(text)
    for loose in (text.lower(), f" {text}", text.replace("T", "10")):
        if loose != text:
            with pytest.raises(CardParseError):
                Card.from_wire(loose)


def test_parse_cards_list() -> None:
    assert [str(c) for c in parse_cards("JS 10H Q♦")] == ["JS", "TH", "QD"]
    assert [str(c) for c in parse_cards("7s,8h, 9d  tc")] == ["7S", "8H", "9D", "TC"]
    assert parse_cards("") == []
    with pytest.raises(CardParseError, match="'XX'"):
        parse_cards("JS XX")


# -- bitmask helpers ------------------------------------------------------------------------


def test_mask_of_single_cards() -> None:
    # index = suit * 8 + rank with suits S H D C and ranks 7 8 9 T J Q K A
    assert mask_of(["7S"]) == 1
    assert mask_of(["JS"]) == 1 << 4
    assert mask_of(["TH"]) == 1 << 11
    assert mask_of(["QD"]) == 1 << 21
    assert mask_of(["AC"]) == 1 << 31
    assert mask_of(["2S"]) == 1 << 32
    assert mask_of(["6C"]) == 1 << 51
    assert mask_of([]) == 0


def test_mask_of_mixes_cards_and_text() -> None:
    assert mask_of([Card.parse("JS"), "J♥", "10d"]) == (1 << 4) | (1 << 12) | (1 << 19)
    assert mask_of(PIQUET_TEXTS) == (1 << 32) - 1
    assert mask_of(ALL_TEXTS) == (1 << 52) - 1
    assert mask_of(CARDS) == (1 << 52) - 1


@pytest.mark.parametrize("cards", [["JS", "JS"], ["JS", "j♠"], ["TH", "10H"], [Card.parse("AC"), "AC"]])
def test_mask_of_refuses_duplicates(cards: list[object]) -> None:
    with pytest.raises(CardParseError) as info:
        mask_of(cards)  # type: ignore[arg-type]  # text and cards mixed, on purpose
    assert "twice" in str(info.value)
    assert str(Card.parse(str(cards[0]))) in str(info.value)


def test_mask_of_refuses_bad_text() -> None:
    with pytest.raises(CardParseError, match="'XS'"):
        mask_of(["JS", "XS"])


def test_cards_in_natural_order() -> None:
    """Suits S H D C, ranks up within a suit: index order for the 32-card pack."""
    assert cards_in(0) == []
    assert cards_in((1 << 32) - 1) == list(CARDS[:32])
    assert [str(c) for c in cards_in((1 << 52) - 1)] == NATURAL_TEXTS
    assert [str(c) for c in cards_in(mask_of(["AC", "JS", "7H", "KD"]))] == ["JS", "7H", "KD", "AC"]
    assert [str(c) for c in cards_in(mask_of(["AC", "2C", "JS", "6S", "7H", "3H", "KD", "2D"]))] == [
        "6S", "JS", "3H", "7H", "2D", "KD", "2C", "AC",
    ]  # fmt: skip


def test_sorting_cards_is_natural_order() -> None:
    assert [str(c) for c in sorted(CARDS)] == NATURAL_TEXTS
    assert Card.parse("6S") < Card.parse("7S") < Card.parse("2H")


def natural_key(card: Card) -> tuple[int, int]:
    return (card.suit, card.rank)


def test_cards_in_and_mask_of_round_trip() -> None:
    for start in range(0, 52, 3):
        chosen = [CARDS[i] for i in range(start, 52, 5)]
        mask = mask_of(chosen)
        assert cards_in(mask) == sorted(chosen, key=natural_key)
        assert mask_of(cards_in(mask)) == mask
        assert bin(mask).count("1") == len(chosen)


def test_suit_masks_hold_the_thirteen_cards_of_each_suit() -> None:
    for suit in Suit:
        cards = cards_in(polignac.SUIT_MASKS[suit])
        assert len(cards) == 13 and all(c.suit is suit for c in cards)
        assert polignac.SUIT_MASKS[suit] & PIQUET_MASK == mask_of(c for c in cards if c.rank.in_piquet)
    assert sum(polignac.SUIT_MASKS) == (1 << 52) - 1
