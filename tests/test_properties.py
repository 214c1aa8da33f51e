"""Property tests: invariants of whole random matches (docs/rules.md), and fuzzing of the decoders.

Every match test draws a seed (0..2**64-1), a preset and a player count it allows
(``Ruleset.table_sizes``: 3..6, Bassadewitz 3..5, Knaves 3), then plays the whole match
with random legal decisions from a Hypothesis-controlled ``random`` (so a failure shrinks
and replays).  Some tests mix in the referee's calls, ``add_penalty`` and
``forfeit``, at drawn moments.  Invariants are checked against the event log with code
written from docs/rules.md, not by asking the engine again.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import polignac
from polignac import (
    Card,
    Contract,
    IllegalDecision,
    Match,
    Phase,
    PolignacError,
    RecordError,
    Ruleset,
    parse_decision,
    preset,
)
from polignac.events import (
    CardPlayed,
    Declared,
    Event,
    Forfeited,
    HandDealt,
    HandEnded,
    MatchEnded,
    PenaltyAdded,
    TiebreakStarted,
    TrickWon,
)
from polignac.match_record import MatchRecord
from polignac.rules import Direction, HandScore, RemovedSevens, Tiebreak, Trumps, cards_each, deck_mask
from polignac.scoring import score_hand

MAX_SEED = 2**64 - 1
MATCHES = settings(max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- drawing a match ---------------------------------------------------------------------


@dataclass(frozen=True)
class RefereeCall:
    """A referee call made before decision number ``at`` (counted in tie-break hands only if ``tiebreak``)."""

    at: int
    tiebreak: bool
    forfeit: bool
    pick: int
    points: int


referee_calls = st.lists(
    st.builds(
        RefereeCall,
        at=st.integers(0, 300),
        tiebreak=st.booleans(),
        forfeit=st.booleans(),
        pick=st.integers(0, 5),
        points=st.sampled_from([5, 0, 1, 20]),
    ),
    max_size=6,
).map(tuple)


@dataclass(frozen=True)
class Table:
    """A drawn ruleset, seed, starting totals and referee calls."""

    rules: Ruleset
    seed: int
    start_totals: tuple[int, ...] | None = None
    calls: tuple[RefereeCall, ...] = ()

    def new_match(self) -> Match:
        return Match(self.rules, self.seed, start_totals=self.start_totals)


@st.composite
def tables(draw: st.DrawFn, *, start_totals: bool = False, referee: bool = False) -> Table:
    """Every preset at every table size it allows; sometimes a shorter limit (more tie-breaks), general on, red sevens out."""
    name = draw(st.sampled_from(sorted(polignac.PRESETS)))
    players = draw(st.sampled_from(polignac.PRESETS[name].table_sizes()))
    changes: dict[str, Any] = {"players": players}
    limit = draw(st.sampled_from([20, 20, 10, 5]))
    if limit != 20:
        changes["limit"] = limit
    if polignac.PRESETS[name].capot and draw(st.booleans()):
        changes["general"] = True
    if draw(st.integers(0, 3)) == 0:
        changes["removed_sevens"] = "red"
    tiebreak_hands = draw(st.sampled_from([3, 3, 3, 1, 0]))
    if tiebreak_hands != 3:
        changes["tiebreak_hands"] = tiebreak_hands
    if polignac.PRESETS[name].tiebreak is Tiebreak.TIED and draw(st.integers(0, 4)) == 0:
        changes["tiebreak"] = "play-on"  # a penalty game may play on too: contracts in play-on hands, lower is better
    rules = preset(name, **changes)
    seed = draw(st.integers(0, MAX_SEED))
    totals = None
    if start_totals and draw(st.booleans()):
        totals = tuple(draw(st.lists(st.integers(-3, 12), min_size=players, max_size=players)))
    calls = draw(referee_calls) if referee else ()
    return Table(rules, seed, totals, calls)


def random_decision(match: Match, rnd: random.Random) -> polignac.Decision:
    """A random legal decision, one draw at most.

    A speaker takes a random option one time in eight and passes otherwise: random play never
    makes a capot, so declaring as often as passing would leave few hands without a contract.
    """
    options = match.legal_decisions()
    if len(options) == 1:
        return options[0]
    if match.phase is Phase.AUCTION:
        k = rnd.randrange(8 * len(options))
        return options[k] if k < len(options) else Contract.PASS
    return options[rnd.randrange(len(options))]


def make_call(match: Match, call: RefereeCall) -> None:
    """What the referee does: a penalty to a seat in the hand, or a forfeit (a seat in the hand if in a tie-break)."""
    if call.forfeit:
        seats = match.seats if call.tiebreak else [s for s in range(match.players) if s not in match.forfeited]
        match.forfeit(seats[call.pick % len(seats)], "crashed" if call.pick % 2 else "too many faults")
    else:
        match.add_penalty(match.seats[call.pick % len(match.seats)], call.points, "revoke" if call.points else "timeout")


def play(
    match: Match,
    rnd: random.Random,
    *,
    calls: tuple[RefereeCall, ...] = (),
    at_decision: Callable[[Match], None] | None = None,
    max_steps: int | None = None,
) -> Match:
    """Play ``match`` with random decisions and the referee ``calls`` to the end (or for ``max_steps`` decisions)."""
    steps = tiebreak_steps = 0
    todo = list(calls)
    while not match.is_over and (max_steps is None or steps < max_steps):
        if at_decision is not None:
            at_decision(match)
        due = [c for c in todo if (c.at == tiebreak_steps if c.tiebreak else c.at == steps) and (match.is_tiebreak or not c.tiebreak)]
        if due:
            todo.remove(due[0])
            make_call(match, due[0])
            continue
        match.apply(random_decision(match, rnd))
        steps += 1
        if match.is_tiebreak:
            tiebreak_steps += 1
    return match


# -- splitting the event log into hands ------------------------------------------------


@dataclass
class HandLog:
    """The events of one hand, as a replay would read them."""

    dealt: HandDealt
    declared: list[Declared]
    plays: list[CardPlayed]
    tricks: list[TrickWon]
    penalties: list[PenaltyAdded]
    ended: HandEnded | None = None
    abandoned: bool = False


def hand_logs(events: tuple[Event, ...]) -> list[HandLog]:
    hands: list[HandLog] = []
    for event in events:
        if isinstance(event, HandDealt):
            hands.append(HandLog(event, [], [], [], []))
        elif isinstance(event, Declared):
            hands[-1].declared.append(event)
        elif isinstance(event, CardPlayed):
            hands[-1].plays.append(event)
        elif isinstance(event, TrickWon):
            hands[-1].tricks.append(event)
        elif isinstance(event, PenaltyAdded):
            hands[-1].penalties.append(event)
        elif isinstance(event, HandEnded):
            hands[-1].ended = event
        elif isinstance(event, Forfeited) and event.hand_abandoned:
            hands[-1].abandoned = True
    return hands


def mask(cards: tuple[Card, ...] | list[Card]) -> int:
    out = 0
    for card in cards:
        out |= card.bit
    return out


# -- the deal ------------------------------------------------------------------------------


@MATCHES
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False))
def test_every_card_is_dealt_once_and_played_once(table: Table, rnd: random.Random) -> None:
    check_cards(play(table.new_match(), rnd, calls=table.calls))


def check_cards(match: Match) -> None:
    """docs/rules.md 2, 3 and 11: each hand deals the pack once (less the turned card); each card is played once."""
    rules = match.rules
    sevens = ("7H", "7D") if rules.removed_sevens is RemovedSevens.RED else ("7S", "7C")
    removed = mask([Card.parse(t) for t in sevens])
    # docs/rules.md 1 and 11: the 32-card pack is 7 to A; the 52-card pack 2 to A.
    whole_pack = mask(polignac.CARDS) if rules.pack == 52 else mask([c for c in polignac.CARDS if c.rank >= polignac.Rank.SEVEN])
    logs = hand_logs(match.events)
    assert logs, "a match deals at least one hand"
    for log in logs:
        deal = log.dealt
        pack = deck_mask(rules, len(deal.seats))
        dealt = [card for hand in deal.hands for card in hand]
        assert len(dealt) == len(set(dealt)), f"hand {deal.hand_number}: a card was dealt twice"
        turned = [] if deal.turned is None else [deal.turned]
        assert (deal.turned is not None) == (rules.trumps is Trumps.TURNED), "a card is turned exactly when trumps are"
        assert mask(dealt + turned) == pack and len(dealt) + len(turned) == pack.bit_count(), (
            f"hand {deal.hand_number}: dealt cards and the turned card are not the pack"
        )
        assert len({len(h) for h in deal.hands}) == 1, "every seat gets the same number of cards"
        if rules.pack == 52:
            # Knaves: 17 each for 3, the 52nd card turned.
            assert pack == whole_pack and len(dealt) == 51 and len(deal.seats) == 3 and len(turned) == 1
        elif len(deal.seats) == 4:
            assert pack == whole_pack and len(dealt) == 32
        else:
            assert len(dealt) == 30 and not mask(dealt) & removed, "the removed sevens are never dealt"
            assert pack == whole_pack & ~removed
        # Each card of a finished hand is played exactly once, by the seat that was dealt it.
        holder = {card: seat for seat, hand in zip(deal.seats, deal.hands, strict=True) for card in hand}
        played = [p.card for p in log.plays]
        assert len(played) == len(set(played))
        assert all(holder[p.card] == p.seat for p in log.plays)
        assert deal.turned not in played, "the turned card is never played"
        if log.ended is not None:
            assert mask(played) == mask(dealt)
            assert mask(played + turned) == pack


# -- decisions -----------------------------------------------------------------------------


@MATCHES
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False))
def test_legal_decisions_are_offered_exactly_until_the_end(table: Table, rnd: random.Random) -> None:
    def check(match: Match) -> None:
        options = match.legal_decisions()
        assert options, f"no legal decision while the match is not over: {match!r}"
        assert match.to_act is not None and match.to_act in match.seats
        assert match.to_act not in match.forfeited
        assert len(set(options)) == len(options)
        assert all(match.is_legal(d) for d in options)
        # An illegal decision is refused and changes nothing.
        before = match.record()
        wrong = [c for c in polignac.CARDS if c not in options] + [c for c in Contract if c not in options]
        decision = wrong[match.event_count * 7919 % len(wrong)]
        assert not match.is_legal(decision)
        with pytest.raises(IllegalDecision):
            match.apply(decision)
        assert match.record() == before
        # docs/rules.md 8 and 11: the lowest legal card in trick order, plain suits before trumps, ties to the
        # first suit in S H D C; pass in the auction.
        order = match.rules.trick_order
        trump = match.trump
        assert trump == (None if match.turned is None else match.turned.suit)
        expected = (
            Contract.PASS
            if match.phase is Phase.AUCTION
            else min(match.legal_cards(), key=lambda c: (c.suit == trump, -order.index(c.rank), c.suit))
        )
        assert match.fallback() == expected
        assert polignac.fallback(match.rules, options, trump=trump) == expected

    match = play(table.new_match(), rnd, calls=table.calls, at_decision=check)
    assert match.is_over and match.phase is Phase.OVER
    assert match.legal_decisions() == []
    assert match.legal_mask() == 0 and match.to_act is None
    with pytest.raises(IllegalDecision):
        match.apply(Contract.PASS)


@MATCHES
@example(seed=1, rnd=random.Random(0))
@given(seed=st.integers(0, MAX_SEED), rnd=st.randoms(use_true_random=False))
def test_given_deals_never_break_a_legal_decision(seed: int, rnd: random.Random) -> None:
    """Hands given for the whole table: the match refuses them up front, or refuses the decision that would deal
    a given hand that does not fit (a tie-break among fewer seats) and stays unchanged; never a half-applied card."""
    rules = preset("no-contracts", limit=1)  # one hand, then often a tie-break: hand 2 may be played by 2 or 3 seats
    pack = polignac.cards_in(deck_mask(rules, rules.players))
    deals = {2: [pack[i * 8 : (i + 1) * 8] for i in range(rules.players)]}
    try:
        match = Match(rules, seed, deals=deals)
    except PolignacError:
        return
    while not match.is_over:
        options = match.legal_decisions()
        assert options, f"not over, yet nothing is legal: {match!r}"
        before = match.record()
        try:
            match.apply(options[rnd.randrange(len(options))])
        except PolignacError as exc:
            assert "hand 2" in str(exc)
            assert match.record() == before and match.legal_decisions() == options
            return


@MATCHES
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False))
def test_play_follows_the_rules(table: Table, rnd: random.Random) -> None:
    check_play(play(table.new_match(), rnd, calls=table.calls))


def check_play(match: Match) -> None:
    """Replay the log by docs/rules.md 4, 5 and 11: auction order, following suit, trick winners with trumps, dealers."""
    rules = match.rules
    n = rules.players
    previous_dealer: int | None = None
    for log in hand_logs(match.events):
        deal = log.dealt
        seats = list(deal.seats)
        left = {s: seats[(i + 1) % len(seats)] for i, s in enumerate(seats)}
        if not deal.tiebreak or rules.tiebreak is Tiebreak.PLAY_ON:
            # Play-on hands keep rotating the deal (docs/rules.md 11).
            assert deal.dealer == (deal.hand_number - 2) % n, "the first dealer is seat n-1, then the deal passes left"
            assert seats == list(range(n)), "every seat plays a regular or play-on hand"
        else:
            # The next dealer in the rotation, or the next tied player to its left.
            assert previous_dealer is not None
            expected = next(s % n for s in range(previous_dealer + 1, previous_dealer + n + 1) if s % n in seats)
            assert deal.dealer == expected
        previous_dealer = deal.dealer
        eldest = left[deal.dealer]
        # Auction: from eldest hand, once each, until the first declaration.
        if rules.contracts and not (deal.tiebreak and rules.tiebreak is Tiebreak.TIED):
            speaker = eldest
            for i, d in enumerate(log.declared):
                assert d.seat == speaker
                assert (
                    d.contract is Contract.PASS
                    or (d.contract is Contract.CAPOT and rules.capot)
                    or (d.contract is Contract.GENERAL and rules.general)
                )
                if d.contract is not Contract.PASS:
                    assert i == len(log.declared) - 1, "the first declaration ends the auction"
                speaker = left[speaker]
        else:
            assert not log.declared, "no auction without contracts or in a tie-break"
        # Play: eldest leads, must follow suit, the highest trump (or else the highest card of the suit led) wins and leads next.
        trump = None if deal.turned is None else deal.turned.suit
        hands = {s: set(h) for s, h in zip(deal.seats, deal.hands, strict=True)}
        leader = eldest
        plays = iter(log.plays)
        for number, trick in enumerate(log.tricks, 1):
            cards = [next(plays) for _ in seats]
            assert [p.seat for p in cards] == [leader, *(seats[(seats.index(leader) + k) % len(seats)] for k in range(1, len(seats)))]
            led = cards[0].card.suit
            for p in cards:
                assert p.card in hands[p.seat]
                if p is not cards[0] and any(c.suit is led for c in hands[p.seat]):
                    assert p.card.suit is led, f"seat {p.seat} revoked with {p.card} on {cards[0].card}"
                hands[p.seat].remove(p.card)
            trumps = [p for p in cards if p.card.suit == trump]
            contenders = trumps or [p for p in cards if p.card.suit is led]
            winner = max(contenders, key=lambda p: -rules.trick_order.index(p.card.rank)).seat
            assert (trick.trick_number, trick.leader, trick.winner) == (number, leader, winner)
            assert list(trick.cards) == [p.card for p in cards]
            leader = winner
        assert len(log.tricks) * len(seats) <= len(log.plays) < (len(log.tricks) + 1) * len(seats)


# -- scores and totals ---------------------------------------------------------------------


# docs/rules.md 11 (Bassadewitz): scores by place, fewest card points first, by the number of players in the hand.
PLACE_SCORES = {2: [0, 5], 3: [0, 1, 5], 4: [0, 1, 2, 5], 5: [0, 1, 2, 3, 5]}
EVERY_TRICK = (0, 5)  # the player who takes every trick, each other player
BIG_TAKE = (100, 8, 0)  # card points, then the taker's score and each other player's


def against(rules: Ruleset) -> int:
    """Points against a player add to its score where lower is better and come off where higher is."""
    return 1 if rules.direction is Direction.LOWER else -1


def points_against(rules: Ruleset, log: HandLog) -> list[int]:
    """Penalty cards (or card points) and first/last trick points each seat took."""
    points = [0] * rules.players
    for trick in log.tricks:
        points[trick.winner] += sum(rules.card_points[c.index] for c in trick.cards)
    points[log.tricks[0].winner] += rules.first_trick_points
    points[log.tricks[-1].winner] += rules.last_trick_points
    return points


def by_place(rules: Ruleset, log: HandLog, points: list[int]) -> list[int]:
    """docs/rules.md 11: Bassadewitz's hand score from the order of card points, or its two exceptions."""
    seats = list(log.dealt.seats)
    eldest = seats[(seats.index(log.dealt.dealer) + 1) % len(seats)]
    turn = seats[seats.index(eldest) :] + seats[: seats.index(eldest)]
    won = {s: sum(t.winner == s for t in log.tricks) for s in seats}
    return place_scores(rules, turn, won, points)


