"""The league's referee processes: matches with remote seats are refereed outside the league process.

:class:`RefereePool` starts ``processes`` referee processes
(:mod:`polignac_arena.league.referee_worker`), each a gRPC server of its own on the league's gRPC
host (with its TLS certificate; port ``first_port + slot``, or one the OS chooses), and plays a
match on the least busy one that has room (``matches_per_process``; the match waits for room
when none has).  Its launcher (:mod:`~polignac_arena.league.referee_launch`) says where they
run: processes of the league's machine, or tasks on Ray nodes
(:mod:`~polignac_arena.league.ray_referees`), which start as nodes take them; a match waits
for one while none has.  Its :meth:`RefereePool.play` takes what
:func:`~polignac_arena.league.play.play_league_match` takes but a journal and a start signal (a
match played here is neither resumed nor seated ahead), so the ladder calls either: the
process hosts the match, the pool hands each remote seat out through the lobby (the Assignment's
``address`` names the process: :meth:`RefereePool.address_of`), and the result comes back once,
to the ladder, which stores it.

A process that dies (killed, crashed) or stops answering the pool's pings for ``hang_s`` (it is
killed then) loses its matches: each raises :class:`RefereeLost` (the ladder records it aborted,
once), its remote bots' Play streams break (``UNAVAILABLE``) and the lobby tells each bot
``Withdrawn`` with the reason, so that none waits for the match to come back; the pool starts a
new process in its slot.  A match refereed by a process keeps no journal: a league that drains
past its deadline aborts it (recorded aborted) rather than suspending it, since its remote bots
could not find the process again after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Final

from polignac_arena.executors.base import ExecutorError
from polignac_arena.league.config import LeagueConfig, ListenAddress
from polignac_arena.league.entrants import LeagueFixture
from polignac_arena.league.play import ABORT_WAIT_S, LeagueMatchError, MatchStopped, RemoteDeclined, RemoteHandOut, RemoteWithdraw
from polignac_arena.league.referee_launch import ProcessLauncher, RefereeHandle, RefereeLauncher
from polignac_arena.league.referee_orders import (
    Cancel,
    Hosted,
    NotPlayed,
    NotPlayedKind,
    Offer,
    Ping,
    Played,
    PlayOrder,
    Pong,
    Ready,
    SeatAnswer,
    Seated,
    Withdraw,
    WorkerSettings,
)
from polignac_arena.log_format import LogFormat
from polignac_arena.referee import MatchResult, RefereeServer
from polignac_arena.referee.record import write_record
from polignac_arena.seats import SeatLauncher
from polignac_arena.statuses import MatchStatus

__all__ = ["RefereeLost", "RefereePool", "RefereeStartError", "referee_pool"]

log = logging.getLogger(__name__)

START_TIMEOUT_S: Final = 60.0
"""How long a referee process may take to listen (once started: a Ray node may take longer to take it)."""
STOP_WAIT_S: Final = 5.0
"""How long a stopping process may take to end its matches before it is killed."""


class RefereeLost(MatchStopped):
    """The referee process of a match died or hung: the match is aborted."""

    outcome = "aborted"


class RefereeStartError(RuntimeError):
    """A referee process that cannot start (its port taken, its certificate unreadable)."""


@dataclass(eq=False)
class _Match:
    """A match on a process, as the pool follows it."""

    order: PlayOrder
    remote: RemoteHandOut
    withdraw: RemoteWithdraw
    on_seated: Callable[[], object] | None
    on_hosted: Callable[[], object] | None
    done: asyncio.Future[MatchResult]
    record_path: Path | None
    """Where the league keeps the match's record (a referee on a Ray node sends it back in the result)."""
    offered: set[int] = field(default_factory=set)
    asking: set[asyncio.Future[None]] = field(default_factory=set)


