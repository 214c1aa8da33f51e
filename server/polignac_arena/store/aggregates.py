"""The store's aggregates (schema version 4): kept up to date with every result, rebuilt and checked from the results.

The tables are described in the :mod:`polignac_arena.store` package's docstring.  Writes go
through the ``add_*`` functions, inside the write transaction that stores the result or the
rating, so an aggregate is never ahead of or behind what it sums.  :func:`recompute` derives
every aggregate from the results, the fixtures and the rating history alone; the version 4
migration writes what it finds (:func:`rebuild`) and :func:`differences` compares it with what
is stored (``polignac store check``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from polignac_arena.store.encoding import SqlRow, SqlValue, to_json

_P = TypeVar("_P")

RECENT_MU: Final = 20
"""How many of a bot's last mu values a leaderboard row carries (its trend)."""
TRAIL_EXACT: Final = 32
"""A rating trail keeps a bot's last points of a tournament exactly..."""
TRAIL_SAMPLES: Final = 256
"""...and at most this many (plus one) evenly spaced points before them."""

FINISHED: Final = "finished"

BOT_COLUMNS: Final = (
    "matches", "wins", "place_sum", "places", "penalty_sum", "hands", "faults", "fault_total", "first_played", "last_played",
)  # fmt: skip
PAIR_COLUMNS: Final = ("meetings", "a_ahead", "b_ahead", "place_diff_sum")
TOURNAMENT_COLUMNS: Final = ("done", "void", "attempts", "faults")
SEAT_COLUMNS: Final = ("tournament_id", "place", "fault_total")
TRAIL_COLUMNS: Final = ("idx", "mu", "sigma")


@dataclass
class BotTally:
    """A bot's statistics over finished final results (one tournament's, or all of them)."""

    matches: int = 0
    wins: int = 0
    place_sum: int = 0
    places: list[int] = field(default_factory=list)
    """``places[i]``: matches finished in place ``i + 1``."""
    penalty_sum: int = 0
    hands: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    first_played: str | None = None
    last_played: str | None = None

    def add(self, place: int, penalty: int, hands: int, faults: Mapping[str, int], when: str) -> None:
        """Count one seat of one finished match."""
        self.matches += 1
        self.wins += place == 1
        self.place_sum += place
        if len(self.places) < place:
            self.places.extend([0] * (place - len(self.places)))
        self.places[place - 1] += 1
        self.penalty_sum += penalty
        self.hands += hands
        for kind, count in faults.items():
            self.faults[kind] = self.faults.get(kind, 0) + count
        self.first_played = when if self.first_played is None or when < self.first_played else self.first_played
        self.last_played = when if self.last_played is None or when > self.last_played else self.last_played

    def merge(self, other: BotTally) -> None:
        """Add another tally of the same bot."""
        self.matches += other.matches
        self.wins += other.wins
        self.place_sum += other.place_sum
        if len(self.places) < len(other.places):
            self.places.extend([0] * (len(other.places) - len(self.places)))
        for i, count in enumerate(other.places):
            self.places[i] += count
        self.penalty_sum += other.penalty_sum
        self.hands += other.hands
        for kind, count in other.faults.items():
            self.faults[kind] = self.faults.get(kind, 0) + count
        for when in (other.first_played, other.last_played):
            if when is not None:
                self.first_played = when if self.first_played is None or when < self.first_played else self.first_played
                self.last_played = when if self.last_played is None or when > self.last_played else self.last_played

    def row(self) -> SqlRow:
        """The values of :data:`BOT_COLUMNS`."""
        faults = to_json(dict(sorted(self.faults.items()))) if self.faults else "{}"
        return (
            self.matches, self.wins, self.place_sum, numbers_text(self.places), self.penalty_sum, self.hands, faults,
            sum(self.faults.values()), self.first_played, self.last_played,
        )  # fmt: skip

    @classmethod
    def of(cls, row: Sequence[Any]) -> BotTally:
        """A tally from the values of :data:`BOT_COLUMNS`."""
        faults = {} if row[6] == "{}" else json.loads(row[6])
        return cls(row[0], row[1], row[2], [int(x) for x in _items(row[3])], row[4], row[5], faults, row[8], row[9])


# Every result rewrites a few of these small JSON lists: written and read here without the json
# module, in exactly its canonical form (no spaces; a float as its repr).


def numbers_text(values: Sequence[float]) -> str:
    """``values`` (ints or finite floats) as canonical JSON."""
    return "[" + ",".join(map(repr, values)) + "]"