def place_scores(rules: Ruleset, turn: list[int], won: dict[int, int], points: list[int]) -> list[int]:
    """The scores by place of the seats in ``turn`` (from eldest hand) that took ``won`` tricks and ``points``."""
    assert rules.place_scores == (0, 1, 2, 3, 5) and rules.every_trick_scores == EVERY_TRICK[:2]
    assert (rules.big_take_points, *rules.big_take_scores) == BIG_TAKE
    scores = [0] * rules.players
    every = [s for s in turn if won[s] == sum(won.values())]
    big = [s for s in turn if points[s] >= BIG_TAKE[0]]
    if every:
        for seat in turn:
            scores[seat] = EVERY_TRICK[0] if seat == every[0] else EVERY_TRICK[1]
    elif big:
        for seat in turn:
            scores[seat] = BIG_TAKE[1] if seat == big[0] else BIG_TAKE[2]
    else:
        # Fewest points first; on equal points a seat that took no trick, then the one nearer eldest hand.
        ranked = sorted(turn, key=lambda s: (points[s], won[s] > 0, turn.index(s)))
        for seat, score in zip(ranked, PLACE_SCORES[len(turn)], strict=True):
            scores[seat] = score
    return scores


@FUZZ
@given(data=st.data())
def test_place_scores_by_the_rules_on_any_tricks(data: st.DataObject) -> None:
    """Bassadewitz's scores by place for any tricks taken, such as equal points with and without a trick.

    Random play seldom makes a trick of 7s, 8s and 9s, so the pack is drawn with its zero-point
    cards first as often as not, and the first tricks are worth nothing.
    """
    players = data.draw(st.sampled_from([3, 4, 5]), label="players")
    rules = preset("bassadewitz", players=players)
    seats = data.draw(st.sampled_from([list(range(players)), *([a, b] for a in range(players) for b in range(a + 1, players))]))
    pack = polignac.cards_in(deck_mask(rules, len(seats)))
    order = data.draw(st.permutations(pack), label="pack")
    if data.draw(st.booleans(), label="zero-point cards first"):
        order = sorted(order, key=lambda c: rules.card_points[c.index] > 0)
    k = len(seats)
    winners = data.draw(st.lists(st.sampled_from(seats), min_size=len(pack) // k, max_size=len(pack) // k), label="winners")
    if k >= 3 and data.draw(st.booleans(), label="one seat takes the first trick only, one takes none"):
        first, none, other = data.draw(st.permutations(seats), label="seats")[:3]
        winners = [first] + [other if w in (first, none) else w for w in winners[1:]]
    taken = [0] * players
    won = dict.fromkeys(seats, 0)
    for i, winner in enumerate(winners):
        taken[winner] |= mask(order[i * k : (i + 1) * k])
        won[winner] += 1
    eldest = data.draw(st.sampled_from(seats), label="eldest")
    turn = seats[seats.index(eldest) :] + seats[: seats.index(eldest)]
    penalties = data.draw(st.lists(st.sampled_from([0, 0, 5]), min_size=players, max_size=players), label="fault points")
    for seat in range(players):
        if seat not in seats:
            penalties[seat] = 0
    tricks_won = [won.get(s, 0) for s in range(players)]
    scoring = score_hand(rules, turn, taken, tricks_won, winners[0], winners[-1], Contract.PASS, None, penalties)
    points = [sum(rules.card_points[c.index] for c in polignac.cards_in(t)) for t in taken]
    expected = place_scores(rules, turn, won, points)
    zero = [s for s in seats if points[s] == 0]
    if len({won[s] > 0 for s in zero}) == 2:
        hypothesis.event("equal points, with and without a trick")
    assert scoring.card_points == points
    assert scoring.scores == [e + p for e, p in zip(expected, penalties, strict=True)]


def expected_scores(rules: Ruleset, log: HandLog) -> tuple[list[int], Contract, int | None, bool | None]:
    """docs/rules.md 4, 6 and 11 (and the referee's extra points), from the events of a finished hand."""
    sign = against(rules)
    points = points_against(rules, log)
    if rules.hand_score is HandScore.PLACE:
        scores = by_place(rules, log, [p + rules.trick_points * sum(t.winner == s for t in log.tricks) for s, p in enumerate(points)])
    else:
        scores = [sign * p for p in points]
        for trick in log.tricks:
            scores[trick.winner] += rules.trick_points
    declarations = [d for d in log.declared if d.contract is not Contract.PASS]
    contract, declarer, made = Contract.PASS, None, None
    if declarations:
        contract, declarer = declarations[0].contract, declarations[0].seat
        made = all(t.winner == declarer for t in log.tricks)
        if made:
            for seat in log.dealt.seats:
                scores[seat] = sign * rules.contract_points
            scores[declarer] = sign * rules.general_points if contract is Contract.GENERAL else 0
        else:
            scores[declarer] += sign * rules.contract_points
    # Fault points always count against the offender (docs/rules.md 11).
    for penalty in log.penalties:
        scores[penalty.seat] += sign * penalty.points
    return scores, contract, declarer, made


def expected_sum(rules: Ruleset, log: HandLog, scores: list[int]) -> int:
    """What a hand without contract or extra points adds up to (docs/rules.md 6, 10 and 11)."""
    seats = len(log.dealt.seats)
    if rules.hand_score is HandScore.PLACE:
        if max(t.winner for t in log.tricks) == min(t.winner for t in log.tricks):
            return EVERY_TRICK[0] + EVERY_TRICK[1] * (seats - 1)
        if BIG_TAKE[1] in scores and BIG_TAKE[0] <= max(points_against(rules, log)):
            return BIG_TAKE[1] + BIG_TAKE[2] * (seats - 1)
        return sum(PLACE_SCORES[seats])
    turned = log.dealt.turned
    in_play = rules.points_per_hand - (0 if turned is None else rules.card_points[turned.index])  # a turned card scores for nobody
    return rules.trick_points * len(log.tricks) + against(rules) * in_play


def check_scores(match: Match, start_totals: tuple[int, ...] | None) -> None:
    """Every finished hand's scores, parts and totals as docs/rules.md 4, 6, 7 and 11 say."""
    rules = match.rules
    totals = list(start_totals or [0] * rules.players)
    results = iter(match.hand_results)
    for log in hand_logs(match.events):
        if log.ended is None:
            assert log.abandoned, f"hand {log.dealt.hand_number} was neither finished nor abandoned"
            continue
        ended = log.ended
        scores, contract, declarer, made = expected_scores(rules, log)
        assert (ended.contract, ended.declarer, ended.contract_made) == (contract, declarer, made)
        assert list(ended.scores) == scores, f"hand {ended.hand_number}"
        if contract is Contract.PASS and not log.penalties:
            assert sum(ended.scores) == expected_sum(rules, log, scores), f"hand {ended.hand_number} does not add up"
        assert ended.tiebreak == log.dealt.tiebreak
        # Scores count in the totals, except in tie-break hands among the tied (docs/rules.md 7; play-on hands count, 11).
        if not ended.tiebreak or rules.tiebreak is Tiebreak.PLAY_ON:
            totals = [t + s for t, s in zip(totals, ended.scores, strict=True)]
        assert list(ended.totals) == totals
        # The hand's result carries the parts of its scores.
        result = next(results)
        assert ended.result == result
        assert (result.hand_number, result.scores, result.totals) == (ended.hand_number, ended.scores, ended.totals)
        assert list(result.tricks) == [sum(t.winner == s for t in log.tricks) for s in range(rules.players)]
        assert list(result.fault_points) == [sum(p.points for p in log.penalties if p.seat == s) for s in range(rules.players)]
        assert [c + f for c, f in zip(result.card_points, result.first_last_points, strict=True)] == points_against(rules, log)
        assert list(result.trick_points) == [rules.trick_points * n for n in result.tricks]
    assert next(results, None) is None
    assert list(match.totals) == totals, "totals are the start totals plus every counting hand's scores"
    last = match.events[-1]
    assert isinstance(last, MatchEnded)
    assert list(last.totals) == totals and last.places == match.places


@MATCHES
@given(table=tables(start_totals=True, referee=True), rnd=st.randoms(use_true_random=False))
def test_hand_scores_and_totals(table: Table, rnd: random.Random) -> None:
    check_scores(play(table.new_match(), rnd, calls=table.calls), table.start_totals)


def family_matches() -> Iterator[tuple[Match, tuple[int, ...] | None]]:
    """Seeded whole matches of the games of docs/rules.md 11 at every table size, with the referee's extra points.

    Random play rarely meets some rules (a player taking every trick, a tie on points between a seat
    with a trick and one without, a tie for first); enough matches of these games alone meet them all.
    """
    for name in ("knaves", "bassadewitz", "eichel-obern", "gras-obern"):
        for players in polignac.PRESETS[name].table_sizes():
            for seed in range(60):
                rnd = random.Random(f"{name}-{players}-{seed}")
                rules = preset(name, players=players, limit=rnd.choice([5, 10, 20]))
                start = tuple(rnd.choice([0, 0, rules.limit - 2]) for _ in range(players)) if seed % 2 else None
                calls = tuple(
                    RefereeCall(rnd.randrange(200), rnd.random() < 0.2, False, rnd.randrange(6), rnd.choice([5, 0, 1])) for _ in range(4)
                )
                yield play(Match(rules, rnd.randrange(2**64), start_totals=start), rnd, calls=calls), start


def test_scores_of_the_family_over_many_matches() -> None:
    seen: Counter[str] = Counter()
    for match, start in family_matches():
        check_scores(match, start)
        check_places(match)
        name = match.rules.name
        for log in hand_logs(match.events):
            if log.ended is None or log.ended.result is None:
                continue
            result = log.ended.result
            seen[f"{name} hands"] += 1
            if name == "bassadewitz":
                seen[f"bassadewitz {result.exception.value or 'by place'}"] += 1
            seen[f"{name} fault points"] += any(result.fault_points)
            if name == "knaves":
                seen["knaves: a Jack turned"] += log.dealt.turned is not None and log.dealt.turned.rank is polignac.Rank.JACK
            seen[f"{name} tie-break hands"] += log.ended.tiebreak
    for kind in (
        "bassadewitz every_trick",
        "bassadewitz big_take",
        "bassadewitz by place",
        "bassadewitz fault points",
        "bassadewitz tie-break hands",
        "knaves fault points",
        "knaves: a Jack turned",
        "knaves tie-break hands",
        "eichel-obern fault points",
        "gras-obern tie-break hands",
    ):
        assert seen[kind], f"no {kind!r} in {sorted(seen.items())}"


@MATCHES
@given(table=tables(), rnd=st.randoms(use_true_random=False))
def test_classic_plain_hands_score_five(table: Table, rnd: random.Random) -> None:
    """The literal docs/rules.md 6 figure for the classic preset, any player count."""
    rules = preset("classic", players=table.rules.players, limit=table.rules.limit)
    match = play(Match(rules, table.seed), rnd)
    for event in match.events:
        if isinstance(event, HandEnded) and event.contract is Contract.PASS:
            assert sum(event.scores) == 5
            assert all(s in (0, 1, 2, 3, 4, 5) for s in event.scores)


def sure_capot_deal(rules: Ruleset, weaken: bool, rnd: random.Random) -> list[list[Card]]:
    """Hand 1 for every seat: seat 0 (eldest) holds the top cards of every suit, so it wins every trick.

    Where a card is turned for trumps, the lowest card of spades is left over to be turned and seat 0
    holds every other spade, so nobody else can trump.  With ``weaken`` seat 0's weakest plain top card
    is swapped for the lowest card the others hold, which may lose a trick.
    """
    pack = polignac.cards_in(deck_mask(rules, rules.players))
    each = cards_each(rules, rules.players)
    by_strength = sorted(pack, key=lambda c: (-rules.strength[c.index], c.suit))
    if rules.trumps is Trumps.TURNED:
        spades = [c for c in by_strength if c.suit is polignac.Suit.SPADES]
        turned, trumps = spades[-1], spades[:-1]
        plain = [c for c in by_strength if c.suit is not polignac.Suit.SPADES]
        eldest, rest = trumps + plain[: each - len(trumps)], plain[each - len(trumps) :]
    else:
        eldest, rest = by_strength[:each], by_strength[each:]
    if weaken:
        eldest[-1], rest[-1] = rest[-1], eldest[-1]
    rnd.shuffle(rest)
    deal = [eldest] + [rest[i * each : (i + 1) * each] for i in range(rules.players - 1)]
    if rules.trumps is Trumps.TURNED:
        assert {c for h in deal for c in h} == set(pack) - {turned}
    return deal


@MATCHES
@given(
    table=tables(),
    rnd=st.randoms(use_true_random=False),
    contract=st.sampled_from([Contract.CAPOT, Contract.GENERAL]),
    weaken=st.booleans(),
    penalty_at=st.none() | st.integers(0, 60),
)
def test_contracts_score_by_the_rules(table: Table, rnd: random.Random, contract: Contract, weaken: bool, penalty_at: int | None) -> None:
    """docs/rules.md 4: a made capot gives every opponent +5 and the declarer 0 (general: -5); random play never makes one.

    Contracts go with points games without a turned trump only (docs/rules.md 11), so Bassadewitz and
    Knaves are left out.
    """
    assume(table.rules.hand_score is HandScore.POINTS and table.rules.trumps is Trumps.NONE)
    rules = table.rules.with_changes(capot=True, general=True)
    match = Match(rules, table.seed, deals={1: sure_capot_deal(rules, weaken, rnd)})
    assert match.to_act == 0
    match.apply(contract)
    calls = () if penalty_at is None else (RefereeCall(penalty_at, False, False, 1, 5),)
    play(match, rnd, calls=calls, max_steps=rules.players * len(match.hand(0)))
    log = hand_logs(match.events)[0]
    assert log.ended is not None
    scores, *_ = expected_scores(rules, log)
    assert list(log.ended.scores) == scores
    assert (log.ended.contract, log.ended.declarer) == (contract, 0)
    if not weaken:
        sign = against(rules)
        extra = [0] * rules.players
        for p in log.penalties:
            extra[p.seat] += sign * p.points
        base = [-5 * sign if contract is Contract.GENERAL else 0] + [5 * sign] * (rules.players - 1)
        assert log.ended.contract_made is True
        assert list(log.ended.scores) == [b + e for b, e in zip(base, extra, strict=True)]


@MATCHES
@given(table=tables(), rnd=st.randoms(use_true_random=False))
def test_no_auction_where_contracts_are_off(table: Table, rnd: random.Random) -> None:
    """docs/rules.md 11: no contracts in Bassadewitz and Knaves; a declaration is refused as illegal."""
    match = play(table.new_match(), rnd, max_steps=rnd.randrange(60))
    if match.is_over or match.rules.contracts:
        return
    assert match.phase is Phase.PLAY
    for contract in Contract:
        assert not match.is_legal(contract)
        with pytest.raises(IllegalDecision):
            match.apply(contract)


# -- standings -----------------------------------------------------------------------------


def top(rules: Ruleset, values: list[int]) -> int:
    """The best of some totals or scores (docs/rules.md 7 and 11)."""
    return min(values) if rules.direction is Direction.LOWER else max(values)


def better(rules: Ruleset, a: int, b: int) -> bool:
    """docs/rules.md 7 and 11: lower totals are better, or higher ones (Knaves)."""
    return a < b if rules.direction is Direction.LOWER else a > b


def check_places(match: Match) -> None:
    rules = match.rules
    places, totals, forfeited = match.places, match.totals, match.forfeited
    assert places is not None and len(places) == match.players
    # A competition ranking: one plus the number of seats strictly better.
    for place in places:
        assert place == 1 + sum(other < place for other in places), f"places {places} are not a competition ranking"
    assert 1 in places
    alive = [s for s in range(match.players) if s not in forfeited]
    # Forfeiters last; one who forfeited earlier ranks lower (engine.py's documented choice).
    for f in forfeited:
        assert all(places[f] > places[s] for s in alive), f"forfeiter {f} is not last: places {places}"
    for earlier, later in itertools.pairwise(forfeited):
        assert places[earlier] > places[later]
    # The others by totals in the game's direction; only a tie for first may be split (by tie-break hands among the tied).
    best = top(rules, [totals[s] for s in alive])
    for a in alive:
        for b in alive:
            if better(rules, totals[a], totals[b]):
                assert places[a] < places[b], f"seat {a} ({totals[a]}) is not ahead of seat {b} ({totals[b]})"
            elif totals[a] == totals[b] and (totals[a] != best or rules.tiebreak is Tiebreak.PLAY_ON):
                assert places[a] == places[b], "ties stand (for first too once play-on hands are over)"
    if rules.tiebreak is Tiebreak.PLAY_ON:
        check_play_on(match)
    else:
        check_tied_tiebreak(match, best)


def check_play_on(match: Match) -> None:
    """docs/rules.md 11: whole hands among all, scores counting, until one is alone on top, at most ``tiebreak_hands``.

    A forfeit ends the match at once and a tie among the others stands.
    """
    rules = match.rules
    totals = list(match.record().get("start_totals", [0] * rules.players))
    rounds = 0
    regular_over = False
    gone: set[int] = set()
    events = match.events
    for i, event in enumerate(events):
        if isinstance(event, HandEnded):
            assert event.tiebreak == regular_over
            totals = list(event.totals)
            first = top(rules, totals)
            tied = sum(t == first for t in totals) > 1
            if not regular_over and max(totals) >= rules.limit:
                regular_over = True
            if regular_over:
                plays_on = tied and rounds < rules.tiebreak_hands
                expected = TiebreakStarted if plays_on else MatchEnded
                assert isinstance(events[i + 1], expected), "a tie for first plays on, else the match ends"
        elif isinstance(event, Forfeited):
            gone.add(event.seat)
            assert match.is_over and i == len(events) - 2, "a forfeit ends a play-on match at once"
        elif isinstance(event, TiebreakStarted):
            rounds += 1
            assert regular_over and not gone, "play-on hands come after the regular match, never with a forfeited seat"
            first = top(rules, totals)
            assert set(event.seats) == {s for s in range(match.players) if totals[s] == first} and len(event.seats) >= 2
            assert event.round == rounds <= rules.tiebreak_hands
        elif isinstance(event, HandDealt):
            assert event.tiebreak == regular_over
            assert event.seats == tuple(range(match.players)), "play-on hands are whole hands among all"
    if not match.forfeited:
        first = top(rules, list(match.totals))
        if sum(t == first for t in match.totals) > 1:
            assert rounds == rules.tiebreak_hands, "still tied for first: every play-on hand was played"


def check_tied_tiebreak(match: Match, best: int) -> None:
    """docs/rules.md 7: tie-break hands among those tied for first decide who shares first; the rest share the next place."""
    rules = match.rules
    places, totals = match.places, match.totals
    assert places is not None
    alive = [s for s in range(match.players) if s not in match.forfeited]
    tied = {s for s in alive if totals[s] == best}
    contenders = set(tied)
    started = False
    gone: set[int] = set()
    for event in match.events:
        if isinstance(event, TiebreakStarted):
            if not started:
                # Tie-break hands start among the seats tied for first when the regular match ended.
                still_in = [s for s in range(match.players) if s not in gone]
                first = top(rules, [totals[s] for s in still_in])
                contenders = {s for s in still_in if totals[s] == first}
                started = True
            assert set(event.seats) == contenders and len(event.seats) >= 2
            assert event.round <= rules.tiebreak_hands
        elif isinstance(event, HandEnded) and event.tiebreak:
            low = top(rules, [event.scores[s] for s in contenders])
            contenders = {s for s in contenders if event.scores[s] == low}
        elif isinstance(event, Forfeited):
            gone.add(event.seat)
            contenders.discard(event.seat)
    if rules.tiebreak_hands == 0:
        assert not started
    elif len(tied) > 1:
        assert started, "a tie for first must go to tie-break hands"
    # Those who lose the tie-break share the next place (a competition ranking: 1 + the number of winners).
    for seat in tied:
        assert places[seat] == (1 if seat in contenders else 1 + len(contenders)), f"tied {sorted(tied)}: places {places}"


@MATCHES
@given(table=tables(), rnd=st.randoms(use_true_random=False))
def test_places_are_a_valid_ranking(table: Table, rnd: random.Random) -> None:
    check_places(play(table.new_match(), rnd))


@MATCHES
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False))
def test_places_with_referee_calls_are_a_valid_ranking(table: Table, rnd: random.Random) -> None:
    check_places(play(table.new_match(), rnd, calls=table.calls))


