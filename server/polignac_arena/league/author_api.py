"""The authors' HTTP API (mounted under ``/api/league``): upload a version, follow its validation, list and retire one's bots.

Every route needs ``Authorization: Bearer <token>``.  Refusals are JSON ``{"error": message}``
with their status and headers, made here rather than by the app's exception handlers:

* 401 with ``WWW-Authenticate: Bearer``: no token, a malformed one, or one the league does not know;
* 429 with ``Retry-After``: an address that sent too many bad tokens, or an author over a limit;
* 403: another author's bot or submission; 404: no such submission or bot; 409: a bot with nothing active to retire;
* 400: a bad bot name or archive; 408: a body that stopped coming; 413: an upload over a cap (its size, the
  author's disk budget); 415: a body that is not ``application/gzip``.

An upload is read as a stream, handed to the league chunk by chunk (which writes it to disk),
and refused as soon as it passes the cap, so a client sending gigabytes costs the server at
most the cap on disk and a chunk in memory; a body that pauses longer than the body timeout is
refused (408).  An author who may not upload (another's bot, a limit reached, too many uploads
being received) is refused before the body is read at all.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, and `Author` below is
# local to author_router, where a string annotation could not be resolved.

import re
from typing import Annotated, Final

from fastapi import APIRouter, Depends, Query, Request, Response, Security
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool

from polignac_arena.archive import ArchiveCaps
from polignac_arena.league.author_models import BotOut, ErrorOut, MeOut, SubmissionOut
from polignac_arena.league.authoring import AuthorBackend, BotSummary, SubmissionRefused, Throttled
from polignac_arena.league.test_run_api import add_test_run_routes
from polignac_arena.league.test_runs import TestRuns
from polignac_arena.league.upload_route import Refusal, RefusingRoute, refusal_of, retry_after, submission_out, take_upload
from polignac_arena.settings import NAME_RULE, is_name
from polignac_arena.web.app import PlainJSONResponse

__all__ = ["MAX_TOKEN_CHARS", "PREFIX", "author_router"]

PREFIX: Final = "/api/league"
MAX_TOKEN_CHARS: Final = 512
"""Longer bearer tokens are refused unhashed (hashing is slow on purpose)."""
_SUBMISSION_ID: Final = re.compile(r"^[0-9]{1,19}$")  # the store numbers uploads: anything else names none
_BEARER: Final = HTTPBearer(auto_error=False, scheme_name="token", description="an author's API token (polignac league token)")


def _unauthorized(message: str, error: str | None = None) -> Refusal:
    challenge = "Bearer" if error is None else f'Bearer error="{error}"'
    return Refusal(401, message, {"WWW-Authenticate": challenge})


def _bot_out(bot: BotSummary) -> BotOut:
    """``bot`` as the API shows it: :class:`BotSummary` and :class:`VersionSummary` have the fields of the models."""
    return BotOut.model_validate(bot, from_attributes=True)


def author_router(
    league: AuthorBackend, *, max_upload_bytes: int | None = None, body_timeout_s: float = 30.0, test_runs: TestRuns | None = None
) -> APIRouter:
    """The authors' routes, for ``app.include_router(author_router(league))`` (they carry their ``/api/league`` prefix).

    Uploads over ``max_upload_bytes`` (default :attr:`ArchiveCaps.compressed_bytes`) are refused
    with 413 as soon as they pass it; one whose body pauses longer than ``body_timeout_s`` with 408.
    With ``test_runs``, the routes of authors' test matches too (:mod:`polignac_arena.league.test_run_api`).
    """
    cap = max_upload_bytes if max_upload_bytes is not None else ArchiveCaps().compressed_bytes

    class Route(RefusingRoute):
        body_cap = cap
        body_pause_s = body_timeout_s

    router = APIRouter(
        prefix=PREFIX,
        tags=["league authors"],
        # Declares the bearer token in the OpenAPI schema (so a generated client sends it); `author` below checks it.
        dependencies=[Security(_BEARER)],
        route_class=Route,
        default_response_class=PlainJSONResponse,
        responses={401: {"model": ErrorOut}, 429: {"model": ErrorOut}},
    )

    async def author(request: Request) -> str:
        """The author the bearer token names; refused (401, 429) otherwise."""
        header = request.headers.get("authorization")
        if header is None:
            raise _unauthorized("this needs an API token: send 'Authorization: Bearer <token>'")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise _unauthorized("the Authorization header must be 'Bearer <token>'", "invalid_request")
        if len(token) > MAX_TOKEN_CHARS or not token.isascii() or not token.isprintable():
            raise _unauthorized("not a valid API token", "invalid_token")
        peer = request.client.host if request.client is not None else "unknown"
        try:
            name = await run_in_threadpool(league.authenticate, token, peer)
        except Throttled as exc:
            raise Refusal(429, str(exc), retry_after(exc.retry_after_s)) from None
        if name is None:
            raise _unauthorized("not a valid API token (unknown, revoked or mistyped)", "invalid_token")
        return name

    Author = Annotated[str, Depends(author)]

    @router.post(
        "/bots/{name}/versions",
        status_code=202,
        response_model=SubmissionOut,
        responses={
            400: {"model": ErrorOut},
            403: {"model": ErrorOut},
            408: {"model": ErrorOut},
            413: {"model": ErrorOut},
            415: {"model": ErrorOut},
        },
        # The body is read as a stream (so it can be cut off at the cap): described here rather than as a parameter.
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
                "description": "the gzip'd tar of the submission folder",
            }
        },
    )
    async def upload(name: str, request: Request, response: Response, who: Author) -> SubmissionOut:
        """Upload a version of bot NAME: the body is the gzip'd tar that ``polignac league submit`` makes."""
        status = await take_upload(league, who, name, request, cap, body_timeout_s)
        response.headers["Location"] = f"{PREFIX}/submissions/{status.id}"
        return submission_out(status, 0)

    @router.get(
        "/submissions/{submission_id}",
        response_model=SubmissionOut,
        responses={400: {"model": ErrorOut}, 403: {"model": ErrorOut}, 404: {"model": ErrorOut}},
    )
    async def submission(
        submission_id: str,
        who: Author,
        since: Annotated[int, Query(ge=0, le=1_000_000_000, description="Send the log from this line on.")] = 0,
    ) -> SubmissionOut:
        """An upload's state and its validation log (from line ``since``: poll with the last ``log_next`` to follow it)."""
        status = await run_in_threadpool(league.submission, submission_id) if _SUBMISSION_ID.match(submission_id) else None
        if status is None:
            raise Refusal(404, f"no submission {submission_id!r}")
        if status.author != who:
            raise Refusal(403, f"submission {submission_id!r} is another author's")
        return submission_out(status, since)

    @router.post(
        "/bots/{name}/retire",
        response_model=BotOut,
        responses={400: {"model": ErrorOut}, 403: {"model": ErrorOut}, 404: {"model": ErrorOut}, 409: {"model": ErrorOut}},
    )
    async def retire(name: str, who: Author) -> BotOut:
        """Retire bot NAME: its active version leaves the ladder and stops counting toward ``active_bots``.

        A remote bot online now is taken offline; it comes back (active again) if it joins again.
        """
        if not is_name(name):
            raise Refusal(400, f"{name!r} is not a bot name: {NAME_RULE}")
        try:
            bot = await run_in_threadpool(league.retire, who, name)
        except SubmissionRefused as exc:
            raise refusal_of(exc) from None
        return _bot_out(bot)

    @router.get("/me", response_model=MeOut)
    async def me(who: Author) -> MeOut:
        """The token's author, their bots and versions, and the largest upload taken."""
        bots = await run_in_threadpool(league.bots, who)
        return MeOut(author=who, bots=[_bot_out(bot) for bot in bots], max_upload_bytes=cap)

    if test_runs is not None:
        add_test_run_routes(router, Author, test_runs, Refusal)
    return router
