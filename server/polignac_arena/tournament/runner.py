"""Run a tournament: resolve its entrants, schedule it, hand the matches to an executor, store every
result exactly once with its rating update, and pick up where a killed run stopped.

Matches are handed out ``parallel`` at a time to an executor (:mod:`polignac_arena.executors`):
``local`` plays each with its own referee and its bots as processes or containers on this
machine; ``ray`` plays them on the nodes of a Ray cluster.  Results come back here and are
stored here, so the executor changes where matches run, never what is stored.
Ratings are applied by the store strictly in schedule order, whatever order matches end in,
so ``--parallel 1`` and ``--parallel 2`` give the same leaderboard.  The ladder format is the
exception: its next tables depend on the ratings when they are drawn, so its schedule depends
on the parallelism (it is deterministic for a given ``parallel``).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from polignac.jsontypes import JsonObject
from polignac_arena.executors import ClusterLost, Executor, MatchJob, WaitHook, executor_for
from polignac_arena.games import GameRefused, check_seating
from polignac_arena.matchmaking import Meetings
from polignac_arena.plaintext import plain
from polignac_arena.ratings import Rating, RatingEnv, conservative, new_version, rate_duplicate, rate_result, stronger_probability
from polignac_arena.record_lines import HandEndedLine
from polignac_arena.referee import MatchResult
from polignac_arena.runner import BotSpecError, builtin_name
from polignac_arena.schedule import Fixture, duplicate, extra_round, ladder_next, match_seed, round_robin
from polignac_arena.seats import SeatKind, launcher_for
from polignac_arena.seats.folder_bot import folder_refusal
from polignac_arena.settings import ExecutorKind, TournamentFormat
from polignac_arena.statuses import MatchStatus, TournamentStatus
from polignac_arena.store import ConflictError, GroupRate, GroupResults, RateFunction, Store
from polignac_arena.submission import Submission, SubmissionError, builtin_submission, content_digest, load_submission
from polignac_arena.tournament.config import TournamentConfig

__all__ = ["EntrantError", "TournamentRun", "config_record", "rating_env", "resolve_entrants", "run_tournament", "store_result"]


class EntrantError(ValueError):
    """An entrant that names no usable bot."""


def rating_env(config: TournamentConfig) -> RatingEnv:
    """The TrueSkill environment of a tournament."""
    ts = config.trueskill
    return RatingEnv(mu=ts.mu, sigma=ts.sigma, beta=ts.beta, tau=ts.tau, draw_probability=ts.draw_probability)


def config_record(config: TournamentConfig) -> JsonObject:
    """What defines a tournament (compared on --resume): everything but the parallelism."""
    record: JsonObject = {
        "entrants": list(config.entrants),
        "format": config.format,
        "table_size": config.table_size,
        "rounds": config.rounds,
        "matches": config.matches,
        "seed": str(config.seed),
        "rules": config.rules.stored_dict(),
        "time": {"move_ms": config.time.move_ms, "bank_ms": config.time.bank_ms, "startup_ms": config.time.startup_ms},
        "seats": {"kind": config.seat_kind.value, "trusted": config.trusted, "limits": vars(config.limits).copy()},
        "trueskill": vars(config.trueskill).copy(),
    }
    return record | _schedule_record(config)


def _schedule_record(config: TournamentConfig) -> JsonObject:
    """The ``[schedule]`` settings when set (left out otherwise, so tournaments stored before them still resume)."""
    if config.until_separated is None:
        return {}
    return {"schedule": {"until_separated": config.until_separated, "max_matches": config.max_matches}}


def resolve_entrants(config: TournamentConfig, store: Store) -> dict[str, Submission]:
    """Each entrant as a validated submission registered in the store, by key ``name@version``."""
    found: dict[str, Submission] = {}
    problems = []
    for entrant in config.entrants:
        try:
            submission = _resolve(entrant, config.base_dir, store)
            digest = "builtin" if submission.builtin else content_digest(submission.path)
        except (EntrantError, SubmissionError) as exc:
            problems.append(f"entrant {entrant!r}: {exc}")
            continue
        key = f"{submission.name}@{submission.version}"
        if config.seat_kind is SeatKind.INPROCESS and (refused := folder_refusal(submission, config.trusted)) is not None:
            problems.append(f"entrant {entrant!r}: {refused}")
            continue
        if key in found:
            problems.append(f"entrant {entrant!r} is {key}, like another entrant: give each bot its own name or version")
            continue
        try:
            store.add_bot(submission.name, submission.version, submission.path, digest, submission.language)
        except ConflictError as exc:
            problems.append(f"entrant {entrant!r}: {exc}")
            continue
        found[key] = submission
    if problems:
        raise EntrantError("\n".join(problems))
    return found


def _resolve(entrant: str, base: Path, store: Store) -> Submission:
    try:
        builtin = builtin_name(entrant, base / entrant)
    except BotSpecError as exc:
        raise EntrantError(str(exc)) from None
    if builtin is not None:
        return builtin_submission(builtin)
    path = (base / entrant).resolve()
    if path.is_dir():
        return load_submission(path)
    name, _, version = entrant.partition("@")
    bot = store.get_bot(name, version or None)
    if bot is None:
        raise EntrantError(f"no folder {str(path)!r}, no built-in bot, and no registered bot of that name (polignac bot list)")
    return load_submission(bot.path)


def _priors(keys: Sequence[str], store: Store, env: RatingEnv) -> dict[str, Rating]:
    """A bot's latest rating; a new version of a known bot keeps its mu with a fresh sigma."""
    latest = store.latest_ratings()
    priors: dict[str, Rating] = {}
    for key in keys:
        if key in latest:
            priors[key] = Rating(*latest[key])
            continue
        name = key.rsplit("@", 1)[0]
        older = [rating for other, rating in latest.items() if other.rsplit("@", 1)[0] == name]
        if older:
            priors[key] = Rating(*new_version(env, older[-1]))
    return priors


