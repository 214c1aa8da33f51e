"""The fast playout path (``polignac.playout``) against the engine it shortcuts.

``Playout.from_match`` must be the engine's hand in other clothes: fed the same cards, it offers
the same legal cards at every step and scores the hand exactly as the engine's ``HandEnded``
does, in every preset, at every table size, with contracts, extra points and tie-break hands,
from any position (auction, mid-hand, mid-trick).  ``Playout.from_view`` (a determinization)
must deal the unseen cards consistently with what the seat knows.  Every loop is seeded, so a
failure replays.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

import pytest

import polignac
from polignac import Card, Contract, IllegalDecision, Match, Phase, PolignacError, Ruleset, cards_in, mask_of, parse_cards, preset
from polignac.events import HandEnded
from polignac.playout import Playout, _narrow, sample_hands
from polignac.rules import deck_mask
from polignac.view import PlayerView

PLAYERS = (3, 4, 5, 6)


def rulesets() -> list[Ruleset]:
    """Every preset at every table size, and with general enabled where contracts are."""
    out = []
    for name, base in polignac.PRESETS.items():
        for players in base.table_sizes():
            out.append(preset(name, players=players))
            if base.capot:
                out.append(preset(name, players=players, general=True))
    return out


RULESETS = rulesets()


def rules_id(rules: Ruleset) -> str:
    return f"{rules.name}-{rules.players}p" + ("-general" if rules.general else "")


# -- driving a match at random ----------------------------------------------------------------


@dataclass
class Coverage:
    """What kinds of positions a test went through, so that it cannot pass vacuously."""

    counts: Counter[str] = field(default_factory=Counter)

    def note(self, match: Match) -> None:
        self.counts["positions"] += 1
        if match.phase is Phase.AUCTION:
            self.counts["auction"] += 1
        if match.current_trick:
            self.counts["mid-trick"] += 1
        if match.tricks:
            self.counts["mid-hand"] += 1
        if match.contract is not Contract.PASS:
            self.counts["contract"] += 1
        if any(match.penalties):
            self.counts["penalties"] += 1
        if match.is_tiebreak:
            self.counts["tiebreak"] += 1
        if match.forfeited:
            self.counts["forfeited"] += 1


def random_decision(match: Match, rnd: random.Random, declare_rate: float = 0.2) -> polignac.Decision:
    """A random legal decision; in the auction, a contract ``declare_rate`` of the time."""
    options = match.legal_decisions()
    if match.phase is Phase.AUCTION:
        contracts = [o for o in options if o is not Contract.PASS]
        return rnd.choice(contracts) if contracts and rnd.random() < declare_rate else Contract.PASS
    return rnd.choice(options)


def walk(match: Match, rnd: random.Random, *, penalty_rate: float = 0.04, forfeit_rate: float = 0.004) -> Iterator[Match]:
    """Play ``match`` to its end at random, yielding it before every decision.

    Between decisions the referee sometimes adds extra points or (rarely) makes a seat forfeit,
    which also leads to tie-break hands.
    """
    while not match.is_over:
        yield match
        r = rnd.random()
        if r < penalty_rate:
            match.add_penalty(rnd.choice(match.seats), rnd.choice([0, 1, 5]), "revoke")
        elif r < penalty_rate + forfeit_rate and len(match.forfeited) < match.players - 2:
            match.forfeit(rnd.choice([s for s in match.seats if s not in match.forfeited]), "crashed")
        else:
            match.apply(random_decision(match, rnd))


def new_match(rules: Ruleset, rnd: random.Random) -> Match:
    """A match with a random seed; half the time with one seat near the limit, so tie-breaks come soon."""
    seed = rnd.randrange(2**64)
    if rnd.random() < 0.5:
        totals = [0] * rules.players
        totals[rnd.randrange(rules.players)] = rules.limit - 1
        return Match(rules, seed, start_totals=totals)
    return Match(rules, seed)


def top_cards_deal(rules: Ruleset, rnd: random.Random) -> list[list[Card]]:
    """A hand-1 deal where seat 0 (eldest) holds the top cards of the pack: it wins every trick it leads."""
    pack = cards_in(deck_mask(rules, rules.players))
    each = len(pack) // rules.players
    by_strength = sorted(pack, key=lambda c: (-rules.strength[c.index], c.index))
    rest = by_strength[each:]
    rnd.shuffle(rest)
    return [by_strength[:each]] + [rest[i * each : (i + 1) * each] for i in range(rules.players - 1)]


# -- engine and playout in lockstep -------------------------------------------------------------


def hand_ended(match: Match, start: int) -> HandEnded | None:
    ended = [e for e in match.events_since(start) if isinstance(e, HandEnded)]
    assert len(ended) <= 1
    return ended[0] if ended else None


def lockstep(match: Match, rnd: random.Random, choose: Callable[[Match], Card] | None = None) -> HandEnded:
    """Play the rest of ``match``'s current hand in a clone and in ``Playout.from_match``, card for card.

    Checks the seat to act and the legal mask before every card, that both finish together, and
    that the playout's scores are the engine's ``HandEnded`` scores.  Returns the engine's event.
    """
    engine = match.clone()
    playout = Playout.from_match(engine)
    start = engine.event_count
    # A playout made during the auction plays the hand with no contract: everyone else passes.
    while engine.phase is Phase.AUCTION:
        assert engine.contract is Contract.PASS
        engine.apply(Contract.PASS)
    while True:
        ended = hand_ended(engine, start)
        assert playout.is_over == (ended is not None), "engine and playout must finish the hand together"
        if ended is not None:
            break
        with pytest.raises(PolignacError):
            playout.scores()
        assert playout.to_act == engine.to_act
        assert playout.legal_mask() == engine.legal_mask(), f"legal masks differ at {engine!r}"
        card = choose(engine) if choose is not None else rnd.choice(engine.legal_cards())
        engine.apply(card)
        playout.play(card.index)
    scores = playout.scores()
    assert scores == list(ended.scores), f"playout scores {scores} != engine scores {list(ended.scores)} for {match!r}"
    assert playout.scores() == scores, "scores() reads the finished hand, it does not change it"
    return ended


@pytest.mark.parametrize("rules", RULESETS, ids=rules_id)
def test_playout_from_match_follows_the_engine_card_for_card(rules: Ruleset) -> None:
    rnd = random.Random(f"lockstep-{rules_id(rules)}")
    coverage = Coverage()
    while coverage.counts["positions"] < 60:
        for position in walk(new_match(rules, rnd), rnd):
            if rnd.random() < 0.25:
                coverage.note(position)
                lockstep(position, rnd)
    counts = coverage.counts
    assert counts["mid-trick"] and counts["mid-hand"] and counts["penalties"], counts
    if rules.contracts:
        assert counts["auction"] and counts["contract"], counts


def test_positions_cover_tiebreaks_and_forfeits() -> None:
    """The lockstep walks above reach tie-break hands and forfeits too (checked here over all rulesets)."""
    rnd = random.Random("coverage")
    coverage = Coverage()
    for rules in RULESETS:
        for position in walk(new_match(rules, rnd), rnd, forfeit_rate=0.01):
            if rnd.random() < 0.1:
                coverage.note(position)
                lockstep(position, rnd)
    assert coverage.counts["tiebreak"] >= 20 and coverage.counts["forfeited"] >= 5, coverage.counts


@pytest.mark.parametrize("rules", [r for r in RULESETS if r.contracts], ids=rules_id)
def test_made_contracts_score_the_same(rules: Ruleset) -> None:
    """Seat 0 holds the top of the pack and declares: the contract is made, from every position of the hand."""
    rnd = random.Random(f"contract-{rules_id(rules)}")
    contracts = [c for c, on in ((Contract.CAPOT, rules.capot), (Contract.GENERAL, rules.general)) if on]
    for contract in contracts:
        match = Match(rules, 1, deals={1: top_cards_deal(rules, rnd)})
        match.apply(contract)
        match.add_penalty(1, 1, "timeout")
        positions = 0
        for position in walk(match, rnd, penalty_rate=0.0, forfeit_rate=0.0):
            if position.hand_number > 1:
                break
            ended = lockstep(position, rnd)
            assert ended.contract is contract and ended.declarer == 0 and ended.contract_made is True
            bonus = rules.general_points if contract is Contract.GENERAL else 0
            assert list(ended.scores) == [bonus] + [rules.contract_points + (seat == 1) for seat in range(1, rules.players)]
            positions += 1
        assert positions == deck_mask(rules, rules.players).bit_count(), "one position before every card of the hand"


@pytest.mark.parametrize("rules", [r for r in RULESETS if r.contracts], ids=rules_id)
def test_failed_contracts_score_the_same(rules: Ruleset) -> None:
    """A declarer that plays its lowest card while the others play their highest: the contract fails."""
    rnd = random.Random(f"failed-{rules_id(rules)}")
    strength = rules.strength
    failed = 0
    for declarer in range(rules.players):
        match = Match(rules, rnd.randrange(2**64))
        for _ in range(declarer):
            match.apply(Contract.PASS)
        match.apply(Contract.GENERAL if rules.general else Contract.CAPOT)
        match.add_penalty(declarer, 5, "revoke")

        def choose(m: Match, declarer: int = declarer) -> Card:
            pick = min if m.to_act == declarer else max
            return pick(m.legal_cards(), key=lambda c: strength[c.index])

        for position in walk(match, rnd, penalty_rate=0.0, forfeit_rate=0.0):
            if position.hand_number > 1:
                break
            if rnd.random() < 0.3:
                ended = lockstep(position, rnd, choose)
                failed += ended.contract_made is False
                if ended.contract_made is False:
                    assert ended.scores[declarer] >= rules.contract_points + 5
    assert failed >= rules.players


# -- run() against the engine ------------------------------------------------------------------


class RecordingRand:
    """A ``rand`` for :meth:`Playout.run` that notes, at each call, which cards the playout has played since the last.

    ``run`` takes cards out of the hands it plays from as it plays them, so comparing those hands
    between calls tells which seat played which card, in order, without assuming how a random
    float is turned into a card.  The 32-card loop plays from ``playout.hands`` itself; the loop
    for the 52-card pack and trumps plays from a copy with each suit 13 bits wide, a local list
    named ``hands`` that this reads from the calling frame and turns back into card indices.
    """

    def __init__(self, playout: Playout, rnd: random.Random) -> None:
        self.playout = playout
        self.rnd = rnd
        self.before = list(playout.hands)
        self.by_seat: dict[int, list[int]] = {s: [] for s in playout.seats}
        self.calls = 0
        self.wide_calls = 0

    def current(self, frame: FrameType | None) -> list[int]:
        if frame is not None and frame.f_code.co_name == "_run_any_pack":
            self.wide_calls += 1
            wide = frame.f_locals["hands"]
            return [_narrow(h) for h in wide]
        return list(self.playout.hands)

    def note(self, frame: FrameType | None = None) -> None:
        now = self.current(frame)
        for seat in self.playout.seats:
            gone = self.before[seat] & ~now[seat]
            assert gone.bit_count() <= 1, "a seat played two cards between two draws"
            if gone:
                self.by_seat[seat].append(gone.bit_length() - 1)
        self.before = now

    def __call__(self) -> float:
        self.note(sys._getframe(1))
        self.calls += 1
        return self.rnd.random()


def replay_run(match: Match, rnd: random.Random) -> tuple[list[int], RecordingRand]:
    """``Playout.from_match(match).run(rand)``, then the same cards in the engine; returns the run's scores."""
    playout = Playout.from_match(match)
    cards_left = sum(playout.hands[s].bit_count() for s in playout.seats)
    rand = RecordingRand(playout, rnd)
    scores = playout.run(rand)
    rand.note()
    wide = match.rules.pack == 52 or match.trump is not None
    assert (rand.wide_calls == rand.calls) if wide else not rand.wide_calls, "the loop that played is the one for this pack"
    assert playout.is_over
    assert sum(len(v) for v in rand.by_seat.values()) == cards_left, "run() plays every card left"
    engine = match.clone()
    start = engine.event_count
    while engine.phase is Phase.AUCTION:
        engine.apply(Contract.PASS)
    queues = {s: list(v) for s, v in rand.by_seat.items()}
    while hand_ended(engine, start) is None:
        seat = engine.to_act
        assert seat is not None
        engine.apply(polignac.CARDS[queues[seat].pop(0)])  # raises IllegalDecision if run() played an illegal card
    ended = hand_ended(engine, start)
    assert ended is not None
    assert scores == list(ended.scores), f"run() scored {scores}, the engine {list(ended.scores)} with the same cards"
    return scores, rand


