"""Referee benchmark: the decision round trip against the bare gRPC floor, and 100 matches at once.

Run ``python benchmarks/referee.py`` for tables, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run of a few seconds.  Servers and their clients always run in
separate processes (``multiprocessing``, spawn), as a referee and its bots do, and talk only
over a unix socket in a temporary directory or TCP on 127.0.0.1.

What is measured, and how
-------------------------
(a) and (b) run in pairs of processes: a server process that hosts a ``RefereeServer`` and,
next to it, a bare gRPC server (same transport, same server options), and a client process
that plays the bots and answers the bare pings.  The two measures are taken in alternating
blocks (a bare block, a match with SDK bots, one with SDK bots that read their whole view,
one with raw bots, a client-driven echo block, then again), so that drift in the machine's
speed hits both alike; each pair's first round is a warm-up and is not counted.  Several
fresh pairs are run one after the other (``PROCESS_PAIRS``) and their samples pooled: how
the scheduler happens to place one pair's threads on the CPUs can move its bare floor by a
fifth for its whole life, and one pair alone would make that the figure of the run.  Each
pair's own ratio is reported too (``ratio_by_process_pair``).

(a) **Referee round trip** (``referee_*``): the time from the referee writing a
    DecisionRequest to it taking the bot's Decision, on the referee's own clock.  Every
    ``action`` line of ``MatchResult.lines`` carries ``ms``, which ``MatchHost`` takes with
    ``time.monotonic`` from just before it sends the request (the seat's pending events
    included) to the moment the answer comes out of its inbox.  That is the clock that
    charges bots, so it is the honest measure: it holds everything between the referee's
    decision to ask and its seeing the answer (its send path, both transport hops, the bot's
    SDK, its read path and inbox hop) and nothing else.  Timing on the bot side would leave
    out the referee's own send and read paths.  The bots are trivial (``view.legal[0]``),
    all four seats of a match live in the client process and use the SDK's ``run_async``;
    matches are played one at a time, so one request is in flight at a time.
    The SDK parses a bot's view lazily (``legal`` at once, the rest on the first read of any
    of it), so the trivial bot parses ``legal`` alone; ``referee_full_view_*`` is the same
    with a bot that reads every field of its view first (the full parse a real bot pays).
    ``referee_raw_*`` is the same with a bot that skips the SDK (it answers
    ``legal_cards[0]`` straight from the protobuf): the gap between the two is the SDK's
    share, the gap between raw and bare is the referee's.

(b) **Bare gRPC floor** (``bare_*``): one bidirectional method on a grpc.aio server (generic
    handlers, bytes in and out, the referee's ``server_options``; the client uses the SDK's
    channel options), driven the way the referee drives a bot: the server writes a ping the
    size of a typical DecisionRequest (``PING_BYTES``), the client answers with a pong the
    size of a Decision (``PONG_BYTES``), and the server times write .. read with
    ``time.monotonic``, as the host does.  Same processes, transport, direction and clock as
    (a).  ``bare_client_*`` is the textbook echo (the client writes, waits for the echo and
    times it on its side), for reference.

(c) **Concurrent matches** (``concurrent_matches``, ``decisions_per_s``, ``timeouts``,
    ``peak_rss_mb``): N matches (100; 10 with ``--quick``) created at once on a fresh referee
    process with ``TimeControl(move_ms=1000, bank_ms=0)``: no bank, so any decision slower
    than 1 s is a TIMEOUT.  All 4N trivial SDK bots live in one other process (``run_async``
    each, one event loop).  ``decisions_per_s`` is the decisions in the records over the
    wall time from handing out the tokens to the end of the last match (connections
    included); ``timeouts`` sums the ``timeout`` counts of ``MatchResult.faults``;
    ``peak_rss_mb`` is the referee process's ``ru_maxrss``.

With ``--front`` (TCP only), the bots reach the referee through the league's gRPC front
(:mod:`polignac_arena.league.grpc_front`, in the referee's process and event loop, as in
``polignac league serve``): its cost per decision is the gap to a run without it.  The bare
floor stays direct.

CPU seconds per decision (all threads of a process, ``getrusage``) are reported too.
Percentiles are nearest-rank.  The issue's target is ``ratio`` (referee median over bare
median, SDK bots, pooled over the pairs) at most 1.5.  The machine's speed can drift by tens
of percent over a few seconds (a shared VM does), so ``ratio_paired`` also gives the median
over rounds of each round's referee median over the same round's bare median.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
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
from polignac_arena.league.grpc_front import GrpcFront
from polignac_arena.record_lines import ActionLine
from polignac_arena.referee import MatchResult, RefereeServer, TimeControl
from polignac_arena.referee.server import server_options

RULES = "classic"
"""The ruleset of every match: 4 seats, limit 20, about 470 decisions a match."""
PING_BYTES = 300
"""Bare ping size: a DecisionRequest with its events is 150 to 450 bytes, about 290 at the median."""
PONG_BYTES = 12
"""Bare pong size: a Decision is about a dozen bytes."""
TARGET_RATIO = 1.5
PROCESS_PAIRS = 3
"""Fresh server/client process pairs for (a) and (b), their samples pooled (see above)."""
BARE_PING = "/polignac.bench.v1.Bare/Ping"
BARE_ECHO = "/polignac.bench.v1.Bare/Echo"
LATENCY_CLOCK = TimeControl(move_ms=1000, bank_ms=10_000, startup_ms=10_000)
CONCURRENT_CLOCK = TimeControl(move_ms=1000, bank_ms=0, startup_ms=10_000)


class FirstLegal(Bot):
    """The trivial bot: the first legal decision, at once."""

    name = "first-legal"
    version = "1"

    def decide(self, view: PlayerView) -> Any:
        return view.legal[0]


class ReadsEverything(FirstLegal):
    """The trivial bot, but it reads every field of its view first: what a full parse of the
    lazily parsed view costs (a bot reading ``legal`` alone parses nothing else)."""

    name = "reads-everything"

    def decide(self, view: PlayerView) -> Any:
        for name in VIEW_FIELDS:
            getattr(view, name)
        return view.legal[0]


VIEW_FIELDS = tuple(f.name for f in dataclasses.fields(PlayerView))


# -- small helpers ----------------------------------------------------------------------------------


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile ``p`` (0..100) of ``samples``."""
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def summary(samples_us: list[float]) -> dict[str, float]:
    return {
        "n": len(samples_us),
        "median_us": round(statistics.median(samples_us), 1),
        "p99_us": round(percentile(samples_us, 99), 1),
        "min_us": round(min(samples_us), 1),
        "mean_us": round(statistics.fmean(samples_us), 1),
    }


