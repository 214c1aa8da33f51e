"""How a hosted match ends: its result, the MatchEnded message the seats hear, the record's first and last lines.

A match the league stops to take up later ends without a result: :class:`MatchSuspended`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from polignac import ENGINE_VERSION, Match, Ruleset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.record_lines import FORMAT, HeaderLine, JsonLine, RecordLine, RerunOf, ResultLine, SeatEntry
from polignac_arena.settings import TimeControl
from polignac_arena.statuses import MatchStatus

__all__ = ["MatchResult", "MatchSuspended", "header_line", "match_ended", "result_line"]

# MatchEnded.status_code, named as the enum is (MATCH_STATUS_ + the member's name).
_STATUS_TO_PB = {status: pb.MatchStatus.Value(f"MATCH_STATUS_{status.name}") for status in MatchStatus}


class MatchSuspended(Exception):
    """A match stopped without a result, to be resumed from its journal when the league starts again."""

    def __init__(self, match_id: str, reason: str) -> None:
        self.match_id = match_id
        self.reason = reason
        super().__init__(f"match {match_id!r} suspended: {reason}")


@dataclass
class MatchResult:
    """How a hosted match ended."""

    match_id: str
    status: MatchStatus
    places: tuple[int, ...] | None
    totals: tuple[int, ...]
    names: tuple[str, ...]
    versions: tuple[str, ...]
    faults: list[dict[str, int]]
    """Per seat, fault counts by kind."""
    lines: tuple[RecordLine, ...] = field(repr=False)
    """The match record (:mod:`polignac_arena.record_lines`)."""
    record_path: Path | None = None

    @functools.cached_property
    def record(self) -> list[JsonLine]:
        """The match record in its JSON form, as written to a record file and kept by the store."""
        return [line.to_dict() for line in self.lines]


def match_ended(status: MatchStatus, match: Match) -> pb.MatchEnded:
    """The message every seat still connected hears at the end (the places only of a finished match)."""
    places = match.places if status is MatchStatus.FINISHED else None
    # Both fields: status_code for clients of protocol 1.1 on, the text for those of 1.0.
    return pb.MatchEnded(places=places or (), totals=match.totals, status=status.value, status_code=_STATUS_TO_PB[status])


def header_line(
    match_id: str,
    rules: Ruleset,
    seed: int,
    time_control: TimeControl,
    seats: Sequence[tuple[str, str]],
    started_at: str,
    rerun: RerunOf | None,
) -> HeaderLine:
    """The record's first line; ``seats`` are each seat's name and version."""
    header = HeaderLine(
        format=FORMAT,
        match_id=match_id,
        engine_version=ENGINE_VERSION,
        rules=rules.to_dict(),
        seed=seed,
        time_control=time_control,
        seats=tuple(SeatEntry(seat=s, name=name, version=version) for s, (name, version) in enumerate(seats)),
        started_at=started_at,
    )
    return header if rerun is None else rerun.on(header)


def result_line(status: MatchStatus, match: Match, fault_counts: Sequence[dict[str, int]], reason: str | None) -> ResultLine:
    """The record's last line."""
    places = match.places if status is MatchStatus.FINISHED else None
    return ResultLine(
        status=status,
        places=places or None,
        totals=match.totals,
        faults=tuple(dict(counts) for counts in fault_counts),
        reason=reason,
    )
