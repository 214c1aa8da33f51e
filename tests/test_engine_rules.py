"""Rule-by-rule acceptance tests of the engine against docs/rules.md, each on a hand-built deal.

Every expected number here was worked out by hand from docs/rules.md (and, where docs/rules.md is silent,
from the points the docstring of ``polignac.engine`` says it settled).  The deals are written
out card by card; the comments beside each play sequence give who wins each trick and what it
takes.  ``Match(rules, seed, deals={n: [...]})`` replaces the seeded shuffle of hand ``n`` with
the given hands, one per playing seat in seat order; in hand 1 the dealer is seat n-1, so seat 0
is eldest and leads.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from polignac import (
    CARDS,
    Card,
    Contract,
    IllegalDecision,
    Match,
    Phase,
    PolignacError,
    Ruleset,
    RulesetError,
    mask_of,
    preset,
    redact,
)
from polignac.deal import deal_hands, shuffled_pack
from polignac.events import (
    CardPlayed,
    Declared,
    Forfeited,
    HandDealt,
    HandEnded,
    MatchEnded,
    PenaltyAdded,
    TiebreakStarted,
    TrickWon,
)
from polignac.rules import packet_sizes

CLASSIC = preset("classic")
NO_CONTRACTS = preset("no-contracts")
WITH_GENERAL = CLASSIC.with_changes(general=True)

RANKS = "789TJQKA"
SUITS = "SHDC"
ALL_TEXTS = [r + s for s in SUITS for r in RANKS]


# -- helpers --------------------------------------------------------------------------------


def play(match: Match, *moves: str) -> None:
    """Apply decision texts in order ("pass", "capot", "JS"); "|" separates tricks for the reader."""
    for chunk in moves:
        for token in chunk.replace("|", " ").split():
            match.apply_text(token)


def pass_all(match: Match) -> None:
    """Everybody passes (a no-op when the hand has no auction)."""
    while match.phase is Phase.AUCTION:
        match.apply_text("pass")


def finish_hand(match: Match) -> None:
    """Play the current hand out with the referee's fallback decisions."""
    number = match.hand_number
    while not match.is_over and match.hand_number == number:
        match.apply(match.fallback())


def finish_match(match: Match) -> None:
    while not match.is_over:
        match.apply(match.fallback())


def texts(cards: Iterable[Card | Contract]) -> set[str]:
    return {str(c) for c in cards}


def cards_of(text: str) -> set[str]:
    return {str(Card.parse(t)) for t in text.split()}


def hand_ended(match: Match, number: int) -> HandEnded:
    return next(e for e in match.events if isinstance(e, HandEnded) and e.hand_number == number)


def of_type(match: Match, kind: type) -> list[Any]:
    return [e for e in match.events if isinstance(e, kind)]


def summary(match: Match, kind: type, *names: str) -> list[tuple[Any, ...]]:
    """Chosen fields of the events of one kind, in order (robust to fields added later)."""
    return [tuple(getattr(e, n) for n in names) for e in match.events if isinstance(e, kind)]


def tiebreaks(match: Match) -> list[tuple[Any, ...]]:
    return summary(match, TiebreakStarted, "seats", "round")


def ended_fields(end: HandEnded) -> tuple[Any, ...]:
    return (end.hand_number, end.contract, end.declarer, end.contract_made, end.scores, end.totals, end.tiebreak)


def interleave(first: str, second: str) -> str:
    """Two-player tricks: the leader's cards and the follower's cards, one pair per trick."""
    return " | ".join(f"{a} {b}" for a, b in zip(first.split(), second.split(), strict=True))


def pack_texts(players: int, removed: Sequence[str] = ("7S", "7C")) -> list[str]:
    """docs/rules.md 2: all 32 cards for 4 players, otherwise two sevens out."""
    return [t for t in ALL_TEXTS if players == 4 or t not in removed]


def deal_around(fixed: dict[int, str], players: int = 4, void: dict[int, str] | None = None) -> list[str]:
    """A full deal in which seat s holds the cards fixed[s] (and more), seats in ``void`` no card of those suits."""
    void = void or {}
    pack = pack_texts(players)
    per = len(pack) // players
    hands = {s: [str(Card.parse(t)) for t in fixed.get(s, "").split()] for s in range(players)}
    used = {c for h in hands.values() for c in h}
    rest = [c for c in pack if c not in used]
    restricted = "".join(void.values())
    for card in sorted(rest, key=lambda c: c[-1] not in restricted):
        allowed = [s for s in range(players) if card[-1] not in void.get(s, "") and len(hands[s]) < per]
        seat = max(allowed, key=lambda s: (per - len(hands[s]), -s))
        hands[seat].append(card)
    assert all(len(h) == per for h in hands.values())
    return [" ".join(hands[s]) for s in range(players)]


def reference_pack(seed: int, hand_number: int, cards: Sequence[str]) -> list[str]:
    """The shuffle ``polignac-deal-v1`` written again from its specification (docstring of polignac.deal)."""
    pack = list(cards)
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            key = b"polignac-deal-v1" + seed.to_bytes(8, "big") + hand_number.to_bytes(4, "big") + block.to_bytes(4, "big")
            digest = hashlib.sha256(key).digest()
            block += 1
            words.extend(int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4))
        return words.pop(0)

    def below(m: int) -> int:
        limit = 2**32 - 2**32 % m
        while True:
            w = word()
            if w < limit:
                return w % m

    for i in range(len(pack) - 1, 0, -1):
        j = below(i + 1)
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def reference_deal(pack: Sequence[str], order: Sequence[int], packets: Sequence[int]) -> dict[int, set[str]]:
    hands: dict[int, set[str]] = {s: set() for s in order}
    pos = 0
    for size in packets:
        for seat in order:
            hands[seat] |= set(pack[pos : pos + size])
            pos += size
    assert pos == len(pack)
    return hands


# -- hand-built deals -------------------------------------------------------------------------

# Each seat holds one whole suit.  Seat 0 (eldest) leads spades every trick, nobody else can
# follow, so seat 0 wins all 8 tricks and takes every Jack: 5 points in classic.
SEG = [
    "7S 8S 9S TS JS QS KS AS",
    "7H 8H 9H TH JH QH KH AH",
    "7D 8D 9D TD JD QD KD AD",
    "7C 8C 9C TC JC QC KC AC",
]
SEG_PLAY = " | ".join(f"{r}S {r}H {r}D {r}C" for r in RANKS)

# Two cards of every suit each; everyone always follows.  Classic order K Q J A 10 9 8 7.
V = [
    "7S 8S 7H 8H 7D 8D 7C 8C",
    "9S TS 9H TH 9D TD 9C TC",
    "JS QS JH QH JD QD JC QC",
    "KS AS KH AH KD AD KC AC",
]
V_PLAY = " | ".join(
    [
        "7S 9S JS AS",  # 1: led by 0; JS beats AS (J > A): seat 2 takes JS (2)
        "QH AH 7H 9H",  # 2: led by 2; QH beats AH: seat 2
        "JD KD 7D 9D",  # 3: led by 2; KD: seat 3 takes JD (1)
        "KS 8S TS QS",  # 4: led by 3; KS: seat 3
        "KH 8H TH JH",  # 5: led by 3; KH: seat 3 takes JH (1)
        "KC 7C 9C JC",  # 6: led by 3; KC: seat 3 takes JC (1)
        "AD 8D TD QD",  # 7: led by 3; QD beats AD: seat 2
        "QC AC 8C TC",  # 8: led by 2; QC beats AC: seat 2
    ]
)
V_WINNERS = [2, 2, 3, 3, 3, 3, 2, 2]
V_LEADERS = [0, 2, 2, 3, 3, 3, 3, 2]

# Two cards of every suit each, played under the ace-high order A K Q J 10 9 8 7.
W = [
    "AS 7S AH 7H 8D 9D 8C 9C",
    "KS 8S KH 8H AD 7D AC 7C",
    "QS 9S QH 9H KD TD KC TC",
    "JS TS JH TH QD JD QC JC",
]
W_PLAY = " | ".join(
    [
        "AS 8S QS JS",  # 1: led by 0; AS: seat 0 takes QS (and JS)
        "7H KH QH TH",  # 2: led by 0; KH: seat 1 takes QH
        "AD KD QD 8D",  # 3: led by 1; AD: seat 1 takes QD
        "7C KC QC 8C",  # 4: led by 1; KC: seat 2 takes QC
        "9S TS 7S KS",  # 5: led by 2; KS: seat 1
        "8H 9H JH AH",  # 6: led by 1; AH: seat 0 takes JH
        "9D 7D TD JD",  # 7: led by 0; JD: seat 3 takes JD
        "JC 9C AC TC",  # 8: led by 3; AC: seat 1 takes JC (last trick)
    ]
)
W_WINNERS = [0, 1, 1, 2, 1, 0, 3, 1]

