"""The HTML pages: leaderboards, crosstables, bot pages, match lists and replays, drawn from the store."""

from __future__ import annotations

import itertools
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from polignac_arena.web import data, pages
from polignac_arena.web.api import Before, Page, Sort, Top
from polignac_arena.web.note_access import NOTES_CACHE_HEADERS, NotesDep
from polignac_arena.web.pages import Links
from polignac_arena.web.state import LiveMarkDep, StoreDep

__all__ = ["LINKS", "site_router"]

LINKS = Links()

site_router = APIRouter(include_in_schema=False)


@site_router.get("/", response_class=HTMLResponse)
def home(store: StoreDep, live: LiveMarkDep, sort: Sort = data.SortKey.RANK, page: Page = 1) -> str:
    return pages.page_leaderboard(store, LINKS, None, sort, page, live=live)


@site_router.get("/tournaments/{name}", response_class=HTMLResponse)
def tournament_page(store: StoreDep, live: LiveMarkDep, name: str, sort: Sort = data.SortKey.RANK, page: Page = 1) -> str:
    return pages.page_leaderboard(store, LINKS, name, sort, page, live=live)


@site_router.get("/crosstable", response_class=HTMLResponse)
def crosstable_page(store: StoreDep, tournament: Annotated[str | None, Query()] = None, top: Top = data.CROSSTABLE_TOP) -> str:
    return pages.page_crosstable(store, LINKS, tournament or None, top)


@site_router.get("/crosstable.csv")
def crosstable_csv(store: StoreDep, tournament: Annotated[str | None, Query()] = None) -> Response:
    lines = data.crosstable_csv(store, tournament or None)
    first = next(lines)  # an unknown tournament is a 404 before the download starts
    name = "crosstable.csv" if not tournament else f"crosstable-{pages.slug(tournament)}.csv"
    return StreamingResponse(
        itertools.chain([first], lines),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )


@site_router.get("/bots/{name}", response_class=HTMLResponse)
def bot_page(store: StoreDep, live: LiveMarkDep, name: str) -> str:
    return pages.page_bot(store, LINKS, name, live=live)


@site_router.get("/matches", response_class=HTMLResponse)
def matches_page(
    store: StoreDep,
    live: LiveMarkDep,
    tournament: Annotated[str | None, Query()] = None,
    bot: Annotated[str | None, Query()] = None,
    faults: Annotated[str | None, Query(pattern="^(|true|false)$")] = None,
    page: Page = 1,
    before: Before = None,
) -> Response:
    fault_filter = None if not faults else faults == "true"
    if page > 1:  # the older page numbers: redirected to the keyset page they name
        cursor = data.page_cursor(store, tournament or None, bot or None, fault_filter, page)
        return RedirectResponse(LINKS.matches(tournament or None, bot or None, fault_filter, cursor), status_code=303)
    return HTMLResponse(pages.page_matches(store, LINKS, tournament or None, bot or None, fault_filter, before, live=live))


@site_router.get("/matches/{match_id}", response_class=HTMLResponse)
def replay_page(store: StoreDep, match_id: str, notes_of: NotesDep) -> HTMLResponse:
    return HTMLResponse(pages.page_replay(store, LINKS, match_id, notes_of), headers=NOTES_CACHE_HEADERS)
