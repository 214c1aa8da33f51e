"""Referee benchmark: decision round trip against the bare gRPC floor, and 100 matches at once.

Run ``python benchmarks/referee.py`` for a table, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run of a few seconds.  Every part runs the server and its clients in
separate processes (``multiprocessing``, spawn), as a real referee and real bots are, and talks
only over a unix socket in a temporary directory or TCP on 127.0.0.1.

What is measured, and how:

(a) **Referee round trip** (``referee_*``).  The time from the referee writing a
    DecisionRequest to it taking the bot's Decision, read from the match records: every
    ``action`` line of ``MatchResult.record`` carries ``ms``, which ``MatchHost`` takes with
    ``time.monotonic`` from just before it sends the request (events for the seat included)
    to the moment the answer comes out of its inbox.  That is the referee's own clock, the
    one that charges bots, so it is the honest measure: it holds everything between the
    referee's decision to ask and its seeing the answer (the referee's send path, both
    transport hops, the bot's SDK, the referee's read path and inbox hop) and nothing else.
    The bots are trivial (``view.legal[0]``) and all four seats of a match live in one bot
    process using the SDK's ``run_async``, so their thinking time is about zero; the matches
    are played one after another, so only one request is in flight at a time.  The first
    match of each run is a warm-up and is not counted.  ``referee_raw_*`` repeats this with
    a bot that skips the SDK (it answers ``legal_cards[0]`` straight from the protobuf), to
    tell the referee's share from the SDK's.

(b) **Bare gRPC floor** (``bare_*``).  A grpc.aio server with one bidirectional method
    (generic handlers, bytes in and out, the referee's server options, the SDK's channel
    options), driven the way the referee drives a bot: the server writes a ping of the size
    of a typical DecisionRequest (``PING_BYTES``), the client, in another process, answers
    with a pong of the size of a Decision (``PONG_BYTES``), and the server times
    ``write`` .. ``read`` with ``time.monotonic``, just as the host does.  Same machine, same
    transport, same direction, same clock as (a).  ``bare_client_*`` is the usual
    client-driven echo (the client writes, waits for the echo, and times it) for reference.

(c) **Concurrent matches** (``concurrent_matches``, ``decisions_per_s`` ...).  N matches
    (100; 10 with ``--quick``) created at once on one referee process, with
    ``TimeControl(move_ms=1000, bank_ms=0)``: no bank, so any decision slower than 1 s is a
    TIMEOUT.  All 4N trivial SDK bots live in one other process (``run_async`` each, one
    event loop).  ``decisions_per_s`` is the number of decisions in the records over the wall
    time from handing out the tokens to the last match's end (connections included);
    ``timeouts`` sums the TIMEOUT faults of ``MatchResult.faults``; ``peak_rss_mb`` is the
    referee process's ``ru_maxrss``.  CPU seconds of the referee process per decision are
    reported too.

Percentiles are nearest-rank.  The target of the issue is ``ratio`` (referee median over
bare median) at most 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import platform
import queue
import resource
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot import Bot, run_async
from polignac.bot.client import CHANNEL_OPTIONS
from polignac.view import PlayerView
from polignac_arena.referee import MatchResult, RefereeServer, TimeControl
from polignac_arena.referee.server import server_options

RULES = "classic"
"""The ruleset of every match: 4 seats, limit 20, about 470 decisions a match."""
PING_BYTES = 300
"""Bare ping size: a DecisionRequest with its events is 150 to 450 bytes, about 290 at the median."""
PONG_BYTES = 12
"""Bare pong size: a Decision is about a dozen bytes."""
TARGET_RATIO = 1.5
BARE_SERVICE = "polignac.bench.v1.Echo"
CONCURRENT_CLOCK = TimeControl(move_ms=1000, bank_ms=0, startup_ms=10_000)
LATENCY_CLOCK = TimeControl(move_ms=1000, bank_ms=10_000, startup_ms=10_000)


class FirstLegal(Bot):
    """The trivial bot: the first legal decision, at once."""

    name = "first-legal"
    version = "1"

    def decide(self, view: PlayerView) -> Any:
        return view.legal[0]


# -- small helpers --------------------------------------------------------------------------------


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile ``p`` (0..100) of ``samples``."""
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(samples_us: list[float]) -> dict[str, float]:
    return {
        "n": len(samples_us),
        "median_us": round(statistics.median(samples_us), 1),
        "p99_us": round(percentile(samples_us, 99), 1),
        "min_us": round(min(samples_us), 1),
        "mean_us": round(statistics.fmean(samples_us), 1),
    }


