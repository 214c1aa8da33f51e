"""Hostile: plays politely while a thread writes its stderr as fast as the pipe takes it, all match long.

params.json ``flood`` = "no" makes it a quiet bot (the baseline of the same match).
"""

import json
import os
import pathlib
import threading

from polignac import Card, PlayerView
from polignac.bot import Bot, run

FLOOD = json.loads(pathlib.Path("params.json").read_text()).get("flood", "yes") == "yes"


def flood() -> None:
    block = (b"flood " * 10 + b"\n") * 1024
    while True:
        try:
            os.write(2, block)
        except OSError:
            return


class Flooder(Bot):
    name = "stderr-flooder"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


if FLOOD:
    threading.Thread(target=flood, daemon=True).start()
run(Flooder())
