"""Whose bots' notes (debug text, stderr) a request to the league's web may read: its author's own, and no one else's.

The author is the one signed in (the session cookie of :mod:`.signin`, its API token still
live) or, on the JSON API, the one whose API token the request bears (``Authorization:
Bearer``).  A request with neither reads no notes; a bearer token that is not an author's is
refused (401), a run of bad ones slowed down (429) as on the authors' API.  The operator
reads every note from the store itself (``polignac match show ID --db STORE``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fastapi import HTTPException, Request

from polignac_arena.league.author_api import MAX_TOKEN_CHARS
from polignac_arena.league.signin import SESSION_COOKIE, AuthorPages
from polignac_arena.league.tokens import Throttled
from polignac_arena.web.note_access import NotesPolicy, SeatFilter, no_seat

__all__ = ["league_notes_policy"]


def league_notes_policy(league: AuthorPages) -> NotesPolicy:
    """The league's policy: each request reads the notes of its author's bots' seats only."""

    def author_of(request: Request) -> str | None:
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS or not token.isascii() or not token.isprintable():
                raise HTTPException(401, "the Authorization header must be 'Bearer <an author's API token>'")
            peer = request.client.host if request.client is not None else "unknown"
            try:
                author = league.authenticate(token, peer)
            except Throttled as exc:
                raise HTTPException(429, str(exc), {"Retry-After": str(max(1, round(exc.retry_after_s)))}) from None
            if author is None:
                raise HTTPException(401, "not a valid API token (unknown, revoked or mistyped)")
            return author
        session = league.sessions.get(request.cookies.get(SESSION_COOKIE))
        if session is None or not league.token_live(session.token_id):
            return None
        return session.author

    def policy(request: Request) -> SeatFilter:
        author = author_of(request)
        if author is None:
            return no_seat

        def own_seats(seats: Sequence[str]) -> Collection[int]:
            labels = {version.label for bot in league.bots(author) for version in bot.versions}
            return [seat for seat, label in enumerate(seats) if label in labels]

        return own_seats

    return policy
