"""A running ``docker`` seat: the container's attach connections, its stderr and its exit status.

:class:`~polignac_arena.seats.docker.DockerLauncher` creates the container and attaches to it
before starting it, with one connection for stderr and, for stdio bots, another for stdin and
stdout.  :class:`DockerSeat` then reads stdout into an asyncio reader, keeps stderr up to
``stderr_bytes``, watches the container until it exits, and kills and removes it on
:meth:`DockerSeat.stop`.

Stderr has its own connection so that a flood of it costs the other seats nothing: past the
cap the arena reads it at most ``SeatLimits.stderr_drain_bytes_per_s`` and drops it, and the
daemon, which cannot write faster than the arena reads, holds the bot's writes back (the bot
waits in ``write``).  Neither the arena nor the daemon spends more than that rate on it.

Removal needs no new file descriptor: each seat keeps a :class:`~.docker_http.DaemonLine`
open from its start, so a seat is removed even when the arena has run out of descriptors.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, ParamSpec, TypedDict, TypeVar, cast

if TYPE_CHECKING:
    from docker import DockerClient

from polignac_arena.seats.base import SeatLimits, SeatProcess
from polignac_arena.seats.common import exit_status as docker_exit_status
from polignac_arena.seats.docker_http import DaemonLine, DaemonUnreachable, out_of_descriptors

__all__ = [
    "STDERR_LIMIT",
    "STDOUT_LIMIT",
    "Attached",
    "DockerSeat",
    "StdinWriter",
    "docker_exit_status",
    "in_thread",
    "short_error",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")

STDOUT_LIMIT: Final = 1 << 20
"""The stdout reader's line limit; the pump pauses while twice this waits unread."""
STDERR_LIMIT: Final = 64 << 10
"""The stderr connection's buffer limit: at most twice this waits in the arena, unread."""
STDERR_TAIL_BYTES: Final = 4096
"""The end of stderr past its cap that is kept (a quarter of the cap at most), as in bubblewrap seats."""
_WATCH_PATIENCE_S: Final = 60.0


class _ContainerState(TypedDict, total=False):
    """The keys read here of a container's ``State`` as Docker describes it (it holds more)."""

    Running: bool
    Restarting: bool
    OOMKilled: bool
    ExitCode: int


