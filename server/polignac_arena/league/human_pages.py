"""The pages and the JSON bridge of people's matches (:mod:`polignac_arena.league.human_matches`), signed in only.

- ``GET /play``: the form (opponents, points limit) and the author's human matches;
- ``POST /play``: start one (a form with the session's CSRF token), 303 to its page;
- ``POST /play/from/{match}`` (form: ``hand``, ``seat``, ``bot``): "play this position" from a replay: a seat of a
  recorded league match from that hand on (the same deals, the totals so far), the built-in ``bot`` in the others;
- ``GET /play/{id}``: the table (``play.js`` talks to the two routes below);
- ``GET /play/{id}/state?since=V``: the seat's state as JSON, waiting up to :data:`LONG_POLL_S` for a change past ``V``;
- ``POST /play/{id}/decision``: ``{"turn": N, "decision": "QS"|"pass"|"capot"|"general"}`` (JSON, the CSRF token in
  the ``X-CSRF-Token`` header);
- ``GET /play/{id}/replay``: the finished match's replay.

Another author's match is as unknown (404) as a missing one; an anonymous visitor is sent to ``/signin``
(pages) or refused 401 (JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any, Final, Protocol

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from polignac_arena.league.human_matches import OPPONENTS, HumanMatch, HumanMatches, HumanMatchRefused, describe
from polignac_arena.league.human_seat import AnswerRefused
from polignac_arena.league.sessions import Session, Sessions, same_token
from polignac_arena.league.signin import SESSION_COOKIE, FormRefused, _same_site, session_form
from polignac_arena.record_lines import HandEndedLine, HeaderLine, ResultLine, parse_lines
from polignac_arena.rerun_source import RerunSourceError, rerun_of_record
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import StoredResult
from polignac_arena.web.note_access import NOTES_CACHE_HEADERS, NotesDep
from polignac_arena.web.pages import Links, page_replay_of, render
from polignac_arena.web.state import StoreDep

__all__ = ["LONG_POLL_S", "MAX_DECISION_BYTES", "human_router", "play_url"]

LONG_POLL_S: Final = 20.0
MAX_DECISION_BYTES: Final = 256
_BAD_BODY: Final = f'send {{"turn": N, "decision": "QS"}} as JSON, at most {MAX_DECISION_BYTES} bytes'


class HumanLeague(Protocol):
    sessions: Sessions

    def token_live(self, token_id: str) -> bool: ...


def play_url(match_id: str) -> str:
    return f"/play/{match_id}"


def human_router(league: HumanLeague, matches: HumanMatches) -> APIRouter:
    """The routes above."""
    router = APIRouter(include_in_schema=False)
    links = Links()

    def page(name: str, status: int = 200, **context: object) -> HTMLResponse:
        response = HTMLResponse(render(name, links, None, None, **context), status_code=status)
        response.headers["Cache-Control"] = "no-store"
        return response

    def refused(status: int, message: str) -> HTMLResponse:
        return page("error.html", status, title="Refused" if status != 404 else "Not found", message=message)

    def session_of(request: Request) -> Session | None:
        session_id = request.cookies.get(SESSION_COOKIE)
        session = league.sessions.get(session_id)
        if session is not None and not league.token_live(session.token_id):
            league.sessions.close(session_id)
            return None
        return session

    async def posted_form(request: Request) -> tuple[Session, Mapping[str, str]] | Response:
        """The signed-in session and the form it posted, or the page that refuses them."""
        session = session_of(request)
        if session is None:
            return refused(401, "sign in to play")
        try:
            return session, await session_form(request, session)
        except FormRefused as exc:
            return refused(exc.status, exc.message)

    def match_of(session: Session, match_id: str) -> HumanMatch | None:
        return matches.get(session.author, match_id) if len(match_id) <= 40 else None

    @router.get("/play")
    def play_form(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        low, high = matches.limits()
        players = matches.config.rules.players
        return page(
            "play_start.html",
            title="Play against the bots",
            csrf=session.csrf,
            opponents=OPPONENTS,
            seats=range(1, players),
            low=low,
            high=high,
            default_limit=min(high, 10),
            rules=matches.config.rules,
            move_s=matches.config.author_limits.human_move_s,
            mine=matches.of_author(session.author)[::-1],
        )

    @router.post("/play")
    async def start(request: Request) -> Response:
        posted = await posted_form(request)
        if isinstance(posted, Response):
            return posted
        session, form = posted
        players = matches.config.rules.players
        opponents = [form.get(f"seat{seat}", "") for seat in range(1, players)]
        limit_text = form.get("limit", "").strip()
        if not limit_text.isascii() or not limit_text.isdigit() or len(limit_text) > 6:
            return refused(400, f"the points limit must be a number, got {limit_text[:20]!r}")
        try:
            match = matches.start(session.author, opponents, int(limit_text))
        except HumanMatchRefused as exc:
            return refused(exc.http_status, exc.message)
        return RedirectResponse(play_url(match.id), status_code=303)

    @router.post("/play/from/{match_id}")
    async def start_from(request: Request, store: StoreDep, match_id: str) -> Response:
        posted = await posted_form(request)
        if isinstance(posted, Response):
            return posted
        session, form = posted
        numbers = {name: form.get(name, "").strip() for name in ("hand", "seat")}
        for name, text in numbers.items():
            if not text.isascii() or not text.isdigit() or len(text) > 6:
                return refused(400, f"the {name} must be a number, got {text[:20]!r}")
        stored = store.get_result(match_id) if len(match_id) <= 200 else None
        if stored is None or not stored.record:
            return refused(404, f"no match {match_id[:200]!r} with a record in this league")
        try:
            source = await run_in_threadpool(rerun_of_record, stored.record, match_id, int(numbers["hand"]))
            match = matches.start_from(session.author, source, int(numbers["seat"]), form.get("bot", ""))
        except RerunSourceError as exc:
            return refused(400, str(exc))
        except HumanMatchRefused as exc:
            return refused(exc.http_status, exc.message)
        return RedirectResponse(play_url(match.id), status_code=303)

    @router.get("/play/{match_id}")
    def table(request: Request, match_id: str) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        match = match_of(session, match_id)
        if match is None:
            return refused(404, f"you have no match {match_id[:40]!r}")
        return page("play.html", title=f"Your match against {', '.join(match.opponents)}", match=match, csrf=session.csrf)

    @router.get("/play/{match_id}/state")
    async def state(request: Request, match_id: str, since: int = -1) -> Response:
        session = session_of(request)
        if session is None:
            return JSONResponse({"detail": "sign in to play"}, status_code=401)
        match = match_of(session, match_id)
        if match is None:
            return JSONResponse({"detail": f"you have no match {match_id[:40]!r}"}, status_code=404)
        if since == match.seat.version and match.live:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(match.seat.changed.wait(), LONG_POLL_S)
        return JSONResponse(describe(match), headers={"Cache-Control": "no-store"})

    @router.post("/play/{match_id}/decision")
    async def decide(request: Request, match_id: str) -> Response:
        session = session_of(request)
        if session is None:
            return JSONResponse({"detail": "sign in to play"}, status_code=401)
        if not _same_site(request) or not same_token(request.headers.get("x-csrf-token"), session.csrf):
            return JSONResponse({"detail": "this decision lacks its CSRF token or came from another site"}, status_code=403)
        match = match_of(session, match_id)
        if match is None:
            return JSONResponse({"detail": f"you have no match {match_id[:40]!r}"}, status_code=404)
        body = await _body(request)
        if body is None:
            return JSONResponse({"detail": _BAD_BODY}, status_code=400)
        turn, text = body
        try:
            await match.seat.answer(turn, text)
        except AnswerRefused as exc:
            return JSONResponse({"detail": str(exc)}, status_code=409)
        return JSONResponse(describe(match), headers={"Cache-Control": "no-store"})

    @router.get("/play/{match_id}/replay")
    def replay(request: Request, store: StoreDep, match_id: str, notes_of: NotesDep) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        match = match_of(session, match_id)
        if match is None or not match.record:
            why = "is still being played" if match is not None and match.live else "has no record"
            return refused(404, f"match {match_id[:40]!r} {why}" if match is not None else f"you have no match {match_id[:40]!r}")
        result = _as_result(match)
        title = f"Your match against {', '.join(match.opponents)}"
        return HTMLResponse(page_replay_of(store, links, result, title, notes_of), headers=NOTES_CACHE_HEADERS)

    return router


async def _body(request: Request) -> tuple[int, str] | None:
    """The decision's ``turn`` and ``decision``, or None for anything else."""
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_DECISION_BYTES:
            return None
    try:
        data: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    turn, text = data.get("turn"), data.get("decision")
    if type(turn) is not int or not isinstance(text, str) or not 0 < len(text) <= 16:
        return None
    return turn, text


