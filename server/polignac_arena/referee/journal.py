"""A running match's journal: what a restarted league needs to rebuild the match where it stood.

One file per running match, appended and flushed line by line as the match goes, so that a
killed process loses nothing (a power cut may lose the last lines: the match then resumes a
few decisions earlier, from a state that is still consistent).  Each line is its CRC-32 in
eight hex digits, a space, and a JSON object:

- the head (first line, ``journal``): the match id, the league's fixture index, the seed, the
  rules, the time control, the start time, each seat's label and, for a remote seat, the
  SHA-256 of its seat token (never the token: the journal lets a restarted league recognise
  the token, not hand it out);
- every line of the match record as the referee makes it (actions, faults, away and back,
  hand ends, resumptions: :mod:`polignac_arena.record_lines`);
- ``seated`` (the seats' names and versions, from their Hellos) and ``bank`` (a seat's time
  bank after one of its requests), which the record does not keep.

:func:`read_journal` reads one back and replays its actions through the engine; a journal
cut short, a line whose checksum does not match, a line that is not what it should be or an
action the engine refuses is a :class:`JournalError` naming the line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from pydantic import BaseModel, ConfigDict, JsonValue, StrictFloat, StrictInt, StrictStr, ValidationError

from polignac import ENGINE_VERSION, Match, PolignacError, Ruleset
from polignac.jsontypes import JsonObject
from polignac_arena.record_lines import FORMAT, HeaderLine, RecordLine, SeatEntry, parse_line
from polignac_arena.replay import CUT_SHORT, replay_lines
from polignac_arena.settings import TimeControl

__all__ = ["JOURNAL_FORMAT", "JournalError", "JournalHead", "JournalState", "JournalWriter", "read_journal", "token_digest"]

log = logging.getLogger(__name__)

JOURNAL_FORMAT: Final = "polignac-journal/1"
_MAX_LINE_BYTES: Final = 1 << 20
"""A journal line is a record line or the head (a few KiB): anything longer is not one."""


def token_digest(token: str) -> bytes:
    """The SHA-256 of a seat token: how the referee looks tokens up, and all a journal keeps of one."""
    return hashlib.sha256(token.encode()).digest()


class JournalError(ValueError):
    """A journal that cannot be read back into its match; the message names the line and what is wrong."""


@dataclass(frozen=True)
class JournalHead:
    """The first line of a journal: which match, and how to deal it again."""

    match_id: str
    index: int
    """The league fixture the match plays."""
    seed: int
    rules: Ruleset
    time_control: TimeControl
    labels: tuple[str, ...]
    """Each seat's bot, as the league labels it."""
    remote: tuple[bytes | None, ...]
    """Per seat, the SHA-256 of a remote seat's token; None for a seat the league starts."""
    started_at: str

    def to_dict(self) -> JsonObject:
        clock = self.time_control
        return {
            "type": "journal",
            "format": JOURNAL_FORMAT,
            "match_id": self.match_id,
            "index": self.index,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "time_control": {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms, "startup_ms": clock.startup_ms},
            "labels": list(self.labels),
            "token_sha256": [None if digest is None else digest.hex() for digest in self.remote],
            "started_at": self.started_at,
        }


class _HeadModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: StrictStr
    format: StrictStr
    match_id: StrictStr
    index: StrictInt
    seed: StrictInt
    rules: dict[str, JsonValue]
    time_control: dict[str, StrictInt]
    labels: list[StrictStr]
    token_sha256: list[StrictStr | None]
    started_at: StrictStr


class _SeatedModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: StrictStr
    names: list[StrictStr]
    versions: list[StrictStr]


class _BankModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: StrictStr
    seat: StrictInt
    bank_ms: StrictFloat | StrictInt


@dataclass
class JournalState:
    """A journal read back: its head, the record so far, and the match rebuilt from it."""

    head: JournalHead
    lines: list[RecordLine]
    match: Match
    """The engine's state after every action of the journal."""
    names: tuple[str, ...] | None = None
    versions: tuple[str, ...] | None = None
    banks: dict[int, float] = field(default_factory=dict)


def _encode(line: Mapping[str, object]) -> bytes:
    text = json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()
    return b"%08x %s\n" % (zlib.crc32(text), text)


class JournalWriter:
    """Appends lines to one match's journal, flushing each; a write that fails drops the journal (logged once)."""

    def __init__(self, path: Path, file: IO[bytes]) -> None:
        self.path = path
        self._file: IO[bytes] | None = file

    @classmethod
    def create(cls, path: Path, head: JournalHead) -> JournalWriter:
        """A new journal at ``path`` (its folder made if need be) starting with ``head``; raises OSError."""
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        writer = cls(path, os.fdopen(fd, "wb"))
        if not writer.write(head.to_dict()):
            raise OSError(f"cannot write the journal {str(path)!r}")
        return writer

    @classmethod
    def reopen(cls, path: Path) -> JournalWriter:
        """The journal at ``path``, to append to (a resumed match); raises OSError."""
        return cls(path, path.open("ab"))

    @property
    def open(self) -> bool:
        return self._file is not None

    def write(self, line: Mapping[str, object], *, flush: bool = True) -> bool:
        """Append one line and flush it (``flush=False``: it goes with the next line flushed); False (and the journal
        dropped) when it cannot be written."""
        if self._file is None:
            return False
        try:
            self._file.write(_encode(line))
            if flush:
                self._file.flush()
            return True
        except (OSError, ValueError) as exc:
            log.warning("the journal %s cannot be written (%s): the match will not be resumed if the league stops", self.path, exc)
            self.discard()
            return False

    def close(self) -> None:
        """Stop writing; the file stays (the match is to be resumed)."""
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError as exc:
                log.warning("the journal %s cannot be closed: %s", self.path, exc)

    def discard(self) -> None:
        """Stop writing and remove the file (the match ended, or the journal is of no use)."""
        self.close()
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("the journal %s cannot be removed: %s", self.path, exc)


