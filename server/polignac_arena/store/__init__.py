"""The arena's SQLite store: bots, tournaments, their schedules, results, records and ratings.

One file, no server, every write one transaction; the schema and the promises: docs/store.md.
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