class _Process:
    """One referee process (here or on a Ray node): its pipe, its address, its matches."""

    def __init__(self, slot: int, handle: RefereeHandle) -> None:
        self.slot = slot
        self.handle = handle
        self.sock = handle.sock
        self.conn = handle.conn
        self.reader: threading.Thread | None = None
        self.address = ""
        self.node = ""
        """The Ray node it runs on ("": the league's machine)."""
        self.ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.matches: dict[str, _Match] = {}
        self.pinged = 0
        self.answered_at = time.monotonic()
        self.dead = False

    @property
    def what(self) -> str:
        """What it is called in the log and in the record of a match it lost."""
        return f"referee on Ray node {self.node}" if self.node else "referee process"

    def send(self, message: object) -> bool:
        if self.dead:
            return False
        try:
            self.conn.send(message)
            return True
        except (OSError, ValueError):
            return False


@dataclass(eq=False)
class RefereePool:
    """Referee processes for the league's matches with remote seats (see the module notes)."""

    settings: WorkerSettings
    processes: int
    _: KW_ONLY
    first_port: int = 0
    public_host: str = ""
    """The host named in the addresses handed to bots ("": the one each process listens on)."""
    ping_s: float = 1.0
    hang_s: float = 30.0
    log_format: LogFormat = LogFormat.TEXT
    launcher: RefereeLauncher | None = None
    """Where the processes run (None: on this machine, logging in ``log_format``)."""
    started: int = field(default=0, init=False)
    """Processes started in all (replacements included)."""
    lost: int = field(default=0, init=False)
    """Processes that died or hung while the pool ran."""
    _slots: list[_Process | None] = field(init=False, repr=False)
    _where: dict[str, _Process] = field(default_factory=dict, init=False, repr=False)
    _room: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)
    _closing: bool = field(default=False, init=False, repr=False)
    _pinger: asyncio.Task[None] | None = field(default=None, init=False, repr=False)
    _replacing: set[asyncio.Task[None]] = field(default_factory=set, init=False, repr=False)
    _launcher: RefereeLauncher = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise ValueError(f"a referee pool needs at least one process, got {self.processes!r}")
        self._slots = [None] * self.processes
        self._launcher = self.launcher or ProcessLauncher(self.log_format)

    # -- what the league reads ------------------------------------------------------------------

    def address_of(self, match_id: str) -> str:
        """Where the remote bots of ``match_id`` open their Play streams ("" when no process referees it)."""
        process = self._where.get(match_id)
        return process.address if process is not None else ""

    def takes(self, fixture: LeagueFixture) -> bool:
        """Whether the pool referees ``fixture``: it has a remote seat (on Ray nodes too: its uploaded versions are
        shipped there, see :meth:`play`)."""
        return any(entrant.remote for entrant in fixture.seats)

    def load(self) -> list[int]:
        """Matches on each live process, by slot."""
        return [len(process.matches) for process in self._slots if process is not None and not process.dead]

    # -- starting and stopping ------------------------------------------------------------------

    async def start(self) -> list[str]:
        """Start every process; their addresses.  Raises :class:`RefereeStartError` when one cannot listen.

        Processes on Ray nodes are started in the background instead, as nodes take them (no address yet):
        the league serves meanwhile, and its matches with remote seats wait for one.
        """
        if self._launcher.on_nodes:
            for slot in range(self.processes):
                self._background(self._keep(slot))
            self._pinger = asyncio.ensure_future(self._ping())
            return []
        try:
            await asyncio.gather(*(self._spawn(slot) for slot in range(self.processes)))
        except BaseException:
            await self.close()
            raise
        self._pinger = asyncio.ensure_future(self._ping())
        return [process.address for process in self._slots if process is not None]

    async def _spawn(self, slot: int) -> None:
        settings = self.settings
        if self.first_port:
            settings = WorkerSettings(**{**vars(settings), "port": self.first_port + slot})
        process = _Process(slot, await self._launcher.launch(slot))
        self._slots[slot] = process
        self.started += 1
        process.reader = threading.Thread(target=self._read, args=(process, asyncio.get_running_loop()), daemon=True)
        process.reader.start()
        process.send(settings)
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                address = await asyncio.shield(process.ready)
        except (TimeoutError, RefereeLost) as exc:
            await self._bury(process, "it did not start")
            note = process.handle.exit_note()
            raise RefereeStartError(f"referee process {slot} did not start listening: {exc or 'timed out'} ({note})") from None
        port = int(address.rpartition(":")[2])
        on_node = self._launcher.on_nodes  # a node names itself: the league's public host is not its
        process.address = str(ListenAddress(self.public_host, port)) if self.public_host and not on_node else address
        log.info("%s %d (%s) listens on %s", process.what, slot, process.handle.where, process.address)
        self._room.set()

    async def close(self) -> None:
        """Stop every process (their matches end aborted) and wait for them."""
        self._closing = True
        if self._pinger is not None:
            self._pinger.cancel()
            await asyncio.gather(self._pinger, return_exceptions=True)
        for task in list(self._replacing):
            task.cancel()
        await asyncio.gather(*self._replacing, return_exceptions=True)
        if self._launcher.shipper is not None:
            self._launcher.shipper.close()
        await asyncio.gather(*(self._bury(p, "the league is stopping") for p in self._slots if p is not None))

    async def _bury(self, process: _Process, reason: str, *, kill: bool = False) -> None:
        """Close the pipe (the process ends its matches and exits), kill it if it does not in time; fail its matches."""
        self._forget(process, reason)
        if kill:
            process.handle.kill()
        await process.handle.end(STOP_WAIT_S)
        if process.reader is not None:
            await asyncio.to_thread(process.reader.join)
        process.conn.close()  # only now: the reader no longer uses its descriptor
        process.sock.close()

    def _forget(self, process: _Process, reason: str) -> None:
        if process.dead:
            return
        process.dead = True
        with contextlib.suppress(OSError):
            process.sock.shutdown(socket.SHUT_RDWR)  # the process sees its pipe end; the reader thread wakes
        if not process.ready.done():
            process.ready.set_exception(RefereeLost("", reason))
            process.ready.exception()  # read: nobody may wait for it any more
        for match_id, match in list(process.matches.items()):
            self._lose(process, match_id, match, reason)
        process.matches.clear()
        if self._slots[process.slot] is process:
            self._slots[process.slot] = None

    def _lose(self, process: _Process, match_id: str, match: _Match, reason: str) -> None:
        """A match whose process is gone: its remote bots are told, and it fails with :class:`RefereeLost`."""
        for task in match.asking:
            task.cancel()
        for seat, entrant in enumerate(match.order.fixture.seats):
            if entrant.remote:
                match.withdraw(seat, match_id, f"the referee of this match stopped ({reason}): the match is aborted")
        if not match.done.done():
            match.done.set_exception(RefereeLost(match_id, f"its {process.what} stopped ({reason})"))

    def _died(self, process: _Process, reason: str) -> None:
        """A process found dead or hung: its matches are lost, and a new one takes its slot."""
        if process.dead or self._closing:
            return
        self.lost += 1
        where = f"{process.what} {process.slot} ({process.handle.where})"
        log.warning("%s %s: its %d matches are aborted", where, reason, len(process.matches))
        self._background(self._replace(process, reason))

    def _background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(work)
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

    async def _replace(self, process: _Process, reason: str) -> None:
        await self._bury(process, reason, kill=True)
        await self._keep(process.slot)

    async def _keep(self, slot: int) -> None:
        """Start the process of ``slot``, trying again (up to every 30 s) while it cannot start."""
        delay = 0.5
        while not self._closing:
            try:
                await self._spawn(slot)
                return
            except RefereeStartError as exc:
                log.error("%s; trying again in %g s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _ping(self) -> None:
        """Ping every process; one that has not answered for ``hang_s`` is killed (its matches lost) and replaced."""
        while True:
            await asyncio.sleep(self.ping_s)
            now = time.monotonic()
            for process in list(self._slots):
                if process is None or process.dead or not process.address:
                    continue
                if now - process.answered_at > self.hang_s:
                    self._died(process, f"answered nothing for {self.hang_s:g} s")
                    continue
                process.pinged += 1
                if not process.send(Ping(process.pinged)):
                    self._died(process, "its pipe is closed")

    # -- messages from the processes ------------------------------------------------------------

    def _read(self, process: _Process, loop: asyncio.AbstractEventLoop) -> None:
        """The process's reader thread: each message to the loop.  A thread, so that a message cut off by a process
        that stopped in its middle holds this thread (until the pings find it hung), never the league's loop."""
        try:
            while True:
                loop.call_soon_threadsafe(self._handle, process, process.conn.recv())
        except (EOFError, OSError, RuntimeError):  # RuntimeError: the loop is closed (the league is gone)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._gone, process)

    def _gone(self, process: _Process) -> None:
        self._died(process, process.handle.exit_note())

    def _handle(self, process: _Process, message: object) -> None:
        if process.dead:
            return
        process.answered_at = time.monotonic()
        if isinstance(message, Pong):
            return
        if isinstance(message, Ready):
            if not process.ready.done():
                process.node = message.node
                process.ready.set_result(message.address)
            return
        match_id = getattr(message, "match_id", None)
        if isinstance(message, Played):
            match_id = message.result.match_id
        match = process.matches.get(match_id) if isinstance(match_id, str) else None
        if match is None:
            return  # a match already given up (its process is being replaced, or the league cancelled it)
        if isinstance(message, Offer):
            match.offered.add(message.seat)
            asking = asyncio.ensure_future(self._offer(process, match, message))
            match.asking.add(asking)
            asking.add_done_callback(match.asking.discard)
        elif isinstance(message, Withdraw):
            match.withdraw(message.seat, message.match_id, message.reason)
        elif isinstance(message, Seated):
            if match.on_seated is not None:
                match.on_seated()
        elif isinstance(message, Hosted):
            if match.on_hosted is not None:
                match.on_hosted()
        elif isinstance(message, Played | NotPlayed):
            self._end(process, match, message)

    async def _offer(self, process: _Process, match: _Match, offer: Offer) -> None:
        try:
            taken = await match.remote(offer.seat, offer.match_id, offer.seat_token)
        except Exception:  # the lobby's failure: the bot did not take its seat
            log.exception("referee pool: handing out seat %d of %s failed", offer.seat, offer.match_id)
            taken = False
        process.send(SeatAnswer(offer.match_id, offer.seat, taken is True))

    def _end(self, process: _Process, match: _Match, message: Played | NotPlayed) -> None:
        match_id = match.order.match_id
        process.matches.pop(match_id, None)
        self._room.set()
        if match.done.done():
            return
        if isinstance(message, Played):
            match.done.set_result(_recorded(message.result, match.record_path))
        elif message.kind is NotPlayedKind.DECLINED:
            match.done.set_exception(RemoteDeclined(match_id, dict(message.labels)))
        elif message.kind is NotPlayedKind.CANCELLED:
            match.done.cancel()
        else:
            match.done.set_exception(LeagueMatchError(f"match {match_id!r} not played: {message.detail}"))

    # -- playing --------------------------------------------------------------------------------

    async def _place(self) -> _Process:
        """The live process with the fewest matches that has room; waits for one."""
        while True:
            live = [p for p in self._slots if p is not None and not p.dead and p.address]
            roomy = [p for p in live if len(p.matches) < self.settings.max_matches]
            if roomy:
                return min(roomy, key=lambda p: (len(p.matches), p.slot))
            self._room.clear()
            await self._room.wait()

    async def play(
        self,
        server: RefereeServer,
        order: PlayOrder,
        *,
        launcher: SeatLauncher,
        remote: RemoteHandOut,
        withdraw: RemoteWithdraw,
        on_seated: Callable[[], object] | None = None,
        on_hosted: Callable[[], object] | None = None,
        on_node: Callable[[str], object] | None = None,
    ) -> MatchResult:
        """Play ``order`` on a referee process, as :func:`~polignac_arena.league.play.play_league_match` plays it on
        ``server`` (unused here, as ``launcher`` is: the process starts seats of the same kind).  A match played here
        keeps no journal, so is never resumed, and is never seated ahead (see the module notes).  ``on_node`` hears the
        Ray node of the process that takes the match ("" for one of the league's machine).  Raises :class:`RefereeLost`
        when the process dies or hangs.  On Ray nodes, the order carries its uploaded versions as the node receives them
        (:attr:`PlayOrder.shipped`), each packed once while the league runs; :class:`LeagueMatchError` when one cannot be."""
        match_id = order.match_id
        shipper = self._launcher.shipper
        if shipper is not None and not all(entrant.remote for entrant in order.fixture.seats):
            try:
                shipped = [None if e.submission is None else await shipper.ship(e.submission) for e in order.fixture.seats]
            except ExecutorError as exc:
                raise LeagueMatchError(f"match {match_id!r} not played: {exc}") from None
            order = dataclasses.replace(order, shipped=tuple(shipped))
        process = await self._place()
        if on_node is not None:
            on_node(process.node)
        done: asyncio.Future[MatchResult] = asyncio.get_running_loop().create_future()
        match = _Match(order, remote, withdraw, on_seated, on_hosted, done, order.record_path)
        process.matches[match_id] = match
        self._where[match_id] = process
        if self._launcher.on_nodes:  # a node has none of the league's folders: the record comes back in the result
            order = dataclasses.replace(order, record_path=None)
        try:
            if not process.send(order):
                self._died(process, "its pipe is closed")
            return await asyncio.shield(match.done)
        except asyncio.CancelledError:
            if match.done.done() and not match.done.cancelled() and match.done.exception() is None:
                return match.done.result()  # it ended before the stop reached it: its result stands
            process.send(Cancel(match_id))
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(match.done), ABORT_WAIT_S + STOP_WAIT_S)
            ended = match.done.done() and not match.done.cancelled() and match.done.exception() is None
            if ended and match.done.result().status is MatchStatus.FINISHED:
                return match.done.result()  # it had ended (its seats were closing): its result stands
            raise
        finally:
            self._where.pop(match_id, None)
            process.matches.pop(match_id, None)
            if not match.done.done():
                match.done.cancel()
            elif not match.done.cancelled():
                match.done.exception()  # read, so that a failure nobody awaits is not logged as lost
            self._room.set()


def _recorded(result: MatchResult, record_path: Path | None) -> MatchResult:
    """``result`` with its record written to ``record_path``, where the league keeps records (a node could not)."""
    if record_path is None or result.record_path is not None:
        return result
    write_record(record_path, result.lines)
    return dataclasses.replace(result, record_path=record_path)


def referee_pool(config: LeagueConfig, log_format: LogFormat = LogFormat.TEXT, launcher: RefereeLauncher | None = None) -> RefereePool:
    """The league's pool as its file sets it: on the ``[grpc]`` host (or on Ray nodes, by ``launcher``), with its
    certificate and limits."""
    referees = config.referees
    settings = WorkerSettings(
        host=config.grpc.host,
        port=0,
        tls_cert=config.tls_cert,
        tls_key=config.tls_key,
        limits=config.grpc_limits,
        ipv6_prefix=config.author_limits.ipv6_prefix,
        trusted_proxies=config.http_limits.trusted_proxies,
        max_matches=referees.matches_per_process,
        seat_kind=config.seat_kind,
    )
    return RefereePool(
        settings,
        referees.processes,
        first_port=referees.first_port,
        public_host=referees.public_host,
        hang_s=referees.hang_s,
        log_format=log_format,
        launcher=launcher,
    )
