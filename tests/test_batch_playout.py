"""The batched playout (``Playout.run_batch``, ``polignac.batch``) against the scalar one, deal for deal.

For the same random floats, every row of a batch must score exactly what
``Playout.run`` scores from a copy holding that row's hands: in every preset at every table
size (with general, and a 52-card game without trumps), from positions at random points of
random matches (the auction, mid-trick, the last trick, tie-break hands, contracts, extra
points).  Every loop is seeded, so a failure replays.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polignac import Contract, Match, Phase, PolignacError, Ruleset, preset
from polignac.batch import sample_hands_many
from polignac.errors import BatchError
from polignac.playout import Playout
from tests.test_playout import RULESETS, new_match, rules_id, top_cards_deal, walk

ALL_RULES = [
    *RULESETS,
    # A 52-card game without trumps: late in a hand the scalar path switches to its 32-bit loop.
    preset("knaves", players=4, trumps="none"),
    # Big takes often, several seats at once (the first in turn order takes the exception), and
    # without the every-trick exception (a taker of every trick is a big taker).
    preset("bassadewitz", big_take_points=20),
    preset("bassadewitz", every_trick_scores=[], big_take_points=20, players=3),
    # Every part of a score by points at once, higher better.
    preset("classic", trick_points=-1, first_trick_points=1, last_trick_points=2, general=True, direction="higher", players=5),
]


def scalar(playout: Playout, row: np.ndarray, floats: np.ndarray) -> list[int]:
    """What ``run_batch`` promises row ``b`` equals: ``run`` on a copy with that row's hands."""
    p = playout.copy()
    p.hands = [int(h) for h in row]
    return p.run(iter(floats.tolist()).__next__)


def plays_left(playout: Playout) -> int:
    return sum(h.bit_count() for h in playout.hands)


def check_batch(playout: Playout, hands: np.ndarray, seed: int) -> np.ndarray:
    """Run a batch with seeded floats and compare every row with the scalar run."""
    floats = np.random.default_rng(seed).random((len(hands), plays_left(playout)))
    before = (list(playout.hands), playout.to_act, playout.tricks_left)
    scores = playout.run_batch(hands, uniforms=floats)
    assert scores.shape == (len(hands), playout.rules.players) and scores.dtype == np.int64
    for b in range(len(hands)):
        expected = scalar(playout, hands[b], floats[b])
        assert scores[b].tolist() == expected, f"deal {b}: batch {scores[b].tolist()} != scalar {expected}"
    assert (list(playout.hands), playout.to_act, playout.tricks_left) == before, "run_batch leaves the playout alone"
    return scores


def positions(rules: Ruleset, rnd: random.Random, count: int) -> Iterator[Match]:
    """``count`` positions at random points of random matches."""
    made = 0
    while made < count:
        for position in walk(new_match(rules, rnd), rnd, forfeit_rate=0.01):
            if rnd.random() < 0.15:
                yield position
                made += 1
                if made == count:
                    return


def kind(match: Match) -> set[str]:
    kinds = {"auction"} if match.phase is Phase.AUCTION else set()
    if match.current_trick:
        kinds.add("mid-trick")
    if match.hand_mask(match.to_act or 0).bit_count() <= 1:
        kinds.add("last trick")
    if match.contract.value != "pass":
        kinds.add("contract")
    if any(match.penalties):
        kinds.add("penalties")
    if match.is_tiebreak:
        kinds.add("tiebreak")
    return kinds


@pytest.mark.parametrize("rules", ALL_RULES, ids=rules_id)
def test_batch_equals_scalar_from_views(rules: Ruleset) -> None:
    """Determinizations of the view of the seat to act, as a searching bot runs them."""
    rnd = random.Random(f"batch-{rules_id(rules)}")
    coverage: Counter[str] = Counter()
    for i, position in enumerate(positions(rules, rnd, 10)):
        seat = position.to_act if position.to_act is not None else position.eldest
        view = position.view(seat)
        hands = sample_hands_many(view, rnd, 5)
        check_batch(Playout.from_view(view, rnd), hands, i)
        coverage.update(kind(position))
    assert coverage["mid-trick"], coverage