def listen_address(transport: str, tmp: str, name: str) -> str:
    return f"unix:{tmp}/{name}.sock" if transport == "unix" else "127.0.0.1:0"


async def fronted(referee: RefereeServer, front: bool) -> tuple[str, GrpcFront | None]:
    """The address bots reach ``referee`` at: its own, or with ``front`` the league's gRPC front's before it (no cap that
    the benchmark's bots, all from 127.0.0.1, could reach)."""
    if not front or referee.address.startswith("unix:"):
        return referee.address, None
    door = GrpcFront(max_connections=100_000, max_per_address=100_000)
    port = await door.start("127.0.0.1", 0, int(referee.address.rpartition(":")[2]))
    return f"127.0.0.1:{port}", door


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def decision_times_ms(result: MatchResult) -> list[float]:
    """The referee's clock for each decision of a match (action lines that answered a request)."""
    return [line.ms for line in result.lines if isinstance(line, ActionLine) and line.ms is not None]


async def recv(link: mpc.Connection) -> Any:
    """Read the pipe from the other process without blocking the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, link.recv)


# -- (a) and (b): one server process with a referee and a bare server, one client process --------------


async def latency_server(link: mpc.Connection, transport: str, rounds: int, block: int, front: bool = False) -> dict[str, Any]:
    """Alternate blocks of bare pings and referee matches; round 0 is a warm-up."""
    rules = preset(RULES)
    samples: dict[str, list[float]] = {"bare": [], "sdk": [], "full": [], "raw": [], "echo": []}
    round_medians: dict[str, list[float]] = {part: [] for part in samples}
    cpu = {"bare": 0.0, "sdk": 0.0, "full": 0.0, "raw": 0.0}
    ping_done = asyncio.Event()
    ping_sink: list[float] = []

    async def ping(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        hello = await context.read()  # the client's first message, as a bot's Hello: how many pings
        if hello is grpc.aio.EOF:
            return
        payload = b"p" * PING_BYTES
        try:
            for _ in range(int(hello)):
                start = time.monotonic()
                await context.write(payload)
                pong = await context.read()
                elapsed = time.monotonic() - start
                if pong is grpc.aio.EOF:
                    return
                ping_sink.append(elapsed * 1e6)
        finally:
            ping_done.set()

    async def echo(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        while (message := await context.read()) is not grpc.aio.EOF:
            await context.write(message)

    handlers = {"Ping": grpc.stream_stream_rpc_method_handler(ping), "Echo": grpc.stream_stream_rpc_method_handler(echo)}
    with tempfile.TemporaryDirectory(prefix="polignac-bench-") as tmp:
        referee = RefereeServer(listen_address(transport, tmp, "referee"))
        await referee.start()
        referee_address, door = await fronted(referee, front)
        bare = grpc.aio.server(options=server_options())
        bare.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("polignac.bench.v1.Bare", handlers),))
        requested = listen_address(transport, tmp, "bare")
        port = bare.add_insecure_port(requested)
        await bare.start()
        bare_address = requested if transport == "unix" else f"127.0.0.1:{port}"
        matches = 0
        try:
            for round_number in range(rounds + 1):
                counted = round_number > 0
                for part in ("bare", "sdk", "full", "raw", "echo"):
                    before = cpu_seconds()
                    if part == "bare":
                        ping_done.clear()
                        ping_sink.clear()
                        link.send(("ping", bare_address, block))
                        await ping_done.wait()
                        if len(ping_sink) != block:
                            raise RuntimeError(f"bare ping block ended after {len(ping_sink)} of {block} pings")
                        got = list(ping_sink)
                    elif part == "echo":
                        link.send(("echo", bare_address, block))
                        got = await recv(link)
                    else:
                        matches += 1
                        host = referee.create_match(rules, matches, LATENCY_CLOCK)
                        link.send(("play", referee_address, [host.tokens], part))
                        result = await referee.run_match(host)
                        if result.status != "finished" or any(result.faults):
                            raise RuntimeError(f"latency match {result.match_id}: {result.status}, faults {result.faults}")
                        got = [ms * 1000 for ms in decision_times_ms(result)]
                    if counted:
                        samples[part].extend(got)
                        round_medians[part].append(statistics.median(got))
                        if part in cpu:
                            cpu[part] += cpu_seconds() - before
        finally:
            link.send(("stop",))
            await bare.stop(grace=1.0)
            await referee.stop(grace=1.0)
            if door is not None:
                await door.close()
    return {"samples": samples, "round_medians": round_medians, "cpu": cpu}


def pool_latency(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Pool the samples of several process pairs into one summary per part."""
    parts = list(pairs[0]["samples"])
    samples = {part: [x for p in pairs for x in p["samples"][part]] for part in parts}
    round_medians = {part: [x for p in pairs for x in p["round_medians"][part]] for part in parts}
    out: dict[str, Any] = {part: summary(values) for part, values in samples.items()}
    for part in pairs[0]["cpu"]:
        out[part]["cpu_us_per_round_trip"] = round(sum(p["cpu"][part] for p in pairs) / len(samples[part]) * 1e6, 1)
    for part in ("sdk", "full", "raw"):
        # Each round's median over the same round's bare median, then the median of those:
        # a check of the pooled ratio that a slow spell of the machine cannot skew.
        paired = [a / b for a, b in zip(round_medians[part], round_medians["bare"], strict=True)]
        out[part]["ratio_paired"] = round(statistics.median(paired), 2)
    out["ratio_by_process_pair"] = [
        round(statistics.median(p["samples"]["sdk"]) / statistics.median(p["samples"]["bare"]), 2) for p in pairs
    ]
    return out


