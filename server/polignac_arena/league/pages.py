"""The league's page and its JSON twin: live matches, who is online, every bot's versions.

``GET /league`` is the page; ``GET /api/league/status`` the same as JSON.  A bot's rating
history is on its bot page (``/bots/NAME``), as for any bot of the store.
"""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from polignac_arena.web.live import DEFAULT_POLL_S, LiveMark, stamp
from polignac_arena.web.pages import Links, render

__all__ = ["LeagueStatus", "league_router", "league_status"]


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


class LeagueStatus(BaseModel):
    name: str
    description: str
    paused: bool
    matches_played: int
    live: list[LiveMatch]
    online: list[OnlineBotView]
    bots: list[BotView]


class LeagueSource(Protocol):
    """What the page reads: the league's store, its tournament, its file, who is online."""

    store: Any
    tournament_id: int
    config: Any
    online: Any


def league_status(league: LeagueSource) -> LeagueStatus:
    """The league as it stands."""
    store = league.store
    ratings = store.ratings(league.tournament_id)
    progress = store.progress(league.tournament_id)
    bots = []
    versions_by_bot: dict[str, list[Any]] = {}
    for version in store.versions():
        versions_by_bot.setdefault(version.bot, []).append(version)
    for bot in store.bots():
        views = []
        for v in reversed(versions_by_bot.get(bot.name, [])):
            rating = ratings.get(v.label)
            views.append(
                VersionView(
                    id=v.id,
                    version=v.version,
                    label=v.label,
                    kind=v.kind.value,
                    state=v.state.value,
                    reason=v.reason,
                    created_at=v.created_at,
                    activated_at=v.activated_at,
                    mu=None if rating is None else rating[0],
                    sigma=None if rating is None else rating[1],
                )
            )
        bots.append(BotView(name=bot.name, author=bot.author, disabled=bot.disabled, versions=views))
    online = [
        OnlineBotView(label=b.label, author=b.author, since=str(b.since), busy=int(b.busy))
        for b in sorted(league.online.online(), key=lambda b: b.label)
    ]
    live = [LiveMatch(index=f.index, seats=list(f.seats)) for f in store.pending_fixtures(league.tournament_id)]
    return LeagueStatus(
        name=league.config.name,
        description=league.config.description,
        paused=store.setting("paused") == "1",
        matches_played=progress.done - progress.void,
        live=live,
        online=online,
        bots=bots,
    )


def league_router(league: LeagueSource) -> APIRouter:
    """The routes of the league's page and status."""
    router = APIRouter()
    links = Links()

    @router.get("/api/league/status", tags=["league"], response_model=LeagueStatus)
    def api_status() -> LeagueStatus:
        """The league: live matches, online remote bots, every bot with its versions (state, reason, rating)."""
        return league_status(league)

    @router.get("/league", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        live = LiveMark(stamp(league.config.store).key, round(DEFAULT_POLL_S * 1000))  # before the read: see web.app
        status = league_status(league)
        return render("league.html", links, league.store, live, title=f"League {status.name}", status=status)

    return router
