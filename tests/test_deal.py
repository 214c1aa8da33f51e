"""The deal generator ``polignac-deal-v1`` against its specification (the docstring of deal.py).

The reference below is written from that docstring alone, so a change to the engine's
generator that the specification does not allow fails here, and the pinned packs catch
any change at all (records replay from their seed, so the deal must never drift).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter
from collections.abc import Iterator

import pytest

import polignac
from polignac import Match, PolignacError, preset
from polignac.deal import GENERATOR, MAX_SEED, deal_hands, shuffled_pack
from polignac.events import HandDealt
from polignac.rules import deck_mask, packet_sizes

FULL = (1 << 32) - 1
BLACK_OUT = deck_mask(preset("classic", players=3), 3)
RED_OUT = deck_mask(preset("classic", players=3, removed_sevens="red"), 3)
SEVENS = {"black": ("7S", "7C"), "red": ("7H", "7D")}

# -- the reference generator, from the specification only -----------------------------


def reference_words(seed: int, hand_number: int) -> Iterator[int]:
    """Step 1: the big-endian 32-bit words of SHA-256 blocks 0, 1, 2, ..."""
    for block in itertools.count():
        message = b"polignac-deal-v1" + seed.to_bytes(8, "big") + hand_number.to_bytes(4, "big") + block.to_bytes(4, "big")
        digest = hashlib.sha256(message).digest()
        yield from (int.from_bytes(digest[k : k + 4], "big") for k in range(0, 32, 4))


def reference_pack(seed: int, hand_number: int, deck: int) -> list[int]:
    """Steps 2 and 3: Fisher-Yates from the bottom, with rejection-sampled indices."""
    words = reference_words(seed, hand_number)

    def below(m: int) -> int:
        bound = 2**32 - 2**32 % m
        return next(w for w in words if w < bound) % m

    pack = [index for index in range(32) if deck >> index & 1]
    for i in reversed(range(1, len(pack))):
        j = below(i + 1)
        pack[i], pack[j] = pack[j], pack[i]
    return pack


# docs/rules.md 3, written out again rather than imported.
REFERENCE_PACKETS = {8: (3, 2, 3), 10: (3, 2, 3, 2), 6: (3, 3), 5: (3, 2), 15: (3, 2, 3, 2, 3, 2)}


def reference_deal(pack: list[int], order: list[int], cards_each: int) -> dict[int, set[int]]:
    """Step 4: from the top, one packet per player per round, eldest hand first."""
    hands: dict[int, set[int]] = {seat: set() for seat in order}
    cards = iter(pack)
    for size in REFERENCE_PACKETS[cards_each]:
        for seat in order:
            hands[seat].update(next(cards) for _ in range(size))
    assert next(cards, None) is None
    return hands


def cards_text(pack: list[int]) -> str:
    return " ".join(str(polignac.CARDS[i]) for i in pack)


# -- the generator matches its specification ------------------------------------------


def test_generator_name_is_the_documented_one() -> None:
    assert GENERATOR == "polignac-deal-v1"
    assert MAX_SEED == 2**64 - 1


def test_reference_matches_shuffled_pack_on_many_inputs() -> None:
    rnd = random.Random(20240601)
    seeds = [0, 1, 2, 255, 256, 2**32 - 1, 2**32, 2**63, MAX_SEED - 1, MAX_SEED] + [rnd.getrandbits(64) for _ in range(60)]
    hand_numbers = [1, 2, 3, 17, 255, 256, 65536, 2**31, 2**32 - 1]
    decks = [FULL, BLACK_OUT, RED_OUT, 0, 1, 1 << 31, 0b11, *(rnd.getrandbits(32) for _ in range(6))]
    checked = 0
    for seed in seeds:
        for hand_number in rnd.sample(hand_numbers, 4):
            for deck in rnd.sample(decks, 4):
                assert shuffled_pack(seed, hand_number, deck) == reference_pack(seed, hand_number, deck), (seed, hand_number, hex(deck))
                checked += 1
    assert checked == len(seeds) * 16


def test_reference_matches_on_consecutive_seeds_and_hands() -> None:
    # Neighbouring inputs differ in one byte of the hashed message: catches byte-order slips.
    for seed, hand_number in itertools.product(range(40), range(1, 6)):
        assert shuffled_pack(seed, hand_number, FULL) == reference_pack(seed, hand_number, FULL)


def test_rejection_sampling_and_block_order_follow_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real SHA-256 words are almost never rejected (p < 1e-8), so force the top of the range.

    Every even word of every block is moved into 0xFFFFFFF0..0xFFFFFFFF: ``below(m)`` then
    rejects it exactly when it is ``>= 2**32 - 2**32 % m``, which checks the boundary, the
    word order within a block and the move to the next block.
    """
    real_sha256 = hashlib.sha256

    class TopHeavy:
        def __init__(self, data: bytes) -> None:
            self._digest = real_sha256(data).digest()

        def digest(self) -> bytes:
            out = bytearray(self._digest)
            for k in range(0, 32, 8):
                word = 0xFFFFFFF0 | (out[k + 3] & 0xF)
                out[k : k + 4] = word.to_bytes(4, "big")
            return bytes(out)

    monkeypatch.setattr(hashlib, "sha256", TopHeavy)
    rejected = 0
    for seed in range(30):
        for deck in (FULL, BLACK_OUT, RED_OUT):
            assert shuffled_pack(seed, 1 + seed % 3, deck) == reference_pack(seed, 1 + seed % 3, deck), (seed, hex(deck))
        words = reference_words(seed, 1)
        rejected += sum(1 for w in itertools.islice(words, 64) if w >= 2**32 - 2**32 % 31)
    assert rejected > 0, "the forced words should hit the rejection branch"


