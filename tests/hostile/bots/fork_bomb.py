"""Hostile: forks without end on its first move, then keeps playing with whatever it has left."""

import os
import sys
import time

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class ForkBomb(Bot):
    name = "fork-bomb"
    exploded = False

    def play(self, view: PlayerView) -> Card:
        if not self.exploded:
            self.exploded = True
            children = 0
            for _ in range(100_000):
                try:
                    if os.fork() == 0:
                        time.sleep(3600)
                        os._exit(0)
                    children += 1
                except OSError:
                    break
            print(f"fork bomb: {children} children before the limit", file=sys.stderr, flush=True)
        return view.legal_cards[0]


run(ForkBomb())
