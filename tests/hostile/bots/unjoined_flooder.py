"""Hostile (gRPC seat): never says Hello; opens connections to its referee socket as fast as it can.

Its socket accepts a few connections at once and closes the others: each one it opens is
accepted and closed by the arena until seating ends (the start-up allowance), when the
socket goes and the seat forfeits.
"""

import os
import socket
import threading

path = os.environ["POLIGNAC_ADDRESS"].removeprefix("unix:")


def connections() -> None:
    held: list[socket.socket] = []
    while True:
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(path)
            held.append(conn)
            if len(held) > 32:
                held.pop(0).close()
        except OSError:
            if held:
                held.pop(0).close()


threads = [threading.Thread(target=connections) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
