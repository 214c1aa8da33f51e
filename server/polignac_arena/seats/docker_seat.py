"""A running ``docker`` seat: the container's attach connection, its stderr and its exit status.

:class:`~polignac_arena.seats.docker.DockerLauncher` creates the container and attaches to it
before starting it; :class:`DockerSeat` then demultiplexes the attach stream (stdout to an
asyncio reader, stderr kept up to ``stderr_bytes``), watches the container until it exits,
and kills and removes it on :meth:`DockerSeat.stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final, TypeVar

from polignac_arena.seats.base import SeatLimits, SeatProcess
from polignac_arena.seats.common import exit_status as docker_exit_status

__all__ = ["STDOUT_LIMIT", "DockerSeat", "StdinWriter", "docker_exit_status", "in_thread", "short_error"]

log = logging.getLogger(__name__)

T = TypeVar("T")

STDOUT_LIMIT: Final = 1 << 20
"""The stdout reader's line limit; the pump pauses while twice this waits unread."""


def short_error(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


async def in_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
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


class DockerSeat(SeatProcess):
    """A started container: its attach connection, its captured stderr, its exit status."""

    def __init__(
        self,
        client: Any,
        container_id: str,
        name: str,
        connection: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        stdio: bool,
        limits: SeatLimits,
    ) -> None:
        self.client = client
        self.container_id = container_id
        self.name = name
        self._limits = limits
        self._reader, self._writer = connection
        self._stderr = bytearray()
        self._notes: list[str] = []
        self._returncode: int | None = None
        self._gate: _Gate | None = None
        self._draining = False
        """Being stopped: the pump drops stdout instead of waiting for its reader (a blocked copy would stall the daemon)."""
        if stdio:
            self.stdout = asyncio.StreamReader(limit=STDOUT_LIMIT)
            self._gate = _Gate()
            self.stdout.set_transport(self._gate)
            self.stdin = self._writer
        self._pump = asyncio.ensure_future(self._demultiplex())
        self._watcher = asyncio.ensure_future(self._watch())
        self._stopper: asyncio.Future[None] | None = None
        self._stopped = asyncio.Event()
        """Set once stop() has read the killed container's status (or given up on it)."""

    async def _demultiplex(self) -> None:
        """Split the daemon's frames into stdout (fed to the reader) and stderr (kept up to the cap)."""
        try:
            while True:
                header = await self._reader.readexactly(8)
                size = int.from_bytes(header[4:8], "big")
                payload = await self._reader.readexactly(size) if size else b""
                if header[0] == 1 and self.stdout is not None and self._gate is not None and not self._draining:
                    await self._gate.open.wait()
                    if not self._draining:
                        self.stdout.feed_data(payload)
                elif header[0] == 2:
                    room = self._limits.stderr_bytes - len(self._stderr)
                    if room > 0:
                        self._stderr.extend(payload[:room])
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            if self.stdout is not None:
                self.stdout.feed_eof()

    def _state(self) -> dict[str, Any] | None:
        """The container's State, or None once it is gone."""
        import docker.errors

        try:
            state = self.client.api.inspect_container(self.container_id)["State"]
        except docker.errors.NotFound:
            return None
        return dict(state)

    async def _watch(self) -> int | None:
        """The exit status once the container ends: its output closes first, then its state says so.

        While a stdio bot's stdout is backed up (nobody reads it), its output cannot reach its end:
        then the container's state is asked without waiting for it.
        """
        while not self._pump.done():
            await asyncio.wait({self._pump}, timeout=0.25)
            if self._gate is not None and not self._gate.open.is_set():
                break
        delay = 0.02
        try:
            while True:
                state = await in_thread(self._state)
                if state is None:
                    # Gone: only stop() removes it, and it reads the status first; wait for that reading
                    # rather than report an unknown status while stop()'s thread is still returning.
                    if self._stopper is not None:
                        await self._stopped.wait()
                    return self._returncode
                if not state.get("Running") and not state.get("Restarting"):
                    oom = bool(state.get("OOMKilled"))
                    if oom:
                        self._notes.append(f"[arena] the container went over its memory limit ({self._limits.memory_mb} MB) and was killed")
                    if self._returncode is None:
                        self._returncode = docker_exit_status(int(state.get("ExitCode", 0)), oom)
                    return self._returncode
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
        except Exception as exc:  # the daemon went away: the status is unknown
            log.warning("seat container %s: cannot read its state: %s", self.name, short_error(exc))
            return self._returncode

    async def wait(self) -> int | None:
        return await asyncio.shield(self._watcher)

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def stderr_text(self) -> str:
        text = self._stderr.decode("utf-8", "replace")
        return "\n".join([text, *self._notes]) if self._notes else text

    async def stop(self) -> None:
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopper)

    def _kill_and_remove(self) -> int | None:
        import docker.errors

        api = self.client.api
        with contextlib.suppress(docker.errors.APIError):  # not running any more, or gone
            api.kill(self.container_id)
        code: int | None = None
        with contextlib.suppress(Exception):
            code = int(api.wait(self.container_id, timeout=10)["StatusCode"])
        try:
            api.remove_container(self.container_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if exc.response is None or exc.response.status_code != 409:  # 409: its removal is already under way
                raise
        return code

    async def _stop(self) -> None:
        # First unblock the daemon's copy of the output (it would hold up the removal), then kill and remove.
        self._draining = True
        if self._gate is not None:
            self._gate.open.set()
        code: int | None = None
        try:
            code = await in_thread(self._kill_and_remove)
        except Exception as exc:
            log.error("seat container %s could not be removed: %s", self.name, short_error(exc))
        finally:
            if self._returncode is None and code is not None:
                self._returncode = docker_exit_status(code)
            self._stopped.set()
        # The container is gone: the last of its output is on its way; then the connection closes.
        with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._pump), 1.0)
        self._writer.transport.abort()
        if not self._pump.done():
            self._pump.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._pump
        with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._watcher), 5.0)
