"""What reads a store: bots, tournaments, fixtures, results, ratings, leaderboards, head-to-head counts and checks."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime

from polignac_arena.statuses import MatchStatus, TournamentStatus, UnknownStatusError
from polignac_arena.store import aggregates
from polignac_arena.store.database import Database
from polignac_arena.store.encoding import (
    SqlValue,
    decode_record,
    split_key,
    to_json,
)
from polignac_arena.store.records import (
    Bot,
    BotSummary,
    FaultEntry,
    HeadToHead,
    LeaderboardRow,
    NodeThroughput,
    Progress,
    Rating,
    RatingPoint,
    StoredFixture,
    StoredResult,
    Tournament,
)


class StoreQueries(Database):
    """The reads of a store, each one read transaction (one consistent snapshot)."""

    def get_bot(self, name: str, version: str | None = None) -> Bot | None:
        """The bot ``name`` at ``version``, or its latest added version when ``version`` is None; None if unknown."""
        with self.read() as conn:
            if version is None:
                row = conn.execute(f"{self._BOT} WHERE name = ? ORDER BY added_at DESC, id DESC LIMIT 1", (name,)).fetchone()
            else:
                row = conn.execute(f"{self._BOT} WHERE name = ? AND version = ?", (name, version)).fetchone()
        return None if row is None else Bot(*row)

    def list_bots(self) -> list[Bot]:
        """Every registered bot version, by name then in the order added."""
        with self.read() as conn:
            rows = conn.execute(f"{self._BOT} ORDER BY name, added_at, id").fetchall()
        return [Bot(*row) for row in rows]

    def get_tournament(self, key: str | int) -> Tournament | None:
        """The tournament of that name (a ``str``) or id (an ``int``); None if there is none."""
        column = "id" if isinstance(key, int) else "name"
        with self.read() as conn:
            row = conn.execute(f"{self._TOURNAMENT} WHERE {column} = ?", (key,)).fetchone()
        return None if row is None else self._tournament(row)

    def list_tournaments(self) -> list[Tournament]:
        """Every tournament, oldest first."""
        with self.read() as conn:
            rows = conn.execute(f"{self._TOURNAMENT} ORDER BY id").fetchall()
        return [self._tournament(row) for row in rows]

    def fixtures(self, tournament_id: int) -> list[StoredFixture]:
        """A tournament's whole schedule, in order."""
        with self.read() as conn:
            self.require(conn, tournament_id)
            rows = conn.execute(
                "SELECT idx, seats, seed, grp FROM fixtures WHERE tournament_id = ? ORDER BY idx", (tournament_id,)
            ).fetchall()
        return [self._fixture(row) for row in rows]

    def pending_fixtures(self, tournament_id: int) -> list[StoredFixture]:
        """The fixtures without a final result, in schedule order: what a (resumed) run still has to play."""
        with self.read() as conn:
            self.require(conn, tournament_id)
            rows = conn.execute(
                """SELECT idx, seats, seed, grp FROM fixtures f WHERE tournament_id = ? AND NOT EXISTS
                   (SELECT 1 FROM results r WHERE r.tournament_id = f.tournament_id AND r.idx = f.idx AND r.final = 1)
                   ORDER BY idx""",
                (tournament_id,),
            ).fetchall()
        return [self._fixture(row) for row in rows]

    def progress(self, tournament_id: int) -> Progress:
        """Fixtures in all, done, void, rated, attempts, and faults by kind over the final results."""
        with self.read() as conn:
            tournament = self.require(conn, tournament_id)
            last = conn.execute("SELECT max(idx) FROM fixtures WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
            row = conn.execute(
                "SELECT done, void, attempts, faults FROM tournament_stats WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
            unknown = self._unknown_status(conn, tournament_id)
        if unknown is not None:
            self._status(MatchStatus, unknown, "match status", f"a result of tournament {tournament.name!r}")
        done, void, attempts, faults = (0, 0, 0, "{}") if row is None else row
        return Progress(0 if last is None else last + 1, done, void, tournament.rating_cursor, attempts, json.loads(faults))

    def get_result(self, match_id: str) -> StoredResult | None:
        """The match with that id, with its record: the final result, else the latest attempt; None if unknown."""
        with self.read() as conn:
            row = conn.execute(f"{self._RESULT} WHERE r.match_id = ? ORDER BY r.final DESC, r.id DESC LIMIT 1", (match_id,)).fetchone()
            if row is None:
                return None
            blob = conn.execute("SELECT encoding, data FROM records WHERE result_id = ?", (row["id"],)).fetchone()
        return self._result(row, None if blob is None else decode_record(blob["encoding"], blob["data"]))

    def list_results(self, tournament_id: int, *, attempts: bool = False) -> list[StoredResult]:
        """A tournament's final results in schedule order (with ``attempts``, the attempts too), without records."""
        with self.read() as conn:
            self.require(conn, tournament_id)
            where = "" if attempts else " AND r.final = 1"
            rows = conn.execute(f"{self._RESULT} WHERE r.tournament_id = ?{where} ORDER BY r.idx, r.id", (tournament_id,)).fetchall()
        return [self._result(row) for row in rows]

    def node_throughput(self, tournament_id: int) -> list[NodeThroughput]:
        """Per node that played its final results: how many, and the time they span (by node name)."""
        with self.read() as conn:
            self.require(conn, tournament_id)
            rows = conn.execute(
                """SELECT COALESCE(node, ''), COUNT(*), COALESCE(SUM(duration_s), 0), MAX(COALESCE(duration_s, 0)),
                   MIN(finished_at), MAX(finished_at) FROM results WHERE tournament_id = ? AND final = 1
                   GROUP BY COALESCE(node, '') ORDER BY 1""",
                (tournament_id,),
            ).fetchall()
        out = []
        for node, matches, busy, longest, first, last in rows:
            # The span runs from the first match's start (its end less a match's length) to the last one's end.
            span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds() + busy / matches
            out.append(NodeThroughput(node, matches, float(busy), span if longest > 0 else 0.0))
        return out

    def ratings(self, tournament_id: int) -> dict[str, Rating]:
        """The current ratings of a tournament's bots (those rated or given a prior), by bot key."""
        with self.read() as conn:
            self.require(conn, tournament_id)
            rows = conn.execute("SELECT bot, mu, sigma FROM ratings WHERE tournament_id = ? ORDER BY bot", (tournament_id,)).fetchall()
        return {bot: (mu, sigma) for bot, mu, sigma in rows}

    def rating_history(self, tournament_id: int, bot: str | None = None, *, max_points: int | None = None) -> list[RatingPoint]:
        """Ratings after each rated fixture (idx -1: the priors), in schedule order, for one bot or all.

        With ``max_points`` (and a ``bot``), at most that many points, for a chart: read from the
        bot's rating trail (its last points exact, evenly spaced ones before them), so a long
        history costs no more than a short one.
        """
        if max_points is not None:
            if bot is None:
                raise ValueError("max_points needs a bot: a chart reads one bot's trail")
            if max_points < 1:
                raise ValueError(f"max_points must be 1 or more, got {max_points!r}")
            with self.read() as conn:
                self.require(conn, tournament_id)
                rows = conn.execute(
                    "SELECT idx, bot, mu, sigma FROM rating_trail WHERE tournament_id = ? AND bot = ? ORDER BY n", (tournament_id, bot)
                ).fetchall()
            return [RatingPoint(*row) for row in aggregates.thin(rows, max_points)]
        query = "SELECT idx, bot, mu, sigma FROM rating_history WHERE tournament_id = ?"
        args: tuple[SqlValue, ...] = (tournament_id,)
        if bot is not None:
            query, args = query + " AND bot = ?", (*args, bot)
        with self.read() as conn:
            self.require(conn, tournament_id)
            rows = conn.execute(query + " ORDER BY idx, bot", args).fetchall()
        return [RatingPoint(*row) for row in rows]

    def latest_ratings(self) -> dict[str, Rating]:
        """Each bot's most recent rating across tournaments (by the time of the result that set it).

        A rating from a played match wins over a prior that was never played.  To seed a new
        tournament's priors, call this once and pass them to :meth:`create_tournament`.
        """
        with self.read() as conn:
            return self._latest(conn)

    @staticmethod
    def _board(tournament_id: int | None, only: str = "") -> str:
        """The leaderboard's rows as a subquery (its columns: :attr:`_BOARD_COLUMNS`; ``places`` and ``faults`` as JSON lists to add up).

        All-time: each bot's rows summed over the tournaments, with its latest rating
        (:meth:`latest_ratings`' order), for the bots rated or with a finished match.
        """
        if tournament_id is not None:
            return f"""(SELECT s.bot, r.mu, r.sigma, COALESCE(r.recent, '[]') AS recent, s.matches, s.wins, s.place_sum,
                        '[' || s.places || ']' AS places, s.penalty_sum, s.hands, '[' || s.faults || ']' AS faults, s.first_played,
                        s.last_played FROM bot_stats s LEFT JOIN ratings r ON r.tournament_id = s.tournament_id AND r.bot = s.bot
                        WHERE s.tournament_id = {int(tournament_id)})"""
        return f"""(SELECT s.bot, l.mu, l.sigma, COALESCE(l.recent, '[]') AS recent, s.matches, s.wins, s.place_sum, s.places,
                   s.penalty_sum, s.hands, s.faults, s.first_played, s.last_played
                   FROM (SELECT bot, sum(matches) AS matches, sum(wins) AS wins, sum(place_sum) AS place_sum,
                         '[' || group_concat(places) || ']' AS places, sum(penalty_sum) AS penalty_sum, sum(hands) AS hands,
                         '[' || group_concat(faults) || ']' AS faults, min(first_played) AS first_played, max(last_played) AS last_played
                         FROM bot_stats {only} GROUP BY bot) s
                   LEFT JOIN ({Database._LATEST}) l ON l.bot = s.bot
                   WHERE s.matches > 0 OR l.bot IS NOT NULL)"""

    @staticmethod
    def _board_row(rank: int, row: sqlite3.Row) -> LeaderboardRow:
        """A row of :attr:`_BOARD_COLUMNS`, ranked."""
        matches, hands = row["matches"], row["hands"]
        name, version = split_key(row["bot"])
        return LeaderboardRow(
            rank, row["bot"], name, version, row["mu"], row["sigma"], matches, row["wins"],
            row["place_sum"] / matches if matches else None, row["penalty_sum"] / hands if hands else None,
            StoreQueries._added_faults(row["faults"]), tuple(aggregates.floats_of(row["recent"])),
        )  # fmt: skip

    @staticmethod
    def _added_faults(text: str) -> dict[str, int]:
        """A board row's faults by kind: its tournaments' counts (a JSON list of objects) added up."""
        total: dict[str, int] = {}
        if '"' not in text:
            return total  # no kind named: no faults (most rows)
        for counts in json.loads(text):
            for kind, count in counts.items():
                total[kind] = total.get(kind, 0) + count
        return dict(sorted(total.items()))

    @staticmethod
    def _added_places(text: str) -> dict[int, int]:
        """A board row's finished matches by place: its tournaments' counts (a JSON list of lists) added up."""
        total: dict[int, int] = {}
        for counts in json.loads(text):
            for place, count in enumerate(counts, start=1):
                total[place] = total.get(place, 0) + count
        return {place: count for place, count in sorted(total.items()) if count}

    def leaderboard(self, tournament_id: int | None = None, *, limit: int | None = None, offset: int = 0) -> list[LeaderboardRow]:
        """The leaderboard of one tournament, or all-time (None), best first; ``limit`` rows from ``offset`` (0: the best).

        Ordered by the conservative rating ``mu - 3 sigma`` (then mu, then key); bots without a
        rating yet come last.  One tournament: its current ratings, and every bot of its
        schedule.  All-time: each bot's :meth:`latest_ratings`, statistics summed over every
        tournament.  A bot seated twice at a table counts twice.  Statistics count the final
        finished results.  Read from the aggregates: the cost is the rows returned, not the results.
        """
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be 0 or more, got {limit!r}")
        if offset < 0:
            raise ValueError(f"offset must be 0 or more, got {offset!r}")
        window = (-1 if limit is None else limit, offset)
        with self.read_in(tournament_id) as conn:
            if tournament_id is None and limit is not None:
                # A page of the all-time board: its bots are ordered by their ratings alone, and only theirs are summed.
                page = [bot for (bot,) in conn.execute(f"SELECT bot FROM {self._RANKING} {self._BOARD_ORDER} LIMIT ? OFFSET ?", window)]
                chosen = self._board(None, "WHERE bot IN (SELECT value FROM json_each(?))")
                found = {row["bot"]: row for row in conn.execute(f"SELECT {self._BOARD_COLUMNS} FROM {chosen}", (to_json(page),))}
                rows = [found[bot] for bot in page]
            else:
                rows = conn.execute(
                    f"SELECT {self._BOARD_COLUMNS} FROM {self._board(tournament_id)} {self._BOARD_ORDER} LIMIT ? OFFSET ?", window
                ).fetchall()
        return [self._board_row(rank, row) for rank, row in enumerate(rows, start=offset + 1)]

    def leaderboard_size(self, tournament_id: int | None = None, *, rated: bool = False) -> int:
        """How many rows :meth:`leaderboard` has (with ``rated``: only the rated ones, which come first)."""
        with self.read() as conn:
            if tournament_id is None:  # every rated bot is on the all-time board
                query = "SELECT count(DISTINCT bot) FROM ratings" if rated else f"SELECT count(*) FROM ({self._ALL_TIME_BOTS})"
                return int(conn.execute(query).fetchone()[0])
            self.require(conn, tournament_id)  # a tournament's rated bots are on its board (a prior makes a row)
            table = "ratings" if rated else "bot_stats"
            return int(conn.execute(f"SELECT count(*) FROM {table} WHERE tournament_id = ?", (tournament_id,)).fetchone()[0])

    def bot_summary(self, bot: str, tournament_id: int | None = None) -> BotSummary | None:
        """One bot's leaderboard row (ranked), place distribution and dates, in one tournament or all-time; None if absent."""
        with self.read_in(tournament_id) as conn:
            if tournament_id is None:  # the bot's row alone, ranked among the board's ratings alone
                one = self._board(None, "WHERE bot = ?")
                board = self._RANKING
            else:
                one = board = self._board(tournament_id)
            row = conn.execute(
                f"SELECT {self._BOARD_COLUMNS} FROM {one} WHERE bot = ?", (bot,) * (2 if tournament_id is None else 1)
            ).fetchone()
            if row is None:
                return None
            mu, sigma = row["mu"], row["sigma"]
            if mu is None or sigma is None:
                ahead = conn.execute(f"SELECT count(*) FROM {board} WHERE (mu IS NOT NULL AND sigma IS NOT NULL) OR bot < ?", (bot,))
            else:
                ahead = conn.execute(
                    f"""SELECT count(*) FROM {board} WHERE mu IS NOT NULL AND sigma IS NOT NULL AND (mu - 3 * sigma > ?
                        OR (mu - 3 * sigma = ? AND (mu > ? OR (mu = ? AND bot < ?))))""",
                    (mu - 3 * sigma, mu - 3 * sigma, mu, mu, bot),
                )
            rank = int(ahead.fetchone()[0]) + 1
            tournaments = tuple(
                tid for (tid,) in conn.execute("SELECT tournament_id FROM bot_stats WHERE bot = ? ORDER BY tournament_id", (bot,))
            )
        return BotSummary(
            self._board_row(rank, row), self._added_places(row["places"]), row["penalty_sum"], row["hands"], row["first_played"],
            row["last_played"], tournaments,
        )  # fmt: skip

    def bot_keys(self, name: str) -> list[str]:
        """The keys (``name@version``) of a bot name on the all-time leaderboard (registered or not), sorted."""
        with self.read() as conn:
            rows = conn.execute(
                """SELECT bot FROM bot_stats s WHERE bot >= ? AND bot < ? GROUP BY bot
                   HAVING sum(matches) > 0 OR EXISTS (SELECT 1 FROM ratings r WHERE r.bot = s.bot) ORDER BY bot""",
                (f"{name}@", f"{name}A"),  # "A" follows "@": the range is exactly the keys "name@..."
            )
            return [bot for (bot,) in rows]

    def head_to_head(self, tournament_id: int | None = None, bots: Iterable[str] | None = None) -> dict[tuple[str, str], HeadToHead]:
        """For each ordered pair of bots that met at a table, in one tournament or all-time: their record.

        Both ``(a, b)`` and ``(b, a)`` are keys.  Each pair of seats counts as one meeting (a bot
        seated twice meets its rival twice; a bot never meets itself).  With ``bots``, only the
        pairs of those bots (a crosstable of the top N reads N x N rows, not every pair).
        """
        if isinstance(bots, str):
            raise ValueError(f"bots must be a collection of bot keys, got the string {bots!r}")
        where, args = ["1"], list[SqlValue]()
        if bots is not None:
            chosen = to_json(sorted(set(bots)))
            where.append("a IN (SELECT value FROM json_each(?)) AND b IN (SELECT value FROM json_each(?))")
            args += [chosen, chosen]
        if tournament_id is not None:
            where.append("tournament_id = ?")
            args.append(tournament_id)
        with self.read_in(tournament_id) as conn:
            rows = conn.execute(
                f"SELECT a, b, sum(meetings), sum(a_ahead), sum(b_ahead), sum(place_diff_sum) FROM pair_stats "
                f"WHERE {' AND '.join(where)} GROUP BY a, b",
                args,
            ).fetchall()
        pairs = {}
        for a, b, n, ahead, behind, total in rows:  # each pair is stored once, a < b
            pairs[a, b] = HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
            pairs[b, a] = HeadToHead(b, a, n, behind, ahead, n - ahead - behind, -total / n)
        return dict(sorted(pairs.items()))

    def head_to_head_of(self, bots: Iterable[str], tournament_id: int | None = None) -> dict[tuple[str, str], HeadToHead]:
        """Each of ``bots`` against every bot it met, in one tournament or all-time: keys ``(bot, other)``.

        The rows of a crosstable, a block at a time: one pass over the pairs per call, where
        :meth:`head_to_head` with ``bots`` reads the pairs among them only.
        """
        if isinstance(bots, str):
            raise ValueError(f"bots must be a collection of bot keys, got the string {bots!r}")
        mine = set(bots)
        chosen = to_json(sorted(mine))
        where = "(a IN (SELECT value FROM json_each(?)) OR b IN (SELECT value FROM json_each(?)))"
        args: list[SqlValue] = [chosen, chosen]
        if tournament_id is not None:
            where, args = where + " AND tournament_id = ?", [*args, tournament_id]
        with self.read_in(tournament_id) as conn:
            rows = conn.execute(
                f"SELECT a, b, sum(meetings), sum(a_ahead), sum(b_ahead), sum(place_diff_sum) FROM pair_stats WHERE {where} GROUP BY a, b",
                args,
            ).fetchall()
        pairs = {}
        for a, b, n, ahead, behind, total in rows:  # each pair is stored once, a < b
            if a in mine:
                pairs[a, b] = HeadToHead(a, b, n, ahead, behind, n - ahead - behind, total / n)
            if b in mine:
                pairs[b, a] = HeadToHead(b, a, n, behind, ahead, n - ahead - behind, -total / n)
        return pairs

    @staticmethod
    def _bot_filter(bot: str) -> tuple[str, list[SqlValue]]:
        """The condition on ``result_seats s`` for ``bot``: one version (``name@version``), or every version of a name."""
        if "@" in bot:
            return "s.bot = ?", [bot]
        return "s.bot >= ? AND s.bot < ?", [f"{bot}@", f"{bot}A"]  # "A" follows "@": exactly the keys "name@..."

    def results_page(
        self,
        tournament_id: int | None = None,
        bot: str | None = None,
        faults: bool | None = None,
        status: MatchStatus | None = None,
        *,
        before: int | None = None,
        limit: int = 50,
    ) -> tuple[list[StoredResult], int | None]:
        """One page of final results, newest first (by result id), and the key of the next page (None: the last page).

        Filters: a tournament; a bot (``name@version``, or a name for every version); with
        ``faults`` True only matches where some seat faulted, False only those without; a
        status.  ``before`` is the key a previous page returned: the page starts after it.
        Every filter is an index read, so a page costs its rows, wherever it starts.
        """
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, got {limit!r}")
        with self.read_in(tournament_id) as conn:
            source, key, where, args = self._result_filter(tournament_id, bot, faults, status)
            if before is not None:
                where.append(f"{key} < ?")
                args.append(int(before))
            group = "" if bot is None else f" GROUP BY {key}"
            ids = [
                rid
                for (rid,) in conn.execute(
                    f"SELECT {key} FROM {source} WHERE {' AND '.join(where)}{group} ORDER BY {key} DESC LIMIT ?", (*args, limit + 1)
                )
            ]
            rows = self._results_by_id(conn, ids[:limit])
        return [self._result(row) for row in rows], ids[limit - 1] if len(ids) > limit else None

    def _results_by_id(self, conn: sqlite3.Connection, ids: Sequence[int]) -> list[sqlite3.Row]:
        """The results with these ids, in the order given."""
        rows = {
            row["id"]: row for row in conn.execute(f"{self._RESULT} WHERE r.id IN (SELECT value FROM json_each(?))", (to_json(list(ids)),))
        }
        return [rows[rid] for rid in ids]

    def count_results(
        self, tournament_id: int | None = None, bot: str | None = None, faults: bool | None = None, status: MatchStatus | None = None
    ) -> int:
        """How many final results :meth:`results_page` pages through with these filters."""
        with self.read_in(tournament_id) as conn:
            if bot is None and faults is None and status is None:
                if tournament_id is None:
                    return int(conn.execute("SELECT COALESCE(sum(done), 0) FROM tournament_stats").fetchone()[0])
                row = conn.execute("SELECT done FROM tournament_stats WHERE tournament_id = ?", (tournament_id,)).fetchone()
                return 0 if row is None else int(row[0])
            source, key, where, args = self._result_filter(tournament_id, bot, faults, status)
            return int(conn.execute(f"SELECT count(DISTINCT {key}) FROM {source} WHERE {' AND '.join(where)}", args).fetchone()[0])

    def _result_filter(
        self, tournament_id: int | None, bot: str | None, faults: bool | None, status: MatchStatus | None
    ) -> tuple[str, str, list[str], list[SqlValue]]:
        """The tables, the result id column and the conditions that select final results by these filters."""
        where, args = ["r.final = 1"], list[SqlValue]()
        if faults is not None:
            where.append("r.faulted = ?")
            args.append(int(bool(faults)))
        if status is not None:
            where.append("r.status = ?")
            args.append(MatchStatus.parse(status).value)
        if bot is None:
            source, key, table = "results r", "r.id", "r"
        else:
            source, key, table = "result_seats s JOIN results r ON r.id = s.result_id", "s.result_id", "s"
            condition, values = self._bot_filter(bot)
            where.append(condition)
            args += values
        if tournament_id is not None:
            where.append(f"{table}.tournament_id = ?")
            args.append(tournament_id)
        return source, key, where, args

    def recent_results(self, bot: str, limit: int = 20, tournament_id: int | None = None) -> list[StoredResult]:
        """A bot's last ``limit`` final results, newest first (``bot``: ``name@version``, or a name for every version)."""
        return self.results_page(tournament_id, bot, limit=limit)[0]

    def fault_log(self, bot: str, limit: int = 50, tournament_id: int | None = None) -> list[FaultEntry]:
        """The last ``limit`` seats where the bot faulted in a final result, newest first (``bot`` as in :meth:`recent_results`)."""
        if limit < 1:
            raise ValueError(f"limit must be 1 or more, got {limit!r}")
        condition, args = self._bot_filter(bot)
        where = f"{condition} AND s.fault_total > 0"
        if tournament_id is not None:
            where, args = where + " AND s.tournament_id = ?", [*args, tournament_id]
        with self.read_in(tournament_id) as conn:
            rows = conn.execute(
                f"""SELECT r.match_id, r.tournament_id, t.name, s.bot, s.seat, r.faults, r.finished_at FROM result_seats s
                    JOIN results r ON r.id = s.result_id JOIN tournaments t ON t.id = r.tournament_id
                    WHERE {where} ORDER BY s.result_id DESC, s.seat LIMIT ?""",
                (*args, limit),
            ).fetchall()
        return [FaultEntry(m, tid, name, key, seat, json.loads(faults)[seat], when) for m, tid, name, key, seat, faults, when in rows]

    def check(self) -> list[str]:
        """Problems found in the file and in the ratings' bookkeeping; empty when all is well.

        SQLite's integrity and foreign key checks, then, per tournament: no final result before
        the rating cursor is missing, the cursor stopped at the first fixture without one, every
        finished result before the cursor has a history row per bot and none after it, the
        current ratings are the last history rows, and every status is one this arena knows.
        Then every aggregate (the leaderboards, head-to-head counts, seat index, trends and
        rating trails) against a recomputation from the results: one line per difference,
        naming the table, the row (tournament, bot...) and the field.
        """
        problems: list[str] = []
        with self.read() as conn:
            problems += [f"integrity: {row[0]}" for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
            problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
            for tid, name, cursor, tournament_status in conn.execute("SELECT id, name, rating_cursor, status FROM tournaments").fetchall():
                try:
                    TournamentStatus.parse(tournament_status)
                except UnknownStatusError as exc:
                    problems.append(f"{name}: {exc}")
                finals = dict(conn.execute("SELECT idx, status FROM results WHERE tournament_id = ? AND final = 1", (tid,)).fetchall())
                seats = {
                    idx: set(json.loads(s)) for idx, s in conn.execute("SELECT idx, seats FROM fixtures WHERE tournament_id = ?", (tid,))
                }
                history: dict[int, set[str]] = {}
                last: dict[str, tuple[int, float, float]] = {}
                for idx, bot, mu, sigma in conn.execute(
                    "SELECT idx, bot, mu, sigma FROM rating_history WHERE tournament_id = ? ORDER BY idx", (tid,)
                ):
                    history.setdefault(idx, set()).add(bot)
                    last[bot] = (idx, mu, sigma)
                current = {bot: (idx, mu, sigma) for bot, idx, mu, sigma in conn.execute(
                    "SELECT bot, idx, mu, sigma FROM ratings WHERE tournament_id = ?", (tid,))}  # fmt: skip
                missing = [idx for idx in range(cursor) if idx not in finals]
                if missing:
                    problems.append(f"{name}: the rating cursor ({cursor}) passed fixtures without a result: {missing[:10]}")
                if cursor in finals:
                    problems.append(f"{name}: the rating cursor ({cursor}) stopped at a fixture that has its result")
                for idx, status in sorted(finals.items()):
                    rated = history.get(idx, set())
                    try:
                        finished = MatchStatus.parse(status) is MatchStatus.FINISHED
                    except UnknownStatusError as exc:
                        problems.append(f"{name}: fixture {idx}: {exc}")
                        continue
                    want = seats.get(idx, set()) if finished and idx < cursor else set()
                    if rated != want:
                        problems.append(f"{name}: fixture {idx} has rating history for {sorted(rated)}, expected {sorted(want)}")
                if current != last:
                    problems.append(f"{name}: the current ratings are not the last rows of the rating history")
            names = dict(conn.execute("SELECT id, name FROM tournaments").fetchall())
            problems += aggregates.differences(conn, names)
        return problems
