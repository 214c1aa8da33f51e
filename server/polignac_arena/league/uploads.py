"""Receiving an upload: its place among those in flight, its body to disk as it comes, and the refusals that cost little.

An upload takes a place (:class:`UploadSlots`: ``uploads_at_once`` per author, ``uploads_in_flight``
in all) before its body is read, and gives it back whatever becomes of it; past either cap it is
refused (429, with a short ``Retry-After``) unread.  Its body goes to a private file of the
archive store as it arrives (:class:`LeagueUpload`), refused (413) once past ``archive_mb``:
the server never holds an upload in memory.

Once received, the cheap refusals come first, before anything is unpacked or built
(:func:`check_received`): the archive checked member by member without writing anything
(names, kinds, counts, sizes: :func:`polignac_arena.archive.scan_archive`), then its
``bot.toml`` read from it (the bot it names, the games it declares).
"""

from __future__ import annotations

import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polignac_arena.archive import ArchiveCaps, ArchiveError, ArchiveScan, ArchiveTooBig, scan_archive
from polignac_arena.archive_store import IncomingArchive
from polignac_arena.games import DEFAULT_GAMES, Game, GameRefused, GamesError, check_seating, parse_games
from polignac_arena.league.authoring import SubmissionRefused

__all__ = ["BUSY_RETRY_S", "LeagueUpload", "UploadSlots", "check_received"]

BUSY_RETRY_S: Final = 5.0
"""The ``Retry-After`` of an upload refused because others are being received: they take seconds."""


class UploadSlots:
    """The uploads being received, per author and in all; called from the authors' API's threads."""

    def __init__(self, per_author: int, in_all: int) -> None:
        self.per_author = per_author
        self.in_all = in_all
        self._by_author: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def taken(self) -> int:
        with self._lock:
            return sum(self._by_author.values())

    def take(self, author: str) -> None:
        """Take a place for an upload of ``author``; :class:`SubmissionRefused` (429) when none is free."""
        with self._lock:
            mine = self._by_author.get(author, 0)
            if mine >= self.per_author:
                raise SubmissionRefused(
                    f"you are already uploading {mine} version(s), the most at once: wait for it to be received", 429, BUSY_RETRY_S
                )
            if sum(self._by_author.values()) >= self.in_all:
                raise SubmissionRefused(
                    f"the league is receiving {self.in_all} upload(s), the most at once: try again in a few seconds", 429, BUSY_RETRY_S
                )
            self._by_author[author] = mine + 1

    def give_back(self, author: str) -> None:
        with self._lock:
            left = self._by_author.get(author, 0) - 1
            if left > 0:
                self._by_author[author] = left
            else:
                self._by_author.pop(author, None)


class LeagueUpload:
    """One upload being received into the archive store: what :class:`~polignac_arena.league.authoring.Upload` asks."""

    def __init__(self, incoming: IncomingArchive, slots: UploadSlots, author: str) -> None:
        self.incoming = incoming
        self._slots = slots
        self._author = author
        self._closed = False

    def write(self, data: bytes) -> None:
        try:
            self.incoming.write(data)
        except ArchiveTooBig:
            raise SubmissionRefused(f"the upload is more than the {self.incoming.cap} bytes allowed", 413) from None

    def close(self) -> None:
        """Drop what was received (unless it was kept) and give back the upload's place."""
        if self._closed:
            return
        self._closed = True
        try:
            self.incoming.discard()
        finally:
            self._slots.give_back(self._author)


@dataclass(frozen=True, slots=True)
class _Declared:
    """A ``bot.toml``'s bot, as :func:`~polignac_arena.games.check_seating` reads it."""

    label: str
    games: tuple[str, ...]
    builtin: bool = False


def check_received(path: Path, bot_name: str, caps: ArchiveCaps, game: Game) -> ArchiveScan:
    """Refuse, without unpacking it, an upload that cannot be accepted: a bad archive, or a ``bot.toml`` for another bot or game.

    Raises :class:`SubmissionRefused` (400, or 413 for an archive over its caps).
    """
    try:
        scan = scan_archive(path, caps)
    except ArchiveTooBig as exc:
        raise SubmissionRefused(f"the archive is refused: {exc}", 413) from None
    except ArchiveError as exc:
        raise SubmissionRefused(f"the archive is refused: {exc}", 400) from None
    if scan.manifest is None:
        raise SubmissionRefused("the archive is refused: it holds no bot.toml at its top (or one over 64 KiB)", 400)
    try:
        table = tomllib.loads(scan.manifest.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise SubmissionRefused(f"bot.toml is not valid TOML: {exc}", 400) from None
    declared = table.get("name")
    if declared != bot_name:
        raise SubmissionRefused(
            f"bot.toml: this is bot {declared!r}, uploaded as a version of {bot_name!r}; upload it under its own name", 400
        )
    try:
        games = parse_games(table["games"]) if "games" in table else DEFAULT_GAMES
        check_seating([_Declared(bot_name, games)], game)
    except (GamesError, GameRefused) as exc:
        raise SubmissionRefused(f"bot.toml: {exc}", 400) from None
    return scan
