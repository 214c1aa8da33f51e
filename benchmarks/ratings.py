"""Ratings benchmark: how many matches the schedules and ratings need to find a known order.

Run ``python benchmarks/ratings.py`` for a table, ``--json`` for one JSON object, ``--quick``
for a smoke run (a few seconds), ``--seeds N`` to choose the number of seeds.

**The bots.**  A bot of level p is the built-in heuristic bot that replaces each decision
(the auction's too) by a uniformly random legal one with probability p; levels 0, 0.2, ...,
1.0 (six bots) for the round robin and duplicate runs, 12 levels from 0 to 1 for the ladders.
The lower p, the stronger the bot: that is the true order.  Two families:

- ``random-play``: the coin and the random choice come from the bot's own generator, so
  the same deal in the same seats plays out differently each time;
- ``deterministic``: both come from a hash of what the seat sees (its hand, the tricks, the
  totals...), so the same deal in the same seats always gives the same match: the deal is
  then the main luck, which duplicate deals should cancel.

**The simulation.**  Matches are the expensive part (tens of ms each), so each is played
once, in-process (:func:`polignac_arena.players.play_local`), into a pool, and reused.  For
a table composition (a set of 4 bots) the pool holds up to ``--pool`` *deals*, each with a
seating drawn from the deal's number and its 4 rotations (in rotation r the bot of seat j
moves to seat j + r, as :func:`polignac_arena.schedule.duplicate` rotates them); a
rotation is played only when a run first draws it.  A run (one seed, one schedule) takes
its fixtures from the project's own schedules (:func:`~polignac_arena.schedule.round_robin`,
:func:`~polignac_arena.schedule.duplicate`, :func:`~polignac_arena.schedule.ladder_next`
replayed as the tournament runner does at parallel 1, and the league's
:func:`~polignac_arena.league.table_pick.pick_table` as its loop calls it, one match at a time,
with its default window and rate factor) and gives each fixture a result drawn
from the pool for its composition, with a generator seeded by the run: a round-robin or
ladder fixture gets a random (deal, rotation), a duplicate group a random deal whose 4
rotations are its 4 fixtures.  So a duplicate group is a real duplicate (one deal, every
bot holding every hand), the draws of a composition are independent samples of its result
(with replacement from the pool: runs share the pool, so seeds are not fully independent;
a larger ``--pool`` makes them more so), and the schedule's own seats and deal seeds are
replaced by the pool's (its random seatings balance the seats on average).  Every run is
rated with today's parameters (every match rated alone) and with the shipped ones (the
league with its drift; duplicate deals scored as duplicates, each deal's rotations rated as
the store rates a ``GroupRate``), on the same results.

**The measure.**  After every match the bots are ordered as the leaderboard orders them
(conservative rating mu - 3 sigma, ties by name) and compared with the true order by
Kendall tau; a run's figure is the number of matches after which tau stays >= 0.9 until
the end of the run (None when it is below 0.9 at the end).  With 6 bots tau >= 0.9 means
the exact order; with 12, at most 3 of the 66 pairs swapped.  Reported: the median over
seeds (None if more than half never settle) and the share of seeds that settle; for the
ladders also the share of seeds that end in exactly the true order, and for each seed the
matches after which its order stays exactly the true one (``exact_from``).  With 12 levels
the weakest neighbours finish above each other in only about 55 % of their meetings, so a
ladder needs about two thousand matches before every seed's order is exact: the default run
is 2,400 matches.

``place_variance`` splits the variance of a bot's place over the pool's complete duplicate
deals into the bots' share (the signal), the seats' (the deal's luck, which duplicate
scoring cancels) and the rest (the play's own interaction, which it does not): it bounds
what duplicate deals can save.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polignac import Decision, PlayerView, Ruleset, preset
from polignac.bots import HeuristicBot
from polignac_arena.league.config import LEAGUE_TRUESKILL
from polignac_arena.league.entrants import Entrant
from polignac_arena.league.table_pick import pick_table
from polignac_arena.matchmaking import Meetings
from polignac_arena.players import play_local
from polignac_arena.ratings import TRUESKILL_DEFAULTS, Rating, RatingEnv, conservative, rate_duplicate, rate_result
from polignac_arena.schedule import duplicate, ladder_next, round_robin, round_size
from polignac_arena.submission import builtin_submission
from polignac_arena.tournament.config import TrueSkillSettings

FAMILIES = ("random-play", "deterministic")
TABLE = 4
TODAY = TRUESKILL_DEFAULTS
"""The parameters before they were fitted to the game: TrueSkill's own defaults, every match rated alone."""


