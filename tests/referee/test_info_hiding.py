"""No seat ever receives another seat's unplayed card, the seed, or the order of the pack.

Over every preset and table size; the card turned for trumps is the one card every seat is
shown that no one holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf.message import Message

from polignac import PRESETS, Card, Event, cards_in, preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.events import CardPlayed, HandDealt, MatchEnded, TrickWon
from polignac_arena.referee import MatchHost
from tests.referee.helpers import polite_match, referee, run

SEED = 0x5EED_1234_ABCD_9876  # distinctive, to look for it in every field
CARD_TEXTS = {str(c) for c in cards_in((1 << 52) - 1)}


def strings_and_numbers(message: Message, skip: tuple[str, ...] = ("ruleset",)) -> tuple[list[str], list[int]]:
    """Every string and integer anywhere in ``message`` (the ruleset's penalty-card table aside)."""
    texts: list[str] = []
    numbers: list[int] = []
    for field, value in message.ListFields():
        if field.name in skip:
            continue
        values = value if field.is_repeated else [value]
        for item in values:
            if isinstance(item, Message):
                t, n = strings_and_numbers(item, skip)
                texts += t
                numbers += n
            elif isinstance(item, str):
                texts.append(item)
            elif isinstance(item, int) and not isinstance(item, bool):
                numbers.append(item)
    return texts, numbers


@dataclass
class Sent:
    """One message to a seat and, at that moment, the truth it must not exceed."""

    seat: int
    message: pb.PlayResponse
    unplayed: dict[int, int]
    events: list[Event]
    played_this_hand: set[str]
    turned: str
    """The card turned for trumps this hand, "" when none."""


def watch(host: MatchHost, seen: list[Sent]) -> None:
    def on_send(seat: int, message: pb.PlayResponse) -> None:
        match = host.match
        copy = pb.PlayResponse()
        copy.CopyFrom(message)
        played = {str(c) for t in match.tricks for c in t.cards} | {str(c) for _, c in match.current_trick}
        turned = "" if match.turned is None else str(match.turned)
        seen.append(Sent(seat, copy, {s: match.hand_mask(s) for s in range(match.players)}, list(match.events), played, turned))

    host.on_message_sent = on_send


def check_events(sent: Sent, pointer: dict[int, int]) -> None:
    """Each event in the message is the next engine event, holding only what the seat may know."""
    engine = [e for e in sent.events if not isinstance(e, MatchEnded)]
    for message in sent.message.events:
        event = engine[pointer[sent.seat]]
        pointer[sent.seat] += 1
        kind = message.WhichOneof("event")
        if isinstance(event, HandDealt):
            assert kind == "hand_started"
            own = event.hands[event.seats.index(sent.seat)] if sent.seat in event.seats else ()
            assert list(message.hand_started.hand) == [str(c) for c in own], "a deal shows only the seat's own cards"
            turned = "" if event.turned is None else str(event.turned)
            assert message.hand_started.turned == turned, "every seat is shown the turned card"
            assert turned not in {str(c) for hand in event.hands for c in hand}, "the turned card is in no hand"
        elif isinstance(event, CardPlayed):
            assert kind == "card_played" and message.card_played.card == str(event.card)
        elif isinstance(event, TrickWon):
            assert kind == "trick_won" and [p.card for p in message.trick_won.plays] == [str(c) for c in event.cards]
        else:
            texts, _ = strings_and_numbers(message)
            assert not CARD_TEXTS.intersection(texts), f"{kind} names a card: {message}"


@pytest.mark.parametrize("name", list(PRESETS))
def test_no_message_reveals_hidden_cards_the_seed_or_the_pack(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> list[Sent]:
        seen: list[Sent] = []
        async with referee("unix") as server:
            original = server.create_match

            def create_and_watch(*args: Any, **kwargs: Any) -> MatchHost:
                host = original(*args, **kwargs)
                watch(host, seen)
                return host

            monkeypatch.setattr(server, "create_match", create_and_watch)
            sizes = PRESETS[name].table_sizes()
            assert sizes
            for players in sizes:
                rules = preset(name, players=players, limit=10)
                result, _ = await polite_match(server, rules, SEED)
                assert result.status == "finished"
                pointer = dict.fromkeys(range(players), 0)
                assert all(bool(sent.turned) == (rules.trumps.value == "turned") for sent in seen)
                for sent in seen:
                    check_events(sent, pointer)
                    check_payload(sent)
                seen.clear()
        return seen

    run(scenario())


def check_payload(sent: Sent) -> None:
    texts, numbers = strings_and_numbers(sent.message)
    assert SEED not in numbers and str(SEED) not in " ".join(texts) and format(SEED, "x") not in " ".join(texts)
    if sent.message.WhichOneof("payload") != "decision_request":
        return
    view = sent.message.decision_request.view
    own = {str(c) for c in cards_in(sent.unplayed[sent.seat])}
    assert set(view.hand) == own, "the view holds exactly the seat's unplayed cards"
    shown = {p.card for t in view.tricks for p in t.plays} | {p.card for p in view.current_trick}
    assert shown == sent.played_this_hand, "the view shows exactly the cards played this hand"
    hidden = {str(c) for other, mask in sent.unplayed.items() if other != sent.seat for c in cards_in(mask)}
    assert view.turned == sent.turned, "every seat is shown the turned card"
    assert sent.turned not in hidden | own | shown, "the turned card is in no hand and never played"
    view_texts, _ = strings_and_numbers(view)
    assert not hidden.intersection(view_texts)
    request = sent.message.decision_request
    assert set(request.legal_cards) <= own


def test_a_seat_out_of_a_tiebreak_hand_is_told_nothing_of_its_cards() -> None:
    from polignac import Match
    from polignac.events import HandDealt, redact
    from polignac.wire import event_to_pb

    for seed in range(500):  # find a first hand that leaves seats 0 and 1 tied for first
        match = Match(preset("no-contracts"), seed, start_totals=[10, 10, 30, 30])
        while not match.is_over and not match.is_tiebreak:
            match.apply(match.legal_decisions()[0])
        if match.is_tiebreak:
            break
    assert match.is_tiebreak and match.seats == (0, 1)
    dealt = [e for e in match.events if isinstance(e, HandDealt)][-1]
    outsider = next(s for s in range(4) if s not in dealt.seats)
    message = event_to_pb(redact(dealt, outsider))
    assert message is not None and list(message.hand_started.hand) == []
    own = event_to_pb(redact(dealt, dealt.seats[0]))
    assert own is not None and all(Card.parse(c) for c in own.hand_started.hand)
