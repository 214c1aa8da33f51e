"""Authors' test matches: a league match's deals played again with one of the author's versions in their bot's seats.

An author asks (``polignac league rerun MATCH --version V``, the authors' API, or the replay
page's form) for a match their bot played; the same opponents' versions keep their seats, the
version asked for takes every seat the author's bot held, and the match is played again from
a hand of it (:mod:`polignac.rerun`: the same deals and dealers, the totals so far) under the
record's rules and clock.  It is unrated and kept apart from the league's results
(:mod:`polignac_arena.league.test_run_store`); its result and record are shown to that author
(and the operator) only.  The test matches are played one at a time, in the order asked, beside
the ladder, by :meth:`TestRuns.run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from polignac_arena.league.config import LeagueConfig
from polignac_arena.league.store import LeagueStore, LimitReached, Version, VersionKind, VersionState
from polignac_arena.league.test_run_store import TestRun, TestRunState, TestRunStore
from polignac_arena.record_lines import HandEndedLine, HeaderLine, JsonLine, ResultLine, parse_lines
from polignac_arena.rerun_source import RerunSource, RerunSourceError, rerun_of_record
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatLauncher, launcher_for
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import StoredResult, StoreError
from polignac_arena.submission import Submission

__all__ = ["PLAYABLE_STATES", "TestRunRefused", "TestRuns", "as_result", "run_state_text"]

log = logging.getLogger(__name__)

PLAYABLE_STATES: Final = (VersionState.ACTIVE, VersionState.RETIRED)
"""Versions a test match may seat: uploaded ones that passed validation (the ladder's own, or replaced since)."""
POLL_S: Final = 5.0


class TestRunRefused(Exception):
    """A test match that cannot be asked for: ``http_status`` (400, 403, 404, 409, 429) and the message say why."""

    __test__ = False

    def __init__(self, message: str, http_status: int, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class _Plan:
    source: RerunSource
    version: Version
    seats: tuple[str, ...]


class TestRuns:
    """Asks for test matches (from the web's threads) and plays them (:meth:`run`, in the league's loop)."""

    __test__ = False

    def __init__(
        self,
        store: LeagueStore,
        config: LeagueConfig,
        submission_of: Callable[[Version], Submission | None],
        *,
        launcher: SeatLauncher | None = None,
    ) -> None:
        self.store = store
        self.runs = TestRunStore(store)
        self.config = config
        self._submission_of = submission_of
        self._launcher = launcher
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    # -- asking ----------------------------------------------------------------------------------

    def request(self, author: str, match_id: str, version: str, hand: int | None = None) -> TestRun:
        """Queue a test match of ``author``'s ``version`` (``N`` of their bot in the match, or ``BOT@N``) in ``match_id`` from ``hand``.

        Raises :class:`TestRunRefused`: 404 no such match or version, 403 a match none of the
        author's bots played or another author's version, 400 a bad hand or version text, 409
        a version or an opponent that cannot be seated, 429 past a limit.
        """
        plan = self._plan(author, match_id, version, hand)
        try:
            run = self.runs.add(author, match_id, plan.source.rerun.start.hand, plan.version.id, plan.seats, self.config.author_limits)
        except LimitReached as exc:
            raise TestRunRefused(str(exc), 429, exc.retry_after_s) from None
        except StoreError as exc:
            raise TestRunRefused(str(exc), 400) from None
        self._notify()
        return run

    def _plan(self, author: str, match_id: str, text: str, hand: int | None) -> _Plan:
        stored = self.store.arena.get_result(match_id) if len(match_id) <= 200 else None
        if stored is None or not stored.record:
            raise TestRunRefused(f"no match {match_id!r} with a record in this league", 404)
        versions = {v.label: v for v in self.store.versions()}
        seated = [versions.get(label) for label in stored.seats]
        mine = {v.bot for v in seated if v is not None and v.author == author}
        if not mine:
            raise TestRunRefused(f"none of your bots played match {match_id!r}: a test match reruns a match of yours", 403)
        chosen = self._version(author, text, mine, versions)
        replaced = chosen.bot if chosen.bot in mine else next(iter(mine)) if len(mine) == 1 else None
        if replaced is None:
            raise TestRunRefused(f"your bots {', '.join(sorted(mine))} played match {match_id!r}: name one of them (BOT@VERSION)", 400)
        seats: list[str] = []
        for seat, (label, version) in enumerate(zip(stored.seats, seated, strict=True)):
            if version is not None and version.bot == replaced and version.author == author:
                seats.append(chosen.label)
            elif version is None or version.kind is not VersionKind.UPLOAD or version.archive is None:
                why = "a remote bot" if version is not None and version.kind is VersionKind.REMOTE else "no longer kept"
                raise TestRunRefused(f"seat {seat} of match {match_id!r} ({label}) is {why}: a test match seats uploaded versions", 409)
            else:
                seats.append(label)
        try:
            source = rerun_of_record(stored.record, match_id, hand)
        except RerunSourceError as exc:
            raise TestRunRefused(str(exc), 400) from None
        return _Plan(source, chosen, tuple(seats))

    def _version(self, author: str, text: str, mine: set[str], versions: dict[str, Version]) -> Version:
        text = text.strip()
        if not text or len(text) > 200:
            raise TestRunRefused(f"not a version: {text!r} (give N, a version of your bot, or BOT@N)", 400)
        if "@" in text:
            label = text
        elif len(mine) == 1:
            label = f"{next(iter(mine))}@{text}"
        else:
            raise TestRunRefused(f"your bots {', '.join(sorted(mine))} played this match: name the version as BOT@{text}", 400)
        chosen = versions.get(label)
        if chosen is None:
            raise TestRunRefused(f"no version {label!r} in this league", 404)
        if chosen.author != author:
            raise TestRunRefused(f"{label} is another author's version", 403)
        if chosen.kind is not VersionKind.UPLOAD or chosen.state not in PLAYABLE_STATES or chosen.archive is None:
            state = "remote" if chosen.kind is VersionKind.REMOTE else "no longer kept" if chosen.archive is None else chosen.state.value
            raise TestRunRefused(f"{label} is {state}: a test match takes an uploaded version that passed validation", 409)
        return chosen

    def _notify(self) -> None:
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    # -- showing ---------------------------------------------------------------------------------

    def choices(self, author: str, seats: tuple[str, ...]) -> list[str]:
        """The versions ``author`` may rerun a match of these seats with (newest first); none when no bot of theirs sat there."""
        versions = self.store.versions()
        by_label = {v.label: v for v in versions}
        mine = {v.bot for label in seats if (v := by_label.get(label)) is not None and v.author == author}
        playable = [
            v.label
            for v in versions
            if v.author == author and v.bot in mine and v.kind is VersionKind.UPLOAD and v.state in PLAYABLE_STATES and v.archive
        ]
        return playable[::-1]

    def of_author(self, author: str) -> list[TestRun]:
        return self.runs.of_author(author)

    def get(self, run_id: int) -> TestRun | None:
        return self.runs.get(run_id)

    def record(self, run_id: int) -> list[JsonLine] | None:
        return self.runs.record(run_id)

    # -- playing ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Play the queued test matches one at a time, for good (cancel to stop: the one playing goes back to the queue)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        requeued = await asyncio.to_thread(self.runs.requeue_running)
        if requeued:
            log.info("test matches: %d cut short by a stop are queued again", requeued)
        while True:
            self._wake.clear()
            run = await asyncio.to_thread(self.runs.take_next)
            if run is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), POLL_S)
                continue
            await self.play(run)

    async def play(self, run: TestRun) -> None:
        """Play one test match taken from the queue and store how it ended."""
        try:
            source, bots = self._prepare(run)
            header = source.header
            result, _ = await run_local_match(
                bots,
                source.rules,
                header.seed,
                header.time_control or self.config.time,
                launcher=self._launcher or launcher_for(self.config.seat_kind),
                limits=self.config.limits,
                trusted=self.config.trusted,
                game=self.config.game,
                match_id=f"{self.config.name}-test-{run.id}",
                rerun=source.rerun,
            )
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.to_thread(self.runs.requeue_running))
            raise
        except Exception as exc:  # a test match that cannot be played must not stop the others
            log.warning("test match %d (of %s) could not be played: %s", run.id, run.author, exc)
            await asyncio.to_thread(self.runs.fail, run.id, str(exc) or type(exc).__name__)
            return
        await asyncio.to_thread(self.runs.finish, run.id, result.status.value, result.places, result.totals, result.record)
        log.info("test match %d of %s: %s", run.id, run.author, result.status.value)

    def _prepare(self, run: TestRun) -> tuple[RerunSource, list[Submission]]:
        stored = self.store.arena.get_result(run.match_id)
        if stored is None or not stored.record:
            raise RerunSourceError(f"match {run.match_id!r} is no longer in the store")
        source = rerun_of_record(stored.record, run.match_id, run.hand)
        versions = {v.label: v for v in self.store.versions()}
        bots = []
        for label in run.seats:
            version = versions.get(label)
            submission = None if version is None else self._submission_of(version)
            if submission is None:
                raise RerunSourceError(f"{label} can no longer be played: its files are gone")
            bots.append(submission)
        return source, bots


