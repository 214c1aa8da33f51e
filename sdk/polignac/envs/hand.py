"""One hand as a small state machine of actions: the deal card by card, the auction, the play.

The OpenSpiel game (:mod:`polignac.envs.openspiel`) is a thin shell around :class:`HandState`,
which is pure (no OpenSpiel, no numpy) and plays by the engine's rules: the card play and
the scores are :class:`polignac.playout.Playout`'s, which scores as the engine does.  A hand
starts at the deal (:meth:`HandState.new`: every chance step deals the next card, in the
engine's packets from eldest hand) or in the middle of an arena match, from a seat's view
and a guess at the hidden cards (:meth:`HandState.from_view`), which is how OpenSpiel's bots
play in the arena; tie-break hands among fewer seats and the referee's fault points are kept.

Actions are those of :mod:`polignac.envs.encoding`; returns are the hand's scores signed so
that higher is better (negated where lower totals win).
"""

from __future__ import annotations

import random
from typing import Final

from polignac.cards import CARDS, Card, cards_in
from polignac.envs.encoding import CARD_ACTIONS, action_of, decision_of
from polignac.errors import IllegalDecision, PolignacError
from polignac.playout import Playout, sample_hands
from polignac.rules import HandScore, Ruleset, Tiebreak, Trumps, cards_each, deck_mask, enabled_contracts, packet_sizes
from polignac.slots import copy_slots
from polignac.values import Contract, Decision, Phase, Trick
from polignac.view import PlayerView

__all__ = ["HandState", "return_bounds"]

DEAL: Final = 0
AUCTION: Final = 1
PLAY: Final = 2
OVER: Final = 3


