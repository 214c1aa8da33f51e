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
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polignac.bots import BUILTIN_BOTS
from polignac_arena.executors import Executor, MatchJob, executor_for
from polignac_arena.games import GameRefused, check_seating
from polignac_arena.plaintext import plain
from polignac_arena.ratings import Rating, RatingEnv, new_version, rate_duplicate, rate_result
from polignac_arena.referee import MatchResult
from polignac_arena.schedule import Fixture, duplicate, ladder_next, match_seed, round_robin
from polignac_arena.seats import SeatKind, launcher_for
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


def config_record(config: TournamentConfig) -> dict[str, Any]:
    """What defines a tournament (compared on --resume): everything but the parallelism."""
    return {
        "entrants": list(config.entrants),
        "format": config.format,
        "table_size": config.table_size,
        "rounds": config.rounds,
        "matches": config.matches,
        "seed": str(config.seed),
        "rules": config.rules.to_dict(),
        "time": {"move_ms": config.time.move_ms, "bank_ms": config.time.bank_ms, "startup_ms": config.time.startup_ms},
        "seats": {"kind": config.seat_kind.value, "trusted": config.trusted, "limits": vars(config.limits).copy()},
        "trueskill": vars(config.trueskill).copy(),
    }


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
        if config.seat_kind is SeatKind.INPROCESS and not submission.builtin:
            problems.append(f"entrant {entrant!r}: in-process seats run only the built-in bots; use seats kind 'process' or 'docker'")
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
    if entrant in BUILTIN_BOTS:
        return builtin_submission(entrant)
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
) -> TournamentRun:
    """Run ``config`` to its end (or finish it with ``resume``); results and ratings go to ``store``.

    ``executor``: where the matches are played (default: the file's ``[executor]``, started
    and closed here; one passed in is started by its owner).
    """
    owned = executor is None
    executor = executor or executor_for(config.executor)
    if executor.kind == "local":  # a cluster's nodes judge for themselves
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
        if config.format == "round-robin":
            fixtures: list[Fixture] = round_robin(keys, config.table_size, config.rounds, config.seed)
        elif config.format == "duplicate":
            fixtures = duplicate(keys, config.table_size, config.rounds, config.seed)
        else:
            fixtures = []
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
    rate: RateFunction | GroupRate = GroupRate(rate_deal) if config.format == "duplicate" else rate_one

    total = config.matches if config.format == "ladder" else len(store.fixtures(tournament_id))
    so_far = store.progress(tournament_id)
    done = so_far.done
    running = 0
    faults = sum(so_far.faults.values())
    nodes: dict[str, int] = {}
    if progress:
        progress("start", done, total, 0, faults, nodes)

    async def play(fixture_index: int, seats: Sequence[str], seed: int) -> None:
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
        except Exception as exc:  # a match that cannot run is recorded as an error and retried on --resume
            outcome.failed += 1
            running -= 1
            print(plain(f"match {fixture_index} could not run: {exc}"))  # the error may quote a bot's build
            return
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

    slots = asyncio.Semaphore(width)

    async def guarded(fixture_index: int, seats: Sequence[str], seed: int) -> None:
        async with slots:
            await play(fixture_index, seats, seed)

    try:
        if config.format == "ladder":
            await _run_ladder(config, store, tournament_id, keys, env, width, guarded)
        else:
            await _all(guarded(f.index, f.seats, f.seed) for f in store.pending_fixtures(tournament_id))
    except BaseException:  # cancelled (SIGTERM, Ctrl-C) or failed: what is stored stays, --resume finishes
        store.set_status(tournament_id, TournamentStatus.STOPPED)
        raise
    if store.progress(tournament_id).pending == 0 and (config.format != "ladder" or len(store.fixtures(tournament_id)) >= config.matches):
        store.set_status(tournament_id, TournamentStatus.FINISHED)
    else:
        store.set_status(tournament_id, TournamentStatus.STOPPED)
    if progress:
        progress("end", done, total, 0, faults, nodes)
    return outcome


async def _run_ladder(
    config: TournamentConfig,
    store: Store,
    tournament_id: int,
    keys: list[str],
    env: RatingEnv,
    width: int,
    play: Callable[[int, Sequence[str], int], Any],
) -> None:
    """Draw tables in waves of ``width`` from the ratings so far, until the match budget is spent."""
    pending = store.pending_fixtures(tournament_id)
    if pending:  # a resumed ladder first replays what was drawn but not played
        await _all(play(f.index, f.seats, f.seed) for f in pending)
    while (drawn := len(store.fixtures(tournament_id))) < config.matches:
        ratings = {**store.ratings(tournament_id)}
        games: dict[str, int] = dict.fromkeys(keys, 0)
        last: frozenset[str] | None = None
        for fixture in store.fixtures(tournament_id):
            for key in fixture.seats:
                games[key] = games.get(key, 0) + 1
            last = frozenset(fixture.seats)
        wave = []
        for offset in range(min(width, config.matches - drawn)):
            index = drawn + offset
            seats = ladder_next(keys, config.table_size, ratings, games, last, config.seed + index, env)
            for key in seats:
                games[key] += 1
            last = frozenset(seats)
            wave.append(Fixture(index, seats, match_seed(config.seed, index), index))
        store.add_fixtures(tournament_id, wave)
        await _all(play(f.index, f.seats, f.seed) for f in wave)
        if store.progress(tournament_id).pending:
            return  # matches failed: stop here, --resume plays them again


async def _all(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run the matches together; if one fails, stop the others and wait for them before raising.

    (A bare gather would leave the others running; asyncio.run then cancels every task at
    once, servers' included, and can hang.)
    """
    async with asyncio.TaskGroup() as group:
        for coroutine in coroutines:
            group.create_task(coroutine)


def store_result(
    store: Store,
    tournament_id: int,
    index: int,
    result: MatchResult,
    rate: Any,
    duration_s: float,
    *,
    final: bool | None = None,
    node: str | None = None,
) -> None:
    """Store a played match as fixture ``index``'s result, with its record, hands and penalty points.

    ``final`` and ``node`` are as in :meth:`~polignac_arena.store.Store.record_result`.
    """
    hands = [line for line in result.record if line.get("type") == "hand_ended" and not line.get("tiebreak")]
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
        penalties=[sum(line["scores"][seat] for line in hands) for seat in range(len(result.totals))],
        record=result.record,
        duration_s=duration_s,
        final=final,
        node=node,
    )
