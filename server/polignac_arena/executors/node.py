"""What a machine does with a match it is to play: find its bots by content hash, build each once, play it here.

Every executor plays a match through this module, the local one (this machine) as a Ray
node does, so a submission is built and run alike wherever its matches are played.
A submission reaches the machine as the SHA-256 of its archive (:func:`polignac_arena.archive.pack_folder`)
and a handle to fetch the bytes, never as a path: the machine keeps archives in a cache of its own
(:class:`~polignac_arena.archive_store.ArchiveStore` under :func:`cache_root`), fetches one only on
its first use, unpacks it without trusting it, and runs a submission's ``build`` step once per
seat kind, in that kind's sandbox, as ``polignac bot check`` does.  The build's outcome is
kept beside the folder (``built/<sha>-<kind>.ok`` or ``.failed``, with its log), so later
matches reuse the folder, or fail at once with the same reason.  Concurrent matches take a
lock per archive (a file lock, and within one process an asyncio lock), so one builds while
the others wait.

Each machine keeps a journal of the matches it started and ended (``matches.log`` in its cache,
one line each: time, ``start``, ``end`` or ``failed``, match id): a match cut off by the
node's death is the ``start`` with neither, played again elsewhere.

Nothing here imports Ray: :mod:`polignac_arena.executors.ray_cluster` wraps :func:`play_on_node`
in a Ray task and passes a ``fetch`` that reads Ray's object store;
:class:`~polignac_arena.executors.local.LocalExecutor` calls :func:`play_shipped` with the bytes at hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from polignac_arena.archive import ArchiveCaps, ArchiveError
from polignac_arena.archive_store import ArchiveStore
from polignac_arena.botcheck import BUILD_OUTPUT_LINES, BUILD_TIMEOUT_S
from polignac_arena.executors.base import ExecutorError, MatchJob, PlayedMatch
from polignac_arena.referee import MatchResult
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatKind, SeatLimits, launcher_for
from polignac_arena.submission import Submission, SubmissionError, builtin_submission, load_submission

__all__ = [
    "CACHE_ENV",
    "NODE_NAME_ENV",
    "SHIPPING_CAPS",
    "NodeRefused",
    "ShippedBot",
    "cache_root",
    "play_here",
    "play_on_node",
    "play_shipped",
    "prepare_bot",
]

CACHE_ENV: Final = "POLIGNAC_NODE_CACHE"
"""Where a node keeps the submissions it was sent (default: ``$XDG_CACHE_HOME/polignac/node``, else ``~/.cache/polignac/node``)."""
NODE_NAME_ENV: Final = "POLIGNAC_NODE_NAME"
"""A name for the node in results and status (default: its host name and the start of its Ray node id)."""
SHIPPING_CAPS: Final = ArchiveCaps(compressed_bytes=1 << 30, unpacked_bytes=2 << 30, files=100_000, depth=64)
"""What a shipped submission may hold: the organiser's own folders, so far wider than an upload's caps."""


class NodeRefused(ExecutorError):
    """A node that cannot play a match as asked (its seat kind missing, a bot that does not build there)."""


@dataclass(frozen=True)
class ShippedBot:
    """A bot as it travels to a node: a built-in bot's name, or its archive's SHA-256 and a handle to the bytes."""

    builtin: str | None = None
    sha: str | None = None
    archive: object = None
    """Whatever ``fetch`` turns into the archive's bytes (a Ray object reference); used only when the node has no copy."""


def cache_root() -> Path:
    """The node's cache of shipped submissions (:data:`CACHE_ENV`)."""
    if configured := os.environ.get(CACHE_ENV):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "polignac" / "node"


def play_on_node(job: MatchJob, shipped: list[ShippedBot], fetch: Callable[[object], bytes], node: str) -> PlayedMatch:
    """Play ``job`` here, its bots being ``shipped`` (``job.bots`` is ignored); the match's result, named after ``node``."""
    return asyncio.run(play_shipped(job, shipped, fetch, node))


async def play_shipped(
    job: MatchJob, shipped: list[ShippedBot], fetch: Callable[[object], bytes], node: str, record_path: Path | None = None
) -> PlayedMatch:
    """:func:`play_on_node` in a running event loop (its record written to ``record_path`` when given).

    The result names the builds this match ran (:attr:`PlayedMatch.builds`); a build that fails
    raises :class:`NodeRefused` with its log, now and for every later match of that submission.
    """
    launcher = launcher_for(job.seat_kind)
    reason = launcher.unavailable() or launcher.refusal(job.trusted)
    if reason is not None:
        raise NodeRefused(f"node {node} cannot play match {job.match_id} in {job.seat_kind.value} seats: {reason}")
    builds: list[str] = []
    bots = [await prepare_bot(bot, fetch, job.seat_kind, job.limits, job.trusted, node, builds) for bot in shipped]
    _journal("start", job.match_id)
    ended = "failed"
    try:
        result = await play_here(replace(job, bots=tuple(bots)), record_path)
        ended = "end"
    finally:
        _journal(ended, job.match_id)
    return PlayedMatch(result, node, tuple(builds))


