"""The league's pages for a signed-in author: ``/signin``, ``/signout`` and ``/me`` (their bots, versions and matches).

With the league's test matches (:mod:`polignac_arena.league.test_runs`) also: the replay page
``/matches/{id}`` of a match the author's bot played gets a form asking for a test match
(``POST /matches/{id}/rerun``), ``/me`` lists the author's test matches and ``/me/reruns/{id}``
replays one; every other visitor sees the replay page as everyone does, and nothing of another's.

Sessions and their cookie are :mod:`polignac_arena.league.sessions`'.  Every ``POST`` here is a
form (``application/x-www-form-urlencoded``, at most :data:`MAX_FORM_BYTES`) that carries a
CSRF token, and is refused (403) when it lacks it or when its ``Origin`` is another site.  The
API token typed in the sign-in form goes through the same check as the authors' API, bad-token
throttle included.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol
from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from polignac_arena.archive import ArchiveCaps
from polignac_arena.league.author_api import MAX_TOKEN_CHARS
from polignac_arena.league.authoring import BotSummary, Throttled
from polignac_arena.league.human_matches import OPPONENTS as PLAY_OPPONENTS
from polignac_arena.league.sessions import Session, Sessions, SessionsFull, same_token
from polignac_arena.league.test_run_api import test_run_url
from polignac_arena.league.test_runs import TestRunRefused, TestRuns, as_result, run_state_text
from polignac_arena.league.tokens import parse_token
from polignac_arena.store import StoredResult
from polignac_arena.web.note_access import NOTES_CACHE_HEADERS, NotesDep
from polignac_arena.web.pages import Links, page_replay, page_replay_of, render
from polignac_arena.web.state import StoreDep


@dataclass(frozen=True)
class RerunOffer:
    """The replay page's form for a signed-in author whose bot played the match: the versions they may rerun it with."""

    match_id: str
    versions: list[str]
    csrf: str


@dataclass(frozen=True)
class PlayHere:
    """The replay page's "play this position" form for a signed-in person (:mod:`polignac_arena.league.human_pages`)."""

    match_id: str
    csrf: str
    bots: tuple[str, ...]


__all__ = ["MAX_FORM_BYTES", "SESSION_COOKIE", "SIGNIN_COOKIE", "AuthorPages", "FormRefused", "session_form", "signin_router"]

SESSION_COOKIE: Final = "polignac_session"
SIGNIN_COOKIE: Final = "polignac_signin"
"""The sign-in form's own CSRF token, double-submitted: in this cookie and in the form."""
SIGNIN_FORM_TTL_S: Final = 600
MAX_FORM_BYTES: Final = 4096
RECENT_MATCHES: Final = 20


class AuthorPages(Protocol):
    """What the pages need of the league."""

    sessions: Sessions

    def authenticate(self, token: str, peer: str) -> str | None: ...

    def token_live(self, token_id: str) -> bool: ...

    def bots(self, author: str) -> list[BotSummary]: ...

    def recent_matches(self, labels: list[str], limit: int) -> list[StoredResult]: ...


