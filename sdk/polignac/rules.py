"""Rulesets: every parameter of docs/rules.md in one frozen value, the named variants, validation.

A :class:`Ruleset` is built directly, from a named preset (:func:`preset`), or from a
dict / TOML table (:meth:`Ruleset.from_dict`).  All three validate: an unknown key, a
value of the wrong type or out of range raises :class:`RulesetError` naming the key and
what is allowed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from polignac.cards import ALL_CARDS_MASK, PIQUET_MASK, Card, Rank, Suit, card_index
from polignac.errors import CardParseError, RulesetError
from polignac.jsontypes import JsonObject
from polignac.values import Contract

__all__ = [
    "ACE_HIGH_ORDER",
    "ACE_TEN_ORDER",
    "FRENCH_32_GAMES",
    "FRENCH_ORDER",
    "FULL_ACE_HIGH_ORDER",
    "PRESETS",
    "Direction",
    "Faces",
    "FaultPolicy",
    "HandScore",
    "RemovedSevens",
    "Ruleset",
    "Tiebreak",
    "Trumps",
    "cards_each",
    "deck_mask",
    "enabled_contracts",
    "packet_sizes",
    "preset",
]


class RemovedSevens(StrEnum):
    """Which two sevens leave the pack when 3, 5 or 6 play (or 2 in a tie-break)."""

    BLACK = "black"
    RED = "red"


class Trumps(StrEnum):
    """Whether a suit beats the others: none, or the suit of a card turned after the deal."""

    NONE = "none"
    TURNED = "turned"


class HandScore(StrEnum):
    """How a hand scores: its points as they are, or a score by the place its points give."""

    POINTS = "points"
    PLACE = "place"


class Direction(StrEnum):
    """Which totals are better: lower (penalty games) or higher (Knaves)."""

    LOWER = "lower"
    HIGHER = "higher"


class Tiebreak(StrEnum):
    """What a tie for first place at the end brings: hands among the tied, or play on with all."""

    TIED = "tied"
    PLAY_ON = "play-on"


class Faces(StrEnum):
    """How cards are named for people (the wire always writes the French text)."""

    FRENCH = "french"
    GERMAN = "german"


class FaultPolicy(StrEnum):
    """What the referee does with an illegal, malformed, stale or late decision (docs/rules.md 8)."""

    PENALTY = "penalty"
    FORFEIT = "forfeit"


FRENCH_ORDER: Final = (Rank.KING, Rank.QUEEN, Rank.JACK, Rank.ACE, Rank.TEN, Rank.NINE, Rank.EIGHT, Rank.SEVEN)
"""The classic trick order, high to low: K Q J A 10 9 8 7."""
ACE_HIGH_ORDER: Final = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.TEN, Rank.NINE, Rank.EIGHT, Rank.SEVEN)
"""The modern trick order, high to low: A K Q J 10 9 8 7."""
ACE_TEN_ORDER: Final = (Rank.ACE, Rank.TEN, Rank.KING, Rank.QUEEN, Rank.JACK, Rank.NINE, Rank.EIGHT, Rank.SEVEN)
"""Bassadewitz's trick order, high to low: A 10 K Q J 9 8 7."""
FULL_ACE_HIGH_ORDER: Final = tuple(sorted(Rank, reverse=True))
"""The 52-card trick order, high to low: A K Q J 10 9 ... 2."""
# Named orders, by pack size.
_ORDER_NAMES: Final[dict[int, dict[str, tuple[Rank, ...]]]] = {
    32: {"french": FRENCH_ORDER, "ace-high": ACE_HIGH_ORDER, "ace-ten": ACE_TEN_ORDER},
    52: {"ace-high": FULL_ACE_HIGH_ORDER},
}
_PACK_RANKS: Final = {32: frozenset(r for r in Rank if r.in_piquet), 52: frozenset(Rank)}
_PACK_MASKS: Final = {32: PIQUET_MASK, 52: ALL_CARDS_MASK}

_JACKS = {"JS": 2, "JH": 1, "JD": 1, "JC": 1}