PRESET_SIZES = [(name, n) for name, rules in polignac.PRESETS.items() for n in rules.table_sizes()]


@pytest.mark.parametrize(("name", "players"), PRESET_SIZES, ids=[f"{name}-{n}p" for name, n in PRESET_SIZES])
def test_every_preset_at_every_table_size(name: str, players: int) -> None:
    """Each check above on seeded whole matches of each preset at each size it allows (Hypothesis may miss one)."""
    for seed in range(3):
        rnd = random.Random(f"{name}-{players}-{seed}")
        rules = preset(name, players=players, limit=rnd.choice([10, 20]))
        start = tuple(rnd.randrange(-3, 12) for _ in range(players)) if seed else None
        calls = tuple(
            RefereeCall(rnd.randrange(300), rnd.random() < 0.2, rnd.random() < 0.1, rnd.randrange(6), rnd.choice([5, 0, 1]))
            for _ in range(5)
        )
        match = play(Match(rules, rnd.randrange(2**64), start_totals=start), rnd, calls=calls)
        check_cards(match)
        check_play(match)
        check_scores(match, start)
        check_places(match)
        same_match(match, through_json(match))


def test_play_on_ties_are_played_out_or_shared() -> None:
    """Knaves from equal totals one short of the limit, so that ties for first are common (docs/rules.md 11)."""
    seen: Counter[str] = Counter()
    for seed in range(1000):
        rnd = random.Random(seed)
        rules = preset("knaves", tiebreak_hands=rnd.choice([0, 1, 2, 3, 3]))
        calls = (RefereeCall(rnd.randrange(80), True, True, rnd.randrange(3), 0),) if seed % 3 == 0 else ()
        match = play(Match(rules, seed, start_totals=[19, 19, 19]), rnd, calls=calls)
        check_places(match)
        rounds = sum(isinstance(e, TiebreakStarted) for e in match.events)
        seen[f"{rounds} play-on hands"] += 1
        assert match.places is not None
        if match.places.count(1) > 1:
            seen["shared first after every play-on hand" if not match.forfeited else "a tie stands after a forfeit"] += 1
        if rounds and match.forfeited:
            seen["a forfeit in a play-on hand"] += 1
    assert seen["1 play-on hands"] and seen["2 play-on hands"], seen
    assert seen["shared first after every play-on hand"] and seen["a forfeit in a play-on hand"], seen