# Seat 0 holds seven spades and 7H; seat 1 7S and seven hearts.  Seat 0 wins tricks 1-7;
# trick 8 (7H led) goes to seat 1's JH.
CF = [
    "8S 9S TS JS QS KS AS 7H",
    "7S 8H 9H TH JH QH KH AH",
    "7D 8D 9D TD JD QD KD AD",
    "7C 8C 9C TC JC QC KC AC",
]
CF_PLAY = " | ".join(
    [
        "KS 7S 7D 7C",  # 1: seat 0
        "QS 8H 8D 8C",  # 2: seat 0
        "JS 9H 9D 9C",  # 3: seat 0 takes JS
        "AS TH TD TC",  # 4: seat 0
        "TS QH JD JC",  # 5: seat 0 takes JD, JC (and QH)
        "9S KH QD QC",  # 6: seat 0 (takes QD, QC)
        "8S AH KD KC",  # 7: seat 0
        "7H JH AD AC",  # 8: led by 0; JH beats 7H: seat 1 takes JH
    ]
)

# Seat 1 holds the King and Queen of every suit: it wins every trick whatever is led.
S1 = [
    "7S 8S 7H 8H 7D 8D 7C 8C",
    "KS QS KH QH KD QD KC QC",
    "JS AS JH AH JD AD JC AC",
    "TS 9S TH 9H TD 9D TC 9C",
]
S1_PLAY = " | ".join(
    [
        "7S KS JS TS",  # 1: led by 0 (eldest), seat 1 wins and leads from now on
        "QS AS 9S 8S",
        "KH JH TH 7H",
        "QH AH 9H 8H",
        "KD JD TD 7D",
        "QD AD 9D 8D",
        "KC JC TC 7C",
        "QC AC 9C 8C",
    ]
)

# Slobberhannes: seat 0 takes the first trick (with QC), loses trick 2, wins the rest.
SLOB = [
    "9S TS JS QS KS AS 7H AH",
    "7S 8S 8H 9H TH JH QH KH",
    "7D 8D 9D TD JD QD KD AD",
    "7C 8C 9C TC JC QC KC AC",
]
SLOB_PLAY = " | ".join(
    [
        "AS 7S 7D QC",  # 1: seat 0: first trick and QC
        "7H 8H 8D 7C",  # 2: 8H beats 7H: seat 1
        "9H 9D 8C AH",  # 3: led by 1; AH: seat 0
        "KS 8S TD 9C",  # 4: seat 0
        "QS TH JD TC",  # 5: seat 0
        "JS JH QD JC",  # 6: seat 0
        "TS QH KD KC",  # 7: seat 0
        "9S KH AD AC",  # 8: seat 0: last trick
    ]
)

# Two-player tie-break hand for seats 0 and 1 (30 cards, 7S and 7C out, 15 each).  Seat 1 is
# eldest; it leads diamonds and clubs, seat 0 holds none and discards, so seat 1 wins all 15
# tricks and takes all four Jacks: seat 0 scores 0, seat 1 scores 5.
TB_SEAT0 = "8S 9S TS JS QS KS AS 7H 8H 9H TH JH QH KH AH"
TB_SEAT1 = "7D 8D 9D TD JD QD KD AD 8C 9C TC JC QC KC AC"
TB_PLAY = interleave(TB_SEAT1, TB_SEAT0)


# == docs/rules.md 1: trick order; 5: the highest card of the suit led wins ==================

CLASSIC_TRICKS = [
    ("KS QS JS AS", 0),
    ("QS KS JS AS", 1),
    ("AS TS JS 9S", 2),  # J > A
    ("AS TS 9S 8S", 0),  # A > 10
    ("TS AS 9S 8S", 1),
    ("7S 8S 9S TS", 3),
    ("TS 9S 8S 7S", 0),
    ("QH AH KH JH", 2),
    ("AD 7D 8D KD", 3),
    # off-suit cards never win, however high
    ("7S KH AD KC", 0),
    ("8D 7D KS KH", 0),
    ("7H AC KH AH", 2),
    ("9C KS KH KD", 0),
]
FRENCH_ORDER = "KQJAT987"
ACE_HIGH_ORDER = "AKQJT987"


def adjacent_pairs(order: str) -> list[tuple[str, int]]:
    """For each pair of neighbours hi > lo in the order: lo led and hi played beats it, and the other way."""
    out = []
    for hi, lo in itertools.pairwise(order):
        out.append((f"{lo}S {hi}S 7H 7D", 1))
        out.append((f"{hi}S {lo}S 7H 7D", 0))
    return out


def first_trick_match(rules: Ruleset, trick: str) -> Match:
    cards = trick.split()
    led = cards[0][-1]
    void = {s: led for s, c in enumerate(cards) if c[-1] != led}
    deal = deal_around(dict(enumerate(cards)), void=void)
    match = Match(rules, 1, deals={1: deal})
    pass_all(match)
    play(match, trick)
    return match


@pytest.mark.parametrize(("trick", "winner"), CLASSIC_TRICKS + adjacent_pairs(FRENCH_ORDER))
def test_classic_trick_winner_k_q_j_a_10_9_8_7(trick: str, winner: int) -> None:
    match = first_trick_match(CLASSIC, trick)
    (done,) = match.tricks
    assert done.winner == winner
    assert match.to_act == winner  # the winner leads the next trick
    assert match.taken_mask(winner) == mask_of(trick.split())


ACE_HIGH_TRICKS = [
    ("KS AS QS JS", 1),
    ("AS KS QS JS", 0),
    ("JS AS TS 9S", 1),  # A > J here, unlike classic
    ("AS JS TS 9S", 0),
    ("TS 9S 8S 7S", 0),
    ("7S AH AD AC", 0),
]


@pytest.mark.parametrize("variant", ["ace-high", "slobberhannes"])
@pytest.mark.parametrize(("trick", "winner"), ACE_HIGH_TRICKS + adjacent_pairs(ACE_HIGH_ORDER))
def test_ace_high_trick_winner_a_k_q_j_10_9_8_7(variant: str, trick: str, winner: int) -> None:
    match = first_trick_match(preset(variant), trick)
    assert match.tricks[0].winner == winner
    assert match.to_act == winner


def test_same_cards_different_winner_in_classic_and_ace_high() -> None:
    # W's first trick: AS 8S QS JS.  Classic: QS (seat 2) wins; ace-high: AS (seat 0) wins.
    classic = Match(NO_CONTRACTS, 1, deals={1: W})
    play(classic, "AS 8S QS JS")
    assert classic.tricks[0].winner == 2
    ace_high = Match(preset("ace-high"), 1, deals={1: W})
    play(ace_high, "pass pass pass pass AS 8S QS JS")
    assert ace_high.tricks[0].winner == 0


def test_winner_of_each_trick_leads_the_next() -> None:
    match = Match(CLASSIC, 1, start_totals=[0, 0, 0, 0], deals={1: V})
    pass_all(match)
    play(match, V_PLAY)
    won = [e for e in match.events if isinstance(e, TrickWon)]
    assert [e.trick_number for e in won] == list(range(1, 9))
    assert [e.winner for e in won] == V_WINNERS
    assert [e.leader for e in won] == V_LEADERS
    assert [e.leader for e in won[1:]] == [e.winner for e in won[:-1]]


# == docs/rules.md 5: follow suit; discard anything when void ==================================


def snapshot(match: Match) -> tuple[Any, ...]:
    return (
        json.dumps(match.record(), sort_keys=True),
        [texts(match.hand(s)) for s in range(match.players)],
        match.to_act,
        match.phase,
        match.current_trick,
        match.tricks,
        match.event_count,
        match.totals,
        match.legal_decisions(),
    )


def test_must_follow_suit_and_an_illegal_card_changes_nothing() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    pass_all(match)
    play(match, "7S")
    assert texts(match.legal_cards()) == {"9S", "TS"}  # seat 1 holds 9S TS 9H TH 9D TD 9C TC
    assert match.legal_decisions() == [Card.parse("9S"), Card.parse("TS")]
    before = snapshot(match)
    for bad in ("9H", "TC", "9D"):
        assert not match.is_legal(Card.parse(bad))
        with pytest.raises(IllegalDecision):
            match.apply_text(bad)
        with pytest.raises(IllegalDecision):
            match.apply(Card.parse(bad))
        assert snapshot(match) == before
    play(match, "9S")
    assert match.current_trick == ((0, Card.parse("7S")), (1, Card.parse("9S")))


def test_a_card_not_held_is_illegal_and_changes_nothing() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    pass_all(match)
    before = snapshot(match)
    for bad in ("9S", "JS", "AC"):  # all held by other seats
        with pytest.raises(IllegalDecision):
            match.apply_text(bad)
    for bad in ("XS", "", "capot", "pass"):  # malformed, or an auction decision during play
        with pytest.raises(IllegalDecision):
            match.apply_text(bad)
    for raw in ("JS", None, 4, Contract.PASS):  # not a Card at all, or a contract during play
        with pytest.raises(IllegalDecision):
            match.apply(raw)  # type: ignore[arg-type]  # not a decision, on purpose
    assert snapshot(match) == before


