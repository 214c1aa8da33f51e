"""Speed benchmarks of the rules engine: the public API, the fast playout path, determinization.

Each part runs for a fixed wall-clock time on one thread and counts card plays and
finished hands.  Random choices come from a seeded ``random.Random`` (the batched part: a
seeded ``numpy.random.Generator``) so the work done is the same from run to run; the
figures still vary with the machine's load.
"""

from __future__ import annotations

import platform
import random
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Final

from polignac import Card, Match, Phase, PlayerView, Ruleset, preset
from polignac.playout import Playout

if TYPE_CHECKING:  # numpy is a dependency of the batched part only
    import numpy as np
    import numpy.typing as npt

DEFAULT_BATCH: Final = 16384
"""Deals per batch of the batched part by default."""


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
    batch_size: int | None = None
    """Deals per ``Playout.run_batch`` call in the batched part; ``None`` when it did not run."""
    batched_card_plays_per_s: float | None = None
    batched_hands_per_s: float | None = None
    batched_determinized_per_s: float | None = None
    """Determinizations dealt from a view (``sample_hands_many``) and played out (``run_batch``), per second."""
    playout_card_plays_per_cpu_s: float | None = None
    """The fast playout's card plays per second of this process's CPU time: on a busy machine, a core's worth."""
    batched_card_plays_per_cpu_s: float | None = None

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


def bench_playout(rules: Ruleset, seconds: float, seed: int = 1) -> tuple[float, float, float]:
    """Random playouts of whole hands from copies of freshly dealt positions: plays/s, hands/s, plays per CPU second."""
    rng = random.Random(seed)
    rand = rng.random
    starts = [Playout.from_match(Match(rules, rng.randrange(2**64))) for _ in range(64)]
    first = starts[0]
    cards_per_hand = sum(first.hands[s].bit_count() for s in first.seats)
    hands = 0
    start_time, start_cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start_time < seconds:
        for start in starts:
            start.copy().run(rand)
        hands += len(starts)
    elapsed, cpu = time.perf_counter() - start_time, time.process_time() - start_cpu
    return hands * cards_per_hand / elapsed, hands / elapsed, hands * cards_per_hand / max(cpu, 1e-9)


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


def _shuffled_deals(playout: Playout, count: int, rng: np.random.Generator) -> npt.NDArray[np.uint64]:
    """``count`` random deals of ``playout``'s cards, each seat as many as it holds: a (count, players) array."""
    import numpy as np  # a dependency of the batched part only, like polignac.batch

    cards = np.array([i for i in range(52) if any(h >> i & 1 for h in playout.hands)], dtype=np.uint64)
    order = np.argsort(rng.random((count, len(cards))), axis=1)
    bits = np.left_shift(np.uint64(1), cards[order])
    deals = np.zeros((count, len(playout.hands)), dtype=np.uint64)
    start = 0
    for seat, hand in enumerate(playout.hands):
        size = hand.bit_count()
        if size:
            deals[:, seat] = np.bitwise_or.reduce(bits[:, start : start + size], axis=1)
        start += size
    return deals


def bench_batched(rules: Ruleset, seconds: float, batch_size: int = DEFAULT_BATCH, seed: int = 1) -> tuple[float, float, float]:
    """``Playout.run_batch`` of ``batch_size`` deals of a freshly dealt position at a time: plays/s, hands/s, plays per CPU second.

    The floats are drawn by numpy.

    The deals are made before the clock starts (a searching bot makes them with
    :func:`polignac.batch.sample_hands_many`); the random floats, the checks of the
    hands and the scoring are timed.
    """
    import numpy as np

    rng = random.Random(seed)
    generator = np.random.default_rng(seed)
    starts = [Playout.from_match(Match(rules, rng.randrange(2**64))) for _ in range(4)]
    batches = [(start, _shuffled_deals(start, batch_size, generator)) for start in starts]
    cards_per_hand = sum(h.bit_count() for h in starts[0].hands)
    batches[0][0].run_batch(batches[0][1][:8], rng=generator)  # builds the look-up tables
    hands = 0
    start_time, start_cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start_time < seconds:
        for start, deals in batches:
            start.run_batch(deals, rng=generator)
            hands += batch_size
    elapsed, cpu = time.perf_counter() - start_time, time.process_time() - start_cpu
    return hands * cards_per_hand / elapsed, hands / elapsed, hands * cards_per_hand / max(cpu, 1e-9)


def bench_batched_determinize(rules: Ruleset, seconds: float, batch_size: int = DEFAULT_BATCH, seed: int = 1) -> float:
    """``sample_hands_many`` then ``run_batch`` from views a few tricks into a hand: what a searching bot runs."""
    import numpy as np

    from polignac.batch import sample_hands_many

    rng = random.Random(seed)
    generator = np.random.default_rng(seed)
    views = _mid_hand_views(rules, 8, rng)
    done = 0
    start_time = time.perf_counter()
    while time.perf_counter() - start_time < seconds:
        for view in views:
            hands = sample_hands_many(view, generator, batch_size)
            Playout.from_view(view, rng).run_batch(hands, rng=generator)
        done += len(views) * batch_size
    return done / (time.perf_counter() - start_time)


def bench_engine(rules_name: str = "classic", seconds: float = 3.0, batch_size: int | None = None) -> EngineBench:
    """Run the three parts for ``seconds`` each, and the two batched parts too when ``batch_size`` is given."""
    rules = preset(rules_name)
    api_plays, api_hands = bench_api(rules, seconds)
    po_plays, po_hands, po_cpu = bench_playout(rules, seconds)
    determinized = bench_determinize(rules, seconds)
    batched: tuple[float | None, ...] = (None, None, None, None)
    if batch_size is not None:
        plays, hands, cpu = bench_batched(rules, seconds, batch_size)
        batched = (round(plays), round(hands, 1), round(bench_batched_determinize(rules, seconds, batch_size), 1), round(cpu))
    return EngineBench(
        rules=rules_name,
        seconds=seconds,
        api_card_plays_per_s=round(api_plays),
        api_hands_per_s=round(api_hands, 1),
        playout_card_plays_per_s=round(po_plays),
        playout_hands_per_s=round(po_hands, 1),
        determinized_playouts_per_s=round(determinized, 1),
        python=platform.python_version(),
        batch_size=batch_size,
        batched_card_plays_per_s=batched[0],
        batched_hands_per_s=batched[1],
        batched_determinized_per_s=batched[2],
        playout_card_plays_per_cpu_s=round(po_cpu),
        batched_card_plays_per_cpu_s=batched[3],
    )
