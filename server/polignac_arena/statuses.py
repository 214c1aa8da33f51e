"""Every status the arena produces, stores, compares or shows, as an enum.

- :class:`MatchStatus` (from the SDK, :mod:`polignac.statuses`, which the bot client and the
  local harness share): how a hosted match ended.
- :class:`TournamentStatus`: where a stored tournament stands.
- :class:`ActionStatus`: the ``status`` of an action line in a match record.
- :class:`SubmissionState`: where a version of a league bot stands (the league's store calls it
  ``VersionState``; the authors' API shows it under this name).

Each value's text is what the store, the records and the JSON API have always held, so files
written before these enums existed read the same; reading any other text raises
:class:`UnknownStatusError`.
"""

from __future__ import annotations

from enum import StrEnum

from polignac.faults import Fault
from polignac.statuses import MatchStatus, UnknownStatusError, parse_status

__all__ = ["ActionStatus", "MatchStatus", "SubmissionState", "TournamentStatus", "UnknownStatusError", "parse_status"]


class TournamentStatus(StrEnum):
    """Where a stored tournament stands."""

    SCHEDULED = "scheduled"
    """Stored with its schedule; no run has started."""
    RUNNING = "running"
    """A run is playing it (or was killed while it did: ``--resume`` finishes it)."""
    FINISHED = "finished"
    """Every fixture has its final result."""
    STOPPED = "stopped"
    """A run ended before the last fixture (stopped, or matches failed); ``--resume`` finishes it."""

    @classmethod
    def parse(cls, text: object) -> TournamentStatus:
        """The status written as ``text``; :class:`UnknownStatusError` for any other text."""
        return parse_status(cls, text, "tournament status")


class ActionStatus(StrEnum):
    """Whose decision a record's action line holds: the bot's own (``ok``), or the fault it stands for.

    The faults keep :class:`~polignac.faults.Fault`'s text, so a line names its fault as the
    fault counts and the notices do.
    """

    OK = "ok"
    """The bot's own decision, legal and in time."""
    TIMEOUT = Fault.TIMEOUT.value
    ILLEGAL = Fault.ILLEGAL.value
    MALFORMED = Fault.MALFORMED.value
    STALE = Fault.STALE.value
    DISCONNECTED = Fault.DISCONNECTED.value
    CRASHED = Fault.CRASHED.value

    @classmethod
    def of(cls, fault: Fault | None) -> ActionStatus:
        """The status of an action taken for ``fault`` (None: the bot's own decision)."""
        return cls.OK if fault is None else cls(fault.value)

    @classmethod
    def parse(cls, text: object) -> ActionStatus:
        """The status written as ``text``; :class:`UnknownStatusError` for any other text."""
        return parse_status(cls, text, "action status")


class SubmissionState(StrEnum):
    """Where an uploaded version stands."""

    QUEUED = "queued"
    """Stored, waiting for its validation."""
    VALIDATING = "validating"
    """Being built and smoke-tested."""
    ACTIVE = "active"
    """Accepted: it plays in the ladder."""
    REFUSED = "refused"
    """Its validation failed (the reason and log say why)."""
    RETIRED = "retired"
    """Accepted once, replaced since by a newer version (it keeps its history)."""

    @property
    def final(self) -> bool:
        """Whether validation is over (accepted or refused): following its log may stop."""
        return self not in (SubmissionState.QUEUED, SubmissionState.VALIDATING)
