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
    kind: str = Field("upload", description="upload (sandboxed on the league) or remote (connected from the author's machine)")
    updated_at: str = Field("", description="when its state last changed; for a remote version, when it last joined or left the lobby")


class BotOut(BaseModel):
    """One of the author's bots."""

    name: str
    versions: list[VersionOut]
    online: bool = Field(False, description="a remote version of it is in the lobby now")
    counted: bool = Field(
        False, description="it counts toward the author's active_bots limit now (an offline remote bot stops counting after the idle time)"
    )


class MeOut(BaseModel):
    """Who the token belongs to, and their bots."""

    author: str
    bots: list[BotOut]
    max_upload_bytes: int