@pytest.mark.parametrize("rules", RULESETS, ids=rules_id)
def test_run_scores_what_the_engine_scores_with_the_same_cards(rules: Ruleset) -> None:
    rnd = random.Random(f"run-{rules_id(rules)}")
    runs = 0
    while runs < 40:
        for position in walk(new_match(rules, rnd), rnd):
            if rnd.random() < 0.2:
                replay_run(position, rnd)
                runs += 1


def test_run_leaves_a_copy_alone_and_replays_from_rand() -> None:
    rnd = random.Random(5)
    match = Match(preset("classic", players=5), 11)
    for _ in range(7):
        match.apply(random_decision(match, rnd, declare_rate=0.0))
    playout = Playout.from_match(match)
    before = (list(playout.hands), playout.to_act, playout.tricks_left)
    first = playout.copy().run(random.Random(3).random)
    again = playout.copy().run(random.Random(3).random)
    assert first == again, "run() depends only on rand"
    assert (list(playout.hands), playout.to_act, playout.tricks_left) == before, "runs on a copy leave the original alone"
    assert sum(first) == playout.rules.points_per_hand + sum(match.penalties)


def test_run_picks_legal_cards_uniformly() -> None:
    """The first card of a run from a position with four legal cards: each about a quarter of the time."""
    match = Match(
        preset("no-contracts"),
        1,
        deals={1: ["7S 8S 9S TS JH QH KH AH", "JS QS KS AS 7H 8H 9H TH", "7D 8D 9D TD JC QC KC AC", "JD QD KD AD 7C 8C 9C TC"]},
    )
    match.apply(Card.parse("7S"))  # seat 1 must follow with one of four spades
    playout = Playout.from_match(match)
    first: Counter[int] = Counter()
    rnd = random.Random(8)
    for _ in range(800):
        p = playout.copy()
        rand = RecordingRand(p, rnd)
        p.run(rand)
        rand.note()
        first[rand.by_seat[1][0]] += 1
    assert set(first) == {Card.parse(t).index for t in ("JS", "QS", "KS", "AS")}
    assert all(140 <= n <= 260 for n in first.values()), first


