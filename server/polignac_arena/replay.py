"""Match records read back: re-run through the engine (verify) and rendered for people (show)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from polignac import Match, Phase, PolignacError
from polignac.events import HandEnded
from polignac_arena.record_lines import ActionLine, HandEndedLine, HeaderLine, RecordLine, ResultLine, parse_lines
from polignac_arena.render import direction_text, render_events
from polignac_arena.render_notes import StepNote
from polignac_arena.statuses import MatchStatus

__all__ = ["CUT_SHORT", "Replay", "replay_lines"]

CUT_SHORT = "the record has no result line: it was cut short"
"""The divergence of a record without its result line (a running match's journal has none yet)."""


@dataclass
class Replay:
    """A record re-run through the engine."""

    match: Match
    header: HeaderLine
    result: ResultLine | None
    divergence: str | None
    """The first place where the record and the engine disagree, or ``None``."""
    notes: list[StepNote] = field(default_factory=list)
    """The bots' debug text and stderr, by step (private to each bot's author in a league)."""

    @property
    def status(self) -> MatchStatus | None:
        """How the record says the match ended; None when it has no result line (it was cut short)."""
        return None if self.result is None else self.result.status

    @property
    def names(self) -> list[str]:
        """Bot names by seat, from the header."""
        return self.header.names

    def render(self, notes: bool = True) -> list[str]:
        """The match trick by trick, then the outcome, as text; with ``notes``, the bots' debug text and stderr after each hand."""
        lines = [
            f"Match {self.header.match_id or '?'}: {self.match.rules.name}, {self.match.players} players,"
            f" seed {self.match.seed}, engine {self.header.engine_version or '?'}",
            "Seats: " + ", ".join(f"{i} {name}" for i, name in enumerate(self.names)),
            *self._rerun_lines(),
            "",
            *render_events(self.match.events, self.match.rules, self.notes if notes else ()),
        ]
        places = self.match.places
        if places is not None:
            ranked = sorted(range(len(places)), key=lambda s: (places[s], s))
            shared = {p for p in places if places.count(p) > 1}
            standings = ", ".join(f"{places[s]}{'=' if places[s] in shared else ''} seat {s} ({self.match.totals[s]})" for s in ranked)
            lines.append(f"Standings ({direction_text(self.match.rules.direction)}): {standings}")
        if self.result is not None:
            lines.append(f"Record status: {self.status}")
            for seat, counts in enumerate(self.result.faults):
                if counts:
                    lines.append(f"  faults of seat {seat}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return lines

    def _rerun_lines(self) -> list[str]:
        start = self.header.start
        if self.header.rerun_of is None or start is None:
            return []
        return [f"A rerun of {self.header.rerun_of} from hand {start.hand} (dealer seat {start.dealer}, totals {list(start.totals)})"]


def replay_lines(lines: Sequence[RecordLine | Mapping[str, object]]) -> Replay:
    """Re-run a record's actions, checking each hand's scores and the result against the engine.

    ``lines`` are typed (:mod:`polignac_arena.record_lines`) or in their JSON form.  A line that
    is not a record's (a header that describes no match, a status this arena does not know, a
    value of the wrong type) raises :class:`ValueError` naming it; where the record and the
    engine disagree is the returned replay's ``divergence``.
    """
    typed = parse_lines(lines)
    header = typed[0] if typed else None
    if not isinstance(header, HeaderLine):
        raise ValueError("line 1: the header does not describe a match: the first line must be the header")
    try:
        match = header.new_match()
    except (KeyError, TypeError, PolignacError) as exc:
        raise ValueError(f"line 1: the header does not describe a match: {exc}") from None
    ended = 0
    result: ResultLine | None = None
    notes: list[StepNote] = []

    def diverged(message: str) -> Replay:
        return Replay(match, header, result, message, notes)

    for number, line in enumerate(typed[1:], start=2):
        if isinstance(line, ActionLine):
            action, actor = line.action, match.to_act
            if isinstance(action, str) and line.seat is not None and line.seat != actor:
                return diverged(f"line {number}: the record has seat {line.seat} play {action!r}, but seat {actor} is to act")
            if (line.debug or line.stderr) and line.seat is not None:
                step = "auction" if match.phase is Phase.AUCTION else f"trick {len(match.tricks) + 1}"
                shown = str(line.recorded_action)
                notes.append(StepNote(match.hand_number, step, line.seat, shown, line.debug, line.stderr, match.event_count))
            try:
                match.apply_action(action)
            except (PolignacError, KeyError, TypeError) as exc:
                return diverged(f"line {number}: action {line.recorded_action!r} does not replay: {exc}")
        elif isinstance(line, HandEndedLine):
            events = [e for e in match.events if isinstance(e, HandEnded)]
            if len(events) <= ended:
                return diverged(f"line {number}: the record ends hand {line.hand_number}, the engine has not")
            event = events[ended]
            ended += 1
            for key, recorded, engine in (
                ("hand_number", line.hand_number, event.hand_number),
                ("scores", list(line.scores), list(event.scores)),
                ("totals", list(line.totals), list(event.totals)),
                ("contract", line.contract.value, event.contract.value),
                ("tiebreak", line.tiebreak, event.tiebreak),
            ):
                if recorded != engine:
                    return diverged(f"line {number}: hand {event.hand_number} {key}: record {recorded!r}, engine {engine!r}")
        elif isinstance(line, ResultLine):
            result = line
            if line.status is MatchStatus.FINISHED:
                if not match.is_over:
                    return diverged(
                        f"line {number}: the record says the match finished, but the engine still waits for seat {match.to_act}"
                    )
                recorded_places = None if line.places is None else list(line.places)
                if recorded_places != list(match.places or ()):
                    return diverged(f"line {number}: places: record {recorded_places!r}, engine {list(match.places or ())!r}")
            if list(line.totals) != list(match.totals):
                return diverged(f"line {number}: totals: record {list(line.totals)!r}, engine {list(match.totals)!r}")
    if result is None:
        return diverged(CUT_SHORT)
    return Replay(match, header, result, None, notes)
