"""Bot strength benchmark: how well the built-in bots place in every named game, played in-process.

Run ``python benchmarks/bots.py`` for a table, ``--json`` for one JSON object, ``--quick`` for
a smoke run (20 matches per case), ``--matches N`` to choose.

Each preset is played at 4 players (Knaves, which only 3 can play, at 3) with
:func:`polignac.bot.play_local`, which seats the bot under test in every seat in turn; every
match is seeded, so a run prints the same figures on every machine.  For each game:

- ``random``, ``cautious``, ``heuristic``: the average place (1 is best; ties share a place)
  of that bot against random bots only.  Random against random is the baseline.
- ``heuristic_vs_cautious``: the heuristic's average place against cautious bots only, and
  ``cautious_vs_heuristic`` the reverse: below the table's middle place means the first is
  the stronger.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from polignac import PRESETS, Ruleset, preset
from polignac.bot import Bot, play_local
from polignac.bots import CautiousBot, HeuristicBot, RandomBot


def table_for(name: str) -> Ruleset:
    """The preset at 4 players, or at the first table size it allows."""
    sizes = PRESETS[name].table_sizes()
    return preset(name, players=4 if 4 in sizes else sizes[0])


def average_place(bot: Bot, opponent: str, rules: Ruleset, matches: int) -> float:
    result = play_local(bot, opponents=[opponent] * (rules.players - 1), rules=rules, matches=matches, seed=1000)
    if result.faults:
        raise SystemExit(f"{bot.name} faulted in {rules.name}: {result.faults[0]}")
    return result.average_place


def measure(name: str, matches: int) -> dict[str, Any]:
    rules = table_for(name)
    started = time.perf_counter()
    row: dict[str, Any] = {"players": rules.players, "middle": (rules.players + 1) / 2}
    for label, bot in (("random", RandomBot(99)), ("cautious", CautiousBot()), ("heuristic", HeuristicBot())):
        row[label] = round(average_place(bot, "random", rules, matches), 3)
    row["heuristic_vs_cautious"] = round(average_place(HeuristicBot(), "cautious", rules, matches), 3)
    row["cautious_vs_heuristic"] = round(average_place(CautiousBot(), "heuristic", rules, matches), 3)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 matches per case")
    parser.add_argument("--matches", type=int, default=200, help="matches per case (default 200)")
    parser.add_argument("--games", default=",".join(PRESETS), help="comma-separated presets (default: all)")
    args = parser.parse_args(argv)
    matches = 20 if args.quick else args.matches
    games = [g for g in args.games.split(",") if g]
    unknown = [g for g in games if g not in PRESETS]
    if unknown:
        parser.error(f"unknown preset {unknown[0]!r}; choose from {', '.join(PRESETS)}")
    results = {name: measure(name, matches) for name in games}
    if args.json:
        json.dump({"matches": matches, "games": results}, sys.stdout)
        print()
        return 0
    print(f"Average place over {matches} matches per case (1 is best); opponents all random unless said")
    header = f"{'game':<14} {'seats':>5} {'random':>7} {'cautious':>8} {'heuristic':>9} {'h vs cautious':>13} {'c vs heuristic':>14}"
    print(header)
    for name, row in results.items():
        print(
            f"{name:<14} {row['players']:>5} {row['random']:>7.2f} {row['cautious']:>8.2f} {row['heuristic']:>9.2f}"
            f" {row['heuristic_vs_cautious']:>13.2f} {row['cautious_vs_heuristic']:>14.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