def _penalties(table: Mapping[str, int]) -> tuple[tuple[Card, int], ...]:
    return tuple(sorted(((Card.parse(k), v) for k, v in table.items()), key=lambda cv: cv[0].index))


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every rule parameter of docs/rules.md; defaults are the ``classic`` game for 4 players.

    ``trick_order`` lists the pack's ranks from highest to lowest.  What a hand scores:

    - ``hand_score = "points"``: the points of the cards taken (``penalty_cards``), the
      first and last trick points and the contract's points count *against* the taker;
      ``trick_points`` per trick taken are added as they are.  With ``direction = "lower"``
      points against add to the score; with ``"higher"`` they are subtracted.
    - ``hand_score = "place"``: each player's points (cards taken, first/last trick, trick
      points) only order the players, fewest first (equal points: a player without a
      trick first, then the one nearer eldest hand); the score is ``place_scores`` by that
      order (with k players: the first k-1 entries, then the last), unless one player
      takes every trick (``every_trick_scores``: taker, each other) or
      ``big_take_points`` or more without every trick (``big_take_scores``).

    Contracts (``capot``, ``general``; not where ``hand_score = "place"`` or a card is turned
    for trumps: Bassadewitz and Knaves have none): made, every opponent scores ``contract_points`` and the
    declarer 0 (capot) or ``general_points`` (general); failed, the declarer scores
    ``contract_points`` on top of its points.

    The match ends after the hand in which any total reaches ``limit``.  A tie for first
    is broken by ``tiebreak``: hands among the tied (``"tied"``) or whole hands among all,
    scores counting (``"play-on"``), at most ``tiebreak_hands``.  The fault fields
    (``fault_policy``, ``revoke_points``, ``timeout_points``, ``max_faults``) are applied by
    the referee; the engine only adds the points it is told to
    (:meth:`polignac.Match.add_penalty`), which always count against the offender.
    """

    name: str = "classic"
    players: int = 4
    pack: int = 32
    removed_sevens: RemovedSevens = RemovedSevens.BLACK
    trick_order: tuple[Rank, ...] = FRENCH_ORDER
    trumps: Trumps = Trumps.NONE
    penalty_cards: tuple[tuple[Card, int], ...] = _penalties(_JACKS)
    trick_points: int = 0
    first_trick_points: int = 0
    last_trick_points: int = 0
    hand_score: HandScore = HandScore.POINTS
    place_scores: tuple[int, ...] = ()
    every_trick_scores: tuple[int, ...] = ()
    big_take_points: int = 0
    big_take_scores: tuple[int, ...] = ()
    direction: Direction = Direction.LOWER
    capot: bool = True
    general: bool = False
    contract_points: int = 5
    general_points: int = -5
    limit: int = 20
    tiebreak: Tiebreak = Tiebreak.TIED
    tiebreak_hands: int = 3
    fault_policy: FaultPolicy = FaultPolicy.PENALTY
    revoke_points: int = 5
    timeout_points: int = 0
    max_faults: int = 3
    faces: Faces = Faces.FRENCH

    # Derived tables for the hot paths, computed once in __post_init__.
    strength: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """``strength[card.index]``: higher wins a trick within the suit led (0 for the lowest rank)."""
    card_points: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """``card_points[card.index]``: the points for taking that card (``penalty_cards``)."""
    penalty_mask: int = field(init=False, repr=False, compare=False)
    """Bitmask of the cards with points."""

    def __post_init__(self) -> None:
        _validate(self)
        strength = [0] * 52
        top = len(self.trick_order) - 1
        for pos, rank in enumerate(self.trick_order):
            for suit in Suit:
                strength[card_index(suit, rank)] = top - pos
        points = [0] * 52
        mask = 0
        for card, value in self.penalty_cards:
            points[card.index] = value
            mask |= card.bit
        object.__setattr__(self, "strength", tuple(strength))
        object.__setattr__(self, "card_points", tuple(points))
        object.__setattr__(self, "penalty_mask", mask)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_dict(cls, table: Mapping[str, object]) -> Ruleset:
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
        pack = _pack(table["pack"]) if "pack" in table else base.pack
        # Heterogeneous by design: _convert gives each value its own field's type.
        changes: dict[str, Any] = {key: _convert(key, value, pack) for key, value in table.items() if key != "variant"}
        return replace(base, **changes)

    def to_dict(self) -> JsonObject:
        """A JSON/TOML-ready table; ``Ruleset.from_dict(r.to_dict()) == r``."""
        out: JsonObject = {}
        for key in _SETTINGS:
            value = getattr(self, key)
            if key == "trick_order":
                value = "".join(r.letter for r in value)
            elif key == "penalty_cards":
                value = {str(c): v for c, v in value}
            elif isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out

    @classmethod
    def from_record(cls, table: Mapping[str, object]) -> Ruleset:
        """The ruleset of a match record or a stored configuration, read as it was played when written.

        A table written before ``general_points`` was a setting scored a made general at
        ``-contract_points``; it still does.

        >>> Ruleset.from_record({"general": True, "contract_points": 8}).general_points
        -8
        """
        if isinstance(table, Mapping) and "general_points" not in table:
            contract = table.get("contract_points")
            if type(contract) is int and _INT_BOUNDS["contract_points"][0] <= contract <= _INT_BOUNDS["contract_points"][1]:
                table = {**table, "general_points": -contract}
        return cls.from_dict(table)

    def stored_dict(self) -> JsonObject:
        """:meth:`to_dict` as a stored configuration compares it: without ``general_points`` when it scores
        what a made general scored before it was a setting (``-contract_points``), so that a tournament or
        league stored before it is still the same one (:meth:`from_record` reads it back)."""
        table = self.to_dict()
        if self.general_points == -self.contract_points:
            del table["general_points"]
        return table

    def with_changes(self, **changes: object) -> Ruleset:
        """A copy with some settings changed, each validated as in :meth:`from_dict`."""
        return Ruleset.from_dict({**self.to_dict(), **changes, "variant": "classic"})

    # -- derived facts ------------------------------------------------------------------

    @property
    def contracts(self) -> bool:
        """True when the auction happens (capot or general enabled)."""
        return self.capot or self.general

    @property
    def points_per_hand(self) -> int:
        """Points against in play per hand (cards, first and last trick), without contract or faults."""
        return sum(v for _, v in self.penalty_cards) + self.first_trick_points + self.last_trick_points

    @property
    def against(self) -> int:
        """The sign of points against in a score: +1 when lower is better, -1 when higher is."""
        return 1 if self.direction is Direction.LOWER else -1

    def better(self, a: int, b: int) -> bool:
        """True when total (or hand score) ``a`` is strictly better than ``b``."""
        return a < b if self.direction is Direction.LOWER else a > b

    def best(self, values: Iterable[int]) -> int:
        """The best of some totals or scores in this game's direction."""
        return min(values) if self.direction is Direction.LOWER else max(values)

    def table_sizes(self) -> tuple[int, ...]:
        """The numbers of players this game can be played by (each a valid ``players``).

        >>> preset("knaves").table_sizes(), preset("bassadewitz").table_sizes()
        ((3,), (3, 4, 5))
        """
        sizes = []
        for players in range(_INT_BOUNDS["players"][0], _INT_BOUNDS["players"][1] + 1):
            try:
                replace(self, players=players)
            except RulesetError:
                continue
            sizes.append(players)
        return tuple(sizes)

    def place_table(self, seats: int) -> tuple[int, ...]:
        """The scores by place among ``seats`` players (``hand_score = "place"``): fewest points first."""
        return (*self.place_scores[: seats - 1], self.place_scores[-1])

    def rank_text(self) -> str:
        """The trick order for people: ``K Q J A 10 9 8 7``."""
        return " ".join(r.text for r in self.trick_order)

    def describe(self) -> list[tuple[str, str]]:
        """(setting, value) pairs for display, in declaration order."""
        rows = []
        for key, value in self.to_dict().items():
            if key == "trick_order":
                text = self.rank_text()
            elif key == "penalty_cards":
                text = ", ".join(f"{c}={v}" for c, v in self.penalty_cards) or "none"
            elif isinstance(value, bool):
                text = "on" if value else "off"
            elif isinstance(value, list):
                text = " ".join(map(str, value)) or "none"
            else:
                text = str(value)
            rows.append((key, text))
        return rows


