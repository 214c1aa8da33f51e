"""Keep what native code prints (Ray's C++ core worker: reconnect attempts, state dumps) off the runner's terminal.

Ray's driver writes its own messages straight to file descriptor 2, past Python.  While
:func:`native_stderr_to` is active that descriptor is a log file, and Python's ``sys.stderr``
(the arena's one-line errors, log lines) a copy of the terminal's descriptor, so only the
arena's words reach the terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["native_stderr_to"]


@contextlib.contextmanager
def native_stderr_to(path: Path) -> Iterator[Path]:
    """Send file descriptor 2 to ``path`` (appended to) and ``sys.stderr`` to where it went; ``path`` is removed if left empty.

    Descriptor 2 stays on the file when the block ends by an error, so that Ray's words on the
    way out (after a lost head) land there too; a clean end restores it.
    """
    sys.stderr.flush()
    terminal = os.dup(2)
    python_stderr = sys.stderr
    written = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(written, 2)
    os.close(written)
    encoding = getattr(python_stderr, "encoding", None) or "utf-8"
    sys.stderr = open(terminal, "w", encoding=encoding, errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115 (kept open as sys.stderr for the rest of the process)
    try:
        yield path
    except BaseException:
        sys.stderr.flush()
        _remove_if_empty(path)
        raise
    sys.stderr.flush()
    os.dup2(terminal, 2)
    os.close(terminal)
    sys.stderr = python_stderr
    _remove_if_empty(path)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            path.unlink()