def test_positions_cover_every_kind() -> None:
    """The positions above go through every kind of position, over all rulesets."""
    coverage: Counter[str] = Counter()
    for rules in ALL_RULES:
        rnd = random.Random(f"batch-{rules_id(rules)}")
        for position in positions(rules, rnd, 10):
            coverage.update(kind(position))
    for name in ("auction", "mid-trick", "last trick", "contract", "penalties", "tiebreak"):
        assert coverage[name] >= 5, coverage


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(ALL_RULES),
    seed=st.integers(0, 2**32 - 1),
    deals=st.integers(1, 6),
    perfect=st.booleans(),
)
def test_batch_equals_scalar_property(rules: Ruleset, seed: int, deals: int, perfect: bool) -> None:
    """Any ruleset, any position, any floats: the batch is the scalar run, row for row."""
    rnd = random.Random(seed)
    position = next(positions(rules, rnd, 1))
    if perfect:  # the true deal, every row
        playout = Playout.from_match(position)
        hands = np.array([playout.hands] * deals, dtype=np.uint64)
    else:
        view = position.view(rnd.randrange(rules.players))
        hands = sample_hands_many(view, rnd, deals)
        playout = Playout.from_view(view, rnd)
    check_batch(playout, hands, seed)


def test_last_card_and_finished_hand() -> None:
    """A position with one card left, and one with none (the hand's scores, for every row)."""
    rnd = random.Random(7)
    match = Match(preset("classic"), 5)
    while match.phase is Phase.AUCTION:
        match.apply(match.legal_decisions()[0])
    while sum(match.hand_mask(s).bit_count() for s in match.seats) > 1:
        match.apply(rnd.choice(match.legal_cards()))
    playout = Playout.from_match(match)
    check_batch(playout, np.array([playout.hands] * 3), 1)
    done = playout.copy()
    expected = done.run(random.Random(1).random)
    scores = done.run_batch(np.zeros((4, 4), dtype=np.uint64))
    assert scores.tolist() == [expected] * 4


def test_default_floats_come_from_rng() -> None:
    """Without ``uniforms``: ``rng.random((plays, deals))``, column ``b`` for deal ``b``; seeded from random by default."""
    match = Match(preset("bassadewitz"), 3)
    playout = Playout.from_match(match)
    hands = np.array([playout.hands] * 16)
    by_rng = playout.run_batch(hands, rng=np.random.default_rng(9))
    floats = np.random.default_rng(9).random((plays_left(playout), 16)).T
    assert by_rng.tolist() == playout.run_batch(hands, uniforms=floats).tolist()
    random.seed(4)
    first = playout.run_batch(hands)
    random.seed(4)
    assert first.tolist() == playout.run_batch(hands).tolist()


def test_nested_sequences_are_accepted() -> None:
    playout = Playout.from_match(Match(preset("knaves"), 2))
    rows = [list(playout.hands), list(playout.hands)]
    floats = np.random.default_rng(0).random((2, plays_left(playout)))
    assert playout.run_batch(rows, uniforms=floats).tolist() == playout.run_batch(np.array(rows), uniforms=floats).tolist()


# -- refusals -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def classic() -> Playout:
    return Playout.from_match(Match(preset("classic"), 1))


def bad_hands(playout: Playout) -> list[tuple[object, str]]:
    good = list(playout.hands)
    swapped = good[:]
    low0 = good[0] & -good[0]
    swapped[0] = good[0] ^ low0 | 1 << 40  # a card of another pack instead, same count
    doubled = good[:]
    low1 = good[1] & -good[1]
    doubled[1] = good[1] ^ low1 | low0  # seat 1 gives up a card and holds one of seat 0's
    moved = good[:]
    moved[0], moved[1] = good[0] ^ low0, good[1] | low0  # seat 0 is one card short
    return [
        ([good[:3]], "shape"),
        ([], "shape"),
        ([[float(h) for h in good]], "dtype"),
        ([good, [-1, *good[1:]]], "row 1: a card mask is negative"),
        ([good, good, [1 << 53, *good[1:]]], "row 2: a card mask has bits beyond"),
        ([good, moved], "row 1: seat 0 holds 7 cards, this position needs 8"),
        ([doubled], "row 0: a card is dealt to two seats"),
        ([good, swapped], "row 1: the cards differ"),
        ([[object()] * 4], "dtype"),
    ]


