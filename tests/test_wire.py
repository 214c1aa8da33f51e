"""Round trips through the polignac.v1 messages (``polignac.wire``): what the referee sends is what the bot gets.

A bot keeps no state: the PlayerView it rebuilds from a DecisionRequest must be the view the
referee built, field for field, in every preset and table size, in tie-break hands, after
forfeits and extra points.  Rulesets and events (as each seat sees them) must survive the trip
too.  Positions come from seeded random matches, so a failure replays.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

import polignac
from polignac import CARDS, Card, CardParseError, Contract, Match, Phase, PolignacError, Ruleset, cards_in, preset, redact
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.events import Forfeited, HandDealt, HandEnded, MatchEnded
from polignac.rules import deck_mask
from polignac.view import PlayerView
from polignac.wire import (
    TrickCache,
    TrickMessages,
    contract_from_pb,
    contract_to_pb,
    event_from_pb,
    event_to_pb,
    request_to_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    view_from_pb,
)


def rulesets() -> list[Ruleset]:
    out = []
    for name, base in polignac.PRESETS.items():
        for players in base.table_sizes():
            out.append(preset(name, players=players, limit=10))
            if base.capot:
                out.append(preset(name, players=players, general=True, limit=10))
    return out


RULESETS = rulesets()


def rid(rules: Ruleset) -> str:
    return f"{rules.name}-{rules.players}p" + ("-general" if rules.general else "")


def random_decision(match: Match, rnd: random.Random) -> polignac.Decision:
    options = match.legal_decisions()
    if match.phase is Phase.AUCTION:
        contracts = [o for o in options if o is not Contract.PASS]
        return rnd.choice(contracts) if contracts and rnd.random() < 0.2 else Contract.PASS
    return rnd.choice(options)


def top_cards_deal(rules: Ruleset, rnd: random.Random) -> list[list[polignac.Card]]:
    """Seat 0 (eldest in hand 1) holds the top cards of the pack: a contract it declares is made."""
    pack = cards_in(deck_mask(rules, rules.players))
    each = len(pack) // rules.players
    by_strength = sorted(pack, key=lambda c: (-rules.strength[c.index], c.index))
    rest = by_strength[each:]
    rnd.shuffle(rest)
    return [by_strength[:each]] + [rest[i * each : (i + 1) * each] for i in range(rules.players - 1)]


def new_match(rules: Ruleset, rnd: random.Random) -> Match:
    """A seeded match: sometimes with negative or near-limit starting totals, sometimes a made contract in hand 1."""
    seed = rnd.randrange(2**64)
    kind = rnd.randrange(4)
    if kind == 0:
        return Match(rules, seed, start_totals=[rnd.randrange(-5, rules.limit) for _ in range(rules.players)])
    if kind == 1 and rules.contracts:
        match = Match(rules, seed, deals={1: top_cards_deal(rules, rnd)})
        match.apply(Contract.GENERAL if rules.general else Contract.CAPOT)
        return match
    return Match(rules, seed)


def walk(match: Match, rnd: random.Random) -> Iterator[Match]:
    """Play ``match`` to the end at random with referee calls mixed in, yielding it before every decision."""
    while not match.is_over:
        yield match
        r = rnd.random()
        if r < 0.04:
            match.add_penalty(rnd.choice(match.seats), rnd.choice([0, 1, 5]), rnd.choice(["revoke", "timeout", "stale é"]))
        elif r < 0.05 and len(match.forfeited) < match.players - 2:
            match.forfeit(rnd.choice([s for s in match.seats if s not in match.forfeited]), rnd.choice(["crashed", "max_faults"]))
        else:
            match.apply(random_decision(match, rnd))


def finished_matches(seed: str) -> Iterator[Match]:
    rnd = random.Random(seed)
    for rules in RULESETS:
        for _ in range(2):
            match = new_match(rules, rnd)
            for _ in walk(match, rnd):
                pass
            yield match


# -- views ---------------------------------------------------------------------------------------


def round_trip(view: PlayerView, request_id: int = 7) -> PlayerView:
    rules = ruleset_from_pb(ruleset_to_pb(view.rules))  # the ruleset travels once, in Welcome
    request = request_to_pb(request_id, view, 1500, 30_000)
    assert (request.request_id, request.move_ms, request.bank_ms) == (request_id, 1500, 30_000)
    wire = pb.DecisionRequest.FromString(request.SerializeToString())  # through bytes, as on a socket
    return view_from_pb(rules, wire)


def assert_same_view(got: PlayerView, want: PlayerView) -> None:
    for f in dataclasses.fields(PlayerView):
        assert getattr(got, f.name) == getattr(want, f.name), f"field {f.name}: {getattr(got, f.name)!r} != {getattr(want, f.name)!r}"
    assert got == want


def check_views(rules: Ruleset, rnd: random.Random, count: int, seen: Counter[str]) -> None:
    """Round-trip ``count`` views of the seat to act at random positions; note what kinds of positions they were."""
    target = seen["views"] + count
    while seen["views"] < target:
        for match in walk(new_match(rules, rnd), rnd):
            if rnd.random() < 0.3:
                assert match.to_act is not None  # not over while walking
                view = match.view(match.to_act)
                assert_same_view(round_trip(view, rnd.randrange(2**64)), view)
                seen["views"] += 1
                seen[view.phase.value] += 1
                seen["tiebreak"] += view.tiebreak
                seen["forfeited"] += bool(view.forfeited)
                seen["forfeited in tiebreak"] += view.tiebreak and bool(view.forfeited)
                seen["penalties"] += any(view.penalties)
                seen["declarer"] += view.declarer is not None
                seen["mid-trick"] += bool(view.current_trick)
                seen["negative"] += min(view.totals) < 0


@pytest.mark.parametrize("rules", RULESETS, ids=rid)
def test_view_round_trips_through_a_decision_request(rules: Ruleset) -> None:
    seen: Counter[str] = Counter()
    check_views(rules, random.Random(rid(rules)), 150, seen)
    assert seen["play"] and seen["penalties"] and seen["mid-trick"], seen
    if rules.contracts:
        assert seen["auction"] and seen["declarer"], seen


def test_views_in_tiebreaks_and_after_forfeits_round_trip() -> None:
    """The same over every ruleset together, counting the rarer positions: tie-breaks, forfeits, negative totals."""
    seen: Counter[str] = Counter()
    rnd = random.Random("rare")
    for rules in RULESETS:
        check_views(rules, rnd, 40, seen)
    assert min(seen[k] for k in ("tiebreak", "forfeited", "forfeited in tiebreak", "negative")) >= 10, seen


def test_view_round_trip_keeps_seat_zero_and_empty_fields() -> None:
    """Zero values (seat 0, declarer 0, no tricks yet, zero totals) are not lost as protobuf defaults."""
    match = Match(preset("classic", general=True), 3)
    view = match.view(0)
    assert view.seat == 0 and view.tricks == () and view.auction == () and view.totals == (0, 0, 0, 0)
    assert_same_view(round_trip(view, 0), view)
    match.apply(Contract.GENERAL)
    view = match.view(0)
    assert view.declarer == 0 and view.phase is Phase.PLAY
    assert_same_view(round_trip(view), view)


@pytest.mark.parametrize("rules", RULESETS, ids=rid)
def test_views_parsed_with_a_cache_kept_for_the_match_equal_the_engines(rules: Ruleset) -> None:
    """As in the SDK: each seat keeps one TrickCache for the whole match and hears only its own requests."""
    rnd = random.Random(f"sdk-cache-{rid(rules)}")
    for _ in range(2):
        caches = [TrickCache() for _ in range(rules.players)]
        referee_tricks = TrickMessages()
        for match in walk(new_match(rules, rnd), rnd):
            seat = match.to_act
            assert seat is not None
            want = match.view(seat)
            wire = pb.DecisionRequest.FromString(request_to_pb(1, want, 10, 10, referee_tricks).SerializeToString())
            assert_same_view(view_from_pb(rules, wire, caches[seat]), want)


@pytest.mark.parametrize("rules", RULESETS, ids=rid)
def test_requests_built_with_a_trick_cache_equal_those_built_without(rules: Ruleset) -> None:
    """The referee's TrickMessages, shared by every seat of a match, never serves another hand's tricks."""
    rnd = random.Random(f"cache-{rid(rules)}")
    for _ in range(2):
        cache = TrickMessages()
        for match in walk(new_match(rules, rnd), rnd):
            for seat in (match.to_act, rnd.choice(match.seats)):
                assert seat is not None  # not over while walking
                view = match.view(seat)
                assert request_to_pb(1, view, 10, 10, cache) == request_to_pb(1, view, 10, 10)


def test_view_from_pb_refuses_bad_card_text() -> None:
    match = Match(preset("classic"), 3)
    for _ in range(4):
        match.apply(Contract.PASS)
    for _ in range(6):
        match.apply(match.legal_cards()[0])
    assert match.to_act is not None
    view = match.view(match.to_act)
    assert view.tricks and view.current_trick
    rules = view.rules
    corruptions: dict[str, Callable[[pb.DecisionRequest], object]] = {
        "hand": lambda r: r.view.hand.__setitem__(0, "ZZ"),
        "legal": lambda r: r.legal_cards.__setitem__(0, "1S"),
        "trick": lambda r: setattr(r.view.tricks[0].plays[0], "card", "JX"),
        "current trick": lambda r: setattr(r.view.current_trick[0], "card", ""),
        "extra hand card": lambda r: r.view.hand.append("11H"),
    }
    for what, corrupt in corruptions.items():
        request = request_to_pb(1, view, 1000, 1000)
        corrupt(request)
        for error in (CardParseError, PolignacError):  # PolignacError: the base class, which bots catch
            with pytest.raises(error):
                # The view is parsed lazily: the bad field raises when it is first read.
                parsed = view_from_pb(rules, request)
                print(what, parsed.legal, parsed.hand, parsed.tricks, parsed.current_trick)


def test_a_wire_view_is_a_player_view_in_every_way() -> None:
    """The lazy view compares, hashes, prints, copies and pickles as the engine's own view."""
    match = Match(preset("classic"), 5)
    for _ in range(4):
        match.apply(Contract.PASS)
    for _ in range(6):
        match.apply(match.legal_cards()[0])
    assert match.to_act is not None
    want = match.view(match.to_act)
    got = round_trip(want)
    assert isinstance(got, PlayerView)
    assert got == want and want == got and hash(got) == hash(want)
    assert repr(round_trip(want)) == repr(want)  # repr of a fresh, unread view parses it all
    assert got.hand is got.hand  # parsed once, then kept
    assert dataclasses.replace(got, legal=()) == dataclasses.replace(want, legal=())
    assert pickle.loads(pickle.dumps(round_trip(want))) == want
    assert copy.deepcopy(round_trip(want)) == want
    assert dataclasses.asdict(round_trip(want)) == dataclasses.asdict(want)
    assert round_trip(want).to_dict() == want.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.hand = ()  # type: ignore[misc]  # a frozen field, on purpose
    other = match.view((match.to_act + 1) % 4)
    assert round_trip(want) != other and round_trip(want) != "a view"  # type: ignore[comparison-overlap]  # not a view, on purpose


