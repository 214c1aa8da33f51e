"""Rulesets: every parameter of docs/rules.md in one frozen value, the named variants, validation.

A :class:`Ruleset` is built directly, from a named preset (:func:`preset`), or from a
dict / TOML table (:meth:`Ruleset.from_dict`).  All three validate: an unknown key, a
value of the wrong type or out of range raises :class:`RulesetError` naming the key and
what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from polignac.cards import CARDS, Card, Rank, Suit
from polignac.errors import CardParseError, RulesetError

__all__ = [
    "ACE_HIGH_ORDER",
    "FRENCH_ORDER",
    "PRESETS",
    "FaultPolicy",
    "RemovedSevens",
    "Ruleset",
    "deck_mask",
    "packet_sizes",
    "preset",
]


class RemovedSevens(StrEnum):
    """Which two sevens leave the pack when 3, 5 or 6 play (or 2 in a tie-break)."""

    BLACK = "black"
    RED = "red"


class FaultPolicy(StrEnum):
    """What the referee does with an illegal, malformed, stale or late decision (docs/rules.md 8)."""

    PENALTY = "penalty"
    FORFEIT = "forfeit"


FRENCH_ORDER: Final = (Rank.KING, Rank.QUEEN, Rank.JACK, Rank.ACE, Rank.TEN, Rank.NINE, Rank.EIGHT, Rank.SEVEN)
"""The classic trick order, high to low: K Q J A 10 9 8 7."""
ACE_HIGH_ORDER: Final = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.TEN, Rank.NINE, Rank.EIGHT, Rank.SEVEN)
"""The modern trick order, high to low: A K Q J 10 9 8 7."""
_ORDER_NAMES: Final = {"french": FRENCH_ORDER, "ace-high": ACE_HIGH_ORDER}

_JACKS = {"JS": 2, "JH": 1, "JD": 1, "JC": 1}


def _penalties(table: Mapping[str, int]) -> tuple[tuple[Card, int], ...]:
    return tuple(sorted(((Card.parse(k), v) for k, v in table.items()), key=lambda cv: cv[0].index))


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every rule parameter of docs/rules.md; defaults are the ``classic`` game for 4 players.

    Points are penalties: lower is better.  ``trick_order`` lists ranks from highest to
    lowest.  The fault fields (``fault_policy``, ``revoke_points``, ``timeout_points``,
    ``max_faults``) are applied by the referee; the engine only adds the extra points it
    is told to (:meth:`polignac.Match.add_penalty`).
    """

    name: str = "classic"
    players: int = 4
    removed_sevens: RemovedSevens = RemovedSevens.BLACK
    trick_order: tuple[Rank, ...] = FRENCH_ORDER
    penalty_cards: tuple[tuple[Card, int], ...] = _penalties(_JACKS)
    first_trick_points: int = 0
    last_trick_points: int = 0
    capot: bool = True
    general: bool = False
    contract_points: int = 5
    limit: int = 20
    tiebreak_hands: int = 3
    fault_policy: FaultPolicy = FaultPolicy.PENALTY
    revoke_points: int = 5
    timeout_points: int = 0
    max_faults: int = 3

    # Derived tables for the hot paths, computed once in __post_init__.
    strength: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """``strength[card.index]``: higher wins a trick within the suit led (0..7)."""
    card_points: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """``card_points[card.index]``: penalty points for taking that card."""
    penalty_mask: int = field(init=False, repr=False, compare=False)
    """Bitmask of the penalty cards."""

    def __post_init__(self) -> None:
        _validate(self)
        strength = [0] * 32
        for pos, rank in enumerate(self.trick_order):
            for suit in Suit:
                strength[suit * 8 + rank] = 7 - pos
        points = [0] * 32
        mask = 0
        for card, value in self.penalty_cards:
            points[card.index] = value
            mask |= card.bit
        object.__setattr__(self, "strength", tuple(strength))
        object.__setattr__(self, "card_points", tuple(points))
        object.__setattr__(self, "penalty_mask", mask)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> Ruleset:
        """Build from a dict or TOML table; ``variant`` names the preset to start from.

        >>> Ruleset.from_dict({"variant": "no-contracts", "players": 5, "limit": 10}).capot
        False
        """
        if not isinstance(table, Mapping):
            raise RulesetError(f"rules must be a table of settings, got {type(table).__name__}")
        unknown = sorted((k for k in table if k != "variant" and k not in _SETTINGS), key=repr)
        if unknown:
            raise RulesetError(f"unknown rules setting {unknown[0]!r}; known settings: {', '.join(_KNOWN_KEYS)}")
        base_name = table.get("variant", "classic")
        if not isinstance(base_name, str) or base_name not in PRESETS:
            raise RulesetError(f"rules setting 'variant' must be one of {', '.join(PRESETS)}, got {base_name!r}")
        base = PRESETS[base_name]
        changes = {key: _convert(key, value) for key, value in table.items() if key != "variant"}
        return replace(base, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON/TOML-ready table; ``Ruleset.from_dict(r.to_dict()) == r``."""
        out: dict[str, Any] = {}
        for key in _SETTINGS:
            value = getattr(self, key)
            if key == "trick_order":
                value = "".join(r.letter for r in value)
            elif key == "penalty_cards":
                value = {str(c): v for c, v in value}
            elif isinstance(value, StrEnum):
                value = value.value
            out[key] = value
        return out

    def with_changes(self, **changes: Any) -> Ruleset:
        """A copy with some settings changed, each validated as in :meth:`from_dict`."""
        table = self.to_dict()
        table.update(changes)
        table["variant"] = "classic"
        return Ruleset.from_dict(table)

    # -- derived facts ------------------------------------------------------------------

    @property
    def contracts(self) -> bool:
        """True when the auction happens (capot or general enabled)."""
        return self.capot or self.general

    @property
    def points_per_hand(self) -> int:
        """Penalty points in play per hand without contract or faults."""
        return sum(v for _, v in self.penalty_cards) + self.first_trick_points + self.last_trick_points

    def rank_text(self) -> str:
        """The trick order for people: ``K Q J A 10 9 8 7``."""
        return " ".join("10" if r is Rank.TEN else r.letter for r in self.trick_order)

    def describe(self) -> list[tuple[str, str]]:
        """(setting, value) pairs for display, in declaration order."""
        rows = []
        for key, value in self.to_dict().items():
            if key == "trick_order":
                text = self.rank_text()
            elif key == "penalty_cards":
                text = ", ".join(f"{c}={v}" for c, v in value.items()) or "none"
            elif isinstance(value, bool):
                text = "on" if value else "off"
            else:
                text = str(value)
            rows.append((key, text))
        return rows


_SETTINGS: Final = tuple(f.name for f in fields(Ruleset) if f.init)
_KNOWN_KEYS: Final = ("variant", *_SETTINGS)

# Inclusive bounds of the integer settings.
_INT_BOUNDS: Final = {
    "players": (3, 6),
    "first_trick_points": (0, 100),
    "last_trick_points": (0, 100),
    "contract_points": (0, 100),
    "limit": (1, 10_000),
    "tiebreak_hands": (0, 20),
    "revoke_points": (0, 100),
    "timeout_points": (0, 100),
    "max_faults": (1, 1000),
}
_BOOL_SETTINGS: Final = ("capot", "general")


def _convert(key: str, value: Any) -> Any:
    """Turn one TOML value into the field's type, or raise naming the key."""
    if key in _INT_BOUNDS:
        if type(value) is not int:
            lo, hi = _INT_BOUNDS[key]
            raise RulesetError(f"rules setting {key!r} must be an integer in {lo}..{hi}, got {value!r}")
        return value
    if key in _BOOL_SETTINGS:
        if type(value) is not bool:
            raise RulesetError(f"rules setting {key!r} must be true or false, got {value!r}")
        return value
    if key == "name":
        return value
    if key == "removed_sevens":
        return _enum(key, RemovedSevens, value)
    if key == "fault_policy":
        return _enum(key, FaultPolicy, value)
    if key == "trick_order":
        return _trick_order(value)
    if key == "penalty_cards":
        return _penalty_table(value)
    raise AssertionError(key)  # pragma: no cover - every setting is handled above


def _enum(key: str, enum: type[StrEnum], value: Any) -> Any:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum)
        raise RulesetError(f"rules setting {key!r} must be one of {allowed}, got {value!r}") from None


