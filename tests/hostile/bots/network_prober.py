"""Hostile: looks for a network. It only ever targets the loopback port the test gives it."""

import json
import pathlib
import socket
import sys

from polignac import Card, PlayerView
from polignac.bot import Bot, run

PORT = int(json.loads(pathlib.Path("params.json").read_text())["port"])


def probe() -> None:
    names = [name for _, name in socket.if_nameindex()]
    print(f"interfaces: {','.join(names)}", file=sys.stderr, flush=True)
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=1):
            print("tcp: connected", file=sys.stderr, flush=True)
    except OSError as exc:
        print(f"tcp: failed {exc.__class__.__name__}", file=sys.stderr, flush=True)


class Prober(Bot):
    name = "network-prober"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


probe()
run(Prober())