# -- rulesets ------------------------------------------------------------------------------------


def ruleset_variants() -> list[Ruleset]:
    classic = polignac.PRESETS["classic"]
    out = list(polignac.PRESETS.values())
    out += [preset(name, players=p) for name, base in polignac.PRESETS.items() for p in base.table_sizes() if p != 4]
    out += [
        classic.with_changes(general=True),
        classic.with_changes(capot=False, general=True),
        classic.with_changes(removed_sevens="red", players=5),
        classic.with_changes(trick_order="A7K8Q9JT"),
        classic.with_changes(penalty_cards={}),
        classic.with_changes(penalty_cards={"AS": 100, "7H": 1, "TD": 3}),
        classic.with_changes(first_trick_points=2, last_trick_points=3, contract_points=0),
        classic.with_changes(limit=1, tiebreak_hands=0),
        classic.with_changes(limit=10_000, tiebreak_hands=20),
        classic.with_changes(fault_policy="forfeit", revoke_points=0, timeout_points=100, max_faults=1000),
        classic.with_changes(name="a name with spaces and ünïcode ♠"),
        polignac.PRESETS["slobberhannes"].with_changes(players=6, removed_sevens="red", general=True),
    ]
    return out


@pytest.mark.parametrize("rules", ruleset_variants(), ids=lambda r: r.name)
def test_ruleset_round_trips(rules: Ruleset) -> None:
    message = ruleset_to_pb(rules)
    back = ruleset_from_pb(pb.Ruleset.FromString(message.SerializeToString()))
    assert back == rules
    assert back.to_dict() == rules.to_dict()
    assert (back.strength, back.card_points, back.penalty_mask) == (rules.strength, rules.card_points, rules.penalty_mask)