def test_a_card_during_the_auction_is_illegal() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    before = snapshot(match)
    with pytest.raises(IllegalDecision):
        match.apply_text("7S")
    assert snapshot(match) == before


def test_void_player_may_discard_any_card_a_penalty_card_included() -> None:
    match = Match(CLASSIC, 1, deals={1: SEG})
    pass_all(match)
    play(match, "7S")
    assert texts(match.legal_cards()) == cards_of(SEG[1])  # void in spades: any heart
    assert texts(match.legal_decisions()) == cards_of(SEG[1])
    play(match, "JH")
    assert texts(match.legal_cards()) == cards_of(SEG[2])
    play(match, "JD")
    play(match, "JC")
    assert match.tricks[0].winner == 0
    finish_hand(match)
    assert hand_ended(match, 1).scores == (5, 0, 0, 0)


def test_leader_may_lead_any_card() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    pass_all(match)
    assert texts(match.legal_cards()) == cards_of(V[0])


# == docs/rules.md 6: scoring penalty cards ======================================================


def test_classic_jacks_js_2_others_1() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    play(match, "pass pass pass pass", V_PLAY)
    end = hand_ended(match, 1)
    assert end.scores == (0, 0, 2, 3)  # seat 2 took JS; seat 3 took JD JH JC
    assert sum(end.scores) == 5
    assert end.totals == (0, 0, 2, 3)
    assert (end.contract, end.declarer, end.contract_made) == (Contract.PASS, None, None)


def test_classic_jacks_split_four_and_one() -> None:
    match = Match(CLASSIC, 1, deals={1: CF})
    play(match, "pass pass pass pass", CF_PLAY)
    assert hand_ended(match, 1).scores == (4, 1, 0, 0)  # seat 0: JS JD JC; seat 1: JH


def test_one_player_taking_all_jacks_scores_5() -> None:
    match = Match(CLASSIC, 1, deals={1: SEG})
    play(match, "pass pass pass pass", SEG_PLAY)
    assert hand_ended(match, 1).scores == (5, 0, 0, 0)


def test_totals_accumulate_over_hands() -> None:
    match = Match(CLASSIC, 1, start_totals=[1, 2, 3, 4], deals={1: V})
    play(match, "pass pass pass pass", V_PLAY)
    assert match.totals == (1, 2, 5, 7)
    assert match.hand_number == 2
    assert not match.is_over


# == docs/rules.md 4: contracts ================================================================


def test_auction_options() -> None:
    assert Match(CLASSIC, 1).legal_decisions() == [Contract.PASS, Contract.CAPOT]
    assert Match(WITH_GENERAL, 1).legal_decisions() == [Contract.PASS, Contract.CAPOT, Contract.GENERAL]
    general_only = CLASSIC.with_changes(capot=False, general=True)
    assert Match(general_only, 1).legal_decisions() == [Contract.PASS, Contract.GENERAL]


def test_disabled_contract_is_illegal() -> None:
    match = Match(CLASSIC, 1, deals={1: S1})
    before = snapshot(match)
    with pytest.raises(IllegalDecision):
        match.apply_text("general")
    assert snapshot(match) == before
    only_general = Match(CLASSIC.with_changes(capot=False, general=True), 1, deals={1: S1})
    with pytest.raises(IllegalDecision):
        only_general.apply_text("capot")


def test_auction_everyone_asked_once_from_eldest() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    first_phase = match.phase  # a local: mypy would keep match.phase narrowed past the decisions below
    assert first_phase is Phase.AUCTION
    seats_asked = []
    for _ in range(4):
        seats_asked.append(match.to_act)
        match.apply_text("pass")
    assert seats_asked == [0, 1, 2, 3]
    assert match.auction == tuple((s, Contract.PASS) for s in range(4))
    assert match.phase is Phase.PLAY
    assert match.to_act == 0  # eldest leads
    assert match.contract is Contract.PASS
    assert match.declarer is None


def test_first_declaration_ends_the_auction() -> None:
    match = Match(CLASSIC, 1, deals={1: S1})
    play(match, "pass capot")
    assert match.auction == ((0, Contract.PASS), (1, Contract.CAPOT))
    assert [(e.seat, e.contract) for e in of_type(match, Declared)] == [(0, Contract.PASS), (1, Contract.CAPOT)]
    assert match.phase is Phase.PLAY  # seats 2 and 3 are not asked
    assert match.contract is Contract.CAPOT
    assert match.declarer == 1
    assert match.to_act == 0  # eldest leads to the first trick, not the declarer
    with pytest.raises(IllegalDecision):
        match.apply_text("pass")


def test_eldest_declaring_ends_the_auction_at_once() -> None:
    match = Match(WITH_GENERAL, 1, deals={1: SEG})
    play(match, "general")
    assert match.auction == ((0, Contract.GENERAL),)
    assert match.phase is Phase.PLAY
    assert match.to_act == 0


@pytest.mark.parametrize("rules", [NO_CONTRACTS, CLASSIC.with_changes(capot=False, general=False)])
def test_no_auction_when_both_contracts_are_off(rules: Ruleset) -> None:
    match = Match(rules, 1, deals={1: V})
    assert match.phase is Phase.PLAY
    assert match.to_act == 0
    assert texts(match.legal_decisions()) == cards_of(V[0])
    for text in ("pass", "capot", "general"):
        with pytest.raises(IllegalDecision):
            match.apply_text(text)
    play(match, V_PLAY)
    assert of_type(match, Declared) == []
    end = hand_ended(match, 1)
    assert end.scores == (0, 0, 2, 3)
    assert end.contract is Contract.PASS
    assert match.phase is Phase.PLAY  # hand 2 starts without an auction too


def test_capot_success_opponents_5_declarer_0() -> None:
    match = Match(CLASSIC, 1, deals={1: S1})
    play(match, "pass capot", S1_PLAY)
    end = hand_ended(match, 1)
    assert (end.contract, end.declarer, end.contract_made) == (Contract.CAPOT, 1, True)
    assert end.scores == (5, 0, 5, 5)
    assert match.totals == (5, 0, 5, 5)


def test_capot_success_by_eldest() -> None:
    match = Match(CLASSIC, 1, start_totals=[3, 0, 0, 0], deals={1: SEG})
    play(match, "capot", SEG_PLAY)
    assert hand_ended(match, 1).scores == (0, 5, 5, 5)
    assert match.totals == (3, 5, 5, 5)


def test_capot_failure_declarer_5_plus_its_cards_others_their_cards() -> None:
    match = Match(CLASSIC, 1, deals={1: CF})
    play(match, "capot", CF_PLAY)
    end = hand_ended(match, 1)
    assert (end.contract, end.declarer, end.contract_made) == (Contract.CAPOT, 0, False)
    assert end.scores == (5 + 4, 1, 0, 0)


def test_failed_contract_is_played_to_the_last_trick() -> None:
    # Seat 1 declares capot but seat 0 (eldest, all spades) wins the first trick: the hand goes on.
    match = Match(CLASSIC, 1, deals={1: SEG})
    play(match, "pass capot")
    play(match, SEG_PLAY.split("|")[0])
    assert match.tricks[0].winner == 0
    assert match.phase is Phase.PLAY and match.hand_number == 1
    play(match, "|".join(SEG_PLAY.split("|")[1:]))
    assert len(of_type(match, TrickWon)) == 8
    end = hand_ended(match, 1)
    assert end.contract_made is False
    assert end.scores == (5, 5, 0, 0)  # seat 0 took all Jacks; seat 1 took nothing: 5 + 0


def test_general_success_declarer_minus_5_and_totals_below_zero() -> None:
    match = Match(WITH_GENERAL, 1, start_totals=[0, 3, 0, 0], deals={1: S1})
    play(match, "pass general", S1_PLAY)
    end = hand_ended(match, 1)
    assert (end.contract, end.declarer, end.contract_made) == (Contract.GENERAL, 1, True)
    assert end.scores == (5, -5, 5, 5)
    assert match.totals == (5, -2, 5, 5)


def test_general_failure_as_for_capot() -> None:
    match = Match(WITH_GENERAL, 1, deals={1: CF})
    play(match, "general", CF_PLAY)
    end = hand_ended(match, 1)
    assert (end.contract, end.declarer, end.contract_made) == (Contract.GENERAL, 0, False)
    assert end.scores == (9, 1, 0, 0)


def test_contract_points_setting() -> None:
    rules = WITH_GENERAL.with_changes(contract_points=7)
    won = Match(rules, 1, deals={1: S1})
    play(won, "pass general", S1_PLAY)
    assert hand_ended(won, 1).scores == (7, -5, 7, 7)  # the declarer's bonus is general_points, not -contract_points
    lost = Match(rules, 1, deals={1: CF})
    play(lost, "capot", CF_PLAY)
    assert hand_ended(lost, 1).scores == (11, 1, 0, 0)