# -- what a player may see -------------------------------------------------------------


def json_strings(node: Any) -> set[str]:
    """Every string in a JSON value, keys included."""
    out: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, dict):
            out.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def json_ints(node: Any) -> Iterator[int]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def object_cards(node: Any) -> Iterator[Card]:
    """Every Card object reachable from a view's fields (tuples, named tuples, dataclasses)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is Card:
            yield item
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif not isinstance(item, int | str | None) and is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item))


def check_views(match: Match) -> None:
    """No seat's view, as an object or as JSON, holds a card another seat still holds."""
    for seat in range(match.players):
        view = match.view(seat)
        hidden = 0
        for other in range(match.players):
            if other != seat:
                hidden |= match.hand_mask(other)
        own = match.hand_mask(seat)
        assert mask(view.hand) == own
        assert view.rules is match.rules
        # The turned card is seen by every seat and held by none (docs/rules.md 11).
        assert view.turned == match.turned and (view.trump is None) == (match.turned is None)
        if match.turned is not None:
            assert not match.turned.bit & (own | hidden) and view.to_dict()["turned"] == str(match.turned)
        shown = {card for f in fields(view) if f.name != "rules" for card in object_cards(getattr(view, f.name))}
        assert not mask(list(shown)) & hidden, f"seat {seat} sees {shown & set(polignac.cards_in(hidden))} held by others"
        text = json.dumps(view.to_dict())
        data = json.loads(text)
        # The rules table names penalty cards ('JS'...), which is no leak: it must be exactly the ruleset.
        assert data.pop("rules") == match.rules.to_dict()
        for string in json_strings(data):
            if not 2 <= len(string.strip()) <= 3:
                continue  # no card text is shorter or longer (Card.parse: rank of 1-2 characters, then a suit)
            try:
                card = Card.parse(string)
            except PolignacError:
                continue
            assert not card.bit & hidden, f"seat {seat}'s view shows {card} held by another seat: {text}"
        assert {Card.parse(c) for c in data["hand"]} == set(view.hand)
        assert "seed" not in text
        if match.seed > 10**6:
            assert match.seed not in set(json_ints(data)), "the view shows the seed"
        if match.to_act == seat:
            assert data["legal"] == [str(d) for d in match.legal_decisions()]
        else:
            assert data["legal"] == []
        deal = next(e for e in reversed(match.events) if isinstance(e, HandDealt))
        redacted = polignac.redact(deal, seat)
        assert isinstance(redacted, HandDealt)
        for s, hand, seen in zip(deal.seats, deal.hands, redacted.hands, strict=True):
            assert seen == (hand if s == seat else ())


