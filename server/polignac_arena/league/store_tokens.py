"""The league store's authors and their API tokens: one part of :class:`polignac_arena.league.store.LeagueStore`."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading

from polignac_arena.league.store_values import Author, TokenInfo
from polignac_arena.league.tokens import hash_secret, is_slow_hash, make_token, parse_token, verify_secret
from polignac_arena.settings import NAME_RULE, is_name
from polignac_arena.store import ConflictError, Store, StoreError
from polignac_arena.store.encoding import now_text

__all__ = ["AuthorsAndTokens", "author_id_of", "check_name"]


def check_name(what: str, name: object) -> str:
    """``name`` when it is a valid author or bot name; else :class:`ValueError` saying ``what`` it is."""
    if not is_name(name):
        raise ValueError(f"{what} must be {NAME_RULE}, got {name!r}")
    return name


def author_id_of(conn: sqlite3.Connection, name: str) -> int:
    """The id of the author ``name``; :class:`StoreError` when there is none."""
    row = conn.execute("SELECT id FROM league_authors WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise StoreError(f"there is no author named {name!r} (polignac league user list shows them)")
    return int(row[0])


class _NewToken:
    """A new API token: its text (shown once) and its salted hash (stored), made before the transaction that stores it."""

    def __init__(self) -> None:
        self.text, self._parts = make_token()
        self._salt = secrets.token_bytes(16)
        self._digest = hash_secret(self._parts.secret, self._salt)

    def insert(self, conn: sqlite3.Connection, author_id: int, now: str) -> None:
        conn.execute(
            "INSERT INTO league_tokens (id, author_id, salt, hash, created_at) VALUES (?, ?, ?, ?, ?)",
            (self._parts.id, author_id, self._salt, self._digest, now),
        )


class AuthorsAndTokens:
    """Authors and their tokens, on the league's :class:`Store` (set by :class:`LeagueStore`)."""

    arena: Store
    _checked_tokens: dict[bytes, tuple[str, str]]
    _hashing: threading.BoundedSemaphore

    def add_author(self, name: str) -> tuple[Author, str]:
        """A new author and their first API token (its text: shown once, never stored)."""
        check_name("an author's name", name)
        token = _NewToken()
        with self.arena.write() as conn:
            if conn.execute("SELECT 1 FROM league_authors WHERE name = ?", (name,)).fetchone():
                raise ConflictError(f"there is already an author named {name!r}")
            now = now_text()
            author_id = int(conn.execute("INSERT INTO league_authors (name, created_at) VALUES (?, ?)", (name, now)).lastrowid or 0)
            token.insert(conn, author_id, now)
        return Author(author_id, name, now), token.text

    def authors(self) -> list[Author]:
        with self.arena.read() as conn:
            return [Author(int(r[0]), r[1], r[2]) for r in conn.execute("SELECT id, name, created_at FROM league_authors ORDER BY name")]

    def new_token(self, author: str) -> str:
        """Another API token for ``author`` (the others stay valid)."""
        token = _NewToken()
        with self.arena.write() as conn:
            token.insert(conn, author_id_of(conn, author), now_text())
        return token.text

    def rotate_tokens(self, author: str) -> str:
        """Revoke every token of ``author`` and make a new one, in one transaction."""
        token = _NewToken()
        with self.arena.write() as conn:
            author_id = author_id_of(conn, author)
            now = now_text()
            conn.execute("UPDATE league_tokens SET revoked_at = ? WHERE author_id = ? AND revoked_at IS NULL", (now, author_id))
            token.insert(conn, author_id, now)
        return token.text

    def revoke_token(self, token_id: str) -> TokenInfo:
        """Revoke one token by its id (``plg_<id>_...``); revoking it again changes nothing."""
        with self.arena.write() as conn:
            row = conn.execute("SELECT revoked_at FROM league_tokens WHERE id = ?", (token_id,)).fetchone()
            if row is None:
                raise StoreError(f"there is no token with id {token_id!r} (polignac league token list shows them)")
            if row[0] is None:
                conn.execute("UPDATE league_tokens SET revoked_at = ? WHERE id = ?", (now_text(), token_id))
        return next(t for t in self.tokens() if t.id == token_id)

    def tokens(self, author: str | None = None) -> list[TokenInfo]:
        """Every token (of ``author``), oldest first: ids and dates, never a secret."""
        query = """SELECT t.id, a.name, t.created_at, t.revoked_at, t.last_used_at FROM league_tokens t
                   JOIN league_authors a ON a.id = t.author_id"""
        with self.arena.read() as conn:
            if author is not None:
                author_id_of(conn, author)
                rows = conn.execute(f"{query} WHERE a.name = ? ORDER BY t.created_at, t.id", (author,)).fetchall()
            else:
                rows = conn.execute(f"{query} ORDER BY t.created_at, t.id").fetchall()
        return [TokenInfo(*row) for row in rows]

    def author_of(self, token: str) -> str | None:
        """The author a token belongs to; None when it is malformed, unknown or revoked.

        A check costs a look-up and a keyed hash; the first good check of a token in this
        process notes when it was used, and rewrites an old scrypt hash as a keyed one (see
        :mod:`polignac_arena.league.tokens`), so that it is checked slowly at most once.
        """
        parts = parse_token(token)
        if parts is None:
            return None
        key = hashlib.sha256(token.strip().encode()).digest()
        remembered = self._checked_tokens.get(key)
        with self.arena.read() as conn:
            row = conn.execute(
                "SELECT t.salt, t.hash, t.revoked_at, a.name AS author FROM league_tokens t JOIN league_authors a ON a.id = t.author_id"
                " WHERE t.id = ?",
                (parts.id,),
            ).fetchone()
        if row is None or row["revoked_at"] is not None:
            self._checked_tokens.pop(key, None)
            return None
        if remembered is not None and remembered[0] == parts.id:
            return str(row["author"])
        salt, stored = bytes(row["salt"]), bytes(row["hash"])
        slow = is_slow_hash(stored)
        if slow:
            with self._hashing:
                remembered = self._checked_tokens.get(key)  # a check of the same token that ran while this one waited
                if remembered is not None and remembered[0] == parts.id:
                    return str(row["author"])
                good = verify_secret(parts.secret, salt, stored)
        else:
            good = verify_secret(parts.secret, salt, stored)
        if not good:
            return None
        if len(self._checked_tokens) > 10_000:
            self._checked_tokens.clear()
        self._checked_tokens[key] = (parts.id, str(row["author"]))
        with self.arena.write() as conn:
            conn.execute("UPDATE league_tokens SET last_used_at = ? WHERE id = ?", (now_text(), parts.id))
            if slow:  # unless another process rewrote it meanwhile
                conn.execute(
                    "UPDATE league_tokens SET hash = ? WHERE id = ? AND hash = ?", (hash_secret(parts.secret, salt), parts.id, stored)
                )
        return str(row["author"])

    def token_known(self, token_id: str) -> bool:
        """Whether a token with this public id was ever made (revoked or not): a cheap look-up, no hash."""
        with self.arena.read() as conn:
            return conn.execute("SELECT 1 FROM league_tokens WHERE id = ?", (token_id,)).fetchone() is not None

    def token_live(self, token_id: str) -> bool:
        """Whether the token with this public id exists and is not revoked (a web session's check at each use)."""
        with self.arena.read() as conn:
            row = conn.execute("SELECT revoked_at FROM league_tokens WHERE id = ?", (token_id,)).fetchone()
        return row is not None and row[0] is None

    def remembers(self, token: str) -> bool:
        """Whether this process checked ``token`` and found it good (it is not hashed again; revoking it still counts)."""
        return hashlib.sha256(token.strip().encode()).digest() in self._checked_tokens