@pytest.mark.parametrize(("general_points", "contract_points"), [(-5, 5), (-12, 5), (0, 7), (3, 2)])
def test_a_made_general_scores_general_points_and_the_opponents_contract_points(general_points: int, contract_points: int) -> None:
    rules = WITH_GENERAL.with_changes(general_points=general_points, contract_points=contract_points)
    won = Match(rules, 1, start_totals=[0, 3, 0, 0], deals={1: S1})
    play(won, "pass general", S1_PLAY)
    end = hand_ended(won, 1)
    assert end.contract_made is True
    assert end.scores == (contract_points, general_points, contract_points, contract_points)
    assert won.totals[1] == 3 + general_points
    capot = Match(rules, 1, deals={1: S1})
    play(capot, "pass capot", S1_PLAY)
    assert hand_ended(capot, 1).scores == (contract_points, 0, contract_points, contract_points)  # capot: no bonus
    failed = Match(rules, 1, deals={1: CF})
    play(failed, "general", CF_PLAY)
    assert hand_ended(failed, 1).scores == (contract_points + 4, 1, 0, 0)  # a failed general: as for capot


def test_general_points_is_a_setting_of_its_own_with_bounds() -> None:
    assert preset("classic").general_points == -5 and preset("classic").contract_points == 5
    assert Ruleset.from_dict({"general": True, "general_points": -20}).general_points == -20
    for bad in (-101, 101, 2.5, "5", True):
        with pytest.raises(RulesetError, match="general_points"):
            Ruleset.from_dict({"general_points": bad})
    assert Ruleset.from_dict(preset("classic", general=True, general_points=-9).to_dict()).general_points == -9


def test_a_record_from_before_general_points_scores_a_made_general_as_it_did() -> None:
    rules = WITH_GENERAL.with_changes(contract_points=7)
    match = Match(rules, 1, deals={1: S1})
    play(match, "pass general", S1_PLAY)
    record = match.record()
    del record["rules"]["general_points"]  # as engine 1.0 wrote it
    replayed = Match.from_record(record)
    assert replayed.rules.general_points == -7
    assert hand_ended(replayed, 1).scores == (7, -7, 7, 7)  # what engine 1.0 scored


# == docs/rules.md 10: variants ==================================================================

VARIANT_CASES = [
    # (variant, deal, decisions, scores)
    ("classic", V, "pass pass pass pass " + V_PLAY, (0, 0, 2, 3)),
    ("no-contracts", V, V_PLAY, (0, 0, 2, 3)),
    # quatre-valets: every Jack 1
    ("quatre-valets", V, "pass pass pass pass " + V_PLAY, (0, 0, 1, 3)),
    ("quatre-valets", CF, "pass pass pass pass " + CF_PLAY, (3, 1, 0, 0)),
    ("quatre-valets", CF, "capot " + CF_PLAY, (5 + 3, 1, 0, 0)),
    # ace-high: QS 2, other Queens 1, Jacks nothing
    ("ace-high", W, "pass pass pass pass " + W_PLAY, (2, 2, 1, 0)),
    ("ace-high", CF, "pass pass pass pass " + CF_PLAY, (5, 0, 0, 0)),
    ("ace-high", CF, "capot " + CF_PLAY, (5 + 5, 0, 0, 0)),
    ("ace-high", SEG, "capot " + SEG_PLAY, (0, 5, 5, 5)),
    # slobberhannes: first trick, last trick, QC 1 each
    ("slobberhannes", W, "pass pass pass pass " + W_PLAY, (1, 1, 1, 0)),
    ("slobberhannes", SLOB, "pass pass pass pass " + SLOB_PLAY, (3, 0, 0, 0)),
    ("slobberhannes", SLOB, "capot " + SLOB_PLAY, (5 + 3, 0, 0, 0)),
    ("slobberhannes", SEG, "capot " + SEG_PLAY, (0, 5, 5, 5)),
    ("slobberhannes", CF, "pass pass pass pass " + CF_PLAY, (2, 1, 0, 0)),  # QC in trick 6; seat 1 last trick
]


@pytest.mark.parametrize(("variant", "deal", "decisions", "scores"), VARIANT_CASES)
def test_variant_scoring(variant: str, deal: list[str], decisions: str, scores: tuple[int, ...]) -> None:
    match = Match(preset(variant), 1, deals={1: deal})
    play(match, decisions)
    assert hand_ended(match, 1).scores == scores
    assert match.totals == scores


def test_ace_high_queens_in_trick_order() -> None:
    match = Match(preset("ace-high"), 1, deals={1: W})
    play(match, "pass pass pass pass", W_PLAY)
    assert [e.winner for e in of_type(match, TrickWon)] == W_WINNERS


# == docs/rules.md 2 and 3: pack, seats, deal ====================================================


@pytest.mark.parametrize(
    ("cards_each", "packets"), [(8, (3, 2, 3)), (10, (3, 2, 3, 2)), (6, (3, 3)), (5, (3, 2)), (15, (3, 2, 3, 2, 3, 2))]
)
def test_packet_sizes(cards_each: int, packets: tuple[int, ...]) -> None:
    assert packet_sizes(cards_each) == packets
    assert sum(packets) == cards_each


def test_no_packet_scheme_for_other_sizes() -> None:
    for bad in (0, 7, 9, 16, 32):
        with pytest.raises(PolignacError):
            packet_sizes(bad)


DEAL_HANDS_CASES = [
    # 4 players, 3-2-3: positions 0-2 to the first seat, 3-5, 6-8, 9-11; then 12-13, ...; then 20-22, ...
    (32, [0, 1, 2, 3], (3, 2, 3), {0: {0, 1, 2, 12, 13, 20, 21, 22}, 3: {9, 10, 11, 18, 19, 29, 30, 31}}),
    (32, [1, 2, 3, 0], (3, 2, 3), {1: {0, 1, 2, 12, 13, 20, 21, 22}, 0: {9, 10, 11, 18, 19, 29, 30, 31}}),
    # 3 players, 3-2-3-2
    (30, [0, 1, 2], (3, 2, 3, 2), {0: {0, 1, 2, 9, 10, 15, 16, 17, 24, 25}, 2: {6, 7, 8, 13, 14, 21, 22, 23, 28, 29}}),
    # 5 players, 3-3
    (30, [0, 1, 2, 3, 4], (3, 3), {0: {0, 1, 2, 15, 16, 17}, 4: {12, 13, 14, 27, 28, 29}}),
    # 6 players, 3-2
    (30, [0, 1, 2, 3, 4, 5], (3, 2), {0: {0, 1, 2, 18, 19}, 5: {15, 16, 17, 28, 29}}),
    # 2 players (tie-break), 3-2-3-2-3-2
    (30, [1, 0], (3, 2, 3, 2, 3, 2), {1: {0, 1, 2, 6, 7, 10, 11, 12, 16, 17, 20, 21, 22, 26, 27}}),
]


@pytest.mark.parametrize(("size", "order", "packets", "expected"), DEAL_HANDS_CASES)
def test_deal_hands_packets_from_eldest(size: int, order: list[int], packets: tuple[int, ...], expected: dict[int, set[int]]) -> None:
    pack = list(range(size))
    hands = deal_hands(pack, order, packets)
    assert set(hands) == set(order)
    for seat, positions in expected.items():
        assert hands[seat] == sum(1 << p for p in positions)
    union = 0
    for mask in hands.values():
        assert mask & union == 0
        union |= mask
    assert union == (1 << size) - 1


def test_deal_hands_refuses_packets_that_do_not_use_the_pack() -> None:
    with pytest.raises(PolignacError):
        deal_hands(list(range(32)), [0, 1, 2, 3], (3, 2, 2))


@pytest.mark.parametrize(
    ("players", "removed_sevens", "out"),
    [
        (3, "black", {"7S", "7C"}),
        (5, "black", {"7S", "7C"}),
        (6, "black", {"7S", "7C"}),
        (3, "red", {"7H", "7D"}),
        (5, "red", {"7H", "7D"}),
        (6, "red", {"7H", "7D"}),
        (4, "black", set()),
        (4, "red", set()),
    ],
)
def test_pack_and_cards_each(players: int, removed_sevens: str, out: set[str]) -> None:
    rules = preset("classic", players=players, removed_sevens=removed_sevens)
    cards_each = {3: 10, 4: 8, 5: 6, 6: 5}[players]
    for seed in (0, 1, 2**64 - 1):
        match = Match(rules, seed)
        union: set[str] = set()
        for seat in range(players):
            hand = texts(match.hand(seat))
            assert len(hand) == cards_each
            assert not hand & union
            union |= hand
        assert union == set(ALL_TEXTS) - out
    pass_all(match)
    finish_hand(match)
    assert len(of_type(match, TrickWon)) == cards_each  # one trick per card held