@dataclass
class TournamentRun:
    """The outcome of :func:`run_tournament`."""

    tournament_id: int
    played: int = 0
    failed: int = 0
    already_finished: bool = False
    faults: dict[str, int] = field(default_factory=dict)
    stop_reason: str = ""
    """Why a tournament that plays on until it knows (``until_separated``) stopped: separated, or its budget spent."""


ProgressHook = Callable[[str, int, int, int, int, Mapping[str, int]], None]
"""``hook(event, done, total, running, faults, nodes)`` with event "start", "match" or "end";
``nodes``: the matches each node has played in this run."""


async def run_tournament(
    config: TournamentConfig,
    store: Store,
    *,
    parallel: int | None = None,
    resume: bool = False,
    progress: ProgressHook | None = None,
    record_dir: Path | None = None,
    executor: Executor | None = None,
    on_wait: WaitHook | None = None,
) -> TournamentRun:
    """Run ``config`` to its end (or finish it with ``resume``); results and ratings go to ``store``.

    ``executor``: where the matches are played (default: the file's ``[executor]``, started
    and closed here; one passed in is started by its owner).  ``on_wait``: told while no node of
    a cluster can take a match (for the executor made here).  A cluster that is lost
    (:class:`ClusterLost`) ends the run: the tournament is left stopped and the error raised.
    """
    owned = executor is None
    executor = executor or executor_for(config.executor, on_wait=on_wait)
    if executor.kind is ExecutorKind.LOCAL:  # a cluster's nodes judge for themselves
        launcher = launcher_for(config.seat_kind)
        reason = launcher.unavailable() or launcher.refusal(config.trusted)
        if reason is not None:
            raise EntrantError(f"{config.seat_kind.value} seats cannot run this tournament here: {reason}")
    entrants = resolve_entrants(config, store)
    try:
        check_seating(entrants.values(), config.game)
    except GameRefused as exc:
        raise EntrantError(f"tournament {config.name!r} plays {config.game}: {exc}") from None
    keys = list(entrants)
    env = rating_env(config)
    existing = store.get_tournament(config.name)
    if existing is not None and not resume and existing.status is not TournamentStatus.FINISHED:
        raise ConflictError(
            f"tournament {config.name!r} already exists in this store and is not finished: add --resume to finish it"
            " (or rename the tournament)"
        )
    # Started before anything is stored, so a cluster that cannot be reached leaves no tournament behind.
    started = owned and (existing is None or existing.status is not TournamentStatus.FINISHED)
    if started:
        await executor.start()
    try:
        fixtures: list[Fixture] = []
        if existing is None:  # a stored schedule is read back, never drawn again (create_tournament checks the config)
            if config.format is TournamentFormat.ROUND_ROBIN:
                fixtures = round_robin(keys, config.table_size, config.rounds, config.seed)
            elif config.format is TournamentFormat.DUPLICATE:
                fixtures = duplicate(keys, config.table_size, config.rounds, config.seed)
        tournament_id = store.create_tournament(
            config.name, config_record(config), fixtures, source=config.source, initial_ratings=_priors(keys, store, env)
        )
        stored = store.get_tournament(tournament_id)
        if stored is not None and stored.status is TournamentStatus.FINISHED:
            return TournamentRun(tournament_id, already_finished=True)
        width = parallel or config.parallel
        return await _play_all(config, store, tournament_id, keys, entrants, env, executor, width, progress, record_dir)
    finally:
        if started:
            await executor.close()