@settings(MATCHES, max_examples=17)
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False))
def test_views_never_show_another_seats_cards(table: Table, rnd: random.Random) -> None:
    match = play(table.new_match(), rnd, calls=table.calls, at_decision=check_views)
    check_views(match)  # also once over: a forfeit leaves unplayed cards in every hand


# -- records and clones ------------------------------------------------------------------


def same_match(a: Match, b: Match) -> None:
    assert a.events == b.events
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert (a.totals, a.places, a.forfeited, a.phase, a.to_act) == (b.totals, b.places, b.forfeited, b.phase, b.to_act)
    assert (a.hand_number, a.dealer, a.seats, a.penalties) == (b.hand_number, b.dealer, b.seats, b.penalties)
    assert [a.hand_mask(s) for s in range(a.players)] == [b.hand_mask(s) for s in range(b.players)]
    assert a.legal_decisions() == b.legal_decisions()
    assert a.record() == b.record()


def through_json(match: Match) -> Match:
    return Match.from_record(json.loads(json.dumps(match.record())))


@MATCHES
@given(
    table=tables(start_totals=True, referee=True),
    rnd=st.randoms(use_true_random=False),
    snapshot_at=st.lists(st.integers(0, 300), max_size=3),
)
def test_record_replays_exactly(table: Table, rnd: random.Random, snapshot_at: list[int]) -> None:
    match = table.new_match()
    snapshots: list[tuple[MatchRecord, Match]] = []
    calls_before = [0]

    def snapshot(m: Match) -> None:
        if calls_before[0] in snapshot_at:
            snapshots.append((m.record(), m.clone()))
        calls_before[0] += 1

    play(match, rnd, calls=table.calls, at_decision=snapshot)
    same_match(match, through_json(match))
    for record, then in snapshots:
        replayed = Match.from_record(json.loads(json.dumps(record)))
        same_match(replayed, then)
        # The replayed match goes on exactly as the original would.
        seed = rnd.getrandbits(32)
        play(replayed, random.Random(seed), calls=table.calls)
        play(then, random.Random(seed), calls=table.calls)
        same_match(replayed, then)