# -- determinization: Playout.from_view and sample_hands -----------------------------------------


def random_views(count: int, seed: str) -> Iterator[tuple[Match, PlayerView]]:
    """``count`` views of random positions (every ruleset and table size, tie-breaks, forfeits), of random seats."""
    rnd = random.Random(seed)
    made = 0
    while True:
        for rules in RULESETS:
            for position in walk(new_match(rules, rnd), rnd, forfeit_rate=0.01):
                if rnd.random() < 0.15:
                    seat = position.to_act if rnd.random() < 0.5 else rnd.randrange(rules.players)
                    assert seat is not None
                    yield position, position.view(seat)
                    made += 1
                    if made == count:
                        return


def check_sample(match: Match, view: PlayerView, hands: list[int]) -> None:
    """Everything a determinization must respect, except the hand sizes (checked apart)."""
    seat = view.seat
    assert len(hands) == view.players
    assert hands[seat] == view.hand_mask == match.hand_mask(seat), "the viewer's own hand is unchanged"
    voids = view.known_voids()
    union = 0
    for other in range(view.players):
        if other == seat:
            continue
        assert not union & hands[other], "a card was dealt to two seats"
        union |= hands[other]
        if other not in view.seats:
            assert hands[other] == 0, "a seat out of this (tie-break) hand gets no cards"
            continue
        for card in cards_in(hands[other]):
            assert card.suit not in voids[other], f"seat {other} is known void in {card.suit.name} but got {card}"
    assert union == view.unseen_mask, "the other seats get exactly the unseen cards"
    if view.turned is not None:
        assert view.turned == match.turned and not (union | view.hand_mask) & view.turned.bit, "the turned card is in no hand"
    assert not union & view.played_mask and not union & view.hand_mask


