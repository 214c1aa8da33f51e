"""Conversions between engine values and the polignac.v1 protobuf messages.

Used by the referee to say what a seat may know, and by the bot SDK to turn what it
hears back into :class:`polignac.PlayerView` and events.  Protobuf only: no grpc here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from polignac import events as ev
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.cards import PIQUET_MASK, Card
from polignac.errors import CardParseError
from polignac.rules import Ruleset
from polignac.values import Contract, HandResult, Phase, ScoreException, Trick
from polignac.view import PlayerView

__all__ = [
    "PROTOCOL_VERSION",
    "TrickCache",
    "TrickMessages",
    "card_from_wire",
    "contract_from_pb",
    "contract_to_pb",
    "event_from_pb",
    "event_to_pb",
    "in_pack",
    "request_to_pb",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "view_from_pb",
    "view_to_pb",
]

PROTOCOL_VERSION: Final = "1.3"
"""The protocol version this SDK speaks: package polignac.v1, minor version 3 (docs/protocol.md)."""

_CONTRACT_TO_PB: Final[dict[Contract, pb.Contract]] = {
    Contract.PASS: pb.CONTRACT_PASS,
    Contract.CAPOT: pb.CONTRACT_CAPOT,
    Contract.GENERAL: pb.CONTRACT_GENERAL,
}
_CONTRACT_FROM_PB: Final[dict[int, Contract]] = {v: k for k, v in _CONTRACT_TO_PB.items()}
_CARD_TEXT: Final = tuple(str(Card.from_index(i)) for i in range(52))
_CARD_BY_TEXT: Final = {text: Card.from_index(i) for i, text in enumerate(_CARD_TEXT)}
_EXCEPTION_TO_PB: Final[dict[ScoreException, pb.ScoreException]] = {
    ScoreException.NONE: pb.SCORE_EXCEPTION_NONE,
    ScoreException.EVERY_TRICK: pb.SCORE_EXCEPTION_EVERY_TRICK,
    ScoreException.BIG_TAKE: pb.SCORE_EXCEPTION_BIG_TAKE,
}
_EXCEPTION_FROM_PB: Final[dict[int, ScoreException]] = {v: k for k, v in _EXCEPTION_TO_PB.items()}
# Settings a referee of protocol 1.0 does not send, and what their absence means (the 1.0 game).
_UNSET_MEANS: Final = {"pack": 32, "trumps": "none", "hand_score": "points", "direction": "lower", "tiebreak": "tied", "faces": "french"}


def contract_to_pb(contract: Contract) -> pb.Contract:
    """The wire value of a contract."""
    return _CONTRACT_TO_PB[contract]


def contract_from_pb(value: int) -> Contract | None:
    """The contract of a wire value, or ``None`` for UNSPECIFIED and unknown values."""
    return _CONTRACT_FROM_PB.get(value)


def ruleset_to_pb(rules: Ruleset) -> pb.Ruleset:
    """The Ruleset message of ``rules``: every setting, each under its own name.

    A setting the message has no field for raises ``ValueError`` (a Ruleset setting added
    without its field in the proto), rather than travel as nothing.
    """
    settings: Mapping[str, Any] = rules.to_dict()  # each value checked by the message's own field type
    return pb.Ruleset(**settings)


def ruleset_from_pb(message: pb.Ruleset) -> Ruleset:
    """Rebuild a Ruleset (validated as any other) from its message.

    Settings a 1.0 referee does not send (``pack`` 0, empty texts) mean what 1.0 played:
    the 32-card pack, no trumps, scores by points, lower is better, tie-break hands among
    the tied, French faces; ``general_points`` unset (a referee before 1.2) means
    ``-contract_points``.
    """
    table: dict[str, object] = {}
    for field in pb.Ruleset.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.name == "general_points" and not message.HasField("general_points"):
            value = -message.contract_points  # what a made general scored before 1.2
        elif field.name in _UNSET_MEANS and not value:
            value = _UNSET_MEANS[field.name]
        elif field.name == "penalty_cards":
            value = dict(value)
        elif field.is_repeated:
            value = list(value)
        table[field.name] = value
    return Ruleset.from_dict(table)


def in_pack(card: Card, rules: Ruleset) -> bool:
    """True when ``card`` is one of the ruleset's pack (ranks 2 to 6 are not in the 32-card pack)."""
    return rules.pack != 32 or bool(card.bit & PIQUET_MASK)


def card_from_wire(text: str, rules: Ruleset) -> Card:
    """The card of a decision's text in a game of ``rules``: exactly the wire text of a card of its pack.

    Raises :class:`~polignac.errors.CardParseError` otherwise: ``2C`` in a 32-card game is
    text no card of that game has (MALFORMED), not a card the seat may not play (ILLEGAL).
    """
    card = Card.from_wire(text)
    if not in_pack(card, rules):
        raise CardParseError(f"not a card of the {rules.pack}-card pack: {text!r} (its ranks are 7 8 9 T J Q K A)")
    return card


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
        turned="" if view.turned is None else _CARD_TEXT[view.turned.index],
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

    def __getattr__(self, name: str) -> object:
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
        set_field(self, "turned", _card(v.turned) if v.turned else None)

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


