"""League load benchmark: remote bots over TLS on loopback, with matches refereed in the league process and in N referee processes.

Run ``python benchmarks/league_load.py`` for a table, ``--json`` for one JSON object on stdout.
In a temporary folder it starts a real ``polignac league serve`` (TLS on 127.0.0.1 with a
certificate from trustme, tables of ``--table-size`` 4, ``--bots / --table-size`` matches at
once, classic rules to ``--limit`` 20 points) and connects ``--bots`` (100) remote bots, all in
this one client process (the Python SDK's league mode, each playing a seeded random legal
card at once).  It does so twice, in one run:

1. ``[referees] processes = 1``: every match refereed in the league process (as before
   referee processes existed);
2. ``[referees] processes = --processes`` (default: the machine's cores, at least 2).

For each, after ``--warmup`` seconds of play, over ``--seconds``:

- ``decisions_per_s``: decisions the bots made (every request answered), ``matches_per_min``:
  matches that ended;
- ``league_cpu_ms_per_decision``: CPU time (user + system) of the league process alone,
  per decision: what the lobby, the ladder, the store, the web and (in configuration 1) the
  referee cost; ``referee_cpu_ms_per_decision``: the referee processes' together, and
  ``client_cpu_ms_per_decision``: this process's (the bots);
- ``handoff_ms``: p50 and p99 of the time from a bot's decision leaving this process to the
  next request of the same match arriving in it (the referee's turn, the network both ways,
  and this process's own delays: with every bot in one process it is busy too).

``--idle 1000`` measures instead the "many idle bots" case: the ladder is paused, and that
many remote bots join the Lobby at once; it reports the join time (from the first connection
to the last bot online; the CPU the league process and this client process spent meanwhile
beside it), the league process's memory per connection (its resident set after minus before,
over the bots) and its CPU while they sit idle for ``--seconds`` (share of a core).
``--quick``: a few seconds of each (the smoke test's mode).

Figures move with the machine's load (``load_average`` is reported); compare runs on the same
machine only.
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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polignac import Card, Contract, PlayerView
from polignac.bot import Bot
from polignac.bot.base import MatchInfo
from polignac.bot.league import ChannelSecurity, play_in_league
from polignac.statuses import MatchStatus
from polignac.values import Decision
from polignac_arena.league.config import load_league_config
from polignac_arena.league.store import LeagueStore

GRPC_LINE = re.compile(r"remote bots connect to (\S+)")
START_TIMEOUT_S = 120.0
TICKS = os.sysconf("SC_CLK_TCK")
AUTHORS = 4
"""The bots are shared among this many authors (an author may have at most 1,000 active bots)."""


class BenchError(RuntimeError):
    """The benchmark cannot run (a tool missing, the league did not start)."""


@dataclass
class Counters:
    """What the bots of one configuration saw, in this process."""

    decisions: int = 0
    matches_ended: set[str] = field(default_factory=set)
    handoffs_ms: list[float] = field(default_factory=list)
    last_sent: dict[str, float] = field(default_factory=dict)
    online: dict[str, float] = field(default_factory=dict)
    counting: bool = False

    def reset(self) -> None:
        self.decisions = 0
        self.matches_ended = set()
        self.handoffs_ms = []


class LoadBot(Bot):
    """A remote bot that plays a seeded random legal option at once and times each handoff."""

    def __init__(self, name: str, seed: int, counters: Counters) -> None:
        self.name = name
        self.version = "1.0"
        self.rng = random.Random(seed)
        self.counters = counters
        self.match_id = ""

    def on_match_start(self, info: MatchInfo) -> None:
        self.match_id = info.match_id

    def declare(self, view: PlayerView) -> Contract:
        return view.legal_contracts[0]

    def play(self, view: PlayerView) -> Card:
        return self.rng.choice(view.legal_cards)

    def decide(self, view: PlayerView) -> Decision:
        counters = self.counters
        now = time.perf_counter()
        sent = counters.last_sent.get(self.match_id)
        if counters.counting:
            counters.decisions += 1
            if sent is not None:
                counters.handoffs_ms.append((now - sent) * 1000)
        decision = super().decide(view)
        counters.last_sent[self.match_id] = time.perf_counter()
        return decision

    def on_match_end(self, places: tuple[int, ...], totals: tuple[int, ...], status: MatchStatus) -> None:
        self.counters.last_sent.pop(self.match_id, None)
        if self.counters.counting:
            self.counters.matches_ended.add(self.match_id)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(child) for child in found.stdout.split()]


def _write_league(folder: Path, *, bots: int, table_size: int, limit: int, processes: int) -> Path:
    try:
        import trustme
    except ImportError:
        raise BenchError("this benchmark makes its certificate with trustme: pip install -e '.[test]'") from None
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    parallel = max(1, min(64, bots // table_size))
    per_author = -(-bots // AUTHORS) + 10
    connections = bots * 3 + 100
    config = folder / "league.toml"
    config.write_text(
        f'name = "load"\ntable_size = {table_size}\nparallel = {parallel}\n'
        f'[rules]\nvariant = "classic"\nlimit = {limit}\n[time]\nmove_ms = 2000\nbank_ms = 20000\nstartup_ms = 20000\n'
        '[seats]\nkind = "process"\ntrusted = true\n'
        # The bots all come from 127.0.0.1: it is trusted (as a proxy would be), so no per-address cap holds it.
        '[http]\naddress = "127.0.0.1:0"\ntrusted_proxies = ["127.0.0.1"]\n'
        f'[grpc]\naddress = "127.0.0.1:0"\nmax_connections = {connections}\nmax_calls_per_address = {connections}\n'
        '[tls]\ncert = "cert.pem"\nkey = "key.pem"\n'
        f"[limits]\nactive_bots = {min(per_author, 1000)}\nbots = {per_author}\nuploads_per_hour = 10000\n"
        "[remote]\nreattach_grace_s = 10\nreply_ms = 30000\n[drain]\ndeadline_s = 0\n"
        f"[referees]\nprocesses = {processes}\n"
    )
    return config


class League:
    """A running ``polignac league serve`` in a folder of its own."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.err = (config.parent / "serve.err").open("w")
        command = [sys.executable, "-m", "polignac_arena.cli", "league", "serve", "--config", str(config)]
        self.process = subprocess.Popen(command, cwd=config.parent, stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.grpc = ""

    async def started(self) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.grpc:
            line = await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), max(0.1, deadline - time.monotonic()))
            if not line:
                raise BenchError(f"the league did not start: {(self.config.parent / 'serve.err').read_text()[-2000:]}")
            if found := GRPC_LINE.search(line):
                self.grpc = found.group(1)
        return self.grpc

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.err.close()


