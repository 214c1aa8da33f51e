"""The Bot base class: what a bot author overrides."""

from __future__ import annotations

from dataclasses import dataclass

from polignac.cards import Card
from polignac.events import Event
from polignac.limits import DEBUG_MAX, cut_debug
from polignac.rules import Ruleset
from polignac.statuses import MatchStatus
from polignac.values import Contract, Decision, Phase
from polignac.view import PlayerView

__all__ = ["Bot", "FaultInfo", "MatchInfo"]


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a bot learns when it takes its seat."""

    match_id: str
    seat: int
    rules: Ruleset
    seat_names: tuple[str, ...]
    move_ms: int
    bank_ms: int
    startup_ms: int


@dataclass(frozen=True, slots=True)
class FaultInfo:
    """A fault the referee charged this bot with, and what it did about it."""

    request_id: int
    fault: str
    """``timeout``, ``illegal``, ``malformed``, ``stale``, ``disconnected`` or ``crashed``."""
    detail: str
    fallback: str
    points: int
    faults: int
    forfeited: bool


class Bot:
    """Subclass and override :meth:`declare` and :meth:`play`; the rest is optional.

    Both receive the full :class:`~polignac.view.PlayerView` (``view.legal_cards`` and
    ``view.legal_contracts`` list the allowed decisions), so a bot need keep no state.  They are plain synchronous methods:
    the SDK's asyncio core calls them when the referee asks.
    """

    name: str = "bot"
    """Shown in standings (1 to 64 printable characters)."""
    version: str = "0"
    """Your bot's version text."""

    def declare(self, view: PlayerView) -> Contract:
        """The auction: return one of ``view.legal_contracts`` (``Contract.PASS``, ``CAPOT`` or ``GENERAL``)."""
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        """Return one of ``view.legal_cards``."""
        raise NotImplementedError("override Bot.play(view) to return one of view.legal_cards")

    def decide(self, view: PlayerView) -> Decision:
        """Route to :meth:`declare` or :meth:`play` by phase (the SDK calls this)."""
        if view.phase is Phase.AUCTION:
            return self.declare(view)
        return self.play(view)

    def debug(self, text: object) -> None:
        """Attach ``text`` to the decision being made: call it inside :meth:`declare` or :meth:`play`.

        Several calls in one decision are joined with newlines (text given between decisions,
        in :meth:`on_event` say, goes with the next decision).  The text travels with the
        decision (protocol 1.3, ``Decision.debug``), is stored in the match record and shown
        beside the step in ``polignac match show`` and the replay viewer, to the bot's author
        only in a league.  At most :data:`~polignac.limits.DEBUG_MAX` characters are kept.
        """
        notes: list[str] = self.__dict__.setdefault("_debug_notes", [])
        if sum(len(note) + 1 for note in notes) <= DEBUG_MAX:  # past the cap, more text would only be cut
            notes.append(str(text))

    def take_debug(self) -> str:
        """The debug text of the decision just made (see :meth:`debug`), and a fresh start for the next; the SDK calls this."""
        notes: list[str] | None = self.__dict__.pop("_debug_notes", None)
        return cut_debug("\n".join(notes)) if notes else ""

    def accepts(self, rules: Ruleset) -> str | None:
        """A league offers a match of ``rules``: None takes it, a reason declines it.

        A declined match is called off for the whole table, and the league leaves the bot out
        of its matches for a while (docs/protocol.md, "Remote bots"): decline only a game the
        bot cannot play.
        """
        return None

    def on_match_start(self, info: MatchInfo) -> None:
        """Called once, when the referee has seated the bot."""

    def on_event(self, event: Event) -> None:
        """Called for every event this seat may see, in order (deals show only this seat's cards)."""

    def on_fault(self, fault: FaultInfo) -> None:
        """Called when the referee charges this bot with a fault."""

    def on_match_end(self, places: tuple[int, ...], totals: tuple[int, ...], status: MatchStatus) -> None:
        """Called when the match is over: ``FINISHED``, or ``ABORTED`` / ``ERROR`` (then ``places`` is empty)."""
