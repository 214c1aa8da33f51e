"""Hostile (stdio transport): floods everything it can reach, all at once, for the whole match.

- connections: threads open connections to its referee socket as fast as they can, keeping
  as many open as its descriptor limit allows and opening more as the arena closes them;
- stdout: blank lines by the megabyte, and Decisions that answer nothing (stale ids);
- stderr: lines as fast as the pipe takes them.

It never answers a request properly.  params.json may name which floods to run
(``floods``: a comma-separated subset of connections,stdout,stderr; default all).
"""

import json
import os
import socket
import sys
import threading
from pathlib import Path

params = json.loads(Path("params.json").read_text()) if os.path.exists("params.json") else {}
floods = set((params.get("floods") or "connections,stdout,stderr").split(","))
# A stdio bot is given no referee socket (its bridge is the arena's): it tries where gRPC bots find theirs.
address = os.environ.get("POLIGNAC_ADDRESS", "unix:/run/polignac/referee.sock")


def connections() -> None:
    path = address.removeprefix("unix:")
    held: list[socket.socket] = []
    while True:
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(path)
            held.append(conn)
        except OSError:
            # Out of descriptors, or the socket is gone: let one go and try again.
            if held:
                held.pop(0).close()


def stderr() -> None:
    line = b"flood " * 16 + b"\n"
    while True:
        try:
            os.write(2, line)
        except OSError:
            return


def stdout() -> None:
    blank = b"\n" * 65536
    stale = b'{"request_id": 1, "card": "7S"}\n' * 64
    while True:
        try:
            os.write(1, blank)
            os.write(1, stale)
        except OSError:
            return


threads = []
for name, target in (("connections", connections), ("stderr", stderr), ("stdout", stdout)):
    if name in floods:
        for _ in range(4 if name == "connections" else 1):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            threads.append(thread)
for _line in sys.stdin:  # keep reading the arena's lines so its writes never block
    pass
