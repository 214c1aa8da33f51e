"""League chaos benchmark: remote bots on a network that freezes, resets and delays their connections.

Run ``python benchmarks/league_chaos.py`` for a table, ``--json`` for one JSON object on stdout.
In a temporary folder, on loopback only, it runs a real league (``polignac league serve``:
tables of ``--table-size`` 4, ``--bots / --table-size`` matches at once, classic rules,
remote bots only, matches to 10 points, a move 1 s and a bank 10 s, a reattach grace of 10 s)
twice, each time for ``--seconds`` (180):

1. **faulty**: ``--bots`` (20) remote bots on the Python SDK, each through a fault proxy of
   its own (tests/faultproxy.py) that delays every chunk by ``--latency-ms`` 100 ms +-
   ``--jitter-ms`` 50 ms each way and, per bot, freezes its whole path (every connection, new
   ones included) for 1 to 5 s and resets every connection, each at random times, on average
   once every 30 to 60 s (a mean drawn per bot, for each kind of fault; ``--fault-every``);
2. **clean**: the same, the same latency, no freeze and no reset.

For each run, from the league's store and the proxies:

- ``matches_finished``: matches that ended ``finished`` within the window (``matches_void``:
  aborted; a match called off before every bot took its seat is no match and is not counted);
- ``network_forfeits``: seats that forfeited in those matches (disconnected, or at
  ``max_faults``): with freezes shorter than the grace, every bot could come back in time,
  so the goal is 0; ``forfeits_by_reason`` breaks them down;
- ``timeouts``: decisions that timed out (``FAULT_TIMEOUT``: a freeze during a bot's turn
  spends its bank, and a long one its whole move);
- ``away``: times a seat was away (its stream lost or replaced) and ``back`` came back;
  ``away_at_end``: seats still away, within their grace, when their match ended (their last
  card played): no fault, and nothing left to come back for;
- ``detect_server_s`` / ``detect_client_s``: how long after a freeze began the league (resp.
  the bot) closed a connection it found dead, median and max, over the freezes that lasted
  long enough for it (``detections_*``: how many);
- ``freezes``, ``resets``: the faults injected.

Figures move with the machine's load (``load_average`` is reported).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fault proxy lives with the tests that use it too

from tests.faultproxy import FaultProxy  # noqa: E402  (after the path above)

from polignac import Card, Contract, PlayerView  # noqa: E402  (after the path above)
from polignac.bot import Bot  # noqa: E402  (after the path above)
from polignac.bot.league import ChannelSecurity, play_in_league  # noqa: E402  (after the path above)
from polignac_arena.league.config import load_league_config  # noqa: E402  (after the path above)
from polignac_arena.league.store import LeagueStore  # noqa: E402  (after the path above)

GRPC_LINE = re.compile(r"remote bots connect to (\S+)")
START_TIMEOUT_S = 60.0


class Chaotic(Bot):
    """A remote bot that plays a random legal option (seeded), quickly."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.version = "1.0"
        self.rng = random.Random(seed)

    def declare(self, view: PlayerView) -> Contract:
        return view.legal_contracts[0]

    def play(self, view: PlayerView) -> Card:
        return self.rng.choice(view.legal_cards)


@dataclass
class Faults:
    """What one bot's path suffers, and when."""

    freezes: list[float] = field(default_factory=list)
    resets: int = 0


async def _disturb(proxy: FaultProxy, rng: random.Random, faults: Faults, stop: asyncio.Event, every: tuple[float, float]) -> None:
    """Freeze the path 1 to 5 s and reset it, at random times (a mean interval drawn from ``every`` per kind)."""
    freeze_every, reset_every = rng.uniform(*every), rng.uniform(*every)
    loop = asyncio.get_running_loop()
    next_freeze = loop.time() + rng.expovariate(1 / freeze_every)
    next_reset = loop.time() + rng.expovariate(1 / reset_every)
    while not stop.is_set():
        soonest = min(next_freeze, next_reset)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), max(0.0, soonest - loop.time()))
        if stop.is_set():
            return
        if next_freeze <= next_reset:
            length = rng.uniform(1, 5)
            faults.freezes.append(length)
            proxy.freeze()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), length)
            proxy.thaw()
            next_freeze = loop.time() + rng.expovariate(1 / freeze_every)
        else:
            faults.resets += 1
            proxy.reset()
            next_reset = loop.time() + rng.expovariate(1 / reset_every)