def test_ruleset_from_pb_validates() -> None:
    message = ruleset_to_pb(preset("classic"))
    message.players = 9
    with pytest.raises(PolignacError, match="players"):
        ruleset_from_pb(message)
    message = ruleset_to_pb(preset("classic"))
    message.trick_order = "KQJ"
    with pytest.raises(PolignacError, match="trick_order"):
        ruleset_from_pb(message)


def test_contracts_round_trip() -> None:
    for contract in Contract:
        assert contract_from_pb(contract_to_pb(contract)) is contract
    assert contract_from_pb(pb.CONTRACT_UNSPECIFIED) is None
    assert contract_from_pb(99) is None


# -- events --------------------------------------------------------------------------------------


def test_events_round_trip_as_each_seat_sees_them() -> None:
    kinds: Counter[str] = Counter()
    for match in finished_matches("events"):
        seats = range(match.players)
        for event in match.events:
            if isinstance(event, MatchEnded):
                assert event_to_pb(event) is None
                continue
            for seat in seats:
                seen = redact(event, seat)
                message = event_to_pb(seen)
                assert message is not None
                back = event_from_pb(pb.Event.FromString(message.SerializeToString()), seat)
                if isinstance(seen, Forfeited):
                    # hand_abandoned is not on the wire.
                    assert isinstance(back, Forfeited) and (back.seat, back.reason) == (seen.seat, seen.reason)
                else:
                    assert back == seen, f"seat {seat}: {back!r} != {seen!r}"
            kinds[type(event).__name__] += 1
            if isinstance(event, HandDealt) and len(event.seats) < match.players:
                kinds["tiebreak deal for a seat out of it"] += 1
            if isinstance(event, HandEnded) and min(event.scores) < 0:
                kinds["negative score"] += 1
            if isinstance(event, HandEnded) and event.contract_made is False:
                kinds["failed contract"] += 1
    expected = {
        "HandDealt",
        "Declared",
        "CardPlayed",
        "TrickWon",
        "PenaltyAdded",
        "HandEnded",
        "Forfeited",
        "TiebreakStarted",
        "tiebreak deal for a seat out of it",
        "negative score",
        "failed contract",
    }
    assert expected <= set(kinds), kinds


