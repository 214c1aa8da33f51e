"""A fake league behind the author API: everything in dicts, validation played from a script, one step per look."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from polignac_arena.league.authoring import (
    BotSummary,
    SubmissionRefused,
    SubmissionState,
    SubmissionStatus,
    Throttled,
    Upload,
    VersionSummary,
)

Step = tuple[SubmissionState, tuple[str, ...], str]


@dataclass
class FakeUpload:
    """An upload received into memory (the fake keeps everything in memory): its chunks, and whether it was closed."""

    league: FakeLeague
    chunks: list[bytes] = field(default_factory=list)
    closed: bool = False

    def write(self, data: bytes) -> None:
        self.chunks.append(data)

    def close(self) -> None:
        self.closed = True
        self.league.calls.append("close")


"""One step of a scripted validation: the state it reaches, the log lines it adds, the reason."""


@dataclass
class FakeLeague:
    """An AuthorBackend keeping everything in dicts, recording what it was asked.

    A submission of a bot named in ``scripts`` moves one step of its script each time it is
    looked at (:meth:`submission`), so a client following it sees validation progress.
    """

    tokens: dict[str, str] = field(default_factory=lambda: {"tok-ada": "ada", "tok-bob": "bob"})
    owners: dict[str, str] = field(default_factory=lambda: {"ada-bot": "ada", "bob-bot": "bob"})
    throttled: set[str] = field(default_factory=set)
    over_limit: set[str] = field(default_factory=set)
    busy: int = 0
    """Uploads to refuse as the league receiving others does (429, Retry-After 1), before taking the next."""
    statuses: dict[str, SubmissionStatus] = field(default_factory=dict)
    scripts: dict[str, list[Step]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    uploads: list[bytes] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[str, list[Step]] = field(default_factory=dict)

    def authenticate(self, token: str, peer: str) -> str | None:
        self.calls.append(f"authenticate {token} from {peer}")
        if peer in self.throttled:
            raise Throttled(12.2)
        return self.tokens.get(token)

    def admit(self, author: str, bot_name: str) -> FakeUpload:
        self.calls.append(f"admit {author} {bot_name}")
        owner = self.owners.setdefault(bot_name, author)
        if owner != author:
            raise SubmissionRefused(f"bot {bot_name!r} belongs to another author", 403)
        if author in self.over_limit:
            raise SubmissionRefused("you uploaded 10 versions in the last hour, the limit", 429, retry_after_s=1800.5)
        if self.busy > 0:
            self.busy -= 1
            raise SubmissionRefused("the league is receiving 4 upload(s), the most at once: try again in a few seconds", 429, 1.0)
        return FakeUpload(self)

    def submit(self, author: str, bot_name: str, upload: Upload) -> SubmissionStatus:
        assert isinstance(upload, FakeUpload), upload  # what admit gave
        data = b"".join(upload.chunks)
        self.calls.append(f"submit {author} {bot_name} {len(data)} bytes")
        if data == b"too big unpacked":
            raise SubmissionRefused("the archive unpacks to more than 100 MB", 413)
        if not data.startswith(b"\x1f\x8b"):
            raise SubmissionRefused("the upload is not a gzip'd tar", 400)
        with self.lock:
            self.uploads.append(data)
            status = SubmissionStatus(str(next(self.ids)), author, bot_name, SubmissionState.QUEUED, created_at="2026-12-01T10:00:00Z")
            self.statuses[status.id] = status
            self.pending[status.id] = list(self.scripts.get(bot_name, []))
        return status

    def submission(self, submission_id: str) -> SubmissionStatus | None:
        with self.lock:
            status = self.statuses.get(submission_id)
            steps = self.pending.get(submission_id)
            if status is not None and steps:
                state, lines, reason = steps.pop(0)
                status = replace(status, state=state, log=(*status.log, *lines), reason=reason, label=f"{status.bot}@1.0")
                self.statuses[submission_id] = status
            return status

    def bots(self, author: str) -> Sequence[BotSummary]:
        mine = [s for s in self.statuses.values() if s.author == author]
        return [
            BotSummary(name, tuple(VersionSummary(s.id, s.label, s.state, s.reason, s.created_at) for s in mine if s.bot == name))
            for name in sorted({s.bot for s in mine})
        ]

    def retire(self, author: str, bot_name: str) -> BotSummary:
        self.calls.append(f"retire {author} {bot_name}")
        owner = self.owners.get(bot_name)
        if owner is None:
            raise SubmissionRefused(f"there is no bot named {bot_name!r} in the league", 404)
        if owner != author:
            raise SubmissionRefused(f"the bot {bot_name!r} belongs to another author", 403)
        with self.lock:
            active = [s for s in self.statuses.values() if s.bot == bot_name and s.state is SubmissionState.ACTIVE]
            if not active:
                raise SubmissionRefused(f"the bot {bot_name!r} has no active version to retire", 409)
            for status in active:
                self.statuses[status.id] = replace(status, state=SubmissionState.RETIRED, reason="retired by its author")
        return next(bot for bot in self.bots(author) if bot.name == bot_name)
