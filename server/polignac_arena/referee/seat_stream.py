"""The referee's end of one seat's stream: writes with a deadline, a bounded read-ahead, how it ends."""

from __future__ import annotations

import asyncio
import logging

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.referee import texts

__all__ = ["MAX_BACKLOG", "Refusal", "SeatConnection"]

log = logging.getLogger(__name__)

MAX_BACKLOG = 8
"""Messages of one seat read ahead of the host: beyond, the stream is not read until the host catches up."""
Refusal = tuple[grpc.StatusCode, str]
"""Why a stream cannot take its seat: the status it ends with, and its detail text."""


class SeatConnection:
    """The referee's end of one seat's stream."""

    def __init__(self, context: grpc.aio.ServicerContext[object, object], name: str, version: str, write_timeout_s: float) -> None:
        self.context = context
        self.name = name
        self.version = version
        self.done = asyncio.Event()  # set when the referee is finished with this stream
        self.broken = False
        self.broken_why: str | None = None
        """Why the referee could not write to the stream, when that is what broke it."""
        self.welcomed = asyncio.Event()  # the Welcome is sent: the stream is read from then on
        self.read_stopped = False
        """The referee reads nothing more from this stream (its seat forfeited): gRPC flow control
        then holds back whatever the bot still writes, at no cost to the referee."""
        self.backlog = 0  # messages read and not yet taken by the host
        self.room = asyncio.Event()  # set while the backlog is below MAX_BACKLOG
        self.room.set()
        self.end_status: tuple[grpc.StatusCode, str] | None = None
        """The status the stream ends with when the referee ends it early (None: OK, or as it broke)."""
        self._write_timeout_s = write_timeout_s

    async def send(self, message: pb.PlayResponse) -> bool:
        """Write one message; False (and the stream marked broken) if it cannot be written in time."""
        if self.broken or self.done.is_set():
            return False
        # A bare timer, not asyncio.timeout(): this runs inside every decision's clock, where
        # asyncio.timeout() costs about 12 us (Python 3.11) and this a few.
        task = asyncio.current_task()
        assert task is not None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            task.cancel()

        timer = task.get_loop().call_later(self._write_timeout_s, expire)
        try:
            await self.context.write(message)
            return True
        except asyncio.CancelledError:
            if not expired or task.uncancel() > 0:
                raise  # cancelled from outside, not (only) by our timer
            log.info("write to %s timed out after %g s", self.name, self._write_timeout_s)
            self.broken_why = texts.NOT_READ.format(seconds=f"{self._write_timeout_s:g}")
        except Exception as exc:  # any failure to write (grpc raises several kinds, some internal) breaks the stream
            log.info("write to %s failed: %r", self.name, exc)
        finally:
            timer.cancel()
        self.broken = True
        return False

    def close(self) -> None:
        """Let the stream's handler return, which ends the RPC."""
        self.done.set()

    def end(self, code: grpc.StatusCode, detail: str) -> None:
        """End the stream now with ``code`` and ``detail``; nothing more is written to it."""
        if self.end_status is None and not self.done.is_set():
            self.end_status = (code, detail)
        self.broken = True
        self.read_stopped = True
        self.done.set()

    def read_one(self) -> None:
        """The reader has posted one more message to the host."""
        self.backlog += 1
        if self.backlog >= MAX_BACKLOG:
            self.room.clear()

    def took_one(self) -> None:
        """The host has taken one of this stream's messages."""
        self.backlog -= 1
        if self.backlog < MAX_BACKLOG and not self.room.is_set():
            self.room.set()
