"""Web benchmark: the server time of every page and API route on a store of ``--bots`` bots and ``--matches`` matches.

Run ``python benchmarks/web.py`` for a short report (50 bots, 2,000 matches), ``--bots 1000
--matches 100000`` for a league-sized store, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run (10 bots, 100 matches).

The store is built in a temporary folder (or at ``--db PATH``, kept and reused by later runs
with the same size and seed): registered bots and one tournament whose fixtures seat 4 bots
each (drawn with a fixed seed), with synthetic results (random places, totals, penalties, an
occasional fault, a one-line record) written through :meth:`Store.record_result`, so every
aggregate, index and history row is the one a real run writes.  The rate function is a cheap
deterministic step (``--trueskill`` uses the real one: the pages do the same work either way,
the store takes a few times longer to build).  The throwaway store is written without
waiting for the disk (``PRAGMA synchronous = OFF``): it is not meant to survive a power cut.

Server time: each URL is requested in-process through Starlette's TestClient (no socket, no
browser), once to warm up, then ``--requests`` times; the figures are the median and the 90th
percentile of a request's wall time (routing, store reads, template rendering).  The CSV of
the whole crosstable is requested fewer times (at most 3): it is a download, not a page.
Each page with a target (the issue's figures) is reported as met or not.
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
from urllib.parse import urlencode

with warnings.catch_warnings():  # Starlette's note that its TestClient will move from httpx to httpx2: not ours to act on
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from polignac_arena.ratings import Rating, RatingEnv, rate_match
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store
from polignac_arena.web import create_app

TOURNAMENT = "bench"
TABLE = 4

TARGETS_MS: dict[str, float] = {
    "leaderboard": 50,
    "tournament_leaderboard": 50,
    "api_leaderboard": 50,
    "bot_page": 100,
    "matches_page": 100,
    "crosstable": 200,
}
"""The issue's targets: median server time in milliseconds, at 1,000 bots / 100,000 matches and at 50 bots."""


def bot_keys(bots: int) -> list[str]:
    """The bots' keys: ``bot00@1.0``, ... (as many digits as the largest number needs)."""
    width = max(2, len(str(bots - 1)))
    return [f"bot{n:0{width}d}@1.0" for n in range(bots)]


def _fast_rate(env: RatingEnv) -> Any:
    """A cheap deterministic rate function: mu moves with the place, sigma shrinks towards a floor."""

    def rate(current: Mapping[str, Rating], seats: Sequence[str], places: Sequence[int]) -> dict[str, Rating]:
        out: dict[str, Rating] = {}
        for seat, bot in enumerate(seats):
            mu, sigma = out.get(bot) or current.get(bot) or env.initial
            out[bot] = (mu + (len(seats) + 1 - 2 * places[seat]) * sigma * 0.05, max(sigma * 0.98, 0.8))
        return out

    return rate


def _trueskill_rate(env: RatingEnv) -> Any:
    def rate(current: Mapping[str, Rating], seats: Sequence[str], places: Sequence[int]) -> dict[str, Rating]:
        before = [current.get(s) or env.initial for s in seats]
        return dict(zip(seats, rate_match(env, before, places), strict=True))

    return rate


def _config(bots: int, matches: int, seed: int, trueskill: bool) -> dict[str, Any]:
    return {"format": "synthetic", "bots": bots, "matches": matches, "seed": seed, "rating": "trueskill" if trueskill else "fast"}


def build(path: Path, bots: int, matches: int, *, seed: int = 2026, trueskill: bool = False) -> float:
    """Fill a store at ``path`` (unless it already holds this very benchmark store); the seconds it took."""
    started = time.perf_counter()
    config = _config(bots, matches, seed, trueskill)
    if path.exists():
        with Store(path) as store:
            found = store.get_tournament(TOURNAMENT)
            if found is not None and found.config == config and store.progress(found.id).done == matches:
                return 0.0
        raise SystemExit(f"{str(path)!r} exists but is not the benchmark store for {config}: remove it or choose another --db")
    rng = random.Random(seed)
    env = RatingEnv()
    rate = _trueskill_rate(env) if trueskill else _fast_rate(env)
    keys = bot_keys(bots)
    with Store(path) as store:
        # A throwaway file: not waiting for the disk at each commit makes the build several times faster.  The store
        # has no public switch for it, and wants none outside benchmarks.
        store._conn.execute("PRAGMA synchronous = OFF")
        for key in keys:
            name, version = key.split("@")
            store.add_bot(name, version, f"/bots/{name}", f"digest-{name}", "python")
        fixtures = [Fixture(i, tuple(rng.sample(keys, TABLE)), rng.getrandbits(63)) for i in range(matches)]
        tid = store.create_tournament(TOURNAMENT, config, fixtures)
        for fixture in fixtures:
            places = rng.sample(range(1, TABLE + 1), TABLE)
            penalties = [rng.randint(0, 12) for _ in range(TABLE)]
            faults: list[dict[str, int]] = [{"timeout": 1} if rng.random() < 0.02 else {} for _ in range(TABLE)]
            store.record_result(
                tid, fixture.index, match_id=f"{TOURNAMENT}-{fixture.index:06d}", status="finished", places=places,
                totals=penalties, penalties=penalties, faults=faults, hands=rng.randint(3, 8), rate=rate,
                record=[{"type": "header", "match_id": f"{TOURNAMENT}-{fixture.index:06d}"}],
            )  # fmt: skip
        store.set_status(tid, "finished")
    return time.perf_counter() - started


