"""The random bot: a uniformly random legal decision."""

from __future__ import annotations

import os
import random

from polignac.bot.base import Bot
from polignac.cards import Card
from polignac.values import Contract
from polignac.view import PlayerView


class RandomBot(Bot):
    """Plays a uniformly random legal card; always passes in the auction."""

    name = "random"
    version = "1.0"

    def __init__(self, seed: int | None = None) -> None:
        # Under the arena, POLIGNAC_BOT_SEED makes the bot's choices repeatable (and resumable).
        if seed is None and os.environ.get("POLIGNAC_BOT_SEED", "").isdigit():
            seed = int(os.environ["POLIGNAC_BOT_SEED"])
        self.rng = random.Random(seed)

    def declare(self, view: PlayerView) -> Contract:
        return Contract.PASS

    def play(self, view: PlayerView) -> Card:
        return self.rng.choice(view.legal_cards)