def test_a_given_deal_must_fit_the_pack() -> None:
    three = preset("classic", players=3)
    seven_of_spades = ["7S 8S 9S TS JS QS KS AS 7H 8H", "9H TH JH QH KH AH 7D 8D 9D TD", "JD QD KD AD 8C 9C TC JC QC KC"]
    with pytest.raises(PolignacError):
        Match(three, 1, deals={1: seven_of_spades})
    with pytest.raises(PolignacError):  # 7 cards for one seat
        Match(CLASSIC, 1, deals={1: ["7S 8S 9S TS JS QS KS", *SEG[1:]]})
    with pytest.raises(PolignacError):  # a card twice
        Match(CLASSIC, 1, deals={1: [SEG[0], SEG[0], SEG[2], SEG[3]]})
    with pytest.raises(PolignacError):  # three hands for four seats
        Match(CLASSIC, 1, deals={1: SEG[:3]})


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_seeded_deal_is_the_documented_generator_dealt_from_eldest(players: int) -> None:
    rules = preset("classic", players=players, limit=10_000)
    seed = 123_456_789
    match = Match(rules, seed)
    for hand_number in (1, 2, 3):
        dealer = (players - 1 + hand_number - 1) % players
        order = [(dealer + 1 + i) % players for i in range(players)]
        pack = reference_pack(seed, hand_number, pack_texts(players))
        expected = reference_deal(pack, order, packet_sizes(len(pack) // players))
        assert match.hand_number == hand_number
        for seat in range(players):
            assert texts(match.hand(seat)) == expected[seat]
        pass_all(match)
        finish_hand(match)


def test_engine_shuffle_matches_the_specification() -> None:
    for seed, hand_number in [(0, 1), (1, 1), (7, 3), (2**64 - 1, 2**32 - 1), (99, 12)]:
        for players in (3, 4):
            texts_pack = pack_texts(players)
            deck = sum(1 << ALL_TEXTS.index(t) for t in texts_pack)
            engine = [str(CARDS[i]) for i in shuffled_pack(seed, hand_number, deck)]
            assert engine == reference_pack(seed, hand_number, texts_pack)


def test_deal_is_a_pure_function_of_seed_and_hand_number() -> None:
    a, b, c = Match(CLASSIC, 42), Match(CLASSIC, 42), Match(CLASSIC, 43)
    assert [texts(a.hand(s)) for s in range(4)] == [texts(b.hand(s)) for s in range(4)]
    assert [texts(a.hand(s)) for s in range(4)] != [texts(c.hand(s)) for s in range(4)]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_dealer_rotation_and_eldest_speaks_and_leads(players: int) -> None:
    rules = preset("classic", players=players, limit=10_000)
    match = Match(rules, 5)
    for hand_number in range(1, 2 * players + 2):
        dealer = (players - 1 + hand_number - 1) % players  # seat n-1 first, then to the left
        eldest = (dealer + 1) % players
        assert match.hand_number == hand_number
        assert match.dealer == dealer
        assert match.eldest == eldest
        assert match.seats == tuple(range(players))
        asked = []
        while match.phase is Phase.AUCTION:
            asked.append(match.to_act)
            match.apply_text("pass")
        assert asked == [(eldest + i) % players for i in range(players)]
        assert match.to_act == eldest
        first_card = len(match.events)
        finish_hand(match)
        first_play = next(e for e in match.events[first_card:] if isinstance(e, CardPlayed))
        assert first_play.seat == eldest
    dealt = of_type(match, HandDealt)
    assert [e.dealer for e in dealt] == [(players - 1 + i) % players for i in range(len(dealt))]


# == docs/rules.md 7: end of the match and standings ============================================


@pytest.mark.parametrize(
    ("limit", "start", "over", "places"),
    [
        (20, [1, 0, 17, 4], False, None),  # seat 2 ends on 19
        (20, [1, 0, 18, 4], True, (2, 1, 4, 3)),  # reaches 20
        (20, [1, 0, 19, 4], True, (2, 1, 4, 3)),  # passes: 21
        (20, [1, 0, 0, 17], True, (2, 1, 3, 4)),  # seat 3 reaches 20
        (10, [1, 0, 7, 4], False, None),  # 9
        (10, [1, 0, 8, 4], True, (2, 1, 4, 3)),  # reaches 10
        (10, [1, 0, 0, 7], True, (2, 1, 3, 4)),  # seat 3 reaches 10
        (10, [1, 0, 15, 4], True, (2, 1, 4, 3)),
    ],
)
def test_match_ends_when_a_total_reaches_the_limit(limit: int, start: list[int], over: bool, places: tuple[int, ...] | None) -> None:
    match = Match(CLASSIC.with_changes(limit=limit), 1, start_totals=start, deals={1: V})
    play(match, "pass pass pass pass", V_PLAY)  # scores (0, 0, 2, 3)
    assert match.totals == (start[0], start[1], start[2] + 2, start[3] + 3)
    assert match.is_over is over
    assert match.places == places
    if over:
        assert match.to_act is None
        assert match.phase is Phase.OVER
        assert match.legal_decisions() == []
        assert summary(match, MatchEnded, "places", "totals") == [(places, match.totals)]
        with pytest.raises(IllegalDecision):
            match.apply_text("7S")
        with pytest.raises(IllegalDecision):
            match.fallback()
    else:
        assert match.hand_number == 2
        assert match.dealer == 0


def test_standings_ties_for_other_places_stand() -> None:
    match = Match(NO_CONTRACTS, 1, start_totals=[20, 0, 4, 3], deals={1: V})
    play(match, V_PLAY)
    assert match.totals == (20, 0, 6, 6)
    assert match.is_over
    assert of_type(match, TiebreakStarted) == []
    # Seats 2 and 3 share second place; seat 0 is fourth (places counted as 1 + number of better players).
    assert match.places == (4, 1, 2, 2)


def test_standings_ascending_lower_is_better() -> None:
    match = Match(NO_CONTRACTS, 1, start_totals=[9, 30, 0, 12], deals={1: V})
    play(match, V_PLAY)
    assert match.totals == (9, 30, 2, 15)
    assert match.places == (2, 4, 1, 3)


# -- tie-breaks ------------------------------------------------------------------------------


def test_two_player_tiebreak() -> None:
    # Hand 1 (dealer 3): V scores (0, 0, 2, 3): totals (5, 5, 20, 13): seats 0 and 1 tie for first.
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY)
    assert match.totals == (5, 5, 20, 13)
    assert not match.is_over
    assert match.is_tiebreak
    assert tiebreaks(match) == [((0, 1), 1)]
    assert match.hand_number == 2
    assert match.seats == (0, 1)
    # The next dealer in rotation is seat 0, which is tied: it deals, seat 1 is eldest.
    assert match.dealer == 0
    assert match.eldest == 1
    assert match.to_act == 1
    # Contracts are off.
    assert match.phase is Phase.PLAY
    with pytest.raises(IllegalDecision):
        match.apply_text("capot")
    assert texts(match.hand(0)) == cards_of(TB_SEAT0)
    assert texts(match.hand(2)) == set() and texts(match.hand(3)) == set()
    play(match, TB_PLAY)
    end = hand_ended(match, 2)
    assert end.tiebreak is True
    assert (end.scores[0], end.scores[1]) == (0, 5)
    assert end.totals == (5, 5, 20, 13)  # tie-break points do not enter the totals
    assert match.totals == (5, 5, 20, 13)
    assert match.is_over
    assert match.places == (1, 2, 4, 3)


def test_two_player_tiebreak_uses_30_cards_15_each() -> None:
    for removed_sevens, out in (("black", {"7S", "7C"}), ("red", {"7H", "7D"})):
        rules = CLASSIC.with_changes(removed_sevens=removed_sevens)
        seed = 2024
        match = Match(rules, seed, start_totals=[5, 5, 18, 10], deals={1: V})
        play(match, "pass pass pass pass", V_PLAY)
        assert match.seats == (0, 1)
        hands = {s: texts(match.hand(s)) for s in (0, 1)}
        assert len(hands[0]) == len(hands[1]) == 15
        assert hands[0] | hands[1] == set(ALL_TEXTS) - out
        # Seeded like any hand (hand number 2), dealt 3-2-3-2-3-2 from eldest (seat 1).
        pack = reference_pack(seed, 2, [t for t in ALL_TEXTS if t not in out])
        assert hands == reference_deal(pack, [1, 0], (3, 2, 3, 2, 3, 2))
        finish_hand(match)
        assert len([e for e in of_type(match, TrickWon)]) == 8 + 15


def tie_match(tied: Sequence[int], deals: dict[int, list[str]] | None = None, **kw: Any) -> Match:
    """Hand 1 (dealer 3, SEG, all pass: seat 0 scores 5) leaves exactly ``tied`` sharing first on 5."""
    start = [0 if 0 in tied else 15] + [5 if s in tied else 20 for s in (1, 2, 3)]
    rules = CLASSIC.with_changes(limit=5, **kw)
    match = Match(rules, 1, start_totals=start, deals={1: SEG, **(deals or {})})
    play(match, "pass pass pass pass", SEG_PLAY)
    assert [s for s in range(4) if match.totals[s] == 5] == list(tied)
    return match


@pytest.mark.parametrize(
    ("tied", "dealer", "eldest"),
    [
        ((0, 1), 0, 1),
        ((0, 2), 0, 2),
        ((0, 3), 0, 3),
        ((1, 2), 1, 2),  # seat 0 would deal next but is not tied: the next tied player to its left
        ((1, 3), 1, 3),
        ((2, 3), 2, 3),
        ((1, 2, 3), 1, 2),
        ((0, 2, 3), 0, 2),
        ((0, 1, 2, 3), 0, 1),
    ],
)
def test_tiebreak_seats_dealer_and_pack(tied: tuple[int, ...], dealer: int, eldest: int) -> None:
    match = tie_match(tied)
    assert match.is_tiebreak and not match.is_over
    assert match.seats == tied  # table order
    assert match.dealer == dealer
    assert match.eldest == eldest
    assert match.to_act == eldest
    assert match.phase is Phase.PLAY
    cards_each = {2: 15, 3: 10, 4: 8}[len(tied)]
    union: set[str] = set()
    for seat in range(4):
        hand = texts(match.hand(seat))
        assert len(hand) == (cards_each if seat in tied else 0)
        union |= hand
    assert union == (set(ALL_TEXTS) if len(tied) == 4 else set(ALL_TEXTS) - {"7S", "7C"})
    dealt = of_type(match, HandDealt)[-1]
    assert (dealt.hand_number, dealt.dealer, dealt.seats, dealt.tiebreak) == (2, dealer, tied, True)


def test_tiebreak_dealer_after_a_later_hand() -> None:
    # Hand 1 (dealer 3): SEG, seat 0 takes 5.  Hand 2 (dealer 0, eldest 1 leads hearts): seat 1 takes 5.
    # Totals (5, 21, 19, 5): seats 0 and 3 tie.  Next in rotation after dealer 0: seat 1, 2 (not
    # tied), then 3: seat 3 deals, seat 0 is eldest.
    match = Match(CLASSIC, 1, start_totals=[0, 16, 19, 5], deals={1: SEG, 2: SEG})
    play(match, "pass pass pass pass", SEG_PLAY)
    assert match.totals == (5, 16, 19, 5)
    pass_all(match)
    finish_hand(match)
    assert match.totals == (5, 21, 19, 5)
    assert match.seats == (0, 3)
    assert (match.dealer, match.eldest, match.to_act) == (3, 0, 0)


# Tie-break among seats 1, 2, 3 (30 cards, 10 each), hand 2, dealer 1, eldest 2.  Seat 1 wins
# every trick and takes all four Jacks (5); seats 2 and 3 score 0 and stay tied.
TB3 = [
    "KD QD 7H 8H 9H TH JH QH KH AH",
    "7D 8D 9D TD JD AD 8S 9S TS JS",
    "QS KS AS 8C 9C TC JC QC KC AC",
]
TB3_PLAY = " | ".join(
    [
        "JD 8C KD",  # led by 2 (eldest); KD: seat 1 takes JD
        "QD 7D 9C",  # led by 1; seat 2 must follow diamonds
        "7H JS TC",  # seat 1 takes JS
        "8H 8S JC",  # seat 1 takes JC
        "9H 9S QS",
        "TH TS KS",
        "JH 8D AS",  # seat 1 takes its own JH
        "QH 9D QC",
        "KH TD KC",
        "AH AD AC",
    ]
)
# Hand 3: seats 2 and 3, dealer 2 (the deal passes left from seat 1), eldest 3.  Seat 3 leads
# spades and hearts, seat 2 holds none: seat 3 wins every trick and takes all Jacks.
TB2_SEAT2 = "7D 8D 9D TD JD QD KD AD 8C 9C TC JC QC KC AC"
TB2_SEAT3 = "8S 9S TS JS QS KS AS 7H 8H 9H TH JH QH KH AH"


def three_way_tie(**kw: Any) -> Match:
    rules = CLASSIC.with_changes(**kw)
    match = Match(rules, 1, start_totals=[15, 3, 3, 3], deals={1: SEG, 2: TB3, 3: [TB2_SEAT2, TB2_SEAT3]})
    play(match, "pass pass pass pass", SEG_PLAY)
    assert match.totals == (20, 3, 3, 3)
    return match


def test_three_way_tiebreak_narrows_and_losers_share_the_next_place() -> None:
    match = three_way_tie()
    assert (match.seats, match.dealer, match.eldest) == ((1, 2, 3), 1, 2)
    assert all(len(match.hand(s)) == 10 for s in (1, 2, 3))
    play(match, TB3_PLAY)
    end = hand_ended(match, 2)
    assert (end.scores[1], end.scores[2], end.scores[3]) == (5, 0, 0)
    # Only the players still sharing the lowest score play on.
    assert tiebreaks(match) == [((1, 2, 3), 1), ((2, 3), 2)]
    assert match.hand_number == 3
    assert (match.seats, match.dealer, match.eldest) == ((2, 3), 2, 3)
    assert all(len(match.hand(s)) == 15 for s in (2, 3))
    assert match.phase is Phase.PLAY
    play(match, interleave(TB2_SEAT3, TB2_SEAT2))
    end = hand_ended(match, 3)
    assert (end.scores[2], end.scores[3]) == (0, 5)
    assert match.totals == (20, 3, 3, 3)
    assert match.is_over
    # Seat 2 first; seats 1 and 3 both lost the tie-break and share second; seat 0 fourth.
    assert match.places == (4, 2, 1, 2)


@pytest.mark.parametrize("tiebreak_hands", [0, 1, 2, 3, 5])
def test_tiebreak_hands_limit_then_shared_first(tiebreak_hands: int) -> None:
    # No penalty cards: every hand scores 0, so the tied players stay tied.
    rules = CLASSIC.with_changes(penalty_cards={}, tiebreak_hands=tiebreak_hands)
    match = Match(rules, 3, start_totals=[20, 20, 25, 30])
    finish_match(match)
    started = of_type(match, TiebreakStarted)
    assert [e.round for e in started] == list(range(1, tiebreak_hands + 1))
    assert all(e.seats == (0, 1) for e in started)
    assert match.hand_number == 1 + tiebreak_hands
    assert match.places == (1, 1, 3, 4)
    assert match.totals == (20, 20, 25, 30)
    # Further tie-break hands pass the deal to the left (among the tied players): 0, 1, 0, 1, ...
    assert [e.dealer for e in of_type(match, HandDealt)] == [3] + [i % 2 for i in range(tiebreak_hands)]
    assert all(e.tiebreak for e in of_type(match, HandDealt)[1:])


def test_default_is_at_most_three_tiebreak_hands() -> None:
    rules = CLASSIC.with_changes(penalty_cards={})
    match = Match(rules, 3, start_totals=[20, 20, 20, 30])
    finish_match(match)
    assert len(of_type(match, TiebreakStarted)) == 3
    assert match.places == (1, 1, 1, 4)


# Tie-break among seats 1, 2, 3 (dealer 1, eldest 2) that seat 2 wins outright: seat 3 takes
# JS, JH, JD (4), seat 1 takes JC in the last trick (1), seat 2 takes nothing.
TB3_ONE_WINNER = [
    "7H 8H 9H TH JH QH KH AH JS QS",
    "8S 9S TS 8C 9C TC JC QC KC AC",
    "KS AS 7D 8D 9D TD JD QD KD AD",
]
TB3_ONE_WINNER_PLAY = " | ".join(
    [
        "8S KS JS",  # led by 2; KS: seat 3 takes JS
        "7D JH 9S",  # led by 3 (then 1, 2); seat 3 takes JH
        "8D 7H TS",
        "9D 8H 8C",
        "TD 9H 9C",
        "JD TH TC",  # seat 3 takes its own JD
        "QD QH QC",
        "KD KH KC",
        "AD AH AC",
        "AS QS JC",  # QS beats AS; seat 2 holds no spade and throws JC: seat 1 takes it
    ]
)


def test_three_tied_one_wins_the_others_share_second() -> None:
    match = tie_match((1, 2, 3), deals={2: TB3_ONE_WINNER})
    assert (match.seats, match.dealer, match.eldest) == ((1, 2, 3), 1, 2)
    play(match, TB3_ONE_WINNER_PLAY)
    end = hand_ended(match, 2)
    assert (end.scores[1], end.scores[2], end.scores[3]) == (1, 0, 4)
    assert match.is_over
    assert len(of_type(match, TiebreakStarted)) == 1
    assert match.places == (4, 2, 1, 2)
    assert match.totals == (20, 5, 5, 5)


# == docs/rules.md 8: penalties, fallback, forfeit =============================================


def test_penalty_scored_at_the_end_of_a_hand_without_contract() -> None:
    match = Match(CLASSIC, 1, start_totals=[1, 1, 1, 1], deals={1: V})
    match.add_penalty(3, 2, "timeout")  # during the auction
    pass_all(match)
    play(match, V_PLAY.split("|")[0], V_PLAY.split("|")[1])
    match.add_penalty(0, 5, "revoke")
    assert match.penalties == (5, 0, 0, 2)
    assert match.totals == (1, 1, 1, 1)  # not yet
    assert summary(match, PenaltyAdded, "seat", "points", "reason") == [(3, 2, "timeout"), (0, 5, "revoke")]
    play(match, "|".join(V_PLAY.split("|")[2:]))
    assert hand_ended(match, 1).scores == (5, 0, 2, 5)
    assert match.totals == (6, 1, 3, 6)
    assert match.penalties == (0, 0, 0, 0)  # the new hand starts clean


def test_penalties_add_up() -> None:
    match = Match(NO_CONTRACTS, 1, deals={1: V})
    match.add_penalty(1, 5, "revoke")
    match.add_penalty(1, 5, "revoke")
    match.add_penalty(1, 0, "timeout")
    play(match, V_PLAY)
    assert hand_ended(match, 1).scores == (0, 10, 2, 3)


def test_penalty_with_a_successful_contract() -> None:
    match = Match(CLASSIC, 1, deals={1: S1})
    play(match, "pass capot")
    match.add_penalty(1, 5, "revoke")
    match.add_penalty(3, 2, "revoke")
    play(match, S1_PLAY)
    assert hand_ended(match, 1).scores == (5, 0 + 5, 5, 5 + 2)


def test_penalty_with_a_successful_general() -> None:
    match = Match(WITH_GENERAL, 1, deals={1: S1})
    play(match, "pass general")
    match.add_penalty(1, 5, "revoke")
    play(match, S1_PLAY)
    assert hand_ended(match, 1).scores == (5, -5 + 5, 5, 5)


def test_penalty_with_a_failed_contract() -> None:
    match = Match(CLASSIC, 1, deals={1: CF})
    play(match, "capot")
    match.add_penalty(0, 5, "revoke")
    match.add_penalty(2, 5, "revoke")
    play(match, CF_PLAY)
    assert hand_ended(match, 1).scores == (9 + 5, 1, 5, 0)


def test_bad_penalties_are_refused() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    for seat, points, reason in [(4, 5, "x"), (-1, 5, "x"), (0, -1, "x"), (0, "5", "x"), (0, 5, ""), (0, 5.0, "x")]:
        with pytest.raises(PolignacError):
            match.add_penalty(seat, points, reason)  # type: ignore[arg-type]  # wrong types, on purpose
    assert match.penalties == (0, 0, 0, 0)


def test_penalty_in_a_tiebreak_counts_toward_that_hand_only() -> None:
    # As test_two_player_tiebreak, but seat 0 gets 6 extra points in the tie-break hand: 6 > 5, seat 1 wins.
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY)
    with pytest.raises(IllegalDecision):
        match.add_penalty(2, 5, "revoke")  # seat 2 is not playing the tie-break hand
    match.add_penalty(0, 6, "revoke")
    play(match, TB_PLAY)
    end = hand_ended(match, 2)
    assert (end.scores[0], end.scores[1]) == (6, 5)
    assert match.totals == (5, 5, 20, 13)
    assert match.places == (2, 1, 4, 3)
    with pytest.raises(IllegalDecision):
        match.add_penalty(0, 5, "late")


