"""Protocol 1.1: the new games on the wire, version negotiation, and 1.0 clients kept working.

- Every setting of every preset travels in the Ruleset message and comes back equal; a
  1.0 referee's message (the new fields unset) reads as the game 1.0 played.
- The turned card travels in the view and in HandStarted, a hand's result parts in HandEnded.
- A client saying "1" or "1.0" is seated in the games 1.0 describes in full and refused, at
  its Hello and naming the game, in the others; "1.1" (and later minors) play everything.
- A recorded 1.0 session (tests/data/v1_0_session.json, from the referee of 8ee2076) gets
  today the very answers it got then, read with its own 1.0 schema.
- In a 32-card game the card text 2C is MALFORMED (no card of that game), as it was in 1.0.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

import polignac
from polignac import Card, Contract, Match, Phase, Ruleset, ScoreException, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot import Bot, MatchInfo, run_async
from polignac.bot.local import _judge
from polignac.bots import builtin_bot
from polignac.events import Event, HandDealt, HandEnded, redact
from polignac.faults import Fault
from polignac.rules import FRENCH_32_GAMES, deck_mask
from polignac.view import PlayerView
from polignac.wire import (
    PROTOCOL_VERSION,
    card_from_wire,
    event_from_pb,
    event_to_pb,
    request_to_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    view_from_pb,
)
from polignac_arena.referee import RefereeServer, TimeControl
from polignac_arena.referee.versions import SPOKEN, ProtocolVersion, beyond_1_0, parse_version, refusal
from polignac_arena.seats.stdio_bridge import response_lines
from tests import v10_session
from tests.referee.helpers import RawSeat, match_with_raw_seat, referee, run

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "tests" / "data" / "v1_0_session.json"


def every_table() -> list[Ruleset]:
    return [preset(name, players=n) for name, base in polignac.PRESETS.items() for n in base.table_sizes()]


def through_the_wire(message: Any) -> Any:
    """A message after a trip through bytes, as on a socket."""
    return type(message).FromString(message.SerializeToString())


# -- the Ruleset -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", every_table(), ids=lambda r: f"{r.name}-{r.players}p")
def test_every_preset_and_table_size_round_trips_through_the_ruleset_message(rules: Ruleset) -> None:
    back = ruleset_from_pb(through_the_wire(ruleset_to_pb(rules)))
    assert back == rules and back.to_dict() == rules.to_dict()
    assert (back.strength, back.card_points, back.penalty_mask) == (rules.strength, rules.card_points, rules.penalty_mask)


def test_the_ruleset_message_has_a_field_for_every_setting_and_sends_them_all() -> None:
    fields = set(pb.Ruleset.DESCRIPTOR.fields_by_name)
    assert set(Ruleset().to_dict()) == fields
    knaves = ruleset_to_pb(preset("knaves"))
    assert (knaves.pack, knaves.trumps, knaves.trick_points, knaves.direction, knaves.tiebreak) == (52, "turned", 1, "higher", "play-on")
    assert knaves.trick_order == "AKQJT98765432"
    bassadewitz = ruleset_to_pb(preset("bassadewitz"))
    assert bassadewitz.hand_score == "place" and list(bassadewitz.place_scores) == [0, 1, 2, 3, 5]
    assert list(bassadewitz.every_trick_scores) == [0, 5] and bassadewitz.big_take_points == 100
    assert list(bassadewitz.big_take_scores) == [8, 0] and bassadewitz.penalty_cards["AS"] == 11
    assert ruleset_to_pb(preset("gras-obern")).faces == "german"


def test_a_ruleset_from_a_1_0_referee_reads_as_the_game_1_0_played() -> None:
    for name in FRENCH_32_GAMES:
        rules = preset(name, players=5)
        message = ruleset_to_pb(rules)
        for field in ("pack", "trumps", "trick_points", "hand_score", "direction", "tiebreak", "faces"):
            message.ClearField(field)  # what a 1.0 referee sends: none of them
        assert ruleset_from_pb(through_the_wire(message)) == rules


def test_a_ruleset_that_makes_no_game_is_refused_when_read() -> None:
    message = ruleset_to_pb(preset("knaves"))
    message.players = 4
    with pytest.raises(polignac.RulesetError, match=r"players|trumps"):
        ruleset_from_pb(message)
    message = ruleset_to_pb(preset("classic"))
    message.direction = "sideways"
    with pytest.raises(polignac.RulesetError, match="direction"):
        ruleset_from_pb(message)


# -- the turned card and the hand's result ---------------------------------------------------------


def play_out(rules: Ruleset, seed: int) -> Match:
    match = Match(rules, seed)
    rnd = random.Random(seed)
    while not match.is_over:
        if rnd.random() < 0.01:
            assert match.to_act is not None  # not over
            match.add_penalty(match.to_act, 5, "illegal")
        match.apply(rnd.choice(match.legal_decisions()))
    return match


def test_a_view_with_a_turned_card_round_trips() -> None:
    rules = preset("knaves")
    match = Match(rules, 11)
    seen = 0
    while not match.is_over and seen < 60:
        seat = match.to_act
        assert seat is not None
        view = match.view(seat)
        request = through_the_wire(request_to_pb(9, view, 1000, 1000))
        assert request.view.turned == str(match.turned) and len(request.view.turned) == 2
        back = view_from_pb(ruleset_from_pb(ruleset_to_pb(rules)), request)
        assert back.turned is not None and match.turned is not None
        assert back == view and back.turned == view.turned and back.trump is match.turned.suit
        assert back.unseen_mask == view.unseen_mask and not back.turned.bit & back.unseen_mask
        match.apply(match.legal_decisions()[0])
        seen += 1
    plain = Match(preset("classic"), 11)
    request = request_to_pb(1, plain.view(0), 1000, 1000)
    assert request.view.turned == "" and view_from_pb(plain.rules, request).turned is None


@pytest.mark.parametrize("name", ["knaves", "bassadewitz", "classic", "slobberhannes"])
def test_hand_started_and_hand_ended_carry_the_turned_card_and_the_result_parts(name: str) -> None:
    rules = preset(name)
    match = play_out(rules, 5)
    deals = ended = 0
    for event in match.events:
        for seat in range(rules.players):
            seen = redact(event, seat)
            message = event_to_pb(seen)
            if message is None:
                continue
            back = event_from_pb(through_the_wire(message), seat)
            assert back == seen
            if isinstance(seen, HandDealt):
                assert message.hand_started.turned == ("" if seen.turned is None else str(seen.turned))
                deals += 1
            if isinstance(seen, HandEnded):
                assert isinstance(back, HandEnded) and back.result == seen.result and back.result is not None
                assert message.hand_ended.HasField("result")
                ended += 1
    assert deals and ended
    if rules.trumps.value == "turned":
        assert all(isinstance(e, HandDealt) and e.turned is not None for e in match.events if isinstance(e, HandDealt))


def bassadewitz_hand(seat0: list[Card], others: list[Card], lead_weakest: bool = False) -> Match:
    """One 3-player Bassadewitz hand: seat 0 holds ``seat0``, everyone plays its strongest legal card.

    With ``lead_weakest`` seat 0 (eldest) leads its weakest card first, and so gives up that trick.
    """
    rules = preset("bassadewitz", players=3)
    match = Match(rules, 1, deals={1: [seat0, others[:10], others[10:]]})
    if lead_weakest:
        match.apply(min(match.legal_cards(), key=lambda c: (rules.strength[c.index], c.index)))
    while match.hand_number == 1 and not match.is_over:
        match.apply(max(match.legal_cards(), key=lambda c: (rules.strength[c.index], c.index)))
    return match


def test_the_result_parts_of_every_exception_round_trip() -> None:
    """Bassadewitz's exceptions, as the engine scored them, arrive in HandEnded's result parts."""
    rules = preset("bassadewitz", players=3)
    pack = sorted(polignac.cards_in(deck_mask(rules, 3)), key=lambda c: (-rules.strength[c.index], c.index))
    hands = {
        ScoreException.EVERY_TRICK: bassadewitz_hand(pack[:10], pack[10:]),  # the ten strongest cards take every trick
        ScoreException.BIG_TAKE: bassadewitz_hand(pack[:9] + pack[-1:], pack[9:-1], lead_weakest=True),  # all but the first trick
        ScoreException.NONE: Match(rules, 4),
    }
    for exception, match in hands.items():
        while match.hand_number == 1:
            match.apply(match.legal_decisions()[0])
        result = match.hand_results[0]
        assert result.exception is exception
        ended = next(e for e in match.events if isinstance(e, HandEnded))
        message = through_the_wire(event_to_pb(ended))
        assert message.hand_ended.result.exception == pb.ScoreException.Value(f"SCORE_EXCEPTION_{exception.name}")
        back = event_from_pb(message, 0)
        assert isinstance(back, HandEnded) and back.result == result


def test_a_hand_ended_from_a_1_0_referee_has_no_result() -> None:
    message = pb.Event(hand_ended=pb.HandEnded(hand_number=1, contract=pb.CONTRACT_PASS, scores=[1, 0, 3, 1], totals=[1, 0, 3, 1]))
    back = event_from_pb(message, 0)
    assert isinstance(back, HandEnded) and back.result is None and back.scores == (1, 0, 3, 1)


def test_the_stdio_bridge_writes_the_new_fields() -> None:
    rules = preset("knaves")
    match = play_out(rules, 2)
    welcome: dict[str, Any] = response_lines(pb.PlayResponse(welcome=pb.Welcome(ruleset=ruleset_to_pb(rules))))[0]
    assert welcome["ruleset"]["pack"] == 52 and welcome["ruleset"]["trumps"] == "turned" and welcome["ruleset"]["direction"] == "higher"
    assert welcome["ruleset"]["place_scores"] == [] and welcome["ruleset"]["tiebreak"] == "play-on"
    response = pb.PlayResponse(events=[e for e in map(event_to_pb, (redact(x, 1) for x in match.events)) if e is not None])
    lines: list[dict[str, Any]] = response_lines(response)
    started = [line for line in lines if line["event"] == "hand_started"]
    assert started and all(len(line["turned"]) == 2 and len(line["hand"]) == 17 for line in started)
    ended = [line for line in lines if line["event"] == "hand_ended"]
    parts = ended[0]["result"]
    assert list(parts) == ["seats", "tricks", "card_points", "trick_points", "first_last_points", "fault_points", "exception"]
    assert parts["exception"] == "none" and sum(parts["tricks"]) == 17
    fresh = Match(rules, 2)
    request: dict[str, Any] = response_lines(pb.PlayResponse(decision_request=request_to_pb(3, fresh.view(0), 10, 10)))[0]
    assert request["view"]["turned"] == str(fresh.turned)


# -- versions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("1", ProtocolVersion(1, 0)),
        ("1.0", ProtocolVersion(1, 0)),
        ("1.1", ProtocolVersion(1, 1)),
        ("1.2", ProtocolVersion(1, 2)),
        ("1.10", ProtocolVersion(1, 10)),
        ("1.1.3", ProtocolVersion(1, 1)),
        ("1.x", ProtocolVersion(1, 0)),
        ("1.", ProtocolVersion(1, 0)),
        ("2", None),
        ("", None),
        (" 1", None),
        ("01", None),
        ("v1.1", None),
    ],
)
def test_protocol_versions_are_read_as_documented(text: str, version: ProtocolVersion | None) -> None:
    assert parse_version(text) == version


def test_the_games_1_0_describes_in_full_are_the_32_card_french_and_german_ones() -> None:
    assert [name for name, rules in polignac.PRESETS.items() if not beyond_1_0(rules)] == [*FRENCH_32_GAMES, "eichel-obern", "gras-obern"]
    assert beyond_1_0(preset("knaves")) == [
        "pack = 52",
        "trumps = 'turned'",
        "trick_points = 1",
        "direction = 'higher'",
        "tiebreak = 'play-on'",
    ]
    assert beyond_1_0(preset("bassadewitz")) == ["hand_score = 'place'"]
    assert beyond_1_0(preset("classic").with_changes(direction="higher")) == ["direction = 'higher'"]
    for version in ("1.1", "1.2"):
        assert all(refusal(version, rules) is None for rules in polignac.PRESETS.values())
    why = refusal("1.0", preset("knaves"))
    assert why is not None and "'knaves'" in why and "pack = 52" in why and f'"{SPOKEN}"' in why


async def _hello_answer(server: RefereeServer, rules: Ruleset, version: str) -> pb.PlayResponse | grpc.aio.AioRpcError:
    """What seat 0 hears after saying ``version`` (the others are SDK bots); the match is played out either way."""
    host, raw, result, polite = await match_with_raw_seat(server, rules=rules)
    await raw.open()
    await raw.hello(version)
    try:
        answer: pb.PlayResponse | grpc.aio.AioRpcError = await raw.read()
    except grpc.aio.AioRpcError as exc:
        answer = exc
        await raw.close()
        retry = RawSeat(server.address, host.tokens[0])  # the seat is still free: a 1.1 client may take it
        await retry.open()
        await retry.hello(PROTOCOL_VERSION)
        raw = retry
    await raw.play_politely()
    await raw.close()
    assert (await result).status == "finished"
    await asyncio.gather(*polite)
    return answer


@pytest.mark.parametrize(
    ("game", "version", "refused"),
    [
        ("classic", "1", False),
        ("classic", "1.0", False),
        ("classic", "1.1", False),
        ("gras-obern", "1.0", False),
        ("knaves", "1", True),
        ("knaves", "1.0", True),
        ("bassadewitz", "1", True),
        ("knaves", "1.1", False),
        ("bassadewitz", "1.1", False),
        ("knaves", "1.2", False),
    ],
)
def test_a_client_is_seated_or_refused_by_the_version_it_says(game: str, version: str, refused: bool) -> None:
    async def scenario() -> None:
        async with referee() as server:
            answer = await _hello_answer(server, preset(game), version)
            if refused:
                assert isinstance(answer, grpc.aio.AioRpcError)
                assert answer.code() == grpc.StatusCode.FAILED_PRECONDITION
                assert f"cannot describe the game {game!r}" in (answer.details() or "")
                assert f'say protocol_version "{SPOKEN}"' in (answer.details() or "")
            else:
                assert isinstance(answer, pb.PlayResponse) and answer.WhichOneof("payload") == "welcome"

    run(scenario())


# -- a recorded 1.0 session ------------------------------------------------------------------------


def test_a_recorded_1_0_session_gets_the_answers_it_got_from_the_1_0_referee() -> None:
    session = json.loads(SESSION.read_text(encoding="utf-8"))
    schema = v10_session.schema_of(base64.b64decode(session["schema"]))
    old_fields = set(schema["PlayResponse"]().DESCRIPTOR.fields_by_name)
    assert old_fields == {"events", "welcome", "decision_request", "fault_notice", "match_ended"}
    assert "status_code" not in schema["PlayResponse"]().match_ended.DESCRIPTOR.fields_by_name  # it is the 1.0 schema

    async def scenario() -> tuple[list[Any], Any]:
        async with referee() as server:
            rules = Ruleset.from_dict(session["rules"])
            host = server.create_match(rules, session["seed"], TimeControl(*session["clock_ms"]), match_id=session["match_id"])
            seats = [
                asyncio.ensure_future(v10_session.replay_seat(server.address, host.tokens[s], log, schema))
                for s, log in enumerate(session["seats"])
            ]
            result = await server.run_match(host)
            return list(await asyncio.gather(*seats)), result

    replays, result = run(scenario())
    assert result.status == session["result"]["status"] and list(result.places) == session["result"]["places"]
    assert list(result.totals) == session["result"]["totals"] and result.faults == session["result"]["faults"]
    kinds = set()
    for seat, (pairs, unknown) in enumerate(replays):
        assert pairs
        for number, (want, got) in enumerate(pairs):
            assert got == want, f"seat {seat}, message {number}: the 1.0 referee sent\n{want}\ntoday's sends\n{got}"
            kinds.add(want.WhichOneof("payload"))
            kinds.update(e.WhichOneof("event") for e in want.events)
        assert unknown, "today's referee sends 1.1 fields too (a 1.0 client ignores them)"
    faults = {p[0].fault_notice.fault for pairs, _ in replays for p in pairs if p[0].WhichOneof("payload") == "fault_notice"}
    assert faults == {pb.FAULT_MALFORMED, pb.FAULT_ILLEGAL, pb.FAULT_STALE}  # 2C, a card held but not legal, a stale id
    assert {"welcome", "decision_request", "fault_notice", "match_ended", "hand_ended", "tiebreak_started", "declared"} <= kinds


# -- card text of ranks 2 to 6 ---------------------------------------------------------------------


def test_card_text_of_ranks_2_to_6_is_no_card_of_a_32_card_game() -> None:
    classic, knaves = preset("classic"), preset("knaves")
    for text in ("2C", "6H", "3S", "5D"):
        with pytest.raises(polignac.CardParseError, match="32-card pack"):
            card_from_wire(text, classic)
        assert card_from_wire(text, knaves) is Card.parse(text)
    assert card_from_wire("JS", classic) is Card.parse("JS")
    with pytest.raises(polignac.CardParseError, match="uppercase"):
        card_from_wire("2c", knaves)


def test_the_local_harness_judges_2c_in_a_32_card_game_as_the_referee_does() -> None:
    match = Match(preset("no-contracts"), 3)
    for answer in ("2C", Card.parse("6H")):
        decision, fault, why = _judge(match, answer)
        assert decision is None and fault is Fault.MALFORMED and "32-card pack" in why
    knaves = Match(preset("knaves"), 3)
    assert knaves.to_act is not None
    held = set(knaves.hand(knaves.to_act))
    absent = next(c for c in polignac.CARDS if c.rank < 7 and c not in held)
    assert _judge(knaves, str(absent))[1] is Fault.ILLEGAL


@pytest.mark.parametrize(("game", "fault"), [("classic", pb.FAULT_MALFORMED), ("knaves", pb.FAULT_ILLEGAL)])
def test_the_referee_judges_a_low_card_by_the_games_pack(game: str, fault: int) -> None:
    async def scenario() -> None:
        async with referee() as server:
            _host, raw, result, polite = await match_with_raw_seat(server, rules=preset(game))
            await raw.open()
            await raw.hello(PROTOCOL_VERSION)
            while True:
                message = await raw.next_payload("decision_request")
                assert message is not None
                request = message.decision_request
                if request.kind == pb.DECISION_KIND_CARD:
                    break
                await raw.answer_first(request)
            held = set(request.view.hand) | {request.view.turned}
            low = next(t for t in ("2C", "3C", "4C", "5C", "6C", "2D") if t not in held)
            await raw.decide(request.request_id, card=low)
            notice = (await raw.expect("fault_notice")).fault_notice
            assert notice.fault == fault and notice.request_id == request.request_id and notice.fallback
            await raw.play_politely()
            assert (await result).status == "finished"
            await asyncio.gather(*polite)

    run(scenario())


# -- the SDK -----------------------------------------------------------------------------------------


class Listener(Bot):
    """The heuristic bot, keeping what the SDK rebuilt from the wire."""

    name = "listener"

    def __init__(self) -> None:
        self.inner = builtin_bot("heuristic", 1)
        self.info: MatchInfo | None = None
        self.views: list[PlayerView] = []
        self.events: list[Event] = []

    def on_match_start(self, info: MatchInfo) -> None:
        self.info = info

    def on_event(self, event: Event) -> None:
        self.events.append(event)

    def decide(self, view: PlayerView) -> polignac.Decision:
        self.views.append(view)
        return self.inner.decide(view)


@pytest.mark.parametrize("game", ["knaves", "bassadewitz"])
def test_the_sdk_rebuilds_the_ruleset_the_turned_card_and_the_results(game: str) -> None:
    rules = preset(game, limit=8)

    async def scenario() -> tuple[Listener, Any]:
        async with referee() as server:
            host = server.create_match(rules, 7, TimeControl(2000, 5000, 5000))
            listener = Listener()
            others = [builtin_bot("cautious", 2), builtin_bot("random", 3), builtin_bot("heuristic", 4)][: rules.players - 1]
            bots = [run_async(bot, server.address, host.tokens[s]) for s, bot in enumerate([listener, *others])]
            tasks = [asyncio.ensure_future(b) for b in bots]
            result = await server.run_match(host)
            await asyncio.gather(*tasks)
            assert result.status == "finished" and result.faults == [{}] * rules.players
            return listener, host

    listener, host = run(scenario())
    assert listener.info is not None and listener.info.rules == rules
    turned = {e.hand_number: e.turned for e in host.match.events if isinstance(e, HandDealt)}
    assert listener.views and all(v.turned == turned[v.hand_number] for v in listener.views if v.phase is Phase.PLAY)
    results = [e.result for e in listener.events if isinstance(e, HandEnded)]
    assert results and results == list(host.match.hand_results)
    dealt = [e for e in listener.events if isinstance(e, HandDealt)]
    assert [d.turned for d in dealt] == [turned[d.hand_number] for d in dealt]
    assert Contract.PASS not in {d for v in listener.views for d in v.legal_contracts} or rules.contracts
