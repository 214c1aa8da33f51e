"""The league's value types: an entrant of the ladder and one league match's seating (no I/O, nothing of the league)."""

from __future__ import annotations

from dataclasses import dataclass

from polignac_arena.submission import Submission

__all__ = ["Entrant", "LeagueFixture"]


@dataclass(frozen=True)
class Entrant:
    """A bot version the ladder may seat: an uploaded version (run in a sandboxed seat) or a remote bot online in the lobby."""

    label: str
    """``name@version``: its key in the ratings and the store."""
    bot: str
    """The bot's name: two versions of one bot are one bot, and never share a table."""
    submission: Submission | None = None
    """An uploaded version's validated folder; None for a remote bot, which plays from its author's machine."""

    def __post_init__(self) -> None:
        if not self.label or not self.bot:
            raise ValueError(f"an entrant needs a label and a bot name, got {self.label!r} and {self.bot!r}")

    @property
    def remote(self) -> bool:
        """It plays from its author's machine, handed a seat token through the lobby."""
        return self.submission is None


@dataclass(frozen=True)
class LeagueFixture:
    """One league match: its place in the league's tournament (results are rated in that order), its deal, its seats."""

    index: int
    seed: int
    seats: tuple[Entrant, ...]