def _items(text: str) -> list[str]:
    """The items of a JSON list of numbers written by :func:`numbers_text`."""
    return text[1:-1].split(",") if text != "[]" else []


def floats_of(text: str) -> list[float]:
    """A JSON list of numbers written by :func:`numbers_text`, as floats."""
    return [float(x) for x in _items(text)]


def seat_tallies(
    seats: Sequence[str], places: Sequence[int], faults: Sequence[Mapping[str, int]], hands: int, penalties: Sequence[int], when: str
) -> dict[str, BotTally]:
    """What one finished match adds to each of its bots (a bot seated twice counts twice)."""
    out: dict[str, BotTally] = {}
    for seat, bot in enumerate(seats):
        out.setdefault(bot, BotTally()).add(places[seat], penalties[seat], hands, faults[seat], when)
    return out


def pair_tallies(seats: Sequence[str], places: Sequence[int]) -> dict[tuple[str, str], list[int]]:
    """What one finished match adds to each pair ``a < b`` of its bots: meetings, a ahead, b ahead, sum of place(a) - place(b).

    Each pair of seats is one meeting (a bot seated twice meets its rival twice; never itself).
    """
    out: dict[tuple[str, str], list[int]] = {}
    for i, a in enumerate(seats):
        for j, b in enumerate(seats):
            if a < b:
                tally = out.setdefault((a, b), [0, 0, 0, 0])
                diff = places[i] - places[j]
                tally[0] += 1
                tally[1] += diff < 0
                tally[2] += diff > 0
                tally[3] += diff
    return out


def fault_total(faults: Mapping[str, int]) -> int:
    return sum(faults.values())


def faulted(faults: Sequence[Mapping[str, int]]) -> bool:
    """Whether some seat of a result faulted (the match list's filter)."""
    return any(fault_total(f) for f in faults)


# -- trails ---------------------------------------------------------------------------------------


def trail_stride(points: int) -> int:
    """The spacing of the sampled part of a trail of ``points`` points (a power of two)."""
    sampled = points - 1 - TRAIL_EXACT  # the last ordinal of the sampled part
    stride = 1
    while sampled > TRAIL_SAMPLES * stride:
        stride *= 2
    return stride


def trail_keeps(points: int) -> Iterator[int]:
    """The ordinals (0 first) a trail of ``points`` points keeps: every stride-th, and the last :data:`TRAIL_EXACT`."""
    stride = trail_stride(points)
    for ordinal in range(points):
        if ordinal % stride == 0 or ordinal > points - 1 - TRAIL_EXACT:
            yield ordinal


