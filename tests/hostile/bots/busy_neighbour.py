"""Polite but busy: plays at once, while two child processes burn all the CPU its seat may use.

The reference for the flood benchmark: what a seat's own CPU share costs the other seats,
whatever it spends it on.
"""

import subprocess
import sys

from polignac import Card, PlayerView
from polignac.bot import Bot, run

for _ in range(2):
    subprocess.Popen([sys.executable, "-c", "while True: pass"])


class BusyNeighbour(Bot):
    name = "busy-neighbour"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


run(BusyNeighbour())
