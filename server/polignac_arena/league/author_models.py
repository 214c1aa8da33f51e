"""The JSON the authors' API answers with: one definition for the server and for ``polignac league submit``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from polignac_arena.league.authoring import SubmissionState
from polignac_arena.web.models import ErrorOut, JsonObjectField  # one refusal body for the whole API (and one name in its schema)

__all__ = ["BotOut", "ErrorOut", "MeOut", "SubmissionOut", "TestRunOut", "VersionOut"]


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


class TestRunOut(BaseModel):
    """An author's test match: a league match's deals played again from ``hand`` with ``version`` in their bot's seats."""

    __test__ = False

    id: int
    match: str = Field(description="the league match whose deals it plays again")
    hand: int = Field(description="the hand it starts at, with the totals the match had before it")
    version: str = Field(description="the author's version (BOT@N) that takes their bot's seats")
    seats: list[str] = Field(description="the versions in seat order")
    state: str = Field(description="queued, running, finished or failed")
    reason: str = Field(description="why it failed")
    requested_at: str
    finished_at: str | None
    status: str | None = Field(description="how the match ended (finished, aborted...), once it did")
    places: list[int] | None
    totals: list[int] | None
    url: str = Field(description="where the author sees it in the browser (signed in)")
    record: list[JsonObjectField] | None = Field(None, description="its record (JSON lines), with ?record=true once it has one")
