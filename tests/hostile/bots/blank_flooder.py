"""Hostile (stdio transport): answers each request, then floods its stdout with blank lines."""

import json
import os
import sys

FLOOD_MB = 64

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "decision_request":
        continue
    choice = {"card": message["legal_cards"][0]} if message["kind"] == "card" else {"contract": "pass"}
    os.write(1, (json.dumps({"request_id": message["request_id"], **choice}) + "\n").encode())
    for _ in range(FLOOD_MB):
        os.write(1, b"\n" * (1 << 20))
