"""The web app: a FastAPI application serving the JSON API under ``/api/`` and the HTML pages, read-only from the store."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from polignac_arena.plaintext import plain
from polignac_arena.settings import SQLITE_INTEGER_MAX
from polignac_arena.store import Store, StoreError, schema_version
from polignac_arena.web import data, live, pages
from polignac_arena.web.models import (
    BotDetail,
    BotSummary,
    Crosstable,
    ErrorOut,
    LeaderboardRow,
    MatchPage,
    MatchResult,
    Replay,
    Stamp,
    TournamentDetail,
    TournamentSummary,
)
from polignac_arena.web.pages import Links

__all__ = ["STATIC_DIR", "PlainJSONResponse", "create_app", "open_read_only", "tidy_openapi", "web_openapi"]

STATIC_DIR = Path(__file__).with_name("static")

_LINKS = Links()

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


def _plain_strings(value: Any) -> Any:
    """``value`` with every string in it (keys included) passed through :func:`plain`."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {_plain_strings(k): _plain_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_strings(v) for v in value]
    return value


class PlainJSONResponse(JSONResponse):
    """JSON whose strings hold no control characters: an API client may print bot names and details to a terminal."""

    def render(self, content: Any) -> bytes:
        return super().render(_plain_strings(content))


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(x) for x in error.get("loc", ()) if x not in ("query", "path"))
        parts.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return "bad query parameter: " + "; ".join(parts)


# The errors each route may answer with, as the app's handlers make them (a JSON ``{"error": ...}``).
_BAD: dict[int | str, dict[str, Any]] = {400: {"model": ErrorOut, "description": "A query parameter has a bad value."}}
_UNKNOWN: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "No such tournament, bot or match."}}
_BOTH = {**_BAD, **_UNKNOWN}