async def _play_all(
    config: TournamentConfig,
    store: Store,
    tournament_id: int,
    keys: list[str],
    entrants: Mapping[str, Submission],
    env: RatingEnv,
    executor: Executor,
    width: int,
    progress: ProgressHook | None,
    record_dir: Path | None,
) -> TournamentRun:
    """Play the tournament's pending matches on ``executor``, ``width`` at a time, storing each result."""
    outcome = TournamentRun(tournament_id)
    store.set_status(tournament_id, TournamentStatus.RUNNING)
    priors = {key: rating for key, rating in store.ratings(tournament_id).items()}

    def rate_one(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, Rating]:
        return rate_result(env, {**priors, **current}, dict(zip(seats, places, strict=True)))

    def rate_deal(before: Mapping[str, tuple[float, float]], results: GroupResults) -> dict[str, Rating]:
        return rate_duplicate(env, {**priors, **before}, results)

    # Duplicate deals are scored as duplicates: a deal's rotations are compared with each other (docs/ratings.md).
    rate: RateFunction | GroupRate = GroupRate(rate_deal) if config.format is TournamentFormat.DUPLICATE else rate_one

    so_far = store.progress(tournament_id)
    total = config.matches if config.format is TournamentFormat.LADDER else config.max_matches or so_far.total
    done = so_far.done
    running = 0
    faults = sum(so_far.faults.values())
    nodes: dict[str, int] = {}
    if progress:
        progress("start", done, total, 0, faults, nodes)

    async def play(fixture_index: int, seats: Sequence[str], seed: int) -> bool:
        """Play one fixture and store its result; whether it got its final result."""
        nonlocal done, running, faults
        running += 1
        started = time.monotonic()
        job = MatchJob(
            tuple(entrants[key] for key in seats),
            config.rules,
            seed,
            config.time,
            config.game,
            SeatKind(config.seat_kind),
            config.trusted,
            config.limits,
            f"{config.name}-{fixture_index:05d}-{seed % 10**6:06d}",
        )
        try:
            played = await executor.play(job, None if record_dir is None else record_dir / f"{config.name}-{fixture_index:05d}.jsonl")
        except ClusterLost:  # not this match's fault: the run ends, --resume plays it
            running -= 1
            raise
        except Exception as exc:  # a match that cannot run is recorded as an error and retried on --resume
            outcome.failed += 1
            running -= 1
            print(plain(_could_not_run(fixture_index, str(exc))))  # the error may quote a bot's build
            return False
        for line in played.builds:
            print(plain(line))  # a build's reason is the arena's, but its label is the bot's
        result = played.result
        nodes[played.node] = nodes.get(played.node, 0) + 1
        running -= 1
        store_result(store, tournament_id, fixture_index, result, rate, time.monotonic() - started, node=played.node)
        if result.status is MatchStatus.FINISHED:
            done += 1
            outcome.played += 1
            for seat_faults in result.faults:
                for kind, count in seat_faults.items():
                    outcome.faults[kind] = outcome.faults.get(kind, 0) + count
                    faults += count
        else:
            outcome.failed += 1
        if progress:
            progress("match", done, total, running, faults, nodes)
        return result.status is MatchStatus.FINISHED

    first_seen: dict[str, int] = {}

    def _could_not_run(index: int, error: str) -> str:
        """The error once in full (a failed build's log), then by reference: every match of that bot fails alike."""
        if (earlier := first_seen.setdefault(error, index)) != index:
            return f"match {index} could not run: the same error as match {earlier}, above"
        return f"match {index} could not run: {error}"

    slots = asyncio.Semaphore(width)

    async def guarded(fixture_index: int, seats: Sequence[str], seed: int) -> bool:
        async with slots:
            return await play(fixture_index, seats, seed)

    try:
        if config.format is TournamentFormat.LADDER:
            complete, outcome.stop_reason = await _run_ladder(config, store, tournament_id, keys, env, width, guarded)
        else:
            complete, outcome.stop_reason = await _run_rounds(config, store, tournament_id, keys, guarded)
    except BaseException:  # cancelled (SIGTERM, Ctrl-C) or failed: what is stored stays, --resume finishes
        store.set_status(tournament_id, TournamentStatus.STOPPED)
        raise
    store.set_status(tournament_id, TournamentStatus.FINISHED if complete else TournamentStatus.STOPPED)
    if progress:
        progress("end", done, total, 0, faults, nodes)
    return outcome


