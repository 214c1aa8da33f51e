"""A person's seat: a bot on the referee's ``Play`` stream whose decisions come from a browser.

The seat speaks the protocol as any bot does (Hello, then each request's view and events over
the seat's socket); it never blocks on the person: a request is kept as the seat's ``pending``
decision until :meth:`HumanSeat.answer` sends one, and the referee's clock runs as for any
bot (a person who does not answer in time gets the fallback, a fault, and at ``max_faults`` a
forfeit).  :meth:`HumanSeat.snapshot` is what the page shows: only what this seat may know.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot.stream import CHANNEL_OPTIONS, BotConnectionError, write
from polignac.cards import Card
from polignac.events import Declared, Forfeited, HandDealt, HandEnded, TrickWon
from polignac.jsontypes import JsonObject
from polignac.rules import Ruleset
from polignac.values import Contract, Decision
from polignac.view import PlayerView
from polignac.wire import PROTOCOL_VERSION, TrickCache, contract_to_pb, event_from_pb, ruleset_from_pb, view_from_pb

__all__ = ["AnswerRefused", "HumanSeat"]

MAX_LOG: int = 40
"""Lines of the match's story kept for the page (the replay keeps them all)."""


class AnswerRefused(Exception):
    """A decision from the page that is not the pending request's legal one: the message says why."""


@dataclass
class _Pending:
    request_id: int
    turn: int
    view: PlayerView


@dataclass
class HumanSeat:
    """The seat's conversation and what the page may show of it; ``changed`` is set at every change."""

    name: str
    rules: Ruleset | None = None
    seat: int | None = None
    seat_names: tuple[str, ...] = ()
    move_ms: int = 0
    turn: int = 0
    """Counts the requests so far: an answer names the turn it answers, so a stale click is refused."""
    version: int = 0
    pending: _Pending | None = None
    last_view: PlayerView | None = None
    log: list[str] = field(default_factory=list)
    last_hand: JsonObject | None = None
    faults: list[str] = field(default_factory=list)
    ended: JsonObject | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _call: grpc.aio.StreamStreamCall | None = None

    async def play(self, address: str, token: str) -> int:
        """Take the seat at ``address`` with ``token`` and follow the match to its end; 0 when it ended."""
        async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
            await asyncio.wait_for(channel.channel_ready(), 10.0)
            call = RefereeServiceStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
            self._call = call
            hello = pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=self.name[:64], bot_version="human")
            await write(call, pb.PlayRequest(hello=hello))
            tricks = TrickCache()
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:
                    break
                self._read(response, tricks)
                self._touch()
                if self.ended is not None:
                    break
        self._call = None
        return 0

    def _read(self, response: pb.PlayResponse, tricks: TrickCache) -> None:
        if self.seat is not None:
            for message in response.events:
                event = event_from_pb(message, self.seat)
                if event is not None:
                    self._on_event(event)
        kind = response.WhichOneof("payload")
        if kind == "welcome":
            w = response.welcome
            self.rules = ruleset_from_pb(w.ruleset)
            self.seat = w.seat
            self.seat_names = tuple(w.seat_names)
            self.move_ms = w.time_control.move_ms
        elif kind == "decision_request" and self.rules is not None:
            request = response.decision_request
            self.turn += 1
            view = view_from_pb(self.rules, request, tricks)
            self.pending = _Pending(request.request_id, self.turn, view)
            self.last_view = view
        elif kind == "fault_notice":
            f = response.fault_notice
            then = "you forfeit the match" if f.forfeited else f"{f.fallback} was played for you" if f.fallback else "nothing was played"
            self.faults.append(f"{f.detail or 'a fault'}: {then} (fault {f.faults})")
            if self.pending is not None and self.pending.request_id == f.request_id:
                self.pending = None
        elif kind == "match_ended":
            e = response.match_ended
            self.pending = None
            self.ended = {"places": list(e.places), "totals": list(e.totals), "status": e.status}

    def _on_event(self, event: object) -> None:
        who = self._who
        line = None
        if isinstance(event, HandDealt):
            line = f"hand {event.hand_number} dealt by {who(event.dealer)}"
            self.last_hand = None
        elif isinstance(event, Declared):
            line = f"{who(event.seat)}: {event.contract.name.lower()}"
        elif isinstance(event, TrickWon):
            line = f"trick {event.trick_number} to {who(event.winner)}: " + " ".join(str(c) for c in event.cards)
        elif isinstance(event, HandEnded):
            self.last_hand = {"hand": event.hand_number, "scores": list(event.scores), "totals": list(event.totals)}
            line = f"hand {event.hand_number} scores {list(event.scores)}, totals {list(event.totals)}"
        elif isinstance(event, Forfeited):
            line = f"{who(event.seat)} forfeits: {event.reason}"
        if line is not None:
            self.log.append(line)
            del self.log[:-MAX_LOG]

    def _who(self, seat: int) -> str:
        return self.seat_names[seat] if 0 <= seat < len(self.seat_names) else f"seat {seat}"

    def _touch(self) -> None:
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    async def answer(self, turn: int, text: str) -> None:
        """Send the person's decision for ``turn``: a card (``QS``) or a contract (``pass``, ``capot``, ``general``)."""
        pending, call = self.pending, self._call
        if pending is None or call is None or pending.turn != turn:
            raise AnswerRefused("it is not your turn (or that turn is over): the page shows the current one")
        decision = _legal(pending.view, text)
        message = pb.Decision(request_id=pending.request_id)
        if isinstance(decision, Contract):
            message.contract = contract_to_pb(decision)
        else:
            message.card = str(decision)
        self.pending = None
        try:
            await write(call, pb.PlayRequest(decision=message))
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, BotConnectionError) as exc:  # the match ended under the click
            raise AnswerRefused("the match is over: the page shows how it ended") from exc
        finally:
            self._touch()

    def snapshot(self) -> JsonObject:
        """What the page shows: this seat's hand, what it may play, the table, the auction, the scores, the story."""
        view = self.pending.view if self.pending is not None else self.last_view
        state: JsonObject = {
            "version": self.version,
            "seat": self.seat,
            "seat_names": list(self.seat_names),
            "move_s": self.move_ms / 1000,
            "turn": self.pending.turn if self.pending is not None else None,
            "legal_cards": [],
            "legal_contracts": [],
            "log": list(self.log),
            "faults": list(self.faults),
            "last_hand": self.last_hand,
            "ended": self.ended,
        }
        if view is not None:
            state.update(
                hand_number=view.hand_number,
                dealer=view.dealer,
                phase=view.phase.name.lower(),
                hand=[str(c) for c in view.hand],
                trick=[[seat, str(card)] for seat, card in view.current_trick],
                auction=[[seat, contract.name.lower()] for seat, contract in view.auction],
                totals=list(view.totals),
                tricks_taken=[sum(1 for t in view.tricks if t.winner == s) for s in range(len(view.totals))],
            )
        if self.pending is not None:
            legal = self.pending.view.legal
            state["legal_cards"] = [str(d) for d in legal if isinstance(d, Card)]
            state["legal_contracts"] = [d.name.lower() for d in legal if isinstance(d, Contract)]
        return state


def _legal(view: PlayerView, text: str) -> Decision:
    for decision in view.legal:
        name = decision.name.lower() if isinstance(decision, Contract) else str(decision)
        if name == text:
            return decision
    raise AnswerRefused(f"{text[:20]!r} is not one of your legal decisions now")
