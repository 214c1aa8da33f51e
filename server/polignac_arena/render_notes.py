"""A bot's notes on its decisions (debug text, stderr) as text lines, for the step they belong to."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["StepNote", "note_lines"]


@dataclass(frozen=True, slots=True)
class StepNote:
    """What a seat said about one of its decisions: where in the match, and its debug text and stderr."""

    hand: int
    step: str
    """``auction`` or ``trick N``."""
    seat: int
    action: str
    """What was played for the decision (the bot's own choice, or the fallback for a fault)."""
    debug: str | None
    stderr: str | None
    event: int
    """The index of the decision's event (``Declared`` or ``CardPlayed``) among the match's events."""


def note_lines(notes: Iterable[StepNote]) -> list[tuple[str, int]]:
    """The lines showing ``notes`` (one hand's), each with its indent: a heading, then each step and its texts."""
    lines: list[tuple[str, int]] = []
    for note in notes:
        if not lines:
            lines.append(("bot notes (debug text and stderr, by step):", 2))
        lines.append((f"{note.step}, seat {note.seat} played {note.action}:", 4))
        for label, text in (("debug", note.debug), ("stderr", note.stderr)):
            if text:
                first, *rest = text.splitlines() or [""]
                lines.append((f"{label}: {first}", 6))
                lines.extend((line, 6 + len(label) + 2) for line in rest)
    return lines
