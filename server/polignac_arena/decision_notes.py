"""What a bot says about its own decisions: its debug text and the stderr it wrote, made safe and capped.

Both are bot-written and land in records that a league keeps and shows, so each is cleaned
like every bot-written text (:func:`polignac_arena.plaintext.plain`) and capped per decision
and per match and seat (docs/records.md, "Debug text and stderr"):

- a decision's ``debug`` (protocol 1.3): :data:`~polignac.limits.DEBUG_MAX` characters, then
  cut and marked; past :data:`DEBUG_PER_MATCH` characters in one match a seat's debug text is
  dropped, the first dropped one replaced by a note saying so;
- a seat's stderr: the complete lines that reached the arena from the moment it was asked for
  a decision until it is next asked (or the match ends), :data:`STDERR_PER_DECISION` characters a decision and
  :data:`STDERR_PER_MATCH` a match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Final

from polignac.limits import CUT_MARK, DEBUG_MAX, cut_debug
from polignac_arena.plaintext import plain
from polignac_arena.record_lines import ActionLine, RecordLine

__all__ = [
    "DEBUG_PER_MATCH",
    "STDERR_PER_DECISION",
    "STDERR_PER_MATCH",
    "AnswerNotes",
    "DebugBudget",
    "StderrPerDecision",
    "clean_debug",
]

DEBUG_PER_MATCH: Final = 100_000
"""The most characters of debug text one seat's decisions keep in one match."""
STDERR_PER_DECISION: Final = 2_000
"""The most characters of stderr kept with one decision."""
STDERR_PER_MATCH: Final = 32_000
"""The most characters of stderr one seat's decisions keep in one match."""
_READ_AHEAD: Final = 4
"""How much more raw text than a cap is cleaned: control sequences removed may shorten it that much."""


def clean_debug(raw: str) -> str | None:
    """A decision's debug text as stored: control characters removed, cut at DEBUG_MAX; None for none."""
    if not raw:
        return None
    text = plain(raw[: DEBUG_MAX * _READ_AHEAD]).strip("\n")
    if len(raw) > DEBUG_MAX * _READ_AHEAD and len(text) <= DEBUG_MAX:
        text += CUT_MARK
    return cut_debug(text) or None


class DebugBudget:
    """One seat's debug text in one match, up to :data:`DEBUG_PER_MATCH` characters."""

    def __init__(self) -> None:
        self._left = DEBUG_PER_MATCH
        self._noted = False

    def keep(self, text: str | None) -> str | None:
        """``text`` while the budget lasts; once past it, a note the first time, then None."""
        if text is None:
            return None
        if len(text) <= self._left:
            self._left -= len(text)
            return text
        self._left = 0
        if self._noted:
            return None
        self._noted = True
        return f"[arena] this seat's debug text passed {DEBUG_PER_MATCH} characters in this match: the rest is not kept"


class StderrPerDecision:
    """Cuts one seat's stderr, as it arrives, into the pieces written between its answers."""

    def __init__(self, read: Callable[[], bytes | bytearray]) -> None:
        self._read = read
        """The seat's stderr kept so far (it only grows)."""
        self._taken = 0
        self._left = STDERR_PER_MATCH
        self._noted = False

    def take(self) -> str | None:
        """The complete lines written since the last call, cleaned and capped; None for none.

        A line not yet ended waits for the next call, unless it is already longer than a
        decision may keep.
        """
        buffer = self._read()
        end = buffer.rfind(b"\n", self._taken) + 1
        if end <= self._taken:
            end = len(buffer) if len(buffer) - self._taken > STDERR_PER_DECISION * _READ_AHEAD else self._taken
        if end <= self._taken:
            return None
        raw = bytes(buffer[self._taken : end])
        self._taken = end
        if self._left <= 0:
            return self._past_budget()
        limit = min(STDERR_PER_DECISION, self._left)
        text = plain(raw[: limit * _READ_AHEAD].decode("utf-8", "replace")).rstrip("\n")
        if not text:
            return None
        if len(text) > limit or len(raw) > limit * _READ_AHEAD:
            text = text[:limit] + f" [cut: {len(raw)} bytes written]"
        self._left -= len(text)
        return text

    def _past_budget(self) -> str | None:
        if self._noted:
            return None
        self._noted = True
        return f"[arena] this seat's stderr passed {STDERR_PER_MATCH} characters in this match: the rest is not kept with its decisions"


class AnswerNotes:
    """The debug text and stderr of one match's answers, put on their action lines as the referee records them.

    The debug text comes with the answer.  A seat's stderr comes down another pipe, often a
    moment after its answer: it is taken when the seat is next asked (or the match ends) and
    put on the seat's last answer, so a line written while deciding is not pushed onto the
    next decision.
    """

    def __init__(self, players: int) -> None:
        self.stderr_of: Callable[[int], str | None] | None = None
        """What a seat wrote on stderr since this was last asked (set by whoever starts the seats)."""
        self._budgets = [DebugBudget() for _ in range(players)]
        self._expected: tuple[int, int, str] | None = None
        self._last_answer: list[int | None] = [None] * players
        """By seat, the index of the line of its last answer, while its stderr is still to come."""

    def expect(self, seat: int, request_id: int, debug: str) -> None:
        """``seat``'s answer to ``request_id`` (or its timeout) is being judged: its line comes next."""
        self._expected = (seat, request_id, debug)

    def on_line(self, line: RecordLine, index: int) -> RecordLine:
        """``line``, the record's line number ``index`` (from 0), with its debug text if it is the expected answer's."""
        expected = self._expected
        if expected is None or not isinstance(line, ActionLine) or (line.seat, line.request_id) != expected[:2]:
            return line
        self._expected = None
        seat = expected[0]
        self._last_answer[seat] = index
        debug = self._budgets[seat].keep(clean_debug(expected[2]))
        return line if debug is None else dataclasses.replace(line, debug=debug)

    def catch_up(self, lines: list[RecordLine], seats: Iterable[int]) -> None:
        """Put on the last answer of each of ``seats`` the stderr it wrote since."""
        if self.stderr_of is None:
            return
        for seat in seats:
            index = self._last_answer[seat]
            if index is None:
                continue
            self._last_answer[seat] = None
            text = self.stderr_of(seat)
            line = lines[index]
            if text is not None and isinstance(line, ActionLine):
                lines[index] = dataclasses.replace(line, stderr=text)
