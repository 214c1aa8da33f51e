"""Every limit of a league, declared once: its default, its bounds in a league file, and what it bounds.

Each class is one table of the league file: :class:`HttpLimits` is ``[http]``, :class:`GrpcLimits`
``[grpc]``, :class:`LeagueLimits` ``[limits]`` (what one author, one upload or one address may
do), :class:`ValidationSettings` ``[validation]``.  The league file's reader
(:mod:`polignac_arena.league.config`) takes each key's default and bounds from here, and the
server reads the values from here; docs/league.md ("Limits") lists them all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["LIMIT_TABLES", "GrpcLimits", "HttpLimits", "LeagueLimits", "ValidationSettings", "bounds"]


def _limit(default: float, lo: float, hi: float) -> Any:
    """A field with its default and the bounds a league file may set it within."""
    return dataclasses.field(default=default, metadata={"lo": lo, "hi": hi})


def bounds(cls: type[DataclassInstance], name: str) -> tuple[float, float]:
    """The bounds a league file may set the field ``name`` of ``cls`` within."""
    meta = next(f.metadata for f in dataclasses.fields(cls) if f.name == name)
    return meta["lo"], meta["hi"]


@dataclass(frozen=True)
class HttpLimits:
    """The web listener (pages, JSON API, authors' API): connections, their timeouts, who is a proxy."""

    max_connections: int = _limit(128, 1, 100_000)
    """Open connections in all (each holds about a third of a megabyte of TLS buffers); past it the longest waiting goes."""
    max_connections_per_address: int = _limit(16, 1, 100_000)
    """Open connections from one address (trusted proxies are not held to it)."""
    new_connections_per_s: float = _limit(2.0, 0.1, 100_000)
    """New connections one address may open a second, on average (``max_connections_per_address`` at once); past it,
    reset before any TLS work: each TLS handshake costs the server CPU."""
    handshake_timeout_s: float = _limit(5.0, 0.1, 600)
    """A TLS handshake must be over within this."""
    header_timeout_s: float = _limit(10.0, 0.1, 600)
    """Each request's headers must be in within this of the connection's start (or the previous response's end)."""
    keepalive_s: float = _limit(5.0, 0.1, 3600)
    """An idle connection between requests is closed after this."""
    body_timeout_s: float = _limit(30.0, 0.1, 3600)
    """An upload's body may pause this long at most between two reads."""
    max_header_kb: int = _limit(16, 1, 1024)
    """A request line and headers still incomplete past this are refused (400): h11 buffers no more."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks whose ``X-Forwarded-For`` names the client (none: the header is ignored); neither listener
    holds them to its cap on connections per address."""


@dataclass(frozen=True)
class GrpcLimits:
    """The gRPC endpoint (the lobby and remote bots' Play streams): connections and calls."""

    max_connections: int = _limit(256, 1, 100_000)
    """Open connections in all; gRPC closes those past it at once."""
    max_connections_per_address: int = _limit(32, 0, 100_000)
    """Open connections from one address (trusted proxies are not held to it); past it the league's front resets a new
    one at once.  0: no front, gRPC listens on the address itself (and one address may hold every connection)."""
    max_calls_per_address: int = _limit(32, 1, 100_000)
    """Streams (Lobby and Play) open at once from one address; past it a call ends ``RESOURCE_EXHAUSTED``."""
    handshake_timeout_s: float = _limit(5.0, 0.1, 600)
    """A connection's TLS and HTTP/2 handshake must be over within this."""
    idle_timeout_s: float = _limit(60.0, 1, 86_400)
    """A connection with no call open is closed after this."""
    max_streams: int = _limit(16, 1, 10_000)
    """Streams open at once on one connection."""


@dataclass(frozen=True)
class LeagueLimits:
    """What one author, one upload and one address may do."""

    uploads_per_hour: int = _limit(10, 1, 10_000)
    """New versions an author may make in an hour: every upload (accepted or refused) and every new remote version."""
    versions_kept: int = _limit(5, 1, 1000)
    """Archives kept per bot: past it, the oldest inactive version's archive is deleted (its history stays)."""
    active_bots: int = _limit(3, 1, 1000)
    """Bots an author may have in the ladder (or being validated) at once."""
    bots: int = _limit(10, 1, 100_000)
    """Bot names an author may own, whatever became of their versions."""
    uploads_at_once: int = _limit(1, 1, 100)
    """Uploads of one author being received at once."""
    uploads_in_flight: int = _limit(4, 1, 1000)
    """Uploads of all authors being received at once."""
    disk_mb: int = _limit(1024, 1, 10_000_000)
    """An author's share of the league's disk: archives, unpacked versions and what their builds installed."""
    archive_mb: int = _limit(20, 1, 1024)
    """One upload, compressed."""
    unpacked_mb: int = _limit(100, 1, 10_240)
    """One upload's files, unpacked."""
    files: int = _limit(2000, 1, 100_000)
    """One upload's files and folders (the folders its paths imply included)."""
    build_mb: int = _limit(256, 1, 10_240)
    """What one build may install in its version's folder."""
    log_kb: int = _limit(64, 1, 10_240)
    """A version's validation log kept in the store (past it the rest is dropped, with a note)."""
    bad_tokens: int = _limit(5, 0, 1000)
    """Bad tokens one address may send for one token (or for unknown ones) before it is slowed down."""
    bad_token_block_s: float = _limit(60.0, 1, 86_400)
    """The longest block of an address that keeps sending bad tokens (each block doubles, from 1 s)."""
    ipv6_prefix: int = _limit(64, 8, 128)
    """Every per-address limit counts the IPv6 addresses of one network of this prefix length as one address."""
    reruns_per_hour: int = _limit(5, 1, 1000)
    """Test matches (reruns of a league match with another version) an author may ask for in an hour."""
    reruns_waiting: int = _limit(2, 1, 100)
    """An author's test matches queued or running at once."""
    reruns_queued: int = _limit(50, 1, 10_000)
    """Every author's test matches queued or running at once."""
    human_matches: int = _limit(4, 0, 1000)
    """People's matches against the built-in bots live at once in the whole league (one per author at most); 0: none."""
    human_move_s: float = _limit(120.0, 5, 3600)
    """The clock of a person's seat (and its opponents') a decision in those matches: past it, the fallback and a fault."""
    remote_idle_s: float = dataclasses.field(default=3600.0, metadata={"key": "[remote] idle_minutes"})
    """An offline remote bot stops counting toward ``active_bots`` this long after it was last seen (set in minutes by
    ``[remote] idle_minutes``: not a key of this table)."""

    @property
    def log_chars(self) -> int:
        return self.log_kb * 1024


@dataclass(frozen=True)
class ValidationSettings:
    """The validation of uploads: how many run at once, and how long a build may take."""

    workers: int = _limit(2, 1, 64)
    """Validations at once (at most one per author)."""
    build_timeout_s: float = _limit(300.0, 1, 3600)
    """A build step's wall clock: past it, it is stopped with everything it started and the version refused."""


LIMIT_TABLES: Final[dict[str, type[DataclassInstance]]] = {
    "http": HttpLimits,
    "grpc": GrpcLimits,
    "limits": LeagueLimits,
    "validation": ValidationSettings,
}
"""The league file's tables read from these classes, by name."""
