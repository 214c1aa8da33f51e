"""League benchmark: matches per minute the ladder sustains with uploaded bots in sandboxed seats, and submit-to-rated latency.

Run ``python benchmarks/league.py`` for a summary, ``--json`` for one JSON object on stdout.
It drives a real league through its commands, as an operator and its authors would, in a
temporary folder, on loopback only:

1. writes a league file (``--table-size`` 4, ``--parallel`` 2, classic rules, or ``--limit``
   points per match, ``--seat-kind`` process (bubblewrap) or docker, HTTP and gRPC on
   127.0.0.1 with ports the OS chooses, per-author limits raised so that they never refuse);
2. adds two authors with ``polignac league user add`` and starts ``polignac league serve``
   (its addresses read from its output);
3. submits ``--bots`` bots (copies of ``sample_bots/random`` and ``sample_bots/heuristic``,
   renamed), one after the other, with ``polignac league submit``, each timed from the start
   of the command to its ``accepted`` line (the upload, the sandboxed build and smoke match);
   the ladder starts playing once a table's worth is active, so the later ones are validated
   beside running matches;
4. after a warm-up (``parallel`` matches finished since the last bot was accepted), counts the
   matches the ladder finishes over ``--seconds`` (read from the league's store): matches per
   minute, with their median wall time and hands, the CPU time the server and its seats'
   processes used meanwhile (sampled from /proc; not measured with docker seats, whose
   containers run outside the server's processes), and how long a freed table waited for its
   next match's first decision request (the league's ``polignac_table_refill_seconds``
   histogram on ``/metrics``: the mean, and the median as the histogram's buckets give it);
   once for each of ``--seats-ahead`` (default ``0,1,0,1``: the league's ``[ladder] seats_ahead``,
   without and with the next match's seats started ahead, in turn, so that a change in the
   machine's load weighs on both alike), the server stopped (SIGTERM) and started again on the
   same store between two windows, each window after its own warm-up;
5. submits one more bot and times, from the start of its ``submit`` command, its acceptance
   and its first rated match (its first rating after a match in the store's rating history:
   ratings are applied in match order, so this includes waiting for the matches before it);
6. stops the server with SIGTERM and times its drain (running matches may finish, up to the
   league's ``[drain] deadline_s``).

The top-level window figures are the last window's; ``windows`` holds each, ``by_seats_ahead``
each setting's windows taken together.  Figures move with
the machine's load (``load_average`` is reported); compare runs on the same machine only.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from polignac_arena.seats import launcher_for
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from polignac_arena.store.records import StoredResult
from polignac_arena.web.app import open_read_only

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ("random", "heuristic")
AUTHORS = ("ada", "bob")
LEAGUE = "bench"
POLL_S = 0.1
SERVER_START_S = 60.0
SUBMIT_S = 300.0
RATED_S = 600.0
DRAIN_DEADLINE_S = 30.0
REFILL = "polignac_table_refill_seconds"
REFILL_LINE = re.compile(rf'^{REFILL}_(bucket|count|sum)(?:{{le="([^"]+)"}})? (\S+)$', re.MULTILINE)
WEB_LINE = re.compile(r"web and authors' API on (\S+?)/?(?: |$)")
ACCEPTED_LINE = re.compile(r"^accepted: (\S+) ")


class BenchError(RuntimeError):
    """The league did not do what the benchmark needs (it says what, with the server's last words)."""


@dataclass(frozen=True)
class Settings:
    bots: int
    seconds: float
    table_size: int
    parallel: int
    rules: str
    limit: int | None
    seat_kind: str
    seats_ahead: tuple[int, ...] = (0, 1, 0, 1)
    """The league's ``[ladder] seats_ahead`` of each window, in order."""


def league_file(settings: Settings, seats_ahead: int) -> str:
    """The league file: the settings asked for, loopback addresses on ports the OS chooses, limits that never refuse."""
    rules = f"variant = {json.dumps(settings.rules)}" + ("" if settings.limit is None else f"\nlimit = {settings.limit}")
    uploads = settings.bots + 1
    return f"""name = "{LEAGUE}"
table_size = {settings.table_size}
parallel = {settings.parallel}
[rules]
{rules}
[seats]
kind = "{settings.seat_kind}"
[ladder]
seats_ahead = {seats_ahead}
[http]
address = "127.0.0.1:0"
[grpc]
address = "127.0.0.1:0"
[limits]
uploads_per_hour = {uploads}
active_bots = {uploads}
versions_kept = {uploads}
[drain]
deadline_s = {DRAIN_DEADLINE_S:g}
"""


def polignac(*args: str) -> list[str]:
    """The ``polignac`` command run by this interpreter (so that it runs the code this script imports)."""
    return [sys.executable, "-m", "polignac_arena.cli", *args]


def child_env() -> dict[str, str]:
    """This environment without an author's token: each command is given its token file."""
    return {k: v for k, v in os.environ.items() if k not in ("POLIGNAC_LEAGUE_TOKEN", "POLIGNAC_TOKEN")}


def add_author(folder: Path, name: str) -> Path:
    """``polignac league user add NAME``; the file (mode 600) holding the token it printed."""
    done = subprocess.run(
        polignac("league", "user", "add", name, "--config", str(folder / "league.toml")),
        cwd=folder,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise BenchError(f"polignac league user add {name} failed: {done.stderr.strip()}")
    token = done.stdout.strip().splitlines()[-1]
    path = folder / f"{name}.token"
    path.write_text(token + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def bot_folder(folder: Path, number: int) -> Path:
    """A copy of a sample bot (random and heuristic in turn) renamed ``<sample>-<number>``."""
    sample = SAMPLES[number % len(SAMPLES)]
    name = f"{sample}-{number}"
    copy = folder / "bots" / name
    shutil.copytree(ROOT / "sample_bots" / sample, copy)
    toml = copy / "bot.toml"
    text, count = re.subn(rf'^name = "{sample}"$', f'name = "{name}"', toml.read_text(encoding="utf-8"), count=1, flags=re.MULTILINE)
    if count != 1:
        raise BenchError(f"cannot rename the bot in {toml}: no line name = {sample!r}")
    toml.write_text(text, encoding="utf-8")
    return copy


def lines_of(stream: IO[str]) -> queue.Queue[str | None]:
    """The lines of ``stream`` as a thread reads them (None at its end), so that a reader can wait with a deadline."""
    out: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            out.put(line.rstrip("\n"))
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def next_line(lines: queue.Queue[str | None], deadline: float) -> str | None:
    """The next line before ``deadline`` (time.monotonic()); None at the stream's end; TimeoutError past the deadline."""
    try:
        return lines.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise TimeoutError from None


def submit(folder: Path, bot: Path, token: Path, url: str) -> tuple[str, float]:
    """``polignac league submit``: the accepted version's label and the seconds from the command's start to its ``accepted`` line."""
    began = time.monotonic()
    command = polignac("league", "submit", str(bot), "--server", url, "--token-file", str(token))
    with subprocess.Popen(command, cwd=folder, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None and process.stderr is not None
        lines, said = lines_of(process.stdout), []
        deadline = began + SUBMIT_S
        try:
            while (line := next_line(lines, deadline)) is not None:
                said.append(line)
                accepted = ACCEPTED_LINE.match(line)
                if accepted:
                    took = time.monotonic() - began
                    process.wait(timeout=30)
                    return accepted.group(1), took
        except TimeoutError:
            process.kill()
            raise BenchError(f"submitting {bot.name} took over {SUBMIT_S:g} s: {said[-3:]}") from None
        process.wait(timeout=30)
        raise BenchError(f"submitting {bot.name} failed: {' | '.join(said[-3:])} {process.stderr.read().strip()}")


class Server:
    """``polignac league serve`` as a child process, its errors on a file in the league's folder."""

    def __init__(self, folder: Path) -> None:
        self.log = folder / "serve.err"
        began = time.monotonic()
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
        self.url = self._read_url()
        self.start_s = time.monotonic() - began
        """Seconds from the command's start until it printed where it serves."""

    def _read_url(self) -> str:
        deadline = time.monotonic() + SERVER_START_S
        try:
            while (line := next_line(self.lines, deadline)) is not None:
                found = WEB_LINE.search(line)
                if found:
                    return found.group(1)
        except TimeoutError:
            raise self.error(f"the server printed no address within {SERVER_START_S:g} s") from None
        raise self.error("the server stopped before it served")

    def error(self, what: str) -> BenchError:
        tail = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        return BenchError(f"{what}; its last words: {' | '.join(tail) or '(none)'}")

    def alive(self) -> None:
        if self.process.poll() is not None:
            raise self.error(f"the server exited (code {self.process.returncode})")

    def stop(self) -> tuple[float, int]:
        """SIGTERM, then wait for the drain: (seconds until the process exited, its exit code)."""
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=DRAIN_DEADLINE_S + 60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise self.error(f"the server did not stop within {DRAIN_DEADLINE_S + 60:g} s of SIGTERM") from None
        return time.monotonic() - began, code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _proc_stats() -> dict[int, tuple[int, int, int]]:
    """Every process's (parent pid, start time, CPU ticks user + system) from /proc."""
    stats = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            stats[int(entry.name)] = (int(fields[1]), int(fields[19]), int(fields[11]) + int(fields[12]))
    return stats


class TreeCpu:
    """The CPU time (user + system) a process and all its descendants use while it runs, sampled from /proc in a thread.

    A total over children would miss the seats: their sandboxes' processes are not all waited
    for by their parents, so their time never reaches the server's.  Sampled, a process loses
    only what it used after its last sample (at most ``every_s`` of its life).
    """

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self.pid = pid
        self.every_s = every_s
        self._start: dict[tuple[int, int], int] = {}
        self._last: dict[tuple[int, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> dict[tuple[int, int], int]:
        stats = _proc_stats()
        children: dict[int, list[int]] = {}
        for pid, (parent, _, _) in stats.items():
            children.setdefault(parent, []).append(pid)
        tree, todo = {}, [self.pid]
        while todo:
            pid = todo.pop()
            if pid in stats:
                tree[(pid, stats[pid][1])] = stats[pid][2]
                todo.extend(children.get(pid, []))
        return tree

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._last.update(self._sample())

    def __enter__(self) -> TreeCpu:
        self._start = self._sample()
        self._last = dict(self._start)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._last.update(self._sample())

    def seconds(self, only_the_root: bool = False) -> float:
        """CPU seconds used between entering and leaving: by the whole tree, or by its root process alone."""
        ticks = sum(used - self._start.get(key, 0) for key, used in self._last.items() if not only_the_root or key[0] == self.pid)
        return ticks / os.sysconf("SC_CLK_TCK")


class Ladder:
    """What the league's store says of its ladder (read-only)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        tournament = store.get_tournament(LEAGUE)
        if tournament is None:
            raise BenchError(f"the store holds no tournament {LEAGUE!r}")
        self.tournament_id = tournament.id

    def results(self) -> dict[str, StoredResult]:
        """The final results by match id."""
        return {r.match_id: r for r in self.store.list_results(self.tournament_id)}

    def first_rating_index(self, label: str) -> int | None:
        """The index of the first match that rated ``label`` (None before it has been rated)."""
        return next((p.idx for p in self.store.rating_history(self.tournament_id, label) if p.idx >= 0), None)


def wait_for_results(ladder: Ladder, server: Server, count: int, timeout_s: float) -> None:
    """Wait until the store holds ``count`` final results."""
    deadline = time.monotonic() + timeout_s
    while len(ladder.results()) < count:
        server.alive()
        if time.monotonic() > deadline:
            raise BenchError(f"the ladder finished fewer than {count} matches within {timeout_s:g} s")
        time.sleep(POLL_S)


Histogram = tuple[float, float, list[tuple[float, float]]]
"""A Prometheus histogram read from ``/metrics``: its count, its sum and its cumulative (upper bound, count) buckets."""


def refill_histogram(server: Server) -> Histogram:
    """The league's table-refill histogram as its ``/metrics`` shows it now."""
    count, total, buckets = 0.0, 0.0, []
    for kind, bound, value in REFILL_LINE.findall(httpx.get(f"{server.url}/metrics", timeout=30).text):
        if kind == "count":
            count = float(value)
        elif kind == "sum":
            total = float(value)
        else:
            buckets.append((float(bound), float(value)))
    return count, total, sorted(buckets)


def histogram_change(before: Histogram, after: Histogram) -> Histogram:
    """What a histogram gained between two readings (its finite buckets: the last, ``+Inf``, is its count)."""
    buckets = [(bound, now - then) for (bound, now), (_, then) in zip(after[2], before[2], strict=True) if bound != float("inf")]
    return after[0] - before[0], after[1] - before[1], buckets


def histogram_sum(histograms: list[Histogram]) -> Histogram:
    buckets = [(bound, sum(h[2][i][1] for h in histograms)) for i, (bound, _) in enumerate(histograms[0][2])]
    return sum(h[0] for h in histograms), sum(h[1] for h in histograms), buckets


def refills(change: Histogram) -> dict[str, Any]:
    """Table refills: how many, their mean, and their median as the buckets give it (linear within its bucket, as
    Prometheus's ``histogram_quantile`` does)."""
    count, total, buckets = change
    median, low, below = None, 0.0, 0.0
    for bound, upto in buckets:
        if count and upto >= count / 2:
            inside = upto - below
            median = low + (bound - low) * ((count / 2 - below) / inside if inside else 1.0)
            break
        low, below = bound, upto
    if count and median is None:
        median = low  # past the last bound: it says no more than "at least"
    return {
        "refills": int(count),
        "refill_mean_s": round(total / count, 3) if count else None,
        "refill_median_s": round(median, 3) if median is not None else None,
    }


def window(ladder: Ladder, server: Server, seconds: float, server_side_seats: bool) -> dict[str, Any]:
    """The matches finished over ``seconds``: per minute, their median wall time and hands, void ones, the CPU they took, and
    how long freed tables waited for their next match's first request."""
    with TreeCpu(server.process.pid) as tree:
        before, began, refilled = ladder.results(), time.monotonic(), refill_histogram(server)
        deadline = began + seconds
        while (left := deadline - time.monotonic()) > 0:
            server.alive()
            time.sleep(min(left, 1.0))
        after, took, refilled_after = ladder.results(), time.monotonic() - began, refill_histogram(server)
    cpu, own = (tree.seconds(), tree.seconds(only_the_root=True)) if server_side_seats else (None, None)
    change = histogram_change(refilled, refilled_after)
    new = [r for match_id, r in after.items() if match_id not in before]
    played = [r for r in new if r.status is MatchStatus.FINISHED]
    walls = [r.duration_s for r in played if r.duration_s is not None]
    return {
        "window_s": round(took, 2),
        "window_matches": len(played),
        "window_void": len(new) - len(played),
        "matches_per_minute": round(len(played) * 60 / took, 2),
        "match_median_s": round(statistics.median(walls), 2) if walls else None,
        "match_median_hands": statistics.median(r.hands for r in played) if played else None,
        "window_faults": sum(sum(seat.values()) for r in played for seat in r.faults),
        "cpu_per_match_s": round(cpu / len(played), 2) if cpu is not None and played else None,
        "server_cpu_per_match_s": round(own / len(played), 2) if own is not None and played else None,
        "cpus_busy": round(cpu / took, 2) if cpu is not None else None,
        "cpu_s": round(cpu, 2) if cpu is not None else None,
        **refills(change),
        "refill_histogram": change,
    }


def pooled(windows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The windows of each ``seats_ahead`` setting taken together: matches a minute, CPU a match, table refills."""
    out = {}
    for ahead in dict.fromkeys(w["seats_ahead"] for w in windows):
        alike = [w for w in windows if w["seats_ahead"] == ahead]
        matches, took = sum(w["window_matches"] for w in alike), sum(w["window_s"] for w in alike)
        cpus = [w["cpu_s"] for w in alike]
        cpu = None if None in cpus else sum(cpus)
        out[str(ahead)] = {
            "windows": len(alike),
            "window_s": round(took, 2),
            "window_matches": matches,
            "matches_per_minute": round(matches * 60 / took, 2),
            "cpu_per_match_s": round(cpu / matches, 2) if cpu is not None and matches else None,
            **refills(histogram_sum([w["refill_histogram"] for w in alike])),
        }
    return out


def first_rated(ladder: Ladder, server: Server, label: str, began: float) -> tuple[float, int]:
    """Seconds from ``began`` until ``label`` has a rating from a match, and that match's index."""
    deadline = began + RATED_S
    while (index := ladder.first_rating_index(label)) is None:
        server.alive()
        if time.monotonic() > deadline:
            raise BenchError(f"{label} was not rated within {RATED_S:g} s of its submission")
        time.sleep(POLL_S)
    return time.monotonic() - began, index


@contextmanager
def league_folder(keep: bool) -> Iterator[Path]:
    if keep:
        folder = Path(tempfile.mkdtemp(prefix="polignac-bench-league-"))
        print(f"the league's folder is kept: {folder}", file=sys.stderr)
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="polignac-bench-league-", ignore_cleanup_errors=True) as name:
        yield Path(name)


def measure(settings: Settings, keep: bool = False) -> dict[str, Any]:
    """Run the league and measure it (see the module notes)."""
    began = time.monotonic()
    out: dict[str, Any] = {
        "config": {**vars(settings), "sandboxed": None, "drain_deadline_s": DRAIN_DEADLINE_S},
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
    }
    if settings.seat_kind == "process":
        out["config"]["sandboxed"] = not isinstance(launcher_for("process"), ProcessLauncher)
    with league_folder(keep) as folder:
        (folder / "league.toml").write_text(league_file(settings, settings.seats_ahead[0]), encoding="utf-8")
        tokens = [add_author(folder, name) for name in AUTHORS]
        servers = [Server(folder)]
        try:
            with open_read_only(folder / "league.db") as store:
                out.update(run(settings, folder, tokens, servers, Ladder(store)))
        finally:
            for server in servers:
                server.kill()
    out["wall_s"] = round(time.monotonic() - began, 1)
    return out


def run(settings: Settings, folder: Path, tokens: list[Path], servers: list[Server], ladder: Ladder) -> dict[str, Any]:
    """The measures on a running league (``servers``: the one running; a restart appends the next): its submissions, its
    throughput with and without seats started ahead, a new version's latency, its drain."""
    server = servers[-1]
    out: dict[str, Any] = {"server_start_s": round(server.start_s, 2), "submits": [], "windows": []}
    for number in range(settings.bots):
        label, took = submit(folder, bot_folder(folder, number), tokens[number % len(tokens)], server.url)
        out["submits"].append({"label": label, "accepted_s": round(took, 2)})
    out["submit_median_s"] = round(statistics.median(s["accepted_s"] for s in out["submits"]), 2)
    for number, ahead in enumerate(settings.seats_ahead):
        if number:  # the same store, the next setting: the league drains, and starts again with it
            server.stop()
            (folder / "league.toml").write_text(league_file(settings, ahead), encoding="utf-8")
            server = Server(folder)
            servers.append(server)
        wait_for_results(ladder, server, len(ladder.results()) + settings.parallel, RATED_S)
        measured = window(ladder, server, settings.seconds, server_side_seats=settings.seat_kind == "process")
        out["windows"].append({"seats_ahead": ahead, **measured})
    out.update(measured)
    out["by_seats_ahead"] = pooled(out["windows"])
    out["matches_played"] = httpx.get(f"{server.url}/api/league/status", timeout=30).json()["matches_played"]

    began = time.monotonic()
    label, accepted = submit(folder, bot_folder(folder, settings.bots), tokens[0], server.url)
    rated, index = first_rated(ladder, server, label, began)
    out["new_version"] = {"label": label, "accepted_s": round(accepted, 2), "first_rated_s": round(rated, 2), "match_index": index}

    before = ladder.results()
    drained, code = server.stop()
    after = ladder.results()
    ended = [r for match_id, r in after.items() if match_id not in before]
    out.update(
        drain_s=round(drained, 2),
        exit_code=code,
        finished_at_drain=sum(r.status is MatchStatus.FINISHED for r in ended),
        aborted_at_drain=sum(r.status is MatchStatus.ABORTED for r in ended),
        matches_total=sum(r.status is MatchStatus.FINISHED for r in after.values()),
        void_total=sum(r.status is not MatchStatus.FINISHED for r in after.values()),
    )
    return out


def cpu_line(result: dict[str, Any]) -> str:
    if result["cpus_busy"] is None:
        return "CPU                    not measured: docker seats run outside the server's processes"
    return (
        f"CPU                    {result['cpu_per_match_s']} s a match ({result['server_cpu_per_match_s']} s in the server, "
        "the rest in its seats); "
        f"the league kept {result['cpus_busy']} of {result['cpus']} CPUs busy"
    )


def refill_text(measured: dict[str, Any]) -> str:
    if not measured["refills"]:
        return "no table refilled"
    median, mean, count = measured["refill_median_s"], measured["refill_mean_s"], measured["refills"]
    return f"a freed table's next request after {median} s (median; mean {mean} s, {count} refills)"


def window_line(ahead: str, measured: dict[str, Any]) -> str:
    cpu = "" if measured["cpu_per_match_s"] is None else f", {measured['cpu_per_match_s']} s CPU a match"
    windows = f"{measured['windows']} window{'s' if measured['windows'] > 1 else ''}"
    return f"seats ahead {ahead:<10} {measured['matches_per_minute']:.1f} matches/min ({windows}){cpu}; " + refill_text(measured)


def summary(result: dict[str, Any]) -> str:
    config = result["config"]
    rules = config["rules"] + ("" if config["limit"] is None else f" to {config['limit']} points")
    seats = config["seat_kind"] + {True: " (bubblewrap)", False: " (NOT sandboxed: no usable bubblewrap)", None: ""}[config["sandboxed"]]
    table = f"tables of {config['table_size']}, parallel {config['parallel']}"
    submits = [s["accepted_s"] for s in result["submits"]]
    new = result["new_version"]
    return "\n".join(
        [
            f"league: {config['bots']} uploaded bots, {table}, {rules}, {seats} seats",
            f"submit -> accepted     median {result['submit_median_s']:.1f} s (min {min(submits):.1f}, max {max(submits):.1f})",
            f"ladder                 {result['matches_per_minute']:.1f} matches/min over {result['window_s']:.0f} s "
            f"({result['window_matches']} matches, {result['window_void']} void, {result['window_faults']} faults); "
            f"a match: median {result['match_median_s']} s, {result['match_median_hands']} hands",
            cpu_line(result),
            *(window_line(ahead, measured) for ahead, measured in result["by_seats_ahead"].items()),
            f"new version            {new['label']}: accepted after {new['accepted_s']:.1f} s, "
            f"first rated match (#{new['match_index']}) after {new['first_rated_s']:.1f} s",
            f"drain (SIGTERM)        {result['drain_s']:.1f} s: {result['finished_at_drain']} match(es) finished, "
            f"{result['aborted_at_drain']} aborted; exit code {result['exit_code']}",
            f"in all                 {result['matches_total']} matches played, {result['void_total']} void",
            f"machine                {result['cpus']} CPUs, load average {result['load_average']} at the start; "
            f"the server started in {result['server_start_s']:.1f} s, the whole run took {result['wall_s']:.0f} s",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--bots", type=int, default=6, help="bots submitted before the throughput window (default 6)")
    parser.add_argument("--seconds", type=float, default=60.0, help="the throughput window (default 60)")
    parser.add_argument("--table-size", type=int, default=4, help="players per match, 3..6 (default 4)")
    parser.add_argument("--parallel", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--rules", default="classic", help="the rules variant (default classic)")
    parser.add_argument("--limit", type=int, default=None, help="points that end a match (default: the variant's)")
    parser.add_argument("--seat-kind", choices=("process", "docker"), default="process", help="sandboxed seats (default process)")
    parser.add_argument("--keep", action="store_true", help="keep the league's folder (store, records, logs) and print its path")
    parser.add_argument(
        "--seats-ahead",
        default="0,1,0,1",
        help="the league's [ladder] seats_ahead for each window, in order (default 0,1,0,1: without, with, and again; "
        "the server restarts between)",
    )
    args = parser.parse_args(argv)
    try:
        seats_ahead = tuple(int(part) for part in args.seats_ahead.split(","))
    except ValueError:
        parser.error(f"--seats-ahead must be integers separated by commas, got {args.seats_ahead!r}")
    if not seats_ahead or any(not 0 <= n <= 64 for n in seats_ahead):
        parser.error(f"--seats-ahead must be integers from 0 to 64, got {args.seats_ahead!r}")
    if args.bots < args.table_size:
        parser.error(f"--bots must be at least --table-size ({args.table_size}), got {args.bots}")
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")
    settings = Settings(args.bots, args.seconds, args.table_size, args.parallel, args.rules, args.limit, args.seat_kind, seats_ahead)
    try:
        result = measure(settings, keep=args.keep)
    except BenchError as exc:
        print(f"league benchmark: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, sort_keys=True) if args.json else summary(result))
    return 0


if __name__ == "__main__":
    with suppress(KeyboardInterrupt):
        sys.exit(main())
