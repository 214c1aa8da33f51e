"""The smallest useful bot: a uniformly random legal card, always pass in the auction."""

import os
import random

from polignac.bot import Bot, run

random.seed(os.environ.get("POLIGNAC_BOT_SEED"))  # the arena's seed makes the bot's choices repeatable


class RandomBot(Bot):
    name = "random"
    version = "1.1"

    def play(self, view):
        return random.choice(view.legal_cards)


if __name__ == "__main__":
    run(RandomBot())
