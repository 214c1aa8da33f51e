"""The arena's SQLite store: bots, tournaments, their schedules, results, records and ratings.

One file, no server.  The file is opened in WAL mode (readers never block the writer, a web
server may read while a runner writes), with foreign keys on, a busy timeout, and
``synchronous=FULL``.  Every write is one ``BEGIN IMMEDIATE`` transaction, so a process killed at
any moment (SIGKILL included) leaves either all of a write or none of it.  Every read of more
than one statement is one read transaction, so it sees one consistent snapshot.

This module is persistence only: it knows no rules and no rating maths.  Ratings are computed
by a function the caller passes to :meth:`Store.record_result`; the store only guarantees that
the function is applied to the results strictly in schedule order, exactly once each.

Schema (version 3; ``PRAGMA user_version`` holds the version, ``PRAGMA application_id`` marks
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
:mod:`polignac_arena.league.store`.  Version 3 adds ``results.node``.

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
    ConflictError,
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
    "ConflictError",
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
