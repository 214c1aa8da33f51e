"""Who owns what an arena leaves on the machine, and whether that owner still runs.

A process is named by its pid and its start time (clock ticks since boot, from
``/proc/PID/stat``), so a pid the kernel has since given to another process does not pass
for the owner.  Match folders and seat cgroups carry their owner's identity; what a dead
owner left is swept by the next arena.  Without ``/proc`` (not Linux) nothing has an owner.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["identity", "is_running"]


def identity(pid: int) -> tuple[int, int] | None:
    """``(pid, start time)`` of a running process, None if there is none (or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (command) ": the command may hold spaces
    return pid, int(fields[19])  # field 22 of stat(5), the 20th after the command


def is_running(pid: int, started: int) -> bool:
    """Whether the process that was ``pid`` when it started at ``started`` still runs."""
    return identity(pid) == (pid, started)
