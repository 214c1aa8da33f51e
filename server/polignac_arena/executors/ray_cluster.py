"""The Ray executor: each match is a Ray task, played on whichever node of the cluster has a free slot.

The runner stays where the store is; a task carries the match as values (:class:`MatchJob`)
and each bot as a built-in name or the SHA-256 of its archive, whose bytes are put once in
Ray's object store (:class:`~polignac_arena.executors.node.ShippedBot`): a node never reads the
organiser's folders, and fetches an archive only the first time it needs it.  The task returns
the match's result and the node's name; the runner writes the record and the store.

Faults: a node that dies mid-match (or its worker process) is Ray's to handle: the task is
retried on another node, up to ``max_retries`` times, and only the attempt that returns counts,
so a fixture still gets exactly one result.  An error raised by the match itself (a node that
cannot run the seat kind, a bot that does not build) is not retried: the match fails with the
node's message and ``--resume`` plays it again.  Cancelled (SIGTERM, a league drain), the task
is cancelled on its node, which stops the match and its seats.

The executor watches the cluster while it plays (:class:`~polignac_arena.executors.cluster_watch.ClusterWatch`):
a head that stops answering on its port for a few seconds fails every match in hand with
:class:`ClusterLost` at once (Ray's driver would block for a minute, then end the process), and
the run ends there, resumable; while no alive node can hold a match, the ``on_wait`` hook (by
default the log) hears how many matches wait and for how long, and when a node is back.

Ray rewrites a loopback address to this machine's outward address before connecting; for a
cluster on loopback (a cluster on one machine, as in the tests) that would send traffic off
loopback, so a loopback address is connected to as given (:func:`_keep_loopback`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import logging
import os
import socket
import threading
import time
from collections.abc import Awaitable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TypedDict

from polignac_arena.executors.base import ClusterLost, ExecutorError, MatchJob, NodeWait, PlayedMatch, WaitHook
from polignac_arena.executors.cluster_watch import HEAD_LOST_AFTER_S, ClusterWatch
from polignac_arena.executors.node import NODE_NAME_ENV, ShippedBot, play_on_node
from polignac_arena.executors.shipping import Shipper
from polignac_arena.loopback import is_loopback_host
from polignac_arena.referee.record import write_record
from polignac_arena.settings import ExecutorKind

__all__ = ["INSTALL_HINT", "RayExecutor", "import_ray", "ray_node_name"]

INSTALL_HINT: Final = "the ray executor needs Ray: pip install 'polignac-arena[ray]' (in a checkout: pip install -e '.[ray]')"
CONNECT_TIMEOUT_S: Final = 10.0
DEFAULT_MAX_RETRIES: Final = 3
WATCH_PERIOD_S: Final = 1.0
"""How often the head is probed and the nodes looked at."""
PROBE_TIMEOUT_S: Final = 1.0

log = logging.getLogger(__name__)


def import_ray() -> ModuleType:
    """The ``ray`` module; :class:`ExecutorError` saying how to install it when it is missing."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report sent anywhere
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ExecutorError(INSTALL_HINT) from None


def ray_node_name() -> str:
    """The name of the node this code runs on: :data:`NODE_NAME_ENV`, else its host name and Ray node id."""
    if configured := os.environ.get(NODE_NAME_ENV):
        return configured
    ray = import_ray()
    return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"


def _task(job: MatchJob, shipped: list[ShippedBot]) -> PlayedMatch:
    """The Ray task: play ``job`` on this node (fetching archives from the object store)."""
    ray = import_ray()
    return play_on_node(job, shipped, ray.get, ray_node_name())


def _split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ExecutorError(f"a Ray address is HOST:PORT (the head's GCS port, 6379 by default), got {address!r}")
    return host, int(port)


