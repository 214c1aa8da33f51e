"""The JSON the authors' API answers with: one definition for the server and for ``polignac league submit``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from polignac_arena.league.authoring import SubmissionState
from polignac_arena.web.models import ErrorOut  # one refusal body for the whole API (and one name in its schema)

__all__ = ["BotOut", "ErrorOut", "MeOut", "SubmissionOut", "VersionOut"]


class SubmissionOut(BaseModel):
    """An uploaded version and its validation log from line ``log_from``."""

    id: str
    bot: str
    label: str = Field(description="name@version once bot.toml was read, else empty")
    state: SubmissionState
    final: bool = Field(description="validation is over: the state is active, refused or retired")
    reason: str
    log: list[str] = Field(description="validation log lines log_from, log_from+1, ...")
    log_from: int
    log_next: int = Field(description="the line to ask for next (?since=)")
    created_at: str


class VersionOut(BaseModel):
    """One version of a bot."""

    submission: str
    label: str
    state: SubmissionState
    reason: str
    created_at: str


class BotOut(BaseModel):
    """One of the author's bots."""

    name: str
    versions: list[VersionOut]


class MeOut(BaseModel):
    """Who the token belongs to, and their bots."""

    author: str
    bots: list[BotOut]
    max_upload_bytes: int
