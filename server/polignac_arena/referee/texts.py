"""The detail texts a Play stream can end with, and those of its FAULT_DISCONNECTED forfeits: one place for each.

docs/protocol.md ("How a stream ends") quotes every one with its placeholders (``N`` a seat,
``ID`` a match id, ``G`` seconds), and a test renders each template with them to check that
the page says what the referee says.  Every field is text: callers format their numbers.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AWAY",
    "CALLED_OFF",
    "FORFEITED",
    "HALF_CLOSED",
    "MATCH_OVER",
    "NOT_BACK",
    "NOT_READ",
    "NO_STREAM",
    "REPLACED",
    "RESTARTING",
    "STREAM_BROKE",
    "UNKNOWN_TOKEN",
]

UNKNOWN_TOKEN: Final = "missing or unknown seat token (send 'authorization: Bearer <token>')"
MATCH_OVER: Final = "match '{match_id}' is over ({status})"
FORFEITED: Final = "seat {seat} of match '{match_id}' has forfeited ({why}); {now}"
"""``now``: "the match goes on without it" or "the match is over"."""
CALLED_OFF: Final = "match '{match_id}' was called off before it began: {reason}"
REPLACED: Final = "a new Play stream with the token of seat {seat} replaced this one"
AWAY: Final = (
    "seat {seat} {why} before the match ended: it is away, and forfeits unless a new Play stream"
    " with its seat token says Hello within {grace} s"
)
"""``why``: "closed its side of the stream (a half-close)" or "lost its stream"."""
HALF_CLOSED: Final = "the bot closed its side of the stream (a half-close) before the match ended"
STREAM_BROKE: Final = (
    "the stream broke before the match ended (the connection was lost or reset, the call was cancelled,"
    " or gRPC refused a message over 16 KiB with RESOURCE_EXHAUSTED)"
)
NOT_READ: Final = "the bot did not read what the referee sent it within {seconds} s"
NOT_BACK: Final = "the stream ended and the bot did not come back within {grace} s"
NO_STREAM: Final = "no working stream"
RESTARTING: Final = (
    "the league server is stopping: match '{match_id}' goes on when it starts again;"
    " then open a new Play stream with the token of seat {seat}"
)
"""A league's match suspended by a stop of its server (``UNAVAILABLE``): it is resumed when the server starts again."""
