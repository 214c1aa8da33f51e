"""The match's events as each seat has yet to hear them: Event messages, made once for what every seat sees alike.

A seat's own deal is the one event that differs by seat; the others are cached until every
seat still in play has heard them.
"""

from __future__ import annotations

from collections.abc import Container

from polignac import Match, redact
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.events import HandDealt
from polignac.wire import event_to_pb

__all__ = ["SeatEvents"]


class SeatEvents:
    """How far each seat has heard the match's events, and the messages of those some seat has yet to hear."""

    def __init__(self, players: int) -> None:
        self.delivered = [0] * players
        """Per seat, how many of the match's events it has heard (or needs no more: its next view has them)."""
        self._cache: dict[int, pb.Event | None] = {}  # event index -> message, for events every seat sees alike

    def catch_up(self, seat: int, match: Match) -> None:
        """``seat`` needs none of the events so far (its next view is complete): they are not replayed to it."""
        self.delivered[seat] = match.event_count

    def since_last(self, seat: int, match: Match, away: Container[int]) -> list[pb.Event]:
        """The events ``seat`` has not heard yet, as messages; from now on it has heard them."""
        start = self.delivered[seat]
        events = match.events_since(start)
        self.delivered[seat] = match.event_count
        cache = self._cache
        out = []
        for index, event in enumerate(events, start):
            if isinstance(event, HandDealt):  # the one event that differs by seat
                message = event_to_pb(redact(event, seat))
            elif index in cache:
                message = cache[index]
            else:
                message = cache[index] = event_to_pb(event)
            if message is not None:
                out.append(message)  # extend() copies it into the response; the cached one is not shared
        # Keep only what a seat still in play has yet to receive: a few events, not the match.
        low = min(
            (d for s, d in enumerate(self.delivered) if s not in match.forfeited and s not in away),
            default=match.event_count,
        )
        for index in [i for i in cache if i < low]:
            del cache[index]
        return out