class FormRefused(Exception):
    """A posted form refused: the HTTP status to answer and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _form(request: Request) -> Mapping[str, str]:
    """The posted form's fields (the first value of each), read up to :data:`MAX_FORM_BYTES`."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormRefused(415, "this expects a form (application/x-www-form-urlencoded)")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormRefused(413, f"a form here is at most {MAX_FORM_BYTES} bytes")
    try:
        fields = parse_qs(body.decode("ascii"), keep_blank_values=True, strict_parsing=False, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        raise FormRefused(400, "this form could not be read") from None
    return {name: values[0] for name, values in fields.items()}


def _same_site(request: Request) -> bool:
    """No ``Origin``, or this server's own (a browser sends one with every cross-site POST)."""
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


async def session_form(request: Request, session: Session) -> Mapping[str, str]:
    """The form a signed-in ``session`` posted from this site with its CSRF token; else :class:`FormRefused`."""
    form = await _form(request)
    if not _same_site(request) or not same_token(form.get("csrf"), session.csrf):
        raise FormRefused(403, "this form lacks its CSRF token or came from another site")
    return form


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def signin_router(league: AuthorPages, test_runs: TestRuns | None = None, caps: ArchiveCaps | None = None) -> APIRouter:
    """The sign-in, sign-out and author's pages (not part of the JSON API's schema); with ``test_runs``, their pages too.

    ``caps`` (the league's archive caps) are written on the upload form, so that its page can
    refuse a folder past them before packing or sending it; the server checks them anyway.
    """
    archive_caps = caps if caps is not None else ArchiveCaps()
    router = APIRouter(include_in_schema=False)
    links = Links()

    def page(name: str, status: int = 200, **context: object) -> HTMLResponse:
        response = HTMLResponse(render(name, links, None, None, **context), status_code=status)
        response.headers["Cache-Control"] = "no-store"  # nothing of a signed-in page is kept by a shared cache
        return response

    def signed_in(request: Request) -> tuple[str | None, Session | None]:
        session_id = request.cookies.get(SESSION_COOKIE)
        session = league.sessions.get(session_id)
        if session is not None and not league.token_live(session.token_id):
            league.sessions.close(session_id)  # its token was revoked (or rotated) since
            return session_id, None
        return session_id, session

    def signin_form(request: Request, status: int = 200, error: str = "") -> HTMLResponse:
        token = _new_token()
        response = page("signin.html", status, title="Sign in", csrf=token, error=error)
        response.set_cookie(
            SIGNIN_COOKIE,
            token,
            max_age=SIGNIN_FORM_TTL_S,
            path="/signin",
            httponly=True,
            samesite="strict",
            secure=_secure(request),
        )
        return response

    @router.get("/signin")
    def signin_page(request: Request) -> Response:
        if signed_in(request)[1] is not None:
            return RedirectResponse("/me", status_code=303)
        return signin_form(request)

    @router.post("/signin")
    async def signin(request: Request) -> Response:
        try:
            form = await _form(request)
        except FormRefused as exc:
            return signin_form(request, exc.status, exc.message)
        if not _same_site(request) or not same_token(form.get("csrf"), request.cookies.get(SIGNIN_COOKIE) or "\0"):
            return signin_form(request, 403, "the sign-in form expired or came from another site: sign in again")
        token = form.get("token", "").strip()
        if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii() or not token.isprintable():
            return signin_form(request, 401, "not a valid API token")
        peer = request.client.host if request.client is not None else "unknown"
        try:
            author = await run_in_threadpool(league.authenticate, token, peer)
        except Throttled as exc:
            response = signin_form(request, 429, str(exc))
            response.headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
            return response
        if author is None:
            return signin_form(request, 401, "not a valid API token (unknown, revoked or mistyped)")
        parts = parse_token(token)
        assert parts is not None  # a token the league knows is well formed
        try:
            session_id, _ = league.sessions.open(author, parts.id)
        except SessionsFull as exc:
            return signin_form(request, 503, str(exc))
        signed = RedirectResponse("/me", status_code=303)
        signed.set_cookie(SESSION_COOKIE, session_id, path="/", httponly=True, samesite="strict", secure=_secure(request))
        signed.delete_cookie(SIGNIN_COOKIE, path="/signin")
        return signed

    @router.get("/me")
    def me(request: Request) -> Response:
        _, session = signed_in(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        bots = league.bots(session.author)
        labels = [version.label for bot in bots for version in bot.versions]
        matches = league.recent_matches(labels, RECENT_MATCHES)
        runs = test_runs.of_author(session.author) if test_runs is not None else []
        return page(
            "me.html",
            title=f"Signed in as {session.author}",
            author=session.author,
            bots=bots,
            matches=matches,
            csrf=session.csrf,
            caps=archive_caps,
            test_runs=[(run, run_state_text(run)) for run in runs],
        )

    @router.post("/signout")
    async def signout(request: Request) -> Response:
        session_id, session = signed_in(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        try:
            await session_form(request, session)
        except FormRefused as exc:
            return page("error.html", exc.status, title="Refused", message=exc.message)
        league.sessions.close(session_id)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    if test_runs is not None:
        _add_test_run_pages(router, test_runs, signed_in, page)
    return router


def _add_test_run_pages(
    router: APIRouter,
    test_runs: TestRuns,
    signed_in: Callable[[Request], tuple[str | None, Session | None]],
    page: Callable[..., HTMLResponse],
) -> None:
    """The replay page with a signed-in author's rerun form, the form's target, and the author's test match pages."""
    links = Links()

    def private(html: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(html, status_code=status, headers=NOTES_CACHE_HEADERS)

    # The site's replay page (the bots' notes as the app's policy allows), with the rerun form for a signed-in author.
    @router.get("/matches/{match_id}", response_class=HTMLResponse)
    def replay_page(request: Request, store: StoreDep, match_id: str, notes_of: NotesDep) -> Response:
        _, session = signed_in(request)
        if session is None:
            return HTMLResponse(page_replay(store, links, match_id, notes_of), headers=NOTES_CACHE_HEADERS)
        result = store.get_result(match_id)
        choices = test_runs.choices(session.author, result.seats) if result is not None else []
        offer = RerunOffer(match_id, choices, session.csrf) if choices else None
        here = PlayHere(match_id, session.csrf, PLAY_OPPONENTS) if result is not None and result.record else None
        return HTMLResponse(page_replay(store, links, match_id, notes_of, rerun=offer, play_here=here), headers=NOTES_CACHE_HEADERS)

    @router.post("/matches/{match_id}/rerun")
    async def ask_rerun(request: Request, match_id: str) -> Response:
        _, session = signed_in(request)
        if session is None:
            return page("error.html", 401, title="Sign in first", message="sign in to ask for a test match of your bot")
        try:
            form = await session_form(request, session)
        except FormRefused as exc:
            return page("error.html", exc.status, title="Refused", message=exc.message)
        hand_text = form.get("hand", "").strip()
        if hand_text and (not hand_text.isascii() or not hand_text.isdigit() or len(hand_text) > 6 or int(hand_text) < 1):
            return page("error.html", 400, title="Refused", message=f"the hand must be a hand number, got {hand_text!r}")
        hand = int(hand_text) if hand_text else None
        try:
            run = await run_in_threadpool(test_runs.request, session.author, match_id, form.get("version", ""), hand)
        except TestRunRefused as exc:
            refused = page("error.html", exc.http_status, title="Test match refused", message=exc.message)
            if exc.retry_after_s is not None:
                refused.headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
            return refused
        return RedirectResponse(test_run_url(run.id), status_code=303)

    @router.get("/me/reruns/{run_id}", response_class=HTMLResponse)
    def test_run_page(request: Request, store: StoreDep, run_id: str, notes_of: NotesDep) -> Response:
        _, session = signed_in(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        run = test_runs.get(int(run_id)) if run_id.isascii() and run_id.isdigit() and len(run_id) <= 18 else None
        if run is None or run.author != session.author:  # another's is as unknown as a missing one
            return page("error.html", 404, title="Not found", message=f"you have no test match {run_id!r}")
        record = test_runs.record(run.id)
        title = f"Test match {run.id}: {run.version} in {run.match_id} from hand {run.hand}"
        about = {"test_run": run, "test_run_state": run_state_text(run)}
        if record is None:
            return private(render("test_run.html", links, store, None, title=title, **about))
        return private(page_replay_of(store, links, as_result(run, record), title, notes_of, **about))


def _new_token() -> str:
    return secrets.token_urlsafe(24)