async def play_here(job: MatchJob, record_path: Path | None = None) -> MatchResult:
    """Play ``job``, its bots ready here, with its own referee and seats (:func:`~polignac_arena.runner.run_local_match`)."""
    result, _ = await run_local_match(
        job.bots,
        job.rules,
        job.seed,
        job.time_control,
        game=job.game,
        seat_kind=job.seat_kind,
        trusted=job.trusted,
        limits=job.limits,
        record_path=record_path,
        match_id=job.match_id,
    )
    return result


def _journal(event: str, match_id: str) -> None:
    """One line in the node's journal of matches (an append of one short line: whole, even from concurrent matches)."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "matches.log", "a", encoding="utf-8") as journal:
        journal.write(f"{time.time():.3f} {event} {match_id}\n")


async def prepare_bot(
    bot: ShippedBot,
    fetch: Callable[[object], bytes],
    kind: SeatKind,
    limits: SeatLimits,
    trusted: bool,
    node: str,
    builds: list[str] | None = None,
) -> Submission:
    """The submission ``bot`` from this machine's cache: fetched and unpacked on first use, built once per seat kind.

    A build run here adds its line to ``builds``: ``build of NAME@VERSION on node NODE: COMMAND exited 0 in 1.2 s; ...``.
    """
    if bot.builtin is not None:
        return builtin_submission(bot.builtin)
    if bot.sha is None:
        raise NodeRefused(f"node {node} was sent a bot with neither a built-in name nor an archive")
    root = cache_root()
    cache = ArchiveStore(root)
    built = root / "built"
    built.mkdir(parents=True, exist_ok=True)
    ok, failed = built / f"{bot.sha}-{kind.value}.ok", built / f"{bot.sha}-{kind.value}.failed"
    async with _locked(root / "locks", bot.sha):
        try:
            if not cache.has(bot.sha):
                data = await asyncio.to_thread(fetch, bot.archive)  # a large archive may take a while: the loop goes on
                if hashlib.sha256(data).hexdigest() != bot.sha:
                    raise NodeRefused(f"node {node} received archive {bot.sha[:12]} with other content than its hash")
                await asyncio.to_thread(cache.add, data, SHIPPING_CAPS)
            folder = await asyncio.to_thread(cache.unpacked, bot.sha, SHIPPING_CAPS)
            submission = load_submission(folder)
        except (ArchiveError, SubmissionError) as exc:
            raise NodeRefused(f"node {node} cannot unpack archive {bot.sha[:12]}: {exc}") from None
        if not submission.build or ok.exists():
            return submission
        if failed.exists():
            raise NodeRefused(failed.read_text(encoding="utf-8", errors="replace").strip())
        outcome = await launcher_for(kind).build(submission, limits, timeout_s=BUILD_TIMEOUT_S, trusted=trusted)
        tail = "\n".join(outcome.output.strip().splitlines()[-BUILD_OUTPUT_LINES:])
        line = f"build of {submission.label} on node {node}: {outcome.reason}"
        log = f"{line}\n{tail}".strip()
        (ok if outcome.ok else failed).write_text(log + "\n", encoding="utf-8")
        if not outcome.ok:
            raise NodeRefused(log)
        if builds is not None:
            builds.append(line)
        return load_submission(folder)  # the folder as its build left it


_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()
"""The asyncio locks of each event loop, by name: matches of one process (the local executor) wait on these."""


@contextlib.asynccontextmanager
async def _locked(folder: Path, name: str) -> AsyncIterator[None]:
    """Hold the machine-wide lock ``name``: an asyncio lock among this process's matches, then a file lock among processes.

    The file lock is taken in a thread, so the event loop (and the matches it runs) never waits
    on it; a match cancelled while it waits leaves the thread to take the lock and let it go.
    """
    lock = _LOCKS.setdefault(asyncio.get_running_loop(), {}).setdefault(name, asyncio.Lock())
    async with lock:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        taking = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
        try:
            await asyncio.shield(taking)
        except BaseException:
            taking.add_done_callback(lambda _: os.close(fd))  # closing the file lets the lock go
            raise
        try:
            yield
        finally:
            os.close(fd)
