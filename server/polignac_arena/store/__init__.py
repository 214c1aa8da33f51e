"""The arena's SQLite store: bots, tournaments, their schedules, results, records and ratings.

One file, no server.  The file is opened in WAL mode (readers never block the writer, a web
server may read while a runner writes), with foreign keys on, a busy timeout, and
``synchronous=FULL``.  Every write is one ``BEGIN IMMEDIATE`` transaction, so a process killed at
any moment (SIGKILL included) leaves either all of a write or none of it.  Every read of more
than one statement is one read transaction, so it sees one consistent snapshot.

This module is persistence only: it knows no rules and no rating maths.  Ratings are computed
by a function the caller passes to :meth:`Store.record_result`; the store only guarantees that
the function is applied to the results strictly in schedule order, exactly once each.

Schema (version 4; ``PRAGMA user_version`` holds the version, ``PRAGMA application_id`` marks
the file as ours):

``bots``
    ``id``, ``name``, ``version``, ``path``, ``digest`` (content hash), ``language``,
    ``added_at``; unique ``(name, version)``.  A bot's key elsewhere is ``name@version``.
``tournaments``
    ``id``, ``name`` (unique), ``config`` (canonical JSON: sorted keys, no spaces), ``source``
    (the TOML text, for display; never compared), ``status`` (the text of a
    :class:`~polignac_arena.statuses.TournamentStatus`: scheduled, running, finished,
    stopped), ``created_at``, ``updated_at``, ``rating_cursor``: the schedule index of the
    next fixture whose result is to be rated; every fixture before it has been rated (or was
    void).
``fixtures``
    the schedule: ``(tournament_id, idx)`` primary key, ``seats`` (JSON list of bot keys),
    ``seed`` (decimal text: seeds go up to 2**64 - 1, past SQLite's signed integers),
    ``grp`` (the fixture's group as JSON, e.g. a duplicate-deal set).
``results``
    every hosted match: ``id``, ``tournament_id``, ``idx``, ``match_id``, ``status`` (the text
    of a :class:`~polignac.statuses.MatchStatus`: finished, aborted, error), ``final`` (1 when
    it is the fixture's result, 0 for an attempt kept for diagnosis only), ``places``, ``totals``, ``faults`` (per seat, counts by kind),
    ``penalties`` (penalty points per seat), all JSON lists by seat; ``hands`` (hands played),
    ``duration_s``, ``finished_at``, ``record_path``, ``node`` (the machine or cluster node that
    played it, version 3).  At most one final result per fixture and
    one final result per match id (partial unique indexes).
``records``
    ``result_id`` (the ``results`` row), ``encoding`` (``zlib``), ``data``: the match record,
    JSON lines compressed with zlib (a 50-200 KB record takes a tenth of that).  Kept apart from
    ``results`` so that statistics never read a record's pages.
``ratings``
    the current rating per ``(tournament_id, bot)``: ``mu``, ``sigma``, ``idx`` (the fixture
    that last changed it, -1 for an initial rating), ``updated_at``.
``rating_history``
    ``(tournament_id, idx, bot)`` primary key, ``mu``, ``sigma``: the rating after each rated
    fixture (idx -1: the initial ratings given at creation), for charts.

Version 2 adds the league's tables (``league_authors``, ``league_tokens``, ``league_bots``,
``league_versions``, ``league_settings``, ``league_reruns``), described in
:mod:`polignac_arena.league.store`.  Version 3 adds ``results.node``.  Version 5 adds the league's
``league_bots.name_key``, ``league_versions.disk_bytes`` and ``league_new_versions`` (its limits).

Version 4 adds the aggregates (:mod:`polignac_arena.store.aggregates`): what the leaderboards,
crosstables, bot pages and match lists read, so a page costs the rows it shows, not the
results stored.  Each is updated in the transaction that stores the result (or the rating) it
counts; the migration builds them from the results already stored, and :meth:`Store.check`
(``polignac store check``) recomputes them all and reports every difference.

``results.faulted``
    1 when some seat of the result faulted (the match list's filter).  Partial indexes on the
    final results by ``(tournament_id, id)``, ``(faulted, id)`` and ``(status, id)`` serve
    every filter of the match list with keyset paging, newest first (:meth:`Store.results_page`).
``ratings.recent``, ``ratings.points``
    the bot's last 20 mu values of the tournament, oldest first, as JSON (its trend), and how
    many history rows it has.  Index ``ratings_bot`` finds a bot's ratings.
``tournament_stats``
    per tournament: final results ``done``, ``void`` ones, ``attempts``, ``faults`` by kind
    (JSON) over the final results: :meth:`Store.progress`.
``bot_stats``
    per ``(tournament_id, bot)``, for every bot of the schedule or with a rating: ``matches``,
    ``wins``, ``place_sum``, ``places`` (JSON list: matches in place 1, 2, ...),
    ``penalty_sum``, ``hands``, ``faults`` (JSON, by kind), ``fault_total``,
    ``first_played``, ``last_played``, over its final finished results.  With ``ratings``, one
    tournament's leaderboard; summed per bot, with each bot's latest rating, the all-time one
    (a bot is in few tournaments: one query either way).
``pair_stats``
    per pair of bots ``a < b`` and tournament, keyed ``(a, b, tournament_id)``: ``meetings``,
    ``a_ahead``, ``b_ahead``, ``place_diff_sum`` (place(a) - place(b) summed); all-time is the
    sum over tournaments, and a crosstable of N bots reads N x N keys.
``result_seats``
    per seat of a final result, keyed ``(bot, result_id, seat)``: ``tournament_id``,
    ``place``, ``fault_total``; a partial index on the faulted seats.  A bot's matches and its
    fault log are one range of it, newest last.
``rating_trail``
    per ``(tournament_id, bot)``, the points of its rating history a chart reads: ordinal
    ``n`` (0 first), ``idx``, ``mu``, ``sigma``; the last 32 points exact and, before them,
    every ``s``-th point, ``s`` the smallest power of two that keeps at most 257.

Results and ratings:

- A ``finished`` result (it has places) is final: the fixture is done and it is rated.
- An ``aborted`` or ``error`` result is, by default, an attempt: kept (``polignac match show``
  finds it) but the fixture stays pending, so ``--resume`` runs it again, and the rating cursor
  waits for it.  Such matches were stopped from outside or hit an arena bug, not a bot's fault
  (a bot's faults end in a forfeit, which is a finished match).  A caller that gives up on a
  fixture stores it with ``final=True``: a void result that completes the fixture and that the
  cursor passes without rating.
- Ratings and statistics only ever use final finished results.
- A status column read back becomes its enum; a text that is none of its values (a file
  edited by hand) raises :class:`~polignac.statuses.UnknownStatusError` naming it.
"""

from __future__ import annotations

from polignac_arena.store.records import (
    Bot,
    BotSummary,
    ConflictError,
    FaultEntry,
    FixtureLike,
    GroupRate,
    GroupResults,
    HeadToHead,
    LeaderboardRow,
    NewerSchemaError,
    NodeThroughput,
    Progress,
    RateFunction,
    Rating,
    RatingPoint,
    Recorded,
    StoredFixture,
    StoredResult,
    StoreError,
    Tournament,
)
from polignac_arena.store.schema import APPLICATION_ID, MIGRATIONS, schema_version
from polignac_arena.store.store import Store

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "Bot",
    "BotSummary",
    "ConflictError",
    "FaultEntry",
    "FixtureLike",
    "GroupRate",
    "GroupResults",
    "HeadToHead",
    "LeaderboardRow",
    "NewerSchemaError",
    "NodeThroughput",
    "Progress",
    "RateFunction",
    "Rating",
    "RatingPoint",
    "Recorded",
    "Store",
    "StoreError",
    "StoredFixture",
    "StoredResult",
    "Tournament",
    "schema_version",
]
