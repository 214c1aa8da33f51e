"""A match's private folder under the temp dir, and the sweep of those a killed arena left.

Each match gets ``$TMPDIR/polignac-XXXXXXXX`` (the referee's socket, one work folder per
seat).  An arena that ends normally removes it; one killed with SIGKILL cannot.  So the
folder holds an ``.owner`` file naming the process that made it (pid and start time, so a
reused pid does not pass for the owner), and the first match folder a process makes sweeps
away every ``polignac-*`` folder whose owner is gone (see :mod:`polignac_arena.owners`).
Only folders this user owns and that carry an owner file are touched: a folder of another
user, or one being set up, is not.  Without ``/proc`` (not Linux) there is no sweep.
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

from polignac_arena.owners import identity, is_running

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
        owner = identity(os.getpid())
        if owner is not None:
            (root / OWNER_FILE).write_text(f"{owner[0]} {owner[1]}")
        yield root


def sweep_orphans(parent: Path) -> list[Path]:
    """Remove the match folders in ``parent`` whose owner process has ended; returns them."""
    removed: list[Path] = []
    if identity(os.getpid()) is None:
        return removed  # no /proc: owners cannot be checked
    for folder in parent.glob(f"{PREFIX}*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            pid, started = map(int, (folder / OWNER_FILE).read_text().split(" "))
        except (OSError, ValueError):
            continue  # not a match folder, or one whose owner file is not written yet
        if is_running(pid, started):
            continue
        shutil.rmtree(folder, ignore_errors=True)  # does not follow symbolic links
        if not folder.exists():
            removed.append(folder)
    if removed:
        log.info("removed %d match folder(s) left by arenas that died: %s", len(removed), ", ".join(map(str, removed)))
    return removed
