"""Actions as numbers and a seat's view as fixed-size arrays: what the research environments and adapters share.

One discrete action space serves every ruleset: action ``i`` below 52 plays the card of index
``i`` (:attr:`polignac.Card.index`: the 32 Piquet cards first, then the low cards of the 52-card
pack), 52 passes, 53 declares capot and 54 declares general.  The 32-card games never make
the actions 32..51 legal.

An observation is a flat ``float32`` vector made of named parts (:func:`observation_layout`
gives each one's slice and shape).  Seats in it are *relative*: row 0 is the observing seat,
row 1 the seat to its left (the next to play after it), and so on, so that a policy sees every
seat of the table alike.  Every part holds 0 or 1 but ``tricks_won`` (tricks taken over the
hand's tricks) and ``totals`` (match totals over the ruleset's ``limit``, clipped to
:data:`TOTALS_CLIP`).  docs/research.md has the table.

>>> from polignac import Match, preset
>>> match = Match(preset("classic"), seed=7)
>>> vector = encode(match.view(0))
>>> vector.shape, observation_size(4)
((763,), 763)
>>> [decision_of(a) for a in legal_actions(match.view(0))]
[<Contract.PASS: 'pass'>, <Contract.CAPOT: 'capot'>]
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from polignac.cards import CARDS, Card
from polignac.rules import cards_each
from polignac.values import Contract, Decision, Phase
from polignac.view import PlayerView

__all__ = [
    "ACTIONS",
    "CAPOT_ACTION",
    "CARD_ACTIONS",
    "GENERAL_ACTION",
    "PASS_ACTION",
    "TOTALS_CLIP",
    "action_mask",
    "action_of",
    "decision_of",
    "encode",
    "legal_actions",
    "observation_bounds",
    "observation_layout",
    "observation_size",
    "unflatten",
]

CARD_ACTIONS: Final = 52
"""Actions 0..51 play the card of that index."""
PASS_ACTION: Final = 52
CAPOT_ACTION: Final = 53
GENERAL_ACTION: Final = 54
ACTIONS: Final = 55
"""The size of the action space, the same in every ruleset."""
TOTALS_CLIP: Final = 8.0
"""``totals`` are in units of the ruleset's limit, clipped to this many either way."""

_CONTRACT_ACTIONS: Final = {Contract.PASS: PASS_ACTION, Contract.CAPOT: CAPOT_ACTION, Contract.GENERAL: GENERAL_ACTION}
_CONTRACT_OF: Final = {a: c for c, a in _CONTRACT_ACTIONS.items()}
_CONTRACT_ROW: Final = {Contract.PASS: 0, Contract.CAPOT: 1, Contract.GENERAL: 2}


def action_of(decision: Decision) -> int:
    """The action number of a card or an auction decision."""
    if isinstance(decision, Card):
        return decision.index
    if isinstance(decision, Contract):
        return _CONTRACT_ACTIONS[decision]
    raise ValueError(f"not a card or a contract: {decision!r}")


def decision_of(action: int) -> Decision:
    """The card or auction decision of an action number (numpy integers too); ``ValueError`` out of range."""
    try:
        number = int(action)
    except (TypeError, ValueError):
        raise ValueError(f"an action is an integer in 0..{ACTIONS - 1}, got {action!r}") from None
    if number != action or not 0 <= number < ACTIONS:
        raise ValueError(f"an action is an integer in 0..{ACTIONS - 1}, got {action!r}")
    return CARDS[number] if number < CARD_ACTIONS else _CONTRACT_OF[number]


def legal_actions(view: PlayerView) -> list[int]:
    """The actions ``view``'s seat may take now, ascending (empty when it is not its turn)."""
    return sorted(action_of(d) for d in view.legal)


