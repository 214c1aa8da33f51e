"""Hostile: answers the auction, then sleeps instead of playing."""

import time

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class Sleeper(Bot):
    name = "sleeper"

    def play(self, view: PlayerView) -> Card:
        time.sleep(3600)
        return view.legal_cards[0]


run(Sleeper())
