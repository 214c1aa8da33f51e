"""Seat uids for sandboxed bots: one free, unprivileged uid per running seat.

Every sandboxed seat runs as a uid of its own, so ``RLIMIT_NPROC`` holds per seat and a seat
cannot signal or read another's processes.  uid = 200000 + pid * 256 + n: arena processes
(distinct pids) never pick the same uids, and within one process a uid is taken until its
seat is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import threading
from pathlib import Path
from typing import Final

from polignac_arena.seats.base import SeatError

__all__ = ["allocate_uid", "kill_uid", "processes_of_uid", "release_uid"]

_UID_BASE: Final = 200_000
_UID_SLOTS: Final = 256
"""Seat uids per arena process: uid = base + pid * slots + n, so processes never collide."""
_PID_SPAN: Final = 1 << 22  # the largest pid_max Linux allows

_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()
_uid_counter = itertools.count()


def _uid_ranges() -> list[tuple[int, int]]:
    """The uids usable here, as [start, end) ranges of this process's user namespace."""
    try:
        text = Path("/proc/self/uid_map").read_text()
    except OSError:
        return [(0, 1 << 32)]
    ranges = []
    for line in text.splitlines():
        inside, _outside, count = (int(x) for x in line.split())
        ranges.append((inside, inside + count))
    return ranges


def _uids_of(pid: str) -> tuple[int, int] | None:
    """The real and effective uid of a live process; None if it is gone or a zombie (dead, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                    return None
                if line.startswith(b"Uid:"):
                    fields = line.split()
                    return int(fields[1]), int(fields[2])
    except OSError:
        return None
    return None


def processes_of_uid(uid: int) -> list[int]:
    """Pids of every live process (seen from here) running as ``uid``, real or effective."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            uids = _uids_of(entry)
            if uids is not None and uid in uids:
                found.append(int(entry))
    return found


def allocate_uid() -> int:
    """A uid for one seat: derived from this process's pid, unused by any process, not handed out twice.

    uid = 200000 + pid * 256 + n: arena processes (distinct pids) never pick the same uids, and
    within one process a uid is taken until its seat is stopped.  In a user namespace without
    those uids (a rootless container), its largest range of uids above 65536 is used instead.
    """
    start, size = _UID_BASE, _PID_SPAN * _UID_SLOTS
    ranges = _uid_ranges()
    if not any(lo <= start and start + size <= hi for lo, hi in ranges):
        start, end = max(((max(lo, 65536), hi) for lo, hi in ranges), key=lambda r: r[1] - r[0])
        size = end - start
        if size < _UID_SLOTS:
            raise SeatError("no range of free uids for sandboxed bots in this user namespace (/proc/self/uid_map)")
    with _uid_lock:
        for _ in range(_UID_SLOTS):
            serial = (os.getpid() % _PID_SPAN) * _UID_SLOTS + next(_uid_counter) % _UID_SLOTS
            uid = start + serial % size
            if uid in _uids_in_use or processes_of_uid(uid):
                continue
            _uids_in_use.add(uid)
            return uid
    raise SeatError(f"no free uid for a sandboxed bot: {_UID_SLOTS} seats of this arena process are running")


def release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


async def kill_uid(uid: int, rounds: int = 200) -> list[int]:
    """SIGKILL every process running as ``uid`` until none is left; the pids that were found."""
    seen: list[int] = []
    for _ in range(rounds):
        pids = processes_of_uid(uid)
        if not pids:
            return seen
        seen.extend(pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.01)
    return seen
