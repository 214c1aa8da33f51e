"""Every name rule, limit and bound the arena enforces, declared once and read by every layer.

A leaf: it imports only the standard library and the engine, never grpc, and does no I/O, so
that reading a configuration file costs no more than parsing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, TypeGuard

from polignac.deal import MAX_SEED as DEAL_SEED_MAX
from polignac.limits import NAME_MAX, VERSION_MAX, is_display_name, is_version_text

__all__ = [
    "CLOCK_MAX_MS",
    "DEAL_SEED_MAX",
    "EXECUTOR_KINDS",
    "LEAGUE_SEED_MAX",
    "NAME_MAX",
    "NAME_PATTERN",
    "NAME_RULE",
    "SQLITE_INTEGER_MAX",
    "VERSION_MAX",
    "VERSION_PATTERN",
    "ExecutorKind",
    "ExecutorSettings",
    "SeatKind",
    "TimeControl",
    "TournamentFormat",
    "Transport",
    "is_display_name",
    "is_name",
    "is_version_text",
]

NAME_PATTERN: Final = re.compile(rf"\A[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}\Z")
"""A bot's, a tournament's or a league's name: a letter or digit first, so that no name is ``..``,
hidden (``.x``) or read as a command-line option (``-x``)."""
NAME_RULE: Final = f"1 to {NAME_MAX} letters, digits, '.', '_' or '-', starting with a letter or digit"

VERSION_PATTERN: Final = re.compile(rf"\A[A-Za-z0-9][A-Za-z0-9._+-]{{0,{VERSION_MAX - 1}}}\Z")
"""A version that becomes part of a stored identity (a remote bot's version in the league)."""

CLOCK_MAX_MS: Final = 3_600_000
"""The longest move, bank or start-up time a match may give, in milliseconds."""

SQLITE_INTEGER_MAX: Final = 2**63 - 1
"""The largest integer an SQLite column holds (they are signed): row ids, cursors."""
LEAGUE_SEED_MAX: Final = SQLITE_INTEGER_MAX
"""A league's seed is kept in an SQLite integer; a tournament's is text and may reach :data:`DEAL_SEED_MAX`."""


def is_name(text: object) -> TypeGuard[str]:
    """Whether ``text`` is a name (:data:`NAME_PATTERN`)."""
    return isinstance(text, str) and NAME_PATTERN.match(text) is not None


class Transport(StrEnum):
    """How a bot talks to the referee: the gRPC protocol, or JSON lines on its stdin and stdout."""

    GRPC = "grpc"
    STDIO = "stdio"


class TournamentFormat(StrEnum):
    """How a tournament draws its tables (docs: tournament files)."""

    ROUND_ROBIN = "round-robin"
    DUPLICATE = "duplicate"
    LADDER = "ladder"


class SeatKind(StrEnum):
    """How a bot gets its seat: in the arena's process, as a sandboxed process, or in a docker container."""

    INPROCESS = "inprocess"
    PROCESS = "process"
    DOCKER = "docker"


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The clock of a match, in milliseconds: each of 1 to :data:`CLOCK_MAX_MS`, the bank also 0 (none)."""

    move_ms: int = 1000
    bank_ms: int = 10_000
    startup_ms: int = 10_000

    def __post_init__(self) -> None:
        for name in ("move_ms", "bank_ms", "startup_ms"):
            value = getattr(self, name)
            if type(value) is not int or not TimeControl.lowest(name) <= value <= CLOCK_MAX_MS:
                raise ValueError(f"time control {name!r} must be an integer number of milliseconds in 1..{CLOCK_MAX_MS}, got {value!r}")

    @staticmethod
    def lowest(name: str) -> int:
        """The smallest value the setting ``name`` may take."""
        return 0 if name == "bank_ms" else 1


class ExecutorKind(StrEnum):
    """Where matches run: this machine's pool of processes, or a Ray cluster."""

    LOCAL = "local"
    RAY = "ray"


EXECUTOR_KINDS: Final = tuple(kind.value for kind in ExecutorKind)


@dataclass(frozen=True)
class ExecutorSettings:
    """Where matches run: ``local`` (this machine's pool of processes) or ``ray`` (a Ray cluster at ``address``)."""

    kind: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = None
    """The Ray cluster's address (``host:port`` of its head); None: the ``RAY_ADDRESS`` environment variable."""
    cpus_per_match: float = 1.0
    """The CPUs a match reserves on a Ray node: how many matches a node plays at once is its CPUs divided by this."""

    def __post_init__(self) -> None:
        if self.kind not in EXECUTOR_KINDS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTOR_KINDS)}, got {self.kind!r}")
        object.__setattr__(self, "kind", ExecutorKind(self.kind))