def _trick_order(value: Any) -> tuple[Rank, ...]:
    hint = "'french', 'ace-high' or the eight ranks high to low such as 'KQJAT987'"
    if isinstance(value, str) and value in _ORDER_NAMES:
        return _ORDER_NAMES[value]
    if isinstance(value, str):
        parts: list[Any] = list(value.replace("10", "T").replace(" ", "").upper())
    elif isinstance(value, list | tuple):
        parts = [str(p).upper().replace("10", "T") for p in value]
    else:
        raise RulesetError(f"rules setting 'trick_order' must be {hint}, got {value!r}")
    by_letter = {r.letter: r for r in Rank}
    order = tuple(by_letter.get(p) for p in parts)
    if len(order) != 8 or None in order or len(set(order)) != 8:
        raise RulesetError(f"rules setting 'trick_order' must be {hint}, got {value!r}")
    return order  # type: ignore[return-value]  # None was excluded just above


def _penalty_table(value: Any) -> tuple[tuple[Card, int], ...]:
    if not isinstance(value, Mapping):
        raise RulesetError(f"rules setting 'penalty_cards' must be a table such as {{JS = 2, JH = 1}}, got {value!r}")
    table: dict[str, int] = {}
    for text, points in value.items():
        try:
            card = Card.parse(text)
        except CardParseError as exc:
            raise RulesetError(f"rules setting 'penalty_cards': {exc}") from None
        if type(points) is not int or not 1 <= points <= 100:
            raise RulesetError(f"rules setting 'penalty_cards': points for {text!r} must be an integer in 1..100, got {points!r}")
        if str(card) in table:
            raise RulesetError(f"rules setting 'penalty_cards': card {str(card)!r} is listed twice")
        table[str(card)] = points
    return _penalties(table)