def _as_result(match: HumanMatch) -> StoredResult:
    """A finished human match as the replay viewer reads a stored result (it is none: never rated, never listed)."""
    try:
        lines = parse_lines(match.record)
    except ValueError:
        lines = []
    header = next((line for line in lines if isinstance(line, HeaderLine)), None)
    result = next((line for line in reversed(lines) if isinstance(line, ResultLine)), None)
    players = match.rules.players
    return StoredResult(
        tournament_id=0,
        tournament="human match",
        idx=0,
        seats=(*match.opponents[: match.human], f"{match.author} (you)", *match.opponents[match.human :]),
        seed=match.seed if header is None else header.seed,
        match_id=f"human-{match.id}",
        status=MatchStatus.parse(match.status) if match.status in {s.value for s in MatchStatus} else MatchStatus.ERROR,
        final=True,
        places=tuple(result.places) if result is not None and result.places else None,
        totals=tuple(result.totals) if result is not None and result.totals else (0,) * players,
        faults=tuple(dict(f) for f in result.faults) if result is not None else tuple({} for _ in range(players)),
        hands=sum(1 for line in lines if isinstance(line, HandEndedLine)),
        penalties=(0,) * players,
        duration_s=None,
        finished_at="",
        record_path=None,
        record=match.record,
    )
