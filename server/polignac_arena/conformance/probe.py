"""Fields and messages of a later protocol version, added to what a bot receives, to see that it ignores them.

For gRPC bots the referee's messages get protobuf fields with numbers the protocol does not use
(``FUTURE_FIELD``, a length-delimited field, as a new message or string would be), at the top,
in the request, its view and the ruleset, and an event of a kind the bot cannot know (an
``Event`` holding only such a field).  For stdio bots the bridge's lines get a key of a later
version at the end of each object (``view`` and ``ruleset`` included), and two lines of
a type and of an event kind it cannot know before each payload.  docs/protocol.md ("Versions")
and docs/stdio-protocol.md ("Lines") promise both: bots must ignore what they do not know.
"""

from __future__ import annotations

from typing import Final

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.jsontypes import JsonObject

__all__ = ["FUTURE_FIELD", "FUTURE_KEY", "add_future_fields", "add_future_keys"]

FUTURE_FIELD: Final = 1000
"""A field number no message of the protocol uses."""
FUTURE_KEY: Final = "future_field"
"""A JSON key no line of the stdio protocol uses."""
_PAYLOAD: Final = b"a field of a later protocol version"
_FUTURE_BYTES: Final = bytes([(FUTURE_FIELD << 3 | 2) & 0x7F | 0x80, (FUTURE_FIELD << 3 | 2) >> 7, len(_PAYLOAD)]) + _PAYLOAD
_FUTURE_VALUE: Final[JsonObject] = {"note": "a key of a later protocol version", "values": [1, 2.5, None, True, "x"]}


def add_future_fields(message: pb.PlayResponse) -> None:
    """Give ``message`` (about to be sent) unknown fields where a later version could add some; in place."""
    message.MergeFromString(_FUTURE_BYTES)
    payload = message.WhichOneof("payload")
    if payload == "welcome":
        message.welcome.ruleset.MergeFromString(_FUTURE_BYTES)
    elif payload == "decision_request":
        message.decision_request.MergeFromString(_FUTURE_BYTES)
        message.decision_request.view.MergeFromString(_FUTURE_BYTES)
    if payload is not None and payload != "welcome":  # the Welcome travels alone, events never with it
        message.events.add().MergeFromString(_FUTURE_BYTES)


def add_future_keys(lines: list[JsonObject]) -> list[JsonObject]:
    """The bridge's lines of one message with keys, a line type and an event kind of a later version."""
    out: list[JsonObject] = []
    for line in lines:
        if line["type"] not in ("event", "welcome"):
            out.append({"type": "event", "event": "future_event", "seat": 0})
            out.append({"type": "future_message", **_FUTURE_VALUE})
        for nested in ("view", "ruleset"):
            if isinstance(inner := line.get(nested), dict):
                line[nested] = {**inner, FUTURE_KEY: _FUTURE_VALUE}
        out.append({**line, FUTURE_KEY: _FUTURE_VALUE})
    return out