def event_to_pb(event: ev.Event) -> pb.Event | None:
    """The Event message of an engine event already redacted for its seat; ``None`` for MatchEnded
    (sent as the MatchEnded payload instead)."""
    if isinstance(event, ev.CardPlayed):
        return pb.Event(card_played=pb.Play(seat=event.seat, card=_CARD_TEXT[event.card.index]))
    if isinstance(event, ev.TrickWon):
        plays = [pb.Play(seat=s, card=_CARD_TEXT[c.index]) for s, c in _trick_plays(event)]
        return pb.Event(trick_won=pb.TrickWon(trick_number=event.trick_number, winner=event.winner, plays=plays))
    if isinstance(event, ev.Declared):
        return pb.Event(declared=pb.Declaration(seat=event.seat, contract=_CONTRACT_TO_PB[event.contract]))
    if isinstance(event, ev.HandDealt):
        own = [str(c) for h in event.hands for c in h]  # redacted: at most one seat's cards remain
        turned = "" if event.turned is None else str(event.turned)
        return pb.Event(
            hand_started=pb.HandStarted(
                hand_number=event.hand_number, dealer=event.dealer, seats=event.seats, hand=own, tiebreak=event.tiebreak, turned=turned
            )
        )
    if isinstance(event, ev.HandEnded):
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
        if event.result is not None:
            ended.result.CopyFrom(_result_to_pb(event.result))
        return pb.Event(hand_ended=ended)
    if isinstance(event, ev.PenaltyAdded):
        return pb.Event(penalty_added=pb.PenaltyAdded(seat=event.seat, points=event.points, reason=event.reason))
    if isinstance(event, ev.Forfeited):
        return pb.Event(forfeited=pb.Forfeited(seat=event.seat, reason=event.reason))
    if isinstance(event, ev.TiebreakStarted):
        return pb.Event(tiebreak_started=pb.TiebreakStarted(seats=event.seats, round=event.round))
    if isinstance(event, ev.MatchEnded):
        return None
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover - the union is exhaustive


def _trick_plays(event: ev.TrickWon) -> list[tuple[int, Card]]:
    return list(zip(event.seats, event.cards, strict=True))


def _result_to_pb(result: HandResult) -> pb.HandResult:
    """The parts of a hand's result that HandEnded does not carry already."""
    tallies = {name: getattr(result, name) for name in _RESULT_TALLIES}
    return pb.HandResult(**tallies, exception=_EXCEPTION_TO_PB[result.exception])


_RESULT_TALLIES: Final = ("seats", "tricks", "card_points", "trick_points", "first_last_points", "fault_points")
"""The fields of a HandResult that its message carries as they are, a number by seat."""


def _result_from_pb(ended: pb.HandEnded, contract: Contract, declarer: int | None, contract_made: bool | None) -> HandResult | None:
    """The HandResult of a HandEnded message, or ``None`` when it has no parts (a 1.0 referee)."""
    if not ended.HasField("result"):
        return None
    r = ended.result
    return HandResult(
        hand_number=ended.hand_number,
        tiebreak=ended.tiebreak,
        seats=tuple(r.seats),
        tricks=tuple(r.tricks),
        card_points=tuple(r.card_points),
        trick_points=tuple(r.trick_points),
        first_last_points=tuple(r.first_last_points),
        contract=contract,
        declarer=declarer,
        contract_made=contract_made,
        fault_points=tuple(r.fault_points),
        exception=_EXCEPTION_FROM_PB.get(r.exception, ScoreException.NONE),
        scores=tuple(ended.scores),
        totals=tuple(ended.totals),
    )


def event_from_pb(message: pb.Event, seat: int) -> ev.Event | None:
    """The engine event of an Event message as ``seat`` received it (``None`` if empty or unknown)."""
    kind = message.WhichOneof("event")
    if kind == "card_played":
        return ev.CardPlayed(message.card_played.seat, Card.parse(message.card_played.card))
    if kind == "trick_won":
        t = message.trick_won
        plays = [(p.seat, Card.parse(p.card)) for p in t.plays]
        leader = plays[0][0] if plays else t.winner
        return ev.TrickWon(t.trick_number, leader, t.winner, tuple(c for _, c in plays), tuple(s for s, _ in plays))
    if kind == "declared":
        return ev.Declared(message.declared.seat, contract_from_pb(message.declared.contract) or Contract.PASS)
    if kind == "hand_started":
        h = message.hand_started
        own = tuple(Card.parse(c) for c in h.hand)
        hands = tuple(own if s == seat else () for s in h.seats)
        return ev.HandDealt(h.hand_number, h.dealer, tuple(h.seats), hands, h.tiebreak, Card.parse(h.turned) if h.turned else None)
    if kind == "hand_ended":
        e = message.hand_ended
        contract = contract_from_pb(e.contract) or Contract.PASS
        declarer = e.declarer if e.HasField("declarer") else None
        made = e.contract_made if e.HasField("contract_made") else None
        result = _result_from_pb(e, contract, declarer, made)
        return ev.HandEnded(e.hand_number, contract, declarer, made, tuple(e.scores), tuple(e.totals), e.tiebreak, result)
    if kind == "penalty_added":
        return ev.PenaltyAdded(message.penalty_added.seat, message.penalty_added.points, message.penalty_added.reason)
    if kind == "forfeited":
        return ev.Forfeited(message.forfeited.seat, message.forfeited.reason, True)
    if kind == "tiebreak_started":
        return ev.TiebreakStarted(tuple(message.tiebreak_started.seats), message.tiebreak_started.round)
    return None