def test_fallback_in_the_auction_is_pass() -> None:
    match = Match(WITH_GENERAL, 1, deals={1: S1})
    assert match.fallback() is Contract.PASS
    match.apply(match.fallback())
    assert match.auction == ((0, Contract.PASS),)
    assert match.fallback() is Contract.PASS


@pytest.mark.parametrize(
    ("variant", "hand", "expected"),
    [
        ("classic", "AS KS QS JS AH KH QH JH", "AS"),  # A is below J: lowest; spades before hearts
        ("classic", "KS QD AH AC JC KC QC JD", "AH"),  # two Aces: hearts before clubs
        ("classic", "8C 8D KS KH KD QS QH QD", "8D"),  # diamonds before clubs
        ("classic", "TS 9H AS AH KD QD JD 8C", "8C"),
        ("classic", "TS TH AS AH KD QD JD JC", "TS"),  # 10 below A
        ("classic", "7C 7D 7H 8S 9S TS JS QS", "7H"),
        ("ace-high", "AS KS QS JS AH KH QH JH", "JS"),
        ("ace-high", "TD AS AH AD AC KS KH KD", "TD"),
        ("slobberhannes", "KS QD AH AC JC KC QC JD", "JD"),  # J below Q K A; hearts/clubs have none
    ],
)
def test_fallback_at_the_lead_is_the_lowest_card_in_trick_order(variant: str, hand: str, expected: str) -> None:
    match = Match(preset(variant), 1, deals={1: deal_around({0: hand})})
    pass_all(match)
    assert match.to_act == 0
    assert str(match.fallback()) == expected
    assert match.is_legal(match.fallback())


