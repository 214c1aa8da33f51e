"""Hostile (stdio transport): floods everything it can reach at once.

Child processes hold connections to its referee socket all match long (a stdio seat finds
none: they say so on stderr); a thread writes stderr by the megabyte (when asked); after each
answer it writes stale answers and blank lines by the megabyte.
"""

import json
import os
import pathlib
import socket
import sys
import threading
import time

PARAMS = json.loads(pathlib.Path("params.json").read_text())
# A stdio bot is given no referee socket (its bridge is the arena's): it tries where gRPC bots find theirs.
PATH = os.environ.get("POLIGNAC_ADDRESS", "unix:/run/polignac/referee.sock").removeprefix("unix:")
STDOUT_MB = int(PARAMS.get("stdout_mb", 16))
STDERR_MB = int(PARAMS.get("stderr_mb", 0))

PROCESSES = int(PARAMS.get("processes", 4))
reported_r, reported_w = os.pipe()
for _ in range(PROCESSES):
    if os.fork() == 0:
        held, refused = [], 0
        for _ in range(200):
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(1)
            try:
                sock.connect(PATH)
                held.append(sock)
            except OSError:
                refused += 1
                sock.close()
        print(f"connections: {len(held)} held, {refused} refused", file=sys.stderr, flush=True)
        os.write(reported_w, b".")
        time.sleep(3600)  # held until the sandbox is torn down
        os._exit(0)


def stderr_flood() -> None:
    for _ in range(PROCESSES):  # their reports first, where the arena keeps stderr
        os.read(reported_r, 1)
    for _ in range(STDERR_MB):
        os.write(2, b"e" * (1 << 20))


threading.Thread(target=stderr_flood, daemon=True).start()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "decision_request":
        continue
    rid = message["request_id"]
    choice = {"card": message["legal_cards"][0]} if message["kind"] == "card" else {"contract": "pass"}
    os.write(1, (json.dumps({"request_id": rid, **choice}) + "\n").encode())
    stale = (json.dumps({"request_id": rid + 1000, **choice}) + "\n").encode()
    for _ in range(STDOUT_MB):
        os.write(1, stale * 1000 + b"\n" * (1 << 20))
