"""Hostile: double-forks a daemon meant to outlive the match, then plays normally."""

import json
import os
import pathlib
import sys

from polignac import Card, PlayerView
from polignac.bot import Bot, run

MARKER = json.loads(pathlib.Path("params.json").read_text())["marker"]


def daemonize() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 1024)
            # Named by its marker, so the test can look for it after the match.
            os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep(3600)  # {MARKER}"])
        os._exit(0)
    os.wait()


class Daemon(Bot):
    name = "daemon"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


daemonize()
run(Daemon())
