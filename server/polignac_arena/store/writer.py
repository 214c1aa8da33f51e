"""What changes a store: bots, tournaments and their fixtures, and results with their ratings and aggregates in one transaction."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from polignac_arena.statuses import MatchStatus, TournamentStatus
from polignac_arena.store import aggregates
from polignac_arena.store.database import Database
from polignac_arena.store.encoding import (
    canonical_config,
    check_fixture,
    checked_ints,
    differences,
    encode_record,
    now_text,
    timestamp_text,
    to_json,
)
from polignac_arena.store.records import (
    ConflictError,
    FixtureLike,
    GroupRate,
    RateFunction,
    Rating,
    Recorded,
    StoreError,
    Tournament,
)


class StoreWriter(Database):
    """The writes of a store, each one ``BEGIN IMMEDIATE`` transaction."""

    def add_bot(self, name: str, version: str, path: str | Path, digest: str, language: str) -> int:
        """Register a bot version and return its id.

        Adding the same name, version and digest again returns the same id (and records the new
        path if the folder moved); another digest under a registered name and version raises
        :class:`ConflictError`: a changed bot needs a new version.
        """
        for what, value in (("name", name), ("version", version), ("digest", digest), ("language", language)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"a bot's {what} must be a non-empty string, got {value!r}")
        if "@" in name:
            raise ValueError(f"a bot's name cannot contain '@', got {name!r}")
        with self.write() as conn:
            row = conn.execute("SELECT id, digest FROM bots WHERE name = ? AND version = ?", (name, version)).fetchone()
            if row is not None:
                if row["digest"] != digest:
                    raise ConflictError(
                        f"bot {name}@{version} is already registered with other code (digest {row['digest']}, now {digest}); "
                        "give the changed bot a new version"
                    )
                conn.execute("UPDATE bots SET path = ?, language = ? WHERE id = ?", (str(path), language, row["id"]))
                return int(row["id"])
            cursor = conn.execute(
                "INSERT INTO bots (name, version, path, digest, language, added_at) VALUES (?, ?, ?, ?, ?, ?)",
                (name, version, str(path), digest, language, now_text()),
            )
            return int(cursor.lastrowid or 0)

    def create_tournament(
        self,
        name: str,
        config: Mapping[str, object] | str,
        fixtures: Iterable[FixtureLike],
        *,
        source: str | None = None,
        initial_ratings: Mapping[str, Rating] | None = None,
    ) -> int:
        """Store a tournament with its schedule and return its id, all in one transaction.

        ``config`` is a JSON object (or its text); it is compared by value, keys in any order.
        ``fixtures`` must have the indices 0, 1, 2... (a ladder may start with none and
        :meth:`add_fixtures` as it goes).  ``initial_ratings`` are the bots' priors (say a new
        version's inherited mu): stored once here, so a resumed run rates from the same priors.
        ``source`` (the TOML text) is kept for display.

        Creating it again with an equal config returns the existing id and changes nothing (the
        stored schedule and priors win): this is how ``--resume`` finds it.  Another config
        under the same name raises :class:`ConflictError`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a tournament needs a name, got {name!r}")
        canonical = canonical_config(config)
        rows = self._fixture_rows(fixtures, 0)
        priors = [(bot, *self.checked_rating(bot, rating)) for bot, rating in (initial_ratings or {}).items()]
        with self.write() as conn:
            row = conn.execute("SELECT id, config FROM tournaments WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if row["config"] != canonical:
                    keys = ", ".join(differences(json.loads(row["config"]), json.loads(canonical))[:5])
                    raise ConflictError(
                        f"a tournament named {name!r} is already stored with another configuration (differs in: {keys}); "
                        "resume it with its own file, or give this one another name"
                    )
                return int(row["id"])
            now = now_text()
            tid = int(
                conn.execute(
                    "INSERT INTO tournaments (name, config, source, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, canonical, source, TournamentStatus.SCHEDULED.value, now, now),
                ).lastrowid
                or 0
            )
            conn.execute("INSERT INTO tournament_stats (tournament_id) VALUES (?)", (tid,))
            conn.executemany("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", [(tid, *r) for r in rows])
            aggregates.add_fixture_bots(conn, tid, (json.loads(r[1]) for r in rows))
            aggregates.add_ratings(conn, tid, {bot: (mu, sigma) for bot, mu, sigma in priors}, -1, now, {})
            return tid

    @staticmethod
    def _fixture_rows(fixtures: Iterable[FixtureLike], start: int) -> list[tuple[int, str, str, str]]:
        checked = sorted((check_fixture(f) for f in fixtures), key=lambda f: f[0])
        indices = [f[0] for f in checked]
        if indices != list(range(start, start + len(checked))):
            shown = indices if len(indices) <= 10 else [*indices[:10], "..."]
            raise ValueError(f"fixture indices must run {start}, {start + 1}, ... without gaps or repeats, got {shown}")
        return [(idx, to_json(seats), str(seed), group) for idx, seats, seed, group in checked]

    @staticmethod
    def set_prior(conn: sqlite3.Connection, tournament_id: int, bot: str, rating: Rating, when: str) -> None:
        """Give a bot without a rating in the tournament its prior (inside an open write transaction)."""
        aggregates.add_ratings(conn, tournament_id, {bot: rating}, -1, when, {})

    @staticmethod
    def insert_fixture(conn: sqlite3.Connection, tournament_id: int, idx: int, seats: Sequence[str], seed: int, group: str) -> None:
        """Append one fixture (inside an open write transaction), its bots joining the tournament's leaderboard."""
        conn.execute("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", (tournament_id, idx, to_json(list(seats)), str(seed), group))
        aggregates.add_fixture_bots(conn, tournament_id, [seats])

    @staticmethod
    def checked_rating(bot: str, rating: Rating) -> Rating:
        """``rating`` as two floats, finite, sigma above 0; ``ValueError`` naming ``bot`` otherwise."""
        try:
            mu, sigma = (float(x) for x in rating)
        except (TypeError, ValueError):
            raise ValueError(f"the rating of {bot!r} must be (mu, sigma), got {rating!r}") from None
        if not (math.isfinite(mu) and math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"the rating of {bot!r} must be finite with sigma > 0, got {rating!r}")
        return mu, sigma

    def add_fixtures(self, tournament_id: int, fixtures: Iterable[FixtureLike]) -> None:
        """Extend a tournament's schedule (a ladder's matchmaking); indices continue from the last one."""
        with self.write() as conn:
            self.require(conn, tournament_id)
            count = conn.execute("SELECT count(*) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            rows = self._fixture_rows(fixtures, count)
            conn.executemany("INSERT INTO fixtures VALUES (?, ?, ?, ?, ?)", [(tournament_id, *r) for r in rows])
            aggregates.add_fixture_bots(conn, tournament_id, (json.loads(r[1]) for r in rows))
            conn.execute("UPDATE tournaments SET updated_at = ? WHERE id = ?", (now_text(), tournament_id))

    def set_status(self, tournament_id: int, status: TournamentStatus) -> None:
        """Set a tournament's status (its text is taken too); :class:`UnknownStatusError` for any other."""
        status = TournamentStatus.parse(status)
        with self.write() as conn:
            self.require(conn, tournament_id)
            conn.execute("UPDATE tournaments SET status = ?, updated_at = ? WHERE id = ?", (status.value, now_text(), tournament_id))

    def record_result(
        self,
        tournament_id: int,
        idx: int,
        *,
        match_id: str,
        status: MatchStatus,
        places: Sequence[int] | None,
        totals: Sequence[int],
        faults: Sequence[Mapping[str, int]],
        hands: int,
        rate: RateFunction | GroupRate,
        penalties: Sequence[int] | None = None,
        record: Iterable[Mapping[str, object]] | str | None = None,
        record_path: str | Path | None = None,
        duration_s: float | None = None,
        finished_at: datetime | None = None,
        final: bool | None = None,
        node: str | None = None,
    ) -> Recorded:
        """Store the result of fixture ``idx`` and apply every rating now due, in one transaction.

        ``places``, ``totals``, ``faults`` (counts by kind) and ``penalties`` (penalty points;
        default: ``totals``) are by seat, as in the fixture.  ``record`` is the match record
        (its lines, or their JSON-lines text), stored compressed; ``record_path`` where a copy
        lives, if anywhere; ``node`` the machine (or cluster node) that played it.  ``final``
        defaults to ``status is MatchStatus.FINISHED``: see the module docstring for aborted and
        errored matches.  ``status`` may be given as its text.

        A final result is stored exactly once per fixture: storing the same match id again
        changes nothing and returns ``stored=False``; another match id raises
        :class:`ConflictError`.  Then the tournament's rating cursor advances over every
        consecutive fixture that has a final result, from the cursor on, calling
        ``rate(current, seats, places)`` (see :data:`RateFunction`) for each finished one and
        storing the new ratings and their history rows; void results are passed unrated.  A
        :class:`GroupRate` rates a group of fixtures together instead (duplicate deals).  So
        results may arrive in any order and the ratings are still applied in schedule order:
        the ratings depend on the results only, never on the order they arrived in.

        If anything fails (``rate`` raising included), nothing at all is stored.
        """
        status = MatchStatus.parse(status)
        finished = status is MatchStatus.FINISHED
        final = finished if final is None else bool(final)
        if finished and not final:
            raise ValueError("a finished match is the fixture's final result: final=False is for aborted or errored ones")
        if not isinstance(match_id, str) or not match_id:
            raise ValueError(f"a result needs a match id, got {match_id!r}")
        if not isinstance(hands, int) or hands < 0:
            raise ValueError(f"hands must be a count, got {hands!r}")
        stamp = timestamp_text(finished_at) if finished_at is not None else now_text()
        blob = None if record is None else encode_record(record)
        with self.write() as conn:
            tournament = self.require(conn, tournament_id)
            fixture = conn.execute("SELECT seats FROM fixtures WHERE tournament_id = ? AND idx = ?", (tournament_id, idx)).fetchone()
            if fixture is None:
                raise StoreError(f"tournament {tournament.name!r} has no fixture {idx!r}")
            seats = json.loads(fixture["seats"])
            n = len(seats)
            checked_places = None if not finished and places is None else checked_ints(places, "places", n, minimum=1)
            checked_faults = self._faults(faults, n)
            checked_penalties = checked_ints(totals if penalties is None else penalties, "penalties", n)
            values = (
                None if checked_places is None else to_json(checked_places),
                to_json(checked_ints(totals, "totals", n)),
                to_json(checked_faults),
                to_json(checked_penalties),
            )
            existing = conn.execute(
                "SELECT match_id FROM results WHERE tournament_id = ? AND idx = ? AND final = 1", (tournament_id, idx)
            ).fetchone()
            if existing is not None:
                if existing["match_id"] == match_id and final:
                    return Recorded(False, (), tournament.rating_cursor)
                raise ConflictError(
                    f"fixture {idx} of tournament {tournament.name!r} already has its result (match {existing['match_id']}); "
                    f"refusing {'another' if final else 'an attempt'} (match {match_id})"
                )
            if final and conn.execute("SELECT 1 FROM results WHERE match_id = ? AND final = 1", (match_id,)).fetchone():
                raise ConflictError(f"match id {match_id!r} is already the result of another fixture")
            result_id = conn.execute(
                """INSERT INTO results (tournament_id, idx, match_id, status, final, places, totals, faults, penalties,
                   hands, duration_s, finished_at, record_path, node, faulted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    tournament_id,
                    idx,
                    match_id,
                    status.value,
                    int(final),
                    *values,
                    hands,
                    duration_s,
                    stamp,
                    None if record_path is None else str(record_path),
                    node,
                    int(aggregates.faulted(checked_faults)),
                ),
            ).lastrowid
            assert result_id is not None
            aggregates.add_result(
                conn, result_id, tournament_id, seats, final=final, finished=finished, places=checked_places,
                faults=checked_faults, hands=hands, penalties=checked_penalties, when=stamp,
            )  # fmt: skip
            if blob is not None:
                conn.execute("INSERT INTO records VALUES (?, 'zlib', ?)", (result_id, blob))
            rated = self._advance(conn, tournament, rate) if final else ()
            return Recorded(True, rated, tournament.rating_cursor + len(rated))

    @staticmethod
    def _faults(faults: Sequence[Mapping[str, int]], n: int) -> list[dict[str, int]]:
        if isinstance(faults, str | bytes | Mapping) or len(faults) != n:
            raise ValueError(f"faults must give one mapping of kind to count per seat ({n}), got {faults!r}")
        out = []
        for counts in faults:
            if not isinstance(counts, Mapping) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in counts.items()
            ):
                raise ValueError(f"faults must give one mapping of kind to count per seat ({n}), got {faults!r}")
            out.append({k: int(v) for k, v in counts.items()})
        return out

    def _group(
        self, conn: sqlite3.Connection, tid: int, group: str, cursor: int
    ) -> tuple[dict[str, Rating], list[tuple[list[str], list[int]]]]:
        """The ratings before fixture ``cursor``'s group began, and the group's finished results up to ``cursor``."""
        rows = conn.execute(
            """SELECT f.seats, r.places FROM fixtures f JOIN results r
               ON r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1
               WHERE f.tournament_id = ? AND f.grp = ? AND f.idx <= ? AND r.status = ? ORDER BY f.idx""",
            (tid, group, cursor, MatchStatus.FINISHED.value),
        ).fetchall()
        results = [(json.loads(seats), json.loads(places)) for seats, places in rows]
        (first,) = conn.execute("SELECT MIN(idx) FROM fixtures WHERE tournament_id = ? AND grp = ?", (tid, group)).fetchone()
        before: dict[str, Rating] = {}
        for bot in sorted({bot for seats, _ in results for bot in seats}):
            found = conn.execute(
                "SELECT mu, sigma FROM rating_history WHERE tournament_id = ? AND bot = ? AND idx < ? ORDER BY idx DESC LIMIT 1",
                (tid, bot, first),
            ).fetchone()
            if found is not None:
                before[bot] = (found["mu"], found["sigma"])
        return before, results

    def _advance(self, conn: sqlite3.Connection, tournament: Tournament, rate: RateFunction | GroupRate) -> tuple[int, ...]:
        """Move the rating cursor over the consecutive fixtures with a final result; the indices passed."""
        tid, cursor = tournament.id, tournament.rating_cursor
        passed: list[int] = []
        while True:
            row = conn.execute(
                """SELECT f.seats, r.status, r.places, r.finished_at, f.grp FROM fixtures f JOIN results r
                   ON r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1
                   WHERE f.tournament_id = ? AND f.idx = ?""",
                (tid, cursor),
            ).fetchone()
            if row is None:
                break
            status = self._status(MatchStatus, row["status"], "match status", f"the result of fixture {cursor} of {tournament.name!r}")
            if status is MatchStatus.FINISHED:
                seats = tuple(json.loads(row["seats"]))
                bots = sorted(set(seats))
                group: list[tuple[list[str], list[int]]] = []
                if isinstance(rate, GroupRate):
                    before, group = self._group(conn, tid, row["grp"], cursor)
                    bots = sorted({bot for seated, _ in group for bot in seated})
                marks = ", ".join("?" * len(bots))
                stored = {
                    bot: ((mu, sigma), (recent, points))
                    for bot, mu, sigma, recent, points in conn.execute(
                        f"SELECT bot, mu, sigma, recent, points FROM ratings WHERE tournament_id = ? AND bot IN ({marks})", (tid, *bots)
                    ).fetchall()
                }
                current = {bot: rating for bot, (rating, _trend) in stored.items()}
                new = rate.rate(before, group) if isinstance(rate, GroupRate) else rate(current, seats, tuple(json.loads(row["places"])))
                if sorted(new) != bots:
                    raise ValueError(
                        f"rating fixture {cursor}: the rate function must return a rating for each of {bots}, got {sorted(new)}"
                    )
                checked = {bot: self.checked_rating(bot, new[bot]) for bot in bots}
                trends = {bot: trend for bot, (_rating, trend) in stored.items()}
                aggregates.add_ratings(conn, tid, checked, cursor, row["finished_at"], trends)
            passed.append(cursor)
            cursor += 1
        if passed:
            conn.execute("UPDATE tournaments SET rating_cursor = ?, updated_at = ? WHERE id = ?", (cursor, now_text(), tid))
        return tuple(passed)
