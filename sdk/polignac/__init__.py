"""Polignac: the rules engine and bot SDK of Polignac Arena.

Everything a bot author needs, and nothing of the server: cards, rulesets, the pure
match state machine, player views, records, and a fast playout path for search.

>>> from polignac import Match, preset
>>> match = Match(preset("classic"), seed=7)
>>> match.legal_decisions()
[<Contract.PASS: 'pass'>, <Contract.CAPOT: 'capot'>]
"""

from polignac.cards import CARDS, SUIT_MASKS, Card, CardMask, Rank, Suit, cards_in, mask_of, parse_cards
from polignac.engine import ENGINE_VERSION, Match
from polignac.errors import CardParseError, IllegalDecision, PolignacError, RecordError, RulesetError
from polignac.events import Event, redact
from polignac.faces import card_name, card_text, parse_face, rank_name, suit_name
from polignac.faults import fallback
from polignac.rules import (
    PRESETS,
    Direction,
    Faces,
    FaultPolicy,
    HandScore,
    RemovedSevens,
    Ruleset,
    Tiebreak,
    Trumps,
    cards_each,
    preset,
)
from polignac.statuses import MatchStatus
from polignac.values import Action, Contract, Decision, Forfeit, HandResult, Penalty, Phase, ScoreException, Trick, parse_decision
from polignac.view import PlayerView

__version__ = "0.1.0"

__all__ = [
    "CARDS",
    "ENGINE_VERSION",
    "PRESETS",
    "SUIT_MASKS",
    "Action",
    "Card",
    "CardMask",
    "CardParseError",
    "Contract",
    "Decision",
    "Direction",
    "Event",
    "Faces",
    "FaultPolicy",
    "Forfeit",
    "HandResult",
    "HandScore",
    "IllegalDecision",
    "Match",
    "MatchStatus",
    "Penalty",
    "Phase",
    "PlayerView",
    "PolignacError",
    "Rank",
    "RecordError",
    "RemovedSevens",
    "Ruleset",
    "RulesetError",
    "ScoreException",
    "Suit",
    "Tiebreak",
    "Trick",
    "Trumps",
    "card_name",
    "card_text",
    "cards_each",
    "cards_in",
    "fallback",
    "mask_of",
    "parse_cards",
    "parse_decision",
    "parse_face",
    "preset",
    "rank_name",
    "redact",
    "suit_name",
]
