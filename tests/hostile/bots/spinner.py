"""Hostile: burns CPU instead of playing."""

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class Spinner(Bot):
    name = "spinner"

    def play(self, view: PlayerView) -> Card:
        n = 0
        while True:
            n += 1


run(Spinner())