def shipped_env() -> RatingEnv:
    """The parameters a tournament file gets by default."""
    return RatingEnv(**vars(TrueSkillSettings()))


def league_env(env: RatingEnv) -> RatingEnv:
    """``env`` with a league's default drift (the shipped league's parameters, for ``env`` the shipped ones)."""
    return dataclasses.replace(env, tau=LEAGUE_TRUESKILL.tau)


# -- the bots -----------------------------------------------------------------------------


def _unit(text: str) -> tuple[float, float]:
    """Two numbers in [0, 1) from a hash of ``text``: the same on every machine and run."""
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    return int.from_bytes(digest[:8], "big") / 2**64, int.from_bytes(digest[8:], "big") / 2**64


class NoisyBot:
    """The heuristic bot, replacing each decision by a random legal one with probability ``p``."""

    def __init__(self, p: float, family: str, rng_seed: str) -> None:
        self.p = p
        self.family = family
        self.rng = random.Random(rng_seed)
        self.heuristic = HeuristicBot()

    def decide(self, view: PlayerView) -> Decision:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if self.family == "random-play":
            coin, pick = self.rng.random(), self.rng.random()
        else:
            # What the seat sees, not the bot's level: a weaker bot randomises a superset of a stronger one's decisions.
            seen = (view.seat, view.hand_number, view.phase.value, view.hand, view.tricks, view.current_trick, view.totals, view.auction)
            coin, pick = _unit(repr(seen))
        if coin < self.p:
            return legal[int(pick * len(legal))]
        return self.heuristic.decide(view)


# -- the pool of played matches -------------------------------------------------------------

Key = tuple[str, tuple[float, ...], int, int]
"""(family, the composition's levels sorted, deal number, rotation)."""


def base_seating(levels: tuple[float, ...], deal: int) -> list[float]:
    """The seating of rotation 0 of a pool deal."""
    seating = list(levels)
    random.Random(f"ratings-bench/seating/{levels}/{deal}").shuffle(seating)
    return seating


def seating(key: Key) -> list[float]:
    """The levels by seat in a pool match: rotation r of its deal's seating."""
    _, levels, deal, rotation = key
    base = base_seating(levels, deal)
    k = len(base)
    return [base[(i - rotation) % k] for i in range(k)]


def play_key(rules: Ruleset, key: Key) -> tuple[int, ...]:
    """The places of the levels (in the composition's sorted order) in one pool match."""
    family, levels, deal, rotation = key
    seats = seating(key)
    seed = int.from_bytes(hashlib.sha256(f"ratings-bench/deal/{levels}/{deal}".encode()).digest()[:8], "big")
    bots = [NoisyBot(p, family, f"ratings-bench/{family}/{levels}/{deal}/{rotation}/{i}") for i, p in enumerate(seats)]
    match = play_local(rules, seed, bots)
    assert match.places is not None
    return tuple(match.places[seats.index(p)] for p in levels)


_RULES: Ruleset | None = None


def _init_worker(rules: Ruleset) -> None:
    global _RULES
    _RULES = rules


def _play_batch(keys: list[Key]) -> list[tuple[int, ...]]:
    assert _RULES is not None
    return [play_key(_RULES, key) for key in keys]


