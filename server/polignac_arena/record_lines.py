"""The lines of a match record as types: one frozen dataclass per kind, read and written here alone.

A record (format :data:`FORMAT`) is JSON lines, in this order:

- :class:`HeaderLine` (``header``): format, match id, engine version, ruleset, seed, time
  control, seats (seat, name, version), start time; for a rerun (a match taken up at hand k
  of another, :mod:`polignac.rerun`), the other's id, k, hand k's dealer and the totals before it.
- :class:`ActionLine` (``action``): one engine action (a decision's text, a penalty or a
  forfeit, as in ``Match.apply_action``) with its seat, hand, and for decisions the request
  id, the bot's reply, the status (``ok`` or a fault) and the milliseconds it took; and, when
  the bot gave any, its debug text and the stderr it wrote (docs/records.md: both private to
  the bot's author in a league).
- :class:`FaultLine` (``fault``): a fault that replaced nothing (stale, unsolicited...).
- :class:`AwayLine` and :class:`BackLine` (``away``, ``back``): a seat allowed to reattach
  lost its stream, and came back on a new one; a replay passes over them.
- :class:`ResumedLine` (``resumed``): the league server stopped during the match and, started
  again, resumed it from its journal (when, and at which hand); a replay passes over it.
- :class:`HandEndedLine` (``hand_ended``): the engine's HandEnded event, to check a replay against.
- :class:`ResultLine` (``result``): status, places, totals, fault counts by seat, and the
  reason of an abort.

A line of any other kind (a newer arena's) is kept as an :class:`UnknownLine` and passed over.

The referee builds lines from values it has already checked, so building one checks nothing
(it is one object per decision); :func:`parse_line` checks a line read back (pydantic, strict
types) and names the line and the key at fault.  ``to_dict`` gives the JSON form, key for key
and in the order records have always been written: a field that is ``None`` is left out,
except a result's ``places`` and ``reason``, always written.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Final, Literal, TypeGuard, cast, get_args

from pydantic import (
    BaseModel,
    Field,
    JsonValue,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
)

from polignac import Match, Ruleset
from polignac.events import HandEnded
from polignac.faults import Fault
from polignac.jsontypes import JsonObject
from polignac.rerun import HandStart
from polignac.values import Contract, Forfeit, HandResult, Penalty, ScoreException
from polignac_arena.settings import TimeControl
from polignac_arena.statuses import ActionStatus, MatchStatus, UnknownStatusError

__all__ = [
    "FORMAT",
    "ActionLine",
    "AwayLine",
    "BackLine",
    "FaultLine",
    "HandEndedLine",
    "HandParts",
    "HeaderLine",
    "JsonLine",
    "RecordLine",
    "RerunOf",
    "ResultLine",
    "ResumedLine",
    "SeatEntry",
    "UnknownLine",
    "header_problem",
    "is_json_line",
    "parse_line",
    "parse_lines",
]

FORMAT: Final = "polignac-match/1"

JsonLine = JsonObject
"""A line in its JSON form, as written to a record file and held by the store."""


class _PenaltyEntry(BaseModel):
    penalty: StrictInt
    points: StrictInt
    reason: StrictStr


class _ForfeitEntry(BaseModel):
    forfeit: StrictInt
    reason: StrictStr


def _action_entry(value: object) -> str | Penalty | Forfeit:
    """An action line's ``action``: a decision's text (the engine judges it on replay), a penalty or a forfeit."""
    if isinstance(value, str | Penalty | Forfeit):
        return value
    if isinstance(value, Mapping):
        try:
            if "penalty" in value:
                penalty = _PenaltyEntry.model_validate(value)
                return Penalty(penalty.penalty, penalty.points, penalty.reason)
            if "forfeit" in value:
                forfeit = _ForfeitEntry.model_validate(value)
                return Forfeit(forfeit.forfeit, forfeit.reason)
        except ValidationError:
            pass
    raise ValueError(
        "an action is a decision's text, {'penalty': seat, 'points': number, 'reason': text} or {'forfeit': seat, 'reason': text}"
    )


ActionEntry = Annotated[str | Penalty | Forfeit, PlainValidator(_action_entry)]
BySeat = tuple[StrictInt, ...]
"""Numbers by seat (scores, totals, places...)."""


def _present(kind: str, **fields: JsonValue) -> JsonLine:
    """A line's JSON form: its kind, then the fields that are not None, in the order given."""
    return {"type": kind, **{key: value for key, value in fields.items() if value is not None}}


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatEntry:
    """A seat of the header: its number and the bot's name and version (from its Hello)."""

    seat: StrictInt | None = None
    name: StrictStr | None = None
    version: StrictStr | None = None

    def to_dict(self) -> JsonLine:
        return {key: value for key, value in (("seat", self.seat), ("name", self.name), ("version", self.version)) if value is not None}


