"""The author's page's upload form: ``POST /me/bots/{name}/versions`` and ``GET /me/submissions/{id}`` for a signed-in session.

The form on ``/me`` (``upload.js``) sends the chosen archive as the body, as ``polignac league
submit`` does, with the session's CSRF token in the ``X-CSRF-Token`` header, then polls the
submission's JSON route to show its validation log as it grows.  The upload goes through the
authors' API's own path (:func:`polignac_arena.league.upload_route.take_upload`): the league's ``admit`` before
the body is read, the same body cap and pause timeout, the same ``submit``, the same refusals as
JSON ``{"error": message}``.  Only the session cookie replaces the bearer token, so the CSRF
token and a same-site ``Origin`` are required on the upload.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations (`Author` is local).

from typing import Annotated, Final, Protocol

from fastapi import APIRouter, Depends, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from polignac_arena.archive import ArchiveCaps
from polignac_arena.league.author_models import SubmissionOut
from polignac_arena.league.authoring import AuthorBackend
from polignac_arena.league.sessions import Sessions, same_token
from polignac_arena.league.signin import SESSION_COOKIE
from polignac_arena.league.upload_route import Refusal, RefusingRoute, submission_out, take_upload
from polignac_arena.web.app import PlainJSONResponse

__all__ = ["CSRF_HEADER", "upload_router"]

CSRF_HEADER: Final = "X-CSRF-Token"
_SUBMISSION_ID_MAX: Final = 19


class UploadPages(AuthorBackend, Protocol):
    """What the upload form needs of the league: the authors' backend and the signed-in sessions."""

    sessions: Sessions

    def token_live(self, token_id: str) -> bool: ...


def upload_router(league: UploadPages, *, max_upload_bytes: int | None = None, body_timeout_s: float = 30.0) -> APIRouter:
    """The upload form's two routes (not in the OpenAPI schema: a browser's, authenticated by the session cookie)."""
    cap = max_upload_bytes if max_upload_bytes is not None else ArchiveCaps().compressed_bytes

    class Route(RefusingRoute):
        body_cap = cap
        body_pause_s = body_timeout_s

    router = APIRouter(include_in_schema=False, route_class=Route, default_response_class=PlainJSONResponse)

    def author(request: Request) -> str:
        """The signed-in author; refused (401) for a visitor with no live session."""
        session_id = request.cookies.get(SESSION_COOKIE)
        session = league.sessions.get(session_id)
        if session is not None and not league.token_live(session.token_id):
            league.sessions.close(session_id)  # its token was revoked since
            session = None
        if session is None:
            raise Refusal(401, "sign in first: this is for a signed-in author")
        if request.method == "POST":
            origin = request.headers.get("origin")
            same_site = origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"
            if not same_site or not same_token(request.headers.get(CSRF_HEADER), session.csrf):
                raise Refusal(403, "this upload lacks its CSRF token or came from another site: reload the page")
        return session.author

    Author = Annotated[str, Depends(author)]

    @router.post("/me/bots/{name}/versions", status_code=202, response_model=SubmissionOut)
    async def upload(name: str, request: Request, response: Response, who: Author) -> SubmissionOut:
        """Upload a version of bot NAME from the author's page: the body is the gzip'd tar of the submission folder."""
        status = await take_upload(league, who, name, request, cap, body_timeout_s)
        response.headers["Location"] = f"/me/submissions/{status.id}"
        return submission_out(status, 0)

    @router.get("/me/submissions/{submission_id}", response_model=SubmissionOut)
    async def submission(
        submission_id: str,
        who: Author,
        response: Response,
        since: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    ) -> SubmissionOut:
        """An upload's state and validation log from line ``since``, for its author only (another's is not found)."""
        known = submission_id.isascii() and submission_id.isdigit() and len(submission_id) <= _SUBMISSION_ID_MAX
        status = await run_in_threadpool(league.submission, submission_id) if known else None
        if status is None or status.author != who:
            raise Refusal(404, f"you have no upload {submission_id!r}")
        response.headers["Cache-Control"] = "private, no-store"
        return submission_out(status, since)

    return router