def _validate(rules: Ruleset) -> None:
    """Check a constructed ruleset (direct construction bypasses ``from_dict``)."""
    for key, (lo, hi) in _INT_BOUNDS.items():
        value = getattr(rules, key)
        if type(value) is not int or not lo <= value <= hi:
            raise RulesetError(f"rules setting {key!r} must be an integer in {lo}..{hi}, got {value!r}")
    for key in _BOOL_SETTINGS:
        if type(getattr(rules, key)) is not bool:
            raise RulesetError(f"rules setting {key!r} must be true or false, got {getattr(rules, key)!r}")
    if not isinstance(rules.name, str) or not 1 <= len(rules.name) <= 60 or not rules.name.isprintable():
        raise RulesetError(f"rules setting 'name' must be printable text of 1..60 characters, got {rules.name!r}")
    if not isinstance(rules.removed_sevens, RemovedSevens):
        _enum("removed_sevens", RemovedSevens, rules.removed_sevens)
        raise RulesetError("rules setting 'removed_sevens' must be a RemovedSevens value")
    if not isinstance(rules.fault_policy, FaultPolicy):
        _enum("fault_policy", FaultPolicy, rules.fault_policy)
        raise RulesetError("rules setting 'fault_policy' must be a FaultPolicy value")
    if sorted(rules.trick_order) != list(Rank):
        raise RulesetError(f"rules setting 'trick_order' must hold each of the eight ranks once, got {rules.trick_order!r}")
    seen: set[int] = set()
    for card, points in rules.penalty_cards:
        if not isinstance(card, Card) or card.index in seen or type(points) is not int or not 1 <= points <= 100:
            raise RulesetError(f"rules setting 'penalty_cards' has a bad entry {(card, points)!r}")
        seen.add(card.index)


def deck_mask(rules: Ruleset, seats: int) -> int:
    """The pack for a hand among ``seats`` players: all 32 cards for 4, else 30 (two sevens out)."""
    full = (1 << 32) - 1
    if seats == 4:
        return full
    suits = (Suit.HEARTS, Suit.DIAMONDS) if rules.removed_sevens is RemovedSevens.RED else (Suit.SPADES, Suit.CLUBS)
    for suit in suits:
        full &= ~CARDS[suit * 8 + Rank.SEVEN].bit
    return full


_PACKETS: Final = {8: (3, 2, 3), 10: (3, 2, 3, 2), 6: (3, 3), 5: (3, 2), 15: (3, 2, 3, 2, 3, 2)}


def packet_sizes(cards_each: int) -> tuple[int, ...]:
    """The packets each player receives in turn (docs/rules.md 3): 3-2-3 for 8 cards, and so on."""
    try:
        return _PACKETS[cards_each]
    except KeyError:
        raise RulesetError(f"no packet scheme for {cards_each!r} cards each") from None


def _preset_table() -> dict[str, Ruleset]:
    classic = Ruleset()
    ace_high = replace(
        classic,
        name="ace-high",
        trick_order=ACE_HIGH_ORDER,
        penalty_cards=_penalties({"QS": 2, "QH": 1, "QD": 1, "QC": 1}),
    )
    return {
        "classic": classic,
        "quatre-valets": replace(classic, name="quatre-valets", penalty_cards=_penalties(dict.fromkeys(_JACKS, 1))),
        "ace-high": ace_high,
        "slobberhannes": replace(
            ace_high,
            name="slobberhannes",
            penalty_cards=_penalties({"QC": 1}),
            first_trick_points=1,
            last_trick_points=1,
        ),
        "no-contracts": replace(classic, name="no-contracts", capot=False, general=False),
    }


PRESETS: Final[Mapping[str, Ruleset]] = MappingProxyType(_preset_table())
"""The named rulesets of docs/rules.md section 10, for 4 players."""


def preset(name: str, **changes: Any) -> Ruleset:
    """A named ruleset, optionally with some settings changed: ``preset("classic", players=5)``."""
    if name not in PRESETS:
        raise RulesetError(f"unknown ruleset {name!r}; choose one of {', '.join(PRESETS)}")
    return Ruleset.from_dict({**changes, "variant": name}) if changes else PRESETS[name]
