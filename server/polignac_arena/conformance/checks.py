"""The situations of the conformance report, what each asks of a bot, and how a match record shows it held.

Every line of the report names a situation, whether it held (``None``: it does not apply to this
bot), what was seen, and the section of the docs that says what a bot must do there.  The
decisions a bot made are read back from the match records, each one replayed through the
engine: where it was asked in the auction, void in the suit led, at the last trick of a hand,
or in a tie-break hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from polignac import Phase, RulesetError, preset
from polignac.jsontypes import JsonObject
from polignac.rules import FRENCH_32_GAMES
from polignac_arena.conformance.matches import Played
from polignac_arena.plaintext import plain
from polignac_arena.record_lines import ActionLine, FaultLine, HandEndedLine, HeaderLine, RecordLine
from polignac_arena.statuses import ActionStatus, MatchStatus

__all__ = ["Asked", "Line", "asked", "game_line", "scenario_line", "situation_line", "table_sizes"]

_STDERR_LINES: Final = 4
"""Lines of the bot's stderr quoted when a situation did not hold."""


@dataclass(frozen=True)
class Line:
    """One line of the report."""

    situation: str
    held: bool | None
    """True: held; False: did not; None: does not apply to this bot."""
    detail: str
    doc: str
    """Where the docs say what a bot must do here."""

    def to_json(self) -> JsonObject:
        return {"situation": self.situation, "held": self.held, "detail": self.detail, "doc": self.doc}


@dataclass
class Asked:
    """The bot's decisions in some matches, counted by situation, and its faults."""

    decisions: int = 0
    auction: int = 0
    void: int = 0
    last_trick: int = 0
    tiebreak: int = 0
    hands: int = 0
    slowest_ms: float = 0.0
    faults: list[str] = field(default_factory=list)
    faulted: dict[str, int] = field(default_factory=dict)
    """Decisions the referee judged a fault (a timeout, an illegal or malformed answer), by situation."""

    def __iadd__(self, other: Asked) -> Asked:
        for name in ("decisions", "auction", "void", "last_trick", "tiebreak", "hands"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for situation, count in other.faulted.items():
            self.faulted[situation] = self.faulted.get(situation, 0) + count
        self.slowest_ms = max(self.slowest_ms, other.slowest_ms)
        self.faults += other.faults
        return self


def asked(lines: Sequence[RecordLine], seat: int = 0) -> Asked:
    """What ``seat`` was asked in the match of the record ``lines``: its decisions replayed through the engine."""
    header = lines[0]
    if not isinstance(header, HeaderLine):
        raise ValueError("a record starts with its header line")
    match = header.new_match()
    out = Asked()
    for line in lines[1:]:
        if isinstance(line, FaultLine) and line.seat == seat:
            out.faults.append(f"{line.fault.value}: {plain(line.detail or '')[:200]}")
        elif isinstance(line, HandEndedLine):
            out.hands += 1
        if not isinstance(line, ActionLine):
            continue
        if line.seat == seat and isinstance(line.action, str):
            out.decisions += 1
            out.slowest_ms = max(out.slowest_ms, line.ms or 0.0)
            situations = ["tiebreak"] if match.is_tiebreak else []
            if match.phase is Phase.AUCTION:
                situations.append("auction")
            else:
                hand, trick = match.hand(seat), match.current_trick
                if trick and all(card.suit is not trick[0][1].suit for card in hand):
                    situations.append("void")
                if len(hand) == 1:
                    situations.append("last_trick")
            for situation in situations:
                setattr(out, situation, getattr(out, situation) + 1)
                if line.status not in (None, ActionStatus.OK):
                    out.faulted[situation] = out.faulted.get(situation, 0) + 1
        match.apply_action(line.action)
    return out


def table_sizes(game: str) -> list[int]:
    """The numbers of players ``game`` may be played by."""
    sizes = []
    for players in range(3, 7):
        try:
            preset(game, players=players)
        except RulesetError:
            continue
        sizes.append(players)
    return sizes


def rules_doc(game: str) -> str:
    section = "10" if game in FRENCH_32_GAMES else "11"
    return f"docs/rules.md section {section}; docs/protocol.md, The game, from the ruleset"


def _trouble(played: Played, seen: Asked) -> str:
    """Why a match did not hold: its status, the bot's faults, the end of its stderr."""
    parts = []
    if played.result.status is not MatchStatus.FINISHED:
        parts.append(f"the match ended {played.result.status}")
    if played.result.faults[0]:
        parts.append("faults: " + ", ".join(f"{kind} {count}" for kind, count in sorted(played.result.faults[0].items())))
    if seen.faults:
        parts.append(f"first: {seen.faults[0]}")
    if not seen.decisions:
        parts.append("the bot made no decision")
    tail = [plain(line) for line in played.stderr.strip().splitlines()[-_STDERR_LINES:]]
    if tail:
        parts.append("bot stderr: " + " | ".join(tail))
    return "; ".join(parts)


def clean(played: Played, seen: Asked) -> bool:
    """Whether the bot played the match to its end, deciding at least once, without a fault."""
    return played.result.status is MatchStatus.FINISHED and not played.result.faults[0] and seen.decisions > 0


def game_line(game: str, matches: Iterable[tuple[int, Played, Asked]]) -> Line:
    """The line of one game: a match at every table size, each clean."""
    sizes, failures, total = [], [], Asked()
    for players, played, seen in matches:
        sizes.append(str(players))
        total += seen
        if not clean(played, seen):
            failures.append(f"{players} players: {_trouble(played, seen)}")
    situation = f"{game}, {', '.join(sizes)} players"
    if failures:
        return Line(situation, False, "; ".join(failures), rules_doc(game))
    detail = f"{total.hands} hands, {total.decisions} decisions, slowest {total.slowest_ms:.0f} ms"
    return Line(situation, True, detail, rules_doc(game))


def situation_line(situation: str, count: int, faulted: int, what: str, doc: str, absent: str | None = None) -> Line:
    """A situation seen across the game matches: held when it came up and the bot answered each time without a fault.

    ``absent`` says why it does not apply to this bot (None: it applies).
    """
    if absent is not None:
        return Line(situation, None, absent, doc)
    if count == 0:
        return Line(situation, False, f"never came up in the matches ({what})", doc)
    if faulted:
        return Line(situation, False, f"{count} decisions ({what}), {faulted} of them faults", doc)
    return Line(situation, True, f"{count} decisions ({what}), each legal and in time", doc)


def scenario_line(situation: str, played: Played, seen: Asked, held: bool, detail: str, doc: str) -> Line:
    """The line of a dedicated scenario: held when its match was clean and ``held`` (what it is about) is true."""
    if clean(played, seen) and held:
        return Line(situation, True, detail, doc)
    trouble = _trouble(played, seen)
    return Line(situation, False, f"{detail}; {trouble}" if trouble else detail, doc)