def _write_league(folder: Path, table_size: int, parallel: int, bots: int) -> Path:
    config = folder / "league.toml"
    config.write_text(
        f'name = "chaos"\ntable_size = {table_size}\nparallel = {parallel}\n'
        '[rules]\nvariant = "classic"\nlimit = 10\n[time]\nmove_ms = 1000\nbank_ms = 10000\nstartup_ms = 10000\n'
        '[seats]\nkind = "process"\ntrusted = true\n[http]\naddress = "127.0.0.1:0"\n[grpc]\naddress = "127.0.0.1:0"\n'
        f"[limits]\nactive_bots = {bots + 10}\n[remote]\nreattach_grace_s = 10\n[drain]\ndeadline_s = 0\n"
        "[referees]\nprocesses = 1\n"  # the Play streams go through each bot's proxy, to the league's own address
    )
    return config


def _start_league(config: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "polignac_arena.cli", "league", "serve", "--config", str(config)]
    err = (config.parent / "serve.err").open("w")
    process = subprocess.Popen(command, cwd=config.parent, stdout=subprocess.PIPE, stderr=err, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if found := GRPC_LINE.search(line):
            return process, found.group(1)
    process.kill()
    raise SystemExit(f"the league did not start: {(config.parent / 'serve.err').read_text()[-2000:]}")


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _median_max(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return round(statistics.median(values), 3), round(max(values), 3)


def _figures(config: Path, window: tuple[str, str], proxies: list[FaultProxy], faults: list[Faults]) -> dict[str, Any]:
    league = load_league_config(config)
    with LeagueStore(league.store) as store:
        tournament = store.arena.get_tournament(league.name)
        listed = store.arena.list_results(tournament.id) if tournament is not None else []
        results = [store.arena.get_result(r.match_id) for r in listed]
    done = [r for r in results if r is not None and window[0] <= r.finished_at <= window[1]]
    finished = [r for r in done if r.status == "finished"]
    reasons: Counter[str] = Counter()
    timeouts = away = back = away_at_end = 0
    for result in finished:
        last: dict[int, str] = {}  # seat -> its last "away" or "back" line
        for line in result.record or []:
            if line.get("type") == "away":
                away += 1
                last[line["seat"]] = "away"
            elif line.get("type") == "back":
                back += 1
                last[line["seat"]] = "back"
            elif line.get("type") == "action" and line.get("status") == "timeout":
                timeouts += 1
        away_at_end += sum(1 for seat, kind in last.items() if kind == "away" and not result.faults[seat].get("disconnected"))
        for counts in result.faults:
            if counts.get("disconnected") or counts.get("crashed"):
                reasons["disconnected" if counts.get("disconnected") else "crashed"] += 1
            elif sum(counts.values()) >= league.rules.max_faults:
                reasons["max_faults"] += 1
    server = [d for p in proxies for link in p.links if (d := link.detection_s("server")) is not None]
    client = [d for p in proxies for link in p.links if (d := link.detection_s("client")) is not None]
    server_median, server_max = _median_max(server)
    client_median, client_max = _median_max(client)
    return {
        "matches_finished": len(finished),
        "matches_void": len(done) - len(finished),
        "network_forfeits": sum(reasons.values()),
        "forfeits_by_reason": dict(reasons),
        "timeouts": timeouts,
        "away": away,
        "back": back,
        "away_at_end": away_at_end,
        "detect_server_s": {"median": server_median, "max": server_max},
        "detect_client_s": {"median": client_median, "max": client_max},
        "detections_server": len(server),
        "detections_client": len(client),
        "freezes": sum(len(f.freezes) for f in faults),
        "resets": sum(f.resets for f in faults),
    }


async def _run(
    folder: Path,
    *,
    bots: int,
    table_size: int,
    seconds: float,
    faulty: bool,
    seed: int,
    latency_s: float,
    jitter_s: float,
    every: tuple[float, float],
) -> dict[str, Any]:
    config = _write_league(folder, table_size, max(1, bots // table_size), bots)
    with LeagueStore(load_league_config(config).store) as store:
        token = store.add_author("chaos")[1]
    process, address = await asyncio.to_thread(_start_league, config)
    proxies: list[FaultProxy] = []
    tasks: list[asyncio.Task[None]] = []
    faults = [Faults() for _ in range(bots)]
    stop = asyncio.Event()
    rng = random.Random(seed)
    try:
        for number in range(bots):
            proxy = FaultProxy(address, seed=seed + number)
            await proxy.start()
            proxy.set_latency(latency_s, jitter_s)
            proxies.append(proxy)
            bot = Chaotic(f"chaos{number:02d}", seed + number)
            security = ChannelSecurity.of(insecure=True)
            tasks.append(asyncio.ensure_future(play_in_league(bot, proxy.address, token, security, on_status=lambda text: None)))
            if faulty:
                tasks.append(asyncio.ensure_future(_disturb(proxy, random.Random(rng.random()), faults[number], stop, every)))
        started = _now()
        await asyncio.sleep(seconds)  # the run itself: bots play for this long
        ended = _now()
        stop.set()
        return {"bots": bots, "seconds": seconds, **_figures(config, (started, ended), proxies, faults)}
    finally:
        stop.set()
        await asyncio.to_thread(_stop, process)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(proxy.stop() for proxy in proxies), return_exceptions=True)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=20, help="remote bots (default 20)")
    parser.add_argument("--table-size", type=int, default=4, help="players per match (default 4)")
    parser.add_argument("--seconds", type=float, default=180.0, help="length of each run (default 180)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the faults and the bots (default 1)")
    parser.add_argument("--only", choices=("faulty", "clean"), help="run one of the two runs only")
    parser.add_argument("--latency-ms", type=float, default=100.0, help="each chunk's delay, each way (default 100)")
    parser.add_argument("--jitter-ms", type=float, default=50.0, help="plus or minus this (default 50)")
    parser.add_argument(
        "--fault-every", default="30,60", metavar="LOW,HIGH", help="mean seconds between a bot's freezes (and resets): drawn in LOW..HIGH"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.bots < args.table_size:
        parser.error(f"--bots must be at least --table-size ({args.table_size})")
    try:
        low, high = (float(x) for x in args.fault_every.split(","))
    except ValueError:
        parser.error(f"--fault-every must be LOW,HIGH in seconds, got {args.fault_every!r}")
    if not 0 < low <= high:
        parser.error(f"--fault-every needs 0 < LOW <= HIGH, got {args.fault_every!r}")
    if args.latency_ms < 0 or args.jitter_ms < 0:
        parser.error("--latency-ms and --jitter-ms must be >= 0")
    out: dict[str, Any] = {
        "table_size": args.table_size,
        "latency_ms": args.latency_ms,
        "jitter_ms": args.jitter_ms,
        "fault_every_s": [low, high],
        "grace_s": 10,
    }
    for name in ("faulty", "clean"):
        if args.only not in (None, name):
            continue
        with tempfile.TemporaryDirectory(prefix=f"polignac-chaos-{name}-") as folder:
            out[name] = asyncio.run(
                _run(
                    Path(folder),
                    bots=args.bots,
                    table_size=args.table_size,
                    seconds=args.seconds,
                    faulty=name == "faulty",
                    seed=args.seed,
                    latency_s=args.latency_ms / 1000,
                    jitter_s=args.jitter_ms / 1000,
                    every=(low, high),
                )
            )
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(out))
        return 0
    keys = ("matches_finished", "matches_void", "network_forfeits", "timeouts", "away", "back", "away_at_end", "freezes", "resets")
    runs = [name for name in ("faulty", "clean") if name in out]
    print(f"{'':24}" + "".join(f"{name:>12}" for name in runs))
    for key in keys:
        print(f"{key:24}" + "".join(f"{out[name][key]!s:>12}" for name in runs))
    for key in ("detect_server_s", "detect_client_s"):
        print(f"{key + ' median/max':24}" + "".join(f"{str(out[n][key]['median']) + '/' + str(out[n][key]['max']):>12}" for n in runs))
    print(f"load average {out['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
