"""Fast random playouts of the rest of a hand, for bots that search (Monte Carlo, ISMCTS).

A :class:`Playout` is one hand in progress held as plain ints: hands are card bitmasks,
cards are indices (:attr:`polignac.Card.index`); the inner loop makes no per-card objects.  Build
one from a full match state (:meth:`Playout.from_match`, for perfect-information search
or testing) or from what a seat knows (:meth:`Playout.from_view`), which deals the unseen
cards at random consistently with the view: each other seat gets as many cards as it
holds, and no card of a suit it is known to lack (it did not follow when that suit was led).

>>> import random
>>> from polignac import Match, preset
>>> match = Match(preset("no-contracts"), seed=3)
>>> scores = Playout.from_match(match).run(random.Random(1).random)
>>> sum(scores)
5

Scores are those of the hand as the engine computes them (:func:`polignac.scoring.score_hand`):
every ruleset, trumps, card points and scores by place included, with the contract and the
extra points already given.  A playout started during the auction plays the hand with the
contract declared so far (none if everyone passed so far).

:meth:`Playout.run_batch` plays many deals of the same position at once with numpy
(:mod:`polignac.batch`, imported on first use), each deal exactly as :meth:`Playout.run`
would with the same floats; :func:`polignac.batch.sample_hands_many` deals them from a view
(docs/playouts.md):

>>> import numpy as np
>>> from polignac.batch import sample_hands_many
>>> view = match.view(0)
>>> hands = sample_hands_many(view, random.Random(2), 1000)
>>> scores = Playout.from_view(view, random.Random(3)).run_batch(hands, rng=np.random.default_rng(4))
>>> scores.shape, bool((scores.sum(axis=1) == 5).all())
((1000, 4), True)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from polignac.cards import CARDS, PIQUET_MASK, SUIT_MASKS, Suit, cards_in
from polignac.errors import IllegalDecision, PolignacError
from polignac.rules import Ruleset, cards_each
from polignac.scoring import score_hand
from polignac.values import Contract, Phase, Trick

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from polignac.engine import Match
    from polignac.view import PlayerView

__all__ = ["Playout", "sample_hands"]

# For every 16-bit pattern, the positions of its set bits: a uniform random card of a
# 32-bit hand is then two look-ups and one random number, with no loop over bits.
_HALF_BITS: list[tuple[int, ...]] = []
# For every 8-bit pattern (one suit), the positions of its set bits.
_BYTE_BITS: Final = tuple(tuple(r for r in range(8) if b >> r & 1) for b in range(256))


def _half_bits() -> list[tuple[int, ...]]:
    if not _HALF_BITS:
        # Built on first use (about 50 ms) rather than at import.
        lo = [tuple(r for r in range(8) if b >> r & 1) for b in range(256)]
        hi = [tuple(r + 8 for r in t) for t in lo]
        _HALF_BITS.extend(a + b for b in hi for a in lo)
    return _HALF_BITS


# The 52-card playout holds a hand with each suit in 13 consecutive bits (ranks 2 to A):
# ``_WIDE[i]`` is card index ``i``'s bit position there, ``_NARROW`` the way back.
_WIDE: Final = tuple(13 * int(c.suit) + c.rank - 2 for c in CARDS)
_NARROW: Final = tuple(sorted(range(52), key=lambda i: _WIDE[i]))
_NARROW_BIT: Final = tuple(1 << i for i in _NARROW)
# For every 13-bit pattern (one suit, wide), the positions of its set bits.
_THIRTEEN_BITS: list[tuple[int, ...]] = []


def _thirteen_bits() -> list[tuple[int, ...]]:
    if not _THIRTEEN_BITS:
        _THIRTEEN_BITS.extend(tuple(b for b in range(13) if p >> b & 1) for p in range(8192))
    return _THIRTEEN_BITS


def _widen(m: int) -> int:
    return (
        (m & 0xFF) << 5 | m >> 32 & 0x1F
        | ((m >> 8 & 0xFF) << 5 | m >> 37 & 0x1F) << 13
        | ((m >> 16 & 0xFF) << 5 | m >> 42 & 0x1F) << 26
        | ((m >> 24 & 0xFF) << 5 | m >> 47 & 0x1F) << 39
    )  # fmt: skip


def _narrow(w: int) -> int:
    return (
        w >> 5 & 0xFF | (w >> 18 & 0xFF) << 8 | (w >> 31 & 0xFF) << 16 | (w >> 44 & 0xFF) << 24
        | (w & 0x1F) << 32 | (w >> 13 & 0x1F) << 37 | (w >> 26 & 0x1F) << 42 | (w >> 39 & 0x1F) << 47
    )  # fmt: skip


_SUIT_OF: Final = tuple(int(c.suit) for c in CARDS)
# Trick powers of the wide playout by (strength table, trump suit): a few rulesets in use at once.
_POWERS: dict[tuple[tuple[int, ...], int], list[list[int]]] = {}
_CONTRACTS: Final = (Contract.PASS, Contract.CAPOT, Contract.GENERAL)
_CONTRACT_CODE: Final = {c: i for i, c in enumerate(_CONTRACTS)}


class Playout:
    """The rest of one hand as ints; :meth:`run` plays it out at random and returns the scores."""

    __slots__ = (
        "best_seat",
        "best_strength",
        "contract",
        "declarer",
        "eldest",
        "first_winner",
        "hands",
        "led",
        "next_seat",
        "penalties",
        "rules",
        "seats",
        "taken",
        "to_act",
        "trick_len",
        "trick_mask",
        "tricks_left",
        "trump",
        "won",
    )

    rules: Ruleset
    seats: tuple[int, ...]
    next_seat: list[int]
    hands: list[int]
    taken: list[int]
    won: list[int]
    penalties: list[int]
    to_act: int
    trick_len: int
    trick_mask: int
    led: int
    best_strength: int
    best_seat: int
    first_winner: int
    tricks_left: int
    contract: int
    declarer: int
    eldest: int
    trump: int
    """The trump suit (0..3), or -1."""

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_match(cls, match: Match) -> Playout:
        """The current hand of ``match`` with every card known (perfect information)."""
        if match.is_over:
            raise PolignacError("the match is over: there is no hand to play out")
        hands = [match.hand_mask(s) for s in range(match.players)]
        return cls._build(
            match.rules,
            match.seats,
            hands,
            match.eldest if match.phase is Phase.AUCTION else match.to_act,  # type: ignore[arg-type]  # a match still on has a seat to act
            match.current_trick,
            match.tricks,
            match.contract,
            match.declarer,
            match.penalties,
            match.eldest,
            -1 if match.trump is None else int(match.trump),
        )

    @classmethod
    def from_view(cls, view: PlayerView, rng: random.Random | None = None) -> Playout:
        """A determinization: the unseen cards dealt at random, consistent with ``view``."""
        rng = rng or random.Random()
        hands = sample_hands(view, rng)
        to_act = view.eldest if view.phase is Phase.AUCTION else view.to_act
        if to_act is None:
            raise PolignacError("the match is over: there is no hand to play out")
        trump = -1 if view.trump is None else int(view.trump)
        return cls._build(
            view.rules,
            view.seats,
            hands,
            to_act,
            view.current_trick,
            view.tricks,
            view.contract,
            view.declarer,
            view.penalties,
            view.eldest,
            trump,
        )

    @classmethod
    def _build(
        cls,
        rules: Ruleset,
        seats: tuple[int, ...],
        hands: list[int],
        to_act: int,
        current_trick: tuple[tuple[int, object], ...],
        tricks: tuple[object, ...],
        contract: Contract,
        declarer: int | None,
        penalties: tuple[int, ...],
        eldest: int,
        trump: int,
    ) -> Playout:

        self = object.__new__(cls)
        n = rules.players
        self.rules = rules
        self.seats = tuple(seats)
        self.next_seat = [0] * n
        for i, s in enumerate(seats):
            self.next_seat[s] = seats[(i + 1) % len(seats)]
        self.hands = list(hands)
        self.taken = [0] * n
        self.won = [0] * n
        self.penalties = list(penalties)
        self.first_winner = -1
        for trick in tricks:
            assert isinstance(trick, Trick)
            self.taken[trick.winner] |= trick.mask
            self.won[trick.winner] += 1
            if self.first_winner < 0:
                self.first_winner = trick.winner
        self.tricks_left = cards_each(rules, len(seats)) - len(tricks)
        self.contract = _CONTRACT_CODE[contract]
        self.declarer = -1 if declarer is None else declarer
        self.eldest = eldest
        self.trump = trump
        self.to_act = to_act
        self.trick_len = 0
        self.trick_mask = 0
        self.led = 0
        self.best_strength = -1
        self.best_seat = -1
        for seat, card in current_trick:
            index = card.index  # type: ignore[attr-defined]  # a Card
            if self.trick_len == 0:
                self.led = _SUIT_OF[index]
            self._take_if_best(index, seat, self.trick_len == 0)
            self.trick_mask |= 1 << index
            self.trick_len += 1
        return self

    def _power(self, index: int) -> int:
        """How strongly card ``index`` bids for the current trick: trumps above the suit led, others -1."""
        suit = _SUIT_OF[index]
        if suit == self.trump:
            return 64 + self.rules.strength[index]
        return self.rules.strength[index] if suit == self.led else -1

    def _take_if_best(self, index: int, seat: int, leads: bool) -> None:
        power = self._power(index)
        if leads or power > self.best_strength:
            self.best_strength, self.best_seat = power, seat

    def copy(self) -> Playout:
        """An independent copy, to run many playouts from one position."""
        other = object.__new__(Playout)
        other.rules = self.rules
        other.seats = self.seats
        other.next_seat = self.next_seat  # never mutated
        other.hands = self.hands[:]
        other.taken = self.taken[:]
        other.won = self.won[:]
        other.penalties = self.penalties  # never mutated
        other.to_act = self.to_act
        other.trick_len = self.trick_len
        other.trick_mask = self.trick_mask
        other.led = self.led
        other.best_strength = self.best_strength
        other.best_seat = self.best_seat
        other.first_winner = self.first_winner
        other.tricks_left = self.tricks_left
        other.contract = self.contract
        other.declarer = self.declarer
        other.eldest = self.eldest
        other.trump = self.trump
        return other

    # -- playing --------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """True once the last trick is taken."""
        return self.tricks_left == 0

    def legal_mask(self) -> int:
        """The cards the seat to act may play, as a bitmask."""
        hand = self.hands[self.to_act]
        if self.trick_len:
            follow = hand & SUIT_MASKS[self.led]
            if follow:
                return follow
        return hand

    def play(self, index: int) -> None:
        """Play card ``index`` (0..51) for the seat to act; raises :class:`IllegalDecision` if illegal."""
        if self.tricks_left == 0 or type(index) is not int or not 0 <= index < 52 or not self.legal_mask() >> index & 1:
            raise IllegalDecision(f"card index {index!r} is not legal for seat {self.to_act} now")
        seat = self.to_act
        self.hands[seat] ^= 1 << index
        if self.trick_len == 0:
            self.led = _SUIT_OF[index]
        self._take_if_best(index, seat, self.trick_len == 0)
        self.trick_mask |= 1 << index
        self.trick_len += 1
        if self.trick_len == len(self.seats):
            winner = self.best_seat
            self.taken[winner] |= self.trick_mask
            self.won[winner] += 1
            if self.first_winner < 0:
                self.first_winner = winner
            self.trick_len = self.trick_mask = 0
            self.tricks_left -= 1
            self.to_act = winner
        else:
            self.to_act = self.next_seat[seat]

    def run(self, rand: Callable[[], float] = random.random) -> list[int]:
        """Play the rest of the hand uniformly at random (``rand`` gives floats in [0, 1)); return the scores.

        Mutates this playout: call it on a :meth:`copy` to keep the start position.
        """
        if self.trump >= 0 or any(h > PIQUET_MASK for h in self.hands):
            return self._run_any_pack(rand)
        half = _half_bits()
        byte_bits = _BYTE_BITS
        strength = self.rules.strength
        hands = self.hands
        taken = self.taken
        won = self.won
        nxt = self.next_seat
        k = len(self.seats)
        to_act = self.to_act
        trick_len = self.trick_len
        trick_mask = self.trick_mask
        led = self.led
        best_s = self.best_strength
        best_seat = self.best_seat
        first_winner = self.first_winner
        tricks_left = self.tricks_left
        while tricks_left:
            h = hands[to_act]
            if trick_len:
                b = h >> (led << 3) & 255
                if b:
                    bits = byte_bits[b]
                    c = (led << 3) + bits[int(rand() * len(bits))]
                    if strength[c] > best_s:
                        best_s = strength[c]
                        best_seat = to_act
                else:
                    lo = half[h & 0xFFFF]
                    hi = half[h >> 16]
                    r = int(rand() * (len(lo) + len(hi)))
                    c = lo[r] if r < len(lo) else 16 + hi[r - len(lo)]
            else:
                lo = half[h & 0xFFFF]
                hi = half[h >> 16]
                r = int(rand() * (len(lo) + len(hi)))
                c = lo[r] if r < len(lo) else 16 + hi[r - len(lo)]
                led = c >> 3
                best_s = strength[c]
                best_seat = to_act
            bit = 1 << c
            hands[to_act] = h ^ bit
            trick_mask |= bit
            trick_len += 1
            if trick_len == k:
                taken[best_seat] |= trick_mask
                won[best_seat] += 1
                if first_winner < 0:
                    first_winner = best_seat
                trick_len = trick_mask = 0
                tricks_left -= 1
                to_act = best_seat
            else:
                to_act = nxt[to_act]
        return self._end_hand(to_act, led, best_s, best_seat, first_winner)

    def run_batch(
        self,
        hands: npt.ArrayLike,
        *,
        uniforms: npt.ArrayLike | None = None,
        rng: np.random.Generator | None = None,
        policy: str = "random",
    ) -> npt.NDArray[np.int64]:
        """Play the rest of the hand out for many deals at once (numpy); return their scores, (deals, players).

        ``hands`` is a (deals, players) array (or nested sequence) of card masks like
        :attr:`hands`, each row one deal of this position's cards (:func:`polignac.batch.sample_hands_many`
        draws them from a view); everything else (the trick in progress, the cards taken,
        the contract, the extra points) is this playout's, which is left unchanged.
        ``uniforms`` is a float64 (deals, cards left to play) array in [0, 1): row ``b``
        plays exactly as ``p = self.copy(); p.hands = [int(h) for h in hands[b]]; p.run(iter(uniforms[b]).__next__)``.
        Without it the floats are ``rng.random((cards left, deals))``, column ``b`` for deal ``b``,
        with ``rng`` a ``numpy.random.Generator`` (default: one seeded from :mod:`random`).
        ``policy="duck"`` plays every seat by trick avoidance with a little noise instead of
        uniformly at random (:mod:`polignac.batch_duck` says how each float picks a card);
        the uniforms then keep their shape, one float per card.
        Raises :class:`polignac.errors.BatchError` naming the first bad row.
        """
        # numpy is loaded here, on first use, so that ``import polignac`` stays light.
        from polignac import batch

        return batch.run_batch(self, hands, uniforms, rng, policy)

    def _wide_powers(self) -> list[list[int]]:
        """``powers[led][wide]``: how a card bids for a trick with ``led`` led (trumps above, others -1)."""
        strength = self.rules.strength
        key = (strength, self.trump)
        cached = _POWERS.get(key)
        if cached is not None:
            return cached
        powers = []
        for led in range(4):
            row = [-1] * 52
            for index in range(52):
                suit = _SUIT_OF[index]
                if suit == self.trump:
                    row[_WIDE[index]] = 64 + strength[index]
                elif suit == led:
                    row[_WIDE[index]] = strength[index]
            powers.append(row)
        if len(_POWERS) > 64:
            _POWERS.clear()
        _POWERS[key] = powers
        return powers

    def _run_any_pack(self, rand: Callable[[], float]) -> list[int]:
        """:meth:`run` for the 52-card pack and for trumps: the same play on suits 13 bits wide."""
        suit_bits = _thirteen_bits()
        powers = self._wide_powers()
        hands = [_widen(h) for h in self.hands]
        narrow_hands = self.hands  # kept in step, card by card, as run() promises
        narrow_bit = _NARROW_BIT
        won = self.won
        nxt = self.next_seat
        k = len(self.seats)
        taken = [0] * len(hands)
        to_act = self.to_act
        trick_len = self.trick_len
        trick_mask = _widen(self.trick_mask)
        led = self.led
        base = 13 * led
        power = powers[led]
        best_s = self.best_strength
        best_seat = self.best_seat
        first_winner = self.first_winner
        tricks_left = self.tricks_left
        while tricks_left:
            h = hands[to_act]
            follow = h >> base & 0x1FFF if trick_len else 0
            if follow:
                bits = suit_bits[follow]
                c = base + bits[int(rand() * len(bits))]
            else:
                # Any card: the r-th of the hand, found by halves (two suits each) then by suit.
                r = int(rand() * h.bit_count())
                low = h & 0x3FFFFFF
                in_low = low.bit_count()
                if r < in_low:
                    a = suit_bits[low & 0x1FFF]
                    c = a[r] if r < len(a) else 13 + suit_bits[low >> 13][r - len(a)]
                else:
                    r -= in_low
                    a = suit_bits[h >> 26 & 0x1FFF]
                    c = 26 + (a[r] if r < len(a) else 13 + suit_bits[h >> 39][r - len(a)])
            if not trick_len:
                led = c // 13
                base = 13 * led
                power = powers[led]
                best_s = power[c]
                best_seat = to_act
            elif power[c] > best_s:
                best_s = power[c]
                best_seat = to_act
            bit = 1 << c
            hands[to_act] = h ^ bit
            narrow_hands[to_act] ^= narrow_bit[c]
            trick_mask |= bit
            trick_len += 1
            if trick_len == k:
                taken[best_seat] |= trick_mask
                won[best_seat] += 1
                if first_winner < 0:
                    first_winner = best_seat
                trick_len = trick_mask = 0
                tricks_left -= 1
                to_act = best_seat
            else:
                to_act = nxt[to_act]
        for seat, wide in enumerate(taken):
            if wide:
                self.taken[seat] |= _narrow(wide)
        return self._end_hand(to_act, led, best_s, best_seat, first_winner)

    def _end_hand(self, to_act: int, led: int, best_s: int, best_seat: int, first_winner: int) -> list[int]:
        """Store a played-out hand's last state (the hand over, no trick on the table) and return its scores."""
        self.to_act = to_act
        self.trick_len = 0
        self.trick_mask = 0
        self.led = led
        self.best_strength = best_s
        self.best_seat = best_seat
        self.first_winner = first_winner
        self.tricks_left = 0
        return self.scores()

    def scores(self) -> list[int]:
        """The hand's scores by seat, as the engine scores them; the hand must be finished."""
        if self.tricks_left:
            raise PolignacError("the hand is not finished")
        seats = self.seats
        eldest = seats.index(self.eldest)
        declarer = self.declarer if self.contract else None
        return score_hand(
            self.rules,
            seats[eldest:] + seats[:eldest],
            self.taken,
            self.won,
            self.first_winner,
            self.best_seat,  # the last trick's winner
            _CONTRACTS[self.contract],
            declarer,
            self.penalties,
        ).scores


