"""The league's validation workers: queued uploads unpacked, built and smoke-tested, a few at once, fairly.

``[validation] workers`` validations run at once, at most one per author, the authors served in
turn (:class:`~polignac_arena.league.validation_queue.ValidationQueue`).  Each one:

1. unpacks the version's archive (it was checked member by member when it was received) and
   counts what it takes on disk against its author's ``disk_mb``;
2. builds it with what is left of that budget as the most its build may install (``build_mb``
   at most) and ``[validation] build_timeout_s`` of wall clock, then plays its smoke match
   (:func:`polignac_arena.league.validation.validate`), its log written as it goes (``log_kb`` kept);
3. accepted, the version becomes active and its disk use is measured again; refused, its files
   go at once (its archive, unpacked folder and build: its row, reason and log stay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Final

from polignac_arena.archive import ArchiveError
from polignac_arena.archive_store import UnknownArchive, disk_usage
from polignac_arena.league.store import Version, VersionState
from polignac_arena.league.validation import validate
from polignac_arena.league.validation_queue import ValidationQueue
from polignac_arena.seats import BuildLimits

if TYPE_CHECKING:
    from polignac_arena.league.serve import League

__all__ = ["MIN_BUILD_BYTES", "Validator"]

log = logging.getLogger(__name__)

MIN_BUILD_BYTES: Final = 64 << 10
"""What a build may always send back, whatever is left of its author's disk budget (a tar's own overhead)."""
_FLUSH_S: Final = 0.5


class Validator:
    """Runs the league's validations for as long as :meth:`run` runs (see the module notes)."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.queue = ValidationQueue()
        self.running: dict[asyncio.Task[None], Version] = {}
        self.wake = asyncio.Event()
        """Set when an upload is queued: the workers look for work."""

    async def run(self) -> None:
        """Validate queued uploads until cancelled (then the running ones are stopped: they run again at the next start)."""
        workers = self.league.config.validation.workers
        try:
            while True:
                self.wake.clear()
                pending = await asyncio.to_thread(self.league.store.pending_validations)
                busy = {version.id for version in self.running.values()}
                waiting = [version for version in pending if version.id not in busy]
                authors = {version.author for version in self.running.values()}
                for picked in self.queue.pick(waiting, authors, workers - len(self.running)):
                    assert isinstance(picked, Version)
                    self.running[asyncio.ensure_future(self._validate(picked))] = picked
                woken = asyncio.ensure_future(self.wake.wait())
                done, _ = await asyncio.wait([*self.running, woken], return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                for task in [task for task in self.running if task in done]:  # the wake-up is not a validation
                    ended = self.running.pop(task)
                    if not task.cancelled() and task.exception() is not None:
                        log.error("validation of %s failed: %r", ended.label, task.exception())
                    self.league.on_active()
        finally:
            for task in self.running:
                task.cancel()
            await asyncio.gather(*self.running, return_exceptions=True)

    async def _validate(self, version: Version) -> None:
        league = self.league
        store, archives, limits = league.store, league.archives, league.limits
        sha = version.archive
        assert sha is not None
        if version.state is VersionState.VALIDATING:  # cut short by a stop: its build may have left half its files
            await asyncio.to_thread(archives.forget_unpacked, sha)
        await asyncio.to_thread(store.start_validation, version.id)
        try:
            folder = await asyncio.to_thread(archives.unpacked, sha, league.caps)
        except (ArchiveError, UnknownArchive, OSError) as exc:
            await self._finish(version, False, f"the archive cannot be unpacked: {exc}")
            return
        unpacked = await asyncio.to_thread(lambda: archives.size(sha) + disk_usage(folder))
        await asyncio.to_thread(store.set_disk, version.id, unpacked)
        room = (limits.disk_mb << 20) - await asyncio.to_thread(store.disk_used, version.author)
        build_caps = BuildLimits(result_bytes=max(MIN_BUILD_BYTES, min(limits.build_mb << 20, room)))
        lines: list[str] = []

        def note(line: str) -> None:
            lines.append(line if line.endswith("\n") else line + "\n")

        flushing = asyncio.ensure_future(self._flush_log(version.id, lines))
        try:
            result = await validate(folder, league.config, bot_name=version.bot, log=note, build_caps=build_caps)
        finally:
            flushing.cancel()
        await asyncio.to_thread(store.append_log, version.id, "".join(lines), limits.log_chars)
        lines.clear()
        await self._finish(version, result.ok, result.reason)

    async def _finish(self, version: Version, ok: bool, reason: str) -> None:
        """Accept or refuse: a refused version's files go at once; an accepted one's disk use is measured as built."""
        league = self.league
        done = await asyncio.to_thread(league.store.finish_validation, version.id, ok, reason, league.tournament_id, league.prior)
        log.info("%s: %s%s", done.label, done.state.value, f" ({done.reason})" if done.state is VersionState.REFUSED else "")
        sha = version.archive
        if done.state is VersionState.REFUSED:
            gone = await asyncio.to_thread(league.store.discard_files, version.id)
            if gone is not None:
                await asyncio.to_thread(league.archives.remove, gone)
        elif sha is not None:
            with contextlib.suppress(OSError):
                size = await asyncio.to_thread(lambda: league.archives.size(sha) + disk_usage(league.archives.version_path(sha)))
                await asyncio.to_thread(league.store.set_disk, version.id, size)

    async def _flush_log(self, version_id: int, lines: list[str]) -> None:
        """Write the validation log as it grows, so the author follows it live."""
        while True:
            await asyncio.sleep(_FLUSH_S)
            if lines:
                text = "".join(lines)
                lines.clear()
                await asyncio.to_thread(self.league.store.append_log, version_id, text, self.league.limits.log_chars)
