"""Flood benchmark: do four polite seats keep their pace beside one seat that floods everything?

Run ``python benchmarks/floods.py`` for a table, ``--json`` for one JSON object, ``--quick``
for a smoke run (one match per case to 5 points, process seats only).

Each case is a 5-player classic match, seed fixed, in sandboxed seats of one kind
(``process``: bubblewrap; ``docker``): seat 0 is the case's bot, seats 1-4 are the built-in
bots heuristic, cautious, random, heuristic.

- ``quiet``: seat 0 is a polite built-in bot too: the baseline.
- ``busy``: seat 0 (tests/hostile/bots/busy_neighbour.py) plays at once but keeps all the CPU
  its seat may use busy: what a seat's own CPU share costs the others, whatever it computes.
- ``syscall-storm``: seat 0 (tests/hostile/bots/syscall_storm.py) plays at once while four
  threads open and close /dev/null without pause: what a storm of system calls that touch
  nothing of the arena costs the others (the kernel's work for them is charged to no seat's
  CPU cap).  The floods below are storms of system calls too; compare them with this row.
- ``stdio-flood``: seat 0 (tests/hostile/bots/flooder.py, stdio transport) tries to open
  connections to a referee socket without pause (a stdio seat is given none: each try fails at
  once), writes blank lines and stale Decisions on stdout by the megabyte and stderr lines as
  fast as the pipe takes them, for the whole match.
- ``grpc-flood``: seat 0 (tests/hostile/bots/grpc_flooder.py, gRPC) says Hello and then
  writes Decisions that answer nothing as fast as its stream takes them, while it also tries
  to open connections and floods stderr.
- ``unjoined-flood``: seat 0 (tests/hostile/bots/unjoined_flooder.py) never says Hello and
  opens connections to its socket as fast as it can.  Nobody plays until seating ends (at the
  start-up allowance, 5 s here), so the polite seats' pace is not in question; its row shows
  what the flood costs the arena meanwhile (``arena_cpu_s``): each connection is accepted and
  closed by gRPC until the socket goes.
- ``polite-flood``: seat 0 (tests/hostile/bots/polite_flooder.py) plays every decision at once
  and correctly while it floods what is no fault (connections, stderr) from its Welcome on:
  the match runs to its end with the flood beside it all along.  In the cases above the
  flooder's faults soon make it forfeit, and a forfeit ends the match (section 8 of the
  rules): what is left are tie-break hands among the polite seats, a short exposure.

For each case: the polite seats' decision times on the referee's clock (the ``ms`` of each of
their ``action`` lines: median and 95th percentile), their faults (expected: none), seat 0's
faults and place, the match's wall time, and the arena's CPU time (this process, user +
system; for Docker seats the daemon's own work is not in it).  ``p95_ratio`` is a case's
polite p95 over the quiet case's, per kind: the issue's bound is 2.

CPU caps: every seat gets ``--cpus`` (default: the arena's default seat cap, 1 CPU).  On a
machine with few cores a small cap can hurt the others more than a large one: a seat throttled
by its cgroup runs in bursts when its CPU time comes back (``busy`` with ``--cpus 0.4`` shows it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from polignac import preset
from polignac_arena.record_lines import ActionLine
from polignac_arena.referee import TimeControl
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatLimits, launcher_for
from polignac_arena.submission import Submission, builtin_submission, load_submission

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "hostile" / "bots"
POLITE = ("heuristic", "cautious", "random", "heuristic")
SEED = 11
CLOCK = TimeControl(move_ms=1000, bank_ms=2000, startup_ms=5_000)
SEATS = 5
QUICK_LIMIT = 5
"""A smoke run's matches end at this many points (a full run's at the classic 20)."""

CASES: dict[str, tuple[str, str] | None] = {
    "quiet": None,
    "busy": ("busy_neighbour.py", "grpc"),
    "syscall-storm": ("syscall_storm.py", "grpc"),
    "stdio-flood": ("flooder.py", "stdio"),
    "grpc-flood": ("grpc_flooder.py", "grpc"),
    "unjoined-flood": ("unjoined_flooder.py", "grpc"),
    "polite-flood": ("polite_flooder.py", "grpc"),
}


def seat_limits(cpus: float) -> SeatLimits:
    return SeatLimits(memory_mb=256, cpus=cpus, pids=48, cpu_seconds=120)


def flooder(tmp: Path, script: str, transport: str) -> Submission:
    folder = tmp / script.removesuffix(".py")
    folder.mkdir(mode=0o755)
    (folder / script).write_text((BOTS / script).read_text())
    (folder / "bot.toml").write_text(
        f'name = "{folder.name.replace("_", "-")}"\nversion = "1"\nlanguage = "python"\n'
        f'command = ["python", "{script}"]\ntransport = "{transport}"\n'
    )
    return load_submission(folder)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def one_match(kind: str, case: str, tmp: Path, limits: SeatLimits, limit: int) -> dict[str, Any]:
    launcher = launcher_for(kind)
    spec = CASES[case]
    first = builtin_submission("cautious") if spec is None else flooder(tmp, *spec)
    bots = [first, *(builtin_submission(name) for name in POLITE)]
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    began = time.perf_counter()
    result, stderrs = await run_local_match(
        bots, preset("classic", players=SEATS, limit=limit), SEED, CLOCK, launcher=launcher, limits=limits
    )
    wall = time.perf_counter() - began
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    polite = [line.ms for line in result.lines if isinstance(line, ActionLine) and line.seat != 0 and line.ms is not None]
    return {
        "status": result.status,
        "polite_ms": polite,
        "polite_faults": result.faults[1:],
        "seat0_faults": result.faults[0],
        "seat0_place": None if result.places is None else result.places[0],
        "seat0_stderr_bytes": len(stderrs[0].encode()),
        "wall_s": wall,
        "arena_cpu_s": (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime),
    }


async def measure(kinds: list[str], repeats: int, cpus: float, limit: int = 20) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": {}, "unavailable": {}, "repeats": repeats, "seat_cpus": cpus}
    limits = seat_limits(cpus)
    with tempfile.TemporaryDirectory(prefix="polignac-bench-floods-") as tmp:
        Path(tmp).chmod(0o755)
        for kind in kinds:
            launcher = launcher_for(kind)
            reason = launcher.unavailable()
            if reason is None and kind == "process" and type(launcher).__name__ != "SandboxLauncher":
                reason = "bubblewrap is not usable here: process seats would not be sandboxed"
            if reason is not None:
                out["unavailable"][kind] = reason
                continue
            for case in CASES:
                runs = [await one_match(kind, case, Path(tempfile.mkdtemp(dir=tmp)), limits, limit) for _ in range(repeats)]
                polite = [ms for run in runs for ms in run["polite_ms"]]
                out["cases"][f"{kind}/{case}"] = {
                    "finished": all(run["status"] == "finished" for run in runs),
                    "polite_decisions": len(polite),
                    "polite_median_ms": round(statistics.median(polite), 3) if polite else None,
                    "polite_p95_ms": round(percentile(polite, 0.95), 3) if polite else None,
                    "polite_faults": sum(sum(counts.values()) for run in runs for counts in run["polite_faults"]),
                    "seat0_faults": [run["seat0_faults"] for run in runs],
                    "seat0_place": [run["seat0_place"] for run in runs],
                    "seat0_stderr_bytes": max(run["seat0_stderr_bytes"] for run in runs),
                    "wall_s": round(statistics.median(run["wall_s"] for run in runs), 2),
                    "arena_cpu_s": round(statistics.median(run["arena_cpu_s"] for run in runs), 2),
                }
            quiet = out["cases"][f"{kind}/quiet"]["polite_p95_ms"]
            for case in CASES:
                if case != "quiet":
                    row = out["cases"][f"{kind}/{case}"]
                    row["p95_ratio"] = round(row["polite_p95_ms"] / quiet, 2) if quiet and row["polite_p95_ms"] else None
    return out


def table(result: dict[str, Any]) -> str:
    rows = [
        f"each seat's CPU cap: {result['seat_cpus']}",
        "case                   polite median   polite p95   ratio   polite faults   seat 0 faults              wall    arena CPU",
    ]
    for name, row in result["cases"].items():
        ratio = f"{row['p95_ratio']:5.2f}" if row.get("p95_ratio") is not None else "    -"
        faults = "; ".join(", ".join(f"{k} {v}" for k, v in sorted(f.items())) or "none" for f in row["seat0_faults"])
        rows.append(
            f"{name:<22} {row['polite_median_ms']:10.2f} ms {row['polite_p95_ms']:9.2f} ms   {ratio}   {row['polite_faults']:13d}"
            f"   {faults[:24]:<24} {row['wall_s']:6.2f} s {row['arena_cpu_s']:8.2f} s"
        )
    for kind, reason in result["unavailable"].items():
        rows.append(f"{kind}: not measured: {reason}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: process seats, one match per case, to 5 points")
    parser.add_argument("--kinds", default="process,docker", help="comma-separated seat kinds (default process,docker)")
    parser.add_argument("--repeats", type=int, default=3, help="matches per case (default 3)")
    parser.add_argument("--cpus", type=float, default=None, help=f"each seat's CPU cap (default {SeatLimits().cpus}, the arena's default)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    kinds = ["process"] if args.quick else [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in ("process", "docker")]
    if bad:
        parser.error(f"unknown seat kind(s) {', '.join(map(repr, bad))}: choose from process, docker")
    cpus = SeatLimits().cpus if args.cpus is None else args.cpus
    if not 0.1 <= cpus <= 64:
        parser.error(f"--cpus must be in 0.1..64, got {cpus}")
    result = asyncio.run(measure(kinds, 1 if args.quick else max(1, args.repeats), cpus, QUICK_LIMIT if args.quick else 20))
    print(json.dumps(result, sort_keys=True) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
