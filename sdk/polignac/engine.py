"""The match state machine: the whole of docs/rules.md, pure (no I/O, no clock, no globals).

A :class:`Match` goes hand by hand: deal (derived from the seed; a card turned for trumps where the ruleset
turns one), auction (when capot or general is enabled), the tricks, scoring, and so on until a total reaches
the limit; then tie-break hands if first place is tied (among the tied, or whole hands among all:
``Ruleset.tiebreak``).  Callers ask who is to act (:attr:`Match.to_act`), what is legal
(:meth:`Match.legal_decisions`) and :meth:`Match.apply` a decision.  An illegal decision raises
:class:`IllegalDecision` and changes nothing.  The referee's side of docs/rules.md 8 is three calls:
:meth:`Match.fallback`, :meth:`Match.add_penalty` and :meth:`Match.forfeit`.  The points settled here where
the rules are silent are listed in docs/rules.md ("Points the engine settles").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from polignac.cards import SUIT_MASKS, Card, Suit, cards_in
from polignac.deal import check_seed, deal_hands, shuffled_pack
from polignac.errors import IllegalDecision, PolignacError
from polignac.events import (
    CardPlayed,
    Declared,
    Event,
    Forfeited,
    HandDealt,
    HandEnded,
    MatchEnded,
    PenaltyAdded,
    TiebreakStarted,
    TrickWon,
)
from polignac.faults import fallback
from polignac.illegal import why_illegal
from polignac.match_record import MatchRecord, apply_entry, make_record, replay_record
from polignac.match_setup import check_deals, check_first_dealer, check_first_hand, check_totals
from polignac.rules import Ruleset, Tiebreak, Trumps, cards_each, deck_mask, enabled_contracts, packet_sizes
from polignac.scoring import score_hand
from polignac.slots import copy_slots
from polignac.standings import final_places
from polignac.values import (
    Action,
    ActionRecord,
    Contract,
    Decision,
    Forfeit,
    HandResult,
    Penalty,
    Phase,
    Trick,
    action_to_record,
    parse_decision,
)
from polignac.view import PlayerView, player_view

__all__ = ["ENGINE_VERSION", "Decision", "Match", "Phase", "Trick", "parse_decision"]

ENGINE_VERSION: Final = "1.1.0"
"""Changes whenever the same record could replay differently."""

_PLAY: Final = Phase.PLAY
_AUCTION: Final = Phase.AUCTION


class Match:
    """A whole Polignac match among ``rules.players`` seats, derived from ``seed``.

    >>> m = Match(Ruleset(), seed=7)
    >>> m.phase, m.to_act, len(m.hand(0))
    (<Phase.AUCTION: 'auction'>, 0, 8)
    """

    __slots__ = (
        "_auction",
        "_contenders",
        "_contract",
        "_dealer",
        "_deals",
        "_declarer",
        "_events",
        "_finished_tricks",
        "_first_dealer",
        "_first_hand",
        "_forfeited",
        "_hand_number",
        "_hands",
        "_knocked_out",
        "_led_suit_mask",
        "_log",
        "_next_seat",
        "_penalties",
        "_phase",
        "_places",
        "_results",
        "_seats",
        "_start_totals",
        "_taken",
        "_tiebreak_round",
        "_to_act",
        "_totals",
        "_trick",
        "_tricks_per_hand",
        "_tricks_won",
        "_trump_mask",
        "_turned",
        "rules",
        "seed",
    )

    # The state, all set in __init__ and _start_hand.
    _phase: Phase
    _to_act: int  # meaningless once the match is over
    _hand_number: int
    _dealer: int
    _first_dealer: int
    _seats: list[int]
    _next_seat: dict[int, int]
    _hands: list[int]
    _taken: list[int]
    _tricks_won: list[int]
    _penalties: list[int]
    _trick: list[tuple[int, Card]]
    _finished_tricks: list[Trick]
    _led_suit_mask: int
    _tricks_per_hand: int
    _auction: list[tuple[int, Contract]]
    _contract: Contract
    _declarer: int | None
    _turned: Card | None
    _trump_mask: int

    def __init__(
        self,
        rules: Ruleset,
        seed: int,
        *,
        start_totals: Sequence[int] | None = None,
        deals: Mapping[int, Sequence[Sequence[Card | str]]] | None = None,
        first_dealer: int | None = None,
        first_hand: int = 1,
    ) -> None:
        """Start a match; its first hand is dealt at once.

        ``start_totals`` gives the seats starting scores (a handicap, or a scenario in a test).
        ``deals`` replaces the seeded shuffle for some hands: ``deals[hand_number]`` lists the
        cards of each seat playing that hand, in seat order (hand numbers count tie-break hands
        too).  Whether hand N is a tie-break, and for how many, depends on the play, so a deal
        is used only when hand N is played by as many seats as it has hands; otherwise hand N
        is dealt from the seed as usual, and the match always goes on.  ``first_dealer`` deals
        hand 1 (default: the last seat, so that seat 0 is eldest hand, docs/rules.md 2).
        ``first_hand`` numbers the first hand played (default 1): a match that takes up a seeded
        match at hand k deals the same cards as its hand k, k+1, ... (see :mod:`polignac.rerun`);
        ``first_dealer`` then deals hand k.  All four go into the record.
        """
        if not isinstance(rules, Ruleset):
            raise PolignacError(f"rules must be a Ruleset, got {rules!r}")
        self.rules: Final = rules
        self.seed: Final = check_seed(seed)
        n = rules.players
        self._start_totals = check_totals(start_totals, n)
        self._deals = check_deals(deals, rules)
        self._totals = list(self._start_totals)
        self._forfeited: list[int] = []
        self._events: list[Event] = []
        self._log: list[Action] = []
        self._places: tuple[int, ...] | None = None
        self._contenders: list[int] = []  # tie-break players still in, table order
        self._knocked_out: list[int] = []  # tied players eliminated by a tie-break
        self._tiebreak_round = 0
        self._results: list[HandResult] = []
        self._first_hand = check_first_hand(first_hand)
        self._hand_number = self._first_hand - 1
        self._first_dealer = check_first_dealer(first_dealer, n)
        self._start_hand(list(range(n)), dealer=self._first_dealer)

    # -- reading the state ---------------------------------------------------------------

    @property
    def players(self) -> int:
        """Seats at the table (3..6)."""
        return self.rules.players

    @property
    def phase(self) -> Phase:
        """AUCTION, PLAY or OVER."""
        return self._phase

    @property
    def is_over(self) -> bool:
        """True once the standings are final."""
        return self._phase is Phase.OVER

    @property
    def to_act(self) -> int | None:
        """The seat whose decision is awaited, or ``None`` when the match is over."""
        return None if self._phase is Phase.OVER else self._to_act

    @property
    def hand_number(self) -> int:
        """The current (or last) hand, counting from 1; tie-break hands continue the count."""
        return self._hand_number

    @property
    def dealer(self) -> int:
        """The dealer of the current hand."""
        return self._dealer

    @property
    def seats(self) -> tuple[int, ...]:
        """The seats playing the current hand, in table order (all of them outside tie-breaks)."""
        return tuple(self._seats)

    @property
    def eldest(self) -> int:
        """The player to the dealer's left in this hand: first to speak and to lead."""
        return self._next_seat[self._dealer]

    @property
    def is_tiebreak(self) -> bool:
        """True while tie-break hands are being played."""
        return self._tiebreak_round > 0

    @property
    def totals(self) -> tuple[int, ...]:
        """Cumulative totals by seat (tie-break hands among the tied do not enter them; play-on hands do)."""
        return tuple(self._totals)

    @property
    def turned(self) -> Card | None:
        """The card turned face up for trumps this hand (every seat sees it), or ``None``."""
        return self._turned

    @property
    def trump(self) -> Suit | None:
        """This hand's trump suit, or ``None``."""
        return None if self._turned is None else self._turned.suit

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        """Every finished hand's result, in order (tie-break hands included)."""
        return tuple(self._results)

    @property
    def places(self) -> tuple[int, ...] | None:
        """Final places by seat (1 is first; equal places are ties), or ``None`` before the end."""
        return self._places

    @property
    def forfeited(self) -> tuple[int, ...]:
        """Seats that forfeited, in the order they did."""
        return tuple(self._forfeited)

    @property
    def contract(self) -> Contract:
        """The contract of this hand (``Contract.PASS`` when nobody declared)."""
        return self._contract

    @property
    def declarer(self) -> int | None:
        """The seat that declared this hand's contract, if any."""
        return self._declarer

    @property
    def auction(self) -> tuple[tuple[int, Contract], ...]:
        """This hand's auction so far: ``(seat, decision)`` pairs."""
        return tuple(self._auction)

    @property
    def current_trick(self) -> tuple[tuple[int, Card], ...]:
        """The cards played to the unfinished trick: ``(seat, card)`` pairs in play order."""
        return tuple(self._trick)

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The completed tricks of this hand."""
        return tuple(self._finished_tricks)

    @property
    def events(self) -> tuple[Event, ...]:
        """Everything that happened so far, in order (deals show every hand)."""
        return tuple(self._events)

    @property
    def event_count(self) -> int:
        """How many events there are; lets callers fetch only new ones with :meth:`events_since`."""
        return len(self._events)

    def events_since(self, start: int) -> list[Event]:
        """The events from index ``start`` on."""
        return self._events[start:]

    @property
    def penalties(self) -> tuple[int, ...]:
        """Extra points added this hand by seat, scored when the hand ends."""
        return tuple(self._penalties)

    def hand(self, seat: int) -> list[Card]:
        """The unplayed cards of ``seat``, in index order."""
        return cards_in(self._hands[self._check_seat(seat)])

    def hand_mask(self, seat: int) -> int:
        """The unplayed cards of ``seat`` as a bitmask."""
        return self._hands[self._check_seat(seat)]

    def taken_mask(self, seat: int) -> int:
        """The cards ``seat`` has taken in tricks this hand, as a bitmask."""
        return self._taken[self._check_seat(seat)]

    def tricks_won(self, seat: int) -> int:
        """How many tricks ``seat`` has won this hand."""
        return self._tricks_won[self._check_seat(seat)]

    # -- decisions -----------------------------------------------------------------------

    def legal_mask(self) -> int:
        """The cards the player to act may play, as a bitmask (0 outside the play phase)."""
        if self._phase is not Phase.PLAY:
            return 0
        hand = self._hands[self._to_act]
        if self._trick:
            follow = hand & self._led_suit_mask
            if follow:
                return follow
        return hand

    def legal_cards(self) -> list[Card]:
        """The cards the player to act may play (empty outside the play phase)."""
        return cards_in(self.legal_mask())

    def legal_decisions(self) -> list[Decision]:
        """Every decision the player to act may make; empty only when the match is over."""
        phase = self._phase
        if phase is _PLAY:
            hand = self._hands[self._to_act]
            if self._trick and hand & self._led_suit_mask:
                hand &= self._led_suit_mask
            return cards_in(hand)  # type: ignore[return-value]  # list is invariant
        if phase is _AUCTION:
            return enabled_contracts(self.rules)  # type: ignore[return-value]  # list is invariant
        return []

    def is_legal(self, decision: object) -> bool:
        """True when :meth:`apply` would accept ``decision`` now."""
        if isinstance(decision, Card):
            return bool(self.legal_mask() & decision.bit)
        return self._phase is Phase.AUCTION and decision in enabled_contracts(self.rules)

    def fallback(self) -> Decision:
        """The decision the referee substitutes for a faulty one (docs/rules.md 8).

        In the auction: pass.  In play: the lowest legal card in trick order, plain suits
        before trumps; on equal rank, the first in suit order S H D C
        (:func:`polignac.faults.fallback`).
        """
        if self._phase is Phase.OVER:
            raise IllegalDecision("the match is over: no decision is pending")
        return fallback(self.rules, self.legal_decisions(), trump=self.trump)

    def apply(self, decision: Decision) -> None:
        """Play a card or make an auction decision for the seat to act.

        Raises :class:`IllegalDecision` (state unchanged) when it is not legal now.
        """
        if type(decision) is Card and self._phase is _PLAY:
            # The hot path of every simulation, kept inline.
            seat = self._to_act
            hand = self._hands[seat]
            bit = decision.bit
            trick = self._trick
            if not hand & bit or (trick and not bit & self._led_suit_mask and hand & self._led_suit_mask):
                raise IllegalDecision(why_illegal(self, decision))
            self._hands[seat] = hand ^ bit
            if not trick:
                self._led_suit_mask = SUIT_MASKS[decision.suit]
            trick.append((seat, decision))
            self._events.append(CardPlayed(seat, decision))
            self._log.append(decision)
            if len(trick) < len(self._seats):
                self._to_act = self._next_seat[seat]
            else:
                self._finish_trick()
        elif self._phase is _AUCTION and isinstance(decision, Contract):
            self._declare(decision)
        else:
            raise IllegalDecision(why_illegal(self, decision))

    def apply_text(self, text: str) -> None:
        """Parse and apply a decision given as text (``"JS"``, ``"pass"``, ``"capot"``)."""
        try:
            decision = parse_decision(text)
        except PolignacError as exc:
            raise IllegalDecision(str(exc)) from None
        self.apply(decision)

    def _declare(self, contract: Contract) -> None:
        if (contract is Contract.CAPOT and not self.rules.capot) or (contract is Contract.GENERAL and not self.rules.general):
            raise IllegalDecision(why_illegal(self, contract))
        seat = self._to_act
        self._auction.append((seat, contract))
        self._events.append(Declared(seat, contract))
        self._log.append(contract)
        if contract is not Contract.PASS:
            self._contract = contract
            self._declarer = seat
        if contract is not Contract.PASS or len(self._auction) == len(self._seats):
            self._phase = Phase.PLAY
            self._to_act = self._next_seat[self._dealer]
        else:
            self._to_act = self._next_seat[seat]

    def _finish_trick(self) -> None:
        strength = self.rules.strength
        plays = tuple(self._trick)
        winner, best, mask = -1, -1, 0
        led_mask = self._led_suit_mask
        for seat, card in plays:
            bit = card.bit
            mask |= bit
            if bit & led_mask and strength[card.index] > best:
                winner, best = seat, strength[card.index]
        if mask & self._trump_mask:  # the highest trump wins instead
            winner, best = -1, -1
            for seat, card in plays:
                if card.bit & self._trump_mask and strength[card.index] > best:
                    winner, best = seat, strength[card.index]
        tricks = self._finished_tricks
        tricks.append(Trick(plays, winner))
        self._taken[winner] |= mask
        self._tricks_won[winner] += 1
        self._events.append(TrickWon(len(tricks), plays[0][0], winner, tuple([c for _, c in plays]), tuple([s for s, _ in plays])))
        self._trick = []
        self._to_act = winner
        if len(tricks) == self._tricks_per_hand:
            self._finish_hand()

    # -- the referee's calls -------------------------------------------------------------

    def add_penalty(self, seat: int, points: int, reason: str) -> None:
        """Add extra points (a revoke or a timeout) that ``seat`` scores when this hand ends."""
        self._check_seat(seat)
        if type(points) is not int or not 0 <= points <= 1000:
            raise PolignacError(f"penalty points must be an integer in 0..1000, got {points!r}")
        if not isinstance(reason, str) or not reason:
            raise PolignacError(f"a penalty needs a reason, got {reason!r}")
        if self._phase is Phase.OVER:
            raise IllegalDecision("the match is over: no penalty can be added")
        if seat not in self._seats:
            raise IllegalDecision(f"seat {seat} is not playing this hand")
        self._penalties[seat] += points
        self._events.append(PenaltyAdded(seat, points, reason))
        self._log.append(Penalty(seat, points, reason))

    def forfeit(self, seat: int, reason: str = "forfeit") -> None:
        """``seat`` forfeits (docs/rules.md 8): it ranks last and the match ends, or goes on without it.

        In the regular match, the unfinished hand scores nothing and the others are ranked
        by their totals, with tie-break hands if first place is tied.  A tie-break hand is
        abandoned (it scores nothing but counts toward ``tiebreak_hands``): the remaining tied
        players play the next one if any is left, else share first place.  With ``tiebreak = "play-on"`` the match ends at
        once and a tie among the others stands.
        """
        self._check_seat(seat)
        if not isinstance(reason, str) or not reason:
            raise PolignacError(f"a forfeit needs a reason, got {reason!r}")
        if self._phase is Phase.OVER:
            raise IllegalDecision("the match is over: nobody can forfeit")
        if seat in self._forfeited:
            raise IllegalDecision(f"seat {seat} has already forfeited")
        in_hand = seat in self._seats
        self._forfeited.append(seat)
        self._events.append(Forfeited(seat, reason, in_hand))
        self._log.append(Forfeit(seat, reason))
        if self.rules.tiebreak is Tiebreak.PLAY_ON:
            self._finish_match()
        elif not self.is_tiebreak:
            self._resolve_first_place()
        elif in_hand:
            # The abandoned tie-break hand counts as one of tiebreak_hands: the others play
            # the next one, if any is left.
            self._contenders.remove(seat)
            self._next_tiebreak_hand(self._contenders)

    # -- hands and the end of the match --------------------------------------------------

    def _start_hand(self, seats: list[int], dealer: int) -> None:
        self._hand_number += 1
        self._dealer = dealer
        self._seats = seats
        self._next_seat = {s: seats[(i + 1) % len(seats)] for i, s in enumerate(seats)}
        rules = self.rules
        n = rules.players
        self._hands = [0] * n
        self._taken = [0] * n
        self._tricks_won = [0] * n
        self._penalties = [0] * n
        self._trick = []
        self._finished_tricks = []
        self._led_suit_mask = 0
        self._auction = []
        self._contract = Contract.PASS
        self._declarer = None
        deck = deck_mask(rules, len(seats))
        each = cards_each(rules, len(seats))
        self._tricks_per_hand = each
        eldest = self._next_seat[dealer]
        order = seats[seats.index(eldest) :] + seats[: seats.index(eldest)]
        given = self._deals.get(self._hand_number)
        dealt = 0
        if given is not None and len(given) == len(seats):  # a whole pack for this many seats (check_deals)
            for seat, mask in zip(seats, given, strict=True):
                self._hands[seat] = mask
                dealt |= mask
        else:
            pack = shuffled_pack(self.seed, self._hand_number, deck)
            for seat, mask in deal_hands(pack[: each * len(seats)], order, packet_sizes(each, rules.pack)).items():
                self._hands[seat] = mask
                dealt |= mask
        # The one card left after the deal is turned for trumps (docs/rules.md 11).
        self._turned = cards_in(deck & ~dealt)[0] if rules.trumps is Trumps.TURNED else None
        self._trump_mask = 0 if self._turned is None else SUIT_MASKS[self._turned.suit]
        self._events.append(
            HandDealt(
                self._hand_number,
                dealer,
                tuple(seats),
                tuple(tuple(cards_in(self._hands[s])) for s in seats),
                self.is_tiebreak,
                self._turned,
            )
        )
        contracts = rules.contracts and not (self.is_tiebreak and rules.tiebreak is Tiebreak.TIED)
        self._phase = Phase.AUCTION if contracts else Phase.PLAY
        self._to_act = eldest

    def _score_hand(self) -> HandResult:
        """Score the finished hand (docs/rules.md 6 and 11) with its parts; totals after it."""
        rules = self.rules
        seats = self._seats
        eldest = seats.index(self._next_seat[self._dealer])
        finished = self._finished_tricks
        declarer = self._declarer
        scoring = score_hand(
            rules,
            seats[eldest:] + seats[:eldest],
            self._taken,
            self._tricks_won,
            finished[0].winner,
            finished[-1].winner,
            self._contract,
            declarer,
            self._penalties,
        )
        totals = list(self._totals)
        if not self.is_tiebreak or rules.tiebreak is Tiebreak.PLAY_ON:
            for seat in seats:
                totals[seat] += scoring.scores[seat]
        return HandResult(
            hand_number=self._hand_number,
            tiebreak=self.is_tiebreak,
            seats=tuple(seats),
            tricks=tuple(self._tricks_won),
            card_points=tuple(scoring.card_points),
            trick_points=tuple(scoring.trick_points),
            first_last_points=tuple(scoring.first_last_points),
            contract=self._contract,
            declarer=declarer,
            contract_made=None if declarer is None else self._tricks_won[declarer] == self._tricks_per_hand,
            fault_points=tuple(self._penalties),
            exception=scoring.exception,
            scores=tuple(scoring.scores),
            totals=tuple(totals),
        )

    def _finish_hand(self) -> None:
        result = self._score_hand()
        self._results.append(result)
        self._totals = list(result.totals)
        self._events.append(
            HandEnded(
                self._hand_number,
                self._contract,
                result.declarer,
                result.contract_made,
                result.scores,
                result.totals,
                self.is_tiebreak,
                result,
            )
        )
        rules = self.rules
        if self.is_tiebreak and rules.tiebreak is Tiebreak.TIED:
            best = rules.best(result.scores[s] for s in self._contenders)
            winners = [s for s in self._contenders if result.scores[s] == best]
            self._knocked_out.extend(s for s in self._contenders if s not in winners)
            self._contenders = winners
            self._next_tiebreak_hand(winners)
        elif self.is_tiebreak or max(self._totals) >= rules.limit:
            self._resolve_first_place()
        else:
            n = rules.players
            self._start_hand(list(range(n)), dealer=(self._dealer + 1) % n)

    def _resolve_first_place(self) -> None:
        """The regular match is over: finish, or start tie-break hands among those tied for first."""
        alive = [s for s in range(self.rules.players) if s not in self._forfeited]
        if not alive:
            self._finish_match()
            return
        best = self.rules.best(self._totals[s] for s in alive)
        tied = [s for s in alive if self._totals[s] == best]
        self._contenders = tied
        if self.rules.tiebreak is Tiebreak.PLAY_ON and self._forfeited:
            self._finish_match()  # no play-on with a forfeited seat: the tie stands
            return
        self._next_tiebreak_hand(tied)

    def _next_tiebreak_hand(self, contenders: list[int]) -> None:
        if len(contenders) < 2 or self._tiebreak_round >= self.rules.tiebreak_hands:
            self._finish_match()
            return
        self._tiebreak_round += 1
        self._events.append(TiebreakStarted(tuple(contenders), self._tiebreak_round))
        n = self.rules.players
        if self.rules.tiebreak is Tiebreak.PLAY_ON:
            self._start_hand(list(range(n)), dealer=(self._dealer + 1) % n)
            return
        dealer = next(s % n for s in range(self._dealer + 1, self._dealer + n + 1) if s % n in contenders)
        self._start_hand(list(contenders), dealer)

    def _finish_match(self) -> None:
        self._places = final_places(
            self._totals,
            against=self.rules.against,
            forfeited=self._forfeited,
            contenders=self._contenders,
            knocked_out=self._knocked_out,
            play_on=self.rules.tiebreak is Tiebreak.PLAY_ON,
        )
        self._phase = Phase.OVER
        self._events.append(MatchEnded(self._places, tuple(self._totals)))

    # -- copies, records, views ----------------------------------------------------------

    def clone(self) -> Match:
        """An independent copy: applying decisions to it leaves this match alone."""
        return copy_slots(self, Match.__slots__)

    @property
    def action_log(self) -> tuple[Action, ...]:
        """Every action so far: the decisions applied, the penalties added and the forfeits, in order."""
        return tuple(self._log)

    @property
    def actions(self) -> list[ActionRecord]:
        """Every action so far in record form (see :meth:`apply_action`)."""
        return [action_to_record(a) for a in self._log]

    def record(self) -> MatchRecord:
        """A compact JSON-ready record from which :meth:`from_record` rebuilds this match."""
        return make_record(
            ENGINE_VERSION,
            self.rules,
            self.seed,
            start_totals=self._start_totals,
            first_dealer=self._first_dealer,
            first_hand=self._first_hand,
            deals=self._deals,
            actions=self.actions,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Match:
        """Replay a record made by :meth:`record`; raises :class:`RecordError` if it does not replay."""
        return replay_record(cls, record)

    def apply_action(self, action: Action | str | Mapping[str, object]) -> None:
        """Apply one action: an entry of :attr:`action_log`, or of a record's ``actions`` (a decision text, a penalty or a forfeit)."""
        apply_entry(self, action)

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may know now (docs/rules.md 9): see :class:`polignac.view.PlayerView`."""

        return player_view(self, self._check_seat(seat))

    def _check_seat(self, seat: int) -> int:
        if type(seat) is not int or not 0 <= seat < self.rules.players:
            raise PolignacError(f"seat must be an integer in 0..{self.rules.players - 1}, got {seat!r}")
        return seat

    def __repr__(self) -> str:
        return f"<Match {self.rules.name} seed={self.seed} hand={self._hand_number} phase={self._phase.value} to_act={self.to_act}>"
