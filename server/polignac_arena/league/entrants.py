"""The league's value types: an entrant of the ladder, one league match's seating, and the calls by which the ladder
speaks to remote entrants (no I/O, nothing of the league)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from polignac_arena.submission import Submission

__all__ = ["AssignRemote", "Entrant", "LeagueFixture", "PauseRemote", "WithdrawRemote"]

AssignRemote = Callable[[str, int, str, str], Awaitable[bool]]
"""``assign(label, seat, match_id, seat_token)``: offer the online remote bot ``label`` its seat; True when it takes it."""
WithdrawRemote = Callable[[str, str, str], None]
"""``withdraw(label, match_id, reason)``: tell the remote bot ``label`` that the match it was offered is called off."""
PauseRemote = Callable[[str, float, str], None]
"""``pause(label, seconds, reason)``: tell the remote bot ``label`` that the ladder leaves it out for ``seconds``, and why."""


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
