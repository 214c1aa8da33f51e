"""What the author API needs of the league (:class:`AuthorBackend`) and the values it passes.

The HTTP side (:mod:`polignac_arena.league.author_api`) and the league's store both use these
types; neither imports the other.  :class:`Throttled` is the token module's own (a leaf too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from polignac_arena.league.tokens import Throttled
from polignac_arena.statuses import SubmissionState

__all__ = [
    "AuthorBackend",
    "BotSummary",
    "SubmissionRefused",
    "SubmissionState",
    "SubmissionStatus",
    "Throttled",
    "Upload",
    "VersionSummary",
]


@dataclass(frozen=True, slots=True)
class SubmissionStatus:
    """One uploaded version, as its author may see it."""

    id: str
    author: str
    """Whose upload it is: only they may see it."""
    bot: str
    state: SubmissionState
    label: str = ""
    """``name@version`` once its ``bot.toml`` was read, else empty."""
    reason: str = ""
    """Why it was refused, or what was accepted."""
    log: Sequence[str] = ()
    """The validation log so far, one line each (plain text)."""
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class VersionSummary:
    """One version of a bot, in its author's list."""

    submission: str
    """The id of its upload (a version's id in the store)."""
    label: str
    state: SubmissionState
    reason: str = ""
    created_at: str = ""
    kind: str = "upload"
    """``upload`` (sandboxed on the league) or ``remote`` (connected from its author's machine)."""
    updated_at: str = ""
    """When its state last changed; for a remote version, when it was last seen joining or leaving the lobby."""


@dataclass(frozen=True, slots=True)
class BotSummary:
    """One of an author's bots with its versions, newest last."""

    name: str
    versions: Sequence[VersionSummary] = field(default_factory=tuple)
    online: bool = False
    """A remote version of it is in the lobby now."""
    counted: bool = False
    """It counts toward the author's ``active_bots`` limit now."""


class SubmissionRefused(Exception):
    """An upload the league will not take; ``http_status`` says which kind of refusal.

    403: the bot belongs to another author; 429: a limit of the author's is reached
    (``retry_after_s`` when waiting helps); 400: a bad archive; 413: an archive over its caps;
    404 and 409 for a bot to retire that does not exist or has nothing active.
    """

    def __init__(self, message: str, http_status: int, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.retry_after_s = retry_after_s


class Upload(Protocol):
    """An upload being received, admitted by :meth:`AuthorBackend.admit`: its body goes to :meth:`write` as it arrives."""

    def write(self, data: bytes) -> None:
        """Take the next bytes of the body; raises :class:`SubmissionRefused` (413) once past the cap."""
        ...

    def close(self) -> None:
        """Done with it (submitted or not): what was received and not kept is dropped, and its place given back."""
        ...


class AuthorBackend(Protocol):
    """What the author API asks of the league.  Its methods block (a store; an old token's slow hash): the API calls them in threads."""

    def authenticate(self, token: str, peer: str) -> str | None:
        """The author whose API token this is, or None (unknown, revoked); raises :class:`Throttled` for a ``peer`` to slow down."""
        ...

    def admit(self, author: str, bot_name: str) -> Upload:
        """The upload of a version of ``bot_name`` by ``author``, to receive; :class:`SubmissionRefused` when it may not be made now.

        Called before the body is read: another author's bot, a limit reached, or too many
        uploads being received are refused without receiving the archive.  Once admitted, the
        upload counts toward the author's hourly limit, whatever becomes of it.
        """
        ...

    def submit(self, author: str, bot_name: str, upload: Upload) -> SubmissionStatus:
        """Take the received ``upload`` as a new version of ``bot_name`` and queue its validation; raises :class:`SubmissionRefused`."""
        ...

    def submission(self, submission_id: str) -> SubmissionStatus | None:
        """The upload ``submission_id`` (whoever it belongs to: the API checks), or None when there is none."""
        ...

    def bots(self, author: str) -> Sequence[BotSummary]:
        """The author's bots, with their versions."""
        ...

    def retire(self, author: str, bot_name: str) -> BotSummary:
        """Retire ``author``'s bot ``bot_name`` (its active version leaves the ladder); raises :class:`SubmissionRefused`.

        404: no such bot; 403: another author's; 409: it has no active version.
        """
        ...
