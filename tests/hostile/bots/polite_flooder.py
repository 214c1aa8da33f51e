"""Plays every decision at once and correctly, while flooding what is no fault, all match long.

Once welcomed, threads try to open connections to its referee socket without pause and write
stderr as fast as it is taken: nothing of that is a fault, so the seat plays the whole match
and the other seats live beside the flood from the first trick to the last.
"""

import os
import socket
import threading

from polignac import Card, PlayerView
from polignac.bot import Bot, MatchInfo, run

PATH = os.environ["POLIGNAC_ADDRESS"].removeprefix("unix:")


def connections() -> None:
    held: list[socket.socket] = []
    while True:
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(PATH)
            held.append(conn)
        except OSError:
            if held:
                held.pop(0).close()


def stderr() -> None:
    while True:
        os.write(2, b"flood " * 16 + b"\n")


class PoliteFlooder(Bot):
    name = "polite-flooder"

    def on_match_start(self, info: MatchInfo) -> None:
        for target in (connections, connections, stderr):
            threading.Thread(target=target, daemon=True).start()

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


run(PoliteFlooder())
