"""How a bot gets a seat: in-process, a sandboxed process, a docker container.

:func:`launcher_for` picks the launcher of a seat kind, that kind's and no other: ``process``
is the bubblewrap sandbox when it can run here; where it cannot, it is the unsandboxed
launcher, which seats only the bots of a tournament that trusts them and otherwise refuses,
naming what the sandbox is missing.  An error in the launchers' own code is raised, never
taken for a missing tool.
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
    from polignac_arena.seats.sandbox import SandboxLauncher

    sandbox = SandboxLauncher()
    missing = sandbox.unavailable()
    return sandbox if missing is None else ProcessLauncher(missing)