def test_bad_hands_are_refused_naming_the_row(classic: Playout) -> None:
    for hands, message in bad_hands(classic):
        with pytest.raises(BatchError, match=message):
            classic.run_batch(hands)  # type: ignore[arg-type]  # bad hands, some not even numbers, on purpose


@pytest.mark.parametrize(
    ("floats", "message"),
    [
        (np.zeros((2, 31)), r"shape \(2, 32\)"),
        (np.zeros((2, 32), dtype=np.float32), "float64"),
        (np.full((2, 32), 1.0), "row 0: value 1.0 at step 0 is not in"),
        (np.array([[0.5] * 32, [0.5] * 31 + [np.nan]]), "row 1: value nan at step 31"),
        (np.array([[0.5] * 32, [-0.25] + [0.5] * 31]), r"row 1: value -0.25"),
    ],
)
def test_bad_uniforms_are_refused(classic: Playout, floats: np.ndarray, message: str) -> None:
    with pytest.raises(BatchError, match=message):
        classic.run_batch([classic.hands] * 2, uniforms=floats)


def test_bad_rng_and_count_are_refused(classic: Playout) -> None:
    with pytest.raises(BatchError, match=r"numpy\.random\.Generator"):
        classic.run_batch([classic.hands], rng=random.Random(1))  # type: ignore[arg-type]  # not a numpy Generator, on purpose
    view = Match(preset("classic"), 1).view(0)
    for count in (0, -1, 2.0):
        with pytest.raises(BatchError, match="count must be a positive int"):
            sample_hands_many(view, random.Random(1), count)  # type: ignore[arg-type]  # 2.0 on purpose
    assert issubclass(BatchError, PolignacError)


def test_sample_hands_many_rows_fit_the_view() -> None:
    match = Match(preset("classic", players=5), 4)
    rnd = random.Random(2)
    for _ in range(9):
        match.apply(rnd.choice(match.legal_decisions()))
    view = match.view(match.to_act or 0)
    hands = sample_hands_many(view, rnd, 20)
    assert hands.shape == (20, 5) and hands.dtype == np.uint64
    assert (hands[:, view.seat] == view.hand_mask).all()
    assert len({tuple(row) for row in hands.tolist()}) > 1, "rows are independent deals"
    Playout.from_view(view, rnd).run_batch(hands)  # every row passes the checks


def test_import_polignac_does_not_import_numpy() -> None:
    code = "import sys, polignac, polignac.playout; assert 'numpy' not in sys.modules, 'numpy imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("name", ["classic", "bassadewitz", "slobberhannes"])
def test_every_trick_to_one_seat(name: str) -> None:
    """Seat 0 holds the top of the pack: a made contract (capot and general) or the every-trick exception."""
    rules = preset(name, general=True) if preset(name).capot else preset(name)
    rnd = random.Random(name)
    match = Match(rules, 1, deals={1: top_cards_deal(rules, rnd)})
    if rules.contracts:
        match.apply(Contract.GENERAL)
    match.add_penalty(2, 1, "timeout")
    playout = Playout.from_match(match)
    scores = check_batch(playout, np.array([playout.hands] * 8), 3)
    taker, other = (-5, 5) if rules.contracts else rules.every_trick_scores
    assert scores.tolist() == [[taker, other, other + 1, other]] * 8


def test_trying_each_legal_card_as_the_docs_show() -> None:
    """docs/playouts.md: play a card in a copy and take it out of every row, then run the batch."""
    rnd = random.Random(3)
    match = Match(preset("classic"), 8)
    match.apply(Contract.PASS)
    while match.phase is Phase.AUCTION or not match.current_trick:
        match.apply(rnd.choice(match.legal_decisions()))
    seat = match.to_act
    assert seat is not None
    view = match.view(seat)
    hands = sample_hands_many(view, rnd, 50)
    playout = Playout.from_view(view, rnd)
    for card in view.legal_cards:
        p = playout.copy()
        p.play(card.index)
        after = hands.copy()
        after[:, seat] &= ~np.uint64(card.bit)
        check_batch(p, after, card.index)