def timings_ms(client: TestClient, url: str, requests: int) -> list[float]:
    """The wall time of ``requests`` GETs of ``url`` in milliseconds (after one warm-up request)."""
    warm = client.get(url)
    assert warm.status_code == 200, (url, warm.status_code, warm.text[:300])
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        if response.headers.get("content-type", "").startswith("text/csv"):
            _ = response.content  # a streamed download: timed to its last byte
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, url
    return times


def p90(values: Sequence[float]) -> float:
    """The 90th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-9 * len(ordered) // 10) - 1))]


def urls(client: TestClient, bots: int) -> dict[str, str]:
    """The pages measured, by name."""
    first, second = bot_keys(bots)[0].split("@")[0], bot_keys(bots)[min(1, bots - 1)].split("@")[0]
    cursor = client.get("/api/matches").json().get("next")
    return {
        "leaderboard": "/",
        "tournament_leaderboard": f"/tournaments/{TOURNAMENT}",
        "api_leaderboard": "/api/leaderboard",
        "bot_page": f"/bots/{first}",
        "api_bot": f"/api/bots/{first}",
        "matches_page": "/matches",
        "matches_page_2": "/matches" + (f"?{urlencode({'before': cursor})}" if cursor else ""),
        "matches_of_a_bot": f"/matches?bot={second}",
        "api_matches": "/api/matches",
        "crosstable": "/crosstable",
        "api_crosstable": "/api/crosstable",
        "crosstable_csv": f"/crosstable.csv?tournament={TOURNAMENT}",
    }


def measure(db: Path, bots: int, requests: int) -> dict[str, Any]:
    """Every page's median and 90th percentile, and whether its target is met."""
    out: dict[str, Any] = {}
    with TestClient(create_app(db)) as client:
        for name, url in urls(client, bots).items():
            times = timings_ms(client, url, min(requests, 3) if name == "crosstable_csv" else requests)
            out[f"{name}_median_ms"] = round(statistics.median(times), 3)
            out[f"{name}_p90_ms"] = round(p90(times), 3)
        out["page_bytes"] = len(client.get("/").content)
        out["crosstable_csv_bytes"] = len(client.get(f"/crosstable.csv?tournament={TOURNAMENT}").content)
    out["targets"] = {
        name: {"median_ms": out[f"{name}_median_ms"], "target_ms": target, "met": out[f"{name}_median_ms"] < target}
        for name, target in TARGETS_MS.items()
    }
    out["all_met"] = all(t["met"] for t in out["targets"].values())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Server time of every page and API route on a synthetic store.")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 bots, 100 matches, 3 requests")
    parser.add_argument("--bots", type=int, default=None, help="bots in the store (default 50)")
    parser.add_argument("--matches", type=int, default=None, help="matches in the store (default 2000)")
    parser.add_argument("--requests", type=int, default=None, help="timed requests per page (default 50)")
    parser.add_argument("--db", type=Path, default=None, help="build the store here and keep it (reused when it matches)")
    parser.add_argument("--trueskill", action="store_true", help="rate with TrueSkill instead of a cheap deterministic step")
    args = parser.parse_args(argv)
    bots = args.bots or (10 if args.quick else 50)
    matches = args.matches or (100 if args.quick else 2000)
    requests = args.requests or (3 if args.quick else 50)
    if bots < TABLE or matches < 1 or requests < 1:
        parser.error(f"need at least {TABLE} bots, 1 match and 1 request")
    with tempfile.TemporaryDirectory(prefix="polignac-web-bench-") as folder:
        db = args.db or Path(folder) / "bench.db"
        build_s = build(db, bots, matches, trueskill=args.trueskill)
        result: dict[str, Any] = {"bots": bots, "matches": matches, "requests": requests, "build_s": round(build_s, 2)}
        result.update(measure(db, bots, requests))
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"store: {bots} bots, {matches} matches, built in {result['build_s']} s" + (" (reused)" if build_s == 0 else ""))
    for key in [k for k in result if k.endswith("_median_ms")]:
        name = key.removesuffix("_median_ms")
        target = result["targets"].get(name)
        verdict = "" if target is None else f"  target < {target['target_ms']:g} ms: {'met' if target['met'] else 'NOT MET'}"
        print(f"{name:24} median {result[key]:9.2f} ms  p90 {result[name + '_p90_ms']:9.2f} ms{verdict}")
    print(f"{'page_bytes':24} {result['page_bytes']:9d}   crosstable_csv_bytes {result['crosstable_csv_bytes']}")
    print("every target met" if result["all_met"] else "some target NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