def sample_hands(view: PlayerView, rng: random.Random) -> list[int]:
    """Deal ``view``'s unseen cards to the other seats: right counts, known voids respected.

    The unseen cards, in random order with the most constrained suits first, each go to a
    random place among the seats that may hold them (a seat with more places left is as
    much likelier).  Without known voids that is a uniformly random deal.  When that greedy
    deal paints itself into a corner, the cards are matched to places instead (Kuhn's
    augmenting paths, places tried in random order), so a consistent deal is always found
    when one exists.
    """
    hands = [0] * view.rules.players
    hands[view.seat] = view.hand_mask
    others = [s for s in view.seats if s != view.seat]
    voids = view.known_voids()
    room = {s: view.hand_size(s) for s in others}
    unseen = cards_in(view.unseen_mask)
    if len(unseen) != sum(room.values()):
        raise PolignacError(f"view is inconsistent: {len(unseen)} unseen cards for {sum(room.values())} places")
    holders = {suit: [s for s in others if suit not in voids[s]] for suit in {c.suit for c in unseen}}
    rng.shuffle(unseen)
    unseen.sort(key=lambda c: len(holders[c.suit]))  # stable: random within equal constraint
    for card in unseen:
        eligible = holders[card.suit]
        places = sum(room[s] for s in eligible)
        if not places:
            return _matched_hands(view, rng, hands, others, voids)
        pick = int(rng.random() * places)
        for seat in eligible:
            pick -= room[seat]
            if pick < 0:
                break
        room[seat] -= 1
        hands[seat] |= card.bit
    return hands


def _matched_hands(view: PlayerView, rng: random.Random, hands: list[int], others: list[int], voids: dict[int, set[Suit]]) -> list[int]:
    """:func:`sample_hands` by matching cards to places, for views where the greedy deal got stuck."""
    for seat in others:
        hands[seat] = 0
    slots = [s for s in others for _ in range(view.hand_size(s))]
    unseen = cards_in(view.unseen_mask)
    allowed = {c.index: [i for i, s in enumerate(slots) if c.suit not in voids[s]] for c in unseen}
    order = [c.index for c in unseen]
    rng.shuffle(order)
    order.sort(key=lambda i: len(allowed[i]))  # most constrained first: fewer augmenting paths
    holder: dict[int, int] = {}  # slot -> card

    def assign(card: int, seen: set[int]) -> bool:
        candidates = allowed[card][:]
        rng.shuffle(candidates)
        for slot in candidates:
            if slot in seen:
                continue
            seen.add(slot)
            if slot not in holder or assign(holder[slot], seen):
                holder[slot] = card
                return True
        return False

    for card in order:
        if not assign(card, set()):
            raise PolignacError("no deal of the unseen cards is consistent with the view")
    for slot, card in holder.items():
        hands[slots[slot]] |= 1 << card
    return hands
