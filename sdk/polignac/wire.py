"""Conversions between engine values and the polignac.v1 protobuf messages.

Used by the referee to say what a seat may know, and by the bot SDK to turn what it
hears back into :class:`polignac.PlayerView` and events.  Protobuf only: no grpc here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.cards import Card
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
from polignac.rules import Ruleset
from polignac.values import Contract, Phase, Trick
from polignac.view import PlayerView

__all__ = [
    "PROTOCOL_VERSION",
    "TrickCache",
    "TrickMessages",
    "contract_from_pb",
    "contract_to_pb",
    "event_from_pb",
    "event_to_pb",
    "request_to_pb",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "view_from_pb",
    "view_to_pb",
]

PROTOCOL_VERSION: Final = "1"
"""The protocol version this SDK speaks (the major version of package polignac.v1)."""

_CONTRACT_TO_PB: Final[dict[Contract, pb.Contract]] = {
    Contract.PASS: pb.CONTRACT_PASS,
    Contract.CAPOT: pb.CONTRACT_CAPOT,
    Contract.GENERAL: pb.CONTRACT_GENERAL,
}
_CONTRACT_FROM_PB: Final[dict[int, Contract]] = {v: k for k, v in _CONTRACT_TO_PB.items()}
_CARD_TEXT: Final = tuple(str(Card.from_index(i)) for i in range(52))
_CARD_BY_TEXT: Final = {text: Card.from_index(i) for i, text in enumerate(_CARD_TEXT)}


def contract_to_pb(contract: Contract) -> pb.Contract:
    """The wire value of a contract."""
    return _CONTRACT_TO_PB[contract]


def contract_from_pb(value: int) -> Contract | None:
    """The contract of a wire value, or ``None`` for UNSPECIFIED and unknown values."""
    return _CONTRACT_FROM_PB.get(value)


def ruleset_to_pb(rules: Ruleset) -> pb.Ruleset:
    """The Ruleset message of ``rules``."""
    table = rules.to_dict()
    known = pb.Ruleset.DESCRIPTOR.fields_by_name
    return pb.Ruleset(**{key: value for key, value in table.items() if key in known})


def ruleset_from_pb(message: pb.Ruleset) -> Ruleset:
    """Rebuild a Ruleset (validated as any other) from its message."""
    table = {
        "name": message.name,
        "players": message.players,
        "removed_sevens": message.removed_sevens,
        "trick_order": message.trick_order,
        "penalty_cards": dict(message.penalty_cards),
        "first_trick_points": message.first_trick_points,
        "last_trick_points": message.last_trick_points,
        "capot": message.capot,
        "general": message.general,
        "contract_points": message.contract_points,
        "limit": message.limit,
        "tiebreak_hands": message.tiebreak_hands,
        "fault_policy": message.fault_policy,
        "revoke_points": message.revoke_points,
        "timeout_points": message.timeout_points,
        "max_faults": message.max_faults,
    }
    return Ruleset.from_dict(table)


def _plays(plays: Sequence[tuple[int, Card]]) -> list[pb.Play]:
    return [pb.Play(seat=s, card=_CARD_TEXT[c.index]) for s, c in plays]


class TrickMessages:
    """The referee's side of :class:`TrickCache`: the completed tricks of the current hand as
    messages, built once.  Tricks are public, so one cache serves every seat of a match."""

    def __init__(self) -> None:
        self._hand = -1
        self._messages: list[pb.Trick] = []

    def messages(self, hand_number: int, tricks: Sequence[Trick]) -> list[pb.Trick]:
        """The messages of ``tricks``, building only those not built yet for this hand."""
        if hand_number != self._hand or len(tricks) < len(self._messages):
            self._hand = hand_number
            self._messages = []
        for t in tricks[len(self._messages) :]:
            self._messages.append(pb.Trick(plays=_plays(t.plays), winner=t.winner))
        return self._messages[: len(tricks)]


def view_to_pb(view: PlayerView, tricks: TrickMessages | None = None) -> pb.PlayerView:
    """The PlayerView message of ``view`` (the ruleset travels once, in Welcome).

    A :class:`TrickMessages` kept across the requests of one match saves rebuilding the tricks.
    """
    message = pb.PlayerView(
        seat=view.seat,
        hand_number=view.hand_number,
        dealer=view.dealer,
        seats=view.seats,
        tiebreak=view.tiebreak,
        hand=[_CARD_TEXT[c.index] for c in view.hand],
        auction=[pb.Declaration(seat=s, contract=_CONTRACT_TO_PB[c]) for s, c in view.auction],
        contract=_CONTRACT_TO_PB[view.contract],
        tricks=(tricks or TrickMessages()).messages(view.hand_number, view.tricks),
        current_trick=_plays(view.current_trick),
        totals=view.totals,
        penalties=view.penalties,
        forfeited=view.forfeited,
    )
    if view.declarer is not None:
        message.declarer = view.declarer
    return message


def request_to_pb(request_id: int, view: PlayerView, move_ms: int, bank_ms: int, tricks: TrickMessages | None = None) -> pb.DecisionRequest:
    """The DecisionRequest asking ``view.seat`` to choose among ``view.legal``."""
    message = pb.DecisionRequest(request_id=request_id, move_ms=move_ms, bank_ms=bank_ms, view=view_to_pb(view, tricks))
    if view.phase is Phase.AUCTION:
        message.kind = pb.DECISION_KIND_CONTRACT
        message.legal_contracts.extend(_CONTRACT_TO_PB[c] for c in view.legal_contracts)
    else:
        message.kind = pb.DECISION_KIND_CARD
        message.legal_cards.extend(str(c) for c in view.legal)
    return message


class TrickCache:
    """What repeats in every request of a hand, parsed once: the completed tricks, the auction
    and the table (seats, dealer, eldest).  Keep one per match (the SDK keeps one per bot).

    It relies on what the rules guarantee within one hand (``hand_number``): the table does
    not change, and tricks and the auction only grow.
    """

    def __init__(self) -> None:
        self._hand = -1
        self._tricks: list[Trick] = []
        self._auction: list[tuple[int, Contract]] = []
        self._table: tuple[tuple[int, ...], int] | None = None

    def _in_hand(self, hand_number: int) -> None:
        if hand_number != self._hand:
            self._hand = hand_number
            self._tricks, self._auction, self._table = [], [], None

    def tricks(self, hand_number: int, messages: Sequence[pb.Trick]) -> tuple[Trick, ...]:
        """The tricks of ``messages``, reusing those already parsed for this hand."""
        self._in_hand(hand_number)
        if len(messages) < len(self._tricks):
            self._tricks = []
        for t in messages[len(self._tricks) :]:
            self._tricks.append(Trick(tuple((p.seat, _card(p.card)) for p in t.plays), t.winner))
        return tuple(self._tricks)

    def auction(self, hand_number: int, messages: Sequence[pb.Declaration]) -> tuple[tuple[int, Contract], ...]:
        """The declarations of ``messages``, reusing those already parsed for this hand."""
        self._in_hand(hand_number)
        if len(messages) < len(self._auction):
            self._auction = []
        for d in messages[len(self._auction) :]:
            self._auction.append((d.seat, _CONTRACT_FROM_PB.get(d.contract, Contract.PASS)))
        return tuple(self._auction)

    def table(self, hand_number: int, view: pb.PlayerView) -> tuple[tuple[int, ...], int]:
        """``(seats, eldest)`` of this hand."""
        self._in_hand(hand_number)
        if self._table is None:
            seats, dealer = tuple(view.seats), view.dealer
            self._table = seats, seats[(seats.index(dealer) + 1) % len(seats)] if dealer in seats else seats[0]
        return self._table


def view_from_pb(rules: Ruleset, request: pb.DecisionRequest, cache: TrickCache | None = None) -> PlayerView:
    """The PlayerView a bot gets from a DecisionRequest.

    ``rules``, ``phase`` and ``legal`` are parsed at once, the other fields together when the
    bot first reads one of them: a bot that looks only at ``legal`` costs a few microseconds
    instead of the fourteen or so of a full parse.  Bad content, such as card text that is
    not a card, raises :class:`~polignac.errors.CardParseError` (a ``PolignacError``): from
    here for ``legal``, at that first read for the rest.  A :class:`TrickCache` kept across
    the requests of one match saves re-parsing the tricks.
    """
    return _WireView.of(rules, request, cache or TrickCache())


class _WireView(PlayerView):
    """A :class:`PlayerView` parsed from a DecisionRequest in two steps.

    ``rules``, ``phase`` and ``legal`` are set at once: a trivial bot reads nothing else.
    The other slots stay empty until one of them is read; that failed lookup lands in
    :meth:`__getattr__`, which parses them all in one go, so a bot that reads more pays
    what a full parse costs and every later read is a plain attribute read.  It is a
    PlayerView in every way (equality, hashing, ``dataclasses.replace``, pickling); only
    the moment of parsing differs.
    """

    __slots__ = ("_request", "_tricks")
    _request: pb.DecisionRequest
    _tricks: TrickCache

    @classmethod
    def of(cls, rules: Ruleset, request: pb.DecisionRequest, tricks: TrickCache) -> _WireView:
        view = object.__new__(cls)
        set_field = object.__setattr__  # as the dataclass __init__ does: the class is frozen
        set_field(view, "_request", request)
        set_field(view, "_tricks", tricks)
        set_field(view, "rules", rules)
        if request.kind == pb.DECISION_KIND_CONTRACT:
            set_field(view, "phase", Phase.AUCTION)
            set_field(view, "legal", tuple(_CONTRACT_FROM_PB[x] for x in request.legal_contracts if x in _CONTRACT_FROM_PB))
        else:
            set_field(view, "phase", Phase.PLAY)
            set_field(view, "legal", tuple(map(_card, request.legal_cards)))
        return view

    def __getattr__(self, name: str) -> Any:
        # Called only when a slot is empty: the first read of a field not parsed yet.
        if name not in _FIELD_NAMES or not hasattr(self, "_request"):
            raise AttributeError(f"'PlayerView' object has no attribute {name!r}")
        self._parse_the_rest()
        return object.__getattribute__(self, name)

    def _parse_the_rest(self) -> None:
        v = self._request.view
        hand_number = v.hand_number
        cache = self._tricks
        seats, eldest = cache.table(hand_number, v)
        set_field = object.__setattr__
        set_field(self, "seat", v.seat)
        set_field(self, "hand_number", hand_number)
        set_field(self, "dealer", v.dealer)
        set_field(self, "eldest", eldest)
        set_field(self, "seats", seats)
        set_field(self, "tiebreak", v.tiebreak)
        set_field(self, "to_act", v.seat)
        set_field(self, "hand", tuple(map(_card, v.hand)))
        set_field(self, "auction", cache.auction(hand_number, v.auction))
        set_field(self, "contract", _CONTRACT_FROM_PB.get(v.contract, Contract.PASS))
        set_field(self, "declarer", v.declarer if v.HasField("declarer") else None)
        set_field(self, "tricks", cache.tricks(hand_number, v.tricks))
        set_field(self, "current_trick", tuple((p.seat, _card(p.card)) for p in v.current_trick))
        set_field(self, "totals", tuple(v.totals))
        set_field(self, "penalties", tuple(v.penalties))
        set_field(self, "forfeited", tuple(v.forfeited))
        set_field(self, "turned", None)  # protocol 1.0 carries no turned card: no trumps

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlayerView):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _VIEW_FIELDS)

    __hash__ = PlayerView.__hash__

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _VIEW_FIELDS)
        return f"PlayerView({fields})"


_VIEW_FIELDS: Final = tuple(f.name for f in dataclasses.fields(PlayerView))
_FIELD_NAMES: Final = frozenset(_VIEW_FIELDS)


def _card(text: str) -> Card:
    """A card from wire text: a dictionary hit for canonical text, the full parser otherwise."""
    card = _CARD_BY_TEXT.get(text)
    return card if card is not None else Card.parse(text)


def event_to_pb(event: Event) -> pb.Event | None:
    """The Event message of an engine event already redacted for its seat; ``None`` for MatchEnded
    (sent as the MatchEnded payload instead)."""
    if isinstance(event, CardPlayed):
        return pb.Event(card_played=pb.Play(seat=event.seat, card=_CARD_TEXT[event.card.index]))
    if isinstance(event, TrickWon):
        plays = [pb.Play(seat=s, card=_CARD_TEXT[c.index]) for s, c in _trick_plays(event)]
        return pb.Event(trick_won=pb.TrickWon(trick_number=event.trick_number, winner=event.winner, plays=plays))
    if isinstance(event, Declared):
        return pb.Event(declared=pb.Declaration(seat=event.seat, contract=_CONTRACT_TO_PB[event.contract]))
    if isinstance(event, HandDealt):
        own = [str(c) for h in event.hands for c in h]  # redacted: at most one seat's cards remain
        return pb.Event(
            hand_started=pb.HandStarted(
                hand_number=event.hand_number, dealer=event.dealer, seats=event.seats, hand=own, tiebreak=event.tiebreak
            )
        )
    if isinstance(event, HandEnded):
        ended = pb.HandEnded(
            hand_number=event.hand_number,
            contract=_CONTRACT_TO_PB[event.contract],
            scores=event.scores,
            totals=event.totals,
            tiebreak=event.tiebreak,
        )
        if event.declarer is not None:
            ended.declarer = event.declarer
        if event.contract_made is not None:
            ended.contract_made = event.contract_made
        return pb.Event(hand_ended=ended)
    if isinstance(event, PenaltyAdded):
        return pb.Event(penalty_added=pb.PenaltyAdded(seat=event.seat, points=event.points, reason=event.reason))
    if isinstance(event, Forfeited):
        return pb.Event(forfeited=pb.Forfeited(seat=event.seat, reason=event.reason))
    if isinstance(event, TiebreakStarted):
        return pb.Event(tiebreak_started=pb.TiebreakStarted(seats=event.seats, round=event.round))
    if isinstance(event, MatchEnded):
        return None
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover - the union is exhaustive


def _trick_plays(event: TrickWon) -> list[tuple[int, Card]]:
    return list(zip(event.seats, event.cards, strict=True))


def event_from_pb(message: pb.Event, seat: int) -> Event | None:
    """The engine event of an Event message as ``seat`` received it (``None`` if empty or unknown)."""
    kind = message.WhichOneof("event")
    if kind == "card_played":
        return CardPlayed(message.card_played.seat, Card.parse(message.card_played.card))
    if kind == "trick_won":
        t = message.trick_won
        plays = [(p.seat, Card.parse(p.card)) for p in t.plays]
        leader = plays[0][0] if plays else t.winner
        return TrickWon(t.trick_number, leader, t.winner, tuple(c for _, c in plays), tuple(s for s, _ in plays))
    if kind == "declared":
        return Declared(message.declared.seat, contract_from_pb(message.declared.contract) or Contract.PASS)
    if kind == "hand_started":
        h = message.hand_started
        own = tuple(Card.parse(c) for c in h.hand)
        hands = tuple(own if s == seat else () for s in h.seats)
        return HandDealt(h.hand_number, h.dealer, tuple(h.seats), hands, h.tiebreak)
    if kind == "hand_ended":
        e = message.hand_ended
        return HandEnded(
            e.hand_number,
            contract_from_pb(e.contract) or Contract.PASS,
            e.declarer if e.HasField("declarer") else None,
            e.contract_made if e.HasField("contract_made") else None,
            tuple(e.scores),
            tuple(e.totals),
            e.tiebreak,
        )
    if kind == "penalty_added":
        return PenaltyAdded(message.penalty_added.seat, message.penalty_added.points, message.penalty_added.reason)
    if kind == "forfeited":
        return Forfeited(message.forfeited.seat, message.forfeited.reason, True)
    if kind == "tiebreak_started":
        return TiebreakStarted(tuple(message.tiebreak_started.seats), message.tiebreak_started.round)
    return None