def _tokens(config: Path, *, paused: bool) -> list[str]:
    with LeagueStore(load_league_config(config).store) as store:
        if paused:
            store.set_setting("paused", "1")
        return [store.add_author(f"author{number}")[1] for number in range(AUTHORS)]


async def _connect(bots: int, grpc: str, tokens: list[str], folder: Path, counters: Counters) -> list[asyncio.Task[None]]:
    security = ChannelSecurity.of(folder / "ca.pem")

    def status(name: str) -> Any:
        def say(text: str) -> None:
            if text.startswith("online as") and name not in counters.online:
                counters.online[name] = time.perf_counter()

        return say

    return [
        asyncio.ensure_future(
            play_in_league(LoadBot(f"load{n}", n, counters), grpc, tokens[n % len(tokens)], security, on_status=status(f"load{n}"))
        )
        for n in range(bots)
    ]


async def _wait_online(counters: Counters, bots: int, timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        while len(counters.online) < bots:
            await asyncio.sleep(0.05)  # the bots' status lines are the only event: a cheap look at a dict


async def _stop(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure_load(settings: argparse.Namespace, processes: int) -> dict[str, Any]:
    """One configuration: ``processes`` referee processes (1: the league's own referee)."""
    with tempfile.TemporaryDirectory(prefix="polignac-load-") as name:
        folder = Path(name)
        config = _write_league(folder, bots=settings.bots, table_size=settings.table_size, limit=settings.limit, processes=processes)
        tokens = _tokens(config, paused=False)
        league = League(config)
        counters = Counters()
        tasks: list[asyncio.Task[None]] = []
        try:
            grpc = await league.started()
            tasks = await _connect(settings.bots, grpc, tokens, folder, counters)
            await _wait_online(counters, settings.bots, START_TIMEOUT_S)
            await asyncio.sleep(settings.warmup)  # the ladder fills its tables
            referees = [pid for pid in _children(league.process.pid) if "referee_worker" in Path(f"/proc/{pid}/cmdline").read_text()]
            counters.reset()
            counters.counting = True
            league_before, client_before = _cpu_s(league.process.pid), time.process_time()
            referees_before = sum(_cpu_s(pid) for pid in referees)
            began = time.perf_counter()
            await asyncio.sleep(settings.seconds)
            elapsed = time.perf_counter() - began
            counters.counting = False
            league_cpu = _cpu_s(league.process.pid) - league_before
            referee_cpu = sum(_cpu_s(pid) for pid in referees) - referees_before
            client_cpu = time.process_time() - client_before
        finally:
            await _stop(tasks)
            league.stop()
    decisions = counters.decisions
    per = (lambda cpu: round(cpu * 1000 / decisions, 4)) if decisions else (lambda cpu: None)
    return {
        "referee_processes": processes,
        "seconds": round(elapsed, 2),
        "decisions": decisions,
        "decisions_per_s": round(decisions / elapsed, 1),
        "matches": len(counters.matches_ended),
        "matches_per_min": round(len(counters.matches_ended) * 60 / elapsed, 1),
        "league_cpu_s": round(league_cpu, 2),
        "league_cpu_ms_per_decision": per(league_cpu),
        "referee_cpu_ms_per_decision": per(referee_cpu),
        "client_cpu_ms_per_decision": per(client_cpu),
        "handoff_ms": {
            "p50": _rounded(_percentile(counters.handoffs_ms, 0.5)),
            "p99": _rounded(_percentile(counters.handoffs_ms, 0.99)),
        },
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


async def measure_idle(settings: argparse.Namespace) -> dict[str, Any]:
    """``settings.idle`` remote bots joining a paused league's Lobby at once, then sitting idle."""
    with tempfile.TemporaryDirectory(prefix="polignac-idle-") as name:
        folder = Path(name)
        config = _write_league(folder, bots=settings.idle, table_size=settings.table_size, limit=settings.limit, processes=1)
        tokens = _tokens(config, paused=True)
        league = League(config)
        counters = Counters()
        tasks: list[asyncio.Task[None]] = []
        try:
            grpc = await league.started()
            await asyncio.sleep(1.0)  # the league's start-up work (tidying, first collections) is over
            rss_before = _rss_kb(league.process.pid)
            join_cpu_before, client_before = _cpu_s(league.process.pid), time.process_time()
            began = time.perf_counter()
            tasks = await _connect(settings.idle, grpc, tokens, folder, counters)
            await _wait_online(counters, settings.idle, START_TIMEOUT_S * 3)
            joined = max(counters.online.values()) - began
            cpu_before = _cpu_s(league.process.pid)
            join_cpu, client_cpu = cpu_before - join_cpu_before, time.process_time() - client_before
            idle_began = time.perf_counter()
            await asyncio.sleep(settings.seconds)
            idle_s = time.perf_counter() - idle_began
            idle_cpu = _cpu_s(league.process.pid) - cpu_before
            rss_after = _rss_kb(league.process.pid)
        finally:
            await _stop(tasks)
            league.stop()
    return {
        "bots": settings.idle,
        "join_s": round(joined, 2),
        "join_league_cpu_s": round(join_cpu, 2),
        "join_client_cpu_s": round(client_cpu, 2),
        "league_rss_before_mb": round(rss_before / 1024, 1),
        "league_rss_after_mb": round(rss_after / 1024, 1),
        "memory_per_connection_kb": round((rss_after - rss_before) / settings.idle, 1),
        "idle_seconds": round(idle_s, 1),
        "idle_cpu_share": round(idle_cpu / idle_s, 4),
    }


def summary(result: dict[str, Any]) -> str:
    lines = [f"league load benchmark (load average {result['load_average']})"]
    if "idle" in result:
        idle = result["idle"]
        lines.append(
            f"{idle['bots']} idle bots: joined in {idle['join_s']} s (CPU: league {idle['join_league_cpu_s']} s,"
            f" client {idle['join_client_cpu_s']} s); league RSS {idle['league_rss_before_mb']} ->"
            f" {idle['league_rss_after_mb']} MB ({idle['memory_per_connection_kb']} KB a connection);"
            f" CPU while idle {idle['idle_cpu_share'] * 100:.1f}% of a core"
        )
        return "\n".join(lines)
    lines.append("processes  decisions/s  matches/min  league ms/dec  referees ms/dec  client ms/dec  handoff p50/p99 ms")
    for run in result["runs"]:
        lines.append(
            f"{run['referee_processes']:>9}  {run['decisions_per_s']:>11}  {run['matches_per_min']:>11}"
            f"  {run['league_cpu_ms_per_decision']!s:>13}  {run['referee_cpu_ms_per_decision']!s:>15}"
            f"  {run['client_cpu_ms_per_decision']!s:>13}  {run['handoff_ms']['p50']}/{run['handoff_ms']['p99']}"
        )
    lines.append(f"throughput with {result['runs'][-1]['referee_processes']} processes / with 1: {result['speedup']}")
    return "\n".join(lines)


async def run(settings: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"bots": settings.bots, "table_size": settings.table_size, "limit": settings.limit}
    if settings.idle:
        result["idle"] = await measure_idle(settings)
    else:
        one = await measure_load(settings, 1)
        many = await measure_load(settings, settings.processes)
        result["runs"] = [one, many]
        result["speedup"] = round(many["decisions_per_s"] / one["decisions_per_s"], 2) if one["decisions_per_s"] else None
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--bots", type=int, default=100, help="remote bots, all in this process (default 100)")
    parser.add_argument("--table-size", type=int, default=4, help="players per match, 3..6 (default 4)")
    parser.add_argument("--limit", type=int, default=20, help="points that end a match (default 20)")
    parser.add_argument("--processes", type=int, default=max(2, os.cpu_count() or 2), help="referee processes of the second run")
    parser.add_argument("--seconds", type=float, default=30.0, help="the measured window of each run (default 30)")
    parser.add_argument("--warmup", type=float, default=5.0, help="play before the window opens (default 5)")
    parser.add_argument("--idle", type=int, default=0, help="instead: this many idle bots in the Lobby (e.g. 1000)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8 bots (or --idle 20), 2 s windows")
    settings = parser.parse_args(argv)
    if settings.quick:
        settings.bots, settings.seconds, settings.warmup, settings.limit = 8, 2.0, 1.0, 10
        settings.idle = min(settings.idle, 20)
    if settings.bots < settings.table_size or not 3 <= settings.table_size <= 6 or settings.processes < 2:
        parser.error("--bots must be at least --table-size (3..6), and --processes at least 2")
    try:
        result = asyncio.run(run(settings))
    except BenchError as exc:
        print(f"league_load: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if settings.json else summary(result))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
