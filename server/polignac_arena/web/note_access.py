"""Who may read the bots' own notes (debug text, stderr) that a replay can show: the request decides, seat by seat.

A replay's notes are its bots' authors' private business.  The app holds a
:data:`NotesPolicy` (``app.state.notes_policy``): for each request, which seats of a match
(given by their bots' labels) it may read the notes of.  ``polignac web`` shows none unless
started with ``--notes``; a league shows each author their own bots' (its policy is in
:mod:`polignac_arena.league.note_access`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Annotated

from fastapi import Depends, Request

__all__ = ["NOTES_CACHE_HEADERS", "NotesDep", "NotesPolicy", "SeatFilter", "every_seat", "no_seat", "notes_filter"]

SeatFilter = Callable[[Sequence[str]], Collection[int]]
"""Given a match's seats (their bots' labels, in seat order), the seats whose notes may be shown."""
NotesPolicy = Callable[[Request], SeatFilter]
"""The seat filter of one request."""

NOTES_CACHE_HEADERS = {"Cache-Control": "private, no-store", "Vary": "Cookie, Authorization"}
"""A response that may hold notes is one viewer's: no cache keeps it for another."""


def no_seat(labels: Sequence[str]) -> Collection[int]:
    """No seat's notes."""
    return ()


def every_seat(labels: Sequence[str]) -> Collection[int]:
    """Every seat's notes (a local viewer of their own store)."""
    return range(len(labels))


def _policy_none(request: Request) -> SeatFilter:
    return no_seat


def notes_filter(request: Request) -> SeatFilter:
    """The request's seat filter, from the app's policy (none set: no seat)."""
    policy: NotesPolicy = getattr(request.app.state, "notes_policy", _policy_none)
    return policy(request)


NotesDep = Annotated[SeatFilter, Depends(notes_filter)]