def _keep_loopback(ray: ModuleType) -> None:
    """Make Ray connect to a loopback address as given instead of this machine's outward address (see the module docstring)."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # read when Ray is first imported
    with contextlib.suppress(ImportError):  # and, once imported, this constant: read when Ray resolves an address
        constants: Any = importlib.import_module("ray._private.ray_constants")
        constants.ENABLE_RAY_CLUSTER = False


def _cluster_notes_to_native_stderr() -> None:
    """Send the notes Ray's driver prints about the cluster (a node died, a task is retried) where Ray's own output goes.

    Ray prints them on ``sys.stdout``, into the runner's progress display and output; its C++
    core writes the rest of its output to file descriptor 2, which the runner sends to a log
    file (:mod:`polignac_arena.executors.native_stderr`).  With ``log_to_driver=False`` this
    printer serves only those notes.
    """
    with contextlib.suppress(ImportError, AttributeError):
        worker: Any = importlib.import_module("ray._private.worker")
        if hasattr(worker, "print_to_stdstream"):
            worker.print_to_stdstream = _note_to_native_stderr


class _RayLogBatch(TypedDict, total=False):
    """What Ray's log monitor hands ``print_to_stdstream``: the keys read here (it holds more)."""

    pid: int | str
    lines: list[str]


def _note_to_native_stderr(data: _RayLogBatch, ignore_prefix: bool = False) -> None:
    source = data.get("pid", "ray")
    text = "".join(f"({source}) {line}\n" for line in data.get("lines", ()))
    with contextlib.suppress(OSError):
        os.write(2, text.encode("utf-8", "backslashreplace"))


