"""League abuse benchmark: the league's memory, fairness and public latency while strangers attack it.

Run ``python benchmarks/league_abuse.py`` for a summary, ``--json`` for one JSON object on
stdout, ``--quick`` for a smoke run.  It starts a real ``polignac league serve`` over TLS (a
certificate from trustme) on loopback, with the shipped default limits, six active versions
seeded into its store (so the leaderboard has rows) and the ladder paused (only the attacks
and the measuring clients load it).  The attackers run in processes of their own and connect
from loopback addresses of their own (127.0.0.2, 127.0.2.N: per-address limits count them
apart from the measuring client on 127.0.0.1).  In order:

1. **unloaded**: the server's RSS once warm (``idle_rss_mb``), the public leaderboard's latency
   (``GET /api/leaderboard``, a new TLS connection per request, and on one kept-alive
   connection), a legitimate author's upload-to-active time (a copy of ``sample_bots/random``:
   the upload, its cheap checks, its sandboxed smoke match);
2. **slow_connections**: ``--connections`` TLS connections from one address that send half a
   request's headers and wait, each opened again as soon as the server drops or refuses it,
   for ``--seconds``: the server's peak RSS, the leaderboard's latency meanwhile; then all are
   closed, and the RSS once it settles;
3. **slow_connections_spread**: the same from ``--addresses`` addresses;
4. **bad_tokens**: ``--flooders`` threads guessing tokens as fast as they are answered (unknown
   ones, and the legitimate author's token id with wrong secrets: each costs a keyed hash until
   the throttle blocks it), each with an ``X-Forwarded-For`` of its own choosing, from the
   legitimate author's own address; the author's requests from that address, the leaderboard;
5. **upload_flood**: another author queues two uploads whose build sleeps past the run, then
   ``--flooders`` threads upload 5 MB bodies as fast as they are answered; meanwhile the
   legitimate author's upload-to-active time and the leaderboard's latency.

The goals (``goals`` in the JSON): under slow connections the RSS stays under twice idle and
comes back within 10 % of idle once they close; the legitimate upload is active within twice
its unloaded time; the leaderboard's p99 stays under 200 ms during each attack.  Figures move
with the machine's load (``load_average``); compare runs on the same machine only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import queue
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
LEAGUE = "abuse"
AUTHORS = ("ada", "mallory")
SEEDED = ("r1", "r2", "r3", "r4", "r5", "r6")
LEGIT = "legit"
"""The legitimate author's bot: each timed upload is a new version of it (within active_bots and the hourly limit)."""
WEB_LINE = re.compile(r"web and authors' API on (\S+?)/?(?: \(.*\))?$")
GRPC_LINE = re.compile(r"remote bots connect to (\S+?)(?: \(.*\))?$")
"""The server's banner: each address, then what guards it ("(TLS)") since the banner says so."""
START_S = 60.0
ACTIVE_S = 300.0
PARTIAL = b"GET /api/leaderboard HTTP/1.1\r\nHost: league\r\n"
FRESH_EVERY = 20
"""One leaderboard sample in this many on a new connection (one a second at the default rate: a visitor's pace)."""
REFUSED_PAUSE_S = 0.1
"""A flooder whose connection is refused tries again this much later: on the server's own machine, a client spinning on
refusals would measure its own CPU, not the server's."""
TOKEN_GUESSERS = 8
"""At most this many threads guess tokens: they share the author's address, and its connection cap (16)."""


class BenchError(RuntimeError):
    """The league did not do what the benchmark needs."""


@dataclass(frozen=True)
class Settings:
    connections: int
    addresses: int
    seconds: float
    flooders: int
    samples_per_s: float
    uploads: int


FULL = Settings(connections=3000, addresses=100, seconds=20.0, flooders=16, samples_per_s=20.0, uploads=3)
QUICK = Settings(connections=300, addresses=20, seconds=4.0, flooders=4, samples_per_s=20.0, uploads=1)


