"""Seat benchmark: how long a seat of each kind takes to start, and one match's wall time per kind.

Run ``python benchmarks/seats.py`` for a table, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run (fewer samples).  Kinds that cannot run here (no bubblewrap, no
Docker daemon) are listed under ``unavailable`` with the reason, not measured.

What is measured, for each kind (``inprocess``, ``process``, ``docker``):

- ``seat_start_ms``: the median time of ``launcher.start()`` for a built-in bot, from the call
  until the seat runs: the sandbox or container is set up and the bot's command started
  (``process`` is the bubblewrap sandbox when bubblewrap is usable, else an unsandboxed
  process; ``sandboxed`` says which).  The targets: a bubblewrap seat under 100 ms, a
  Docker seat under 1 s.
- ``bot_connect_ms``: the median time from the same call until the bot, a Python program
  importing the SDK and grpc, opens its connection to the referee's socket: what a seat
  costs before its first message, the interpreter's own start-up included (the same bot
  as a plain process, ``unsandboxed``, is the baseline the sandbox adds to).
- ``match_wall_s``: the median wall time of the same 4-player classic match (seed fixed,
  built-in bots random, cautious, heuristic, random) with every seat of that kind, seats'
  start and removal included.

Each kind is warmed up once (the Docker runtime image, bubblewrap's probe) before it is timed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from polignac import preset
from polignac_arena.referee import TimeControl
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatContext, SeatKind, SeatLauncher, SeatLimits, launcher_for
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.submission import builtin_submission

KINDS = ("inprocess", "process", "docker")
MATCH_BOTS = ("random", "cautious", "heuristic", "random")
MATCH_SEED = 2026
CLOCK = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
LIMITS = SeatLimits()


def launcher(kind: str) -> tuple[SeatLauncher | None, str | None]:
    """The launcher of ``kind``, or why it cannot run here."""
    chosen = launcher_for(kind)
    reason = chosen.unavailable()
    return (None, reason) if reason is not None else (chosen, None)


async def start_once(chosen: SeatLauncher, root: Path, number: int, trusted: bool) -> tuple[float, float | None]:
    """Start one seat of a built-in bot; (ms until start() returned, ms until the bot connected or None)."""
    folder = root / f"start{number}"
    socket_dir = folder / "referee"
    workdir = folder / "seat0"
    socket_dir.mkdir(parents=True)
    workdir.mkdir(mode=0o777)
    for path, mode in ((folder, 0o711), (socket_dir, 0o755), (workdir, 0o777)):
        os.chmod(path, mode)
    socket = socket_dir / "referee.sock"
    connected = asyncio.get_running_loop().create_future()

    def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not connected.done():
            connected.set_result(time.perf_counter())
        writer.close()

    server = await asyncio.start_unix_server(on_connect, path=str(socket))
    os.chmod(socket, 0o666)
    context = SeatContext(
        seat=0,
        token="benchmark-token",
        submission=builtin_submission("random"),
        limits=LIMITS,
        referee_socket=socket,
        workdir=workdir,
        trusted=trusted,
        match_id=f"bench-start-{number}",
    )
    began = time.perf_counter()
    seat = await chosen.start(context)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(30):
            connect_at: float | None = await connected
    except TimeoutError:
        connect_at = None
    finally:
        await seat.stop()
        server.close()
        await server.wait_closed()
    return (started - began) * 1000, None if connect_at is None else (connect_at - began) * 1000


async def seat_starts(chosen: SeatLauncher, samples: int, trusted: bool) -> dict[str, float | None]:
    """Median start and connect times over ``samples`` seats (after one warm-up)."""
    with tempfile.TemporaryDirectory(prefix="polignac-bench-seats-") as tmp:
        root = Path(tmp)
        os.chmod(root, 0o711)
        await start_once(chosen, root, 0, trusted)
        starts, connects = [], []
        for number in range(1, samples + 1):
            start_ms, connect_ms = await start_once(chosen, root, number, trusted)
            starts.append(start_ms)
            if connect_ms is not None:
                connects.append(connect_ms)
    return {
        "start_ms": round(statistics.median(starts), 1),
        "connect_ms": round(statistics.median(connects), 1) if connects else None,
    }


async def match_wall(kind: str, chosen: SeatLauncher, repeats: int) -> float:
    """The median wall time, in seconds, of the benchmark match with every seat of ``kind``."""
    bots = [builtin_submission(name) for name in MATCH_BOTS]
    walls = []
    for _ in range(repeats):
        began = time.perf_counter()
        result, _ = await run_local_match(bots, preset("classic"), MATCH_SEED, CLOCK, launcher=chosen, trusted=kind == "inprocess")
        walls.append(time.perf_counter() - began)
        if result.status != "finished":
            raise RuntimeError(f"the {kind} match did not finish: {result.status} {result.faults}")
    return round(statistics.median(walls), 3)


async def measure(kinds: list[str], samples: int, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seat_start_ms": {},
        "bot_connect_ms": {},
        "match_wall_s": {},
        "unavailable": {},
        "samples": samples,
        "match_repeats": repeats,
    }
    for kind in kinds:
        chosen, reason = launcher(kind)
        if chosen is None:
            out["unavailable"][kind] = reason
            continue
        if kind == "process":
            out["sandboxed"] = not isinstance(chosen, ProcessLauncher)
        if kind != "inprocess":
            starts = await seat_starts(chosen, samples, trusted=False)
            out["seat_start_ms"][kind] = starts["start_ms"]
            out["bot_connect_ms"][kind] = starts["connect_ms"]
        out["match_wall_s"][kind] = await match_wall(kind, chosen, repeats)
    baseline = await seat_starts(ProcessLauncher(), samples, trusted=True)
    out["seat_start_ms"]["unsandboxed"] = baseline["start_ms"]
    out["bot_connect_ms"]["unsandboxed"] = baseline["connect_ms"]
    return out


def table(result: dict[str, Any]) -> str:
    rows = ["kind          seat start   bot connected   match wall"]
    for kind in (*KINDS, "unsandboxed"):
        start = result["seat_start_ms"].get(kind)
        connect = result["bot_connect_ms"].get(kind)
        wall = result["match_wall_s"].get(kind)
        if start is None and wall is None:
            continue
        cells = [
            f"{start:8.1f} ms" if start is not None else "           -",
            f"{connect:10.1f} ms" if connect is not None else "             -",
            f"{wall:8.2f} s" if wall is not None else "         -",
        ]
        rows.append(f"{kind:<12}{cells[0]}   {cells[1]}   {cells[2]}")
    for kind, reason in result["unavailable"].items():
        rows.append(f"{kind}: not measured: {reason}")
    if "sandboxed" in result and not result["sandboxed"]:
        rows.append("process seats are NOT sandboxed here (no usable bubblewrap)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 start and 1 match per kind")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated seat kinds (default {','.join(KINDS)})")
    parser.add_argument("--samples", type=int, default=15, help="seat starts per kind (default 15)")
    parser.add_argument("--repeats", type=int, default=3, help="matches per kind (default 3)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the per-seat 'runs UNSANDBOXED' warnings of the baseline are expected here
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        parser.error(f"unknown seat kind(s) {', '.join(map(repr, bad))}: choose from {', '.join(KINDS)}")
    samples, repeats = (1, 1) if args.quick else (max(1, args.samples), max(1, args.repeats))
    result = asyncio.run(measure([SeatKind(k).value for k in kinds], samples, repeats))
    print(json.dumps(result, sort_keys=True) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