class RayExecutor:
    """Plays matches as Ray tasks on the cluster at ``address`` (``HOST:PORT`` of its head; default ``RAY_ADDRESS``)."""

    kind = ExecutorKind.RAY

    def __init__(
        self,
        address: str | None = None,
        *,
        cpus_per_match: float = 1.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        on_wait: WaitHook | None = None,
        head_lost_after_s: float = HEAD_LOST_AFTER_S,
    ) -> None:
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.cpus_per_match = cpus_per_match
        self.max_retries = max_retries
        self.on_wait: WaitHook = on_wait or _log_wait
        self._watch = ClusterWatch(head_lost_after_s)
        self._ray: Any = None
        self._remote: Any = None
        self._shipper: Shipper | None = None
        self._connected_here = False
        self._head: tuple[str, int] | None = None
        self._in_hand = 0
        self._lost: ClusterLost | None = None
        self._lost_signal: asyncio.Future[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self._nodes = _NodePoll(self)

    async def start(self) -> None:
        # In a thread: the event loop stays free, and Ray, off the main thread, leaves SIGTERM to the arena.
        await asyncio.to_thread(self._connect)
        self._lost_signal = asyncio.get_running_loop().create_future()
        self._nodes.start()
        self._watching = asyncio.ensure_future(self._watch_cluster())

    def _connect(self) -> None:
        ray = import_ray()
        if self.address is None:
            raise ExecutorError(
                "no Ray cluster address: give --ray-address HOST:PORT ([executor] address in the file) or set RAY_ADDRESS;"
                " start a cluster with `ray start --head` (docs/cluster.md)"
            )
        host, port = self._head = _split_address(self.address)
        try:  # Ray itself would retry for a minute before saying anything
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise ExecutorError(
                f"no Ray cluster answers at {self.address}: {exc.strerror or exc} (start its head with `ray start --head`)"
            ) from None
        loopback = is_loopback_host(host)
        if loopback:
            _keep_loopback(ray)
        _cluster_notes_to_native_stderr()
        if not ray.is_initialized():
            try:
                ray.init(
                    address=f"{'127.0.0.1' if host == 'localhost' else host}:{port}",
                    namespace="polignac",
                    logging_level=logging.ERROR,  # Ray's notes would break into the progress display
                    log_to_driver=False,
                    _node_ip_address="127.0.0.1" if loopback else None,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(
                    f"cannot join the Ray cluster at {self.address}: {exc} (the runner must run on a machine of the cluster,"
                    " such as its head: docs/cluster.md)"
                ) from None
            self._connected_here = True
        self._ray = ray
        self._shipper = Shipper(ray.put)
        self._remote = ray.remote(num_cpus=self.cpus_per_match, max_retries=self.max_retries, retry_exceptions=False)(_task)

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        if self._remote is None:
            raise ExecutorError("the ray executor was not started")
        ray = self._ray
        assert self._shipper is not None
        self._in_hand += 1
        try:
            shipped = [await self._shipper.ship(bot) for bot in job.bots]
            if self._lost is not None:
                raise self._lost
            ref = self._remote.options(name=f"match {job.match_id}").remote(replace(job, bots=()), shipped)
            try:
                played = await self._outcome(ref)
            except asyncio.CancelledError:
                if self._lost is None:  # with the head gone, Ray's cancel would block
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                raise
            except ray.exceptions.RayTaskError as exc:  # raised by the match on its node: its own message
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                raise ExecutorError(str(cause).strip() or repr(cause)) from None
            except ray.exceptions.RayError as exc:  # the cluster lost the task past its retries
                if self._lost is not None:
                    raise self._lost from None
                raise ExecutorError(f"the Ray cluster could not play match {job.match_id}: {type(exc).__name__}: {exc}") from None
        finally:
            self._in_hand -= 1
        if record_path is not None:
            write_record(record_path, played.result.lines)
            played = replace(played, result=replace(played.result, record_path=record_path))
        return played

    async def _outcome(self, ref: Awaitable[PlayedMatch]) -> PlayedMatch:
        """The task's result; :class:`ClusterLost` as soon as the head is found gone, rather than Ray's wait of a minute."""
        assert self._lost_signal is not None
        result: asyncio.Future[PlayedMatch] = asyncio.ensure_future(_result_of(ref))
        try:
            lost: asyncio.Future[Any] = self._lost_signal  # one type with result for asyncio.wait
            await asyncio.wait([result, lost], return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not result.done():
                result.cancel()
        if not result.done() or result.cancelled():
            assert self._lost is not None
            raise self._lost
        return result.result()

    async def _watch_cluster(self) -> None:
        """Probe the head and look at the nodes every :data:`WATCH_PERIOD_S` until the head is lost (or the executor closes)."""
        assert self._head is not None
        while True:
            answers = await _answers(*self._head)
            now = time.monotonic()
            silent = self._watch.head(answers, now)
            if silent is not None:
                self._lose(f"its port has not answered for {silent:.0f} s")
                return
            if answers and (wait := self._watch.nodes(self._nodes.can_play(), self._in_hand, now)) is not None:
                with contextlib.suppress(Exception):  # a display's fault must not stop the watch
                    self.on_wait(wait)
            await asyncio.sleep(WATCH_PERIOD_S)

    def _lose(self, reason: str) -> None:
        assert self.address is not None and self._lost_signal is not None
        self._lost = ClusterLost(self.address, reason)
        self._lost_signal.set_result(None)
        # Ray's exit handler would wait on the lost head (and print) for a minute.
        atexit.unregister(importlib.import_module("ray._private.worker").shutdown)

    @property
    def lost(self) -> ClusterLost | None:
        """Why the cluster is gone, once its head is; None while it answers."""
        return self._lost

    async def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
            self._watching = None
        self._nodes.stop()
        if self._shipper is not None:
            self._shipper.close()
        if self._connected_here and self._ray is not None and self._lost is None:
            await asyncio.to_thread(self._ray.shutdown)
        self._connected_here = False
        self._remote = None


async def _result_of(ref: Awaitable[PlayedMatch]) -> PlayedMatch:
    return await ref


async def _answers(host: str, port: int) -> bool:
    """Whether something accepts a connection at ``host:port`` within :data:`PROBE_TIMEOUT_S`."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), PROBE_TIMEOUT_S)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def _log_wait(wait: NodeWait) -> None:
    """The default hook (the league's): the start and the end of a wait, one log line each."""
    if wait.begins or wait.over:
        log.warning("%s", wait)


class _NodePoll:
    """Whether an alive node can hold a match, asked of Ray in a thread of its own (a lost head can block the asking)."""

    def __init__(self, executor: RayExecutor) -> None:
        self._executor = executor
        self._answer: tuple[float, bool] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, name="ray-node-poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()  # not joined: a call stuck on a lost head must not hold the runner

    def can_play(self) -> bool | None:
        """The latest answer, if fresh; None when there is none."""
        answer = self._answer
        if answer is None or time.monotonic() - answer[0] > 3 * WATCH_PERIOD_S:
            return None
        return answer[1]

    def _poll(self) -> None:
        ray, cpus = self._executor._ray, self._executor.cpus_per_match
        while not self._stop.is_set():
            try:
                nodes = ray.nodes()
            except Exception:  # the head gone: the probe says so
                self._answer = None
            else:
                fits = any(node.get("Alive") and node.get("Resources", {}).get("CPU", 0.0) >= cpus for node in nodes)
                self._answer = (time.monotonic(), fits)
            self._stop.wait(WATCH_PERIOD_S)