def as_result(run: TestRun, record: list[JsonLine]) -> StoredResult:
    """A played test match as the replay viewer reads a stored result (it is none: never rated, never listed)."""
    try:
        lines = parse_lines(record)
    except ValueError:
        lines = []  # the viewer says the record does not replay
    header = next((line for line in lines if isinstance(line, HeaderLine)), None)
    result = next((line for line in reversed(lines) if isinstance(line, ResultLine)), None)
    return StoredResult(
        tournament_id=0,
        tournament=f"test match {run.id}",
        idx=run.id,
        seats=run.seats,
        seed=0 if header is None else header.seed,
        match_id=f"test-{run.id}",
        status=MatchStatus.parse(run.status or "error"),
        final=True,
        places=run.places,
        totals=run.totals or (0,) * len(run.seats),
        faults=tuple(dict(f) for f in result.faults) if result is not None else tuple({} for _ in run.seats),
        hands=sum(1 for line in lines if isinstance(line, HandEndedLine)),
        penalties=(0,) * len(run.seats),
        duration_s=None,
        finished_at=run.finished_at or "",
        record_path=None,
        record=record,
    )


def run_state_text(run: TestRun) -> str:
    """One line on where a test match stands, for people."""
    if run.state is TestRunState.FINISHED:
        return f"{run.status}: places {list(run.places or ())}, totals {list(run.totals or ())}"
    if run.state is TestRunState.FAILED:
        return f"failed: {run.reason}"
    return run.state.value