@pytest.mark.parametrize(
    ("variant", "follower", "expected"),
    [
        ("classic", "7S 9H TH 7D 8D 9D TD JD", "9H"),  # must follow hearts: 7S is not legal
        ("classic", "7S AH TH 7D 8D 9D TD JD", "TH"),  # 10 below A
        ("classic", "7S AH JH 7D 8D 9D TD JD", "AH"),  # A below J
        ("ace-high", "7S AH JH 7D 8D 9D TD JD", "JH"),  # J below A
        ("classic", "8D 8C 9D TD JD QD 9C TC", "8D"),  # void: any card; 8D before 8C
        ("classic", "7S 8D 9D TD JD QD 9C TC", "7S"),  # void: the 7 of spades
    ],
)
def test_fallback_when_following(variant: str, follower: str, expected: str) -> None:
    leader = "KH 8S 9S TS JS QS KS AS"
    match = Match(preset(variant), 1, deals={1: deal_around({0: leader, 1: follower})})
    pass_all(match)
    play(match, "KH")
    assert match.to_act == 1
    assert str(match.fallback()) == expected
    match.apply(match.fallback())
    assert match.current_trick[-1] == (1, Card.parse(expected))


def test_fallback_plays_a_whole_match_legally() -> None:
    match = Match(CLASSIC, 11)
    steps = 0
    while not match.is_over:
        decision = match.fallback()
        assert decision in match.legal_decisions()
        match.apply(decision)
        steps += 1
    assert steps > 0
    assert max(match.totals) >= 20


def test_forfeit_mid_hand_scores_nothing_and_ranks_last() -> None:
    match = Match(CLASSIC, 1, start_totals=[3, 0, 5, 7], deals={1: V})
    pass_all(match)
    play(match, V_PLAY.split("|")[0])  # seat 2 has taken JS
    match.add_penalty(0, 5, "revoke")
    match.forfeit(1, "crashed")
    assert match.is_over
    assert match.to_act is None
    assert match.totals == (3, 0, 5, 7)  # the unfinished hand scores nothing, penalty included
    assert match.places == (1, 4, 2, 3)  # seat 1 had the best total but forfeited
    assert match.forfeited == (1,)
    assert of_type(match, HandEnded) == []
    assert [type(e) for e in match.events[-2:]] == [Forfeited, MatchEnded]
    assert summary(match, Forfeited, "seat", "reason", "hand_abandoned") == [(1, "crashed", True)]
    assert summary(match, MatchEnded, "places", "totals") == [((1, 4, 2, 3), (3, 0, 5, 7))]
    with pytest.raises(IllegalDecision):
        match.forfeit(0, "again")


def test_forfeit_during_the_auction() -> None:
    match = Match(CLASSIC, 1, start_totals=[3, 0, 5, 7], deals={1: V})
    match.apply_text("pass")
    match.forfeit(3, "disconnected")
    assert match.is_over
    assert match.places == (2, 1, 3, 4)