def test_sample_hands_respect_the_view() -> None:
    rnd = random.Random(1)
    voids_seen = 0
    for match, view in random_views(500, "views"):
        voids_seen += any(view.known_voids().values())
        for _ in range(3):
            check_sample(match, view, sample_hands(view, random.Random(rnd.random())))
    assert voids_seen >= 100


def test_sample_hands_give_each_seat_its_hand_size() -> None:
    """Each other seat gets exactly as many cards as it holds, so a determinized playout runs to the end."""
    rnd = random.Random(2)
    bad = []
    for match, view in random_views(500, "sizes"):
        assert all(view.hand_size(s) == match.hand_mask(s).bit_count() for s in view.seats)
        expected = {s: view.hand_size(s) for s in view.seats if s != view.seat}
        for _ in range(8):
            seed = rnd.random()
            hands = sample_hands(view, random.Random(seed))
            sizes = {s: hands[s].bit_count() for s in expected}
            try:
                Playout.from_view(view, random.Random(seed)).run(random.Random(seed).random)
                crash = None
            except IndexError as exc:  # a seat with too few cards runs out before the last trick
                crash = exc
            if sizes != expected or crash is not None:
                bad.append(
                    f"{match.rules.name} {match.players}p seed {match.seed} after {len(match.actions)} actions, seat {view.seat}: "
                    f"sizes {sizes}, expected {expected}, run: {crash!r}"
                )
    assert not bad, f"{len(bad)} of 4000 samples are wrong, first: {bad[0]}"


