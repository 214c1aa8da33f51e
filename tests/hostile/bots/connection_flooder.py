"""Hostile: floods its referee socket with connections from several processes, then plays.

Each child process opens as many connections as it may and holds them a while; the
parent then plays the match and, once welcomed, tries to connect a few times more.
"""

import json
import os
import pathlib
import select
import socket
import sys
import time

from polignac import Card, PlayerView
from polignac.bot import Bot, MatchInfo, run

PARAMS = json.loads(pathlib.Path("params.json").read_text())
PATH = os.environ["POLIGNAC_ADDRESS"].removeprefix("unix:")
PROCESSES = int(PARAMS.get("processes", 8))
PER_PROCESS = int(PARAMS.get("per_process", 200))
HOLD_S = float(PARAMS.get("hold_s", 2.0))


def closed_by_peer(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    try:
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def flood() -> None:
    held = []
    for _ in range(PER_PROCESS):
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(1)
        try:
            sock.connect(PATH)
        except OSError:
            sock.close()
            continue
        held.append(sock)
    time.sleep(HOLD_S)  # hold them: an arena that kept them all would be holding them now
    closed = sum(map(closed_by_peer, held))
    print(f"flood: {len(held)} connected, {closed} closed by the arena", file=sys.stderr, flush=True)


children = []
for _ in range(PROCESSES):
    pid = os.fork()
    if pid == 0:
        try:
            flood()
        finally:
            os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)


class Flooder(Bot):
    name = "connection-flooder"

    def on_match_start(self, info: MatchInfo) -> None:
        # A server queues many connections; the tarpit that takes the socket's place has room for one.
        tries = [socket.socket(socket.AF_UNIX) for _ in range(3)]
        try:
            for again in tries:
                again.setblocking(False)
                again.connect(PATH)
            print("after hello: connected", file=sys.stderr, flush=True)
        except BlockingIOError:
            print("after hello: no room", file=sys.stderr, flush=True)
        except OSError as exc:
            print(f"after hello: {type(exc).__name__}", file=sys.stderr, flush=True)
        finally:
            for again in tries:
                again.close()

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


run(Flooder())