Play = Callable[[int, Sequence[str], int], Coroutine[object, object, bool]]
"""``play(index, seats, seed)``: play a fixture and store its result; whether it got its final result."""


def unseparated(ratings: Mapping[str, tuple[float, float]], keys: Sequence[str], confidence: float) -> list[tuple[str, str, float]]:
    """The neighbours on the leaderboard (by conservative rating) not ordered with ``confidence``: (upper, lower, P(upper stronger)).

    An entrant without a rating yet is never separated from its neighbours.
    """
    if any(key not in ratings for key in keys):
        return [(key, key, 0.5) for key in keys if key not in ratings]
    board = sorted(keys, key=lambda key: (-conservative(*ratings[key]), -ratings[key][0], key))
    pairs = [(upper, lower, stronger_probability(ratings[upper], ratings[lower])) for upper, lower in itertools.pairwise(board)]
    return [pair for pair in pairs if pair[2] < confidence]


def _separated(config: TournamentConfig, store: Store, tournament_id: int, keys: Sequence[str], played: int) -> str:
    """Why the tournament may stop now (every neighbour separated), or "" if it may not."""
    assert config.until_separated is not None
    if unseparated(store.ratings(tournament_id), keys, config.until_separated):
        return ""
    return f"stopped after {played} matches: every two neighbours on the leaderboard are ordered at {config.until_separated:g}"


def _over_budget(config: TournamentConfig, store: Store, tournament_id: int, keys: Sequence[str], played: int) -> str:
    assert config.until_separated is not None
    open_pairs = unseparated(store.ratings(tournament_id), keys, config.until_separated)
    shown = ", ".join(f"{upper} / {lower} ({p:.2f})" for upper, lower, p in open_pairs[:3]) + (", ..." if len(open_pairs) > 3 else "")
    return (
        f"stopped after {played} matches, the budget spent: {len(open_pairs)} neighbour pair(s)"
        f" not ordered at {config.until_separated:g}: {shown}"
    )