@MATCHES
@given(table=tables(referee=True), rnd=st.randoms(use_true_random=False), steps=st.integers(0, 150))
def test_clone_is_independent(table: Table, rnd: random.Random, steps: int) -> None:
    match = play(table.new_match(), rnd, calls=table.calls, max_steps=steps)
    assume(not match.is_over)
    before = copy.deepcopy(match.record())
    events_before = match.events
    hands_before = [match.hand_mask(s) for s in range(match.players)]
    clone = match.clone()
    same_match(clone, match)
    play(clone, rnd, calls=table.calls)
    assert match.record() == before, "playing the clone changed the original's record"
    assert match.events == events_before
    assert [match.hand_mask(s) for s in range(match.players)] == hands_before
    assert not match.is_over and match.legal_decisions()
    # And the other way round: the original goes on; the finished clone stays as it was.
    clone_record = copy.deepcopy(clone.record())
    play(match, rnd, calls=table.calls)
    assert clone.record() == clone_record


# -- decoder fuzzing -------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
card_like_text = st.text(alphabet="789TJQKA10SHDCshdcxX♠♥♦♣♤♡♢♧ \t\n", max_size=5)
decision_like_text = card_like_text | st.sampled_from(["pass", "PASS", " capot ", "General", "passe", "", "pass\x00"])