def test_from_view_is_consistent_with_the_engine() -> None:
    """The determinized playout has the engine's turn, legal cards, tricks taken, extra points and current trick."""
    rnd = random.Random(3)
    for match, view in random_views(300, "from-view"):
        if match.to_act != view.seat or match.phase is not Phase.PLAY:
            continue
        playout = Playout.from_view(view, random.Random(rnd.random()))
        real = Playout.from_match(match)
        assert playout.to_act == real.to_act == view.seat
        assert playout.legal_mask() == real.legal_mask() == match.legal_mask()
        assert playout.tricks_left == real.tricks_left
        assert playout.taken == real.taken and playout.won == real.won and playout.penalties == real.penalties
        assert (playout.trick_len, playout.trick_mask, playout.led, playout.best_seat) == (
            real.trick_len,
            real.trick_mask,
            real.led,
            real.best_seat,
        )


# The hand-built hard case.  Hand 1 of classic for 4 (seat 3 deals, seat 0 leads), five tricks:
#   1: 0 8S  1 QC  2 QS  3 JS   seat 2 wins (Q)       seat 1 shows it has no spade
#   2: 2 9S  3 KS  0 AH  1 9D   seat 3 wins (K)       seats 0 and 1 show no spade
#   3: 3 AD  0 TC  1 KD  2 8C   seat 1 wins (K)       seats 0 and 2 show no diamond
#   4: 1 KH  2 QH  3 8H  0 9H   seat 1 wins (K)
#   5: 1 JC  2 9C  3 7H  0 7C   seat 1 wins (J)       seat 3 shows no club
# Seat 1 (to lead) holds TH 8D TD and sees 7S TS AS JH 7D JD QD KC AC unseen, three cards each
# for seats 0 (no spade, no diamond), 2 (no diamond) and 3 (no club).  Only one deal fits:
# the diamonds must all go to seat 3, which then has no room for a spade, so the spades go to
# seat 2, and seat 0 gets JH KC AC.  Several cards have more than one possible seat, so a greedy
# deal can paint itself into a corner here.
HARD_DEAL = ["8S 9H JH AH 7C TC KC AC", "TH KH 8D 9D TD KD JC QC", "7S 9S TS QS AS QH 8C 9C", "JS KS 7H 8H 7D JD QD AD"]
HARD_PLAY = "8S QC QS JS 9S KS AH 9D AD TC KD 8C KH QH 8H 9H JC 9C 7H 7C"
HARD_SOLUTION = {0: "JH KC AC", 2: "7S TS AS", 3: "7D JD QD"}


