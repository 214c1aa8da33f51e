"""Acceptance tests for rulesets: the presets of docs/rules.md sections 10 and 11, validation, round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest

import polignac
from polignac import (
    PRESETS,
    Card,
    Direction,
    Faces,
    FaultPolicy,
    HandScore,
    Rank,
    RemovedSevens,
    Ruleset,
    RulesetError,
    Tiebreak,
    Trumps,
    cards_each,
    preset,
)
from polignac.rules import FRENCH_32_GAMES

R = Rank
FRENCH = (R.KING, R.QUEEN, R.JACK, R.ACE, R.TEN, R.NINE, R.EIGHT, R.SEVEN)  # K Q J A 10 9 8 7
ACE_HIGH = (R.ACE, R.KING, R.QUEEN, R.JACK, R.TEN, R.NINE, R.EIGHT, R.SEVEN)  # A K Q J 10 9 8 7
ACE_TEN = (R.ACE, R.TEN, R.KING, R.QUEEN, R.JACK, R.NINE, R.EIGHT, R.SEVEN)  # A 10 K Q J 9 8 7
FULL = (R.ACE, R.KING, R.QUEEN, R.JACK, R.TEN, R.NINE, R.EIGHT, R.SEVEN, R.SIX, R.FIVE, R.FOUR, R.THREE, R.TWO)


def penalties(rules: Ruleset) -> dict[str, int]:
    return {str(card): points for card, points in rules.penalty_cards}


# -- the presets ----------------------------------------------------------------------------

CARD_POINTS = {r + s: p for r, p in {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}.items() for s in "SHDC"}
# name: (trick order, penalty cards, first trick points, last trick points, capot, general)
PRESET_TABLE: dict[str, tuple[tuple[Rank, ...], dict[str, int], int, int, bool, bool]] = {
    "classic": (FRENCH, {"JS": 2, "JH": 1, "JD": 1, "JC": 1}, 0, 0, True, False),
    "quatre-valets": (FRENCH, {"JS": 1, "JH": 1, "JD": 1, "JC": 1}, 0, 0, True, False),
    "ace-high": (ACE_HIGH, {"QS": 2, "QH": 1, "QD": 1, "QC": 1}, 0, 0, True, False),
    "slobberhannes": (ACE_HIGH, {"QC": 1}, 1, 1, True, False),
    "no-contracts": (FRENCH, {"JS": 2, "JH": 1, "JD": 1, "JC": 1}, 0, 0, False, False),
    # docs/rules.md 11
    "eichel-obern": (ACE_HIGH, {"QC": 1}, 1, 1, True, False),
    "gras-obern": (ACE_HIGH, {"QS": 1}, 1, 1, True, False),
    "bassadewitz": (ACE_TEN, CARD_POINTS, 0, 0, False, False),
    "knaves": (FULL, {"JH": 4, "JD": 3, "JC": 2, "JS": 1}, 0, 0, False, False),
}
POINTS_PER_HAND = {
    "classic": 5,
    "quatre-valets": 4,
    "ace-high": 5,
    "slobberhannes": 3,
    "no-contracts": 5,
    "eichel-obern": 3,
    "gras-obern": 3,
    "bassadewitz": 120,
    "knaves": 10,
}
# The settings of docs/rules.md 11 by preset: what differs from a 32-card French penalty game.
FAMILY_SETTINGS: dict[str, dict[str, Any]] = {
    "eichel-obern": {"faces": Faces.GERMAN},
    "gras-obern": {"faces": Faces.GERMAN},
    "bassadewitz": {
        "hand_score": HandScore.PLACE,
        "place_scores": (0, 1, 2, 3, 5),
        "every_trick_scores": (0, 5),
        "big_take_points": 100,
        "big_take_scores": (8, 0),
    },
    "knaves": {
        "players": 3,
        "pack": 52,
        "trumps": Trumps.TURNED,
        "trick_points": 1,
        "direction": Direction.HIGHER,
        "tiebreak": Tiebreak.PLAY_ON,
    },
}
FRENCH_32_DEFAULTS: dict[str, Any] = {
    "players": 4,
    "pack": 32,
    "trumps": Trumps.NONE,
    "trick_points": 0,
    "hand_score": HandScore.POINTS,
    "place_scores": (),
    "every_trick_scores": (),
    "big_take_points": 0,
    "big_take_scores": (),
    "direction": Direction.LOWER,
    "tiebreak": Tiebreak.TIED,
    "faces": Faces.FRENCH,
}
TABLE_SIZES = {name: (3, 4, 5, 6) for name in PRESET_TABLE} | {"bassadewitz": (3, 4, 5), "knaves": (3,)}


def test_the_nine_presets_exist() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)
    assert list(FRENCH_32_GAMES) == ["classic", "quatre-valets", "ace-high", "slobberhannes", "no-contracts"]
    assert all(PRESETS[name].pack == 32 and PRESETS[name].faces is Faces.FRENCH for name in FRENCH_32_GAMES)


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_matches_rules_sections_10_and_11(name: str) -> None:
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
def test_preset_settings_of_the_family(name: str) -> None:
    rules = preset(name)
    for key, value in (FRENCH_32_DEFAULTS | FAMILY_SETTINGS.get(name, {})).items():
        assert getattr(rules, key) == value, f"{name}: {key}"


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_table_sizes(name: str) -> None:
    rules = preset(name)
    assert rules.table_sizes() == TABLE_SIZES[name]
    for players in range(3, 7):
        if players in TABLE_SIZES[name]:
            assert preset(name, players=players).players == players
        else:
            with pytest.raises(RulesetError):
                preset(name, players=players)


def test_cards_each() -> None:
    """docs/rules.md 2 and 11: 10, 8, 6, 5 cards from the 32-card pack; 17 each and one turned in Knaves."""
    assert [cards_each(preset("classic"), n) for n in (2, 3, 4, 5, 6)] == [15, 10, 8, 6, 5]
    assert cards_each(preset("knaves"), 3) == 17
    with pytest.raises(RulesetError, match="52-card pack"):
        cards_each(preset("knaves"), 2)


def test_direction_helpers() -> None:
    lower, higher = preset("classic"), preset("knaves")
    assert (lower.against, higher.against) == (1, -1)
    assert lower.better(3, 5) and not lower.better(5, 3) and not lower.better(4, 4)
    assert higher.better(5, 3) and not higher.better(3, 5) and not higher.better(4, 4)
    assert (lower.best([4, -2, 9]), higher.best([4, -2, 9])) == (-2, 9)


def test_place_table() -> None:
    """docs/rules.md 11: 4 players 0 1 2 5, 3 players 0 1 5, 5 players 0 1 2 3 5, a 2-player tie-break 0 5."""
    bassadewitz = preset("bassadewitz")
    assert [bassadewitz.place_table(k) for k in (2, 3, 4, 5)] == [(0, 5), (0, 1, 5), (0, 1, 2, 5), (0, 1, 2, 3, 5)]


@pytest.mark.parametrize("name", list(PRESET_TABLE))
def test_preset_defaults_of_rules_md(name: str) -> None:
    rules = preset(name)
    assert rules.players == (3 if name == "knaves" else 4)
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
    assert preset("bassadewitz").rank_text() == "A 10 K Q J 9 8 7"
    assert preset("knaves").rank_text() == "A K Q J 10 9 8 7 6 5 4 3 2"


def test_strength_table_follows_trick_order() -> None:
    for name in PRESET_TABLE:
        rules = preset(name)
        for suit in "SHDC":
            ranks_low_to_high = [rules.strength[Card.parse(r.letter + suit).index] for r in reversed(rules.trick_order)]
            assert ranks_low_to_high == sorted(ranks_low_to_high)
            assert len(set(ranks_low_to_high)) == rules.pack // 4


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
        ("ace-ten", ACE_TEN),
        ("AT KQJ987", ACE_TEN),
    ],
)
def test_from_dict_trick_order_forms(value: Any, expected: tuple[Rank, ...]) -> None:
    assert Ruleset.from_dict({"trick_order": value}).trick_order == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ace-high", FULL), ("AKQJT98765432", FULL), ("A K Q J 10 9 8 7 6 5 4 3 2", FULL), ("23456789TJQKA", FULL[::-1])],
)
def test_from_dict_trick_order_forms_of_the_52_card_pack(value: Any, expected: tuple[Rank, ...]) -> None:
    assert Ruleset.from_dict({"variant": "knaves", "trick_order": value}).trick_order == expected


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
    ({"trump": "S"}, "'trump'", "trumps"),
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
    ({"trick_order": "AKQJT98765432"}, "'trick_order'", "'french', 'ace-high', 'ace-ten'"),
    ({"trick_order": "ace-ten", "pack": 52, "trumps": "turned", "players": 3}, "'trick_order'", "'ace-high'"),
    ({"variant": "knaves", "trick_order": "AKQJT987"}, "'trick_order'", "13 ranks of the 52-card pack"),
    # the settings of docs/rules.md 11
    ({"pack": 36}, "'pack'", "32 or 52"),
    ({"pack": "52"}, "'pack'", "32 or 52"),
    ({"trumps": "spades"}, "'trumps'", "'none', 'turned'"),
    ({"hand_score": "tricks"}, "'hand_score'", "'points', 'place'"),
    ({"direction": "up"}, "'direction'", "'lower', 'higher'"),
    ({"tiebreak": "replay"}, "'tiebreak'", "'tied', 'play-on'"),
    ({"faces": "swiss"}, "'faces'", "'french', 'german'"),
    ({"trick_points": "1"}, "'trick_points'", "-100..100"),
    ({"trick_points": 101}, "'trick_points'", "-100..100"),
    ({"big_take_points": -1}, "'big_take_points'", "0..1000"),
    ({"variant": "bassadewitz", "place_scores": "0 1 2 5"}, "'place_scores'", "list of up to 6 integers"),
    ({"variant": "bassadewitz", "place_scores": [0, 1, 2, 3, 4, 5, 6]}, "'place_scores'", "list of up to 6 integers"),
    ({"variant": "bassadewitz", "place_scores": [0, 1, 2, True]}, "'place_scores'", "list of up to 6 integers"),
    ({"variant": "bassadewitz", "every_trick_scores": [0]}, "'every_trick_scores'", "two scores"),
    ({"variant": "bassadewitz", "big_take_scores": [8, 0, 0]}, "'big_take_scores'", "list of up to 2 integers"),
    ({"variant": "bassadewitz", "big_take_scores": []}, "'big_take_scores'", "set both or neither"),
    ({"place_scores": [0, 1, 2, 5]}, "'place_scores'", "hand_score = 'place'"),
    ({"big_take_points": 100}, "'big_take_points'", "hand_score = 'place'"),
    ({"penalty_cards": {"6S": 1}}, "'penalty_cards'", "32-card pack"),
    ({"variant": "knaves", "penalty_cards": {"6S": 1, "XS": 2}}, "'penalty_cards'", "'XS'"),
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
    ({"variant": "bridge"}, "'variant'", "classic, quatre-valets, ace-high, slobberhannes, no-contracts, eichel-obern, gras-obern"),
    ({"variant": "bridge"}, "'variant'", "gras-obern, bassadewitz, knaves"),
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
            Ruleset.from_dict(bad)  # type: ignore[arg-type]  # not a table, on purpose


def test_ruleset_error_is_a_value_error() -> None:
    assert issubclass(RulesetError, ValueError)
    assert issubclass(RulesetError, polignac.PolignacError)


@pytest.mark.parametrize(
    "changes",
    [
        {"players": 2},
        {"players": 7},
        {"limit": 0},
        {"capot": 1},
        {"trick_order": (R.KING,) * 8},
        {"tiebreak_hands": -1},
        {"pack": 40},
        {"trumps": "both"},
        {"direction": None},
        {"trick_order": FULL},
        {"place_scores": (0, 1, 2, 5)},
    ],
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
        rules.players = 5  # type: ignore[misc]  # a frozen field, on purpose
    assert hash(rules) == hash(Ruleset())
    assert len({preset(n) for n in PRESET_TABLE}) == len(PRESET_TABLE)
