"""Hostile build step: ``python build_<marker>.py ACTION`` does one bad thing and reports it.

Each action prints ``PROBE <action>: <what happened>`` and exits 3 (so that the check stops after
its build step), except the actions whose point is what the build leaves behind (exit 0).
params.json holds the loopback port to try (``port``) and the name of the arena's secret
environment variable (``secret_name``).
"""

import json
import os
import socket
import sys
import time
from pathlib import Path

PARAMS = json.loads(Path("params.json").read_text())
ACTION = sys.argv[1]


def say(text: str) -> None:
    print(f"PROBE {ACTION}: {text}", flush=True)


def shadow() -> None:
    try:
        with open("/etc/shadow", "rb") as secret:
            say(f"read {len(secret.read())} bytes")
    except OSError as exc:
        say(f"refused ({type(exc).__name__})")


def docker() -> None:
    found = [path for path in ("/var/run/docker.sock", "/run/docker.sock") if os.path.exists(path)]
    for path in found:
        try:
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(path)
                say(f"connected to {path}")
                return
        except OSError:
            pass
    say("found " + ",".join(found) if found else "no socket")


def environ() -> None:
    leaked = PARAMS["secret_name"] in os.environ
    say(("secret seen" if leaked else "clean") + " " + ",".join(sorted(os.environ)))


def network() -> None:
    try:
        with socket.create_connection(("127.0.0.1", int(PARAMS["port"])), timeout=2):
            say("connected")
    except OSError as exc:
        say(f"failed {type(exc).__name__}")


def fork() -> None:
    started = 0
    for _ in range(500):
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            started += 1
        except OSError:
            break
    say(f"forked {started}")


def memory() -> None:
    block = b"x" * (2 << 30)  # every page written
    say(f"allocated {len(block) >> 20} MB")


def disk() -> None:
    written = 0
    chunk = b"\0" * (1 << 20)
    try:
        with open("big", "wb") as out:
            for _ in range(2048):
                out.write(chunk)
                written += 1
        say(f"wrote {written} MB")
    except OSError as exc:
        say(f"stopped at {written} MB ({type(exc).__name__})")


def forever() -> None:
    if os.fork() == 0:  # a child that would outlive a build killed alone
        while True:
            time.sleep(1)
    say("running forever")
    while True:
        time.sleep(1)


def chatter() -> None:
    line = b"x" * 1023 + b"\n"
    block = line * 1024
    for _ in range(100):  # 100 MB
        sys.stdout.buffer.write(block)
    sys.stdout.flush()
    say("printed 100 MB")


def symlink() -> None:
    os.symlink("/etc/shadow", "shadow")
    say("left a link to /etc/shadow")
    sys.exit(0)


def fifo() -> None:
    os.mkfifo("pipe")
    say("left a FIFO")
    sys.exit(0)


def manifest() -> None:
    with open("bot.toml", "a") as toml:
        toml.write("\n# changed by the build\n")
    Path("made.txt").write_text("made by the build\n")
    say("changed bot.toml")
    sys.exit(0)


globals()[ACTION]()
sys.exit(3)
