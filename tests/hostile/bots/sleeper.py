"""Hostile: answers the auction, then sleeps instead of playing."""

import time

from polignac.bot import Bot, run


class Sleeper(Bot):
    name = "sleeper"

    def play(self, view):
        time.sleep(3600)


run(Sleeper())