async def _run_rounds(config: TournamentConfig, store: Store, tournament_id: int, keys: list[str], play: Play) -> tuple[bool, str]:
    """Play the stored schedule's pending fixtures; with ``until_separated``, then add a round at a time until
    the neighbours are separated or the next round would pass the budget.  Whether it is complete, and why it stopped."""
    if not await _all(play(f.index, f.seats, f.seed) for f in store.pending_fixtures(tournament_id)):
        return False, ""
    if config.until_separated is None:
        return True, ""
    assert config.max_matches is not None
    stored = store.fixtures(tournament_id)
    count, groups = len(stored), (stored[-1].group + 1 if stored else 0)
    while not (reason := _separated(config, store, tournament_id, keys, count)):
        more = extra_round(keys, config.table_size, config.seed, count, groups, replays=config.format is TournamentFormat.DUPLICATE)
        if count + len(more) > config.max_matches:
            return True, _over_budget(config, store, tournament_id, keys, count)
        store.add_fixtures(tournament_id, more)
        count, groups = count + len(more), more[-1].group + 1
        if not await _all(play(f.index, f.seats, f.seed) for f in more):
            return False, ""
    return True, reason


async def _run_ladder(
    config: TournamentConfig, store: Store, tournament_id: int, keys: list[str], env: RatingEnv, width: int, play: Play
) -> tuple[bool, str]:
    """Draw tables in waves of ``width`` from the ratings so far, until the match budget is spent (or, with
    ``until_separated``, the neighbours are separated).  Whether it is complete, and why it stopped early.

    The stored schedule is read once; each wave adds its tables to the meetings kept here.
    """
    pending = store.pending_fixtures(tournament_id)
    if pending and not await _all(play(f.index, f.seats, f.seed) for f in pending):  # a resumed ladder first replays what was drawn
        return False, ""
    drawn = store.fixtures(tournament_id)
    meetings = Meetings(f.seats for f in drawn)
    last = frozenset(drawn[-1].seats) if drawn else None
    count = len(drawn)
    while count < config.matches:
        if config.until_separated is not None and (reason := _separated(config, store, tournament_id, keys, count)):
            return True, reason
        ratings = store.ratings(tournament_id)
        wave = []
        for index in range(count, min(count + width, config.matches)):
            seats = ladder_next(keys, config.table_size, ratings, meetings.games, last, config.seed + index, env, meetings=meetings)
            meetings.record(seats)
            last = frozenset(seats)
            wave.append(Fixture(index, seats, match_seed(config.seed, index), index))
        store.add_fixtures(tournament_id, wave)
        count += len(wave)
        if not await _all(play(f.index, f.seats, f.seed) for f in wave):
            return False, ""  # matches failed: stop here, --resume plays them again
    if config.until_separated is not None:
        return True, _separated(config, store, tournament_id, keys, count) or _over_budget(config, store, tournament_id, keys, count)
    return True, ""


async def _all(coroutines: Iterable[Coroutine[object, object, bool]]) -> bool:
    """Run the matches together, whether all of them got their final result; if one raises, stop the others
    and wait for them before raising.

    (A bare gather would leave the others running; asyncio.run then cancels every task at
    once, servers' included, and can hang.)
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(coroutine) for coroutine in coroutines]
    except BaseExceptionGroup as failed:
        if (lost := failed.subgroup(ClusterLost)) is not None:  # every match in hand fails alike: one says why
            raise _first(lost) from None
        raise
    return all(task.result() for task in tasks)


def _first(group: BaseExceptionGroup[ClusterLost]) -> ClusterLost:
    inner = group.exceptions[0]
    return inner if isinstance(inner, ClusterLost) else _first(inner)


def store_result(
    store: Store,
    tournament_id: int,
    index: int,
    result: MatchResult,
    rate: RateFunction | GroupRate,
    duration_s: float,
    *,
    final: bool | None = None,
    node: str | None = None,
) -> None:
    """Store a played match as fixture ``index``'s result, with its record, hands and penalty points.

    ``final`` and ``node`` are as in :meth:`~polignac_arena.store.Store.record_result`.
    """
    hands = [line for line in result.lines if isinstance(line, HandEndedLine) and not line.tiebreak]
    store.record_result(
        tournament_id,
        index,
        match_id=result.match_id,
        status=result.status,
        places=result.places,
        totals=result.totals,
        faults=result.faults,
        hands=len(hands),
        rate=rate,
        penalties=[sum(line.scores[seat] for line in hands) for seat in range(len(result.totals))],
        record=result.record,
        duration_s=duration_s,
        final=final,
        node=node,
    )