def only_polignac_errors(call: Callable[[], object]) -> object:
    """Run ``call``; a PolignacError is fine, any other exception fails the test."""
    try:
        return call()
    except PolignacError:
        return None


@FUZZ
@given(text=card_like_text | st.text() | json_values)
def test_card_parse_raises_only_polignac_errors(text: Any) -> None:
    card = only_polignac_errors(lambda: Card.parse(text))
    if card is not None:
        assert isinstance(card, Card) and Card.parse(str(card)) is card
        assert isinstance(text, str)
    if isinstance(text, str):
        only_polignac_errors(lambda: polignac.parse_cards(text))
    only_polignac_errors(lambda: Card.from_index(text))


@FUZZ
@given(text=decision_like_text | st.text() | json_values)
def test_parse_decision_raises_only_polignac_errors(text: Any) -> None:
    decision = only_polignac_errors(lambda: parse_decision(text))
    if decision is not None:
        assert isinstance(decision, Card | Contract)
        assert parse_decision(str(decision)) == decision


@FUZZ
@example(text=None)
@given(text=json_values)
def test_parse_cards_raises_only_polignac_errors(text: Any) -> None:
    only_polignac_errors(lambda: polignac.parse_cards(text))


SETTING_KEYS = [*Ruleset().to_dict(), "variant"]
plausible_setting = st.one_of(
    st.integers(-2, 25),
    st.booleans(),
    st.sampled_from(["classic", "ace-high", "french", "red", "black", "forfeit", "penalty", "KQJAT987", "AKQJT987", "x"]),
    st.dictionaries(card_like_text, st.integers(-1, 3) | json_scalars, max_size=3),
    st.lists(st.sampled_from([*"789TJQKA", "10", "X"]), max_size=9),
)


