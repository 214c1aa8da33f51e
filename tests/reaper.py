"""Every process a test run starts dies with the run, however the run ends (SIGTERM, Ctrl-C, SIGKILL, a crash).

:func:`start_reaper` (called by tests/conftest.py when pytest starts) marks the run: every
process it starts inherits ``POLIGNAC_TEST_RUN=<random id>`` in its environment, servers,
bots and Ray's processes alike.  It also starts a small watcher, in a session of its own and
without the mark, that waits for the pytest process to end (a pidfd: it becomes readable at
the exit, whatever the cause) and then kills every process that still carries the mark,
until none is left.  A sandboxed bot starts from an environment of its own, without the
mark; it dies with the arena that started it (the sandbox's monitor has ``PR_SET_PDEATHSIG``),
and the arena, marked, dies here.

Run as a script (``python -I -S tests/reaper.py PID MARK``), this file is that watcher: it
imports nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

MARK_ENV = "POLIGNAC_TEST_RUN"
SWEEP_S = 30.0
"""How long the watcher keeps killing marked processes after the run ended (new ones may still be forking)."""


def start_reaper() -> str:
    """Mark this run and start its watcher; the mark (``NAME=value``).  A run inside a marked run gets a mark of its own."""
    mark = f"{MARK_ENV}={uuid.uuid4().hex}"
    clean = {name: value for name, value in os.environ.items() if name != MARK_ENV}
    subprocess.Popen(
        [sys.executable, "-I", "-S", str(Path(__file__).resolve()), str(os.getpid()), mark],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=clean,
        start_new_session=True,  # a Ctrl-C to the terminal's process group or a kill of pytest's group spares it
    )
    os.environ[MARK_ENV] = mark.split("=", 1)[1]
    return mark


def marked(mark: bytes, me: int) -> list[int]:
    """The processes whose environment holds ``mark`` (``NAME=value``), but ``me``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if mark in environ.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def watch(run_pid: int, mark: bytes) -> None:
    """Wait for ``run_pid`` to end, then kill every marked process until none is left (or :data:`SWEEP_S` passed)."""
    try:
        pidfd = os.pidfd_open(run_pid)
    except ProcessLookupError:
        pass  # the run has ended already
    else:
        select.select([pidfd], [], [])
    me = os.getpid()
    deadline = time.monotonic() + SWEEP_S
    while (found := marked(mark, me)) and time.monotonic() < deadline:
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)  # a process being killed still shows its environment for a moment


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    watch(int(sys.argv[1]), sys.argv[2].encode())