class Pool:
    """Played matches by key; :meth:`fill` plays the missing ones, in ``workers`` processes."""

    def __init__(self, rules: Ruleset, workers: int) -> None:
        self.rules = rules
        self.workers = workers
        self.results: dict[Key, tuple[int, ...]] = {}
        self.played = 0

    def fill(self, keys: Iterable[Key]) -> None:
        missing = sorted({key for key in keys if key not in self.results})
        if not missing:
            return
        if self.workers == 1 or len(missing) < 4:
            played = [play_key(self.rules, key) for key in missing]
        else:
            size = max(1, math.ceil(len(missing) / (self.workers * 4)))
            batches = [missing[i : i + size] for i in range(0, len(missing), size)]
            # A fresh executor each time: no worker threads are left behind when later work forks.
            context = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(self.workers, context, _init_worker, (self.rules,)) as executor:
                played = [places for batch in executor.map(_play_batch, batches) for places in batch]
        self.results.update(zip(missing, played, strict=True))
        self.played += len(missing)

    def places(self, key: Key, names: Mapping[float, str]) -> dict[str, int]:
        """A pool match's result: each bot's place, by name."""
        return {names[p]: int(place) for p, place in zip(key[1], self.results[key], strict=True)}

    def seated(self, key: Key, names: Mapping[float, str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """A pool match's result as the store holds it: the bots by seat and their places."""
        by_level = dict(zip(key[1], self.results[key], strict=True))
        seats = seating(key)
        return tuple(names[p] for p in seats), tuple(int(by_level[p]) for p in seats)

    def load(self, path: Path) -> None:
        """Add the matches saved in ``path`` by :meth:`save` (played under the same rules)."""
        data = json.loads(path.read_text())
        if data.get("rules") != self.rules.to_dict():
            raise SystemExit(f"{path}: its matches were played under other rules; remove it or choose another --pool-file")
        for family, levels, deal, rotation, places in data["results"]:
            self.results[(family, tuple(levels), deal, rotation)] = tuple(places)

    def save(self, path: Path) -> None:
        results = [[*key[:1], list(key[1]), *key[2:], list(places)] for key, places in sorted(self.results.items())]
        path.write_text(json.dumps({"rules": self.rules.to_dict(), "results": results}))


# -- the measure ----------------------------------------------------------------------------


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's tau between two orders of the same names (no ties)."""
    rank = {name: i for i, name in enumerate(order)}
    n = len(truth)
    concordant = sum(1 for i in range(n) for j in range(i + 1, n) if rank[truth[i]] < rank[truth[j]])
    pairs = n * (n - 1) // 2
    return (2 * concordant - pairs) / pairs


def leaderboard_order(ratings: Mapping[str, Rating]) -> list[str]:
    return sorted(ratings, key=lambda name: (-conservative(*ratings[name]), name))


class Tracker:
    """Kendall tau after every match; the matches after which it stays >= 0.9."""

    def __init__(self, truth: Sequence[str]) -> None:
        self.truth = list(truth)
        self.matches = 0
        self.last_below = 0
        self.last_inexact = 0
        self.tau = -1.0

    def after(self, ratings: Mapping[str, Rating]) -> None:
        self.matches += 1
        self.tau = kendall_tau(leaderboard_order(ratings), self.truth)
        if self.tau < 0.9:
            self.last_below = self.matches
        if self.tau < 1.0:
            self.last_inexact = self.matches

    @property
    def exact_from(self) -> int | None:
        """The matches after which the order is exactly the true one until the end (None: not at the end)."""
        return None if self.tau < 1.0 else self.last_inexact

    @property
    def settled(self) -> int | None:
        return None if self.tau < 0.9 else self.last_below


def per_match(env: RatingEnv, ratings: dict[str, Rating], seats: Sequence[str], places: Sequence[int]) -> None:
    """The runner's rating of one result (:func:`rate_result`), applied to ``ratings``."""
    ratings.update(rate_result(env, ratings, dict(zip(seats, places, strict=True))))


Seated = tuple[tuple[str, ...], tuple[int, ...]]
"""A result as the store holds it: the bots by seat, their places by seat."""


def replay(env: RatingEnv, truth: Sequence[str], results: Sequence[Seated], group_size: int) -> int | None:
    """Rate ``results`` in schedule order and track the order: match by match (``group_size`` 1), or by
    duplicate groups of ``group_size`` fixtures, each rated after every fixture as the store rates a
    :class:`~polignac_arena.store.GroupRate` (the group so far, from the ratings before it)."""
    ratings = {name: env.initial for name in truth}
    tracker = Tracker(truth)
    for start in range(0, len(results), group_size):
        group = results[start : start + group_size]
        before = dict(ratings)
        for done in range(1, len(group) + 1):
            if group_size == 1:
                per_match(env, ratings, *group[0])
            else:
                ratings.update(rate_duplicate(env, before, group[:done]))
            tracker.after(ratings)
    return tracker.settled


def _replay_task(task: tuple[RatingEnv, list[str], list[Seated], int]) -> int | None:
    return replay(*task)


# -- the runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    seeds: int
    matches: int
    ladder_seeds: int
    ladder_matches: int
    ladder_bots: int
    pool: int


def level_names(count: int) -> dict[float, str]:
    """Bot names by level: ``p000`` (the plain heuristic) to ``p100`` (random play)."""
    levels = [round(i / (count - 1), 6) for i in range(count)]
    return {p: f"p{round(p * 1000):04d}" for p in levels}


def _composition(seats: Sequence[str], level_of: Mapping[str, float]) -> tuple[float, ...]:
    return tuple(sorted(level_of[s] for s in seats))


def scheduled_keys(family: str, settings: Settings, names: Mapping[float, str]) -> dict[tuple[str, int], list[Key]]:
    """The pool matches of every round-robin and duplicate run, by (schedule, seed)."""
    level_of = {name: p for p, name in names.items()}
    entrants = list(names.values())
    per_round = round_size(len(entrants), TABLE)
    rounds = math.ceil(settings.matches / per_round)
    groups = math.ceil(settings.matches / TABLE)
    runs: dict[tuple[str, int], list[Key]] = {}
    for seed in range(settings.seeds):
        rng = random.Random(f"ratings-bench/draws/{family}/{seed}")
        rr = round_robin(entrants, TABLE, rounds, seed)[: settings.matches]
        runs[("round_robin", seed)] = [
            (family, _composition(f.seats, level_of), int(rng.random() * settings.pool), int(rng.random() * TABLE)) for f in rr
        ]
        dup = [f for f in duplicate(entrants, TABLE, math.ceil(groups / per_round), seed) if f.group < groups]
        deal_of: dict[int, int] = {}
        keys: list[Key] = []
        for f in dup:
            deal = deal_of.setdefault(f.group, int(rng.random() * settings.pool))
            keys.append((family, _composition(f.seats, level_of), deal, f.index - f.group * TABLE))
        runs[("duplicate", seed)] = keys
    return runs


LEAGUE_WINDOW = 200
"""The league ladder's window of recent matches (polignac_arena.league.ladder.Ladder's default)."""


@dataclass
class LadderRun:
    """One ladder, replayed as the tournament runner does at parallel 1 (``league``: as the league's loop
    picks tables, one match at a time, every bot an uploaded version that has played its first matches)."""

    env: RatingEnv
    entrants: list[str]
    seed: int
    league: bool = False

    def __post_init__(self) -> None:
        self.ratings: dict[str, Rating] = {}
        self.meetings = Meetings()  # games and pair meetings, as the tournament runner and the league keep them
        self.games = self.meetings.games
        self.last: frozenset[str] | None = None
        self.index = 0
        self.tracker = Tracker(self.entrants)
        self.history: list[tuple[str, ...]] = []
        self.as_entrants = [Entrant(name, name, builtin_submission("heuristic")) for name in self.entrants]

    def next_table(self) -> tuple[str, ...]:
        if self.league:
            recent = Counter(name for seats in self.history[-LEAGUE_WINDOW:] for name in seats)
            table = pick_table(
                self.as_entrants, TABLE, self.ratings, self.games, recent, {}, self.seed + self.index, self.env, meetings=self.meetings
            )
            assert table is not None
            seats = table
            self.history.append(seats)
        else:
            seats = ladder_next(
                self.entrants, TABLE, self.ratings, self.games, self.last, self.seed + self.index, self.env, meetings=self.meetings
            )
        self.meetings.record(seats)
        self.last = frozenset(seats)
        self.index += 1
        return seats

    def record(self, seats: Sequence[str], places: Sequence[int]) -> None:
        per_match(self.env, self.ratings, seats, places)
        self.tracker.after({name: self.ratings.get(name) or self.env.initial for name in self.entrants})


def ladder_run(pool: Pool, family: str, schedule: str, label: str, env: RatingEnv, seed: int, settings: Settings) -> dict[str, Any]:
    """One ladder run; missing pool matches are played here."""
    names = level_names(settings.ladder_bots)
    level_of = {name: p for p, name in names.items()}
    run = LadderRun(env, list(names.values()), seed, league=schedule == "league")
    rng = random.Random(f"ratings-bench/{schedule}/{family}/{seed}/{label}")
    for _ in range(settings.ladder_matches):
        seats = run.next_table()
        key = (family, _composition(seats, level_of), int(rng.random() * settings.pool), int(rng.random() * TABLE))
        pool.fill([key])
        run.record(*pool.seated(key, names))
    tracker = run.tracker
    return {"settled": tracker.settled, "final_tau": round(tracker.tau, 3), "exact": tracker.tau == 1.0, "exact_from": tracker.exact_from}


_WORKER_POOL: Pool | None = None


def _ladder_task(task: tuple[str, str, str, RatingEnv, int, Settings]) -> tuple[dict[str, Any], dict[Key, tuple[int, ...]]]:
    assert _WORKER_POOL is not None
    _WORKER_POOL.workers = 1  # one ladder per process: play its matches here
    known = set(_WORKER_POOL.results)
    figures = ladder_run(_WORKER_POOL, *task)
    return figures, {k: v for k, v in _WORKER_POOL.results.items() if k not in known}


def _fork_executor(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(workers, multiprocessing.get_context("fork"))


def median_settled(values: Sequence[int | None]) -> float | None:
    """The median with runs that never settle counted as infinitely long (None if that is the median)."""
    ordered = sorted(math.inf if v is None else v for v in values)
    m = statistics.median(ordered)
    return None if math.isinf(m) else float(m)


def summarize(values: Sequence[int | None]) -> dict[str, Any]:
    return {
        "median": median_settled(values),
        "settled_share": round(sum(v is not None for v in values) / len(values), 3),
        "runs": list(values),
    }


def place_variance_shares(pool: Pool, levels: Sequence[float]) -> dict[str, float]:
    """How a bot's place varies over the pool's complete duplicate deals among ``levels``.

    Each deal played in all 4 rotations is a 4 x 4 table of places (bot by seat held, the
    seat standing for its cards); its variance splits into the bots' (the signal), the seats'
    (the deal's luck, which duplicate comparisons cancel) and what is left (the play's own
    interaction, which they do not).
    """
    wanted = set(levels)
    rotations: dict[tuple[tuple[float, ...], int], dict[int, tuple[int, ...]]] = {}
    for (_, composition, deal, rotation), places in pool.results.items():
        if set(composition) <= wanted:
            rotations.setdefault((composition, deal), {})[rotation] = places
    parts = {"total": 0.0, "bots": 0.0, "seats": 0.0, "rest": 0.0}
    for (composition, deal), played in rotations.items():
        if len(played) < TABLE:
            continue
        table = [[0.0] * TABLE for _ in range(TABLE)]  # table[bot][seat]
        for rotation, places in played.items():
            seats = seating(("", composition, deal, rotation))  # the seating does not depend on the family
            for bot, level in enumerate(composition):
                table[bot][seats.index(level)] = places[bot]
        mean = statistics.fmean(v for row in table for v in row)
        bot_means = [statistics.fmean(row) for row in table]
        seat_means = [statistics.fmean(row[s] for row in table) for s in range(TABLE)]
        for b in range(TABLE):
            for s in range(TABLE):
                parts["total"] += (table[b][s] - mean) ** 2
                parts["bots"] += (bot_means[b] - mean) ** 2
                parts["seats"] += (seat_means[s] - mean) ** 2
                parts["rest"] += (table[b][s] - bot_means[b] - seat_means[s] + mean) ** 2
    if not parts["total"]:
        return {}
    return {name: round(value / parts["total"], 3) for name, value in parts.items() if name != "total"}


def measure(family: str, settings: Settings, pool: Pool, envs: Mapping[str, RatingEnv], workers: int) -> dict[str, Any]:
    """Every run of one family: the settled figures by schedule and parameters."""
    global _WORKER_POOL
    started = time.perf_counter()
    names = level_names(6)
    truth = list(names.values())  # levels ascending: strongest first
    runs = scheduled_keys(family, settings, names)
    pool.fill(key for keys in runs.values() for key in keys)
    played, known = pool.played, len(pool.results)
    tasks = []
    labels = []
    for (schedule, _), keys in runs.items():
        results = [pool.seated(key, names) for key in keys]
        for label, env in envs.items():
            grouped = schedule == "duplicate" and label != "today"
            tasks.append((env, truth, results, TABLE if grouped else 1))
            labels.append((schedule, label))
    ladder_tasks = [
        (family, schedule, label, league_env(env) if schedule == "league" and label != "today" else env, seed, settings)
        for schedule in ("ladder", "league")
        for label, env in envs.items()
        for seed in range(settings.ladder_seeds)
    ]
    _WORKER_POOL = pool
    if workers > 1:
        with _fork_executor(workers) as executor:
            settled = list(executor.map(_replay_task, tasks, chunksize=max(1, len(tasks) // (workers * 4))))
            ladder = list(executor.map(_ladder_task, ladder_tasks))
    else:
        settled = [_replay_task(task) for task in tasks]
        ladder = [_ladder_task(task) for task in ladder_tasks]
    _WORKER_POOL = None
    row: dict[str, Any] = {}
    by_run: dict[tuple[str, str], list[int | None]] = {}
    for key, value in zip(labels, settled, strict=True):
        by_run.setdefault(key, []).append(value)
    for (schedule, label), values in by_run.items():
        row.setdefault(schedule, {})[label] = summarize(values)
    by_label: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (_, schedule, label, *_), (figures, new) in zip(ladder_tasks, ladder, strict=True):
        by_label.setdefault((schedule, label), []).append(figures)
        for pool_key, places in new.items():
            pool.results.setdefault(pool_key, places)
    for (schedule, label), runs_ in by_label.items():
        row.setdefault(schedule, {})[label] = {
            **summarize([f["settled"] for f in runs_]),
            "final_tau": [f["final_tau"] for f in runs_],
            "exact_share": round(sum(f["exact"] for f in runs_) / len(runs_), 3),
            "exact_from": [f["exact_from"] for f in runs_],
        }
    row["place_variance"] = place_variance_shares(pool, list(names))
    row["pool_matches"] = {"scheduled": played, "ladder": len(pool.results) - known}
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: a few seeds, short runs, short matches, one process")
    parser.add_argument("--seeds", type=int, default=128, help="seeds of the round robin and duplicate runs (default 128)")
    parser.add_argument("--matches", type=int, default=240, help="matches in each round robin and duplicate run (default 240)")
    parser.add_argument("--ladder-seeds", type=int, default=16, help="seeds of the ladder runs (default 16)")
    parser.add_argument("--ladder-matches", type=int, default=2400, help="matches in each ladder run (default 2400)")
    parser.add_argument("--ladder-bots", type=int, default=12, help="bots in the ladder runs (default 12)")
    parser.add_argument("--pool", type=int, default=32, help="deals per table composition in the pool (default 32)")
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated, of {', '.join(FAMILIES)}")
    parser.add_argument(
        "--pool-file", type=Path, help="keep the pool's matches in PATH-FAMILY.json between runs (reused when the rules match)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes that play the pool's matches")
    args = parser.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown family {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    for option in ("seeds", "matches", "ladder_seeds", "ladder_matches", "pool", "workers"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1, got {getattr(args, option)}")
    if not TABLE <= args.ladder_bots <= 64:
        parser.error(f"--ladder-bots must be from {TABLE} to 64, got {args.ladder_bots}")
    rules = preset("classic", players=TABLE)
    if args.quick:
        args.seeds, args.matches, args.ladder_seeds, args.ladder_matches, args.ladder_bots, args.pool, args.workers = 2, 24, 1, 24, 6, 2, 1
        rules = rules.with_changes(limit=3)  # short matches: the smoke run checks the plumbing, not the figures
    settings = Settings(args.seeds, args.matches, args.ladder_seeds, args.ladder_matches, args.ladder_bots, args.pool)
    envs = {"today": TODAY, "shipped": shipped_env()}
    results: dict[str, Any] = {}
    for family in families:
        pool = Pool(rules, args.workers)
        pool_file = None if args.pool_file is None else args.pool_file.with_name(f"{args.pool_file.stem}-{family}{args.pool_file.suffix}")
        if pool_file is not None and pool_file.exists():
            pool.load(pool_file)
        results[family] = measure(family, settings, pool, envs, args.workers)
        if pool_file is not None:
            pool.save(pool_file)
    report = {
        "settings": {k: getattr(args, k) for k in ("seeds", "matches", "ladder_seeds", "ladder_matches", "ladder_bots", "pool")},
        "params": {label: _env_dict(env) for label, env in envs.items()},
        "families": results,
    }
    if args.json:
        json.dump(report, sys.stdout)
        print()
        return 0
    _print_table(report)
    return 0


def _env_dict(env: RatingEnv) -> dict[str, float]:
    return {"mu": env.mu, "sigma": env.sigma, "beta": env.beta, "tau": env.tau, "draw_probability": env.draw_probability}


def _figure(d: Mapping[str, Any]) -> str:
    m = d["median"]
    return "-" if m is None else f"{m:.0f}"


def _print_table(report: Mapping[str, Any]) -> None:
    s = report["settings"]
    print(
        "Matches until the leaderboard order stays at Kendall tau >= 0.9 (median over seeds; '-': never within the run)\n"
        f"round robin, duplicate: 6 bots, {s['seeds']} seeds, {s['matches']} matches; "
        f"ladder (tournament) and league: {s['ladder_bots']} bots, {s['ladder_seeds']} seeds, {s['ladder_matches']} matches; "
        "exact: share of seeds ending in the true order"
    )
    for label, p in report["params"].items():
        print(f"  {label}: beta {p['beta']:.3f}, tau {p['tau']:.4f} (league: 0.0083 when shipped), draw {p['draw_probability']:.3f}")
    print(
        f"{'family':<14} {'params':<8} {'round robin':>11} {'duplicate':>9} {'ladder':>6} {'exact':>5} {'league':>6} {'exact':>5} {'s':>6}"
    )
    for family, row in report["families"].items():
        for label in report["params"]:
            ladder, league = row["ladder"][label], row["league"][label]
            scheduled = f"{_figure(row['round_robin'][label]):>11} {_figure(row['duplicate'][label]):>9}"
            ladders = f"{_figure(ladder):>6} {ladder['exact_share']:>5.2f} {_figure(league):>6} {league['exact_share']:>5.2f}"
            print(f"{family:<14} {label:<8} {scheduled} {ladders} {row['seconds']:>6}")
        shares = row["place_variance"]
        if shares:
            print(f"{'':<14} place variance: bots {shares['bots']:.2f}, seats (the deal) {shares['seats']:.2f}, rest {shares['rest']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
