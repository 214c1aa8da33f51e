"""The store's schema: its migrations, and the marks that say a file is an arena store.

``MIGRATIONS[i]`` takes a store from version ``i`` to ``i + 1``; the tables are described in
the :mod:`polignac_arena.store` package's docstring.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Callable
from typing import Final

from polignac_arena.store.aggregates import rebuild

APPLICATION_ID: Final = 0x504F4C41
"""``PRAGMA application_id`` of an arena store ("POLA")."""

# The CHECK constraints below spell out the values of polignac_arena.statuses' enums: a
# migration is frozen history, and the stores it makes must match those it made before.  A
# new status needs a new migration; tests/test_statuses.py checks that they still agree.


_V1: Final = (
    """CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        path TEXT NOT NULL,
        digest TEXT NOT NULL,
        language TEXT NOT NULL,
        added_at TEXT NOT NULL,
        UNIQUE (name, version)
    )""",
    """CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        config TEXT NOT NULL,
        source TEXT,
        status TEXT NOT NULL CHECK (status IN ('scheduled', 'running', 'finished', 'stopped')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        rating_cursor INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE fixtures (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 0),
        seats TEXT NOT NULL,
        seed TEXT NOT NULL,
        grp TEXT NOT NULL,
        PRIMARY KEY (tournament_id, idx)
    )""",
    """CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        match_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('finished', 'aborted', 'error')),
        final INTEGER NOT NULL CHECK (final IN (0, 1)),
        places TEXT,
        totals TEXT NOT NULL,
        faults TEXT NOT NULL,
        hands INTEGER NOT NULL,
        penalties TEXT NOT NULL,
        duration_s REAL,
        finished_at TEXT NOT NULL,
        record_path TEXT,
        FOREIGN KEY (tournament_id, idx) REFERENCES fixtures (tournament_id, idx) ON DELETE CASCADE
    )""",
    "CREATE UNIQUE INDEX results_once ON results (tournament_id, idx) WHERE final = 1",
    "CREATE UNIQUE INDEX results_final_match_id ON results (match_id) WHERE final = 1",
    "CREATE INDEX results_match_id ON results (match_id)",
    "CREATE INDEX results_fixture ON results (tournament_id, idx)",
    """CREATE TABLE records (
        result_id INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
        encoding TEXT NOT NULL,
        data BLOB NOT NULL
    )""",
    """CREATE TABLE ratings (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        bot TEXT NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        idx INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tournament_id, bot)
    )""",
    """CREATE TABLE rating_history (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        bot TEXT NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        PRIMARY KEY (tournament_id, idx, bot)
    )""",
)


def _v1(conn: sqlite3.Connection) -> None:
    """The initial schema."""
    for statement in _V1:
        conn.execute(statement)


# The league (polignac_arena.league.store): its authors, their API tokens, their bots and the
# versions submitted or connected, and the ladder's requests.  Results and ratings stay in the
# tables above, under the league's own tournament.
_V2: Final = (
    """CREATE TABLE league_authors (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE league_tokens (
        id TEXT PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES league_authors (id) ON DELETE CASCADE,
        salt BLOB NOT NULL,
        hash BLOB NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        last_used_at TEXT
    )""",
    """CREATE TABLE league_bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        author_id INTEGER NOT NULL REFERENCES league_authors (id),
        disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE league_versions (
        id INTEGER PRIMARY KEY,
        bot_id INTEGER NOT NULL REFERENCES league_bots (id),
        version TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('upload', 'remote')),
        archive TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'validating', 'active', 'refused', 'retired')),
        reason TEXT NOT NULL DEFAULT '',
        log TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        activated_at TEXT,
        UNIQUE (bot_id, version)
    )""",
    "CREATE INDEX league_versions_state ON league_versions (state)",
    """CREATE TABLE league_settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE league_reruns (
        id INTEGER PRIMARY KEY,
        match_id TEXT NOT NULL,
        requested_at TEXT NOT NULL,
        fixture_idx INTEGER
    )""",
)


def _v2(conn: sqlite3.Connection) -> None:
    """The league's tables."""
    for statement in _V2:
        conn.execute(statement)


def _v3(conn: sqlite3.Connection) -> None:
    """The node that played each result (None for results stored before, or by hand)."""
    conn.execute("ALTER TABLE results ADD COLUMN node TEXT")
    conn.execute("CREATE INDEX results_node ON results (tournament_id, node) WHERE final = 1")


