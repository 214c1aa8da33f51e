"""A match's record: the compact JSON from which :meth:`polignac.engine.Match.from_record` rebuilds it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from polignac.cards import Card, cards_in
from polignac.errors import PolignacError, RecordError
from polignac.jsontypes import JsonObject
from polignac.rules import Ruleset
from polignac.values import Action, ActionRecord, Contract, Forfeit, Penalty, action_from_record

if TYPE_CHECKING:
    from polignac.engine import Match

__all__ = ["MatchRecord", "apply_entry", "make_record", "replay_record"]

RECORD_KEYS = ("rules", "seed", "actions")


class MatchRecord(TypedDict):
    """What :meth:`Match.record` gives; the optional keys are left out at their defaults."""

    engine_version: str
    rules: JsonObject
    seed: int
    start_totals: NotRequired[list[int]]
    first_dealer: NotRequired[int]
    first_hand: NotRequired[int]
    deals: NotRequired[dict[str, list[list[str]]]]
    actions: list[ActionRecord]


class _Setup(TypedDict, total=False):
    start_totals: list[int]
    first_dealer: int
    first_hand: int
    deals: dict[str, list[list[str]]]


def make_record(
    engine_version: str,
    rules: Ruleset,
    seed: int,
    *,
    start_totals: Sequence[int],
    first_dealer: int,
    first_hand: int,
    deals: Mapping[int, Sequence[int]],
    actions: Sequence[ActionRecord],
) -> MatchRecord:
    """The record; the default start totals, first dealer, first hand and deals are left out, and the actions come last."""
    setup: _Setup = {}
    if any(start_totals):
        setup["start_totals"] = list(start_totals)
    if first_dealer != rules.players - 1:
        setup["first_dealer"] = first_dealer
    if first_hand != 1:
        setup["first_hand"] = first_hand
    if deals:
        setup["deals"] = {str(k): [[str(c) for c in cards_in(m)] for m in v] for k, v in deals.items()}
    return {"engine_version": engine_version, "rules": rules.to_dict(), "seed": seed, **setup, "actions": list(actions)}


def replay_record(make: type[Match], record: Mapping[str, object]) -> Match:
    """Rebuild a match with ``make`` and apply every action; raises :class:`RecordError` if it does not replay.

    The values go to ``make`` unchecked: the constructor checks them and says what is wrong.
    """
    if not isinstance(record, Mapping):
        raise RecordError(f"a match record must be an object, got {type(record).__name__}")
    missing = [k for k in RECORD_KEYS if k not in record]
    if missing:
        raise RecordError(f"match record lacks {', '.join(map(repr, missing))}")
    try:
        deals = record.get("deals")
        if deals is not None:
            if not isinstance(deals, Mapping):
                raise RecordError("'deals' must map hand numbers to lists of hands")
            deals = {int(k): v for k, v in deals.items()}
        match = make(
            Ruleset.from_record(cast("Mapping[str, object]", record["rules"])),
            cast(int, record["seed"]),
            start_totals=cast("Sequence[int] | None", record.get("start_totals")),
            deals=cast("Mapping[int, Sequence[Sequence[Card | str]]] | None", deals),
            first_dealer=cast("int | None", record.get("first_dealer")),
            first_hand=cast(int, record.get("first_hand", 1)),
        )
    except (PolignacError, TypeError, ValueError) as exc:
        raise RecordError(f"match record: {exc}") from None
    actions = record["actions"]
    if not isinstance(actions, list):
        raise RecordError(f"match record 'actions' must be a list, got {type(actions).__name__}")
    for number, action in enumerate(actions):
        try:
            match.apply_action(action)
        except (PolignacError, KeyError, TypeError) as exc:
            raise RecordError(f"match record action {number} ({action!r}) does not replay: {exc}") from None
    return match


def apply_entry(match: Match, action: Action | str | Mapping[str, object]) -> None:
    """Apply an entry of :attr:`Match.action_log`, or of a record's ``actions``, to ``match``."""
    if not isinstance(action, Card | Contract | Penalty | Forfeit):
        action = action_from_record(action)
    if isinstance(action, Penalty):
        match.add_penalty(action.seat, action.points, action.reason)
    elif isinstance(action, Forfeit):
        match.forfeit(action.seat, action.reason)
    else:
        match.apply(action)