def action_mask(view: PlayerView) -> npt.NDArray[np.int8]:
    """1 for each action ``view``'s seat may take now, 0 for the others."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    for decision in view.legal:
        mask[action_of(decision)] = 1
    return mask


def _parts(players: int) -> list[tuple[str, tuple[int, ...]]]:
    n = players
    return [
        ("hand", (52,)),  # the seat's unplayed cards
        ("played", (n, 52)),  # cards played this hand, by relative seat (the current trick included)
        ("trick", (n, 52)),  # the current trick's card of each relative seat
        ("taken", (n, 52)),  # cards each relative seat has taken in tricks this hand
        ("leader", (n,)),  # the relative seat that led (or leads) the current trick
        ("dealer", (n,)),
        ("seated", (n,)),  # the seats playing this hand (fewer in a tie-break)
        ("auction", (n, 3)),  # each relative seat's pass / capot / general this hand
        ("tricks_won", (n,)),  # tricks taken this hand over the hand's tricks
        ("totals", (n,)),  # match totals over the limit, clipped to TOTALS_CLIP
        ("turned", (52,)),  # the card turned for trumps (Knaves)
        ("phase", (2,)),  # auction, play
        ("tiebreak", (1,)),  # a tie-break hand
    ]


def observation_layout(players: int) -> dict[str, tuple[slice, tuple[int, ...]]]:
    """Each part's slice of the observation vector and its shape, in order, for a table of ``players``."""
    if type(players) is not int or not 3 <= players <= 6:
        raise ValueError(f"players must be an integer in 3..6, got {players!r}")
    layout = {}
    offset = 0
    for name, shape in _parts(players):
        size = int(np.prod(shape))
        layout[name] = (slice(offset, offset + size), shape)
        offset += size
    return layout


def observation_size(players: int) -> int:
    """The length of the observation vector for a table of ``players``."""
    return int(max(s.stop for s, _ in observation_layout(players).values()))


def observation_bounds(players: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The lowest and highest value of each entry (0 and 1 but for the clipped ``totals``)."""
    low = np.zeros(observation_size(players), dtype=np.float32)
    high = np.ones_like(low)
    totals, _ = observation_layout(players)["totals"]
    low[totals] = -TOTALS_CLIP
    high[totals] = TOTALS_CLIP
    return low, high


def unflatten(vector: npt.NDArray[np.float32], players: int) -> dict[str, npt.NDArray[np.float32]]:
    """The named parts of an observation vector, as reshaped views of it."""
    return {name: vector[part].reshape(shape) for name, (part, shape) in observation_layout(players).items()}


_LAYOUTS: dict[int, dict[str, tuple[slice, tuple[int, ...]]]] = {}


def encode(view: PlayerView, out: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float32]:
    """``view`` as an observation vector (written into ``out`` when given, else a new array)."""
    n = view.rules.players
    layout = _LAYOUTS.get(n)
    if layout is None:
        layout = _LAYOUTS.setdefault(n, observation_layout(n))
    if out is None:
        out = np.zeros(observation_size(n), dtype=np.float32)
    else:
        out.fill(0.0)
    me = view.seat

    def row(part: str, seat: int) -> int:
        return int(layout[part][0].start) + (seat - me) % n * 52

    def at(part: str, seat: int) -> int:
        return int(layout[part][0].start) + (seat - me) % n

    hand = layout["hand"][0].start
    for card in view.hand:
        out[hand + card.index] = 1.0
    for trick in view.tricks:
        for seat, card in trick.plays:
            out[row("played", seat) + card.index] = 1.0
            out[row("taken", trick.winner) + card.index] = 1.0
    for seat, card in view.current_trick:
        out[row("played", seat) + card.index] = 1.0
        out[row("trick", seat) + card.index] = 1.0
    if view.phase is Phase.PLAY:
        if view.current_trick:
            leader = view.current_trick[0][0]
        elif view.tricks:
            leader = view.tricks[-1].winner
        else:
            leader = view.eldest
        out[at("leader", leader)] = 1.0
    out[at("dealer", view.dealer)] = 1.0
    for seat in view.seats:
        out[at("seated", seat)] = 1.0
    auction = layout["auction"][0].start
    for seat, contract in view.auction:
        out[auction + (seat - me) % n * 3 + _CONTRACT_ROW[contract]] = 1.0
    # Counted first and divided once: adding 1/tricks in float32 can pass 1.0 for a capot.
    tricks = cards_each(view.rules, len(view.seats))
    won = [0] * n
    for trick in view.tricks:
        won[trick.winner] += 1
    for seat, count in enumerate(won):
        if count:
            out[at("tricks_won", seat)] = count / tricks
    limit = view.rules.limit
    for seat, total in enumerate(view.totals):
        out[at("totals", seat)] = min(TOTALS_CLIP, max(-TOTALS_CLIP, total / limit))
    if view.turned is not None:
        out[layout["turned"][0].start + view.turned.index] = 1.0
    if view.phase is Phase.AUCTION:
        out[layout["phase"][0].start] = 1.0
    elif view.phase is Phase.PLAY:
        out[layout["phase"][0].start + 1] = 1.0
    if view.tiebreak:
        out[layout["tiebreak"][0].start] = 1.0
    return out
