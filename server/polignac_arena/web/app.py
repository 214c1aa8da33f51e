"""The web app: a FastAPI application serving the JSON API under ``/api/`` and the HTML pages, read-only from the store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from polignac.jsontypes import JsonObject, JsonValue
from polignac_arena.plaintext import plain
from polignac_arena.web import data, live, pages
from polignac_arena.web.api import api_router, unknown_api_router
from polignac_arena.web.note_access import NotesPolicy
from polignac_arena.web.site import LINKS, site_router
from polignac_arena.web.state import WebState, open_read_only

__all__ = ["STATIC_DIR", "PlainJSONResponse", "create_app", "open_read_only", "tidy_openapi", "web_openapi"]

STATIC_DIR = Path(__file__).with_name("static")


def _plain_strings(value: object) -> object:
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

    def render(self, content: object) -> bytes:
        return super().render(_plain_strings(content))


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(x) for x in error.get("loc", ()) if x not in ("query", "path"))
        parts.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return "bad query parameter: " + "; ".join(parts)


def _object(value: JsonValue) -> JsonObject:
    """``value`` if it is an object, else an empty one (for a part the schema leaves out)."""
    return value if isinstance(value, dict) else {}


def tidy_openapi(schema: JsonObject) -> JsonObject:
    """``schema`` without FastAPI's 422 answers (this app answers a bad parameter with a 400 ``{"error": ...}``).

    Default summaries are made from the operation id too: "Leaderboard" rather than "Api Leaderboard".
    """
    for path in _object(schema.get("paths")).values():
        for operation in map(_object, _object(path).values()):
            _object(operation.get("responses")).pop("422", None)
            name, summary = operation.get("operationId", ""), operation.get("summary", "")
            if name and isinstance(name, str) and isinstance(summary, str) and summary.lower().replace(" ", "_") in (name, "api_" + name):
                operation["summary"] = name.replace("_", " ").capitalize()
    components = _object(_object(schema.get("components")).get("schemas"))
    for name in ("HTTPValidationError", "ValidationError"):  # what only the 422 answers used
        components.pop(name, None)
    return _published_names(schema)


def _published_names(schema: JsonObject) -> JsonObject:
    """``schema`` with each ``XOut`` component titled ``X`` named ``X`` (:mod:`polignac_arena.web.models`), its references too.

    Pydantic names a component after its class; the classes end in ``Out`` so that they do not
    clash with the store's and the referee's types, and the schema keeps the names clients know.
    """
    components = _object(_object(schema.get("components")).get("schemas"))
    titles = {key: _object(body).get("title") for key, body in components.items()}
    renamed = {key: title for key, title in titles.items() if isinstance(title, str) and key == f"{title}Out"}
    taken = set(renamed.values()) & (components.keys() - renamed.keys())
    if taken:
        raise ValueError(f"two schema components would be named {sorted(taken)}")
    _rename_refs(schema, {f"#/components/schemas/{old}": f"#/components/schemas/{new}" for old, new in renamed.items()})
    named = sorted(((renamed.get(key, key), body) for key, body in components.items()), key=lambda item: item[0])
    components.clear()
    components.update(named)
    return schema


def _rename_refs(value: object, refs: Mapping[str, str]) -> None:
    """Every ``$ref`` in ``value`` that ``refs`` names replaced by its new target, in place."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref in refs:
            value["$ref"] = refs[ref]
        for item in value.values():
            _rename_refs(item, refs)
    elif isinstance(value, list):
        for item in value:
            _rename_refs(item, refs)


def _operation_id(route: APIRoute) -> str:
    """A route's ``operationId``: its function's name (``leaderboard``), which a generated client names its method after."""
    return route.name.removeprefix("api_")


def create_app(
    db: str | Path, routers: Sequence[APIRouter] = (), *, live_poll_s: float = live.DEFAULT_POLL_S, notes_policy: NotesPolicy | None = None
) -> FastAPI:
    """The app for the store at ``db`` (opened once, when the app starts, without creating it; only read).

    ``routers`` add routes (a league's pages and authors' API); they come before the catch-all of
    unknown ``/api/`` paths.  ``notes_policy`` says whose bots' notes (debug text, stderr) each
    request may read in a replay (default: nobody's; :mod:`polignac_arena.web.note_access`).
    The leaderboards, bot pages and match lists poll ``/api/stamp``
    every ``live_poll_s`` seconds and redraw themselves when a result was stored (0: they do not).
    """
    if not (live_poll_s == 0 or 0.05 <= live_poll_s <= 3600):
        raise ValueError(f"live_poll_s must be 0 or between 0.05 and 3600 seconds, got {live_poll_s!r}")
    web = WebState(db, live_poll_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        web.open()
        try:
            yield
        finally:
            web.close()

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
    app.state.web = web
    if notes_policy is not None:
        app.state.notes_policy = notes_policy
    schema_of = app.openapi

    def openapi() -> JsonObject:
        return tidy_openapi(schema_of())

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to change the schema
    _handle_errors(app)
    app.include_router(api_router)
    for router in routers:
        app.include_router(router)
    app.include_router(unknown_api_router)
    app.include_router(site_router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/api"


def _error(request: Request, status: int, message: str) -> Response:
    """A refusal as the asker reads it: JSON ``{"error": ...}`` under ``/api/``, an HTML page elsewhere."""
    if _is_api(request):
        return PlainJSONResponse({"error": message}, status_code=status)
    return HTMLResponse(pages.page_error(LINKS, status, message), status_code=status)


def _handle_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return _error(request, 400, _describe(exc))

    @app.exception_handler(data.NotFound)
    async def not_found(request: Request, exc: data.NotFound) -> Response:
        return _error(request, 404, str(exc.args[0]) if exc.args else "not found")

    @app.exception_handler(data.BadRequest)
    async def bad_value(request: Request, exc: data.BadRequest) -> Response:
        return _error(request, 400, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = f"no page at {request.url.path}" if exc.status_code == 404 else str(exc.detail)
        return _error(request, exc.status_code, message)


def web_openapi() -> JsonObject:
    """The OpenAPI schema of ``polignac web``'s JSON API (no store is opened to draw it)."""
    return create_app(Path("polignac.db")).openapi()
