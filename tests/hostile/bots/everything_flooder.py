"""Hostile (stdio transport): floods everything it can reach at once.

Child processes hold connections to its referee socket all match long; after each answer
it writes stale answers and blank lines by the megabyte (and stderr, when asked).
"""

import json
import os
import pathlib
import socket
import sys
import time

PARAMS = json.loads(pathlib.Path("params.json").read_text())
PATH = os.environ["POLIGNAC_ADDRESS"].removeprefix("unix:")
STDOUT_MB = int(PARAMS.get("stdout_mb", 16))
STDERR_MB = int(PARAMS.get("stderr_mb", 0))

for _ in range(int(PARAMS.get("processes", 4))):
    if os.fork() == 0:
        held = []
        for _ in range(200):
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(1)
            try:
                sock.connect(PATH)
                held.append(sock)
            except OSError:
                sock.close()
        time.sleep(3600)  # held until the sandbox is torn down
        os._exit(0)

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
    for _ in range(STDERR_MB):
        os.write(2, b"e" * (1 << 20))
