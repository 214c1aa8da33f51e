"""A match's private folder under the temp dir, and the sweep of those a killed arena left.

Each match gets ``$TMPDIR/polignac-XXXXXXXX`` (the referee's socket, one work folder per
seat).  An arena that ends normally removes it; one killed with SIGKILL cannot.  So the
folder holds an ``.owner`` file naming the process that made it (pid and start time, so a
reused pid does not pass for the owner), and the first match folder a process makes sweeps
away every ``polignac-*`` folder whose owner is gone.  Only folders this user owns and that
carry an owner file are touched: a folder of another user, or one being set up, is not.
Without ``/proc`` (not Linux) there is no sweep.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["OWNER_FILE", "PREFIX", "match_folder", "sweep_orphans"]

log = logging.getLogger(__name__)

PREFIX: Final = "polignac-"
OWNER_FILE: Final = ".owner"
_swept: set[Path] = set()


@contextlib.contextmanager
def match_folder() -> Iterator[Path]:
    """A new private folder for one match, removed on exit; the first call of a process sweeps orphans first."""
    parent = Path(tempfile.gettempdir())
    if parent not in _swept:
        _swept.add(parent)
        sweep_orphans(parent)
    with tempfile.TemporaryDirectory(prefix=PREFIX, dir=parent) as tmp:
        root = Path(tmp)
        owner = _identity(os.getpid())
        if owner is not None:
            (root / OWNER_FILE).write_text(owner)
        yield root


def sweep_orphans(parent: Path) -> list[Path]:
    """Remove the match folders in ``parent`` whose owner process has ended; returns them."""
    removed: list[Path] = []
    if _identity(os.getpid()) is None:
        return removed  # no /proc: owners cannot be checked
    for folder in parent.glob(f"{PREFIX}*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            pid_text, _, started = (folder / OWNER_FILE).read_text().partition(" ")
            pid = int(pid_text)
        except (OSError, ValueError):
            continue  # not a match folder, or one whose owner file is not written yet
        if _identity(pid) == f"{pid} {started}":
            continue  # its owner is alive
        shutil.rmtree(folder, ignore_errors=True)  # does not follow symbolic links
        if not folder.exists():
            removed.append(folder)
    if removed:
        log.info("removed %d match folder(s) left by arenas that died: %s", len(removed), ", ".join(map(str, removed)))
    return removed


def _identity(pid: int) -> str | None:
    """``"pid start-time"`` of a running process (start time in clock ticks since boot), None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (command) ": the command may hold spaces
    return f"{pid} {fields[19]}"  # field 22 of stat(5), the 20th after the command