async def raw_bot(address: str, token: str) -> None:
    """A bot without the SDK: Hello, then ``legal_*[0]`` straight from each request's protobuf."""
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        call = RefereeServiceStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))  # type: ignore[no-untyped-call]  # grpc's generated stubs are untyped
        await call.write(pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="raw-first-legal", bot_version="1")))
        while (response := await call.read()) is not grpc.aio.EOF:
            if response.WhichOneof("payload") == "decision_request":
                request = response.decision_request
                decision = pb.Decision(request_id=request.request_id)
                if request.kind == pb.DECISION_KIND_CARD:
                    decision.card = request.legal_cards[0]
                else:
                    decision.contract = request.legal_contracts[0]
                await call.write(pb.PlayRequest(decision=decision))


def seat_bot(kind: str, address: str, token: str) -> Any:
    if kind == "raw":
        return raw_bot(address, token)
    return run_async(ReadsEverything() if kind == "full" else FirstLegal(), address, token, connect_timeout=30)


async def latency_client(link: mpc.Connection) -> dict[str, Any]:
    """Do what the server process says, one command at a time, until it says stop."""
    channels: dict[str, grpc.aio.Channel] = {}
    pong = b"d" * PONG_BYTES
    try:
        while (command := await recv(link))[0] != "stop":
            if command[0] == "play":
                _, address, token_lists, kind = command
                await asyncio.gather(*(seat_bot(kind, address, token) for tokens in token_lists for token in tokens))
                continue
            _, address, count = command
            if address not in channels:
                channels[address] = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
                await asyncio.wait_for(channels[address].channel_ready(), 30)
            if command[0] == "ping":  # the server writes, we answer
                call = channels[address].stream_stream(BARE_PING)()
                await call.write(str(count).encode())
                while (await call.read()) is not grpc.aio.EOF:
                    await call.write(pong)
            else:  # "echo": we write, the server echoes, we time it
                call = channels[address].stream_stream(BARE_ECHO)()
                times: list[float] = []
                for _ in range(count):
                    start = time.monotonic()
                    await call.write(pong)
                    await call.read()
                    times.append((time.monotonic() - start) * 1e6)
                await call.done_writing()
                await call.read()
                link.send(times)
    finally:
        for channel in channels.values():
            await channel.close()
    return {}


