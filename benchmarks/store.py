"""Store benchmark: the time to write a result (with everything the store keeps up to date alongside it).

Run ``python benchmarks/store.py`` for a short report, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run (200 results).

A fresh store in a temporary folder gets ``--bots`` registered bots and one tournament of
``--results`` fixtures seating 4 of them (drawn with a fixed seed); each result is then written
through :meth:`Store.record_result` as the runner writes it: one transaction, ``synchronous=FULL``
(a commit waits for the disk), with synthetic places, penalties, an occasional fault and a
one-line record.  The rate function is a cheap stand-in (mu + 1 per match), so the figure is the
store's own cost, not TrueSkill's.  ``write_median_ms`` is the median wall time of one
``record_result``, ``write_p99_ms`` its 99th percentile, ``write_total_s`` the whole run.

It only uses what every store version has, so the same script measures another version of the
arena: ``PYTHONPATH=/other/tree/sdk:/other/tree/server python benchmarks/store.py --json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from polignac_arena.schedule import Fixture
from polignac_arena.store import Store


def step(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    """A rating function that costs nothing: mu + 1 per match."""
    return {bot: ((current.get(bot) or (25.0, 8.0))[0] + 1.0, 8.0) for bot in seats}


def write(path: Path, bots: int, results: int, seed: int = 2026) -> list[float]:
    """Fill a store at ``path``; each ``record_result``'s wall time in seconds."""
    rng = random.Random(seed)
    keys = [f"bot{n:04d}@1.0" for n in range(bots)]
    times = []
    with Store(path) as store:
        fixtures = [Fixture(i, tuple(rng.sample(keys, 4)), rng.getrandbits(63)) for i in range(results)]
        tid = store.create_tournament("bench", {"format": "synthetic", "bots": bots, "results": results}, fixtures)
        for fixture in fixtures:
            places = rng.sample(range(1, 5), 4)
            penalties = [rng.randint(0, 12) for _ in range(4)]
            faults: list[dict[str, int]] = [{"timeout": 1} if rng.random() < 0.02 else {} for _ in range(4)]
            started = time.perf_counter()
            store.record_result(
                tid, fixture.index, match_id=f"bench-{fixture.index:06d}", status="finished", places=places, totals=penalties,
                penalties=penalties, faults=faults, hands=rng.randint(3, 8), rate=step,
                record=[{"type": "header", "match_id": f"bench-{fixture.index:06d}"}],
            )  # fmt: skip
            times.append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The time to write a result to the store.")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 results")
    parser.add_argument("--bots", type=int, default=1000, help="bots in the store (default 1000)")
    parser.add_argument("--results", type=int, default=None, help="results to write (default 2000)")
    args = parser.parse_args(argv)
    results = args.results or (200 if args.quick else 2000)
    with tempfile.TemporaryDirectory(prefix="polignac-store-bench-") as folder:
        times = write(Path(folder) / "bench.db", args.bots, results)
    ms = sorted(t * 1000 for t in times)
    out: dict[str, Any] = {
        "write_median_ms": round(statistics.median(ms), 3),
        "write_p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 3),
        "write_total_s": round(sum(times), 2),
        "bots": args.bots,
        "results": results,
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{results} results, {args.bots} bots: {out['write_total_s']} s")
        print(f"{'record_result median':24} {out['write_median_ms']:8.3f} ms")
        print(f"{'record_result p99':24} {out['write_p99_ms']:8.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
