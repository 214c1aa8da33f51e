"""Write ``store_v3.db`` and ``store_v3_expected.json`` with the arena of schema version 3.

The files are checked in: they are what a store written before version 4 looks like, and what
that arena's own reads returned from it.  ``tests/test_store_migration_v4.py`` migrates a copy
and compares.  To remake them, run this script with a version-3 arena's code (for example a
copy of that commit's tree: ``git archive <commit> | tar -x -C /tmp/v3``) on the path::

    PYTHONPATH=/tmp/v3/sdk:/tmp/v3/server python tests/data/make_v3_store.py tests/data

Deterministic: the same code writes the same results (timestamps are given, not read).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from polignac import MatchStatus
from polignac_arena.statuses import TournamentStatus
from polignac_arena.store import Store, schema_version


@dataclass(frozen=True)
class Fixture:
    index: int
    seats: tuple[str, ...]
    seed: int
    group: object


def elo(current: Mapping[str, tuple[float, float]], seats: Sequence[str], places: Sequence[int]) -> dict[str, tuple[float, float]]:
    """A small deterministic rating function (the store stores what it returns)."""
    r = {bot: current.get(bot, (25.0, 8.0)) for bot in seats}
    new = {}
    for bot in set(seats):
        mu, sigma = r[bot]
        i = seats.index(bot)
        delta = sum(
            (1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0) - 1 / (1 + 10 ** ((r[o][0] - mu) / 10))
            for j, o in enumerate(seats)
            if o != bot
        )
        new[bot] = (mu + sigma * delta / 2, sigma * 0.97)
    return new


BOTS = [f"b{n}@{v}" for n in range(7) for v in ("1",)] + ["b0@2"]
START = datetime(2026, 11, 1, tzinfo=UTC)


def fill(store: Store) -> None:
    rng = random.Random(3)
    clock = iter(START + timedelta(minutes=n) for n in range(10_000))
    for t, (name, size, n) in enumerate((("alpha", 4, 40), ("beta", 3, 30), ("gamma", 5, 12))):
        fixtures = []
        for idx in range(n):
            seats = rng.sample(BOTS, size)
            if idx % 9 == 4:
                seats[1] = seats[0]  # a bot seated twice
            fixtures.append(Fixture(idx, tuple(seats), rng.getrandbits(64), idx // 3))
        priors = {"b1@1": (27.0, 7.0), "b6@1": (20.0, 8.3)} if t == 1 else None
        tid = store.create_tournament(name, {"size": size, "n": n}, fixtures, initial_ratings=priors)
        order = [i for i in range(n) if t < 2 or i not in (5, 10, 11)]  # gamma stops with fixtures pending, one mid-way
        rng.shuffle(order)
        for idx in order:
            seated = fixtures[idx].seats
            if rng.random() < 0.15:  # an attempt, kept and rerun
                store.record_result(
                    tid, idx, match_id=f"{name}-{idx}-a", status=rng.choice([MatchStatus.ABORTED, MatchStatus.ERROR]), places=None,
                    totals=[0] * size, faults=[{}] * size, hands=rng.randint(0, 2), rate=elo, finished_at=next(clock),
                )  # fmt: skip
            if idx % 13 == 7:  # given up: a void final result
                store.record_result(
                    tid, idx, match_id=f"{name}-{idx}", status=MatchStatus.ERROR, places=None, totals=[0] * size,
                    faults=[{"crash": 1}] + [{}] * (size - 1), hands=1, rate=elo, final=True, finished_at=next(clock),
                )  # fmt: skip
                continue
            places = [rng.randint(1, size) for _ in seated]
            places = [1 + sorted(places).index(p) for p in places]  # ties share the better place
            faults = [{"timeout": rng.randint(1, 2)} if rng.random() < 0.1 else {} for _ in seated]
            if rng.random() < 0.05:
                faults[0] = {"timeout": 1, "illegal": 1}
            penalties = [rng.randint(0, 12) for _ in seated]
            store.record_result(
                tid, idx, match_id=f"{name}-{idx}", status=MatchStatus.FINISHED, places=places, totals=penalties,
                penalties=penalties, faults=faults, hands=rng.randint(3, 8), rate=elo, finished_at=next(clock),
                node=rng.choice([None, "n1", "n2"]), duration_s=rng.uniform(1, 5),
                record=[{"type": "header", "match_id": f"{name}-{idx}"}] if idx % 10 == 0 else None,
            )  # fmt: skip
        store.set_status(tid, TournamentStatus.FINISHED if t < 2 else TournamentStatus.STOPPED)


def expected(store: Store) -> dict[str, Any]:
    """What the arena that wrote the store reads from it."""
    out: dict[str, Any] = {"schema": schema_version(), "latest_ratings": store.latest_ratings(), "tournaments": {}}
    out["leaderboard"] = [asdict(row) for row in store.leaderboard()]
    out["head_to_head"] = [asdict(h) for h in store.head_to_head().values()]
    for t in store.list_tournaments():
        out["tournaments"][t.name] = {
            "leaderboard": [asdict(row) for row in store.leaderboard(t.id)],
            "head_to_head": [asdict(h) for h in store.head_to_head(t.id).values()],
            "ratings": store.ratings(t.id),
            "history": [asdict(p) for p in store.rating_history(t.id)],
            "progress": asdict(store.progress(t.id)),
            "results": [r.match_id for r in store.list_results(t.id, attempts=True)],
        }
    return out


def main(folder: str) -> None:
    db = Path(folder) / "store_v3.db"
    db.unlink(missing_ok=True)
    with Store(db) as store:
        assert schema_version() == 3, "run this with a version-3 arena's code"
        fill(store)
        data = expected(store)
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # one self-contained file
    (Path(folder) / "store_v3_expected.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