def test_a_deal_for_a_seat_out_of_the_tiebreak_shows_no_cards() -> None:
    deal = HandDealt(7, 2, (0, 2), (tuple(polignac.CARDS[:15]), tuple(polignac.CARDS[15:30])), True)
    for seat, own in ((0, 0), (2, 1)):
        message = event_to_pb(redact(deal, seat))
        assert message is not None
        back = event_from_pb(message, seat)
        assert isinstance(back, HandDealt) and back.hands[own] == deal.hands[own] and not back.hands[1 - own]
    message = event_to_pb(redact(deal, 1))
    assert message is not None
    back = event_from_pb(message, 1)
    assert back == deal._replace(hands=((), ()))


def test_unknown_or_empty_events_are_ignored() -> None:
    assert event_from_pb(pb.Event(), 0) is None


def test_event_from_pb_refuses_bad_card_text() -> None:
    with pytest.raises(CardParseError):
        event_from_pb(pb.Event(card_played=pb.Play(seat=1, card="QQ")), 0)
    with pytest.raises(CardParseError):
        event_from_pb(pb.Event(hand_started=pb.HandStarted(hand_number=1, dealer=3, seats=[0, 1, 2, 3], hand=["JS", "nope"])), 0)


@pytest.mark.parametrize("text", ["js", "Js", "jS", "10H", "10♥", "J♠", " 7D\t", "7D ", "7d", "", "7", "TH\n", "1OH", 7, None])
def test_the_wire_reads_card_text_exactly_as_documented_and_nothing_else(text: object) -> None:
    with pytest.raises(CardParseError, match="uppercase"):
        Card.from_wire(text)  # type: ignore[arg-type]  # not always text, on purpose


def test_every_card_reads_back_from_its_wire_text_and_people_keep_the_lenient_parser() -> None:
    assert all(Card.from_wire(str(card)) is card for card in CARDS)
    assert Card.parse(" 10♥ ") is Card.parse("th") is Card.from_wire("TH")