def thin(points: Sequence[_P], max_points: int) -> list[_P]:
    """At most ``max_points`` of ``points``: the last ones exact, the rest evenly spaced from the first."""
    if len(points) <= max_points:
        return list(points)
    exact = max(1, min(TRAIL_EXACT, max_points // 2))
    head, tail = points[: len(points) - exact], points[len(points) - exact :]
    room = max_points - exact
    if room <= 1:
        return [*head[:room], *tail]  # the first point, when there is room for it
    step = (len(head) - 1) / (room - 1)
    return [*(head[round(i * step)] for i in range(room)), *tail]


# -- writing --------------------------------------------------------------------------------------

_BOT_SET = ", ".join(f"{c} = excluded.{c}" for c in BOT_COLUMNS)
_BOT_MARKS = ", ".join("?" * len(BOT_COLUMNS))
_PAIR_ADD = ", ".join(f"{c} = {c} + excluded.{c}" for c in PAIR_COLUMNS)


def add_fixture_bots(conn: sqlite3.Connection, tournament_id: int, seats: Iterable[Sequence[str]]) -> None:
    """Give every bot of a tournament's schedule its (empty) row: the tournament's leaderboard lists it."""
    bots = sorted({bot for table in seats for bot in table})
    conn.executemany("INSERT OR IGNORE INTO bot_stats (tournament_id, bot) VALUES (?, ?)", [(tournament_id, bot) for bot in bots])


def add_result(
    conn: sqlite3.Connection,
    result_id: int,
    tournament_id: int,
    seats: Sequence[str],
    *,
    final: bool,
    finished: bool,
    places: Sequence[int] | None,
    faults: Sequence[Mapping[str, int]],
    hands: int,
    penalties: Sequence[int],
    when: str,
) -> None:
    """Count a result just inserted: its tournament's progress, its seats, and (finished and final) its bots and pairs."""
    totals = [fault_total(f) for f in faults]
    counts: dict[str, int] = {}
    if final:
        for seat_faults in faults:
            for kind, count in seat_faults.items():
                counts[kind] = counts.get(kind, 0) + count
    conn.execute(
        "INSERT INTO tournament_stats (tournament_id, done, void, attempts) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
        "done = done + excluded.done, void = void + excluded.void, attempts = attempts + excluded.attempts",
        (tournament_id, int(final), int(final and not finished), int(not final)),
    )
    if counts:
        (text,) = conn.execute("SELECT faults FROM tournament_stats WHERE tournament_id = ?", (tournament_id,)).fetchone()
        stored: dict[str, int] = json.loads(text)
        for kind, count in counts.items():
            stored[kind] = stored.get(kind, 0) + count
        conn.execute(
            "UPDATE tournament_stats SET faults = ? WHERE tournament_id = ?", (to_json(dict(sorted(stored.items()))), tournament_id)
        )
    if not final:
        return
    conn.executemany(
        "INSERT INTO result_seats VALUES (?, ?, ?, ?, ?, ?)",
        [(bot, result_id, seat, tournament_id, None if places is None else places[seat], totals[seat]) for seat, bot in enumerate(seats)],
    )
    if not finished or places is None:
        return
    tallies = seat_tallies(seats, places, faults, hands, penalties, when)
    _add_bots(conn, tournament_id, tallies)
    conn.executemany(
        f"INSERT INTO pair_stats VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET {_PAIR_ADD}",
        [(a, b, tournament_id, *t) for (a, b), t in pair_tallies(seats, places).items()],
    )


def _add_bots(conn: sqlite3.Connection, tournament_id: int, tallies: Mapping[str, BotTally]) -> None:
    bots = sorted(tallies)
    stored = {
        row[0]: BotTally.of(row[1:])
        for row in conn.execute(
            f"SELECT bot, {', '.join(BOT_COLUMNS)} FROM bot_stats WHERE tournament_id = ? AND bot IN ({', '.join('?' * len(bots))})",
            (tournament_id, *bots),
        )
    }
    rows = []
    for bot in bots:
        tally = stored.get(bot, BotTally())
        tally.merge(tallies[bot])
        rows.append((tournament_id, bot, *tally.row()))
    conn.executemany(
        f"INSERT INTO bot_stats (tournament_id, bot, {', '.join(BOT_COLUMNS)}) VALUES (?, ?, {_BOT_MARKS}) "
        f"ON CONFLICT DO UPDATE SET {_BOT_SET}",
        rows,
    )


def add_ratings(
    conn: sqlite3.Connection,
    tournament_id: int,
    ratings: Mapping[str, tuple[float, float]],
    idx: int,
    when: str,
    before: Mapping[str, tuple[str, int]],
) -> None:
    """Store bots' new ratings after fixture ``idx`` (-1: their priors), with their history, trends and trails.

    ``before`` gives each bot's ``(recent, points)`` from its current ``ratings`` row (absent: no row yet).
    """
    rows, history, trail, thinning = [], [], [], []
    for bot, (mu, sigma) in sorted(ratings.items()):
        recent, points = (floats_of(before[bot][0]), before[bot][1]) if bot in before else ([], 0)
        rows.append((tournament_id, bot, mu, sigma, idx, when, numbers_text([*recent, mu][-RECENT_MU:]), points + 1))
        history.append((tournament_id, idx, bot, mu, sigma))
        trail.append((tournament_id, bot, points, idx, mu, sigma))
        old, new, leaving = trail_stride(points), trail_stride(points + 1), points - TRAIL_EXACT
        if new != old:  # the stride doubles: every other sampled point goes
            conn.execute(
                "DELETE FROM rating_trail WHERE tournament_id = ? AND bot = ? AND n <= ? AND n % ? != 0", (tournament_id, bot, leaving, new)
            )
        elif leaving >= 0 and leaving % new:  # the point leaving the exact tail is not a sample
            thinning.append((tournament_id, bot, leaving))
    conn.executemany(
        "INSERT INTO ratings (tournament_id, bot, mu, sigma, idx, updated_at, recent, points) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tournament_id, bot) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, idx = excluded.idx, "
        "updated_at = excluded.updated_at, recent = excluded.recent, points = excluded.points",
        rows,
    )
    conn.executemany("INSERT OR REPLACE INTO rating_history VALUES (?, ?, ?, ?, ?)", history)
    conn.executemany("INSERT OR REPLACE INTO rating_trail VALUES (?, ?, ?, ?, ?, ?)", trail)
    conn.executemany("DELETE FROM rating_trail WHERE tournament_id = ? AND bot = ? AND n = ?", thinning)
    if idx < 0:  # a prior: the bot is on the tournament's leaderboard even if no fixture seats it
        conn.executemany("INSERT OR IGNORE INTO bot_stats (tournament_id, bot) VALUES (?, ?)", [(tournament_id, bot) for bot in ratings])


# -- recomputing, rebuilding, checking -------------------------------------------------------------


@dataclass
class Aggregates:
    """Every aggregate table's rows by key, as their columns' values (JSON as canonical text)."""

    tournament_stats: dict[SqlRow, SqlRow] = field(default_factory=dict)
    bot_stats: dict[SqlRow, SqlRow] = field(default_factory=dict)
    pair_stats: dict[SqlRow, SqlRow] = field(default_factory=dict)
    result_seats: dict[SqlRow, SqlRow] = field(default_factory=dict)
    faulted: dict[SqlRow, SqlRow] = field(default_factory=dict)
    ratings: dict[SqlRow, SqlRow] = field(default_factory=dict)
    rating_trail: dict[SqlRow, SqlRow] = field(default_factory=dict)


TABLES: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "tournament_stats": (("tournament_id",), TOURNAMENT_COLUMNS),
    "bot_stats": (("tournament_id", "bot"), BOT_COLUMNS),
    "pair_stats": (("a", "b", "tournament_id"), PAIR_COLUMNS),
    "result_seats": (("bot", "result_id", "seat"), SEAT_COLUMNS),
    "faulted": (("id",), ("faulted",)),
    "ratings": (("tournament_id", "bot"), ("recent", "points")),
    "rating_trail": (("tournament_id", "bot", "n"), TRAIL_COLUMNS),
}
"""Per aggregate: its key columns and value columns (``faulted`` is the column of ``results``; ``ratings`` the columns v4 added)."""


@dataclass
class _Progress:
    """A tournament's progress while :func:`recompute` counts it."""

    done: int = 0
    void: int = 0
    attempts: int = 0
    faults: dict[str, int] = field(default_factory=dict)


def recompute(conn: sqlite3.Connection) -> Aggregates:
    """Every aggregate, derived from the results, fixtures, ratings and rating history alone."""
    out = Aggregates()
    bots: dict[tuple[int, str], BotTally] = {}
    pairs: dict[tuple[str, str, int], list[int]] = {}
    progress: dict[int, _Progress] = {}
    for (tid,) in conn.execute("SELECT id FROM tournaments"):
        progress[tid] = _Progress()
    for tid, seats in conn.execute("SELECT tournament_id, seats FROM fixtures"):
        for bot in json.loads(seats):
            bots.setdefault((tid, bot), BotTally())
    for tid, bot in conn.execute("SELECT tournament_id, bot FROM ratings"):
        bots.setdefault((tid, bot), BotTally())
    query = """SELECT r.id, r.tournament_id, r.status, r.final, r.places, r.faults, r.hands, r.penalties, r.finished_at, f.seats
               FROM results r JOIN fixtures f ON f.tournament_id = r.tournament_id AND f.idx = r.idx ORDER BY r.id"""
    for rid, tid, status, final, places_text, faults_text, hands, penalties_text, when, seats_text in conn.execute(query):
        seats, faults = json.loads(seats_text), json.loads(faults_text)
        places = None if places_text is None else json.loads(places_text)
        seat_totals = [fault_total(f) for f in faults]
        out.faulted[(rid,)] = (int(faulted(faults)),)
        stats = progress.setdefault(tid, _Progress())
        if not final:
            stats.attempts += 1
            continue
        stats.done += 1
        stats.void += status != FINISHED
        for seat_faults in faults:
            for kind, count in seat_faults.items():
                stats.faults[kind] = stats.faults.get(kind, 0) + count
        for seat, bot in enumerate(seats):
            place = None if places is None else places[seat]
            out.result_seats[(bot, rid, seat)] = (tid, place, seat_totals[seat])
        if status != FINISHED or places is None:
            continue
        for bot, tally in seat_tallies(seats, places, faults, hands, json.loads(penalties_text), when).items():
            bots.setdefault((tid, bot), BotTally()).merge(tally)
        for (a, b), pair in pair_tallies(seats, places).items():
            old = pairs.setdefault((a, b, tid), [0, 0, 0, 0])
            for i, value in enumerate(pair):
                old[i] += value
    for tid, stats in progress.items():
        out.tournament_stats[(tid,)] = (stats.done, stats.void, stats.attempts, to_json(dict(sorted(stats.faults.items()))))
    out.bot_stats = {key: tally.row() for key, tally in bots.items()}
    out.pair_stats = {key: tuple(v) for key, v in pairs.items()}
    _recompute_ratings(conn, out)
    return out


def _recompute_ratings(conn: sqlite3.Connection, out: Aggregates) -> None:
    """Fill the trends and trails from the rating history."""
    history: dict[tuple[int, str], list[tuple[int, float, float]]] = {}
    for tid, bot, idx, mu, sigma in conn.execute("SELECT tournament_id, bot, idx, mu, sigma FROM rating_history ORDER BY idx"):
        history.setdefault((tid, bot), []).append((idx, mu, sigma))
    recent: dict[tuple[int, str], str] = {}
    for key, points in history.items():
        recent[key] = numbers_text([mu for _idx, mu, _sigma in points[-RECENT_MU:]])
        for ordinal in trail_keeps(len(points)):
            out.rating_trail[(*key, ordinal)] = points[ordinal]
    for tid, bot in conn.execute("SELECT tournament_id, bot FROM ratings"):
        out.ratings[(tid, bot)] = (recent.get((tid, bot), "[]"), len(history.get((tid, bot), ())))


def stored(conn: sqlite3.Connection) -> Aggregates:
    """Every aggregate as stored."""
    out = Aggregates()
    for table, (keys, columns) in TABLES.items():
        source = {"faulted": "results", "ratings": "ratings"}.get(table, table)
        rows = conn.execute(f"SELECT {', '.join((*keys, *columns))} FROM {source}")
        setattr(out, table, {tuple(row[: len(keys)]): tuple(row[len(keys) :]) for row in rows})
    return out


def rebuild(conn: sqlite3.Connection) -> None:
    """Write every aggregate from scratch (the tables empty, as the migration creates them)."""
    fresh = recompute(conn)
    conn.executemany("UPDATE results SET faulted = 1 WHERE id = ?", [k for k, v in fresh.faulted.items() if v[0]])
    conn.executemany(
        "UPDATE ratings SET recent = ?, points = ? WHERE tournament_id = ? AND bot = ?", [(*v, *k) for k, v in fresh.ratings.items()]
    )
    for table in ("tournament_stats", "bot_stats", "pair_stats", "result_seats", "rating_trail"):
        keys, columns = TABLES[table]
        rows = getattr(fresh, table).items()
        marks = ", ".join("?" * (len(keys) + len(columns)))
        conn.executemany(f"INSERT INTO {table} ({', '.join((*keys, *columns))}) VALUES ({marks})", [(*k, *v) for k, v in rows])


def differences(conn: sqlite3.Connection, names: Mapping[int, str], limit: int = 1000) -> list[str]:
    """Every difference between the stored aggregates and a recomputation, one line each (at most ``limit``).

    ``names`` gives each tournament's name, for the lines.
    """
    want, have = recompute(conn), stored(conn)
    out: list[str] = []
    for table, (keys, columns) in TABLES.items():
        label = {"faulted": "results", "ratings": "ratings"}.get(table, table)
        expected, found = getattr(want, table), getattr(have, table)
        wrong = [key for key in expected.keys() | found.keys() if expected.get(key) != found.get(key)]
        for key in sorted(wrong, key=repr):
            where = _where(keys, key, names)
            if key not in found:
                out.append(f"{label}: {where}: missing (recomputed {_values(columns, expected[key])})")
            elif key not in expected:
                out.append(f"{label}: {where}: not in the results (stored {_values(columns, found[key])})")
            else:
                for column, a, b in zip(columns, found[key], expected[key], strict=True):
                    if a != b:
                        out.append(f"{label}: {where}: {column} is {a!r}, recomputed {b!r}")
            if len(out) >= limit:
                return [*out[:limit], f"(more differences not shown: the first {limit} are above)"]
    return out


def _where(keys: Sequence[str], key: Sequence[SqlValue], names: Mapping[int, str]) -> str:
    parts = []
    for column, value in zip(keys, key, strict=True):
        if column == "tournament_id" and isinstance(value, int):
            parts.append(f"tournament {names.get(value, value)!r}")
        elif column == "tournament_id":
            parts.append(f"tournament {value!r}")
        elif column in ("id", "result_id"):
            parts.append(f"result {value!s}")
        else:
            parts.append(f"{column} {value!r}")
    return ", ".join(parts)


def _values(columns: Sequence[str], values: Sequence[SqlValue]) -> str:
    return ", ".join(f"{c} {v!r}" for c, v in zip(columns, values, strict=True))