def listen_address(transport: str, tmp: str) -> str:
    return f"unix:{tmp}/bench.sock" if transport == "unix" else "127.0.0.1:0"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def decision_times_ms(result: MatchResult) -> list[float]:
    """The referee's clock for each decision of a match (action lines that answered a request)."""
    return [line["ms"] for line in result.record if line["type"] == "action" and "ms" in line]


async def recv(link: mpc.Connection) -> Any:
    """Read the pipe from the other process without blocking the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, link.recv)


# -- (a) and (c): the referee process and the bot process -------------------------------------------


async def referee_latency(link: mpc.Connection, transport: str, samples: int, warmup_matches: int) -> dict[str, Any]:
    """Matches one after another until ``samples`` decisions are timed (after the warm-up)."""
    rules = preset(RULES)
    with tempfile.TemporaryDirectory(prefix="polignac-bench-") as tmp:
        server = RefereeServer(listen_address(transport, tmp))
        await server.start()
        times_us: list[float] = []
        cpu = 0.0
        matches = 0
        try:
            while len(times_us) < samples:
                host = server.create_match(rules, matches + 1, LATENCY_CLOCK)
                link.send(("play", server.address, [host.tokens]))
                cpu_before = cpu_seconds()
                result = await server.run_match(host)
                if result.status != "finished" or any(result.faults):
                    raise RuntimeError(f"latency match {result.match_id}: {result.status}, faults {result.faults}")
                if matches >= warmup_matches:
                    cpu += cpu_seconds() - cpu_before
                    times_us.extend(ms * 1000 for ms in decision_times_ms(result))
                matches += 1
        finally:
            link.send(("stop",))
            await server.stop(grace=1.0)
    return {**summary(times_us), "matches": matches - warmup_matches, "cpu_us_per_decision": round(cpu / len(times_us) * 1e6, 1)}


async def referee_concurrent(link: mpc.Connection, transport: str, matches: int) -> dict[str, Any]:
    """``matches`` matches at once on this one referee process."""
    rules = preset(RULES)
    with tempfile.TemporaryDirectory(prefix="polignac-bench-") as tmp:
        server = RefereeServer(listen_address(transport, tmp))
        await server.start()
        rss_before = peak_rss_mb()
        try:
            hosts = [server.create_match(rules, 1000 + i, CONCURRENT_CLOCK) for i in range(matches)]
            cpu_before = cpu_seconds()
            start = time.monotonic()
            link.send(("play", server.address, [host.tokens for host in hosts]))
            results = await asyncio.gather(*(server.run_match(host) for host in hosts))
            wall = time.monotonic() - start
            cpu = cpu_seconds() - cpu_before
        finally:
            link.send(("stop",))
            await server.stop(grace=1.0)
    times_ms = [ms for result in results for ms in decision_times_ms(result)]
    faults: dict[str, int] = {}
    for result in results:
        for seat_faults in result.faults:
            for kind, count in seat_faults.items():
                faults[kind] = faults.get(kind, 0) + count
    return {
        "matches": matches,
        "finished": sum(result.status == "finished" for result in results),
        "decisions": len(times_ms),
        "wall_s": round(wall, 3),
        "decisions_per_s": round(len(times_ms) / wall, 1),
        "timeouts": faults.get("timeout", 0),
        "faults": faults,
        "decision_median_ms": round(statistics.median(times_ms), 3),
        "decision_p99_ms": round(percentile(times_ms, 99), 3),
        "decision_max_ms": round(max(times_ms), 3),
        "cpu_us_per_decision": round(cpu / len(times_ms) * 1e6, 1),
        "cpu_load": round(cpu / wall, 2),
        "rss_before_matches_mb": round(rss_before, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


async def raw_bot(address: str, token: str) -> None:
    """A bot without the SDK: Hello, then ``legal_*[0]`` straight from each request's protobuf."""
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        call = RefereeServiceStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))  # type: ignore[no-untyped-call]
        await call.write(pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="raw-first-legal", bot_version="1")))
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                return
            if response.WhichOneof("payload") == "decision_request":
                request = response.decision_request
                decision = pb.Decision(request_id=request.request_id)
                if request.kind == pb.DECISION_KIND_CARD:
                    decision.card = request.legal_cards[0]
                else:
                    decision.contract = request.legal_contracts[0]
                await call.write(pb.PlayRequest(decision=decision))


