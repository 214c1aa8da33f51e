"""The values the league's store hands out (authors, tokens, bots, versions), its errors, and the rows they are read from."""

from __future__ import annotations

import sqlite3
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from polignac_arena.statuses import SubmissionState
from polignac_arena.store import StoreError

__all__ = [
    "BOT_COLUMNS",
    "VERSION_COLUMNS",
    "Author",
    "LeagueBot",
    "LimitReached",
    "NotOwner",
    "TokenInfo",
    "Version",
    "VersionKind",
    "VersionState",
    "bot_of",
    "name_key",
    "version_of",
]


VersionState = SubmissionState
"""Where a version stands: the authors' API's :class:`~polignac_arena.statuses.SubmissionState`, by the store's name."""


class VersionKind(StrEnum):
    """How a version plays: uploaded and sandboxed here, or remote on its author's machine."""

    UPLOAD = "upload"
    REMOTE = "remote"


class NotOwner(StoreError):
    """The bot belongs to another author."""


class LimitReached(StoreError):
    """A per-author limit refuses the request; the message names it.

    ``retry_after_s``: how long until waiting lifts it (None when waiting does not help).
    """

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Author:
    id: int
    name: str
    created_at: str


@dataclass(frozen=True)
class TokenInfo:
    id: str
    author: str
    created_at: str
    revoked_at: str | None
    last_used_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class LeagueBot:
    id: int
    name: str
    author: str
    disabled: bool
    created_at: str


@dataclass(frozen=True)
class Version:
    id: int
    bot: str
    author: str
    version: str
    kind: VersionKind
    archive: str | None
    state: VersionState
    reason: str
    log: str
    created_at: str
    updated_at: str
    activated_at: str | None
    bot_disabled: bool = False

    @property
    def label(self) -> str:
        """The bot's key in results and ratings."""
        return f"{self.bot}@{self.version}"


def name_key(name: str) -> str:
    """A bot's name as ownership and uniqueness compare it: Unicode-normalised (NFKC) and case folded.

    >>> name_key("Random") == name_key("RANDOM") == name_key("random")
    True
    """
    return unicodedata.normalize("NFKC", name).casefold()


VERSION_COLUMNS = """v.id, b.name AS bot, a.name AS author, v.version, v.kind, v.archive, v.state, v.reason, v.log, v.created_at,
    v.updated_at, v.activated_at, b.disabled AS bot_disabled FROM league_versions v JOIN league_bots b ON b.id = v.bot_id
    JOIN league_authors a ON a.id = b.author_id"""


def version_of(row: sqlite3.Row) -> Version:
    """A row of ``SELECT {VERSION_COLUMNS}``."""
    return Version(
        id=int(row["id"]),
        bot=row["bot"],
        author=row["author"],
        version=row["version"],
        kind=VersionKind(row["kind"]),
        archive=row["archive"],
        state=VersionState(row["state"]),
        reason=row["reason"],
        log=row["log"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        activated_at=row["activated_at"],
        bot_disabled=bool(row["bot_disabled"]),
    )


BOT_COLUMNS = "b.id, b.name, a.name AS author, b.disabled, b.created_at FROM league_bots b JOIN league_authors a ON a.id = b.author_id"


def bot_of(row: sqlite3.Row) -> LeagueBot:
    """A row of ``SELECT {BOT_COLUMNS}``."""
    return LeagueBot(int(row["id"]), row["name"], row["author"], bool(row["disabled"]), row["created_at"])
