"""Referees on Ray nodes: a slot of the league's referee pool whose process is a Ray task on a node of the cluster.

With ``[referees] on_ray_nodes = true`` (and the Ray executor), :class:`RayLauncher` starts each
slot's referee as a Ray task (one CPU by default, spread over the nodes; never retried by Ray,
since a match cut off cannot be played again).  The task opens a connection back to the league:
to a port the league opens for that one task on its own cluster address, authenticated both ways
with a key made for that task (:mod:`multiprocessing.connection`'s HMAC challenge), then runs
the same worker as a local referee process (:func:`~polignac_arena.league.referee_worker.serve`)
over it: a gRPC server on the node's address, whose ``host:port`` the league sends the match's
remote bots to.  To the pool it is one more slot: a node that dies, or a task that is killed,
closes the connection (or stops answering pings), and its matches are aborted once, as a local
process's are.

On the node, the referee listens on the node's cluster address (``first_port + slot``, or a port
the OS chooses), with the league's ``[tls]`` certificate and key read from the same paths as on
the league's machine (the key never crosses the cluster's network, which Ray leaves unencrypted);
it refuses to serve plaintext off loopback.  It names itself to bots by :data:`REFEREE_HOST_ENV`,
set on the node, else by that address: the certificate must cover that name.

A table with uploaded versions ships them as the Ray executor ships a submission
(:attr:`RayLauncher.shipper`: each packed once, its archive put in Ray's object store), and the
referee prepares them from the node's cache (:mod:`~polignac_arena.league.shipped_seats`).  The
handle that travels in the order is the object reference pickled by Ray: Ray then keeps the
archive while the league runs, as the executor keeps what it shipped for its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import secrets
import socket
import struct
from dataclasses import dataclass, field, replace
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from typing import Any, Final

from polignac_arena.executors.ray_cluster import import_ray, ray_node_name
from polignac_arena.executors.shipping import Shipper
from polignac_arena.league.referee_orders import WorkerSettings
from polignac_arena.league.referee_pool import RefereeStartError
from polignac_arena.league.referee_worker import serve
from polignac_arena.log_format import LogFormat, configure_logging
from polignac_arena.loopback import is_loopback_host

__all__ = ["REFEREE_HOST_ENV", "RayHandle", "RayLauncher", "RefereeRefused"]

log = logging.getLogger(__name__)

REFEREE_HOST_ENV: Final = "POLIGNAC_REFEREE_HOST"
"""Set on a node: the host its referees name to bots (default: the node's address in the cluster)."""
KEEPALIVE_S: Final = (10, 5, 3)
"""The node's end of the link probes a silent league after 10 s, every 5 s, 3 times: a league whose machine vanished
(no FIN) ends its referee within about 25 s, as a closed link would."""
HANDSHAKE_S: Final = 10
"""How long the league waits for a connection's half of the authentication: a stranger's connection is dropped then."""
CONNECT_TIMEOUT_S: Final = 30.0


class RefereeRefused(RuntimeError):
    """A node that will not referee as asked (plaintext off loopback)."""


def serve_on_node(league: tuple[str, int], authkey: bytes, log_format: str) -> None:
    """The Ray task: connect back to the league at ``league``, then referee what it sends until it closes the link."""
    configure_logging(LogFormat(log_format), "polignac referee on a Ray node: ")
    ray = import_ray()
    sock = socket.create_connection(league, timeout=CONNECT_TIMEOUT_S)
    sock.settimeout(None)
    idle, interval, count = KEEPALIVE_S
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, idle)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, interval)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, count)
    conn = Connection(sock.detach())
    try:
        answer_challenge(conn, authkey)
        deliver_challenge(conn, authkey)
        settings: Any = conn.recv()
        if not isinstance(settings, WorkerSettings):
            raise RefereeRefused("the league sent no settings")
        host = ray.util.get_node_ip_address()
        if settings.tls_cert is None and not is_loopback_host(host):
            raise RefereeRefused(f"no [tls] certificate: a referee serves plaintext on loopback only, and this node is {host}")
        settings = replace(settings, host=host, advertise=os.environ.get(REFEREE_HOST_ENV, ""), node=ray_node_name())
    except BaseException:
        conn.close()
        raise
    serve(conn, settings, _fetch)


def _put(data: bytes) -> bytes:
    """The league's side of shipping: the archive in Ray's object store, its reference pickled to travel in an order."""
    ray = import_ray()
    handle: bytes = ray.cloudpickle.dumps(ray.put(data))
    return handle


def _fetch(handle: object) -> bytes:
    """The node's side: the archive's bytes back from Ray's object store."""
    if not isinstance(handle, bytes):
        raise TypeError(f"a shipped archive's handle is pickled bytes, not {type(handle).__name__}")
    ray = import_ray()
    data: bytes = ray.get(ray.cloudpickle.loads(handle))
    return data


