"""Match records read back: re-run through the engine (verify) and rendered for people (show)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from polignac import Match, PolignacError, Ruleset
from polignac.events import HandEnded
from polignac_arena.render import direction_text, render_events
from polignac_arena.statuses import ActionStatus, MatchStatus, UnknownStatusError

__all__ = ["Replay", "replay_lines"]

S = TypeVar("S", MatchStatus, ActionStatus)


@dataclass
class Replay:
    """A record re-run through the engine."""

    match: Match
    header: dict[str, Any]
    result: dict[str, Any] | None
    divergence: str | None
    """The first place where the record and the engine disagree, or ``None``."""

    @property
    def status(self) -> MatchStatus | None:
        """How the record says the match ended; None when it has no result line (it was cut short)."""
        return None if self.result is None else MatchStatus.parse(self.result.get("status"))

    @property
    def names(self) -> list[str]:
        """Bot names by seat, from the header."""
        seats = self.header.get("seats") or []
        return [str(s.get("name", f"seat{i}")) if isinstance(s, dict) else f"seat{i}" for i, s in enumerate(seats)]

    def render(self) -> list[str]:
        """The match trick by trick, then the outcome, as text."""
        lines = [
            f"Match {self.header.get('match_id', '?')}: {self.match.rules.name}, {self.match.players} players,"
            f" seed {self.match.seed}, engine {self.header.get('engine_version', '?')}",
            "Seats: " + ", ".join(f"{i} {name}" for i, name in enumerate(self.names)),
            "",
            *render_events(self.match.events, self.match.rules),
        ]
        places = self.match.places
        if places is not None:
            ranked = sorted(range(len(places)), key=lambda s: (places[s], s))
            shared = {p for p in places if places.count(p) > 1}
            standings = ", ".join(f"{places[s]}{'=' if places[s] in shared else ''} seat {s} ({self.match.totals[s]})" for s in ranked)
            lines.append(f"Standings ({direction_text(self.match.rules.direction)}): {standings}")
        if self.result is not None:
            lines.append(f"Record status: {self.status}")
            faults = self.result.get("faults") or []
            for seat, counts in enumerate(faults):
                if counts:
                    lines.append(f"  faults of seat {seat}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return lines


def replay_lines(lines: Sequence[dict[str, Any]]) -> Replay:
    """Re-run a record's actions, checking each hand's scores and the result against the engine.

    A line that is not a record's (a header that describes no match, a status this arena does
    not know) raises :class:`ValueError` naming it; where the record and the engine disagree
    is the returned replay's ``divergence``.
    """
    header = lines[0]
    try:
        rules = Ruleset.from_record(header["rules"])
        match = Match(rules, header["seed"])
    except (KeyError, TypeError, PolignacError) as exc:
        raise ValueError(f"line 1: the header does not describe a match: {exc}") from None
    ended_seen = 0
    result: dict[str, Any] | None = None

    def diverged(message: str) -> Replay:
        return Replay(match, header, result, message)

    for number, line in enumerate(lines[1:], start=2):
        kind = line.get("type")
        if kind == "action":
            if "status" in line:
                _status(ActionStatus, line["status"], number)
            action = line.get("action")
            actor = match.to_act
            if isinstance(action, str) and "seat" in line and line["seat"] != actor:
                return diverged(f"line {number}: the record has seat {line['seat']} play {action!r}, but seat {actor} is to act")
            try:
                match.apply_action(action)  # type: ignore[arg-type]  # checked by apply_action
            except (PolignacError, KeyError, TypeError) as exc:
                return diverged(f"line {number}: action {action!r} does not replay: {exc}")
        elif kind == "hand_ended":
            ended = [e for e in match.events if isinstance(e, HandEnded)]
            if len(ended) <= ended_seen:
                return diverged(f"line {number}: the record ends hand {line.get('hand_number')}, the engine has not")
            engine = ended[ended_seen].to_dict()
            ended_seen += 1
            for key in ("hand_number", "scores", "totals", "contract", "tiebreak"):
                if line.get(key) != engine[key]:
                    return diverged(f"line {number}: hand {engine['hand_number']} {key}: record {line.get(key)!r}, engine {engine[key]!r}")
        elif kind == "result":
            status = _status(MatchStatus, line.get("status"), number)
            result = line
            if status is MatchStatus.FINISHED:
                if not match.is_over:
                    return diverged(
                        f"line {number}: the record says the match finished, but the engine still waits for seat {match.to_act}"
                    )
                if line.get("places") != list(match.places or ()):
                    return diverged(f"line {number}: places: record {line.get('places')!r}, engine {list(match.places or ())!r}")
            if line.get("totals") != list(match.totals):
                return diverged(f"line {number}: totals: record {line.get('totals')!r}, engine {list(match.totals)!r}")
    if result is None:
        return diverged("the record has no result line: it was cut short")
    return Replay(match, header, result, None)


def _status(kind: type[S], text: object, number: int) -> S:
    """A record line's status as its enum; an unknown one raises, naming the line."""
    try:
        return kind.parse(text)
    except UnknownStatusError as exc:
        raise UnknownStatusError(f"line {number}: {exc}") from None