def short_error(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


async def in_thread(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await asyncio.to_thread(function, *args, **kwargs)


class _Gate(asyncio.ReadTransport):
    """Stands for the stdout reader's transport: the reader pauses it when too much waits unread."""

    def __init__(self) -> None:
        super().__init__()
        self.open = asyncio.Event()
        self.open.set()

    def pause_reading(self) -> None:
        self.open.clear()

    def resume_reading(self) -> None:
        self.open.set()

    def is_reading(self) -> bool:
        return self.open.is_set()


class StdinWriter(asyncio.StreamWriter):
    """The container's stdin: closing it only half-closes the attach connection."""

    _closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            if not self.transport.is_closing() and self.transport.can_write_eof():
                self.transport.write_eof()

    def is_closing(self) -> bool:
        return self._closed or self.transport.is_closing()

    async def wait_closed(self) -> None:
        return None


@dataclass
class Attached:
    """A container's connections: stderr, stdin and/or stdout (stdio bots, build steps), and the line that removes it."""

    stderr: tuple[asyncio.StreamReader, asyncio.StreamWriter]
    stdio: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None
    line: DaemonLine
    stdin: bool = True
    """Whether ``stdio`` carries the container's stdin (else its stdout only)."""

    def abort(self) -> None:
        """Close everything at once (the container is being removed, or never started)."""
        for connection in (self.stderr, self.stdio):
            if connection is not None:
                connection[1].transport.abort()
        self.line.close()


class DockerSeat(SeatProcess):
    """A started container: its attach connections, its captured stderr, its exit status."""

    def __init__(self, client: DockerClient, container_id: str, name: str, attached: Attached, limits: SeatLimits) -> None:
        self.client = client
        self.container_id = container_id
        self.name = name
        self._limits = limits
        self._attached = attached
        self._stderr = bytearray()
        self._stderr_over = False
        """Past the cap: the rest of stderr is read slowly and dropped."""
        self._stderr_past = 0
        """Bytes of stderr read past the head (the tail among them)."""
        self._tail_cap = min(STDERR_TAIL_BYTES, limits.stderr_bytes // 4)
        self._tail = b""
        self._drain_rate = limits.stderr_drain_bytes_per_s
        self._notes: list[str] = []
        self._oom = False
        self._returncode: int | None = None
        self._gate: _Gate | None = None
        self._draining = False
        """Being stopped: the pump drops stdout instead of waiting for its reader (a blocked copy would stall the daemon)."""
        self._pump: asyncio.Future[None] | None = None
        if attached.stdio is not None:
            self.stdout = asyncio.StreamReader(limit=STDOUT_LIMIT)
            self._gate = _Gate()
            self.stdout.set_transport(self._gate)
            if attached.stdin:
                self.stdin = attached.stdio[1]
            self._pump = asyncio.ensure_future(self._demultiplex(attached.stdio[0]))
        self._stderr_pump = asyncio.ensure_future(self._keep_stderr(attached.stderr[0]))
        self._watcher = asyncio.ensure_future(self._watch())
        self._stopper: asyncio.Future[None] | None = None
        self._stopped = asyncio.Event()
        """Set once stop() has read the killed container's status (or given up on it)."""

    async def _demultiplex(self, reader: asyncio.StreamReader) -> None:
        """Feed the stdout frames of the stdin/stdout connection to the reader (with back-pressure)."""
        assert self.stdout is not None and self._gate is not None
        try:
            while True:
                header = await reader.readexactly(8)
                size = int.from_bytes(header[4:8], "big")
                payload = await reader.readexactly(size) if size else b""
                if header[0] == 1 and not self._draining:
                    await self._gate.open.wait()
                    if not self._draining:
                        self.stdout.feed_data(payload)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.stdout.feed_eof()

    async def _keep_stderr(self, reader: asyncio.StreamReader) -> None:
        """Keep stderr's beginning up to the cap (less a tail), then read the rest at a bounded rate, keeping its end."""
        cap = self._limits.stderr_bytes
        head_cap = cap - self._tail_cap
        try:
            while True:
                header = await reader.readexactly(8)
                left = int.from_bytes(header[4:8], "big")
                if header[0] == 2 and len(self._stderr) < head_cap:
                    piece = await reader.readexactly(min(left, head_cap - len(self._stderr)))
                    self._stderr.extend(piece)
                    left -= len(piece)
                while left > 0:
                    self._stderr_over = True
                    chunk = await reader.readexactly(min(left, STDERR_LIMIT))
                    left -= len(chunk)
                    if header[0] == 2:
                        self._stderr_past += len(chunk)
                        # Twice the tail: room to end it at the last whole line (see stderr_text).
                        self._tail = (self._tail + chunk)[-2 * self._tail_cap :] if self._tail_cap else b""
                    await asyncio.sleep(len(chunk) / self._drain_rate)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass

    def _output_held(self) -> bool:
        """Whether the container's output cannot reach its end soon: stdout backed up, or stderr past its cap."""
        return self._stderr_over or (self._gate is not None and not self._gate.open.is_set())

    def _state(self) -> _ContainerState | None:
        """The container's State, or None once it is gone (asked on the seat's own line when descriptors are short)."""
        import docker.errors

        try:
            state = self.client.api.inspect_container(self.container_id)["State"]
        except docker.errors.NotFound:
            return None
        except Exception as exc:
            if not out_of_descriptors(exc):
                raise
            status, body = self._attached.line.request("GET", f"/containers/{self.container_id}/json")
            if status == 404:
                return None
            if status != 200 or not isinstance(body, dict):
                raise DaemonUnreachable(f"inspecting {self.name} answered {status}") from None
            state = body["State"]
        return cast("_ContainerState", dict(state))  # Docker's answer, of which _ContainerState names what is read

    async def _watch(self) -> int | None:
        """The exit status once the container ends: its output closes first, then its state says so.

        While its output is held back (a stdio bot's stdout that nobody reads, or stderr past its
        cap), it cannot reach its end: then the container's state is asked without waiting for it.
        """
        pumps = {pump for pump in (self._pump, self._stderr_pump) if pump is not None}
        while not all(pump.done() for pump in pumps) and not self._output_held():
            await asyncio.wait(pumps, timeout=0.25, return_when=asyncio.ALL_COMPLETED)
        delay = 0.02
        give_up = time.monotonic() + _WATCH_PATIENCE_S
        while True:
            try:
                state = await in_thread(self._state)
            except Exception as exc:  # the daemon went away: the status is unknown
                if out_of_descriptors(exc) and time.monotonic() < give_up:
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                log.warning("seat container %s: cannot read its state: %s", self.name, short_error(exc))
                return self._returncode
            give_up = time.monotonic() + _WATCH_PATIENCE_S
            if state is None:
                # Gone: only stop() removes it, and it reads the status first; wait for that reading
                # rather than report an unknown status while stop()'s thread is still returning.
                if self._stopper is not None:
                    await self._stopped.wait()
                return self._returncode
            if not state.get("Running") and not state.get("Restarting"):
                oom = self._oom = bool(state.get("OOMKilled"))
                if oom:
                    self._notes.append(f"[arena] the container went over its memory limit ({self._limits.memory_mb} MB) and was killed")
                if self._returncode is None:
                    self._returncode = docker_exit_status(int(state.get("ExitCode", 0)), oom)
                return self._returncode
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def wait(self) -> int | None:
        return await asyncio.shield(self._watcher)

    def memory_kills(self) -> int:
        """1 when the container's memory cap killed one of its processes (Docker says whether, not how many), else 0."""
        return int(self._oom)

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def stderr_bytes(self) -> bytearray:
        return self._stderr

    def stderr_text(self) -> str:
        """Stderr's beginning; past the cap, a line saying how much was dropped, then its last whole lines (as in bubblewrap seats)."""
        text, tail = self._stderr.decode("utf-8", "replace"), self._tail
        if self._stderr_past > self._tail_cap and b"\n" in tail:
            tail = tail[: tail.rindex(b"\n") + 1]  # the bot was stopped mid-line: end with its last whole line
        tail = tail[-self._tail_cap :] if self._tail_cap else b""
        dropped = self._stderr_past - len(tail)
        if dropped > 0:
            note = f"\n[arena] {dropped} more bytes not kept (the cap is {self._limits.stderr_bytes} bytes)"
            text += note + (f"; the last {len(tail)}:\n" if tail else "\n")
        text += tail.decode("utf-8", "replace")
        return "\n".join([text, *self._notes]) if self._notes else text

    async def stop(self) -> None:
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopper)

    def _kill_and_remove(self) -> int | None:
        """Kill the container, read its status, remove it: on the seat's own line, so no new descriptor is needed."""
        line = self._attached.line
        path = f"/containers/{self.container_id}"
        line.request("POST", f"{path}/kill")  # 404: gone; 409: not running any more
        code: int | None = None
        with contextlib.suppress(DaemonUnreachable):
            status, body = line.request("POST", f"{path}/wait", timeout=10)
            if status == 200 and isinstance(body, dict) and isinstance(body.get("StatusCode"), int):
                code = body["StatusCode"]
        status, body = line.request("DELETE", path, {"force": "1", "v": "1"})
        if status not in (200, 204, 404, 409):  # 409: its removal is already under way
            raise DaemonUnreachable(f"removing {self.name} answered {status}: {body}")
        return code

    async def _stop(self) -> None:
        # First unblock the daemon's copy of the output (it would hold up the removal), then kill and remove.
        self._draining = True
        if self._gate is not None:
            self._gate.open.set()
        if self._stderr_over:
            self._attached.stderr[1].transport.abort()
        code: int | None = None
        try:
            code = await in_thread(self._kill_and_remove)
        except Exception as exc:
            log.error("seat container %s could not be removed: %s", self.name, short_error(exc))
        finally:
            if self._returncode is None and code is not None:
                self._returncode = docker_exit_status(code)
            self._stopped.set()
        # The container is gone: the last of its output is on its way; then the connections close.
        for pump in (self._pump, self._stderr_pump):
            if pump is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(asyncio.shield(pump), 1.0)
        self._attached.abort()
        for pump in (self._pump, self._stderr_pump):
            if pump is not None and not pump.done():
                pump.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await pump
        with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._watcher), 5.0)