@FUZZ
@given(
    table=json_values | st.dictionaries(st.sampled_from(SETTING_KEYS) | st.text(max_size=6), plausible_setting | json_values, max_size=6)
)
def test_ruleset_from_dict_raises_only_polignac_errors(table: Any) -> None:
    rules = only_polignac_errors(lambda: Ruleset.from_dict(table))
    if rules is not None:
        assert isinstance(rules, Ruleset)
        assert Ruleset.from_dict(rules.to_dict()) == rules


@FUZZ
@example(table={"players": 4, 1: 0, "x": 0})
@given(table=st.dictionaries(st.sampled_from(SETTING_KEYS) | st.text(max_size=4) | st.integers() | st.none(), json_scalars, max_size=4))
def test_ruleset_from_dict_with_keys_of_any_type_raises_only_polignac_errors(table: dict[Any, Any]) -> None:
    """A Python caller's dict (not TOML/JSON) may have keys that are not text: still only a RulesetError."""
    only_polignac_errors(lambda: Ruleset.from_dict(table))


@FUZZ
@given(record=json_values)
def test_from_record_on_arbitrary_json_raises_only_polignac_errors(record: Any) -> None:
    only_polignac_errors(lambda: Match.from_record(record))


def _base_record(seed: int, name: str, forfeits: bool) -> dict[str, Any]:
    sizes = polignac.PRESETS[name].table_sizes()
    players = sizes[seed % len(sizes)]
    rules = preset(name, players=players, limit=6, general=polignac.PRESETS[name].capot)
    rnd = random.Random(seed)
    deals = None
    if seed % 3 == 0:
        pack = list(polignac.cards_in(deck_mask(rules, players)))
        rnd.shuffle(pack)
        each = polignac.cards_each(rules, players)
        deals = {1: [pack[i * each : (i + 1) * each] for i in range(players)]}
    match = Match(rules, seed, start_totals=[seed % 4] * players if seed % 2 else None, deals=deals)
    calls = tuple(
        RefereeCall(rnd.randrange(120), rnd.random() < 0.3, forfeits and rnd.random() < 0.4, rnd.randrange(6), 5) for _ in range(4)
    )
    return dict(play(match, rnd, calls=calls).record())  # to be damaged at will


BASE_RECORDS = [_base_record(seed, name, seed % 2 == 1) for seed, name in enumerate(sorted(polignac.PRESETS) * 2)]


def json_paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from json_paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from json_paths(value, (*path, i))


near_values = st.one_of(
    json_values,
    st.sampled_from(["pass", "capot", "general", "JS", "7S", "10H", "XX", "", "5", "1"]),
    st.integers(-2, 40),
    st.sampled_from([{"penalty": 0, "points": 5, "reason": "revoke"}, {"forfeit": 1}, {"forfeit": 9, "reason": "x"}, {"penalty": "0"}]),
    st.sampled_from([{"1": [["JS"]]}, {"x": []}, {"0": []}, {"2": "JS QS"}, [1, 2], {"1": [[], [], []]}]),
)


@FUZZ
@given(data=st.data())
def test_from_record_on_damaged_records_raises_only_polignac_errors(data: st.DataObject) -> None:
    record = copy.deepcopy(data.draw(st.sampled_from(BASE_RECORDS), label="base"))
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        path = data.draw(st.sampled_from(list(json_paths(record))[1:]), label="path")
        parent = record
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans(), label="delete") and isinstance(parent, dict | list):
            del parent[path[-1]]
        else:
            # A copy: sampled_from hands out the same dict each time, and a later change may edit inside it.
            parent[path[-1]] = copy.deepcopy(data.draw(near_values, label="value"))
    replayed = only_polignac_errors(lambda: Match.from_record(record))
    if replayed is not None:
        assert isinstance(replayed, Match)
    else:
        with pytest.raises(RecordError):
            Match.from_record(record)


def test_from_record_errors_are_record_errors() -> None:
    """Spot checks of the documented error class, with the bad part named."""
    good = BASE_RECORDS[0]
    for damaged, words in [
        ({**good, "seed": -1}, "-1"),
        ({**good, "rules": {**good["rules"], "players": 9}}, "players"),
        ({**good, "actions": ["KS", *good["actions"]]}, "action 0"),
        ({**good, "actions": "pass"}, "actions"),
        ({k: v for k, v in good.items() if k != "seed"}, "seed"),
        ([], "list"),
    ]:
        with pytest.raises(RecordError, match=words):
            Match.from_record(damaged)  # type: ignore[arg-type]  # the last one is deliberately not a mapping
