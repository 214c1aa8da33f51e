"""Hostile: tries to write outside its temporary folder."""

import json
import pathlib
import sys

from polignac import Card, PlayerView
from polignac.bot import Bot, run

OUTSIDE = json.loads(pathlib.Path("params.json").read_text())["outside"]
TARGETS = [OUTSIDE, "/bot/owned.txt", "/etc/owned.txt", "/usr/owned.txt", "/owned.txt", "/run/polignac/owned.txt"]


def probe() -> None:
    for target in TARGETS:
        try:
            with open(target, "w") as out:
                out.write("owned")
            print(f"wrote: {target}", file=sys.stderr, flush=True)
        except OSError:
            print(f"refused: {target}", file=sys.stderr, flush=True)
    try:
        with open("/tmp/mine.txt", "w") as out:
            out.write("fine")
        print("tmp: writable", file=sys.stderr, flush=True)
    except OSError as exc:
        print(f"tmp: {exc}", file=sys.stderr, flush=True)


class Writer(Bot):
    name = "writer"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


probe()
run(Writer())