_SETTINGS: Final = tuple(f.name for f in fields(Ruleset) if f.init)
_KNOWN_KEYS: Final = ("variant", *_SETTINGS)

# Inclusive bounds of the integer settings.
_INT_BOUNDS: Final = {
    "players": (3, 6),
    "trick_points": (-100, 100),
    "first_trick_points": (0, 100),
    "last_trick_points": (0, 100),
    "big_take_points": (0, 1000),
    "contract_points": (0, 100),
    "general_points": (-100, 100),
    "limit": (1, 10_000),
    "tiebreak_hands": (0, 20),
    "revoke_points": (0, 100),
    "timeout_points": (0, 100),
    "max_faults": (1, 1000),
}
_BOOL_SETTINGS: Final = ("capot", "general")
_ENUM_SETTINGS: Final[dict[str, type[StrEnum]]] = {
    "removed_sevens": RemovedSevens,
    "trumps": Trumps,
    "hand_score": HandScore,
    "direction": Direction,
    "tiebreak": Tiebreak,
    "fault_policy": FaultPolicy,
    "faces": Faces,
}
# Lists of scores: key -> (min length, max length).
_SCORE_LISTS: Final = {"place_scores": (0, 6), "every_trick_scores": (0, 2), "big_take_scores": (0, 2)}


