"""Match record files: JSON lines written once, atomically, when a match ends or is aborted.

The lines and their kinds are :mod:`polignac_arena.record_lines`; this module reads and
writes the files.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from polignac_arena.record_lines import FORMAT, JsonLine, RecordLine, header_problem, is_json_line, parse_lines

__all__ = ["FORMAT", "RecordFileError", "read_lines", "read_record", "write_record"]


class RecordFileError(ValueError):
    """A record file that cannot be read."""


def write_record(path: Path, lines: Iterable[RecordLine | Mapping[str, object]]) -> None:
    """Write the lines (typed, or in their JSON form) to ``path`` via a temporary file and a rename: never half a record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".jsonl", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line if isinstance(line, Mapping) else line.to_dict(), separators=(",", ":")) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_record(path: Path) -> list[JsonLine]:
    """The lines of a record file in their JSON form; raises :class:`RecordFileError` naming the bad line.

    Each line is checked to be an object with a ``type``, the first to be a header of this
    arena's format; :func:`read_lines` reads them as types.
    """
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
        if not (is_json_line(line) and isinstance(line, dict)):
            raise RecordFileError(f"{path}:{number}: each line must be an object with a 'type'")
        lines.append(line)
    problem = header_problem(lines[0] if lines else None)
    if problem is not None:
        raise RecordFileError(f"{path}: {problem}")
    return lines


def read_lines(path: Path) -> list[RecordLine]:
    """The lines of a record file as types; raises :class:`RecordFileError` or :class:`ValueError` naming the bad line."""
    return parse_lines(read_record(path))
