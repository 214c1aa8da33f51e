"""What the two ways to upload share (the authors' API and the author's page): refusals, the body's cap and timeout, the upload.

:func:`take_upload` is the one path an upload takes, whoever sends it: the name and type
checks, the league's ``admit`` before the body is read, the body handed to the league chunk by
chunk and cut off past the cap (413) or after a pause (408), then the league's ``submit``.  A
route refuses by raising :class:`Refusal`; :class:`RefusingRoute` answers it as JSON
``{"error": message}`` with its status and headers.
"""

import asyncio
import contextlib
import math
from collections.abc import Callable, Coroutine, Mapping
from typing import Final

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from polignac_arena.league.author_models import SubmissionOut
from polignac_arena.league.authoring import AuthorBackend, SubmissionRefused, SubmissionStatus, Upload
from polignac_arena.settings import NAME_RULE, is_name
from polignac_arena.web.app import PlainJSONResponse

__all__ = ["GZIP_TYPES", "Refusal", "RefusingRoute", "refusal_of", "retry_after", "submission_out", "take_upload"]

GZIP_TYPES: Final = frozenset({"application/gzip", "application/x-gzip"})


class Refusal(Exception):
    """A refusal answered as ``{"error": message}`` with its status and headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


class RefusingRoute(APIRoute):
    """Answers a :class:`Refusal` (from a route or its dependencies) itself: the app's handlers may drop headers.

    A refused upload ends its connection: the refusal is sent once the body is in (at most
    ``body_cap`` bytes, with the body's pause timeout, so that the client reads it rather than
    a reset), and the next upload needs a new connection, which the web listener rate-limits
    per address.  So a client cannot send body after body to be refused on one connection.
    """

    body_cap = 0
    body_pause_s = 30.0

    def get_route_handler(self) -> Callable[[Request], Coroutine[object, object, Response]]:
        handle = super().get_route_handler()

        async def refusing(request: Request) -> Response:
            try:
                return await handle(request)
            except Refusal as refusal:
                if request.method == "POST":
                    await _finish_body(request, self.body_cap, self.body_pause_s)
                    refusal.headers["Connection"] = "close"
                return PlainJSONResponse({"error": refusal.message}, status_code=refusal.status, headers=refusal.headers)

        return refusing


def retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def refusal_of(exc: SubmissionRefused) -> Refusal:
    headers = retry_after(exc.retry_after_s) if exc.retry_after_s is not None else None
    return Refusal(exc.http_status, exc.message, headers)


def submission_out(status: SubmissionStatus, since: int) -> SubmissionOut:
    lines = list(status.log)
    return SubmissionOut(
        id=status.id,
        bot=status.bot,
        label=status.label,
        state=status.state,
        final=status.state.final,
        reason=status.reason,
        log=lines[since:],
        log_from=min(since, len(lines)),
        log_next=len(lines),
        created_at=status.created_at,
    )


async def take_upload(league: AuthorBackend, author: str, name: str, request: Request, cap: int, pause_s: float) -> SubmissionStatus:
    """Take the request's body as a new version of ``author``'s bot ``name``; raises :class:`Refusal`.

    Refused before the body is read when the name, the type or the declared length is wrong,
    or when the league will not admit the upload (another's bot, a limit reached).
    """
    if not is_name(name):
        raise Refusal(400, f"{name!r} is not a bot name: {NAME_RULE}")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in GZIP_TYPES:
        raise Refusal(415, f"an upload is a gzip'd tar sent as 'Content-Type: application/gzip', not {kind or 'nothing'!r}")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise Refusal(413, f"the upload has {int(declared)} bytes, more than the {cap} allowed")
    try:
        received = await run_in_threadpool(league.admit, author, name)
    except SubmissionRefused as exc:
        raise refusal_of(exc) from None
    try:
        await _receive(request, received, cap, pause_s)
        return await run_in_threadpool(league.submit, author, name, received)
    except SubmissionRefused as exc:
        raise refusal_of(exc) from None
    finally:
        await run_in_threadpool(received.close)


async def _receive(request: Request, upload: Upload, cap: int, pause_s: float) -> None:
    """Hand the request's body to ``upload`` as it arrives: refused (413) once past ``cap`` bytes, (408) after a pause of ``pause_s``."""
    await _chunks(request, cap, pause_s, upload.write)


async def _finish_body(request: Request, cap: int, pause_s: float) -> None:
    """Read what is left of a refused request's body (within ``cap`` and ``pause_s``), dropping it."""
    if getattr(request.state, "body", None) is None:
        with contextlib.suppress(Refusal, ClientDisconnect, SubmissionRefused):
            await _chunks(request, cap, pause_s, lambda _: None)


async def _chunks(request: Request, cap: int, pause_s: float, take: Callable[[bytes], None]) -> None:
    """Hand each chunk of the body to ``take``; ``request.state.body`` says how it ended (``read`` or ``cut``)."""
    total = 0
    chunks = request.stream().__aiter__()
    request.state.body = "cut"
    while True:
        try:
            async with asyncio.timeout(pause_s):
                chunk = await anext(chunks)
        except StopAsyncIteration:
            request.state.body = "read"
            return
        except TimeoutError:
            raise Refusal(408, f"the upload stopped coming: nothing for {pause_s:g} s") from None
        total += len(chunk)
        if total > cap:
            raise Refusal(413, f"the upload is more than the {cap} bytes allowed")
        if chunk:
            take(chunk)
