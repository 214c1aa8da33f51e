"""How a bot gets a seat: in-process, a sandboxed process, a docker container.

:func:`launcher_for` picks the launcher of a seat kind: ``process`` uses the bubblewrap
sandbox when bubblewrap is installed, and otherwise runs bots unsandboxed only when the
tournament trusts them.
"""

from __future__ import annotations

from polignac_arena.seats.base import BuildLimits, BuildResult, SeatContext, SeatError, SeatKind, SeatLauncher, SeatLimits, SeatProcess

__all__ = [
    "BuildLimits",
    "BuildResult",
    "SeatContext",
    "SeatError",
    "SeatKind",
    "SeatLauncher",
    "SeatLimits",
    "SeatProcess",
    "launcher_for",
]


def launcher_for(kind: SeatKind | str) -> SeatLauncher:
    """The launcher of seat kind ``kind``."""
    kind = SeatKind(kind)
    if kind is SeatKind.INPROCESS:
        from polignac_arena.seats.inprocess import InProcessLauncher

        return InProcessLauncher()
    if kind is SeatKind.DOCKER:
        from polignac_arena.seats.docker import DockerLauncher

        return DockerLauncher()
    from polignac_arena.seats.process import ProcessLauncher

    try:
        from polignac_arena.seats.sandbox import SandboxLauncher
    except ImportError:  # not written yet on this branch
        return ProcessLauncher()
    sandbox = SandboxLauncher()
    return sandbox if sandbox.unavailable() is None else ProcessLauncher()