async def bots(link: mpc.Connection, kind: str) -> dict[str, Any]:
    """Play every seat the referee process hands out, until it says stop."""
    tasks: list[asyncio.Future[Any]] = []
    cpu_before = cpu_seconds()
    while True:
        message = await recv(link)
        if message[0] == "stop":
            break
        _, address, token_lists = message
        for tokens in token_lists:
            for token in tokens:
                coro = raw_bot(address, token) if kind == "raw" else run_async(FirstLegal(), address, token, connect_timeout=30)
                tasks.append(asyncio.ensure_future(coro))
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    if errors:
        raise RuntimeError(f"{len(errors)} bots failed, first: {errors[0]}")
    return {"bots": len(tasks), "cpu_s": round(cpu_seconds() - cpu_before, 3)}


# -- (b): the bare gRPC ping-pong ----------------------------------------------------------------------


async def bare_server(link: mpc.Connection, transport: str, samples: int, warmup: int) -> dict[str, Any]:
    """The bare floor's server: drives ``Ping`` (server-timed) and echoes ``Echo``."""
    times_us: list[float] = []
    ping = b"p" * PING_BYTES

    async def ping_pong(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if await context.read() is grpc.aio.EOF:  # the client's hello, as a bot's Hello
            return
        for i in range(warmup + samples):
            start = time.monotonic()
            await context.write(ping)
            pong = await context.read()
            elapsed = time.monotonic() - start
            if pong is grpc.aio.EOF:
                return
            if i >= warmup:
                times_us.append(elapsed * 1e6)

    async def echo(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        while (message := await context.read()) is not grpc.aio.EOF:
            await context.write(message)

    handlers = {
        "Ping": grpc.stream_stream_rpc_method_handler(ping_pong),
        "Echo": grpc.stream_stream_rpc_method_handler(echo),
    }
    with tempfile.TemporaryDirectory(prefix="polignac-bench-") as tmp:
        server = grpc.aio.server(options=server_options())
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(BARE_SERVICE, handlers),))
        requested = listen_address(transport, tmp)
        port = server.add_insecure_port(requested)
        await server.start()
        link.send(requested if transport == "unix" else f"127.0.0.1:{port}")
        await recv(link)  # the client is done
        await server.stop(grace=1.0)
    return summary(times_us)


async def bare_client(link: mpc.Connection, samples: int, warmup: int) -> dict[str, Any]:
    """The bare floor's client: answers the server's pings, then times its own echoes."""
    address = await recv(link)
    pong = b"d" * PONG_BYTES
    times_us: list[float] = []
    try:
        async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
            await asyncio.wait_for(channel.channel_ready(), 30)
            call = channel.stream_stream(f"/{BARE_SERVICE}/Ping")()
            await call.write(b"hello")
            while (await call.read()) is not grpc.aio.EOF:
                await call.write(pong)
            call = channel.stream_stream(f"/{BARE_SERVICE}/Echo")()
            for i in range(warmup + samples):
                start = time.monotonic()
                await call.write(pong)
                await call.read()
                elapsed = time.monotonic() - start
                if i >= warmup:
                    times_us.append(elapsed * 1e6)
            await call.done_writing()
            await call.read()
    finally:
        link.send("done")
    return summary(times_us)