def polignac(*args: str) -> list[str]:
    return [sys.executable, "-m", "polignac_arena.cli", *args]


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("POLIGNAC_LEAGUE_TOKEN", "POLIGNAC_TOKEN")}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise BenchError(f"no VmRSS for process {pid}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# -- the league ------------------------------------------------------------------------------------------------------


def write_league(folder: Path) -> None:
    """The league file: TLS on loopback, ports the OS chooses, default limits, a certificate from trustme."""
    try:
        import trustme
    except ImportError:
        raise BenchError("this benchmark makes its certificate with trustme: pip install -e '.[test]'") from None
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    sandbox = launcher_unavailable()
    seats = 'kind = "process"' + ("\ntrusted = true" if sandbox else "")
    (folder / "league.toml").write_text(
        f'name = "{LEAGUE}"\ntable_size = 3\nparallel = 1\n[rules]\nlimit = 5\n[seats]\n{seats}\n'
        '[http]\naddress = "127.0.0.1:0"\n[grpc]\naddress = "127.0.0.1:0"\n[tls]\ncert = "cert.pem"\nkey = "key.pem"\n'
        "[drain]\ndeadline_s = 0\n",
        encoding="utf-8",
    )


def launcher_unavailable() -> str | None:
    from polignac_arena.seats import SeatKind, launcher_for

    launcher = launcher_for(SeatKind.PROCESS)
    return "process seats are not sandboxed here" if type(launcher).__name__ != "SandboxLauncher" else launcher.unavailable()


def bot_folder(folder: Path, name: str, build: list[str] | None = None, copy_name: str | None = None) -> Path:
    """A copy of the random sample bot named ``name`` (in a folder of its own, ``copy_name``: one bot's versions differ)."""
    copy = folder / "bots" / (copy_name or name)
    shutil.copytree(ROOT / "sample_bots" / "random", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "copy.txt").write_text(copy.name, encoding="utf-8")
    toml = copy / "bot.toml"
    text = toml.read_text(encoding="utf-8").replace('name = "random"', f'name = "{name}"', 1)
    toml.write_text(text + (f"build = {json.dumps(build)}\n" if build else ""), encoding="utf-8")
    return copy


def seed(folder: Path) -> dict[str, str]:
    """Authors and six active versions, stored through the league's own calls (as accepted uploads leave them); the tokens."""
    from polignac_arena.archive import pack_folder
    from polignac_arena.league.config import load_league_config
    from polignac_arena.league.serve import League

    league = League(load_league_config(folder / "league.toml"))
    try:
        tokens = {name: league.store.add_author(name)[1] for name in AUTHORS}
        when = datetime.now(UTC) - timedelta(hours=2)
        for number, name in enumerate(SEEDED):
            house = f"house-{number}"  # an author a bot: within any author's limits
            league.store.add_author(house)
            sha = league.archives.add(pack_folder(bot_folder(folder, name)), league.caps)
            version, _ = league.store.add_upload(house, name, sha, league.limits, now=when)
            league.store.start_validation(version.id)
            league.store.finish_validation(version.id, True, "accepted", league.tournament_id, league.prior)
        league.store.set_setting("paused", "1")
        return tokens
    finally:
        league.store.close()


def lines_of(stream: IO[str]) -> queue.Queue[str | None]:
    """The lines of ``stream`` as a thread reads them (None at its end): a reader can wait with a deadline, and the pipe never fills."""
    out: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            out.put(line.rstrip("\n"))
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


class Server:
    """``polignac league serve`` as a child process."""

    def __init__(self, folder: Path) -> None:
        self.log = folder / "serve.err"
        with self.log.open("w", encoding="utf-8") as errors:
            self.process = subprocess.Popen(
                polignac("league", "serve", "--config", "league.toml"),
                cwd=folder,
                env=child_env(),
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
        assert self.process.stdout is not None
        self.lines = lines_of(self.process.stdout)
        try:
            self.web, self.grpc = self._read_addresses()
        except BaseException:
            self.stop()
            raise
        self.port = int(self.web.rsplit(":", 1)[1])

    def _read_addresses(self) -> tuple[str, str]:
        """The web and gRPC addresses the server prints once it serves, within :data:`START_S`."""
        web = grpc = ""
        deadline = time.monotonic() + START_S
        while not (web and grpc):
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise self.error(f"the server printed no addresses within {START_S:g} s") from None
            if line is None:
                raise self.error(f"the server ended before it served (code {self.process.wait()})")
            if found := WEB_LINE.search(line):
                web = found.group(1)
            if found := GRPC_LINE.search(line):
                grpc = found.group(1)
        return web, grpc

    def error(self, what: str) -> BenchError:
        tail = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        return BenchError(f"{what}; its last words: {' | '.join(tail) or '(none)'}")

    def rss_mb(self) -> float:
        if self.process.poll() is not None:
            raise self.error(f"the server exited (code {self.process.returncode})")
        return rss_mb(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# -- the measuring clients -----------------------------------------------------------------------------------------------


class Sampler:
    """The leaderboard's latency, sampled at a steady rate in a thread, and the server's RSS.

    Each tick asks on one kept-alive connection (what a page that polls waits for); one tick in
    :data:`FRESH_EVERY` also asks on a new TLS connection (what a new visitor waits for), at a
    visitor's pace: well within an address's ``new_connections_per_s``.
    """

    def __init__(self, server: Server, ca: Path, per_s: float) -> None:
        self.server, self.ca, self.every = server, str(ca), 1 / per_s
        self.fresh_ms: list[float] = []
        self.kept_ms: list[float] = []
        self.errors: Counter[str] = Counter()
        self.peak_rss = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _transport(self) -> httpx.HTTPTransport:
        return httpx.HTTPTransport(verify=self.ca, local_address="127.0.0.1")

    def _ask(self, client: httpx.Client, into: list[float]) -> None:
        began = time.monotonic()
        try:
            answer = client.get(f"{self.server.web}/api/leaderboard?tournament={LEAGUE}")
            if answer.status_code == 200:
                into.append((time.monotonic() - began) * 1000)
            else:
                self.errors[str(answer.status_code)] += 1
        except httpx.HTTPError as exc:
            self.errors[type(exc).__name__] += 1

    def _run(self) -> None:
        with httpx.Client(transport=self._transport(), timeout=30) as kept:
            tick = 0
            while not self._stop.is_set():
                began = time.monotonic()
                if tick % FRESH_EVERY == 0:
                    with httpx.Client(transport=self._transport(), timeout=30) as fresh:
                        self._ask(fresh, self.fresh_ms)
                tick += 1
                self._ask(kept, self.kept_ms)
                self.peak_rss = max(self.peak_rss, self.server.rss_mb())
                self._stop.wait(max(0.0, self.every - (time.monotonic() - began)))

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, Any]:
        fresh, kept = self.fresh_ms or [float("nan")], self.kept_ms or [float("nan")]
        return {
            "leaderboard_requests": len(self.fresh_ms) + len(self.kept_ms),
            "leaderboard_errors": dict(self.errors),
            "leaderboard_p50_ms": round(statistics.median(fresh), 1),
            "leaderboard_p99_ms": round(percentile(fresh, 0.99), 1),
            "keepalive_p50_ms": round(statistics.median(kept), 1),
            "keepalive_p99_ms": round(percentile(kept, 0.99), 1),
        }


def upload_to_active(server: Server, ca: Path, token: str, folder: Path) -> float:
    """Seconds from the start of the upload of ``folder`` (its archive already made) until its version is active."""
    from polignac_arena.archive import pack_folder

    data = pack_folder(folder)
    headers = {"Authorization": f"Bearer {token}"}
    began = time.monotonic()
    with httpx.Client(verify=str(ca), timeout=60) as client:
        answer = client.post(
            f"{server.web}/api/league/bots/{LEGIT}/versions", content=data, headers={**headers, "Content-Type": "application/gzip"}
        )
        if answer.status_code != 202:
            raise BenchError(f"the legitimate upload of {folder.name} was refused: {answer.status_code} {answer.text}")
        submission = answer.json()["id"]
        while time.monotonic() - began < ACTIVE_S:
            state = client.get(f"{server.web}/api/league/submissions/{submission}", headers=headers).json()
            if state["final"]:
                if state["state"] != "active":
                    raise BenchError(f"the legitimate upload of {folder.name} was {state['state']}: {state['reason']}")
                return time.monotonic() - began
            time.sleep(0.1)
    raise BenchError(f"the legitimate upload of {folder.name} was not active within {ACTIVE_S:g} s")


def settled_rss(server: Server, idle: float, timeout_s: float = 30.0) -> float:
    """The server's RSS once it is back within 10 % of idle, or has not fallen for 5 s (``timeout_s`` at most)."""
    deadline = time.monotonic() + timeout_s
    lowest, since = server.rss_mb(), time.monotonic()
    while time.monotonic() < deadline and lowest > idle * 1.1 and time.monotonic() - since < 5.0:
        time.sleep(0.5)
        now = server.rss_mb()
        if now < lowest - 0.5:
            lowest, since = now, time.monotonic()
    return server.rss_mb()


# -- the attackers (each in a process of its own) ---------------------------------------------------------------------


def slow_connections(port: int, ca: str, count: int, addresses: int, seconds: float, out: Any) -> None:
    """Hold ``count`` connections that send half a request's headers, opening each again as soon as it is dropped or refused."""

    async def attack() -> dict[str, int]:
        context = ssl.create_default_context(cafile=ca)
        stats: Counter[str] = Counter()
        end = time.monotonic() + seconds

        async def one(number: int) -> None:
            local = "127.0.0.2" if addresses <= 1 else f"127.0.2.{number % addresses + 1}"
            while time.monotonic() < end:
                try:
                    async with asyncio.timeout(10):
                        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, local_addr=(local, 0))
                    writer.write(PARTIAL)
                    await writer.drain()
                    stats["opened"] += 1
                except (OSError, ssl.SSLError, TimeoutError):
                    stats["refused"] += 1
                    await asyncio.sleep(1.0)
                    continue
                try:
                    async with asyncio.timeout(max(0.0, end - time.monotonic())):
                        await reader.read()
                    stats["dropped"] += 1
                except TimeoutError:
                    pass
                except (OSError, ssl.SSLError):
                    stats["dropped"] += 1
                writer.close()

        await asyncio.gather(*(one(number) for number in range(count)))
        return dict(stats)

    out.put(asyncio.run(attack()))


def bad_tokens(web: str, ca: str, real_id: str, flooders: int, seconds: float, out: Any) -> None:
    """Guess tokens as fast as they are answered, from the legitimate author's address, with X-Forwarded-For of their own."""
    stats: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def guess(number: int) -> None:
        with httpx.Client(verify=ca, transport=httpx.HTTPTransport(verify=ca, local_address="127.0.0.1"), timeout=30) as client:
            tried = 0
            while time.monotonic() < end:
                tried += 1
                token_id = real_id if tried % 2 else f"{number:04x}{tried % 65536:04x}"
                headers = {"Authorization": f"Bearer plg_{token_id}_{'G' * 43}", "X-Forwarded-For": f"198.51.100.{tried % 250}"}
                try:
                    status = client.get(f"{web}/api/league/me", headers=headers).status_code
                except httpx.HTTPError as exc:
                    status = type(exc).__name__  # type: ignore[assignment]  # an error's name counts beside the status codes
                    time.sleep(REFUSED_PAUSE_S)
                with lock:
                    stats[str(status)] += 1

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(flooders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put(dict(stats))


def upload_flood(web: str, ca: str, token: str, flooders: int, seconds: float, out: Any) -> None:
    """Upload 5 MB bodies as fast as they are answered, from ``flooders`` threads."""
    stats: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds
    body = b"\x1f\x8b" + os.urandom(5 << 20)

    def flood(number: int) -> None:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"}
        with httpx.Client(verify=ca, transport=httpx.HTTPTransport(verify=ca, local_address="127.0.0.3"), timeout=60) as client:
            tried = 0
            while time.monotonic() < end:
                tried += 1
                try:
                    status = client.post(
                        f"{web}/api/league/bots/flood-{number}-{tried}/versions", content=body, headers=headers
                    ).status_code
                except httpx.HTTPError as exc:
                    status = type(exc).__name__  # type: ignore[assignment]  # an error's name counts beside the status codes
                    time.sleep(REFUSED_PAUSE_S)
                with lock:
                    stats[str(status)] += 1

    threads = [threading.Thread(target=flood, args=(n,)) for n in range(flooders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put(dict(stats))


@contextlib.contextmanager
def attacker(target: Callable[..., None], *args: Any) -> Iterator[Any]:
    """Run an attacker in a process of its own; what it reports (a dict) is put in the returned queue."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    process = context.Process(target=target, args=(*args, out), daemon=True)
    process.start()
    try:
        yield out
    finally:
        process.join(timeout=120)
        if process.is_alive():
            process.kill()
            process.join()


# -- the run -----------------------------------------------------------------------------------------------------------


def measure(settings: Settings, keep: bool = False) -> dict[str, Any]:
    began = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="polignac-bench-abuse-"))
    out: dict[str, Any] = {
        "config": {**vars(settings), "sandboxed": launcher_unavailable() is None},
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
    }
    try:
        write_league(folder)
        tokens = seed(folder)
        server = Server(folder)
        try:
            out.update(run(settings, folder, tokens, server))
        finally:
            server.stop()
    finally:
        if keep:
            print(f"the league's folder is kept: {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    out["wall_s"] = round(time.monotonic() - began, 1)
    out["goals"] = goals(out)
    return out


def run(settings: Settings, folder: Path, tokens: dict[str, str], server: Server) -> dict[str, Any]:
    ca = folder / "ca.pem"
    out: dict[str, Any] = {}
    with httpx.Client(verify=str(ca), timeout=30) as client:
        for _ in range(20):
            client.get(f"{server.web}/api/leaderboard?tournament={LEAGUE}").raise_for_status()
    idle = server.rss_mb()
    unloaded: dict[str, Any] = {"rss_mb": round(idle, 1)}
    with Sampler(server, ca, settings.samples_per_s) as sampler:
        times = [
            upload_to_active(server, ca, tokens["ada"], bot_folder(folder, LEGIT, copy_name=f"calm-{n}")) for n in range(settings.uploads)
        ]
    unloaded.update(sampler.figures())
    unloaded["upload_to_active_s"] = round(statistics.median(times), 2)
    unloaded["upload_to_active_runs_s"] = [round(t, 2) for t in times]
    out["idle_rss_mb"] = round(idle, 1)
    out["unloaded"] = unloaded

    for key, addresses in (("slow_connections", 1), ("slow_connections_spread", settings.addresses)):
        before = server.rss_mb()
        with (
            Sampler(server, ca, settings.samples_per_s) as sampler,
            attacker(slow_connections, server.port, str(ca), settings.connections, addresses, settings.seconds) as report,
        ):
            stats = report.get(timeout=settings.seconds + 120)
        after = settled_rss(server, idle)
        out[key] = {
            "connections": settings.connections,
            "addresses": addresses,
            **stats,
            "rss_before_mb": round(before, 1),
            "peak_rss_mb": round(sampler.peak_rss, 1),
            "peak_over_idle": round(sampler.peak_rss / idle, 2),
            "rss_after_mb": round(after, 1),
            "after_over_idle": round(after / idle, 2),
            **sampler.figures(),
        }

    real_id = tokens["ada"].split("_")[1]
    guessers = min(settings.flooders, TOKEN_GUESSERS)
    with (
        Sampler(server, ca, settings.samples_per_s) as sampler,
        attacker(bad_tokens, server.web, str(ca), real_id, guessers, settings.seconds) as report,
    ):
        mine = []
        with httpx.Client(verify=str(ca), transport=httpx.HTTPTransport(verify=str(ca), local_address="127.0.0.1"), timeout=30) as client:
            for _ in range(10):
                mine.append(client.get(f"{server.web}/api/league/me", headers={"Authorization": f"Bearer {tokens['ada']}"}).status_code)
                time.sleep(settings.seconds / 12)
        stats = report.get(timeout=settings.seconds + 120)
    out["bad_tokens"] = {
        "guessers": guessers,
        "guesses": stats,
        "author_from_the_same_address": dict(Counter(str(s) for s in mine)),
        **sampler.figures(),
    }

    slow_build = ["sh", "-c", "sleep 3600"]
    queued = []
    with httpx.Client(verify=str(ca), timeout=60) as client:
        from polignac_arena.archive import pack_folder

        for name in ("slow-1", "slow-2"):
            answer = client.post(
                f"{server.web}/api/league/bots/{name}/versions",
                content=pack_folder(bot_folder(folder, name, build=slow_build)),
                headers={"Authorization": f"Bearer {tokens['mallory']}", "Content-Type": "application/gzip"},
            )
            queued.append(answer.status_code)
    with (
        Sampler(server, ca, settings.samples_per_s) as sampler,
        attacker(upload_flood, server.web, str(ca), tokens["mallory"], settings.flooders, settings.seconds * 3) as report,
    ):
        time.sleep(1.0)  # the flood under way
        times = [
            upload_to_active(server, ca, tokens["ada"], bot_folder(folder, LEGIT, copy_name=f"busy-{n}")) for n in range(settings.uploads)
        ]
        stats = report.get(timeout=settings.seconds * 3 + 120)
    flood = {"slow_builds_queued": queued, "flood_answers": stats, **sampler.figures()}
    flood["upload_to_active_s"] = round(statistics.median(times), 2)
    flood["upload_to_active_runs_s"] = [round(t, 2) for t in times]
    flood["ratio_to_unloaded"] = round(flood["upload_to_active_s"] / unloaded["upload_to_active_s"], 2)
    out["upload_flood"] = flood
    return out


def goals(out: dict[str, Any]) -> dict[str, Any]:
    if "unloaded" not in out:
        return {}
    attacks = ("slow_connections", "slow_connections_spread", "bad_tokens", "upload_flood")
    return {
        "rss_under_2x_idle": all(out[k]["peak_over_idle"] < 2 for k in attacks[:2]),
        "rss_back_to_idle": all(out[k]["after_over_idle"] <= 1.1 for k in attacks[:2]),
        "upload_within_2x_unloaded": out["upload_flood"]["ratio_to_unloaded"] <= 2,
        "leaderboard_p99_under_200ms": {k: out[k]["leaderboard_p99_ms"] < 200 for k in attacks},
        "leaderboard_keepalive_p99_under_200ms": {k: out[k]["keepalive_p99_ms"] < 200 for k in attacks},
    }


def summary(result: dict[str, Any]) -> str:
    unloaded = result["unloaded"]
    lines = [
        f"league over TLS, default limits, sandboxed seats: {result['config']['sandboxed']}; "
        f"{result['cpus']} CPUs, load average {result['load_average']} at the start",
        f"unloaded               RSS {result['idle_rss_mb']} MB; leaderboard p50 {unloaded['leaderboard_p50_ms']} ms, "
        f"p99 {unloaded['leaderboard_p99_ms']} ms (new connection), p99 {unloaded['keepalive_p99_ms']} ms (kept alive); "
        f"upload to active {unloaded['upload_to_active_s']} s",
    ]
    for key in ("slow_connections", "slow_connections_spread"):
        phase = result[key]
        lines.append(
            f"{key:<23}{phase['connections']} from {phase['addresses']} address(es): opened {phase.get('opened', 0)}, "
            f"refused {phase.get('refused', 0)}, dropped {phase.get('dropped', 0)}; RSS peak {phase['peak_rss_mb']} MB "
            f"({phase['peak_over_idle']}x idle), after {phase['rss_after_mb']} MB ({phase['after_over_idle']}x); "
            f"leaderboard p99 {phase['leaderboard_p99_ms']} ms (new connection), {phase['keepalive_p99_ms']} ms (kept alive), "
            f"errors {phase['leaderboard_errors'] or 'none'}"
        )
    bad = result["bad_tokens"]
    lines.append(
        f"bad_tokens             guesses answered {bad['guesses']}; "
        f"the author from the same address {bad['author_from_the_same_address']}; "
        f"leaderboard p99 {bad['leaderboard_p99_ms']} ms, {bad['keepalive_p99_ms']} ms kept alive"
    )
    flood = result["upload_flood"]
    lines.append(
        f"upload_flood           answers {flood['flood_answers']}; upload to active {flood['upload_to_active_s']} s "
        f"({flood['ratio_to_unloaded']}x unloaded); leaderboard p99 {flood['leaderboard_p99_ms']} ms, "
        f"{flood['keepalive_p99_ms']} ms kept alive"
    )
    lines.append(f"goals                  {result['goals']}; the run took {result['wall_s']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer connections, shorter attacks")
    parser.add_argument("--connections", type=int, default=None, help=f"slow connections held (default {FULL.connections})")
    parser.add_argument("--addresses", type=int, default=None, help=f"addresses of the spread slow connections (default {FULL.addresses})")
    parser.add_argument("--seconds", type=float, default=None, help=f"length of each attack (default {FULL.seconds:g})")
    parser.add_argument("--flooders", type=int, default=None, help=f"threads of the token and upload floods (default {FULL.flooders})")
    parser.add_argument(
        "--uploads", type=int, default=None, help=f"legitimate uploads timed, unloaded and under the flood (default {FULL.uploads})"
    )
    parser.add_argument("--keep", action="store_true", help="keep the league's folder (printed on stderr)")
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    settings = Settings(
        connections=args.connections or base.connections,
        addresses=args.addresses or base.addresses,
        seconds=args.seconds or base.seconds,
        flooders=args.flooders or base.flooders,
        samples_per_s=base.samples_per_s,
        uploads=args.uploads or base.uploads,
    )
    if (
        min(settings.connections, settings.addresses, settings.flooders, settings.uploads) < 1
        or settings.seconds <= 0
        or settings.addresses > 250
    ):
        print(
            "league_abuse.py: error: --connections, --flooders and --uploads must be 1 or more, --addresses 1 to 250, --seconds above 0",
            file=sys.stderr,
        )
        return 2
    try:
        result = measure(settings, keep=args.keep)
    except BenchError as exc:
        print(f"league_abuse.py: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