def hard_case() -> tuple[Match, PlayerView]:
    match = Match(preset("classic"), 1, deals={1: HARD_DEAL})
    while match.phase is Phase.AUCTION:
        match.apply(Contract.PASS)
    for card in HARD_PLAY.split():
        match.apply_text(card)
    return match, match.view(1)


def test_hard_case_is_as_described() -> None:
    match, view = hard_case()
    assert [t.winner for t in match.tricks] == [2, 3, 1, 1, 1] and match.to_act == 1
    assert view.hand_mask == mask_of(["TH", "8D", "TD"])
    assert {s: sorted(v) for s, v in view.known_voids().items()} == {
        0: [polignac.Suit.SPADES, polignac.Suit.DIAMONDS],
        1: [polignac.Suit.SPADES],
        2: [polignac.Suit.DIAMONDS],
        3: [polignac.Suit.CLUBS],
    }
    for seat, text in HARD_SOLUTION.items():
        assert match.hand_mask(seat) == mask_of(text.split())


def test_hard_case_is_always_solved() -> None:
    match, view = hard_case()
    wrong: Counter[str] = Counter()
    for k in range(300):
        hands = sample_hands(view, random.Random(k))
        check_sample(match, view, hands)
        got = {s: " ".join(str(c) for c in cards_in(hands[s])) for s in HARD_SOLUTION}
        if got != HARD_SOLUTION:
            wrong[str(got)] += 1
    assert not wrong, f"{sum(wrong.values())} of 300 samples are not the only consistent deal: {wrong.most_common(2)}"


def test_forced_case_is_always_solved() -> None:
    """Every unseen card has one possible seat (3 players; each of the others shown void in the other's suit)."""
    # Seat 0 holds every diamond; seat 1 spades and clubs; seat 2 hearts and clubs.
    deal = ["7D 8D 9D TD JD QD KD AD 8C 9C", "8S 9S TS JS QS KS AS TC KC AC", "7H 8H 9H TH JH QH KH AH JC QC"]
    match = Match(preset("no-contracts", players=3), 1, deals={1: deal})
    # 0 8C 1 TC 2 QC: seat 2 wins; 2 7H 0 9C 1 AC: seat 2 wins, seat 1 has no heart;
    # 2 JC 0 7D 1 KC: seat 1 wins; 1 8S 2 8H 0 8D: seat 1 wins, seat 2 has no spade.
    for card in parse_cards("8C TC QC 7H 9C AC JC 7D KC 8S 8H 8D"):
        match.apply(card)
    view = match.view(0)
    assert match.to_act == 1 and view.known_voids()[1] >= {polignac.Suit.HEARTS} and polignac.Suit.SPADES in view.known_voids()[2]
    for k in range(100):
        hands = sample_hands(view, random.Random(k))
        check_sample(match, view, hands)
        assert hands == [match.hand_mask(s) for s in range(3)]


