"""Where a rerun starts: a match record (a file, or a match of a store) and one of its hands.

``polignac match --from MATCH[:HAND]`` and the league's test reruns read the record here,
replay it through the engine, and take the match up at the hand asked for
(:mod:`polignac.rerun`): the same deals from there on, the same dealers, the totals so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from polignac import PolignacError, Ruleset
from polignac.rerun import RerunError, hand_start
from polignac_arena.record_lines import HeaderLine, RecordLine, RerunOf
from polignac_arena.referee.record import RecordFileError, read_record
from polignac_arena.replay import CUT_SHORT, replay_lines
from polignac_arena.store import Store, StoreError

__all__ = ["RerunSource", "RerunSourceError", "load_rerun", "rerun_of_record", "split_from"]


class RerunSourceError(ValueError):
    """A record, or a hand of it, that no rerun can start from; the message says why."""


@dataclass(frozen=True, slots=True)
class RerunSource:
    """A recorded match and the hand a rerun of it starts at."""

    header: HeaderLine
    rerun: RerunOf

    @property
    def rules(self) -> Ruleset:
        """The record's ruleset."""
        return Ruleset.from_record(self.header.rules)


def split_from(text: str) -> tuple[str, int | None]:
    """``MATCH[:HAND]`` as (match, hand or None); a name ending in ``:`` and digits is read as a hand."""
    name, sep, hand = text.rpartition(":")
    if not sep or not name:
        return text, None
    if not hand.isascii() or not hand.isdigit() or len(hand) > 9:
        raise RerunSourceError(f"the hand after ':' must be a hand number, got {hand!r} in {text!r}")
    return name, int(hand)


def rerun_of_record(lines: Sequence[RecordLine | Mapping[str, object]], name: str, hand: int | None) -> RerunSource:
    """The rerun of the record ``lines`` (named ``name``) from hand ``hand`` (default: its first hand)."""
    first_line = lines[0] if lines else None
    if isinstance(first_line, Mapping) and first_line.get("type") == "header" and "seed" not in first_line:
        raise RerunSourceError(f"{name}: the record has no seed, so its deals cannot be dealt again")
    try:
        replay = replay_lines(lines)
    except (ValueError, PolignacError) as exc:
        raise RerunSourceError(f"{name}: not a match record: {exc}") from None
    if replay.divergence is not None and replay.divergence != CUT_SHORT:
        raise RerunSourceError(f"{name}: the record does not replay, so its hands cannot be played again: {replay.divergence}")
    header = replay.header
    first = header.first_hand or 1
    try:
        start = hand_start(replay.match, first if hand is None else hand)
    except RerunError as exc:
        raise RerunSourceError(f"{name}: {exc}") from None
    return RerunSource(header, RerunOf(header.match_id or name, start))


def load_rerun(text: str, db: Path | None) -> RerunSource:
    """``MATCH[:HAND]``: a record file, else a match id in the store ``db``; raises :class:`RerunSourceError`."""
    name, hand = split_from(text)
    path = Path(name)
    if path.is_file():
        try:
            lines = read_record(path)
        except RecordFileError as exc:
            raise RerunSourceError(str(exc)) from None
        return rerun_of_record(lines, path.name, hand)
    if db is None or not db.is_file():
        raise RerunSourceError(f"no record file {name!r}, and no store to look the match id up in ({db})")
    try:
        with Store(db, create=False) as store:
            stored = store.get_result(name)
    except StoreError as exc:
        raise RerunSourceError(str(exc)) from None
    if stored is None or not stored.record:
        raise RerunSourceError(f"no record file {name!r}, and no match {name!r} in {db}")
    return rerun_of_record(stored.record, name, hand)
