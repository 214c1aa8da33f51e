"""Speed benchmarks of the rules engine: the public API, the fast playout path, determinization.

Each part runs for a fixed wall-clock time on one thread and counts card plays and
finished hands.  Random choices come from a seeded ``random.Random`` so the work done is
the same from run to run; the figures still vary with the machine's load.
"""

from __future__ import annotations

import platform
import random
import time
from dataclasses import asdict, dataclass

from polignac import Card, Match, Phase, PlayerView, Ruleset, preset
from polignac.playout import Playout


@dataclass(frozen=True)
class EngineBench:
    """Throughput of one benchmark run."""

    rules: str
    seconds: float
    api_card_plays_per_s: float
    api_hands_per_s: float
    playout_card_plays_per_s: float
    playout_hands_per_s: float
    determinized_playouts_per_s: float
    python: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def bench_api(rules: Ruleset, seconds: float, seed: int = 1) -> tuple[float, float]:
    """Whole matches through ``Match.legal_decisions``/``Match.apply`` with uniform random choices."""
    rng = random.Random(seed)
    choice = rng.choice
    plays = hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        match = Match(rules, rng.randrange(2**64))
        while not match.is_over:
            decision = choice(match.legal_decisions())
            match.apply(decision)
            plays += type(decision) is Card
        hands += match.hand_number
    elapsed = time.perf_counter() - start
    return plays / elapsed, hands / elapsed


def bench_playout(rules: Ruleset, seconds: float, seed: int = 1) -> tuple[float, float]:
    """Random playouts of whole hands from copies of freshly dealt positions."""
    rng = random.Random(seed)
    rand = rng.random
    starts = [Playout.from_match(Match(rules, rng.randrange(2**64))) for _ in range(64)]
    first = starts[0]
    cards_per_hand = sum(first.hands[s].bit_count() for s in first.seats)
    hands = 0
    start_time = time.perf_counter()
    while time.perf_counter() - start_time < seconds:
        for start in starts:
            start.copy().run(rand)
        hands += len(starts)
    elapsed = time.perf_counter() - start_time
    return hands * cards_per_hand / elapsed, hands / elapsed


def _mid_hand_views(rules: Ruleset, count: int, rng: random.Random) -> list[PlayerView]:
    """Views of the seat to act a few tricks into a hand, as a searching bot meets them."""
    views: list[PlayerView] = []
    while len(views) < count:
        match = Match(rules, rng.randrange(2**64))
        stop = rng.randrange(1, 3 * rules.players)
        while not match.is_over and (match.phase is not Phase.PLAY or stop > 0):
            stop -= match.phase is Phase.PLAY
            match.apply(rng.choice(match.legal_decisions()))
        if not match.is_over and match.to_act is not None:
            views.append(match.view(match.to_act))
    return views


def bench_determinize(rules: Ruleset, seconds: float, seed: int = 1) -> float:
    """Determinizations (a deal of the unseen cards consistent with a view) each played out, per second."""
    rng = random.Random(seed)
    rand = rng.random
    views = _mid_hand_views(rules, 64, rng)
    done = 0
    start_time = time.perf_counter()
    while time.perf_counter() - start_time < seconds:
        for view in views:
            Playout.from_view(view, rng).run(rand)
        done += len(views)
    return done / (time.perf_counter() - start_time)


def bench_engine(rules_name: str = "classic", seconds: float = 3.0) -> EngineBench:
    """Run the three parts for ``seconds`` each."""
    rules = preset(rules_name)
    api_plays, api_hands = bench_api(rules, seconds)
    po_plays, po_hands = bench_playout(rules, seconds)
    determinized = bench_determinize(rules, seconds)
    return EngineBench(
        rules=rules_name,
        seconds=seconds,
        api_card_plays_per_s=round(api_plays),
        api_hands_per_s=round(api_hands, 1),
        playout_card_plays_per_s=round(po_plays),
        playout_hands_per_s=round(po_hands, 1),
        determinized_playouts_per_s=round(determinized, 1),
        python=platform.python_version(),
    )