def tidy_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without FastAPI's 422 answers (this app answers a bad parameter with a 400 ``{"error": ...}``).

    Default summaries are made from the operation id too: "Leaderboard" rather than "Api Leaderboard".
    """
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            operation.get("responses", {}).pop("422", None)
            name = operation.get("operationId", "")
            if name and operation.get("summary", "").lower().replace(" ", "_") in (name, "api_" + name):
                operation["summary"] = name.replace("_", " ").capitalize()
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):  # what only the 422 answers used
        components.pop(name, None)
    return schema


def _operation_id(route: APIRoute) -> str:
    """A route's ``operationId``: its function's name (``leaderboard``), which a generated client names its method after."""
    return route.name.removeprefix("api_")


def open_read_only(db: str | Path) -> Store:
    """Open the store without ever writing to it: refused (:class:`StoreError`) when it is missing or needs a migration.

    ``Store`` migrates an older file when it opens it; the web face must not write, so the
    schema version is read first through a read-only SQLite connection.
    """
    path = Path(db)
    if not path.is_file():
        raise StoreError(f"there is no store at {str(path)!r}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the store {str(path)!r}: {exc}") from None
    if version < schema_version():
        raise StoreError(
            f"the store {str(path)!r} has schema version {version}, this arena writes {schema_version()}: "
            "open it once with another polignac command (which migrates it) before serving it"
        )
    return Store(path, create=False)


def create_app(db: str | Path, routers: Sequence[APIRouter] = (), *, live_poll_s: float = live.DEFAULT_POLL_S) -> FastAPI:
    """The app for the store at ``db`` (opened once, when the app starts, without creating it; only read).

    ``routers`` add routes (a league's pages and authors' API); they come before the catch-all of
    unknown ``/api/`` paths.  The leaderboards, bot pages and match lists poll ``/api/stamp``
    every ``live_poll_s`` seconds and redraw themselves when a result was stored (0: they do not).
    """
    if not (live_poll_s == 0 or 0.05 <= live_poll_s <= 3600):
        raise ValueError(f"live_poll_s must be 0 or between 0.05 and 3600 seconds, got {live_poll_s!r}")
    holder: dict[str, Store] = {}
    stamps = live.StampReader(db)  # its connection opens at the first read

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        holder["store"] = open_read_only(db)
        try:
            yield
        finally:
            holder.pop("store").close()
            stamps.close()

    app = FastAPI(
        title="Polignac Arena",
        description="Leaderboards, bots, matches and replays of a Polignac Arena store (read-only).",
        version="1",
        lifespan=lifespan,
        default_response_class=PlainJSONResponse,
        generate_unique_id_function=_operation_id,
        docs_url=None,  # the interactive docs load their script from a CDN: only the description is served
        redoc_url=None,
    )

    schema_of = app.openapi

    def openapi() -> dict[str, Any]:
        return tidy_openapi(schema_of())

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to change the schema

    def store() -> Store:
        if "store" not in holder:  # used without the lifespan (e.g. a TestClient outside a with block)
            holder["store"] = open_read_only(db)
        return holder["store"]

    def live_mark() -> live.LiveMark | None:
        """Taken before the page reads the store: a result stored while it is drawn makes the next poll redraw it."""
        return live.LiveMark(stamps.read().key, round(live_poll_s * 1000)) if live_poll_s else None

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/") or request.url.path == "/api"

    def error(request: Request, status: int, message: str) -> Response:
        if is_api(request):
            return PlainJSONResponse({"error": message}, status_code=status)
        return HTMLResponse(pages.page_error(_LINKS, status, message), status_code=status)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return error(request, 400, _describe(exc))

    @app.exception_handler(data.NotFound)
    async def not_found(request: Request, exc: data.NotFound) -> Response:
        return error(request, 404, str(exc.args[0]) if exc.args else "not found")

    @app.exception_handler(data.BadRequest)
    async def bad_value(request: Request, exc: data.BadRequest) -> Response:
        return error(request, 400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = "not found" if exc.status_code == 404 else str(exc.detail)
        if exc.status_code == 404:
            message = f"no page at {request.url.path}"
        return error(request, exc.status_code, message)

    # -- the JSON API ---------------------------------------------------------------------------

    @app.get("/api/tournaments", tags=["tournaments"], response_model=list[TournamentSummary])
    def api_tournaments() -> list[dict[str, Any]]:
        """Every tournament with its progress."""
        return data.tournaments(store())

    @app.get("/api/tournaments/{name}", tags=["tournaments"], response_model=TournamentDetail, responses=_UNKNOWN)
    def api_tournament(name: str) -> dict[str, Any]:
        """One tournament: progress, entrants and configuration."""
        return data.tournament_detail(store(), name)

    @app.get("/api/leaderboard", tags=["ratings"], response_model=list[LeaderboardRow], responses=_BOTH)
    def api_leaderboard(
        tournament: Tournament = None, sort: Sort = data.SortKey.RANK, limit: Limit = data.LEADERBOARD_PER_PAGE, offset: Offset = 0
    ) -> list[dict[str, Any]]:
        """The leaderboard, all-time or of one tournament, with how sure it is of each place: ``limit`` rows from ``offset``."""
        return data.leaderboard(store(), tournament, sort, limit=limit, offset=offset)

    @app.get("/api/tournaments/{name}/leaderboard", tags=["ratings"], response_model=list[LeaderboardRow], responses=_BOTH)
    def api_tournament_leaderboard(
        name: str, sort: Sort = data.SortKey.RANK, limit: Limit = data.LEADERBOARD_PER_PAGE, offset: Offset = 0
    ) -> list[dict[str, Any]]:
        """The leaderboard of one tournament: ``limit`` rows from ``offset`` in the sort order."""
        return data.leaderboard(store(), name, sort, limit=limit, offset=offset)

    @app.get("/api/crosstable", tags=["ratings"], response_model=Crosstable, responses=_BOTH)
    def api_crosstable(tournament: Tournament = None, top: Top = data.CROSSTABLE_TOP) -> dict[str, Any]:
        """For each pair of the top rated bots, the probability the row bot finishes above the column bot in one match, and their record."""
        return data.crosstable(store(), tournament, top)

    @app.get("/api/bots", tags=["bots"], response_model=list[BotSummary])
    def api_bots() -> list[dict[str, Any]]:
        """Every bot with its versions."""
        return data.bots(store())

    @app.get("/api/bots/{name}", tags=["bots"], response_model=BotDetail, responses=_UNKNOWN)
    def api_bot(name: str) -> dict[str, Any]:
        """One bot: versions, rating history, places, recent matches and fault log."""
        return data.bot_detail(store(), name)

    @app.get("/api/matches", tags=["matches"], response_model=MatchPage, responses=_BOTH)
    def api_matches(
        tournament: Tournament = None, bot: BotFilter = None, faults: FaultFilter = None, page: Page = 1, per_page: PerPage = 50,
        before: Before = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Final results, newest first, filtered; one page, and ``next``: the ``before`` of the next (older) page."""
        return data.matches(store(), tournament, bot, faults, page, per_page, before)

    @app.get("/api/matches/{match_id}", tags=["matches"], response_model=MatchResult, responses=_UNKNOWN)
    def api_match(match_id: str) -> dict[str, Any]:
        """One match's result."""
        return data.match_detail(store(), match_id)

    @app.get("/api/matches/{match_id}/replay", tags=["matches"], response_model=Replay, responses=_UNKNOWN)
    def api_replay(match_id: str) -> dict[str, Any]:
        """One match re-run through the engine: every event, as JSON."""
        return data.replay(store(), match_id)

    @app.get("/api/stamp", tags=["live"], response_model=Stamp)
    def api_stamp() -> Stamp:
        """A cheap mark of the store's state (the latest result, each tournament's progress): poll it to know when to reload."""
        return stamps.read()

    for router in routers:
        app.include_router(router)

    @app.get("/api/{rest:path}", include_in_schema=False)
    def api_unknown(rest: str) -> None:
        raise HTTPException(404)

    # -- the pages --------------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(sort: Sort = data.SortKey.RANK, page: Page = 1) -> str:
        return pages.page_leaderboard(store(), _LINKS, None, sort, page, live=live_mark())

    @app.get("/tournaments/{name}", response_class=HTMLResponse, include_in_schema=False)
    def tournament_page(name: str, sort: Sort = data.SortKey.RANK, page: Page = 1) -> str:
        return pages.page_leaderboard(store(), _LINKS, name, sort, page, live=live_mark())

    @app.get("/crosstable", response_class=HTMLResponse, include_in_schema=False)
    def crosstable_page(tournament: Annotated[str | None, Query()] = None, top: Top = data.CROSSTABLE_TOP) -> str:
        return pages.page_crosstable(store(), _LINKS, tournament or None, top)

    @app.get("/crosstable.csv", include_in_schema=False)
    def crosstable_csv(tournament: Annotated[str | None, Query()] = None) -> Response:
        lines = data.crosstable_csv(store(), tournament or None)
        first = next(lines)  # an unknown tournament is a 404 before the download starts
        name = "crosstable.csv" if not tournament else f"crosstable-{pages.slug(tournament)}.csv"
        return StreamingResponse(
            itertools.chain([first], lines), media_type="text/csv; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )  # fmt: skip

    @app.get("/bots/{name}", response_class=HTMLResponse, include_in_schema=False)
    def bot_page(name: str) -> str:
        return pages.page_bot(store(), _LINKS, name, live=live_mark())

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    def matches_page(
        tournament: Annotated[str | None, Query()] = None,
        bot: Annotated[str | None, Query()] = None,
        faults: Annotated[str | None, Query(pattern="^(|true|false)$")] = None,
        page: Page = 1,
        before: Before = None,
    ) -> Response:
        fault_filter = None if not faults else faults == "true"
        if page > 1:  # the older page numbers: redirected to the keyset page they name
            cursor = data.page_cursor(store(), tournament or None, bot or None, fault_filter, page)
            return RedirectResponse(_LINKS.matches(tournament or None, bot or None, fault_filter, cursor), status_code=303)
        return HTMLResponse(pages.page_matches(store(), _LINKS, tournament or None, bot or None, fault_filter, before, live=live_mark()))

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def replay_page(match_id: str) -> str:
        return pages.page_replay(store(), _LINKS, match_id)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def web_openapi() -> dict[str, Any]:
    """The OpenAPI schema of ``polignac web``'s JSON API (no store is opened to draw it)."""
    return create_app(Path("polignac.db")).openapi()