# -- (c): many matches on one referee process --------------------------------------------------------------


async def concurrent_server(link: mpc.Connection, transport: str, matches: int, front: bool = False) -> dict[str, Any]:
    """``matches`` matches at once on this one referee process."""
    rules = preset(RULES)
    with tempfile.TemporaryDirectory(prefix="polignac-bench-") as tmp:
        server = RefereeServer(listen_address(transport, tmp, "referee"))
        await server.start()
        address, door = await fronted(server, front)
        rss_before = peak_rss_mb()
        try:
            hosts = [server.create_match(rules, 1000 + i, CONCURRENT_CLOCK) for i in range(matches)]
            cpu_before = cpu_seconds()
            start = time.monotonic()
            link.send(("play", address, [host.tokens for host in hosts], "sdk"))
            results = await asyncio.gather(*(server.run_match(host) for host in hosts))
            wall = time.monotonic() - start
            cpu = cpu_seconds() - cpu_before
        finally:
            link.send(("stop",))
            await server.stop(grace=1.0)
            if door is not None:
                await door.close()
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
        "referee_cpu_us_per_decision": round(cpu / len(times_ms) * 1e6, 1),
        "referee_cores_busy": round(cpu / wall, 2),
        "rss_before_matches_mb": round(rss_before, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


async def concurrent_client(link: mpc.Connection) -> dict[str, Any]:
    """Every seat of every match, in this one process."""
    before = cpu_seconds()
    while (command := await recv(link))[0] != "stop":
        _, address, token_lists, kind = command
        await asyncio.gather(*(seat_bot(kind, address, token) for tokens in token_lists for token in tokens))
    return {"cpu_s": cpu_seconds() - before}


# -- process plumbing ------------------------------------------------------------------------------------


def child(role: str, results: Any, target: Callable[..., Any], *args: Any) -> None:
    """A child process: run ``target(*args)`` in a fresh event loop and report its result (or error)."""
    try:
        results.put((role, asyncio.run(target(*args)), None))
    except BaseException:
        results.put((role, None, traceback.format_exc()))


def pair(server: tuple[Callable[..., Any], tuple[Any, ...]], client: Callable[..., Any], timeout: float) -> tuple[Any, Any]:
    """Run a server process and a client process linked by a pipe; returns both results."""
    ctx = mp.get_context("spawn")
    server_end, client_end = ctx.Pipe()
    results = ctx.Queue()
    processes = {
        "server": ctx.Process(target=child, args=("server", results, server[0], server_end, *server[1]), daemon=True),
        "client": ctx.Process(target=child, args=("client", results, client, client_end), daemon=True),
    }
    for process in processes.values():
        process.start()
    got: dict[str, Any] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(got) < 2:
            try:
                role, value, error = results.get(timeout=1.0)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{server[0].__name__} did not finish within {timeout:g} s") from None
                dead = [r for r, p in processes.items() if r not in got and p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(
                        f"the {dead[0]} process of {server[0].__name__} died (exit code {processes[dead[0]].exitcode})"
                    ) from None
                continue
            if error is not None:
                raise RuntimeError(f"the {role} process of {server[0].__name__} failed:\n{error}")
            got[role] = value
    finally:
        for process in processes.values():
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
    return got["server"], got["client"]


# -- the run ------------------------------------------------------------------------------------------------


def run(quick: bool, transport: str, matches: int | None, progress: Callable[[str], None], front: bool = False) -> dict[str, Any]:
    pairs = 1 if quick else PROCESS_PAIRS
    rounds = 1 if quick else 5  # per pair, plus one warm-up round; a match is about 470 decisions
    block = 470
    concurrent = matches or (10 if quick else 100)
    per_transport: dict[str, dict[str, Any]] = {}
    for tr in dict.fromkeys([transport, "tcp" if transport == "unix" else "unix"]):
        progress(f"{tr}: referee round trip and bare gRPC floor, {pairs} process pair(s) x {rounds} rounds of alternating blocks")
        lat = pool_latency([pair((latency_server, (tr, rounds, block, front)), latency_client, 600)[0] for _ in range(pairs)])
        per_transport[tr] = {
            "referee_median_us": lat["sdk"]["median_us"],
            "referee_p99_us": lat["sdk"]["p99_us"],
            "bare_median_us": lat["bare"]["median_us"],
            "bare_p99_us": lat["bare"]["p99_us"],
            "ratio": round(lat["sdk"]["median_us"] / lat["bare"]["median_us"], 2),
            "referee_raw_median_us": lat["raw"]["median_us"],
            "referee_raw_p99_us": lat["raw"]["p99_us"],
            "ratio_raw_bot": round(lat["raw"]["median_us"] / lat["bare"]["median_us"], 2),
            "referee_full_view_median_us": lat["full"]["median_us"],
            "ratio_full_view": round(lat["full"]["median_us"] / lat["bare"]["median_us"], 2),
            "ratio_paired": lat["sdk"]["ratio_paired"],
            "ratio_raw_bot_paired": lat["raw"]["ratio_paired"],
            "ratio_by_process_pair": lat["ratio_by_process_pair"],
            "bare_client_median_us": lat["echo"]["median_us"],
            "bare_client_p99_us": lat["echo"]["p99_us"],
            "detail": {
                "referee_sdk_bot": lat["sdk"],
                "referee_full_view_bot": lat["full"],
                "referee_raw_bot": lat["raw"],
                "bare": lat["bare"],
                "bare_client_echo": lat["echo"],
            },
        }
    progress(f"{transport}: {concurrent} concurrent matches on one referee, 1 s move limit, no bank")
    conc, client = pair((concurrent_server, (transport, concurrent, front)), concurrent_client, 900)
    conc["bot_process_cpu_us_per_decision"] = round(client["cpu_s"] / conc["decisions"] * 1e6, 1)
    primary = per_transport[transport]
    return {
        "transport": transport,
        "front": front and transport == "tcp",
        **{k: v for k, v in primary.items() if k != "detail"},
        "target_ratio": TARGET_RATIO,
        "meets_target": primary["ratio"] <= TARGET_RATIO,
        "concurrent_matches": concurrent,
        "decisions_per_s": conc["decisions_per_s"],
        "timeouts": conc["timeouts"],
        "peak_rss_mb": conc["peak_rss_mb"],
        "concurrent": conc,
        "transports": per_transport,
        "quick": quick,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "grpcio": grpc.__version__,
            "platform": platform.platform(),
        },
    }


def print_tables(r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    transports = list(r["transports"])
    per = r["transports"]
    table = Table(title=f"Decision round trip in microseconds (server and client in separate processes, {r['machine']['cpus']} CPUs)")
    table.add_column("measure")
    for tr in transports:
        table.add_column(tr, justify="right")
    for label, key in [
        ("referee, SDK bot: median", "referee_median_us"),
        ("referee, SDK bot: p99", "referee_p99_us"),
        ("referee, SDK bot reading its whole view: median", "referee_full_view_median_us"),
        ("referee, raw bot: median", "referee_raw_median_us"),
        ("referee, raw bot: p99", "referee_raw_p99_us"),
        ("bare gRPC (server-driven): median", "bare_median_us"),
        ("bare gRPC (server-driven): p99", "bare_p99_us"),
        ("bare gRPC (client echo): median", "bare_client_median_us"),
        ("bare gRPC (client echo): p99", "bare_client_p99_us"),
    ]:
        table.add_row(label, *(f"{per[tr][key]:,.0f}" for tr in transports))
    table.add_row(f"ratio referee / bare (target <= {r['target_ratio']})", *(f"{per[tr]['ratio']:.2f}" for tr in transports), style="bold")
    table.add_row("ratio whole-view SDK bot / bare", *(f"{per[tr]['ratio_full_view']:.2f}" for tr in transports))
    table.add_row("ratio raw bot / bare", *(f"{per[tr]['ratio_raw_bot']:.2f}" for tr in transports))
    table.add_row(
        "ratio SDK bot / bare, each process pair", *(" ".join(f"{x:.2f}" for x in per[tr]["ratio_by_process_pair"]) for tr in transports)
    )
    table.add_row(
        "ratios paired round by round: SDK / raw",
        *(f"{per[tr]['ratio_paired']:.2f} / {per[tr]['ratio_raw_bot_paired']:.2f}" for tr in transports),
    )

    def cpu(tr: str, part: str) -> float:
        return float(per[tr]["detail"][part]["cpu_us_per_round_trip"])

    table.add_row(
        "server process CPU per decision / per bare ping",
        *(f"{cpu(tr, 'referee_sdk_bot'):,.0f} / {cpu(tr, 'bare'):,.0f}" for tr in transports),
    )
    c = r["concurrent"]
    load = Table(title=f"{c['matches']} concurrent matches on one referee process ({r['transport']}, 1 s move limit, no bank)")
    load.add_column("measure")
    load.add_column("value", justify="right")
    load.add_row("matches finished", f"{c['finished']} / {c['matches']}")
    load.add_row("decisions", f"{c['decisions']:,} in {c['wall_s']:.2f} s")
    load.add_row("decisions per second", f"{c['decisions_per_s']:,.0f}", style="bold")
    load.add_row("TIMEOUT faults (target 0)", str(c["timeouts"]), style="bold")
    load.add_row("other faults", str(sum(v for k, v in c["faults"].items() if k != "timeout")))
    load.add_row(
        "decision time median / p99 / max", f"{c['decision_median_ms']:.1f} / {c['decision_p99_ms']:.1f} / {c['decision_max_ms']:.1f} ms"
    )
    load.add_row("referee CPU per decision", f"{c['referee_cpu_us_per_decision']:,.0f} us ({c['referee_cores_busy']:.2f} cores busy)")
    load.add_row("bot process CPU per decision", f"{c['bot_process_cpu_us_per_decision']:,.0f} us")
    load.add_row("referee peak RSS", f"{c['peak_rss_mb']:.1f} MB (before the matches: {c['rss_before_matches_mb']:.1f} MB)", style="bold")
    console = Console()
    console.print(table)
    console.print(load)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Referee decision round trip vs the bare gRPC floor, and many concurrent matches.")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="one round of samples per transport and 10 concurrent matches (a smoke test)")
    parser.add_argument("--transport", choices=["unix", "tcp"], default="unix", help="transport of the headline figures and of (c)")
    parser.add_argument("--matches", type=int, default=None, help="concurrent matches in (c) (default 100, 10 with --quick)")
    parser.add_argument("--front", action="store_true", help="over TCP, bots reach the referee through the league's gRPC front")
    args = parser.parse_args(argv)
    if args.front and args.transport != "tcp":
        parser.error("--front needs --transport tcp (the front is a TCP port)")

    def progress(text: str) -> None:
        if not args.json:
            print(f"... {text}", file=sys.stderr, flush=True)

    result = run(args.quick, args.transport, args.matches, progress, args.front)
    if args.json:
        print(json.dumps(result))
    else:
        print_tables(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
