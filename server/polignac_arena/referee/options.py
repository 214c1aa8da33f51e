"""The channel arguments of the referee's gRPC servers: what a client can observe of them is in docs/protocol.md.

Two keepalive profiles.  Where remote bots connect (a referee's main address: a league's
lobby and its remote seats' Play streams) the referee pings often, to find a dead path
within seconds, well inside a remote seat's reattach grace.  On a sandboxed seat's own
unix socket a peer cannot silently vanish (its process ending is seen at once), so the
pings there are rare.  Every server permits a client's pings at the same rate, so that
one client configuration works everywhere.

gRPC core bounds the wait for a ping's answer by ``grpc.http2.ping_timeout_ms`` (one
minute by default), whatever ``grpc.keepalive_timeout_ms`` says: both are set.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "KEEPALIVE_TIMEOUT_MS",
    "KEEPALIVE_TIME_MS",
    "LOOKAHEAD_BYTES",
    "MAX_PING_STRIKES",
    "MAX_RECEIVE_BYTES",
    "MAX_SEND_BYTES",
    "MIN_PING_INTERVAL_MS",
    "SEAT_KEEPALIVE_TIMEOUT_MS",
    "SEAT_KEEPALIVE_TIME_MS",
    "server_options",
]

MAX_RECEIVE_BYTES: Final = 16 * 1024
"""A Decision is a few dozen bytes, a few thousand with its debug text: anything near this is an attack, not a bot."""
MAX_SEND_BYTES: Final = 1024 * 1024
LOOKAHEAD_BYTES: Final = 16 * 1024
"""The flow-control window of a seat's stream on its own socket: what the bot may send ahead of the referee's reading."""
KEEPALIVE_TIME_MS: Final = 2_000
"""Where remote bots connect, the referee pings a connection this long after its last ping was answered ..."""
KEEPALIVE_TIMEOUT_MS: Final = 3_000
"""... and closes it when a ping is not answered within this: a dead path is found within the sum of the two."""
SEAT_KEEPALIVE_TIME_MS: Final = 20_000
"""The same on a sandboxed seat's own socket."""
SEAT_KEEPALIVE_TIMEOUT_MS: Final = 10_000
MIN_PING_INTERVAL_MS: Final = 1_000
"""A client may ping at most this often while the referee sends it nothing ..."""
MAX_PING_STRIKES: Final = 2
"""... and after this many pings too soon the referee closes the connection (GOAWAY ``too_many_pings``)."""


def server_options(max_streams: int = 2048, *, max_connections: int | None = None, remote: bool = False) -> list[tuple[str, int]]:
    """Message limits, stream cap (and connection cap when given), keepalive, no port sharing.

    ``remote``: the keepalive of an address that remote bots reach (frequent pings), else that
    of a seat's own socket.
    """
    ping_ms, answer_ms = (KEEPALIVE_TIME_MS, KEEPALIVE_TIMEOUT_MS) if remote else (SEAT_KEEPALIVE_TIME_MS, SEAT_KEEPALIVE_TIMEOUT_MS)
    options = [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_send_message_length", MAX_SEND_BYTES),
        ("grpc.max_concurrent_streams", max_streams),
        ("grpc.keepalive_time_ms", ping_ms),
        ("grpc.keepalive_timeout_ms", answer_ms),
        ("grpc.http2.ping_timeout_ms", answer_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_INTERVAL_MS),
        ("grpc.http2.max_ping_strikes", MAX_PING_STRIKES),
        # A port already in use must fail loudly, not be shared with another referee.
        ("grpc.so_reuseport", 0),
    ]
    if max_connections is not None:
        # gRPC accepts connections beyond this and closes them at once: a peer cannot pile them up.
        options.append(("grpc.max_allowed_incoming_connections", max_connections))
        # A seat's stream is read at the match's pace (not at all once it forfeits): what a flooding
        # bot may push at it meanwhile stays within a fixed window instead of one grown to its rate.
        options += [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", LOOKAHEAD_BYTES)]
    return options
