"""How a match ended, as a typed status: :class:`MatchStatus`.

A leaf module (it imports only :mod:`polignac.errors`): the referee, the store, the replay
tools and the SDK's client and local harness all take the status from here, so its text is
written in one place.  The text of each value is what records, stores, the JSON API and the
protocol's ``MatchEnded.status`` string carry.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from polignac.errors import PolignacError

__all__ = ["MatchStatus", "UnknownStatusError", "parse_status"]

S = TypeVar("S", bound=StrEnum)


class UnknownStatusError(PolignacError):
    """Text that is none of a status's values: read from a store, a record or the wire."""


def parse_status(kind: type[S], text: object, what: str) -> S:
    """The member of ``kind`` whose text is ``text``; :class:`UnknownStatusError` naming ``what`` otherwise.

    >>> parse_status(MatchStatus, "aborted", "match status")
    <MatchStatus.ABORTED: 'aborted'>
    """
    if isinstance(text, str):
        try:
            return kind(text)
        except ValueError:
            pass
    known = ", ".join(member.value for member in kind)
    raise UnknownStatusError(f"unknown {what} {text!r}: it must be one of {known}")


class MatchStatus(StrEnum):
    """How a hosted match ended."""

    FINISHED = "finished"
    """Played to its end: it has places (a seat that forfeited is ranked last in it)."""
    ABORTED = "aborted"
    """Stopped from outside before its end (a signal, the referee shutting down): no places."""
    ERROR = "error"
    """The referee itself failed (an arena bug, never a bot's fault): no places."""

    @classmethod
    def parse(cls, text: object) -> MatchStatus:
        """The status written as ``text``; :class:`UnknownStatusError` for any other text."""
        return parse_status(cls, text, "match status")