# Literal packs: any change to the generator, even one the reference shares, changes these.
PINNED = [
    (0, 1, FULL, "JC KH 7H 8C 8H TC AC JS 9C TS KD 9H 7S 7C KC 9D QC 9S QH QD JH 8D AH 8S TH KS QS JD TD 7D AD AS"),
    (1, 1, BLACK_OUT, "8C JS 9H JD AS KC TC 8H KH TD KD QS KS AH 7H QD 9D 8D TH QH 8S 9C 7D JH AC TS JC AD QC 9S"),
    (MAX_SEED, 2**32 - 1, RED_OUT, "8C KS JC 8S AC KH 9S JD QD 9H QS TD 8D AD 8H TS 9D TH 9C QH JS QC JH 7S TC AS KC 7C KD AH"),
    (12345678901234567890, 7, FULL, "JS 8H 9H QS JD 7H 9C QC 7S QH 7D AC AH AD TC JH 8C TS AS JC 9S QD TH 7C KH KC 8D 8S KS 9D KD TD"),
    (42, 3, 0b1011, "8S TS 7S"),
]


@pytest.mark.parametrize(("seed", "hand_number", "deck", "expected"), PINNED)
def test_pinned_packs(seed: int, hand_number: int, deck: int, expected: str) -> None:
    assert cards_text(shuffled_pack(seed, hand_number, deck)) == expected
    assert cards_text(reference_pack(seed, hand_number, deck)) == expected


def test_pinned_first_deal_of_a_match() -> None:
    # Seat 3 deals hand 1, so eldest hand, seat 0, gets cards 1-3, 13-14 and 21-23 of the seed-0 pack,
    # and seat 3, the dealer, the last packet of each round.
    match = Match(preset("classic"), seed=0)
    assert {str(c) for c in match.hand(0)} == {"JC", "KH", "7H", "7S", "7C", "JH", "8D", "AH"}
    assert {str(c) for c in match.hand(3)} == {"TS", "KD", "9H", "QH", "QD", "7D", "AD", "AS"}


# -- the deal (step 4) and the match's use of it ----------------------------------------


@pytest.mark.parametrize("cards_each", sorted(REFERENCE_PACKETS))
def test_packet_sizes_are_those_of_the_rules(cards_each: int) -> None:
    assert packet_sizes(cards_each) == REFERENCE_PACKETS[cards_each]
    assert sum(REFERENCE_PACKETS[cards_each]) == cards_each


def test_deal_hands_follows_the_spec() -> None:
    rnd = random.Random(5)
    for players, cards_each, deck in [(4, 8, FULL), (3, 10, BLACK_OUT), (5, 6, RED_OUT), (6, 5, BLACK_OUT), (2, 15, RED_OUT)]:
        for _ in range(20):
            pack = reference_pack(rnd.getrandbits(64), 1, deck)
            order = rnd.sample(range(6), players)
            got = deal_hands(pack, order, packet_sizes(cards_each))
            want = reference_deal(pack, order, cards_each)
            assert {seat: {c.index for c in polignac.cards_in(mask)} for seat, mask in got.items()} == want


