"""The JSON API under ``/api/``: tournaments, leaderboards, crosstables, bots, matches and replays, read from the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response

from polignac_arena.settings import SQLITE_INTEGER_MAX
from polignac_arena.web import data
from polignac_arena.web.models import (
    BotDetailOut,
    BotSummaryOut,
    CrosstableOut,
    ErrorOut,
    LeaderboardRowOut,
    MatchPageOut,
    MatchResultOut,
    ReplayOut,
    Responses,
    StampOut,
    TournamentDetailOut,
    TournamentSummaryOut,
)
from polignac_arena.web.note_access import NOTES_CACHE_HEADERS, NotesDep
from polignac_arena.web.state import StoreDep, WebState

__all__ = ["Before", "Page", "Sort", "Top", "api_router", "unknown_api_router"]

Tournament = Annotated[str | None, Query(description="A tournament name (default: all-time).", min_length=1)]
Sort = Annotated[data.SortKey, Query(description="The sort key (default: rank, the conservative rating).")]
Page = Annotated[int, Query(ge=1, le=1_000_000, description="The page, from 1.")]
PerPage = Annotated[int, Query(ge=1, le=500, description="Matches per page.")]
BotFilter = Annotated[str | None, Query(description="Only matches of this bot (a name or name@version).", min_length=1)]
FaultFilter = Annotated[bool | None, Query(description="true: only matches with faults; false: only without.")]
Limit = Annotated[int, Query(ge=1, le=1000, description="Rows to return.")]
Offset = Annotated[int, Query(ge=0, le=1_000_000, description="Rows to skip (in the chosen sort order).")]
Top = Annotated[int, Query(ge=1, le=data.CROSSTABLE_MAX_TOP, description="The bots shown: the top of the leaderboard.")]
Before = Annotated[
    int | None, Query(ge=1, le=SQLITE_INTEGER_MAX, description="The cursor of the next (older) page: a previous page's `next`.")
]

# The errors each route may answer with, as the app's handlers make them (a JSON ``{"error": ...}``).
_BAD: Responses = {400: {"model": ErrorOut, "description": "A query parameter has a bad value."}}
_UNKNOWN: Responses = {404: {"model": ErrorOut, "description": "No such tournament, bot or match."}}
_BOTH = {**_BAD, **_UNKNOWN}

api_router = APIRouter(prefix="/api")


@api_router.get("/tournaments", tags=["tournaments"])
def api_tournaments(store: StoreDep) -> list[TournamentSummaryOut]:
    """Every tournament with its progress."""
    return data.tournaments(store)


@api_router.get("/tournaments/{name}", tags=["tournaments"], responses=_UNKNOWN)
def api_tournament(store: StoreDep, name: str) -> TournamentDetailOut:
    """One tournament: progress, entrants and configuration."""
    return data.tournament_detail(store, name)


@dataclass(frozen=True)
class LeaderboardRows:
    """The query of a leaderboard's rows, the same on both leaderboard routes: ``limit`` rows from ``offset`` in ``sort`` order."""

    sort: Sort = data.SortKey.RANK
    limit: Limit = data.LEADERBOARD_PER_PAGE
    offset: Offset = 0


RowsDep = Annotated[LeaderboardRows, Depends()]


@api_router.get("/leaderboard", tags=["ratings"], responses=_BOTH)
def api_leaderboard(store: StoreDep, rows: RowsDep, tournament: Tournament = None) -> list[LeaderboardRowOut]:
    """The leaderboard, all-time or of one tournament, with how sure it is of each place: ``limit`` rows from ``offset``."""
    return data.leaderboard(store, tournament, rows.sort, limit=rows.limit, offset=rows.offset)


@api_router.get("/tournaments/{name}/leaderboard", tags=["ratings"], responses=_BOTH)
def api_tournament_leaderboard(store: StoreDep, name: str, rows: RowsDep) -> list[LeaderboardRowOut]:
    """The leaderboard of one tournament: ``limit`` rows from ``offset`` in the sort order."""
    return data.leaderboard(store, name, rows.sort, limit=rows.limit, offset=rows.offset)


@api_router.get("/crosstable", tags=["ratings"], responses=_BOTH)
def api_crosstable(store: StoreDep, tournament: Tournament = None, top: Top = data.CROSSTABLE_TOP) -> CrosstableOut:
    """For each pair of the top rated bots, the probability the row bot finishes above the column bot in one match, and their record."""
    return data.crosstable(store, tournament, top)


@api_router.get("/bots", tags=["bots"])
def api_bots(store: StoreDep) -> list[BotSummaryOut]:
    """Every bot with its versions."""
    return data.bots(store)


@api_router.get("/bots/{name}", tags=["bots"], responses=_UNKNOWN)
def api_bot(store: StoreDep, name: str) -> BotDetailOut:
    """One bot: versions, rating history, places, recent matches and fault log."""
    return data.bot_detail(store, name)


@api_router.get("/matches", tags=["matches"], responses=_BOTH)
def api_matches(
    store: StoreDep,
    tournament: Tournament = None,
    bot: BotFilter = None,
    faults: FaultFilter = None,
    page: Page = 1,
    per_page: PerPage = 50,
    before: Before = None,
) -> MatchPageOut:
    """Final results, newest first, filtered; one page, and ``next``: the ``before`` of the next (older) page."""
    return data.matches(store, tournament, bot, faults, page, per_page, before)


@api_router.get("/matches/{match_id}", tags=["matches"], responses=_UNKNOWN)
def api_match(store: StoreDep, match_id: str) -> MatchResultOut:
    """One match's result."""
    return data.match_detail(store, match_id)


@api_router.get("/matches/{match_id}/replay", tags=["matches"], responses=_UNKNOWN)
def api_replay(store: StoreDep, match_id: str, notes_of: NotesDep, response: Response) -> ReplayOut:
    """One match re-run through the engine: every event, as JSON; ``notes``, the asking author's bots' debug text and stderr."""
    response.headers.update(NOTES_CACHE_HEADERS)
    return data.replay(store, match_id, notes_of)


@api_router.get("/stamp", tags=["live"])
def api_stamp(request: Request) -> StampOut:
    """A cheap mark of the store's state (the latest result, each tournament's progress): poll it to know when to reload."""
    web: WebState = request.app.state.web
    return web.stamps.read()


unknown_api_router = APIRouter()
"""Included after every other router: an unknown ``/api/`` path is a JSON 404, not an HTML page."""


@unknown_api_router.get("/api/{rest:path}", include_in_schema=False)
def api_unknown(rest: str) -> None:
    raise HTTPException(404)
