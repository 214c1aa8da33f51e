"""What a stopped league leaves of its running matches, and what its restart makes of it: the journals
of running matches, the check a journal passes before its match is resumed, and the record and
reasons of a match voided instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

from polignac import ENGINE_VERSION
from polignac_arena.league.config import LeagueConfig
from polignac_arena.referee.journal import JournalError, JournalState
from polignac_arena.referee.record import FORMAT as RECORD_FORMAT
from polignac_arena.referee.record import write_record
from polignac_arena.statuses import MatchStatus
from polignac_arena.store.records import StoredFixture

__all__ = ["INTERRUPTED", "JOURNAL_UNREADABLE", "NOT_RESUMABLE", "JournalFolder", "check_journal", "interrupted_record"]

log = logging.getLogger(__name__)

INTERRUPTED = "the league server stopped during this match (killed, or it crashed) and voided it when it started again"
"""The reason in the record of a match a restarted league found without a result and without a journal."""
JOURNAL_UNREADABLE = (
    "the league server stopped during this match and its journal cannot be read ({why}): it voided the match when it started again"
)
"""The reason in the record of a match a restarted league could not resume: its journal is damaged."""
NOT_RESUMABLE = "the league server stopped during this match and cannot resume it ({why}): it voided the match when it started again"
"""The reason in the record of a match a restarted league could not resume: a version it needs cannot play."""


class JournalFolder:
    """The journals of running matches, one per match id, in ``folder`` (None: none are kept)."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder

    def by_match(self) -> dict[str, Path]:
        """The journals in the folder, by match id."""
        if self._folder is None:
            return {}
        try:
            return {path.stem: path for path in self._folder.glob("*.journal") if path.is_file()}
        except OSError as exc:
            log.warning("ladder: the journals in %s cannot be listed: %s", self._folder, exc)
            return {}

    def path(self, match_id: str) -> Path | None:
        return None if self._folder is None else self._folder / f"{match_id}.journal"

    def drop(self, match_id: str) -> None:
        path = self.path(match_id)
        if path is not None:
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("ladder: the journal %s cannot be removed: %s", path, exc)


def check_journal(state: JournalState, fixture: StoredFixture, match_id: str) -> None:
    """A journal read back must be the fixture's: its match id, index, seed and seats."""
    head = state.head
    for what, journal, stored in (
        ("match id", head.match_id, match_id),
        ("index", head.index, fixture.index),
        ("seed", head.seed, fixture.seed),
        ("seats", list(head.labels), list(fixture.seats)),
    ):
        if journal != stored:
            raise JournalError(f"its {what} {journal!r} is not the scheduled match's ({stored!r})")


def interrupted_record(record_dir: Path | None, config: LeagueConfig, fixture: StoredFixture, match_id: str, reason: str) -> Path | None:
    """The record of a match the server left without a result: the one it wrote, if it got that far, else one (no
    action) whose result says the server stopped; None without a record folder or when it cannot be written."""
    if record_dir is None:
        return None
    path = record_dir / f"{match_id}.jsonl"
    if path.exists():
        return path
    clock = config.time
    header: dict[str, object] = {
        "type": "header",
        "format": RECORD_FORMAT,
        "match_id": match_id,
        "engine_version": ENGINE_VERSION,
        "rules": config.rules.to_dict(),
        "seed": fixture.seed,
        "time_control": {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms, "startup_ms": clock.startup_ms},
        "seats": [{"seat": seat, **_name_and_version(label)} for seat, label in enumerate(fixture.seats)],
        "started_at": None,  # not kept anywhere the killed server could leave it
    }
    players = len(fixture.seats)
    result: dict[str, object] = {
        "type": "result",
        "status": MatchStatus.ABORTED.value,
        "places": None,
        "totals": [0] * players,
        "faults": [{}] * players,
        "reason": reason,
    }
    try:
        write_record(path, [header, result])
    except OSError as exc:
        log.warning("ladder: the record of interrupted match %s cannot be written: %s", match_id, exc)
        return None
    return path


def _name_and_version(label: str) -> dict[str, str]:
    name, _, version = label.rpartition("@")
    return {"name": name, "version": version} if name else {"name": label, "version": ""}
