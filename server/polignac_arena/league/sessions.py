"""Authors signed in to the league's web pages: sessions held in memory, bounded, each with its CSRF token.

An author signs in once with their API token and gets a session cookie: a random 256-bit id,
``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's page sends it) and
``Secure`` unless the league serves plaintext on loopback.  Every form a signed-in page posts
carries the session's CSRF token, compared in constant time; a form without it, or with
another session's, is refused (403).  The sign-in form itself is protected the same way by a
short-lived token of its own (a double-submitted cookie), so another site cannot sign a
visitor in as someone else.

Sessions live in this process only (a restart signs everyone out) and are bounded: at most
:data:`MAX_SESSIONS` in all and :data:`MAX_PER_AUTHOR` per author (signing in again past it
ends that author's oldest session), each ending :data:`SESSION_TTL_S` after sign-in or
:data:`IDLE_TTL_S` after its last use, or as soon as the API token it was opened with is
revoked (checked at each use).  Only a hash of a session id is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "IDLE_TTL_S",
    "MAX_PER_AUTHOR",
    "MAX_SESSIONS",
    "SESSION_TTL_S",
    "Session",
    "Sessions",
    "SessionsFull",
    "same_token",
]

SESSION_TTL_S: Final = 12 * 3600.0
IDLE_TTL_S: Final = 2 * 3600.0
MAX_SESSIONS: Final = 10_000
MAX_PER_AUTHOR: Final = 8


class SessionsFull(Exception):
    """Every session slot is taken by a session still in use: try again later (503)."""


@dataclass(slots=True)
class Session:
    """A signed-in author; ``csrf`` goes in every form the session's pages post."""

    author: str
    token_id: str
    """The public id of the API token it was opened with: revoking the token ends the session."""
    csrf: str
    started: float
    used: float = field(default=0.0)


def same_token(given: str | None, expected: str) -> bool:
    """Whether ``given`` is ``expected``, compared in constant time."""
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode())


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


class Sessions:
    """The league's signed-in sessions (thread-safe: the web's routes run in worker threads)."""

    def __init__(
        self,
        *,
        ttl_s: float = SESSION_TTL_S,
        idle_s: float = IDLE_TTL_S,
        max_sessions: int = MAX_SESSIONS,
        per_author: int = MAX_PER_AUTHOR,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.ttl_s = ttl_s
        self.idle_s = idle_s
        self.max_sessions = max_sessions
        self.per_author = per_author
        self._now = clock or time.monotonic
        self._by_key: OrderedDict[str, Session] = OrderedDict()  # oldest sign-in first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_key)

    def open(self, author: str, token_id: str) -> tuple[str, Session]:
        """A new session for ``author`` (signed in with token ``token_id``): its id (for the cookie, never kept) and the session."""
        now = self._now()
        with self._lock:
            self._expire(now)
            mine = [key for key, session in self._by_key.items() if session.author == author]
            for key in mine[: max(0, len(mine) - self.per_author + 1)]:
                del self._by_key[key]
            if len(self._by_key) >= self.max_sessions:
                raise SessionsFull("too many people are signed in: try again in a while")
            session_id = secrets.token_urlsafe(32)
            session = Session(author, token_id, secrets.token_urlsafe(32), now, now)
            self._by_key[_key(session_id)] = session
            return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of ``session_id`` (its idle clock restarted), or None."""
        if not session_id or len(session_id) > 128:
            return None
        now = self._now()
        with self._lock:
            key = _key(session_id)
            session = self._by_key.get(key)
            if session is None:
                return None
            if self._expired(session, now):
                del self._by_key[key]
                return None
            session.used = now
            return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._by_key.pop(_key(session_id), None)

    def close_author(self, author: str) -> int:
        """End every session of ``author`` (their token was revoked); how many there were."""
        with self._lock:
            keys = [key for key, session in self._by_key.items() if session.author == author]
            for key in keys:
                del self._by_key[key]
            return len(keys)

    def _expired(self, session: Session, now: float) -> bool:
        return now - session.started >= self.ttl_s or now - session.used >= self.idle_s

    def _expire(self, now: float) -> None:
        for key in [key for key, session in self._by_key.items() if self._expired(session, now)]:
            del self._by_key[key]