@dataclass(frozen=True, slots=True)
class RerunOf:
    """A match that reruns another from one of its hands: what its header says of that."""

    match_id: str
    """The other match's id (or its record file's name)."""
    start: HandStart

    def on(self, header: HeaderLine) -> HeaderLine:
        """``header`` saying that its match is this rerun."""
        start = self.start
        return dataclasses.replace(
            header, rerun_of=self.match_id, first_hand=start.hand, first_dealer=start.dealer, start_totals=start.totals
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderLine:
    """The first line: what was played, by whom, from which seed.

    The referee writes every field; a replay needs only ``rules`` and ``seed``, so the others
    may be missing from a record made by other means.
    """

    type: Literal["header"] = "header"
    format: StrictStr | None = None
    match_id: StrictStr | None = None
    engine_version: StrictStr | None = None
    rules: dict[str, JsonValue]
    """The ruleset as ``Ruleset.to_dict`` wrote it (read with ``Ruleset.from_record``: older records hold fewer settings)."""
    seed: StrictInt
    time_control: TimeControl | None = None
    seats: tuple[SeatEntry, ...] = ()
    started_at: StrictStr | None = None
    rerun_of: StrictStr | None = None
    """The match this one reruns (its id, or its record file's name), from ``first_hand``."""
    first_hand: StrictInt | None = None
    first_dealer: StrictInt | None = None
    start_totals: BySeat | None = None

    @property
    def start(self) -> HandStart | None:
        """Where the match began, when not at hand 1 with every total 0 (a rerun)."""
        if self.first_hand is None and self.first_dealer is None and self.start_totals is None:
            return None
        players = Ruleset.from_record(self.rules).players
        return HandStart(
            self.first_hand or 1, players - 1 if self.first_dealer is None else self.first_dealer, self.start_totals or (0,) * players
        )

    def new_match(self) -> Match:
        """The match this header starts, before any action; raises ``PolignacError`` (or ``KeyError``/``TypeError``) for a bad ruleset."""
        rules, start = Ruleset.from_record(self.rules), self.start
        return Match(rules, self.seed) if start is None else start.match(rules, self.seed)

    @property
    def names(self) -> list[str]:
        """Bot names by seat (``seat<n>`` where the header names none)."""
        return [f"seat{i}" if s.name is None else s.name for i, s in enumerate(self.seats)]

    def to_dict(self) -> JsonLine:
        clock = self.time_control
        return _present(
            "header",
            format=self.format,
            match_id=self.match_id,
            engine_version=self.engine_version,
            rules=copy.deepcopy(self.rules),
            seed=self.seed,
            time_control=None if clock is None else {"move_ms": clock.move_ms, "bank_ms": clock.bank_ms, "startup_ms": clock.startup_ms},
            seats=[seat.to_dict() for seat in self.seats],
            started_at=self.started_at,
            rerun_of=self.rerun_of,
            first_hand=self.first_hand,
            first_dealer=self.first_dealer,
            start_totals=None if self.start_totals is None else list(self.start_totals),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionLine:
    """One engine action: a seat's decision (its own, or the fallback played for a fault), a penalty or a forfeit.

    A replay needs only ``action``; a penalty line has no request, reply, ``ms`` or detail.
    """

    type: Literal["action"] = "action"
    seat: StrictInt | None = None
    hand: StrictInt | None = None
    action: ActionEntry
    request_id: StrictInt | None = None
    reply: StrictStr | None = None
    """What the bot answered (its first 20 characters), where it answered."""
    status: ActionStatus | None = None
    ms: StrictFloat | None = None
    """How long the decision took, on the referee's clock."""
    detail: StrictStr | None = None
    """What was wrong, for an action taken for a fault."""
    debug: StrictStr | None = None
    """The bot's own debug text for this decision (protocol 1.3), cleaned and capped; private to its author."""
    stderr: StrictStr | None = None
    """What the bot wrote on stderr from its request for this decision to its next, cleaned and capped; private to its author."""

    @property
    def recorded_action(self) -> str | dict[str, int | str]:
        """The action as the record writes it (see ``Match.apply_action``)."""
        return self.action if isinstance(self.action, str) else self.action.to_record()

    def to_dict(self) -> JsonLine:
        # Written out, not through _present: a record holds one of these per decision.
        out: JsonLine = {"type": "action"}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.hand is not None:
            out["hand"] = self.hand
        action = self.recorded_action
        out["action"] = action if isinstance(action, str) else dict(action)
        if self.request_id is not None:
            out["request_id"] = self.request_id
        if self.reply is not None:
            out["reply"] = self.reply
        if self.status is not None:
            out["status"] = self.status.value
        if self.ms is not None:
            out["ms"] = self.ms
        if self.detail is not None:
            out["detail"] = self.detail
        if self.debug is not None:
            out["debug"] = self.debug
        if self.stderr is not None:
            out["stderr"] = self.stderr
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultLine:
    """A fault that replaced no decision (a stale answer, a message out of turn...)."""

    type: Literal["fault"] = "fault"
    seat: StrictInt
    hand: StrictInt
    fault: Fault
    request_id: StrictInt
    """The request the fault concerns; 0 for none."""
    reply: StrictStr | None = None
    detail: StrictStr | None = None

    def to_dict(self) -> JsonLine:
        return _present(
            "fault",
            seat=self.seat,
            hand=self.hand,
            fault=self.fault.value,
            request_id=self.request_id,
            reply=self.reply,
            detail=self.detail,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AwayLine:
    """A seat allowed to reattach lost its stream; ``detail`` says how, and how long it may be away."""

    type: Literal["away"] = "away"
    seat: StrictInt
    hand: StrictInt
    detail: StrictStr

    def to_dict(self) -> JsonLine:
        return _present("away", seat=self.seat, hand=self.hand, detail=self.detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class BackLine:
    """An away seat came back on a new stream."""

    type: Literal["back"] = "back"
    seat: StrictInt
    hand: StrictInt

    def to_dict(self) -> JsonLine:
        return _present("back", seat=self.seat, hand=self.hand)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumedLine:
    """The league server stopped during the match and resumed it from its journal when it started again."""

    type: Literal["resumed"] = "resumed"
    hand: StrictInt
    at: StrictStr
    """When the match was resumed (ISO 8601, UTC)."""
    detail: StrictStr

    def to_dict(self) -> JsonLine:
        return _present("resumed", hand=self.hand, at=self.at, detail=self.detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class HandParts:
    """What a hand's scores were made of (the parts of :class:`polignac.HandResult` a HandEnded event carries)."""

    seats: BySeat
    tricks: BySeat
    card_points: BySeat
    trick_points: BySeat
    first_last_points: BySeat
    fault_points: BySeat
    exception: ScoreException

    @classmethod
    def of(cls, result: HandResult) -> HandParts:
        """The parts of ``result``."""
        return cls(**{name: getattr(result, name) for name in _HAND_PARTS})

    def to_dict(self) -> JsonLine:
        by_seat = {name: list(getattr(self, name)) for name in _HAND_PARTS if name != "exception"}
        return {**by_seat, "exception": self.exception.value}


_HAND_PARTS: Final = tuple(part.name for part in dataclasses.fields(HandParts))
"""The fields of :class:`HandParts`, each of the same name in :class:`polignac.HandResult`: all by seat but ``exception``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEndedLine:
    """A hand was scored: the engine's HandEnded event, which a replay must reproduce."""

    type: Literal["hand_ended"] = "hand_ended"
    hand_number: StrictInt
    contract: Contract
    declarer: StrictInt | None = None
    contract_made: StrictBool | None = None
    scores: BySeat
    totals: BySeat
    tiebreak: StrictBool
    result: HandParts | None = None
    """Absent from records of engine 1.0."""

    @classmethod
    def of(cls, event: HandEnded) -> HandEndedLine:
        """The line that records ``event``."""
        return cls(**{**event._asdict(), "result": None if event.result is None else HandParts.of(event.result)})

    def to_dict(self) -> JsonLine:
        return _present(
            "hand_ended",
            hand_number=self.hand_number,
            contract=self.contract.value,
            declarer=self.declarer,
            contract_made=self.contract_made,
            scores=list(self.scores),
            totals=list(self.totals),
            tiebreak=self.tiebreak,
            result=None if self.result is None else self.result.to_dict(),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultLine:
    """The last line: how the match ended."""

    type: Literal["result"] = "result"
    status: MatchStatus
    places: BySeat | None = None
    """None unless the match finished."""
    totals: BySeat
    faults: tuple[dict[StrictStr, StrictInt], ...] = ()
    """By seat, fault counts by kind."""
    reason: StrictStr | None = None
    """Why the match was aborted."""

    def to_dict(self) -> JsonLine:
        return {
            "type": "result",
            "status": self.status.value,
            "places": None if self.places is None else list(self.places),
            "totals": list(self.totals),
            "faults": [dict(counts) for counts in self.faults],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class UnknownLine:
    """A line of a kind this arena does not know (a newer arena's): kept whole, passed over."""

    type: str
    fields: Mapping[str, object]
    """The whole line, its ``type`` included."""

    def to_dict(self) -> JsonLine:
        return cast("JsonLine", dict(self.fields))  # a line read from JSON: its values are JSON values


KnownLine = HeaderLine | ActionLine | FaultLine | AwayLine | BackLine | ResumedLine | HandEndedLine | ResultLine
RecordLine = KnownLine | UnknownLine


@functools.cache
def _known_lines() -> TypeAdapter[KnownLine]:
    """The reader of the known kinds, built on first use: the referee, which only writes lines, never builds it."""
    return TypeAdapter(Annotated[KnownLine, Field(discriminator="type")])


_KINDS: Final = frozenset(kind.__dataclass_fields__["type"].default for kind in get_args(KnownLine))


def is_json_line(raw: object) -> TypeGuard[Mapping[str, object]]:
    """Whether ``raw`` has the shape of a line's JSON form: an object with a ``type`` text."""
    return isinstance(raw, Mapping) and isinstance(raw.get("type"), str)


def header_problem(first: Mapping[str, object] | None) -> str | None:
    """What keeps ``first`` (a line's JSON form) from starting a record this arena reads, or None."""
    if first is None or first.get("type") != "header":
        return "the first line must be the match header"
    if first.get("format") != FORMAT:
        return f"unknown record format {first.get('format')!r}; this arena reads {FORMAT!r}"
    return None


def parse_line(raw: object, number: int) -> RecordLine:
    """Line ``number`` (from 1) of a record, read from its JSON form.

    Raises :class:`ValueError` naming the line and the key at fault (an unknown status:
    :class:`UnknownStatusError`, as ``MatchStatus.parse`` and ``ActionStatus.parse`` do).
    """
    if not is_json_line(raw):
        raise ValueError(f"line {number}: each line must be an object with a 'type'")
    kind = str(raw["type"])
    if kind not in _KINDS:
        return UnknownLine(kind, dict(raw))
    try:
        # Statuses are read first, so that an unknown one is named as the statuses name it.
        if kind == "result":
            raw = {**raw, "status": MatchStatus.parse(raw.get("status"))}
        elif kind == "action" and "status" in raw:
            raw = {**raw, "status": ActionStatus.parse(raw["status"])}
    except UnknownStatusError as exc:
        raise UnknownStatusError(f"line {number}: {exc}") from None
    try:
        return _known_lines().validate_python(raw)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"][1:])
        what = "the header does not describe a match" if kind == "header" else f"a bad {kind} line"
        message = error["msg"].removeprefix("Value error, ")
        raise ValueError(f"line {number}: {what}: {where}: {message}") from None


def parse_lines(lines: Iterable[RecordLine | Mapping[str, object]]) -> list[RecordLine]:
    """A record's lines as types: lines already typed are kept, JSON forms are read with :func:`parse_line`."""
    typed: list[RecordLine] = []
    for number, line in enumerate(lines, start=1):
        typed.append(line if isinstance(line, RecordLine) else parse_line(line, number))
    return typed
