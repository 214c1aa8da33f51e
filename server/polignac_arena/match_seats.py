"""The bots one match starts: each seat's process, its exit report and its stdio bridge, stopped together.

Shared by every way the arena runs a match with launched seats (:func:`polignac_arena.runner.run_local_match`,
the league's matches): a seat gets a socket folder and a work folder in the match's private
folder (:mod:`polignac_arena.match_folder`), its start is given up when the referee begins to
shut down, a seat that cannot start forfeits as crashed, and :meth:`MatchSeats.stop` removes
everything that was started, even while the match is being cancelled (:func:`finish_shielded`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path

from polignac_arena.decision_notes import StderrPerDecision
from polignac_arena.plaintext import plain
from polignac_arena.referee import MatchHost, RefereeServer
from polignac_arena.seats import SeatContext, SeatError, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.stdio_bridge import LinesHook, run_bridge
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission

__all__ = ["MatchSeats", "finish_shielded"]


class MatchSeats:
    """The launched seats of one match, in the match folder ``root``."""

    def __init__(self, root: Path, players: int) -> None:
        self.root = root
        # Sandboxed bots run as other users: they must reach their socket (its token guards it).
        os.chmod(root, 0o711)
        self.processes: list[SeatProcess | None] = [None] * players
        self._sockets: dict[int, Path] = {}
        self._helpers: list[asyncio.Future[object]] = []
        self._stderr_cuts = [StderrPerDecision(self._stderr_reader(seat)) for seat in range(players)]

    def socket(self, seat: int) -> Path:
        """The path of ``seat``'s own referee socket, its folder made (the seat's sandbox mounts that folder)."""
        socket_dir = self.root / f"seat{seat}-socket"
        socket_dir.mkdir(mode=0o755)
        os.chmod(socket_dir, 0o755)
        self._sockets[seat] = socket_dir / "referee.sock"
        return self._sockets[seat]

    async def exit_status(self, seat: int) -> int | None:
        """The exit status of ``seat``'s process once it ends (None: the seat has no process); for the host."""
        process = self.processes[seat]
        return None if process is None else await process.wait()

    async def start(
        self,
        server: RefereeServer,
        host: MatchHost,
        launcher: SeatLauncher,
        seat: int,
        submission: Submission,
        *,
        limits: SeatLimits,
        trusted: bool,
        bot_seed: int,
        token: str | None = None,
        lines_hook: LinesHook | None = None,
    ) -> None:
        """Start ``submission`` in ``seat`` on its socket (:meth:`socket`); a seat that cannot start forfeits as crashed.

        ``token`` is the one the bot presents (default: the seat's, ``host.tokens[seat]``); a stdio bot's bridge
        passes its lines through ``lines_hook``, when given.
        """
        token = token if token is not None else host.tokens[seat]
        workdir = self.root / f"seat{seat}"
        workdir.mkdir(mode=0o777)
        os.chmod(workdir, 0o777)  # the sandbox user writes here
        context = SeatContext(
            seat=seat,
            token=token,
            submission=submission,
            limits=limits.granted(submission.resources),
            referee_socket=self._sockets[seat],
            workdir=workdir,
            trusted=trusted,
            match_id=host.match_id,
            bot_seed=bot_seed,
        )
        try:
            process = await _start_unless_stopped(server, launcher.start(context))
        except Exception as exc:  # a seat that cannot start is that seat's fault, not the match's
            print(plain(f"seat {seat} ({submission.label}) could not start: {exc}"), file=sys.stderr)  # may quote a build
            host.post_exit(seat, 127)
            return
        self.processes[seat] = process
        self._helpers.append(asyncio.ensure_future(_report_exit(host, seat, process)))
        if submission.transport is Transport.STDIO:
            address = f"unix:{self._sockets[seat]}"
            bridge = run_bridge(process, address, token, bot_name=submission.name, bot_version=submission.version, lines_hook=lines_hook)
            self._helpers.append(asyncio.ensure_future(bridge))

    def stderr_since_answer(self, seat: int) -> str | None:
        """What ``seat`` wrote on stderr since this was last asked, cleaned and capped, or None (the host's ``notes.stderr_of``)."""
        return self._stderr_cuts[seat].take()

    def _stderr_reader(self, seat: int) -> Callable[[], bytes | bytearray]:
        def read() -> bytes | bytearray:
            process = self.processes[seat]
            return b"" if process is None else process.stderr_bytes()

        return read

    def stderr(self) -> list[str]:
        """What each seat's bot wrote on stderr (empty for a seat without a process)."""
        return [process.stderr_text() if process is not None else "" for process in self.processes]

    async def stop(self) -> None:
        """Stop every seat, with everything it started, and its helpers."""
        await asyncio.gather(*(process.stop() for process in self.processes if process is not None), return_exceptions=True)
        for helper in self._helpers:
            helper.cancel()
        await asyncio.gather(*self._helpers, return_exceptions=True)


async def finish_shielded(cleanup: Coroutine[object, object, None]) -> None:
    """Run ``cleanup`` to its end even when the caller is being cancelled (then re-raise the cancellation)."""
    cleaning = asyncio.ensure_future(cleanup)
    try:
        await asyncio.shield(cleaning)
    except asyncio.CancelledError:
        await cleaning
        raise


async def _start_unless_stopped(server: RefereeServer, start: Coroutine[object, object, SeatProcess]) -> SeatProcess:
    """A seat's start, given up when the referee begins to shut down (a signal) or the match is cancelled.

    A seat's start can take long (an image build has a wall clock of minutes): waiting it out
    would hold the arena that long after SIGTERM.  Given up, the start is cancelled and waited
    for; a seat that started all the same is stopped, so no bot is left running unseen.
    """
    starting = asyncio.ensure_future(start)
    stopping = asyncio.ensure_future(server.stopping.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        await _abandon(starting)
        raise
    finally:
        stopping.cancel()
    if starting.done():
        return starting.result()
    await _abandon(starting)
    raise SeatError("the referee is shutting down")


async def _abandon(starting: asyncio.Future[SeatProcess]) -> None:
    """Cancel a seat's start and wait for it; stop the seat if it started just the same."""
    starting.cancel()
    await asyncio.wait({starting})
    if not starting.cancelled() and starting.exception() is None:
        await starting.result().stop()


async def _report_exit(host: MatchHost, seat: int, process: SeatProcess) -> None:
    """Tell the host when a bot ends, so a crash is known as one."""
    with contextlib.suppress(asyncio.CancelledError):
        code = await process.wait()
        if host.result is None:
            host.post_exit(seat, code)
