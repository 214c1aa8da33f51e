"""Seat cgroups (v1): one cgroup per controller per seat, beneath the arena's own cgroup.

``pids.max`` caps a seat's processes, ``memory.limit_in_bytes`` (and swap) its memory and
``cpu.cfs_quota_us`` its CPU share.  Controllers that cannot be used (not root, no v1
hierarchy) are left out and a log line says, once, that containment is weaker.

A seat cgroup's name ends in ``@PID.START``, the arena process that made it (see
:mod:`polignac_arena.owners`).  An arena killed with SIGKILL cannot remove its seat cgroups;
the next arena to make one removes the empty ones whose owner has died.  Names without an
owner (made by older versions) are removed once they are an hour old.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from polignac_arena.owners import identity, is_running
from polignac_arena.seats.base import SeatLimits
from polignac_arena.seats.common import within

__all__ = ["SeatCgroups", "warn_weaker_containment"]

log = logging.getLogger(__name__)

_CPU_PERIOD_US: Final = 100_000
_CONTROLLERS: Final = ("pids", "memory", "cpu")


@functools.cache
def _cgroup_mounts() -> dict[str, tuple[Path, str]]:
    """For each controller: the cgroup v1 mount point holding it and that mount's root."""
    mounts: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(tail) < 3 or tail[0] != "cgroup" or len(fields) < 5:
            continue
        options = set(tail[2].split(","))
        for controller in _CONTROLLERS:
            if controller in options and controller not in mounts:
                mounts[controller] = (Path(fields[4]), fields[3])
    return mounts


def _own_cgroup_dirs() -> dict[str, Path]:
    """For each controller: the folder of this process's own cgroup (seat cgroups go beneath it)."""
    mounts = _cgroup_mounts()
    dirs: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return dirs
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            if controller in mounts and controller in _CONTROLLERS:
                mount, root = mounts[controller]
                if not within(path, [root]):
                    continue
                relative = path[len(root) :].strip("/")
                folder = mount / relative if relative else mount
                if folder.is_dir():
                    dirs[controller] = folder
    return dirs


_warned: set[str] = set()


def warn_weaker_containment(reason: str) -> None:
    """Say once (per reason) that seats are contained by rlimits alone."""
    if reason not in _warned:
        _warned.add(reason)
        nproc = "RLIMIT_NPROC per seat uid" if os.geteuid() == 0 else "no RLIMIT_NPROC (the seats share the arena's uid)"
        log.warning(
            "sandboxed seats run without (some) cgroups (%s): their processes, memory and CPU are capped by rlimits"
            " (%s, RLIMIT_AS, RLIMIT_CPU) and the PID namespace, which is weaker containment",
            reason,
            nproc,
        )


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


@dataclass
class SeatCgroups:
    """One seat's cgroups, one per controller that could be set up."""

    dirs: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def create(cls, name: str, limits: SeatLimits) -> SeatCgroups:
        """Make the seat's cgroups with its limits; controllers that cannot be used are left out (and logged)."""
        group = cls()
        if os.geteuid() != 0:
            warn_weaker_containment("the arena does not run as root")
            return group
        owner = identity(os.getpid())
        if owner is not None:
            name = f"{name}{_OWNER_MARK}{owner[0]}.{owner[1]}"
        own = _own_cgroup_dirs()
        missing = [c for c in _CONTROLLERS if c not in own]
        if missing:
            warn_weaker_containment(f"no cgroup v1 hierarchy for {', '.join(missing)}")
        settings = {
            "pids": [("pids.max", str(limits.pids))],
            "memory": [
                ("memory.limit_in_bytes", str(limits.memory_mb << 20)),
                ("memory.memsw.limit_in_bytes", str(limits.memory_mb << 20)),
            ],
            "cpu": [("cpu.cfs_period_us", str(_CPU_PERIOD_US)), ("cpu.cfs_quota_us", str(max(1000, int(limits.cpus * _CPU_PERIOD_US))))],
        }
        for controller, parent in own.items():
            folder = parent / "polignac" / name
            _remove_stale(folder.parent)
            try:
                for _ in range(3):  # another arena may remove the shared "polignac" folder meanwhile
                    try:
                        folder.parent.mkdir(exist_ok=True)
                        folder.mkdir()
                        break
                    except FileNotFoundError:
                        continue
                    except FileExistsError:  # left over by an arena that died: empty it first
                        _kill_cgroup_now(folder)
                        folder.rmdir()
                else:
                    raise OSError(errno.ENOENT, "cannot create", str(folder))
            except OSError as exc:
                warn_weaker_containment(f"cannot create cgroups in {folder.parent}: {exc.strerror}")
                continue
            group.dirs[controller] = folder
            for key, value in settings[controller]:
                if key == "memory.memsw.limit_in_bytes" and not (folder / key).exists():
                    continue  # no swap accounting
                try:
                    _write(folder / key, value)
                except OSError as exc:
                    if key == "memory.memsw.limit_in_bytes":
                        continue
                    warn_weaker_containment(f"cannot set {key} in {folder.parent}: {exc.strerror}")
                    del group.dirs[controller]
                    _rmdir_quietly(folder)
                    break
        return group

    @property
    def procs_files(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.dirs.values()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many processes the memory cgroup has killed for going over the seat's memory cap."""
        folder = self.dirs.get("memory")
        if folder is None:
            return 0
        with contextlib.suppress(OSError, ValueError):
            for line in (folder / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    async def kill_all(self, rounds: int = 200) -> None:
        """SIGKILL every process in the seat's cgroups until they are empty."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            await asyncio.sleep(0.01)
        log.error("processes left in %s after %d rounds of SIGKILL", list(self.dirs.values()), rounds)

    async def remove(self) -> None:
        """Remove the seat's cgroups (and the shared ``polignac`` folder when it is empty)."""
        for folder in self.dirs.values():
            for attempt in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or attempt == 99:
                        log.error("cannot remove the cgroup %s: %s", folder, exc.strerror)
                        break
                    await asyncio.sleep(0.02)
            _rmdir_quietly(folder.parent)
        self.dirs.clear()


_OWNER_MARK: Final = "@"
_stale_checked: set[Path] = set()
_STALE_AGE_S: Final = 3600


def _owner_has_died(name: str) -> bool | None:
    """Whether the arena named at the end of a seat cgroup's name has died; None when the name has no owner."""
    _, mark, owner = name.rpartition(_OWNER_MARK)
    pid, dot, started = owner.partition(".")
    if not (mark and dot and pid.isdigit() and started.isdigit()):
        return None
    return not is_running(int(pid), int(started))


def _remove_stale(parent: Path) -> list[str]:
    """Once per process: remove the empty seat cgroups of arenas that died; what was removed.

    A cgroup that names its owner goes once that owner has died; one that does not, once it
    is an hour old (it may be a live arena's, made a moment ago and not yet joined).
    """
    removed: list[str] = []
    if parent in _stale_checked:
        return removed
    _stale_checked.add(parent)
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False):
                    continue
                dead = _owner_has_died(entry.name)
                if dead or (dead is None and time.time() - entry.stat().st_mtime > _STALE_AGE_S):
                    os.rmdir(entry.path)  # fails (EBUSY) if anything still runs in it
                    removed.append(entry.path)
    if removed:
        log.info("removed %d empty seat cgroup(s) left by arenas that died", len(removed))
    return removed


def _kill_cgroup_now(folder: Path) -> None:
    for _ in range(100):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _rmdir_quietly(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()