def _convert(key: str, value: object, pack: int = 32) -> object:
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
    if key == "pack":
        return _pack(value)
    if key in _ENUM_SETTINGS:
        return _enum(key, _ENUM_SETTINGS[key], value)
    if key in _SCORE_LISTS:
        return _score_list(key, value)
    if key == "trick_order":
        return _trick_order(value, pack)
    if key == "penalty_cards":
        return _penalty_table(value)
    raise AssertionError(key)  # pragma: no cover - every setting is handled above


def _pack(value: object) -> int:
    if type(value) is not int or value not in _PACK_MASKS:
        raise RulesetError(f"rules setting 'pack' must be 32 or 52, got {value!r}")
    return value


def _enum(key: str, enum: type[StrEnum], value: object) -> StrEnum:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return enum(value)
    allowed = ", ".join(repr(m.value) for m in enum)
    raise RulesetError(f"rules setting {key!r} must be one of {allowed}, got {value!r}")


def _score_list(key: str, value: object) -> tuple[int, ...]:
    lo, hi = _SCORE_LISTS[key]
    if not isinstance(value, list | tuple) or not lo <= len(value) <= hi or any(type(v) is not int or abs(v) > 1000 for v in value):
        raise RulesetError(f"rules setting {key!r} must be a list of up to {hi} integers (each within -1000..1000), got {value!r}")
    return tuple(value)


def _trick_order(value: object, pack: int) -> tuple[Rank, ...]:
    names = _ORDER_NAMES.get(pack, {})
    ranks = len(_PACK_RANKS.get(pack, ()))
    hint = f"{', '.join(map(repr, names))} or the {ranks} ranks of the {pack}-card pack high to low such as 'KQJAT987'"
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, str):
        parts: list[str] = list(value.replace("10", "T").replace(" ", "").upper())
    elif isinstance(value, list | tuple):
        parts = [str(p).upper().replace("10", "T") for p in value]
    else:
        raise RulesetError(f"rules setting 'trick_order' must be {hint}, got {value!r}")
    by_letter = {r.letter: r for r in Rank}
    order = tuple(by_letter[p] for p in parts if p in by_letter)
    # Every rank of the pack once: a rank unknown, missing, doubled or from the other pack is refused here,
    # where the message can name the orders this pack has.
    if (
        len(order) != len(parts)
        or len(order) != ranks
        or len(set(order)) != ranks
        or not _PACK_RANKS.get(pack, frozenset()).issuperset(order)
    ):
        raise RulesetError(f"rules setting 'trick_order' must be {hint}, got {value!r}")
    return order


