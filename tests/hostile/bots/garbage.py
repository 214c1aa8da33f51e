"""Hostile (stdio transport): answers every request with garbage lines."""

import sys

for line in sys.stdin:
    if '"request_id"' in line:
        sys.stdout.write("this is not json\n")
        sys.stdout.write("{]\n")
        sys.stdout.write("x" * 100_000 + "\n")
        sys.stdout.flush()
