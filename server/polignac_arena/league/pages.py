"""The league's page and its JSON twin: live matches, who is online, the bots and their latest versions, a page at a time.

``GET /league`` is the page; ``GET /api/league/status`` the same as JSON.  Both page through the
bots by name (``after``, ``limit``: at most :data:`MAX_BOTS` a page) and show each bot's newest
versions (``versions``: at most :data:`MAX_VERSIONS`), with how many there are in all; the online
bots are listed up to :data:`MAX_ONLINE`.  So an answer stays small however many bots, versions
and remote connections the league has seen.  A bot's rating history is on its bot page
(``/bots/NAME``), as for any bot of the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final, Protocol

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from polignac_arena.web.live import DEFAULT_POLL_S, LiveMark, stamp
from polignac_arena.web.models import ErrorOut, Responses
from polignac_arena.web.pages import Links, render

if TYPE_CHECKING:
    from polignac_arena.league.config import LeagueConfig
    from polignac_arena.league.lobby import OnlineBots
    from polignac_arena.league.store import LeagueStore

__all__ = ["MAX_BOTS", "MAX_ONLINE", "MAX_VERSIONS", "LeagueStatus", "league_router", "league_status"]

DEFAULT_BOTS: Final = 50
MAX_BOTS: Final = 200
"""Bots on one page of the status."""
DEFAULT_VERSIONS: Final = 5
MAX_VERSIONS: Final = 50
"""Versions shown of each bot, newest first."""
MAX_ONLINE: Final = 200
"""Online remote bots listed (``online_total`` says how many there are)."""
After = Annotated[str | None, Query(max_length=64, description="Start after this bot name (the previous page's next_after).")]
Limit = Annotated[int, Query(ge=1, le=MAX_BOTS, description="Bots on the page.")]
Versions = Annotated[int, Query(ge=1, le=MAX_VERSIONS, description="Newest versions shown of each bot.")]


class OnlineBotView(BaseModel):
    label: str
    author: str
    since: str
    busy: int


class LiveMatch(BaseModel):
    index: int
    seats: list[str]


class VersionView(BaseModel):
    id: int
    version: str
    label: str
    kind: str
    state: str
    reason: str
    created_at: str
    activated_at: str | None
    mu: float | None
    sigma: float | None


class BotView(BaseModel):
    name: str
    author: str
    disabled: bool
    versions: list[VersionView]
    """Its newest versions, newest first (``versions`` of them at most)."""
    versions_total: int
    """How many versions it has in all."""


class LeagueStatus(BaseModel):
    name: str
    description: str
    paused: bool
    matches_played: int
    live: list[LiveMatch]
    online: list[OnlineBotView]
    """The remote bots online, by label (the first :data:`MAX_ONLINE`)."""
    online_total: int
    bots: list[BotView]
    """One page of the bots, by name."""
    bots_total: int
    next_after: str | None
    """``after`` for the next page of bots (None on the last page)."""


class LeagueSource(Protocol):
    """What the page reads: the league's store, its tournament, its file, who is online."""

    store: LeagueStore
    tournament_id: int
    config: LeagueConfig
    online: OnlineBots


def league_status(
    league: LeagueSource, *, after: str | None = None, limit: int = DEFAULT_BOTS, versions: int = DEFAULT_VERSIONS
) -> LeagueStatus:
    """The league as it stands: one page of its bots (``limit`` after the name ``after``), each with its ``versions`` newest."""
    store = league.store
    ratings = store.arena.ratings(league.tournament_id)
    progress = store.arena.progress(league.tournament_id)
    page, total = store.bots_page(after, limit)
    latest = store.latest_versions([bot.name for bot in page], versions)
    bots = []
    for bot in page:
        shown, count = latest.get(bot.name, ([], 0))
        views = []
        for v in shown:
            mu, sigma = ratings.get(v.label, (None, None))
            # The view takes the version's fields (and label) by their names, and its rating.
            views.append(VersionView.model_validate({**vars(v), "label": v.label, "mu": mu, "sigma": sigma}))
        bots.append(BotView(name=bot.name, author=bot.author, disabled=bot.disabled, versions=views, versions_total=count))
    everyone = sorted(league.online.online(), key=lambda b: b.label)
    online = [OnlineBotView(label=b.label, author=b.author, since=str(b.since), busy=int(b.busy)) for b in everyone[:MAX_ONLINE]]
    live = [LiveMatch(index=f.index, seats=list(f.seats)) for f in store.arena.pending_fixtures(league.tournament_id)]
    next_after = page[-1].name if len(page) == limit and store.bots_page(page[-1].name, 1)[0] else None
    return LeagueStatus(
        name=league.config.name,
        description=league.config.description,
        paused=store.setting("paused") == "1",
        matches_played=progress.done - progress.void,
        live=live,
        online=online,
        online_total=len(everyone),
        bots=bots,
        bots_total=total,
        next_after=next_after,
    )


def league_router(league: LeagueSource) -> APIRouter:
    """The routes of the league's page and status."""
    router = APIRouter()
    links = Links()

    bad: Responses = {400: {"model": ErrorOut, "description": "A query parameter has a bad value."}}

    @router.get("/api/league/status", tags=["league"], response_model=LeagueStatus, responses=bad)
    def api_status(after: After = None, limit: Limit = DEFAULT_BOTS, versions: Versions = DEFAULT_VERSIONS) -> LeagueStatus:
        """The league: live matches, online remote bots, a page of the bots with their newest versions (state, reason, rating)."""
        return league_status(league, after=after, limit=limit, versions=versions)

    @router.get("/league", response_class=HTMLResponse, include_in_schema=False)
    def page(after: After = None, limit: Limit = DEFAULT_BOTS, versions: Versions = DEFAULT_VERSIONS) -> str:
        live = LiveMark(stamp(league.config.store).key, round(DEFAULT_POLL_S * 1000))  # before the read: see web.app
        status = league_status(league, after=after, limit=limit, versions=versions)
        return render("league.html", links, league.store.arena, live, title=f"League {status.name}", status=status, limit=limit)

    return router
