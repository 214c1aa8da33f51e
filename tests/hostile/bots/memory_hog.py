"""Hostile: allocates memory until something stops it."""

from polignac import Card, PlayerView
from polignac.bot import Bot, run


class Hog(Bot):
    name = "memory-hog"

    def play(self, view: PlayerView) -> Card:
        hoard: list[bytearray] = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))
            for i in range(0, len(hoard[-1]), 4096):  # touch every page: really resident
                hoard[-1][i] = 1


run(Hog())