def _penalty_table(value: object) -> tuple[tuple[Card, int], ...]:
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
    """Check a constructed ruleset (direct construction bypasses ``from_dict``), then its sense."""
    for key, (lo, hi) in _INT_BOUNDS.items():
        value = getattr(rules, key)
        if type(value) is not int or not lo <= value <= hi:
            raise RulesetError(f"rules setting {key!r} must be an integer in {lo}..{hi}, got {value!r}")
    for key in _BOOL_SETTINGS:
        if type(getattr(rules, key)) is not bool:
            raise RulesetError(f"rules setting {key!r} must be true or false, got {getattr(rules, key)!r}")
    if not isinstance(rules.name, str) or not 1 <= len(rules.name) <= 60 or not rules.name.isprintable():
        raise RulesetError(f"rules setting 'name' must be printable text of 1..60 characters, got {rules.name!r}")
    if type(rules.pack) is not int or rules.pack not in _PACK_MASKS:
        raise RulesetError(f"rules setting 'pack' must be 32 or 52, got {rules.pack!r}")
    for key, enum in _ENUM_SETTINGS.items():
        if not isinstance(getattr(rules, key), enum):
            _enum(key, enum, getattr(rules, key))
            raise RulesetError(f"rules setting {key!r} must be a {enum.__name__} value")
    for key in _SCORE_LISTS:
        _score_list(key, getattr(rules, key))
    ranks = _PACK_RANKS[rules.pack]
    if len(rules.trick_order) != len(ranks) or set(rules.trick_order) != ranks:
        raise RulesetError(
            f"rules setting 'trick_order' must hold each of the {len(ranks)} ranks of the {rules.pack}-card pack once,"
            f" got {' '.join(getattr(r, 'text', repr(r)) for r in rules.trick_order)!r}"
        )
    seen: set[int] = set()
    for card, points in rules.penalty_cards:
        if not isinstance(card, Card) or card.index in seen or type(points) is not int or not 1 <= points <= 100:
            raise RulesetError(f"rules setting 'penalty_cards' has a bad entry {(card, points)!r}")
        if card.rank not in ranks:
            raise RulesetError(f"rules setting 'penalty_cards': {str(card)!r} is not in the {rules.pack}-card pack")
        seen.add(card.index)
    _validate_sense(rules)


def _validate_sense(rules: Ruleset) -> None:
    """Refuse settings that are each valid but make no game together, naming the setting."""
    n = rules.players
    turned = 1 if rules.trumps is Trumps.TURNED else 0
    if _deal_shape(rules, n) is None:
        deck = deck_mask(rules, n).bit_count()
        if turned and deck % n == 0:
            raise RulesetError(
                f"rules setting 'trumps' = 'turned' needs a card left after the deal to turn, but {n} players"
                f" share the {deck} cards equally (change 'players' or 'pack')"
            )
        extra = " after turning a card for trumps" if turned else ""
        raise RulesetError(
            f"rules setting 'players': {deck} cards of the {rules.pack}-card pack do not share equally among {n} players{extra}"
        )
    if rules.tiebreak is Tiebreak.TIED and rules.tiebreak_hands:
        for k in range(2, n):
            if _deal_shape(rules, k) is None:
                raise RulesetError(
                    f"rules setting 'tiebreak': a tie-break hand among {k} tied players cannot share the"
                    f" {rules.pack}-card pack; use 'play-on' (or tiebreak_hands = 0)"
                )
    if rules.faces is Faces.GERMAN and rules.pack != 32:
        raise RulesetError("rules setting 'faces': the German pack has 32 cards; 'german' needs pack = 32")
    place = rules.hand_score is HandScore.PLACE
    if place:
        if len(rules.place_scores) < n:
            scores = list(rules.place_scores)
            raise RulesetError(f"rules setting 'place_scores' must give at least one score per player ({n}), got {scores}")
        if rules.contracts:
            raise RulesetError(f"rules setting 'capot' / 'general': {rules.name!r} has no contracts (contracts need hand_score = 'points')")
        if bool(rules.big_take_points) != bool(rules.big_take_scores):
            raise RulesetError("rules setting 'big_take_scores' and 'big_take_points' go together: set both or neither")
    else:
        if rules.contracts and rules.trumps is Trumps.TURNED:
            raise RulesetError(f"rules setting 'capot' / 'general': {rules.name!r} has no contracts (contracts need trumps = 'none')")
        for key in ("place_scores", "every_trick_scores", "big_take_scores"):
            if getattr(rules, key):
                raise RulesetError(f"rules setting {key!r} needs hand_score = 'place'")
        if rules.big_take_points:
            raise RulesetError("rules setting 'big_take_points' needs hand_score = 'place'")
    for key in ("every_trick_scores", "big_take_scores"):
        if len(getattr(rules, key)) not in (0, 2):
            raise RulesetError(f"rules setting {key!r} must be two scores (the taker, each other player), got {list(getattr(rules, key))}")


def deck_mask(rules: Ruleset, seats: int) -> int:
    """The pack for a hand among ``seats`` players (the turned card included).

    The 32-card pack loses two sevens unless 4 players share it; the 52-card pack is used whole.
    """
    if rules.pack == 52:
        return ALL_CARDS_MASK
    full = PIQUET_MASK
    if seats == 4:
        return full
    suits = (Suit.HEARTS, Suit.DIAMONDS) if rules.removed_sevens is RemovedSevens.RED else (Suit.SPADES, Suit.CLUBS)
    for suit in suits:
        full &= ~Card(suit, Rank.SEVEN).bit
    return full