def test_deal_hands_rejects_packets_that_do_not_use_the_pack() -> None:
    with pytest.raises(PolignacError, match="do not use"):
        deal_hands(list(range(32)), [0, 1, 2], packet_sizes(10))


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("sevens", ["black", "red"])
def test_match_deals_are_the_specified_deals(players: int, sevens: str) -> None:
    rules = preset("no-contracts", players=players, removed_sevens=sevens, limit=6)
    for seed in (3, 99, MAX_SEED):
        match = Match(rules, seed=seed)
        rnd = random.Random(seed)
        while not match.is_over:
            match.apply(rnd.choice(match.legal_decisions()))
        deals = [e for e in match.events if isinstance(e, HandDealt)]
        assert deals[0].dealer == players - 1
        for event in deals:
            seats = list(event.seats)
            deck = deck_mask(rules, len(seats))
            eldest = seats[(seats.index(event.dealer) + 1) % len(seats)]
            order = seats[seats.index(eldest) :] + seats[: seats.index(eldest)]
            pack = reference_pack(seed, event.hand_number, deck)
            want = reference_deal(pack, order, len(pack) // len(seats))
            got = {seat: {c.index for c in hand} for seat, hand in zip(event.seats, event.hands, strict=True)}
            assert got == want, (seed, event.hand_number)
            if len(seats) != 4:
                assert not {str(c) for hand in event.hands for c in hand} & set(SEVENS[sevens])


# -- bad input: clear errors quoting the value -----------------------------------------

BAD_SEEDS = [-1, 2**64, 2**80, 1.0, 3.5, True, False, "1", None, [1]]
BAD_HAND_NUMBERS = [0, -1, 2**32, 2**40, 1.0, True, "1", None]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seed_is_refused_quoting_it(seed: object) -> None:
    with pytest.raises(PolignacError) as info:
        shuffled_pack(seed, 1, FULL)  # type: ignore[arg-type]  # the point of the test
    assert repr(seed) in str(info.value)
    with pytest.raises(PolignacError) as info:
        Match(preset("classic"), seed=seed)  # type: ignore[arg-type]  # the point of the test
    assert repr(seed) in str(info.value)


@pytest.mark.parametrize("hand_number", BAD_HAND_NUMBERS, ids=repr)
def test_bad_hand_number_is_refused_quoting_it(hand_number: object) -> None:
    with pytest.raises(PolignacError) as info:
        shuffled_pack(0, hand_number, FULL)  # type: ignore[arg-type]  # the point of the test
    assert repr(hand_number) in str(info.value)


def test_extreme_valid_inputs_are_accepted() -> None:
    for seed, hand_number in [(0, 1), (MAX_SEED, 1), (0, 2**32 - 1), (MAX_SEED, 2**32 - 1)]:
        assert sorted(shuffled_pack(seed, hand_number, FULL)) == list(range(32))


# -- rough uniformity ------------------------------------------------------------------


def chi_square(counts: Counter[int], cells: int, draws: int) -> float:
    expected = draws / cells
    return sum((counts.get(cell, 0) - expected) ** 2 / expected for cell in range(cells))


@pytest.mark.parametrize(("deck", "label"), [(FULL, "32 cards"), (BLACK_OUT, "30 cards")])
def test_shuffle_is_roughly_uniform(deck: int, label: str) -> None:
    """Where the first card lands, and which card comes out on top, over 4096 shuffles.

    With 31 or 29 degrees of freedom the statistic averages about 30 with a standard
    deviation near 8; the bound of 90 fails a fair generator with probability below 1e-8
    (and the seeds are fixed, so the test is deterministic), yet catches an off-by-one in
    Fisher-Yates (a Sattolo cycle never leaves a card in place) or a modulo bias.
    """
    cards = [i for i in range(32) if deck >> i & 1]
    first = cards[0]
    draws = 4096
    where_first, top = Counter[int](), Counter[int]()
    stays_put = 0
    for n in range(draws):
        pack = shuffled_pack(n * 7919, 1 + n % 5, deck)
        where_first[pack.index(first)] += 1
        top[cards.index(pack[0])] += 1
        stays_put += pack[0] == first
    assert chi_square(where_first, len(cards), draws) < 90, label
    assert chi_square(top, len(cards), draws) < 90, label
    assert stays_put > 0
