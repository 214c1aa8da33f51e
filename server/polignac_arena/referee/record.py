"""Match records: JSON lines written once, atomically, when a match ends or is aborted.

Line types, in order:

- ``header``: format, match id, engine version, ruleset, seed, time control, seats
  (seat, name, version), start time.
- ``action``: one engine action (``action`` as in ``Match.apply_action``) with its seat,
  hand, and for decisions the request id, the bot's reply, the status (an
  :class:`~polignac_arena.statuses.ActionStatus`: ``ok`` or a fault) and the milliseconds it
  took.
- ``fault``: a fault that replaced nothing (stale, unsolicited, disconnect...).
- ``away`` and ``back``: a seat allowed to reattach lost its stream (seat, hand, detail: a
  half-close, a lost stream, or one a new stream with its token replaced), and came back on a
  new one (seat, hand); a replay passes over them.
- ``hand_ended``: the engine's HandEnded event, to check a replay against.
- ``result``: status (a :class:`~polignac.statuses.MatchStatus`: ``finished``, ``aborted``,
  ``error``), places, totals, faults by seat, and the reason of an abort.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FORMAT = "polignac-match/1"

__all__ = ["FORMAT", "RecordFileError", "read_record", "write_record"]


class RecordFileError(ValueError):
    """A record file that cannot be read."""


def write_record(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Write the lines to ``path`` via a temporary file and a rename: never half a record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jsonl", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_record(path: Path) -> list[dict[str, Any]]:
    """The lines of a record file; raises :class:`RecordFileError` naming the bad line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordFileError(f"{str(path)!r} is not a UTF-8 text file") from None
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordFileError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(line, dict) or not isinstance(line.get("type"), str):
            raise RecordFileError(f"{path}:{number}: each line must be an object with a 'type'")
        lines.append(line)
    if not lines or lines[0]["type"] != "header":
        raise RecordFileError(f"{path}: the first line must be the match header")
    if lines[0].get("format") != FORMAT:
        raise RecordFileError(f"{path}: unknown record format {lines[0].get('format')!r}; this arena reads {FORMAT!r}")
    return lines