# -- process plumbing ---------------------------------------------------------------------------------


def child(role: str, results: Any, target: Callable[..., Any], *args: Any) -> None:
    """A child process: run ``target(*args)`` in a fresh event loop and report its result (or error)."""
    try:
        results.put((role, asyncio.run(target(*args)), None))
    except BaseException:
        results.put((role, None, traceback.format_exc()))


def pair(server: tuple[Callable[..., Any], tuple[Any, ...]], client: tuple[Callable[..., Any], tuple[Any, ...]], timeout: float) -> tuple[Any, Any]:
    """Run a server process and a client process linked by a pipe; returns both results."""
    ctx = mp.get_context("spawn")
    server_end, client_end = ctx.Pipe()
    results = ctx.Queue()
    processes = {
        "server": ctx.Process(target=child, args=("server", results, server[0], server_end, *server[1]), daemon=True),
        "client": ctx.Process(target=child, args=("client", results, client[0], client_end, *client[1]), daemon=True),
    }
    for process in processes.values():
        process.start()
    got: dict[str, Any] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(got) < 2:
            try:
                role, value, error = results.get(timeout=max(0.1, min(1.0, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{server[0].__name__}/{client[0].__name__} did not finish in {timeout:g} s") from None
                dead = [r for r, p in processes.items() if r not in got and p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"the {dead[0]} process died with exit code {processes[dead[0]].exitcode}") from None
                continue
            if error is not None:
                raise RuntimeError(f"the {role} process ({(server if role == 'server' else client)[0].__name__}) failed:\n{error}")
            got[role] = value
    finally:
        for process in processes.values():
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
    return got["server"], got["client"]


# -- the run ----------------------------------------------------------------------------------------------


def run(quick: bool, transport: str, matches: int | None, progress: Callable[[str], None]) -> dict[str, Any]:
    samples = 600 if quick else 6000
    warmup = 100 if quick else 500
    warmup_matches = 1
    concurrent = matches or (10 if quick else 100)
    per_transport: dict[str, dict[str, Any]] = {}
    for tr in dict.fromkeys([transport, "tcp" if transport == "unix" else "unix"]):
        progress(f"{tr}: bare gRPC ping-pong ({samples} round trips)")
        bare, bare_client_side = pair((bare_server, (tr, samples, warmup)), (bare_client, (samples, warmup)), 120)
        progress(f"{tr}: referee round trip, SDK bots (>= {samples} decisions)")
        referee, _ = pair((referee_latency, (tr, samples, warmup_matches)), (bots, ("sdk",)), 300)
        progress(f"{tr}: referee round trip, raw bots (>= {samples} decisions)")
        referee_raw, _ = pair((referee_latency, (tr, samples, warmup_matches)), (bots, ("raw",)), 300)
        per_transport[tr] = {
            "referee_median_us": referee["median_us"],
            "referee_p99_us": referee["p99_us"],
            "bare_median_us": bare["median_us"],
            "bare_p99_us": bare["p99_us"],
            "ratio": round(referee["median_us"] / bare["median_us"], 2),
            "referee_raw_median_us": referee_raw["median_us"],
            "referee_raw_p99_us": referee_raw["p99_us"],
            "ratio_raw_bot": round(referee_raw["median_us"] / bare["median_us"], 2),
            "bare_client_median_us": bare_client_side["median_us"],
            "bare_client_p99_us": bare_client_side["p99_us"],
            "referee": referee,
            "referee_raw": referee_raw,
            "bare": bare,
            "bare_client": bare_client_side,
        }
    progress(f"{transport}: {concurrent} concurrent matches, 1 s move limit, no bank")
    conc, bot_side = pair((referee_concurrent, (transport, concurrent)), (bots, ("sdk",)), 600)
    primary = per_transport[transport]
    return {
        "transport": transport,
        **{k: v for k, v in primary.items() if not isinstance(v, dict)},
        "target_ratio": TARGET_RATIO,
        "meets_target": primary["ratio"] <= TARGET_RATIO,
        "concurrent_matches": concurrent,
        "decisions_per_s": conc["decisions_per_s"],
        "timeouts": conc["timeouts"],
        "peak_rss_mb": conc["peak_rss_mb"],
        "concurrent": {**conc, "bot_process_cpu_us_per_decision": round(bot_side["cpu_s"] / conc["decisions"] * 1e6, 1)},
        "transports": per_transport,
        "quick": quick,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "grpcio": grpc.__version__,
            "platform": platform.platform(),
        },
    }


def print_table(r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    transports = list(r["transports"])
    table = Table(title=f"Decision round trip, microseconds (server and client in separate processes, {r['machine']['cpus']} CPUs)")
    table.add_column("measure")
    for tr in transports:
        table.add_column(tr, justify="right")
    rows = [
        ("referee, SDK bot: median", "referee_median_us"),
        ("referee, SDK bot: p99", "referee_p99_us"),
        ("referee, raw bot: median", "referee_raw_median_us"),
        ("referee, raw bot: p99", "referee_raw_p99_us"),
        ("bare gRPC, server-driven: median", "bare_median_us"),
        ("bare gRPC, server-driven: p99", "bare_p99_us"),
        ("bare gRPC, client echo: median", "bare_client_median_us"),
        ("bare gRPC, client echo: p99", "bare_client_p99_us"),
    ]
    for label, key in rows:
        table.add_row(label, *(f"{r['transports'][tr][key]:,.0f}" for tr in transports))
    table.add_row(
        f"ratio referee/bare (target <= {r['target_ratio']})",
        *(f"{r['transports'][tr]['ratio']:.2f}" for tr in transports),
        style="bold",
    )
    table.add_row("ratio raw bot/bare", *(f"{r['transports'][tr]['ratio_raw_bot']:.2f}" for tr in transports))
    table.add_row(
        "referee CPU per decision (sequential)", *(f"{r['transports'][tr]['referee']['cpu_us_per_decision']:,.0f}" for tr in transports)
    )
    c = r["concurrent"]
    load = Table(title=f"{c['matches']} concurrent matches on one referee ({r['transport']}, 1 s move limit, no bank)")
    load.add_column("measure")
    load.add_column("value", justify="right")
    load.add_row("matches finished", f"{c['finished']} / {c['matches']}")
    load.add_row("decisions", f"{c['decisions']:,}")
    load.add_row("wall time", f"{c['wall_s']:.2f} s")
    load.add_row("decisions per second", f"{c['decisions_per_s']:,.0f}", style="bold")
    load.add_row("TIMEOUT faults (target 0)", str(c["timeouts"]), style="bold")
    load.add_row("other faults", str(sum(v for k, v in c["faults"].items() if k != "timeout")))
    load.add_row("decision time median / p99 / max", f"{c['decision_median_ms']:.1f} / {c['decision_p99_ms']:.1f} / {c['decision_max_ms']:.1f} ms")
    load.add_row("referee CPU per decision", f"{c['cpu_us_per_decision']:,.0f} us ({c['cpu_load']:.2f} cores busy)")
    load.add_row("bot process CPU per decision", f"{c['bot_process_cpu_us_per_decision']:,.0f} us")
    load.add_row("referee peak RSS", f"{c['peak_rss_mb']:.1f} MB (before the matches: {c['rss_before_matches_mb']:.1f} MB)", style="bold")
    console = Console()
    console.print(table)
    console.print(load)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="few samples and 10 concurrent matches (a smoke test)")
    parser.add_argument("--transport", choices=["unix", "tcp"], default="unix", help="transport of the headline figures and of part (c)")
    parser.add_argument("--matches", type=int, default=None, help="concurrent matches in part (c) (default 100, 10 with --quick)")
    args = parser.parse_args(argv)

    def progress(text: str) -> None:
        if not args.json:
            print(f"... {text}", file=sys.stderr, flush=True)

    result = run(args.quick, args.transport, args.matches, progress)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