# The aggregates (polignac_arena.store.aggregates): what the pages read instead of the results.
_V4: Final = (
    "ALTER TABLE results ADD COLUMN faulted INTEGER NOT NULL DEFAULT 0 CHECK (faulted IN (0, 1))",
    "ALTER TABLE ratings ADD COLUMN recent TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE ratings ADD COLUMN points INTEGER NOT NULL DEFAULT 0",
    # A bot's ratings, one per tournament: its latest (Store.latest_ratings) is picked among them.
    "CREATE INDEX ratings_bot ON ratings (bot)",
    """CREATE TABLE tournament_stats (
        tournament_id INTEGER PRIMARY KEY REFERENCES tournaments (id) ON DELETE CASCADE,
        done INTEGER NOT NULL DEFAULT 0,
        void INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        faults TEXT NOT NULL DEFAULT '{}'
    )""",
    """CREATE TABLE bot_stats (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        bot TEXT NOT NULL,
        matches INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        place_sum INTEGER NOT NULL DEFAULT 0,
        places TEXT NOT NULL DEFAULT '[]',
        penalty_sum INTEGER NOT NULL DEFAULT 0,
        hands INTEGER NOT NULL DEFAULT 0,
        faults TEXT NOT NULL DEFAULT '{}',
        fault_total INTEGER NOT NULL DEFAULT 0,
        first_played TEXT,
        last_played TEXT,
        PRIMARY KEY (tournament_id, bot)
    ) WITHOUT ROWID""",
    "CREATE INDEX bot_stats_bot ON bot_stats (bot)",
    # One row per unordered pair (a < b) and tournament: half the writes of ordered pairs, and
    # the all-time record of a pair is its rows summed (a pair meets in few tournaments).
    """CREATE TABLE pair_stats (
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        meetings INTEGER NOT NULL,
        a_ahead INTEGER NOT NULL,
        b_ahead INTEGER NOT NULL,
        place_diff_sum INTEGER NOT NULL,
        PRIMARY KEY (a, b, tournament_id),
        CHECK (a < b)
    ) WITHOUT ROWID""",
    # Keyed by bot: a bot's results, newest first, are one range of the table itself.
    """CREATE TABLE result_seats (
        bot TEXT NOT NULL,
        result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        tournament_id INTEGER NOT NULL,
        place INTEGER,
        fault_total INTEGER NOT NULL,
        PRIMARY KEY (bot, result_id, seat)
    ) WITHOUT ROWID""",
    "CREATE INDEX result_seats_faults ON result_seats (bot, result_id) WHERE fault_total > 0",
    # The match list, newest first, by tournament, by faults or by status (a filter on two of them
    # walks one index and checks the other column: faulted results and void ones are the few).
    "CREATE INDEX results_final_tournament ON results (tournament_id, id) WHERE final = 1",
    "CREATE INDEX results_final_faulted ON results (faulted, id) WHERE final = 1",
    "CREATE INDEX results_final_status ON results (status, id) WHERE final = 1",
    """CREATE TABLE rating_trail (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
        bot TEXT NOT NULL,
        n INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        mu REAL NOT NULL,
        sigma REAL NOT NULL,
        PRIMARY KEY (tournament_id, bot, n)
    ) WITHOUT ROWID""",
)


def _v4(conn: sqlite3.Connection) -> None:
    """The aggregates, built from the results already stored.

    ``rebuild`` is the aggregates module's own (what ``polignac store check`` compares with), so
    a later migration that changes these tables must fill them itself rather than lean on it.
    """
    for statement in _V4:
        conn.execute(statement)
    rebuild(conn)


# The league under abuse: bot names compared as people read them, the disk each version takes,
# and every new version counted (uploads refused or not, remote versions) for the hourly limit.
_V5: Final = (
    "ALTER TABLE league_bots ADD COLUMN name_key TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX league_bots_name_key ON league_bots (name_key)",
    "ALTER TABLE league_versions ADD COLUMN disk_bytes INTEGER NOT NULL DEFAULT 0",
    """CREATE TABLE league_new_versions (
        id INTEGER PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES league_authors (id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('upload', 'remote')),
        at TEXT NOT NULL
    )""",
    "CREATE INDEX league_new_versions_author ON league_new_versions (author_id, at)",
)


def _v5(conn: sqlite3.Connection) -> None:
    """Bot names' keys (NFKC, case folded: the rule is frozen here, as the stores it made), disk use, new versions counted."""
    for statement in _V5:
        conn.execute(statement)
    for bot_id, name in conn.execute("SELECT id, name FROM league_bots").fetchall():
        conn.execute("UPDATE league_bots SET name_key = ? WHERE id = ?", (unicodedata.normalize("NFKC", name).casefold(), bot_id))


# Authors' test matches: a version of theirs rerunning a league match's deals, unrated and kept apart
# from the league's results (so no public list or rating ever reads them).
_V6: Final = (
    """CREATE TABLE league_test_runs (
        id INTEGER PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES league_authors (id) ON DELETE CASCADE,
        match_id TEXT NOT NULL,
        hand INTEGER NOT NULL,
        version_id INTEGER NOT NULL REFERENCES league_versions (id) ON DELETE CASCADE,
        seats TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'finished', 'failed')),
        reason TEXT NOT NULL DEFAULT '',
        requested_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT,
        places TEXT,
        totals TEXT,
        record BLOB
    )""",
    "CREATE INDEX league_test_runs_author ON league_test_runs (author_id, requested_at)",
    "CREATE INDEX league_test_runs_state ON league_test_runs (state, id)",
)


def _v6(conn: sqlite3.Connection) -> None:
    """Authors' test matches (reruns of a league match's deals with another version)."""
    for statement in _V6:
        conn.execute(statement)


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6]
"""``MIGRATIONS[i]`` takes a store from schema version ``i`` to ``i + 1``, inside the open
transaction (use ``conn.execute``: ``executescript`` would commit half-way).  Append, never edit."""


def schema_version() -> int:
    """The schema version this arena writes: the number of migrations."""
    return len(MIGRATIONS)
