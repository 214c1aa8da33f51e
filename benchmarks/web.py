"""Web benchmark: the leaderboard page's server time on a 50-bot, 2,000-match store.

Run ``python benchmarks/web.py`` for a short report, ``--json`` for one JSON object on stdout
(``leaderboard_median_ms`` and more), ``--quick`` for a smoke run (10 bots, 100 matches).

The store is built in a temporary folder, quickly: 50 registered bots and one tournament whose
2,000 fixtures seat 4 bots each (drawn with a fixed seed), with synthetic results (random
places, totals, penalties, an occasional fault, a one-line record) written through
:meth:`Store.record_result` with a real TrueSkill rate function, so the ratings, their history
and the statistics are those of a real store of that size.

Server time: the page is requested in-process through Starlette's TestClient (no socket, no
browser), once to warm up, then ``--requests`` times (50); the figure is the median wall time
of a request (routing, store reads, statistics over every result, template rendering).  The
all-time leaderboard (``/``) is the headline; the tournament page, ``/api/leaderboard``, a bot
page, the match list and the crosstable are reported too.  The issue's target is a median under 200 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

with warnings.catch_warnings():  # Starlette's note that its TestClient will move from httpx to httpx2: not ours to act on
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from polignac_arena.ratings import Rating, RatingEnv, rate_match
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store
from polignac_arena.web import create_app


def build(path: Path, bots: int, matches: int, table: int = 4, seed: int = 2026) -> float:
    """Fill a store at ``path``; the seconds it took."""
    started = time.perf_counter()
    rng = random.Random(seed)
    env = RatingEnv()
    keys = [f"bot{n:02d}@1.0" for n in range(bots)]

    def rate(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, Rating]:
        before = [current.get(s) or env.initial for s in seats]
        return dict(zip(seats, rate_match(env, before, places), strict=True))

    with Store(path) as store:
        for key in keys:
            name, version = key.split("@")
            store.add_bot(name, version, f"/bots/{name}", f"digest-{name}", "python")
        fixtures = [Fixture(i, tuple(rng.sample(keys, table)), rng.getrandbits(63)) for i in range(matches)]
        tid = store.create_tournament("bench", {"format": "synthetic", "bots": bots, "matches": matches}, fixtures)
        for fixture in fixtures:
            places = rng.sample(range(1, table + 1), table)
            penalties = [rng.randint(0, 12) for _ in range(table)]
            faults: list[dict[str, int]] = [{"timeout": 1} if rng.random() < 0.02 else {} for _ in range(table)]
            store.record_result(
                tid, fixture.index, match_id=f"bench-{fixture.index:05d}", status="finished", places=places, totals=penalties,
                penalties=penalties, faults=faults, hands=rng.randint(3, 8), rate=rate,
                record=[{"type": "header", "match_id": f"bench-{fixture.index:05d}"}],
            )  # fmt: skip
        store.set_status(tid, "finished")
    return time.perf_counter() - started


def median_ms(client: TestClient, url: str, requests: int) -> float:
    """The median wall time of a GET of ``url`` in milliseconds (after one warm-up request)."""
    assert client.get(url).status_code == 200, url
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, url
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The leaderboard page's server time on a 50-bot, 2,000-match store.")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 bots, 100 matches, 10 requests")
    parser.add_argument("--bots", type=int, default=None, help="bots in the store (default 50)")
    parser.add_argument("--matches", type=int, default=None, help="matches in the store (default 2000)")
    parser.add_argument("--requests", type=int, default=None, help="timed requests per page (default 50)")
    args = parser.parse_args(argv)
    bots = args.bots or (10 if args.quick else 50)
    matches = args.matches or (100 if args.quick else 2000)
    requests = args.requests or (10 if args.quick else 50)
    with tempfile.TemporaryDirectory(prefix="polignac-web-bench-") as folder:
        db = Path(folder) / "bench.db"
        build_s = build(db, bots, matches)
        with TestClient(create_app(db)) as client:
            result: dict[str, Any] = {
                "leaderboard_median_ms": round(median_ms(client, "/", requests), 3),
                "tournament_leaderboard_median_ms": round(median_ms(client, "/tournaments/bench", requests), 3),
                "api_leaderboard_median_ms": round(median_ms(client, "/api/leaderboard", requests), 3),
                "bot_page_median_ms": round(median_ms(client, "/bots/bot00", requests), 3),
                "matches_page_median_ms": round(median_ms(client, "/matches", requests), 3),
                "crosstable_median_ms": round(median_ms(client, "/crosstable", requests), 3),
                "bots": bots,
                "matches": matches,
                "requests": requests,
                "build_s": round(build_s, 2),
                "page_bytes": len(client.get("/").content),
            }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"store: {bots} bots, {matches} matches, built in {result['build_s']} s")
        for key in [k for k in result if k.endswith("_median_ms")]:
            print(f"{key:34} {result[key]:9.2f} ms  (median of {requests})")
        print(f"{'page_bytes':34} {result['page_bytes']:9d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
