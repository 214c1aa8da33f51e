"""The expert bot's batched engine: a round of many deals played out at once per option (numpy).

Imported by :class:`polignac.bots.expert.ExpertBot` on first use with ``engine="batched"``,
so that ``import polignac`` does not import numpy.  Each round deals ``count`` hidden hands
at once (:func:`polignac.batch.sample_hands_many`) and plays every option out on all of
them with :meth:`polignac.playout.Playout.run_batch` and the ``duck`` policy, every option
with the same floats: the options then differ only by the decision.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from polignac.batch import sample_hands_many
from polignac.batch_duck import duck_tables
from polignac.playout import Playout
from polignac.rules import Ruleset
from polignac.view import PlayerView

__all__ = ["round_costs", "warm_up"]


def round_costs(
    view: PlayerView, starts: Sequence[Playout], alive: Sequence[int], rng: random.Random, count: int
) -> dict[int, list[float]]:
    """Each alive option's outcome on ``count`` new deals (lower is better), as the expert judges a hand.

    ``starts[i]`` is the position after option ``i`` (:func:`polignac.bots.search.start_after`);
    the outcome is the seat's score against the mean of the others', signed so that lower
    is better whatever the ruleset's direction.
    """
    seat = view.seat
    others = [s for s in view.seats if s != seat]
    hands = sample_hands_many(view, rng, count)
    plays = sum(h.bit_count() for h in starts[alive[0]].hands)
    floats = np.random.default_rng(rng.getrandbits(128)).random((count, plays))
    out = {}
    for i in alive:
        start = starts[i]
        hands[:, seat] = start.hands[seat]
        scores = start.run_batch(hands, uniforms=floats, policy="duck")
        cost = view.rules.against * (scores[:, seat] - scores[:, others].mean(axis=1))
        out[i] = cost.tolist()
    return out


def warm_up(rules: Ruleset) -> None:
    """Build the duck policy's tables for ``rules`` now (numpy is loaded by this module's import), before the clock runs."""
    duck_tables(rules.pack, rules.strength, rules.card_points)