def test_forfeit_mid_hand_with_a_tie_for_first_goes_to_a_tiebreak() -> None:
    match = Match(CLASSIC, 1, start_totals=[4, 4, 0, 9], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    pass_all(match)
    play(match, V_PLAY.split("|")[0])
    match.forfeit(2, "too many faults")
    assert not match.is_over
    assert match.totals == (4, 4, 0, 9)
    assert tiebreaks(match) == [((0, 1), 1)]
    assert (match.hand_number, match.seats, match.dealer, match.eldest) == (2, (0, 1), 0, 1)
    play(match, TB_PLAY)  # seat 1 takes all five points
    assert match.is_over
    assert match.places == (1, 2, 4, 3)


def test_forfeit_inside_a_tiebreak_hand_the_others_play_the_next_one() -> None:
    # Hand 3, if seats 1 and 3 play it: seat 1 holds spades and hearts, seat 3 diamonds and
    # clubs.  Whoever leads keeps the lead, wins every trick and takes all five points.
    fresh = ["8S 9S TS JS QS KS AS 7H 8H 9H TH JH QH KH AH", "7D 8D 9D TD JD QD KD AD 8C 9C TC JC QC KC AC"]
    rules = CLASSIC.with_changes(tiebreak_hands=3)
    match = Match(rules, 1, start_totals=[15, 3, 3, 3], deals={1: SEG, 2: TB3, 3: fresh})
    play(match, "pass pass pass pass", SEG_PLAY)
    first_seats = match.seats  # a local: mypy would keep match.seats narrowed past the forfeit below
    assert first_seats == (1, 2, 3)
    play(match, TB3_PLAY.split("|")[0])
    match.forfeit(2, "crashed")
    assert summary(match, Forfeited, "seat", "reason", "hand_abandoned") == [(2, "crashed", True)]
    assert not match.is_over
    # The abandoned hand scored nothing and was the first of the three tie-break hands: the two
    # remaining tied players play the second.
    assert match.is_tiebreak
    assert match.hand_number == 3
    assert match.seats == (1, 3)
    assert all(len(match.hand(s)) == 15 for s in (1, 3))
    assert tiebreaks(match) == [((1, 2, 3), 1), ((1, 3), 2)]
    assert [e.hand_number for e in of_type(match, HandEnded)] == [1]
    assert match.dealer in (1, 3) and match.eldest == ({1, 3} - {match.dealer}).pop()
    leader_wins_all = match.eldest
    other = 4 - leader_wins_all
    finish_hand(match)
    end = hand_ended(match, 3)
    assert (end.scores[leader_wins_all], end.scores[other]) == (5, 0)
    assert match.is_over
    places = [0] * 4
    places[other], places[leader_wins_all], places[0], places[2] = 1, 2, 3, 4
    assert match.places == tuple(places)
    assert match.totals == (20, 3, 3, 3)


def test_a_tiebreak_hand_abandoned_by_a_forfeit_counts_toward_tiebreak_hands() -> None:
    rules = CLASSIC.with_changes(tiebreak_hands=1)
    match = Match(rules, 1, start_totals=[15, 3, 3, 3], deals={1: SEG, 2: TB3})
    play(match, "pass pass pass pass", SEG_PLAY)
    play(match, TB3_PLAY.split("|")[0])
    match.forfeit(2, "crashed")
    # The only tie-break hand allowed was the abandoned one: the two others share first.
    assert match.is_over
    assert tiebreaks(match) == [((1, 2, 3), 1)]
    assert [e.hand_number for e in of_type(match, HandEnded)] == [1]
    assert match.places == (3, 1, 4, 1)
    assert match.totals == (20, 3, 3, 3)


def test_forfeit_by_a_player_outside_the_tiebreak_hand() -> None:
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY)
    play(match, TB_PLAY.split("|")[0])
    to_act = match.to_act
    match.forfeit(3, "disconnected")
    assert summary(match, Forfeited, "seat", "reason", "hand_abandoned") == [(3, "disconnected", False)]
    assert not match.is_over
    assert match.to_act == to_act  # the tie-break hand goes on
    match.forfeit(2, "crashed")
    play(match, "|".join(TB_PLAY.split("|")[1:]))
    assert match.is_over
    # Seat 0 wins the tie-break; both forfeiters rank below everyone, the earlier one (3) lowest.
    assert match.places == (1, 2, 3, 4)


def test_forfeit_of_a_tied_player_in_a_two_player_tiebreak_ends_the_match() -> None:
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY)
    play(match, TB_PLAY.split("|")[0])
    match.forfeit(1, "crashed")
    assert match.is_over
    assert match.places == (1, 4, 3, 2)
    assert of_type(match, HandEnded)[-1].hand_number == 1


def test_forfeit_arguments_are_checked() -> None:
    match = Match(CLASSIC, 1)
    with pytest.raises(PolignacError):
        match.forfeit(4, "x")
    with pytest.raises(PolignacError):
        match.forfeit(0, "")
    assert not match.is_over


# == events and views ======================================================================


def test_events_of_a_whole_match_in_order() -> None:
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY, TB_PLAY)
    kinds = [type(e).__name__ for e in match.events]
    expected = (
        ["HandDealt"]
        + ["Declared"] * 4
        + (["CardPlayed"] * 4 + ["TrickWon"]) * 8
        + ["HandEnded", "TiebreakStarted", "HandDealt"]
        + (["CardPlayed"] * 2 + ["TrickWon"]) * 15
        + ["HandEnded", "MatchEnded"]
    )
    assert kinds == expected
    events = match.events
    first = events[0]
    assert isinstance(first, HandDealt)
    assert (first.hand_number, first.dealer, first.seats, first.tiebreak) == (1, 3, (0, 1, 2, 3), False)
    assert [texts(h) for h in first.hands] == [cards_of(h) for h in V]
    assert summary(match, Declared, "seat", "contract") == [(s, Contract.PASS) for s in range(4)]
    played = [(e.seat, str(e.card)) for e in events[5:45] if isinstance(e, CardPlayed)]
    leaders = iter(V_LEADERS)
    expected_plays = []
    for trick in V_PLAY.split("|"):
        lead = next(leaders)
        expected_plays += [((lead + i) % 4, c) for i, c in enumerate(trick.split())]
    assert played == expected_plays
    won = [e for e in events if isinstance(e, TrickWon)][:8]
    assert [[str(c) for c in e.cards] for e in won] == [t.split() for t in V_PLAY.split("|")]
    end1 = hand_ended(match, 1)
    assert ended_fields(end1) == (1, Contract.PASS, None, None, (0, 0, 2, 3), (5, 5, 20, 13), False)
    tb_dealt = of_type(match, HandDealt)[1]
    assert (tb_dealt.hand_number, tb_dealt.dealer, tb_dealt.seats, tb_dealt.tiebreak) == (2, 0, (0, 1), True)
    end2 = hand_ended(match, 2)
    assert (end2.tiebreak, end2.totals, end2.contract) == (True, (5, 5, 20, 13), Contract.PASS)
    assert isinstance(events[-1], MatchEnded)
    assert (events[-1].places, events[-1].totals) == ((1, 2, 4, 3), (5, 5, 20, 13))
    for event in events:
        json.dumps(event.to_dict())


def test_events_with_a_contract_and_a_new_hand() -> None:
    match = Match(CLASSIC, 1, deals={1: S1})
    play(match, "pass capot", S1_PLAY)
    kinds = [type(e).__name__ for e in match.events]
    assert kinds == ["HandDealt", "Declared", "Declared"] + (["CardPlayed"] * 4 + ["TrickWon"]) * 8 + ["HandEnded", "HandDealt"]
    assert ended_fields(hand_ended(match, 1)) == (1, Contract.CAPOT, 1, True, (5, 0, 5, 5), (5, 0, 5, 5), False)
    dealt = match.events[-1]
    assert isinstance(dealt, HandDealt)
    assert (dealt.hand_number, dealt.dealer) == (2, 0)
    assert [e.winner for e in of_type(match, TrickWon)] == [1] * 8


def test_redacted_deal_shows_only_own_cards() -> None:
    match = Match(CLASSIC, 1, deals={1: V})
    dealt = match.events[0]
    for seat in range(4):
        mine = redact(dealt, seat)
        assert isinstance(mine, HandDealt)
        for s, hand in zip(mine.seats, mine.hands, strict=True):
            assert texts(hand) == (cards_of(V[seat]) if s == seat else set())


def card_texts_in(value: Any) -> set[str]:
    """Every string inside a JSON-like value that is a card."""
    found: set[str] = set()
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            found.add(str(Card.parse(value)))
    elif isinstance(value, dict):
        for v in value.values():
            found |= card_texts_in(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found |= card_texts_in(v)
    return found


def test_player_view_holds_only_the_seats_own_cards() -> None:
    match = Match(CLASSIC, 99)
    steps = 0
    while not match.is_over and steps < 200:
        played = {str(c) for t in match.tricks for c in t.cards} | {str(c) for _, c in match.current_trick}
        for seat in range(4):
            view = match.view(seat)
            assert texts(view.hand) == texts(match.hand(seat))
            assert view.seat == seat
            assert not hasattr(view, "seed")
            table = view.to_dict()
            assert not {"seed", "pack", "hands"} & set(table)
            del table["rules"]
            assert card_texts_in(table) <= texts(match.hand(seat)) | played
            assert view.legal == (tuple(match.legal_decisions()) if match.to_act == seat else ())
        match.apply(match.fallback())
        steps += 1


def test_view_in_a_tiebreak_for_a_seat_not_playing() -> None:
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V, 2: [TB_SEAT0, TB_SEAT1]})
    play(match, "pass pass pass pass", V_PLAY)
    view = match.view(2)
    assert view.hand == ()
    assert view.tiebreak is True
    assert view.seats == (0, 1)
    assert view.totals == (5, 5, 20, 13)
    assert texts(match.view(0).hand) == cards_of(TB_SEAT0)


def test_a_match_replays_from_its_record() -> None:
    match = Match(CLASSIC, 1, start_totals=[5, 5, 18, 10], deals={1: V})
    match.add_penalty(2, 5, "revoke")
    play(match, "pass pass pass pass", V_PLAY)
    finish_match(match)
    again = Match.from_record(json.loads(json.dumps(match.record())))
    assert again.events == match.events
    assert again.places == match.places