def _decode(raw: bytes, number: int) -> JsonObject:
    checksum, space, text = raw.partition(b" ")
    if not space or len(checksum) != 8:
        raise JournalError(f"line {number}: not a journal line (a checksum, a space, a JSON object)")
    try:
        expected = int(checksum, 16)
    except ValueError:
        raise JournalError(f"line {number}: not a journal line (its checksum is not hexadecimal)") from None
    if zlib.crc32(text) != expected:
        raise JournalError(f"line {number}: its checksum does not match: the line is garbled")
    try:
        line = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JournalError(f"line {number}: not JSON ({exc})") from None
    if not isinstance(line, dict) or not isinstance(line.get("type"), str):
        raise JournalError(f"line {number}: each line must be an object with a 'type'")
    return line


def _head(raw: JsonObject) -> JournalHead:
    if raw.get("type") != "journal":
        raise JournalError("line 1: the first line must be the journal's head")
    if raw.get("format") != JOURNAL_FORMAT:
        raise JournalError(f"line 1: unknown journal format {raw.get('format')!r}; this arena reads {JOURNAL_FORMAT!r}")
    try:
        head = _HeadModel.model_validate(raw)
        rules = Ruleset.from_record(head.rules)
        clock = TimeControl(**head.time_control)
        remote = tuple(None if digest is None else bytes.fromhex(digest) for digest in head.token_sha256)
    except (ValidationError, PolignacError, TypeError, ValueError) as exc:
        raise JournalError(f"line 1: the head does not describe a match: {str(exc).splitlines()[0]}") from None
    if not (len(head.labels) == len(remote) == rules.players):
        raise JournalError(f"line 1: the head names {len(head.labels)} seats and {len(remote)} token digests for {rules.players} players")
    if any(digest is not None and len(digest) != hashlib.sha256().digest_size for digest in remote):
        raise JournalError("line 1: a token digest is not a SHA-256")
    return JournalHead(head.match_id, head.index, head.seed, rules, clock, tuple(head.labels), remote, head.started_at)


def read_journal(path: Path) -> JournalState:
    """The journal at ``path``, its match rebuilt; raises :class:`JournalError` when it cannot be."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read it: {exc.strerror or exc}") from None
    if not data:
        raise JournalError("it is empty")
    raws = data.split(b"\n")
    if raws[-1]:
        raise JournalError(f"it is cut short in line {len(raws)} (the line has no end)")
    raws.pop()
    if any(len(raw) > _MAX_LINE_BYTES for raw in raws):
        raise JournalError(f"a line is longer than {_MAX_LINE_BYTES} bytes")
    head = _head(_decode(raws[0], 1))
    lines: list[RecordLine] = []
    state = JournalState(head, lines, Match(head.rules, head.seed))
    for number, raw in enumerate(raws[1:], start=2):
        line = _decode(raw, number)
        kind = line["type"]
        try:
            if kind == "seated":
                seated = _SeatedModel.model_validate(line)
                if not len(seated.names) == len(seated.versions) == head.rules.players:
                    raise JournalError(f"line {number}: 'seated' names {len(seated.names)} seats for {head.rules.players} players")
                state.names, state.versions = tuple(seated.names), tuple(seated.versions)
            elif kind == "bank":
                bank = _BankModel.model_validate(line)
                if not 0 <= bank.seat < head.rules.players or not 0 <= bank.bank_ms <= head.time_control.bank_ms:
                    raise JournalError(f"line {number}: a bank of {bank.bank_ms!r} ms for seat {bank.seat!r} is out of range")
                state.banks[bank.seat] = float(bank.bank_ms)
            elif kind in ("journal", "header", "result"):
                raise JournalError(f"line {number}: a {kind!r} line has no place in a running match's journal")
            else:
                lines.append(parse_line(line, number))
        except ValidationError as exc:
            raise JournalError(f"line {number}: a bad {kind} line: {str(exc).splitlines()[0]}") from None
        except ValueError as exc:
            if isinstance(exc, JournalError):
                raise
            raise JournalError(str(exc)) from None
    header = HeaderLine(
        format=FORMAT,
        match_id=head.match_id,
        engine_version=ENGINE_VERSION,
        rules=head.rules.to_dict(),
        seed=head.seed,
        seats=tuple(SeatEntry(seat=seat) for seat in range(head.rules.players)),
    )
    replay = replay_lines([header, *lines])
    if replay.divergence != CUT_SHORT:
        raise JournalError(f"its actions do not replay: {replay.divergence}")
    state.match = replay.match
    return state
