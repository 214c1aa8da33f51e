"""Where a referee of the league's pool runs: a process on the league's machine, or a task on a Ray node.

The pool (:mod:`~polignac_arena.league.referee_pool`) asks a :class:`RefereeLauncher` for the
worker of a slot and gets a :class:`RefereeHandle`: a socket to the worker carrying pickled
:mod:`~polignac_arena.league.referee_orders` messages, and the means to end the worker.  Both
kinds speak the same protocol over it, so the pool treats them alike: a socket that closes or a
worker that stops answering pings is a lost referee, whatever machine it was on.  This module
holds the local kind (:class:`ProcessLauncher`: a child process and a socket pair);
:mod:`~polignac_arena.league.ray_referees` holds the Ray kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Protocol

from polignac_arena.log_format import LogFormat

if TYPE_CHECKING:
    from polignac_arena.executors.shipping import Shipper

__all__ = ["ProcessHandle", "ProcessLauncher", "RefereeHandle", "RefereeLauncher"]


class RefereeHandle(Protocol):
    """A started referee worker, as the pool holds it."""

    sock: socket.socket
    """The league's end of the link; shutting it down makes both ends see it closed."""
    conn: Connection
    """The same link as a :class:`~multiprocessing.connection.Connection` (its own descriptor)."""
    where: str
    """For the log: ``pid 1234``, or the Ray task."""

    def kill(self) -> None:
        """End the worker now (its matches are lost)."""

    async def end(self, grace_s: float) -> None:
        """Wait up to ``grace_s`` for the worker to end on its own (its link is closed), then kill it and wait for that."""

    def exit_note(self) -> str:
        """How the worker ended, for the log and the aborted match's record (``exited with status -9``)."""


class RefereeLauncher(Protocol):
    """Starts the worker of a slot of the pool."""

    @property
    def on_nodes(self) -> bool:
        """Whether the workers run on Ray nodes: they start as nodes take them, so the league does not wait for them."""

    @property
    def shipper(self) -> Shipper | None:
        """How uploaded versions travel to the workers (None: the workers read the league's folders)."""

    async def launch(self, slot: int) -> RefereeHandle:
        """A started worker for ``slot``, its link open (the pool sends it its settings next)."""


class ProcessHandle:
    """A referee process on this machine: ``python -m polignac_arena.league.referee_worker FD``."""

    def __init__(self, process: asyncio.subprocess.Process, sock: socket.socket) -> None:
        self.process = process
        self.sock = sock
        self.conn = Connection(os.dup(sock.fileno()))
        self.where = f"pid {process.pid}"

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    async def end(self, grace_s: float) -> None:
        try:
            await asyncio.wait_for(self.process.wait(), grace_s)
        except TimeoutError:
            self.kill()
            await self.process.wait()

    def exit_note(self) -> str:
        code = self.process.returncode
        return "exited" if code is None else f"exited with status {code}"


@dataclass(frozen=True)
class ProcessLauncher:
    """Referee processes of the league's machine, each given its end of a socket pair (they log in ``log_format``)."""

    log_format: LogFormat = LogFormat.TEXT

    @property
    def on_nodes(self) -> bool:
        return False

    @property
    def shipper(self) -> Shipper | None:
        return None

    async def launch(self, slot: int) -> ProcessHandle:
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "polignac_arena.league.referee_worker", str(theirs.fileno()), self.log_format.value]
        try:
            child = await asyncio.create_subprocess_exec(*command, pass_fds=[theirs.fileno()], stdin=asyncio.subprocess.DEVNULL)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ProcessHandle(child, ours)