class HandState:
    """A hand being dealt or played; mutable, copied by :meth:`copy`."""

    __slots__ = (
        "auction",
        "context",
        "contract",
        "contracts",
        "current",
        "deal_order",
        "dealer",
        "dealt",
        "deck",
        "declarer",
        "eldest",
        "hands",
        "penalties",
        "phase",
        "play",
        "rules",
        "seats",
        "sequence",
        "to_act",
        "tricks",
        "turned",
    )

    rules: Ruleset
    seats: tuple[int, ...]
    dealer: int
    eldest: int
    deck: int
    deal_order: tuple[int, ...]
    """The seat that receives each card of the deal, in order."""
    dealt: list[int]
    """Each seat's cards as dealt (a mask; filled during the deal)."""
    hands: list[int]
    """Each seat's cards between the deal and the play (the playout holds them during the play)."""
    turned: Card | None
    phase: int
    contracts: bool
    auction: list[tuple[int, Contract]]
    contract: Contract
    declarer: int | None
    play: Playout | None
    tricks: list[Trick]
    current: list[tuple[int, Card]]
    sequence: list[int]
    """Every card played this hand, in order (the current trick's included)."""
    to_act: int
    penalties: tuple[int, ...]
    context: tuple[int, bool, tuple[int, ...], tuple[int, ...]]
    """What a view shows of the match around the hand: hand number, tie-break, totals, forfeited seats."""

    @classmethod
    def new(cls, rules: Ruleset, dealer: int | None = None) -> HandState:
        """A hand of ``rules`` among every seat, about to be dealt by ``dealer`` (default: the last seat)."""
        n = rules.players
        dealer = n - 1 if dealer is None else dealer
        if type(dealer) is not int or not 0 <= dealer < n:
            raise PolignacError(f"dealer must be a seat from 0 to {n - 1}, got {dealer!r}")
        self = object.__new__(cls)
        self._start(rules, tuple(range(n)), dealer, rules.contracts)
        self.context = (1, False, (0,) * n, ())
        return self

    @classmethod
    def from_view(cls, view: PlayerView, rng: random.Random) -> HandState:
        """The hand ``view`` is in, the unseen cards dealt at random consistently with it (:func:`polignac.playout.sample_hands`)."""
        if view.phase is Phase.OVER or view.to_act is None:
            raise PolignacError("the match is over: there is no hand to play")
        rules = view.rules
        self = object.__new__(cls)
        contracts = rules.contracts and not (view.tiebreak and rules.tiebreak is Tiebreak.TIED)
        self._start(rules, view.seats, view.dealer, contracts)
        self.context = (view.hand_number, view.tiebreak, view.totals, view.forfeited)
        self.penalties = view.penalties
        hands = sample_hands(view, rng)
        for trick in view.tricks:
            for seat, card in trick.plays:
                self.dealt[seat] |= card.bit
                self.sequence.append(card.index)
        for seat, card in view.current_trick:
            self.dealt[seat] |= card.bit
            self.sequence.append(card.index)
        for seat in self.seats:
            self.dealt[seat] |= hands[seat]
        self.hands = hands
        self.turned = view.turned
        self.tricks = list(view.tricks)
        self.current = list(view.current_trick)
        self.auction = list(view.auction)
        self.contract = view.contract
        self.declarer = view.declarer
        if view.phase is Phase.AUCTION:
            self.phase = AUCTION
            self.to_act = view.to_act
        else:
            self._start_play(view.to_act)
        return self

    def _start(self, rules: Ruleset, seats: tuple[int, ...], dealer: int, contracts: bool) -> None:
        n = rules.players
        self.rules = rules
        self.seats = seats
        self.dealer = dealer
        self.eldest = seats[(seats.index(dealer) + 1) % len(seats)]
        self.deck = deck_mask(rules, len(seats))
        each = cards_each(rules, len(seats))
        start = seats.index(self.eldest)
        order = seats[start:] + seats[:start]
        self.deal_order = tuple(seat for size in packet_sizes(each, rules.pack) for seat in order for _ in range(size))
        self.dealt = [0] * n
        self.hands = [0] * n
        self.turned = None
        self.phase = DEAL
        self.contracts = contracts
        self.auction = []
        self.contract = Contract.PASS
        self.declarer = None
        self.play = None
        self.tricks = []
        self.current = []
        self.sequence = []
        self.to_act = -1
        self.penalties = (0,) * n

    def copy(self) -> HandState:
        """An independent copy."""
        other = copy_slots(self, HandState.__slots__)
        if self.play is not None:
            other.play = self.play.copy()
        return other

    def __deepcopy__(self, memo: dict[int, object]) -> HandState:
        return self.copy()

    # -- reading ---------------------------------------------------------------------------

    @property
    def is_chance(self) -> bool:
        """True while the cards are being dealt."""
        return self.phase == DEAL

    @property
    def is_over(self) -> bool:
        """True once the last trick is taken."""
        return self.phase == OVER

    def hand_mask(self, seat: int) -> int:
        """``seat``'s unplayed cards now."""
        if self.play is not None:
            return self.play.hands[seat]
        return self.dealt[seat] if self.phase == DEAL else self.hands[seat]

    def chance_outcomes(self) -> list[int]:
        """The cards the next card of the deal may be (each equally likely)."""
        dealt = 0
        for mask in self.dealt:
            dealt |= mask
        return sorted(c.index for c in cards_in(self.deck & ~dealt))

    def legal_actions(self) -> list[int]:
        """The actions of the seat to act, ascending (empty while dealing and at the end)."""
        if self.phase == PLAY:
            assert self.play is not None
            return sorted(c.index for c in cards_in(self.play.legal_mask()))
        if self.phase == AUCTION:
            return sorted(action_of(c) for c in enabled_contracts(self.rules))
        return []

    def scores(self) -> list[int]:
        """The hand's scores by seat, as the engine scores them; the hand must be over."""
        if self.play is None or not self.is_over:
            raise PolignacError("the hand is not over")
        return self.play.scores()

    def returns(self) -> list[float]:
        """Each seat's return: its score, negated where lower is better (0 before the end)."""
        if not self.is_over:
            return [0.0] * self.rules.players
        against = self.rules.against
        return [float(-against * s) for s in self.scores()]

    # -- acting ----------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        """Deal the card ``action`` (while dealing) or take the action for the seat to act."""
        if self.phase == DEAL:
            if type(action) is not int or not 0 <= action < CARD_ACTIONS or not self.deck >> action & 1:
                raise IllegalDecision(f"{action!r} is not a card of this hand's pack")
            bit = 1 << action
            if any(mask & bit for mask in self.dealt):
                raise IllegalDecision(f"{CARDS[action]} has been dealt already")
            dealt = sum(mask.bit_count() for mask in self.dealt)
            self.dealt[self.deal_order[dealt]] |= bit
            if dealt + 1 == len(self.deal_order):
                self._finish_deal()
            return
        decision = decision_of(action)
        if self.phase == AUCTION:
            if not isinstance(decision, Contract) or decision not in enabled_contracts(self.rules):
                raise IllegalDecision(f"seat {self.to_act} must pass or declare, not {decision}")
            self._declare(decision)
        elif self.phase == PLAY:
            assert self.play is not None
            if not isinstance(decision, Card) or not self.play.legal_mask() & decision.bit:
                raise IllegalDecision(f"seat {self.to_act} may not play {decision} now")
            self._play(decision)
        else:
            raise IllegalDecision("the hand is over")

    def _finish_deal(self) -> None:
        self.hands = list(self.dealt)
        dealt = 0
        for mask in self.dealt:
            dealt |= mask
        if self.rules.trumps is Trumps.TURNED:
            self.turned = cards_in(self.deck & ~dealt)[0]
        if self.contracts:
            self.phase = AUCTION
            self.to_act = self.eldest
        else:
            self._start_play(self.eldest)

    def _declare(self, contract: Contract) -> None:
        seat = self.to_act
        self.auction.append((seat, contract))
        if contract is not Contract.PASS:
            self.contract = contract
            self.declarer = seat
        if contract is not Contract.PASS or len(self.auction) == len(self.seats):
            self._start_play(self.eldest)
        else:
            self.to_act = self.seats[(self.seats.index(seat) + 1) % len(self.seats)]

    def _start_play(self, to_act: int) -> None:
        trump = -1 if self.turned is None else int(self.turned.suit)
        self.play = Playout._build(  # the playout's own constructor: this package's, used as from_view uses it
            self.rules,
            self.seats,
            self.hands,
            to_act,
            tuple(self.current),
            tuple(self.tricks),
            self.contract,
            self.declarer,
            self.penalties,
            self.eldest,
            trump,
        )
        self.phase = PLAY
        self.to_act = to_act

    def _play(self, card: Card) -> None:
        play = self.play
        assert play is not None
        seat = self.to_act
        play.play(card.index)
        self.current.append((seat, card))
        self.sequence.append(card.index)
        if play.trick_len == 0:
            self.tricks.append(Trick(tuple(self.current), play.to_act))
            self.current = []
        self.to_act = play.to_act
        if play.is_over:
            self.phase = OVER

    def play_out(self, rng: random.Random) -> list[float]:
        """The returns of the rest of the hand played uniformly at random (the auction too); this state is left alone."""
        if self.phase == DEAL:
            raise PolignacError("the cards are still being dealt")
        state = self
        if self.phase == AUCTION:
            state = self.copy()
            while state.phase == AUCTION:
                options = enabled_contracts(state.rules)
                state._declare(options[int(rng.random() * len(options))])
        if state.phase == OVER:
            return state.returns()
        assert state.play is not None
        scores = state.play.copy().run(rng.random)
        against = self.rules.against
        return [float(-against * s) for s in scores]

    def resampled(self, seat: int, rng: random.Random) -> HandState:
        """A copy in which the cards ``seat`` cannot see are dealt again, consistently with what it saw."""
        if self.phase in (DEAL, OVER):
            raise PolignacError("only a hand being played can be dealt again")
        hands = sample_hands(self.view(seat), rng)
        other = self.copy()
        for s in self.seats:
            if s != seat:
                other.dealt[s] = other.dealt[s] & ~self.hand_mask(s) | hands[s]
        if other.play is not None:
            other.play.hands = hands
        else:
            other.hands = hands
        return other

    # -- what a seat sees ------------------------------------------------------------------

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may know now, as the arena's bots are shown it."""
        hand_number, tiebreak, totals, forfeited = self.context
        if self.phase == OVER:
            phase = Phase.OVER
        elif self.phase == AUCTION or (self.phase == DEAL and self.contracts):
            phase = Phase.AUCTION
        else:
            phase = Phase.PLAY
        to_act = self.to_act if self.phase in (AUCTION, PLAY) else None
        legal: tuple[Decision, ...] = ()
        if to_act == seat:
            legal = tuple(decision_of(a) for a in self.legal_actions())
        return PlayerView(
            rules=self.rules,
            seat=seat,
            hand_number=hand_number,
            dealer=self.dealer,
            eldest=self.eldest,
            seats=self.seats,
            tiebreak=tiebreak,
            phase=phase,
            to_act=to_act,
            hand=tuple(cards_in(self.hand_mask(seat))),
            auction=tuple(self.auction),
            contract=self.contract,
            declarer=self.declarer,
            tricks=tuple(self.tricks),
            current_trick=tuple(self.current),
            totals=totals,
            penalties=self.penalties,
            forfeited=forfeited,
            legal=legal,
            turned=self.turned,
        )


def return_bounds(rules: Ruleset) -> tuple[float, float]:
    """The lowest and highest return a seat can have in a hand of ``rules`` (without fault points)."""
    against = rules.against
    if rules.hand_score is HandScore.PLACE:
        scores = [*rules.place_scores, *rules.every_trick_scores, *rules.big_take_scores]
        returns = [-against * s for s in scores]
        return float(min(returns)), float(max(returns))
    per_trick = -against * rules.trick_points * (rules.pack // 2)
    contract = rules.contract_points if rules.contracts else 0
    general = -rules.general_points if rules.general else 0  # the declarer's return for a made general
    low = min(min(0, per_trick) - rules.points_per_hand - contract, -contract, general)
    high = max(0, per_trick, general)
    return float(low), float(high)
