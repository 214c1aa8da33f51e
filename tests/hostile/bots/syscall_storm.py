"""Polite but noisy: plays at once, while four threads open and close /dev/null without pause.

A reference for the flood benchmark: what a storm of system calls that touch nothing of the
arena costs the other seats (the kernel's work for them is charged to no seat's CPU cap).
"""

import os
import threading

from polignac import Card, PlayerView
from polignac.bot import Bot, run


def storm() -> None:
    while True:
        os.close(os.open("/dev/null", os.O_RDONLY))


for _ in range(4):
    threading.Thread(target=storm, daemon=True).start()


class SyscallStorm(Bot):
    name = "syscall-storm"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


run(SyscallStorm())