def test_from_view_of_a_seat_out_of_the_tiebreak_hand() -> None:
    """A seat watching a tie-break hand holds nothing; the tied seats get the unseen cards."""
    rnd = random.Random(4)
    for seed in range(200):
        match = Match(preset("no-contracts", limit=5), seed)
        while not match.is_over and not (match.is_tiebreak and len(match.seats) < match.players):
            match.apply(random_decision(match, rnd))
        if not match.is_over:
            break
    else:
        pytest.fail("no tie-break hand found")
    watcher = next(s for s in range(4) if s not in match.seats)
    for _ in range(5):
        match.apply(rnd.choice(match.legal_cards()))
    view = match.view(watcher)
    assert view.hand == () and view.hand_size(watcher) == 0
    for k in range(20):
        hands = sample_hands(view, random.Random(k))
        check_sample(match, view, hands)
        playout = Playout.from_view(view, random.Random(k))
        assert playout.seats == match.seats and playout.to_act == match.to_act


# -- bad input ---------------------------------------------------------------------------------


def mid_hand_playout() -> tuple[Match, Playout]:
    match = Match(preset("classic"), 21)
    match.apply(Contract.PASS)
    while match.phase is Phase.AUCTION:
        match.apply(Contract.PASS)
    match.apply(match.legal_cards()[0])  # a trick is led: the next seat must follow if it can
    return match, Playout.from_match(match)


def test_play_refuses_illegal_cards_and_leaves_the_playout_alone() -> None:
    _, playout = mid_hand_playout()
    legal = playout.legal_mask()
    seat = playout.to_act
    not_held = next(i for i in range(52) if not playout.hands[seat] >> i & 1)
    bad = [not_held, -1, 52, 1 << 40]
    off_suit = playout.hands[seat] & ~legal
    if off_suit:
        bad.append(off_suit.bit_length() - 1)  # held, but the seat must follow suit
    state = (list(playout.hands), playout.to_act, playout.trick_len, playout.trick_mask)
    for index in bad:
        with pytest.raises(IllegalDecision):
            playout.play(index)
    for not_an_int in [float(legal.bit_length() - 1), str(legal.bit_length() - 1), None, Card.from_index(legal.bit_length() - 1), True]:
        with pytest.raises(IllegalDecision):
            playout.play(not_an_int)  # type: ignore[arg-type]  # bad input on purpose
    assert (list(playout.hands), playout.to_act, playout.trick_len, playout.trick_mask) == state
    playout.play(legal.bit_length() - 1)


def test_play_after_the_end_and_scores_before_it() -> None:
    _, playout = mid_hand_playout()
    with pytest.raises(PolignacError, match="not finished"):
        playout.scores()
    finished = playout.copy()
    finished.run(random.Random(0).random)
    assert finished.is_over
    for index in range(52):
        with pytest.raises(IllegalDecision):
            finished.play(index)
    with pytest.raises(IllegalDecision):
        playout.copy().play(playout.hands[(playout.to_act + 1) % 4].bit_length() - 1)  # not the seat to act's card
    while not playout.is_over:
        with pytest.raises(PolignacError):
            playout.scores()
        low = playout.legal_mask() & -playout.legal_mask()
        playout.play(low.bit_length() - 1)
    assert sum(playout.scores()) == 5


def test_from_match_and_from_view_refuse_a_finished_match() -> None:
    rnd = random.Random(6)
    match = Match(preset("no-contracts", limit=3), 5)
    while not match.is_over:
        match.apply(random_decision(match, rnd))
    with pytest.raises(PolignacError, match="over"):
        Playout.from_match(match)
    with pytest.raises(PolignacError):
        Playout.from_view(match.view(0), random.Random(0))
    forfeited = Match(preset("classic"), 5)
    forfeited.apply(Contract.PASS)
    forfeited.forfeit(0, "crashed")
    while not forfeited.is_over:
        forfeited.apply(random_decision(forfeited, rnd))
    with pytest.raises(PolignacError):
        Playout.from_match(forfeited)
