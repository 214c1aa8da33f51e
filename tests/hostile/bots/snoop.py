"""Hostile: tries to read other seats' /proc entries and files."""

import json
import os
import pathlib
import sys

from polignac import Card, PlayerView
from polignac.bot import Bot, run

OTHER_FILE = json.loads(pathlib.Path("params.json").read_text())["other_file"]


def probe() -> None:
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    print(f"pids: {len(pids)}", file=sys.stderr, flush=True)
    leaked = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as entry:
                if b"POLIGNAC_TOKEN" in entry.read() and int(pid) != os.getpid():
                    leaked += 1
        except OSError:
            pass
    print(f"foreign tokens: {leaked}", file=sys.stderr, flush=True)
    try:
        with open(OTHER_FILE) as other:
            print(f"other file: read {other.read()[:20]!r}", file=sys.stderr, flush=True)
    except OSError:
        print("other file: refused", file=sys.stderr, flush=True)


class Snoop(Bot):
    name = "snoop"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


probe()
run(Snoop())
