"""Hostile: exits in the middle of a hand."""

import os

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class Quitter(Bot):
    name = "quitter"
    plays = 0

    def play(self, view: PlayerView) -> Card:
        self.plays += 1
        if self.plays == 3:
            os._exit(3)
        return view.legal_cards[0]


run(Quitter())
