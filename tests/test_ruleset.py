"""Acceptance tests for rulesets: the presets of docs/rules.md section 10, validation, round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest

import polignac
from polignac import PRESETS, Card, FaultPolicy, Rank, RemovedSevens, Ruleset, RulesetError, preset

R = Rank
FRENCH = (R.KING, R.QUEEN, R.JACK, R.ACE, R.TEN, R.NINE, R.EIGHT, R.SEVEN)  # K Q J A 10 9 8 7
ACE_HIGH = (R.ACE, R.KING, R.QUEEN, R.JACK, R.TEN, R.NINE, R.EIGHT, R.SEVEN)  # A K Q J 10 9 8 7


def penalties(rules: Ruleset) -> dict[str, int]:
    return {str(card): points for card, points in rules.penalty_cards}


# -- the presets ----------------------------------------------------------------------------

# name: (trick order, penalty cards, first trick points, last trick points, capot, general)
PRESET_TABLE: dict[str, tuple[tuple[Rank, ...], dict[str, int], int, int, bool, bool]] = {
    "classic": (FRENCH, {"JS": 2, "JH": 1, "JD": 1, "JC": 1}, 0, 0, True, False),
    "quatre-valets": (FRENCH, {"JS": 1, "JH": 1, "JD": 1, "JC": 1}, 0, 0, True, False),
    "ace-high": (ACE_HIGH, {"QS": 2, "QH": 1, "QD": 1, "QC": 1}, 0, 0, True, False),
    "slobberhannes": (ACE_HIGH, {"QC": 1}, 1, 1, True, False),
    "no-contracts": (FRENCH, {"JS": 2, "JH": 1, "JD": 1, "JC": 1}, 0, 0, False, False),
}
POINTS_PER_HAND = {"classic": 5, "quatre-valets": 4, "ace-high": 5, "slobberhannes": 3, "no-contracts": 5}


def test_the_five_presets_exist() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_matches_rules_section_10(name: str) -> None:
    order, cards, first, last, capot, general = PRESET_TABLE[name]
    rules = preset(name)
    assert rules is PRESETS[name] or rules == PRESETS[name]
    assert rules.name == name
    assert tuple(rules.trick_order) == order
    assert penalties(rules) == cards
    assert rules.first_trick_points == first
    assert rules.last_trick_points == last
    assert rules.capot is capot
    assert rules.general is general
    assert rules.contracts is (capot or general)
    assert rules.points_per_hand == POINTS_PER_HAND[name]


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_defaults_of_rules_md(name: str) -> None:
    rules = preset(name)
    assert rules.players == 4
    assert rules.limit == 20
    assert rules.tiebreak_hands == 3
    assert rules.removed_sevens is RemovedSevens.BLACK
    assert rules.contract_points == 5
    assert rules.fault_policy is FaultPolicy.PENALTY
    assert rules.revoke_points == 5
    assert rules.timeout_points == 0
    assert rules.max_faults == 3


def test_default_ruleset_is_classic() -> None:
    assert Ruleset() == preset("classic")


def test_rank_text_for_people() -> None:
    assert preset("classic").rank_text() == "K Q J A 10 9 8 7"
    assert preset("ace-high").rank_text() == "A K Q J 10 9 8 7"


def test_strength_table_follows_trick_order() -> None:
    for name in PRESET_TABLE:
        rules = preset(name)
        for suit in "SHDC":
            ranks_low_to_high = [rules.strength[Card.parse(r.letter + suit).index] for r in reversed(rules.trick_order)]
            assert ranks_low_to_high == sorted(ranks_low_to_high)
            assert len(set(ranks_low_to_high)) == 8


def test_preset_with_changes_and_unknown_preset() -> None:
    five = preset("classic", players=5)
    assert five.players == 5
    assert five.trick_order == FRENCH
    with pytest.raises(RulesetError) as info:
        preset("bridge")
    assert "'bridge'" in str(info.value)
    assert "classic" in str(info.value)


# -- from_dict ------------------------------------------------------------------------------


def test_from_dict_builds_from_a_variant() -> None:
    rules = Ruleset.from_dict({"variant": "no-contracts", "players": 5, "limit": 10})
    assert (rules.players, rules.limit, rules.capot, rules.general) == (5, 10, False, False)
    assert rules.trick_order == FRENCH


def test_from_dict_defaults_to_classic() -> None:
    assert Ruleset.from_dict({}) == preset("classic")
    assert Ruleset.from_dict({"general": True}).general is True


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("french", FRENCH),
        ("ace-high", ACE_HIGH),
        ("KQJAT987", FRENCH),
        ("A K Q J 10 9 8 7", ACE_HIGH),
        ("akqjt987", ACE_HIGH),
        (["A", "K", "Q", "J", "10", "9", "8", "7"], ACE_HIGH),
    ],
)
def test_from_dict_trick_order_forms(value: Any, expected: tuple[Rank, ...]) -> None:
    assert Ruleset.from_dict({"trick_order": value}).trick_order == expected


def test_from_dict_penalty_cards_accept_card_text() -> None:
    rules = Ruleset.from_dict({"penalty_cards": {"J♠": 3, "10h": 1}})
    assert penalties(rules) == {"JS": 3, "TH": 1}
    assert Ruleset.from_dict({"penalty_cards": {}}).points_per_hand == 0


def test_from_dict_enum_settings() -> None:
    rules = Ruleset.from_dict({"removed_sevens": "red", "fault_policy": "forfeit"})
    assert rules.removed_sevens is RemovedSevens.RED
    assert rules.fault_policy is FaultPolicy.FORFEIT


# (table, key the message must name, fragment naming the allowed values)
BAD_TABLES: list[tuple[dict[str, Any], str, str]] = [
    # unknown keys
    ({"bogus": 1}, "'bogus'", "players"),
    ({"Players": 4}, "'Players'", "players"),
    ({"trump": "S"}, "'trump'", "limit"),
    # wrong types: string for int, bool for int, float for int, int for bool, string for bool
    ({"players": "4"}, "'players'", "3..6"),
    ({"limit": "20"}, "'limit'", "1..10000"),
    ({"limit": True}, "'limit'", "1..10000"),
    ({"players": False}, "'players'", "3..6"),
    ({"limit": 20.0}, "'limit'", "1..10000"),
    ({"tiebreak_hands": None}, "'tiebreak_hands'", "0..20"),
    ({"capot": 1}, "'capot'", "true or false"),
    ({"general": 0}, "'general'", "true or false"),
    ({"general": "yes"}, "'general'", "true or false"),
    ({"capot": None}, "'capot'", "true or false"),
    # out of range
    ({"players": 2}, "'players'", "3..6"),
    ({"players": 7}, "'players'", "3..6"),
    ({"players": 0}, "'players'", "3..6"),
    ({"limit": -1}, "'limit'", "1..10000"),
    ({"limit": 0}, "'limit'", "1..10000"),
    ({"tiebreak_hands": -1}, "'tiebreak_hands'", "0..20"),
    ({"revoke_points": -5}, "'revoke_points'", "0..100"),
    ({"timeout_points": -1}, "'timeout_points'", "0..100"),
    ({"contract_points": -1}, "'contract_points'", "0..100"),
    ({"first_trick_points": -1}, "'first_trick_points'", "0..100"),
    ({"last_trick_points": 101}, "'last_trick_points'", "0..100"),
    ({"max_faults": 0}, "'max_faults'", "1..1000"),
    # trick order
    ({"trick_order": "KQJAT98"}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": "KQJAT986"}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": "KKJAT987"}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": "KQJAT9877"}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": "classic"}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": 5}, "'trick_order'", "'french', 'ace-high'"),
    ({"trick_order": ["K"] * 8}, "'trick_order'", "'french', 'ace-high'"),
    # penalty cards
    ({"penalty_cards": "JS"}, "'penalty_cards'", "JS = 2"),
    ({"penalty_cards": ["JS"]}, "'penalty_cards'", "JS = 2"),
    ({"penalty_cards": {"XX": 1}}, "'penalty_cards'", "'XX'"),
    ({"penalty_cards": {"JS": 0}}, "'penalty_cards'", "1..100"),
    ({"penalty_cards": {"JS": -2}}, "'penalty_cards'", "1..100"),
    ({"penalty_cards": {"JS": "2"}}, "'penalty_cards'", "1..100"),
    ({"penalty_cards": {"JS": True}}, "'penalty_cards'", "1..100"),
    ({"penalty_cards": {"JS": 1, "J♠": 2}}, "'penalty_cards'", "twice"),
    # enums and the variant
    ({"variant": "bridge"}, "'variant'", "classic, quatre-valets, ace-high, slobberhannes, no-contracts"),
    ({"variant": 3}, "'variant'", "classic"),
    ({"removed_sevens": "blue"}, "'removed_sevens'", "'black', 'red'"),
    ({"removed_sevens": True}, "'removed_sevens'", "'black', 'red'"),
    ({"fault_policy": "ignore"}, "'fault_policy'", "'penalty', 'forfeit'"),
    ({"name": ""}, "'name'", "1..60"),
    ({"name": 5}, "'name'", "1..60"),
    ({"name": "x" * 61}, "'name'", "1..60"),
]


@pytest.mark.parametrize(("table", "key", "allowed"), BAD_TABLES, ids=[repr(t) for t, _, _ in BAD_TABLES])
def test_from_dict_bad_setting_names_key_and_allowed_values(table: dict[str, Any], key: str, allowed: str) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict(table)
    message = str(info.value)
    assert key in message
    assert allowed in message


def test_from_dict_refuses_non_tables() -> None:
    for bad in (None, [("players", 4)], "classic", 5):
        with pytest.raises(RulesetError):
            Ruleset.from_dict(bad)  # type: ignore[arg-type]


def test_ruleset_error_is_a_value_error() -> None:
    assert issubclass(RulesetError, ValueError)
    assert issubclass(RulesetError, polignac.PolignacError)


@pytest.mark.parametrize(
    "changes",
    [{"players": 2}, {"players": 7}, {"limit": 0}, {"capot": 1}, {"trick_order": (R.KING,) * 8}, {"tiebreak_hands": -1}],
)
def test_direct_construction_validates_too(changes: dict[str, Any]) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset(**changes)
    assert repr(next(iter(changes))) in str(info.value)


# -- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_to_dict_from_dict_round_trip_for_every_preset(name: str) -> None:
    rules = preset(name)
    table = rules.to_dict()
    assert json.loads(json.dumps(table)) == table  # JSON-ready
    assert "variant" not in table
    again = Ruleset.from_dict(table)
    assert again == rules
    assert again.strength == rules.strength
    assert again.card_points == rules.card_points
    assert again.penalty_mask == rules.penalty_mask
    # Through JSON too, and starting from another variant: every setting is in the table.
    assert Ruleset.from_dict(json.loads(json.dumps(table))) == rules
    assert Ruleset.from_dict({**table, "variant": "slobberhannes"}) == rules


@pytest.mark.parametrize(
    "changes",
    [
        {"players": 3, "removed_sevens": "red"},
        {"players": 6, "limit": 10, "general": True, "capot": False},
        {"tiebreak_hands": 0, "fault_policy": "forfeit", "revoke_points": 7, "timeout_points": 1, "max_faults": 9},
        {"trick_order": "A78T9JQK", "penalty_cards": {"7H": 4}},
    ],
)
def test_round_trip_with_changed_settings(changes: dict[str, Any]) -> None:
    rules = Ruleset.from_dict(changes)
    assert Ruleset.from_dict(rules.to_dict()) == rules


def test_to_dict_text_forms() -> None:
    table = preset("classic").to_dict()
    assert table["trick_order"] in ("KQJAT987", "french")
    assert table["penalty_cards"] == {"JS": 2, "JH": 1, "JD": 1, "JC": 1}
    assert table["removed_sevens"] == "black"
    assert table["fault_policy"] == "penalty"
    assert table["capot"] is True and table["general"] is False


# -- with_changes ---------------------------------------------------------------------------


def test_with_changes_changes_only_what_is_asked() -> None:
    classic = preset("classic")
    general = classic.with_changes(general=True)
    assert general.general is True
    assert general.capot is True
    assert general.with_changes(general=False) == classic
    assert classic.general is False  # the original is untouched (frozen)
    assert general.trick_order == classic.trick_order
    assert general.penalty_cards == classic.penalty_cards


def test_with_changes_keeps_the_variant_settings() -> None:
    slob = preset("slobberhannes").with_changes(limit=10, players=5)
    assert (slob.limit, slob.players) == (10, 5)
    assert slob.trick_order == ACE_HIGH
    assert penalties(slob) == {"QC": 1}
    assert (slob.first_trick_points, slob.last_trick_points) == (1, 1)
    assert slob.name == "slobberhannes"


def test_with_changes_converts_like_from_dict() -> None:
    rules = preset("classic").with_changes(trick_order="ace-high", removed_sevens="red", penalty_cards={"QS": 2})
    assert rules.trick_order == ACE_HIGH
    assert rules.removed_sevens is RemovedSevens.RED
    assert penalties(rules) == {"QS": 2}


@pytest.mark.parametrize(
    ("changes", "key"),
    [({"players": 2}, "'players'"), ({"bogus": 1}, "'bogus'"), ({"capot": "no"}, "'capot'"), ({"limit": -3}, "'limit'")],
)
def test_with_changes_validates(changes: dict[str, Any], key: str) -> None:
    with pytest.raises(RulesetError) as info:
        preset("classic").with_changes(**changes)
    assert key in str(info.value)


def test_rulesets_are_frozen_and_hashable() -> None:
    rules = preset("classic")
    with pytest.raises(AttributeError):
        rules.players = 5  # type: ignore[misc]
    assert hash(rules) == hash(Ruleset())
    assert len({preset(n) for n in PRESET_TABLE}) == len(PRESET_TABLE)