class RayHandle:
    """A referee task on a Ray node, as the pool holds it."""

    def __init__(self, ray: Any, ref: Any, ended: asyncio.Future[None], sock: socket.socket, conn: Connection) -> None:
        self._ray = ray
        self._ref = ref
        self._ended = ended
        self.sock = sock
        self.conn = conn
        self.where = f"Ray task {ref.task_id().hex()[:12]}"

    def kill(self) -> None:
        with contextlib.suppress(Exception):  # already over, or its node gone: nothing left to kill
            self._ray.cancel(self._ref, force=True)

    async def end(self, grace_s: float) -> None:
        """As a process's, but bounded: a task on a node that is gone ends when Ray notices, which the league does not wait for."""
        for _ in range(2):
            await asyncio.wait([self._ended], timeout=grace_s)  # however it ended (killed: TaskCancelledError)
            if self._ended.done():
                return
            self.kill()
        log.warning("%s did not end in %g s; Ray ends it when it notices its node gone", self.where, 2 * grace_s)

    def exit_note(self) -> str:
        return _note(self._ended)


def _note(ended: asyncio.Future[None]) -> str:
    if not ended.done():
        return "its connection closed"
    if ended.cancelled() or (error := ended.exception()) is None:
        return "exited"
    first = (str(getattr(error, "cause", None) or error).strip().splitlines() or [type(error).__name__])[-1]
    return f"failed: {first}"


async def _outcome(ref: Any) -> None:
    await ref


@dataclass
class RayLauncher:
    """Starts referee slots as Ray tasks (see the module notes); the league must have joined the cluster (the Ray executor)."""

    cpus: float = 1.0
    """Ray CPUs each referee reserves on its node."""
    log_format: LogFormat = LogFormat.TEXT
    _task: Any = field(default=None, init=False, repr=False)
    _shipper: Shipper = field(default_factory=lambda: Shipper(_put), init=False, repr=False)

    @property
    def on_nodes(self) -> bool:
        return True

    @property
    def shipper(self) -> Shipper:
        return self._shipper

    async def launch(self, slot: int) -> RayHandle:
        ray = import_ray()
        if self._task is None:
            self._task = ray.remote(num_cpus=self.cpus, max_retries=0, scheduling_strategy="SPREAD")(serve_on_node)
        host = ray.util.get_node_ip_address()
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
        authkey = secrets.token_bytes(32)
        with socket.create_server((host, 0), family=family) as listener:
            listener.setblocking(False)
            league = listener.getsockname()[:2]
            try:
                ref = self._task.options(name=f"polignac referee {slot}").remote(league, authkey, self.log_format.value)
            except Exception as exc:  # Ray's own failure (the cluster unreachable): the pool tries again later
                raise RefereeStartError(f"referee {slot} could not be handed to the Ray cluster: {exc}") from None
            ended = asyncio.ensure_future(_outcome(ref))
            ended.add_done_callback(lambda done: done.cancelled() or done.exception())  # read: its note says how it ended
            try:
                sock, conn = await self._accept(listener, authkey, ended, slot)
            except BaseException:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
                ended.cancel()
                raise
        return RayHandle(ray, ref, ended, sock, conn)

    async def _accept(
        self, listener: socket.socket, authkey: bytes, ended: asyncio.Future[None], slot: int
    ) -> tuple[socket.socket, Connection]:
        """The task's connection, once authenticated; waits (as long as it takes) for a node to start the task."""
        loop = asyncio.get_running_loop()
        log.info("referee %d waits for a Ray node to take it", slot)
        while True:
            accepting = asyncio.ensure_future(loop.sock_accept(listener))
            either: list[asyncio.Future[Any]] = [accepting, ended]  # one type with the accept for asyncio.wait
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not accepting.done():
                    accepting.cancel()
            if not accepting.done() or accepting.cancelled():
                raise RefereeStartError(f"referee {slot} on a Ray node did not start: it {_note(ended)}")
            sock, _ = accepting.result()
            conn = await asyncio.to_thread(_handshake, sock, authkey)
            if conn is not None:
                return sock, conn


def _handshake(sock: socket.socket, authkey: bytes) -> Connection | None:
    """The league's half of the authentication (as :class:`multiprocessing.connection.Listener` does it), bounded in time;
    None (the connection closed) for one that fails it."""
    sock.setblocking(True)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", HANDSHAKE_S, 0))
    conn = Connection(os.dup(sock.fileno()))
    try:
        deliver_challenge(conn, authkey)
        answer_challenge(conn, authkey)
    except (AuthenticationError, EOFError, OSError) as exc:
        log.warning("a connection to a referee's port failed its authentication: %s", exc or type(exc).__name__)
        conn.close()
        sock.close()
        return None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 0))
    return conn
