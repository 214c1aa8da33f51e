"""The engine's action log holds value types (decisions, Penalty, Forfeit); its record form is unchanged."""

from __future__ import annotations

import dataclasses
import json

import pytest

from polignac import Card, Contract, Forfeit, Match, Penalty, PolignacError, RecordError, preset
from polignac.values import action_from_record, action_to_record


def played_with_referee_calls() -> Match:
    """A 4-player classic match with a penalty in hand 1 and a forfeit in hand 2, played to its end."""
    match = Match(preset("classic"), 11)
    while match.hand_number == 1 and not match.is_over:
        if len(match.tricks) == 2 and not any(isinstance(a, Penalty) for a in match.action_log):
            match.add_penalty(2, 5, "illegal")
        match.apply(match.legal_decisions()[0])
    match.forfeit(3, "max_faults")
    while not match.is_over:
        match.apply(match.legal_decisions()[-1])
    return match


def test_the_log_holds_decisions_penalties_and_forfeits_as_values() -> None:
    match = played_with_referee_calls()
    log = match.action_log
    assert all(isinstance(a, Card | Contract | Penalty | Forfeit) for a in log)
    assert [a for a in log if isinstance(a, Penalty | Forfeit)] == [Penalty(2, 5, "illegal"), Forfeit(3, "max_faults")]
    penalty = next(a for a in log if isinstance(a, Penalty))
    with pytest.raises(dataclasses.FrozenInstanceError):
        penalty.seat = 1  # type: ignore[misc]  # frozen, on purpose
    assert len({Penalty(2, 5, "illegal"), Penalty(2, 5, "illegal")}) == 1


def test_the_record_form_is_what_records_have_always_held() -> None:
    match = played_with_referee_calls()
    actions = match.actions
    assert {"penalty": 2, "points": 5, "reason": "illegal"} in actions and {"forfeit": 3, "reason": "max_faults"} in actions
    assert json.dumps([a for a in actions if isinstance(a, dict)]) == (
        '[{"penalty": 2, "points": 5, "reason": "illegal"}, {"forfeit": 3, "reason": "max_faults"}]'
    )
    assert actions == [action_to_record(a) for a in match.action_log]
    assert [action_from_record(a) for a in actions] == list(match.action_log)
    assert all(isinstance(a, str) for a in actions if not isinstance(a, dict))


@pytest.mark.parametrize("form", ["record", "values"])
def test_a_match_replays_from_its_log_as_values_or_as_record_form(form: str) -> None:
    match = played_with_referee_calls()
    again = Match(match.rules, match.seed)
    for action in match.actions if form == "record" else match.action_log:
        again.apply_action(action)
    assert again.events == match.events and again.action_log == match.action_log
    assert Match.from_record(json.loads(json.dumps(match.record()))).action_log == match.action_log


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (None, RecordError),
        (7, RecordError),
        ({"points": 5}, RecordError),
        ({"penalty": 1, "reason": "x"}, KeyError),
        ({"forfeit": 1}, KeyError),
        ("ZZ", ValueError),
    ],
)
def test_an_entry_of_the_wrong_shape_is_refused(entry: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        action_from_record(entry)


@pytest.mark.parametrize(
    "entry",
    [
        {"penalty": 9, "points": 5, "reason": "x"},
        {"penalty": 0, "points": -1, "reason": "x"},
        {"forfeit": 0, "reason": ""},
        Penalty(0, 5, ""),
    ],
)
def test_the_engine_still_judges_the_values_of_an_entry(entry: object) -> None:
    match = Match(preset("classic"), 1)
    with pytest.raises(PolignacError):
        match.apply_action(entry)  # type: ignore[arg-type]  # bad values on purpose
    assert match.action_log == ()
