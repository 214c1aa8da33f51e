"""Schedules benchmark: what drawing a schedule costs, per fixture, at league sizes.

Run ``python benchmarks/schedules.py`` for a table, ``--json`` for one JSON object,
``--quick`` for a smoke run (a few seconds).  Pure computation on one thread, no bots:

- ``round_robin`` and ``duplicate``: ``--bots`` entrants at tables of ``--table-size`` for
  each of ``--rounds`` (a list), seconds in all and milliseconds per fixture, and the
  spread of the pair meetings at the end (most minus least: 0 is perfect balance);
- ``ladder_next``: one table at a time among ``--bots`` entrants whose ratings move with
  made-up results (a rating update per table, not timed), milliseconds per table over
  ``--ladder-tables`` tables, with the pair meetings the tournament runner keeps;
- ``stored_schedule``: reading a stored schedule of the largest round robin back from a
  store (what a resume and the ladder's runner do now) against drawing it again (what
  they did).

The script also runs against an older checkout (``PYTHONPATH=/old/sdk:/old/server``), to
give the figures before a change: it passes the pair meetings only where ``ladder_next``
takes them.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from polignac_arena.ratings import RatingEnv, rate_match
from polignac_arena.schedule import Fixture, duplicate, ladder_next, round_robin
from polignac_arena.store import Store


def pair_spread(fixtures: Sequence[Fixture], entrants: Sequence[str]) -> int:
    """Most minus least meetings over every pair of entrants."""
    met = Counter(pair for f in fixtures for pair in itertools.combinations(sorted(f.seats), 2))
    counts = [met[pair] for pair in itertools.combinations(sorted(entrants), 2)]
    return max(counts) - min(counts)


def timed(draw: Callable[[], list[Fixture]]) -> tuple[list[Fixture], float]:
    started = time.perf_counter()
    fixtures = draw()
    return fixtures, time.perf_counter() - started


def schedule_figures(kind: str, entrants: list[str], table_size: int, rounds: int) -> dict[str, Any]:
    draw = round_robin if kind == "round_robin" else duplicate
    fixtures, seconds = timed(lambda: draw(entrants, table_size, rounds, 1))
    return {
        "rounds": rounds,
        "fixtures": len(fixtures),
        "seconds": round(seconds, 3),
        "ms_per_fixture": round(1000 * seconds / len(fixtures), 4),
        "pair_spread": pair_spread(fixtures, entrants),
    }


def ladder_figures(entrants: list[str], table_size: int, tables: int) -> dict[str, Any]:
    env = RatingEnv()
    rng = random.Random(7)
    skill = {name: rng.gauss(0, 1) for name in entrants}
    ratings: dict[str, tuple[float, float]] = {}
    games: Counter[str] = Counter()
    last: frozenset[str] | None = None
    keyword: dict[str, Any] = {}
    if "meetings" in inspect.signature(ladder_next).parameters:
        from polignac_arena.matchmaking import Meetings

        keyword["meetings"] = meetings = Meetings()
        games = meetings.games
    spent = 0.0
    for index in range(tables):
        started = time.perf_counter()
        seats = ladder_next(entrants, table_size, ratings, games, last, index, env, **keyword)
        spent += time.perf_counter() - started
        if "meetings" in keyword:
            keyword["meetings"].record(seats)
        else:
            games.update(seats)
        last = frozenset(seats)
        order = sorted(seats, key=lambda name: -(skill[name] + rng.gauss(0, 1)))
        places = [order.index(name) + 1 for name in seats]
        ratings.update(zip(seats, rate_match(env, [ratings.get(name, env.initial) for name in seats], places), strict=True))
    return {"tables": tables, "ms_per_table": round(1000 * spent / tables, 3), "meetings": "meetings" in keyword}


def stored_figures(entrants: list[str], table_size: int, fixtures: list[Fixture], draw_seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "bench.db") as store:
        tid = store.create_tournament("bench", {"entrants": entrants, "table_size": table_size}, fixtures)
        started = time.perf_counter()
        read = store.fixtures(tid)
        seconds = time.perf_counter() - started
    return {"fixtures": len(read), "read_seconds": round(seconds, 3), "draw_seconds": round(draw_seconds, 3)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 bots, few rounds and tables")
    parser.add_argument("--bots", type=int, default=100, help="entrants (default 100)")
    parser.add_argument("--table-size", type=int, default=4, help="players per table (default 4)")
    parser.add_argument("--rounds", default="1,10,100", help="comma-separated round counts (default 1,10,100)")
    parser.add_argument("--ladder-tables", type=int, default=300, help="ladder tables drawn (default 300)")
    parser.add_argument("--no-duplicate", action="store_true", help="skip duplicate (it draws the round robin's tables)")
    args = parser.parse_args(argv)
    if args.quick:
        args.bots, args.rounds, args.ladder_tables = 20, "1,3", 40
    entrants = [f"bot{i:03d}" for i in range(args.bots)]
    rounds = [int(r) for r in args.rounds.split(",")]
    report: dict[str, Any] = {"bots": args.bots, "table_size": args.table_size, "round_robin": [], "duplicate": []}
    for r in rounds:
        report["round_robin"].append(schedule_figures("round_robin", entrants, args.table_size, r))
        if not args.no_duplicate and r == rounds[0]:
            report["duplicate"].append(schedule_figures("duplicate", entrants, args.table_size, r))
    report["ladder_next"] = ladder_figures(entrants, args.table_size, args.ladder_tables)
    largest, seconds = timed(lambda: round_robin(entrants, args.table_size, rounds[-1], 1))
    report["stored_schedule"] = stored_figures(entrants, args.table_size, largest, seconds)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{args.bots} bots at tables of {args.table_size}")
    for kind in ("round_robin", "duplicate"):
        for row in report[kind]:
            print(
                f"  {kind:12} {row['rounds']:4} rounds  {row['fixtures']:7} fixtures  {row['seconds']:8.2f} s"
                f"  {row['ms_per_fixture']:8.3f} ms/fixture  pair spread {row['pair_spread']}"
            )
    ladder = report["ladder_next"]
    print(f"  ladder_next  {ladder['ms_per_table']:.3f} ms/table over {ladder['tables']} tables")
    stored = report["stored_schedule"]
    print(f"  stored schedule of {stored['fixtures']} fixtures: read {stored['read_seconds']} s, drawn {stored['draw_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
