"""The league's ladder: the loop that keeps tables playing (which entrants sit at each: :mod:`.table_pick`).

:class:`Ladder` is the loop: while the league is not paused it keeps ``parallel`` matches
running, each one a fixture appended to the league's tournament, played by
:func:`~polignac_arena.league.play.play_league_match` and given exactly one final result
(a match that was not played, or not to its end, gets a void one, so the ratings, applied
in fixture order, never wait on it).

A match played on the league's referee keeps a journal in ``journal_dir`` while it runs
(:mod:`polignac_arena.referee.journal`).  A league that stops (a drain past its deadline
suspends the matches still running; a kill just leaves them) takes them up when it starts
again (:meth:`Ladder.recover`): each fixture without a result is played on from its journal,
or, without one or with one that cannot be read, given a void result whose record says why.
A journal goes once its match's result is stored, so the folder holds one per running match
(the journals, their checks and the void records: :mod:`.interrupted`).

A table with remote bots becomes a fixture only once each of them took its seat: a bot that
declines, does not answer or has gone (one that joins and leaves at once) leaves no match
behind, public or void, and its table's index goes to the next table.  Until then the offer
holds a place among the ``parallel`` matches.

While every table plays, the next table's seats may be started already, so that a table that
frees begins its next match at once (:mod:`.seats_ahead`).
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Final

from polignac_arena.executors import ClusterLost, Executor, MatchJob, local_node_name
from polignac_arena.league.config import LeagueConfig
from polignac_arena.league.entrants import AssignRemote, Entrant, LeagueFixture, PauseRemote, WithdrawRemote
from polignac_arena.league.interrupted import (
    INTERRUPTED,
    JOURNAL_UNREADABLE,
    NOT_RESUMABLE,
    JournalFolder,
    check_journal,
    interrupted_record,
)
from polignac_arena.league.metrics import LeagueMetrics, TableRefills
from polignac_arena.league.play import CalledOff, MatchSuspended, RemoteDeclined, play_league_match
from polignac_arena.league.referee_orders import PlayOrder
from polignac_arena.league.referee_pool import RefereeLost, RefereePool
from polignac_arena.league.seats_ahead import PAUSED, STOPPING, AheadMatch, SeatsAhead
from polignac_arena.league.store import LeagueStore, Version, VersionKind
from polignac_arena.league.table_pick import pick_table
from polignac_arena.matchmaking import Meetings
from polignac_arena.ratings import Rating, RatingEnv, rate_match
from polignac_arena.referee import MatchResult, RefereeServer
from polignac_arena.referee.journal import JournalError, JournalState, read_journal
from polignac_arena.referee.record import RecordFileError, read_record
from polignac_arena.schedule import match_seed
from polignac_arena.seats import SeatLauncher, launcher_for
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import StoreError
from polignac_arena.store.records import StoredFixture
from polignac_arena.submission import Submission
from polignac_arena.tournament.runner import store_result

__all__ = ["Ladder"]

log = logging.getLogger(__name__)

NOTICE_DELAY_S: Final = 0.1
"""How long after a notice (a bot came online or left, a version became active) the ladder looks for tables: the
notices of a burst (a thousand bots joining after a restart) make one look, not one each, as each look reads the
store on the event loop."""


class Ladder:
    """The league's ladder loop over one store and one running referee (see the module notes).

    ``tournament_id`` is the league's tournament in ``store``.  The entrants are the store's
    active versions (a disabled bot's are not): uploaded ones whose folder ``submission_of``
    gives (None: not ready, left out; a rerun asks it for retired versions too), remote ones
    while ``online()`` lists their label.
    ``assign`` hands a remote bot its seat (the lobby), ``withdraw`` tells it when a match it
    was offered is called off (another bot did not take its seat), and ``release(label,
    match_id)`` is called when a match a remote bot was offered is over.  A remote bot that
    declines or does not answer is left out for ``[remote] decline_pause_s``, and after
    ``pause_after`` of those in a row (no acceptance between) for ``pause_s``; ``pause`` tells
    it so.  Records go to ``record_dir`` when given, journals of running matches to ``journal_dir``
    (None: none are kept, and a match a stop cuts short is voided).
    ``on_recorded(index, status)`` is called after each result is stored.  ``metrics`` counts
    the matches this ladder starts and ends (:mod:`polignac_arena.league.metrics`); ``referees``
    referee the matches with a remote seat (:mod:`polignac_arena.league.referee_pool`; None: ``server``).
    """

    def __init__(
        self,
        store: LeagueStore,
        tournament_id: int,
        config: LeagueConfig,
        server: RefereeServer,
        *,
        submission_of: Callable[[Version], Submission | None],
        online: Callable[[], Collection[str]] = frozenset,
        assign: AssignRemote | None = None,
        withdraw: WithdrawRemote | None = None,
        pause: PauseRemote | None = None,
        release: Callable[[str, str], None] | None = None,
        launcher: SeatLauncher | None = None,
        record_dir: Path | None = None,
        journal_dir: Path | None = None,
        window: int = 200,
        max_concurrent: int = 2,
        poll_s: float = 2.0,
        on_recorded: Callable[[int, MatchStatus], None] | None = None,
        executor: Executor | None = None,
        metrics: LeagueMetrics | None = None,
        referees: RefereePool | None = None,
    ) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.config = config
        self.server = server
        self.env = RatingEnv(**vars(config.trueskill))
        self._submission_of = submission_of
        self._online = online
        self._assign = assign
        self._withdraw = withdraw
        self._pause = pause
        self._release = release
        self._launcher = launcher or launcher_for(config.seat_kind)
        self._record_dir = record_dir
        self._journals = JournalFolder(journal_dir)
        self._window = window
        self._max_concurrent = max_concurrent
        self._poll_s = poll_s
        self._on_recorded = on_recorded
        self._executor = executor
        self.metrics = metrics or LeagueMetrics()
        self._referees = referees
        self._node = local_node_name()
        fixtures = store.arena.fixtures(tournament_id)
        self._history: list[tuple[str, ...]] = [f.seats for f in fixtures]
        self._meetings = Meetings(self._history)
        self._next_index = max((f.index for f in fixtures), default=-1) + 1
        # Indices an offer left unused (a stop while offering may leave one between fixtures): taken first.
        self._free_indices: list[int] = sorted(set(range(self._next_index)) - {f.index for f in fixtures})
        self._busy: collections.Counter[str] = collections.Counter()
        self._declined: dict[str, float] = {}  # label -> time.monotonic() until which it is left out
        self._strikes: collections.Counter[str] = collections.Counter()  # label -> assignments not taken in a row
        self._unplayable: set[int] = set()  # rerun requests that cannot be played (logged once)
        self._running: dict[str, tuple[LeagueFixture, asyncio.Task[None]]] = {}
        self._wake = asyncio.Event()
        self._notice: asyncio.TimerHandle | None = None
        self._draining = False
        self._lost: ClusterLost | None = None
        self._recovered = False
        self._hosting: dict[str, asyncio.Event] = {}
        """Matches :meth:`recover` resumed, set once each is on the referee (its remote seats' tokens accepted)."""
        self._scheduled: set[int] = set()
        """The running fixtures that are in the schedule (a table with remote bots is not until they took their seats)."""
        self._ahead = SeatsAhead(config.seats_ahead)
        self._refills = TableRefills(self.metrics, config.parallel)

    # -- what the league's pages and its server see ---------------------------------------------

    @property
    def live(self) -> int:
        """How many matches are being played (or offered to remote bots) now; safe to read from any thread."""
        return len(self._running)

    @property
    def running(self) -> list[tuple[str, tuple[str, ...]]]:
        """The matches being played: their id and the labels in seat order."""
        return [(match_id, tuple(e.label for e in fixture.seats)) for match_id, (fixture, _) in self._running.items()]

    @property
    def seated_ahead(self) -> list[tuple[str, tuple[str, ...]]]:
        """The matches whose seats are started ahead, waiting for a table: their id and the labels in seat order."""
        return [(match.match_id, tuple(e.label for e in match.fixture.seats)) for match in self._ahead]

    def notify(self) -> None:
        """Look for tables within :data:`NOTICE_DELAY_S` (a bot came online, a version became active) rather than at the
        next poll; call it on the loop."""
        if self._notice is None:
            self._notice = asyncio.get_running_loop().call_later(NOTICE_DELAY_S, self._noticed)

    def _noticed(self) -> None:
        self._notice = None
        self._wake.set()

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Play until :meth:`drain` (or until cancelled: then the running matches are cancelled and recorded as aborted).

        Raises :class:`ClusterLost` once the executor's cluster is gone: every later match would
        fail at once, so the ladder stops rather than void them one after another.
        """
        if not self._recovered:
            self.recover()
        try:
            while not self._draining:
                if self._lost is not None:
                    raise self._lost
                self._wake.clear()
                self.start_due()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._poll_s)
        except asyncio.CancelledError:
            called = self._call_off_ahead(STOPPING, stop=True)
            tasks = [task for _, task in self._running.values()]
            for task in tasks:
                task.cancel()
            if tasks or called:
                await asyncio.wait([*tasks, *called])
            raise
        finally:
            if self._notice is not None:
                self._notice.cancel()
                self._notice = None

    async def drain(self, deadline_s: float) -> None:
        """Take no new match; let the running ones finish within ``deadline_s``, then cancel them (suspended to be resumed
        when the league starts again when they keep a journal, else recorded as aborted)."""
        self._draining = True
        self._wake.set()
        called = self._call_off_ahead(STOPPING, stop=True)
        if called:
            await asyncio.wait(called)
        tasks = [task for _, task in self._running.values()]
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=deadline_s)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    def void_interrupted(self) -> list[int]:
        """Give every fixture without a final result (a server killed mid-match) a void one, with a record that says
        so; their indices."""
        voided = []
        for fixture in self.store.arena.pending_fixtures(self.tournament_id):
            self._void_interrupted(fixture, INTERRUPTED)
            voided.append(fixture.index)
        return voided

    def _void_interrupted(self, fixture: StoredFixture, reason: str) -> None:
        match_id = self._match_id(fixture.index)
        record_path = interrupted_record(self._record_dir, self.config, fixture, match_id, reason)
        self._record_void(fixture.index, match_id, len(fixture.seats), MatchStatus.ABORTED, record_path)
        self._journals.drop(match_id)

    def recover(self) -> list[int]:
        """Take up what a stopped league left (at start-up): every fixture without a final result is played on from
        its journal, or voided with a record that says why (no journal, a damaged one, a version that cannot play);
        journals of matches that are over go.  The indices resumed."""
        self._recovered = True
        journals = self._journals.by_match()
        resumed = []
        for fixture in self.store.arena.pending_fixtures(self.tournament_id):
            match_id = self._match_id(fixture.index)
            path = journals.pop(match_id, None)
            if path is None:
                self._void_interrupted(fixture, INTERRUPTED)
                continue
            try:
                state = read_journal(path)
                check_journal(state, fixture, match_id)
            except JournalError as exc:
                log.warning("ladder: match %s cannot be resumed: its journal %s: %s", match_id, path, exc)
                self._void_interrupted(fixture, JOURNAL_UNREADABLE.format(why=exc))
                continue
            seats = self._resumable(fixture.seats)
            if isinstance(seats, str):
                log.warning("ladder: match %s cannot be resumed: %s", match_id, seats)
                self._void_interrupted(fixture, NOT_RESUMABLE.format(why=seats))
                continue
            log.warning("ladder: match %s is resumed from its journal", match_id)
            entry = LeagueFixture(fixture.index, fixture.seed, tuple(seats))
            self._busy.update(e.label for e in seats)
            self._scheduled.add(fixture.index)
            self._hosting[match_id] = asyncio.Event()
            self.metrics.match_started()  # this process's counters: its end is counted here too
            self._running[match_id] = (entry, asyncio.ensure_future(self._play(entry, match_id, resume=state)))
            resumed.append(fixture.index)
        for match_id in journals:  # its match is over (the result stored just before the stop), or not this league's
            self._journals.drop(match_id)
        return resumed

    async def hosted(self) -> None:
        """Wait until every match :meth:`recover` resumed is on the referee (or has ended): from then on the old seat
        tokens of their remote seats are accepted, so the league may open its port to them."""
        await asyncio.gather(*(hosting.wait() for hosting in self._hosting.values()))

    def _resumable(self, labels: Sequence[str]) -> list[Entrant] | str:
        """The seats of a match to resume, as entrants; or why one cannot play (its version is gone, its folder cannot be loaded)."""
        versions = self._versions()
        seats = []
        for label in labels:
            version = versions.get(label)
            if version is None:
                return f"the version {label!r} is gone"
            if version.kind is VersionKind.REMOTE:
                seats.append(Entrant(version.label, version.bot))
                continue
            submission = self._submission_of(version)
            if submission is None:
                return f"the version {label!r} cannot be loaded"
            seats.append(Entrant(version.label, version.bot, submission))
        return seats

    def _lost_record(self, fixture: LeagueFixture, match_id: str, reason: str) -> Path | None:
        labels = tuple(entrant.label for entrant in fixture.seats)
        return interrupted_record(self._record_dir, self.config, StoredFixture(fixture.index, labels, fixture.seed, None), match_id, reason)

    def _may_start(self) -> bool:
        return not self._draining and self._lost is None

    def start_due(self) -> int:
        """Start what may start now (reruns first, then picked tables, those seated ahead first) up to ``parallel``, then
        seat the next tables ahead while every table plays; how many started."""
        paused = self.store.setting("paused", "0") == "1"
        if paused or not self._may_start():
            self._refills.idle()
            self._call_off_ahead(PAUSED if paused else STOPPING)
            return 0
        if len(self._ahead):
            self._ahead.call_off_stale({v.label for v in self.store.active_versions()})
        started = 0
        while len(self._running) < self.config.parallel:
            if not (self._start_rerun() or self._start_ahead() or self._start_pick()):
                break
            started += 1
        self._seat_ahead()
        return started

    def _call_off_ahead(self, reason: str, *, stop: bool = False) -> list[asyncio.Task[None]]:
        """Call off every match seated ahead; their tasks (each ends once its seats are stopped).  ``stop``: cancel them
        too, so that a seat still starting (an image to build) is given up rather than waited for."""
        tasks = [match.task for match in self._ahead.call_off_all(reason) if match.task is not None]
        if stop:
            for task in tasks:
                task.cancel()
        return tasks

    # -- choosing ------------------------------------------------------------------------------

    def _versions(self) -> dict[str, Version]:
        return {v.label: v for v in self.store.versions()}

    def _entrant(self, version: Version, online: Collection[str]) -> Entrant | None:
        """The version as an entrant, if it can play now (uploaded and ready, or remote and online)."""
        if version.kind is VersionKind.REMOTE:
            return Entrant(version.label, version.bot) if version.label in online else None
        submission = self._submission_of(version)
        return None if submission is None else Entrant(version.label, version.bot, submission)

    def _free(self, entrant: Entrant, now: float) -> bool:
        limit = 1 if entrant.remote else self._max_concurrent
        return self._busy[entrant.label] < limit and self._declined.get(entrant.label, 0.0) <= now

    def _start_rerun(self) -> bool:
        """Start the oldest rerun request whose versions can all play now."""
        now = time.monotonic()
        for request_id, match_id in self.store.pending_reruns():
            if request_id in self._unplayable:
                continue
            original = self.store.arena.get_result(match_id)
            versions = self._versions()
            if original is None or any(label not in versions for label in original.seats):
                log.warning("ladder: rerun %s of match %s cannot be played: its match or versions are gone", request_id, match_id)
                self._unplayable.add(request_id)
                continue
            online = self._online()
            seats = [self._entrant(versions[label], online) for label in original.seats]
            if all(e is not None and self._free(e, now) for e in seats):
                self._start([e for e in seats if e is not None], original.seed, rerun=request_id)
                return True
        return False

    def _start_pick(self) -> bool:
        seats = self._pick()
        if seats is None:
            return False
        self._start(seats)
        return True

    def _start_ahead(self) -> bool:
        """Begin the oldest match seated ahead, if one waits: a fixture of the league's schedule now."""
        match = self._ahead.next()
        if match is None or match.task is None:
            return False
        self._schedule(match.fixture, None)
        self.metrics.match_started()
        self._running[match.match_id] = (match.fixture, match.task)
        self._refills.taken(match.match_id)
        match.begin()
        return True

    def _seat_ahead(self) -> None:
        """While every table plays, start the seats of the tables that would be picked next (:mod:`.seats_ahead`)."""
        parallel = self.config.parallel
        while self._executor is None and len(self._running) >= parallel and self._ahead.has_room(parallel):
            seats = self._pick()
            if seats is None or any(e.remote for e in seats):
                return  # a remote bot takes its seat when offered one, once a table is free
            index = self._take_index()
            fixture = LeagueFixture(index, match_seed(self.config.seed, index), tuple(seats))
            self._busy.update(e.label for e in seats)
            match = self._ahead.add(fixture, self._match_id(index))
            match.task = asyncio.ensure_future(self._play(fixture, match.match_id, ahead=match))

    def _pick(self) -> list[Entrant] | None:
        """The entrants of the next table, in seat order, or None (:func:`.table_pick.pick_table`; tables seated ahead count as recent)."""
        now = time.monotonic()
        online = self._online()
        active = [self._entrant(v, online) for v in self.store.active_versions()]
        entrants = [e for e in active if e is not None]
        busy = {e.label: self._busy[e.label] if self._free(e, now) else self._max_concurrent for e in entrants}
        recent = collections.Counter(label for seats in self._history[-self._window :] for label in seats)
        recent.update(self._ahead.labels())
        table = pick_table(
            entrants,
            self.config.table_size,
            self.store.arena.ratings(self.tournament_id),
            self._meetings.games,
            recent,
            busy,
            len(self._history),
            self.env,
            new_version_matches=self.config.new_version_matches,
            rate_factor=self.config.rate_factor,
            max_concurrent=self._max_concurrent,
            meetings=self._meetings,
        )
        if table is None:
            return None
        by_label = {e.label: e for e in entrants}
        return [by_label[label] for label in table]

    def _take_index(self) -> int:
        if self._free_indices:
            return self._free_indices.pop(0)
        self._next_index += 1
        return self._next_index - 1

    def _start(self, seats: list[Entrant], seed: int | None = None, rerun: int | None = None) -> None:
        """Play the table in a task of its own: a fixture of the league's schedule now, or once its remote bots took their seats.

        ``seed``: the deal's (a rerun's is its match's); by default derived from the fixture's index.
        """
        index = self._take_index()
        fixture = LeagueFixture(index, match_seed(self.config.seed, index) if seed is None else seed, tuple(seats))
        self._busy.update(e.label for e in seats)
        if not any(e.remote for e in seats):
            self._schedule(fixture, rerun)
        match_id = self._match_id(index)
        self.metrics.match_started()
        self._refills.taken(match_id)
        self._running[match_id] = (fixture, asyncio.ensure_future(self._play(fixture, match_id, rerun)))

    def _schedule(self, fixture: LeagueFixture, rerun: int | None) -> None:
        """Append the fixture to the league's schedule (the tables its bots met count from now on)."""
        labels = [e.label for e in fixture.seats]
        self.store.schedule(self.tournament_id, labels, fixture.seed, rerun=rerun, index=fixture.index)
        self._history.append(tuple(labels))
        self._meetings.record(labels)
        self._scheduled.add(fixture.index)

    def _match_id(self, index: int) -> str:
        return f"{self.config.name}-{index:06d}"

    # -- playing and recording -----------------------------------------------------------------

    async def _play(
        self,
        fixture: LeagueFixture,
        match_id: str,
        rerun: int | None = None,
        resume: JournalState | None = None,
        ahead: AheadMatch | None = None,
    ) -> None:
        """Play a fixture and record its result; ``ahead``: a match seated ahead, which waits for its turn first."""
        record_path = None if self._record_dir is None else self._record_dir / f"{match_id}.jsonl"
        started = time.monotonic()
        players = len(fixture.seats)
        node = self._node
        suspended = False
        try:
            if self._executor is not None and not any(entrant.remote for entrant in fixture.seats):
                played = await self._executor.play(self._job(fixture, match_id), record_path)
                result, node = played.result, played.node
            else:
                result, node = await self._referee(fixture, match_id, record_path, rerun, resume, ahead)
        except CalledOff as exc:  # seated ahead, never begun: no match at all, its index free again
            log.info("ladder: %s", exc)
            bisect.insort(self._free_indices, fixture.index)
        except MatchSuspended as exc:
            suspended = True  # no result: the fixture stays pending, its journal kept for the next start
            log.warning("ladder: %s", exc)
        except RemoteDeclined as exc:
            for label in exc.labels.values():
                self._strike(label, match_id)
            log.info("ladder: %s", exc)
            self._drop_or_void(fixture, match_id, players, MatchStatus.ABORTED, record_path)
        except asyncio.CancelledError:
            if ahead is not None and ahead.began is None:
                bisect.insort(self._free_indices, fixture.index)  # seated ahead, never begun: as if called off
            else:
                self._drop_or_void(fixture, match_id, players, MatchStatus.ABORTED, record_path)
            raise
        except RefereeLost as exc:  # its referee process died or hung: aborted once, the ladder goes on
            log.warning("ladder: %s", exc)
            self._drop_or_void(fixture, match_id, players, MatchStatus.ABORTED, self._lost_record(fixture, match_id, exc.reason))
        except ClusterLost as exc:  # not this match's fault: aborted, and the ladder stops (run() raises it)
            self._lost = self._lost or exc
            self._drop_or_void(fixture, match_id, players, MatchStatus.ABORTED, record_path)
        except Exception:  # a match the league cannot play must not stop the ladder: void, and go on
            log.exception("ladder: match %s could not be played", match_id)
            if fixture.index not in self._scheduled:  # the arena's own failure stays on the record
                self._schedule(fixture, rerun)
                if ahead is not None and ahead.began is None:
                    self.metrics.match_started()
            self._record_void(fixture.index, match_id, players, MatchStatus.ERROR)
            self.metrics.match_ended(MatchStatus.ERROR)
        else:
            began = started if ahead is None or ahead.began is None else ahead.began
            self._record(fixture.index, result, time.monotonic() - began, node)
            self.metrics.match_ended(result.status, node, result.lines, result.faults)
        finally:
            if ahead is not None:
                self._ahead.forget(ahead)
            if match_id in self._running:
                self._refills.freed()
            self._refills.ended(match_id)
            hosting = self._hosting.pop(match_id, None)
            if hosting is not None:
                hosting.set()
            if not suspended:
                self._journals.drop(match_id)
            self._scheduled.discard(fixture.index)
            self._busy.subtract(e.label for e in fixture.seats)
            self._running.pop(match_id, None)
            if self._release is not None:
                for entrant in fixture.seats:
                    if entrant.remote:
                        self._release(entrant.label, match_id)
            self._wake.set()

    async def _referee(
        self,
        fixture: LeagueFixture,
        match_id: str,
        record_path: Path | None,
        rerun: int | None,
        resume: JournalState | None,
        ahead: AheadMatch | None,
    ) -> tuple[MatchResult, str]:
        """Referee a match here, or on a referee of the pool when the pool takes it (and it is not resumed: a resumed
        match goes on where its journal is; nor seated ahead: its seats started here); its result and the node whose
        referee played it."""
        pool = self._referees if resume is None and ahead is None and self._referees is not None and self._referees.takes(fixture) else None
        order = self._order(fixture, match_id, record_path)

        remote, withdraw = functools.partial(self._hand_out, fixture), functools.partial(self._withdraw_seat, fixture)

        def on_seated() -> None:
            if fixture.index not in self._scheduled:
                self._schedule(fixture, rerun)

        on_hosted = self._hosting[match_id].set if match_id in self._hosting else None
        if pool is None:
            journal = self._journals.path(match_id)
            result = await play_league_match(
                self.server, order, launcher=self._launcher, remote=remote, withdraw=withdraw, on_seated=on_seated,
                journal=journal, resume=resume, on_hosted=on_hosted, go=None if ahead is None else ahead.go,
                on_first_request=lambda at: self._refills.first_request(match_id, at),
            )  # fmt: skip
            return result, self._node
        nodes = [""]
        result = await pool.play(
            self.server, order, launcher=self._launcher, remote=remote, withdraw=withdraw, on_seated=on_seated,
            on_hosted=on_hosted, on_node=nodes.append,
        )  # fmt: skip
        return result, nodes[-1] or self._node

    def _drop_or_void(self, fixture: LeagueFixture, match_id: str, players: int, status: MatchStatus, record: Path | None = None) -> None:
        """A match that did not finish: void when it was in the schedule; else no match at all, its index free again.

        An offer called off before every remote bot took its seat is no match: nothing public is
        left of it, its record file included (a bot that joins and declines costs no more than
        its pause).
        """
        if fixture.index in self._scheduled:
            self._record_void(fixture.index, match_id, players, status, record)
            self.metrics.match_ended(status)
        else:
            self.metrics.match_withdrawn()
            bisect.insort(self._free_indices, fixture.index)
            if record is not None:
                with contextlib.suppress(OSError):
                    record.unlink(missing_ok=True)

    def _job(self, fixture: LeagueFixture, match_id: str) -> MatchJob:
        """A fixture of uploaded versions only, as the executor plays it (their bots' seeds as on the league's referee)."""
        bots = tuple(entrant.submission for entrant in fixture.seats if entrant.submission is not None)
        config = self.config
        return MatchJob(
            bots, config.rules, fixture.seed, config.time, config.game, config.seat_kind, config.trusted, config.limits, match_id
        )

    def _order(self, fixture: LeagueFixture, match_id: str, record_path: Path | None) -> PlayOrder:
        """A fixture as the league's referee (or a referee process) plays it."""
        config = self.config
        return PlayOrder(
            match_id, fixture, config.rules, config.time, config.limits, config.trusted, record_path, config.game, config.reattach_grace_s
        )

    async def _hand_out(self, fixture: LeagueFixture, seat: int, match_id: str, token: str) -> bool:
        if self._assign is None:
            return False
        label = fixture.seats[seat].label
        taken = await self._assign(label, seat, match_id, token)
        if taken:
            self._strikes.pop(label, None)
        return taken

    def _withdraw_seat(self, fixture: LeagueFixture, seat: int, match_id: str, reason: str) -> None:
        if self._withdraw is not None:
            self._withdraw(fixture.seats[seat].label, match_id, reason)

    def _strike(self, label: str, match_id: str) -> None:
        """``label`` did not take its seat in ``match_id``: leave it out for a while (longer after a few in a row), and say why."""
        self._strikes[label] += 1
        strikes = self._strikes[label]
        config = self.config
        if strikes >= config.pause_after:
            seconds = config.pause_s
            reason = f"{strikes} assignments in a row declined or not answered (the last: match {match_id})"
        else:
            seconds = config.decline_pause_s
            reason = f"match {match_id} declined or not answered"
        self._declined[label] = time.monotonic() + seconds
        if self._pause is not None:
            self._pause(label, seconds, f"{reason}: no match is offered for {seconds:g} s")

    def _rate(self, current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, Rating]:
        before = [current.get(label) or self.env.initial for label in seats]
        return dict(zip(seats, rate_match(self.env, before, places), strict=True))

    def _record(self, index: int, result: MatchResult, duration_s: float, node: str) -> None:
        """Store a played match: rated when finished, void (and final) otherwise."""
        try:
            store_result(self.store.arena, self.tournament_id, index, result, self._rate, duration_s, final=True, node=node)
        except (StoreError, ValueError):
            log.exception("ladder: the result of match %s could not be stored", result.match_id)
            return
        if self._on_recorded is not None:
            self._on_recorded(index, result.status)

    def _record_void(self, index: int, match_id: str, players: int, status: MatchStatus, record_path: Path | None = None) -> None:
        """Give a fixture that was not played to its end its final, unrated result (with its record when one was written)."""
        record = None
        if record_path is not None:
            with contextlib.suppress(RecordFileError):
                record = read_record(record_path) if record_path.exists() else None
        try:
            self.store.arena.record_result(
                self.tournament_id,
                index,
                match_id=match_id,
                status=status,
                places=None,
                totals=[0] * players,
                faults=[{}] * players,
                hands=0,
                rate=self._rate,
                record=record,
                record_path=record_path if record is not None else None,
                final=True,
            )
        except (StoreError, ValueError):
            log.exception("ladder: the void result of match %s could not be stored", match_id)
            return
        if self._on_recorded is not None:
            self._on_recorded(index, status)