def _deal_shape(rules: Ruleset, seats: int) -> int | None:
    """Cards each for a hand among ``seats`` players, or ``None`` when the pack does not share."""
    dealt = deck_mask(rules, seats).bit_count() - (1 if rules.trumps is Trumps.TURNED else 0)
    if dealt % seats or (rules.pack == 32 and dealt // seats not in _PACKETS):
        return None
    return dealt // seats


def cards_each(rules: Ruleset, seats: int) -> int:
    """How many cards each of ``seats`` players is dealt (docs/rules.md 2 and 11)."""
    each = _deal_shape(rules, seats)
    if each is None:
        raise RulesetError(f"the {rules.pack}-card pack does not share among {seats} players")
    return each


_PACKETS: Final = {8: (3, 2, 3), 10: (3, 2, 3, 2), 6: (3, 3), 5: (3, 2), 15: (3, 2, 3, 2, 3, 2)}


def packet_sizes(cards_each: int, pack: int = 32) -> tuple[int, ...]:
    """The packets each player receives in turn (docs/rules.md 3): 3-2-3 for 8 cards, and so on.

    The 52-card pack is dealt one card at a time.
    """
    if pack == 52:
        return (1,) * cards_each
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
    slobberhannes = replace(
        ace_high,
        name="slobberhannes",
        penalty_cards=_penalties({"QC": 1}),
        first_trick_points=1,
        last_trick_points=1,
    )
    card_points = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}
    return {
        "classic": classic,
        "quatre-valets": replace(classic, name="quatre-valets", penalty_cards=_penalties(dict.fromkeys(_JACKS, 1))),
        "ace-high": ace_high,
        "slobberhannes": slobberhannes,
        "no-contracts": replace(classic, name="no-contracts", capot=False, general=False),
        "eichel-obern": replace(slobberhannes, name="eichel-obern", faces=Faces.GERMAN),
        "gras-obern": replace(slobberhannes, name="gras-obern", penalty_cards=_penalties({"QS": 1}), faces=Faces.GERMAN),
        "bassadewitz": replace(
            classic,
            name="bassadewitz",
            trick_order=ACE_TEN_ORDER,
            penalty_cards=_penalties({rank + suit: points for rank, points in card_points.items() for suit in "SHDC"}),
            hand_score=HandScore.PLACE,
            place_scores=(0, 1, 2, 3, 5),
            every_trick_scores=(0, 5),
            big_take_points=100,
            big_take_scores=(8, 0),
            capot=False,
            general=False,
        ),
        "knaves": replace(
            classic,
            name="knaves",
            players=3,
            pack=52,
            trick_order=FULL_ACE_HIGH_ORDER,
            trumps=Trumps.TURNED,
            penalty_cards=_penalties({"JH": 4, "JD": 3, "JC": 2, "JS": 1}),
            trick_points=1,
            direction=Direction.HIGHER,
            capot=False,
            general=False,
            tiebreak=Tiebreak.PLAY_ON,
        ),
    }


PRESETS: Final[Mapping[str, Ruleset]] = MappingProxyType(_preset_table())
"""The named rulesets of docs/rules.md sections 10 and 11 (4 players, Knaves 3)."""

FRENCH_32_GAMES: Final = ("classic", "quatre-valets", "ace-high", "slobberhannes", "no-contracts")
"""The presets of the 32-card French games: what a bot plays when it does not say."""


def preset(name: str, **changes: object) -> Ruleset:
    """A named ruleset, optionally with some settings changed: ``preset("classic", players=5)``."""
    if name not in PRESETS:
        raise RulesetError(f"unknown ruleset {name!r}; choose one of {', '.join(PRESETS)}")
    return Ruleset.from_dict({**changes, "variant": name}) if changes else PRESETS[name]


def enabled_contracts(rules: Ruleset) -> list[Contract]:
    """The auction's choices under ``rules``: pass, then capot and general where enabled."""
    options = [Contract.PASS]
    if rules.capot:
        options.append(Contract.CAPOT)
    if rules.general:
        options.append(Contract.GENERAL)
    return options
