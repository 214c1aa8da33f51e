"""Cluster benchmark: matches per second with the local executor and with Ray on 1 and 2 worker nodes, and Ray's cost per match.

Run ``python benchmarks/cluster.py`` for a summary, ``--json`` for one JSON object on stdout,
``--quick`` for a smoke run (a few short matches).  It needs Ray (``pip install -e '.[ray]'``).

One run, in one process, on loopback only:

1. the same round-robin tournament (3 built-in bots at tables of 3, ``--matches`` matches of
   ``--limit`` points, seats ``--seats``: ``inprocess`` by default, so that a match is cheap
   and what Ray adds shows; ``process`` for bubblewrap sandboxes, as real tournaments use) is
   run with :func:`~polignac_arena.tournament.runner.run_tournament` and the default local
   executor, at parallel 1 and 2 (and at the Ray runs' parallelism when ``--node-cpus`` makes
   it larger), each into a fresh store;
2. a Ray cluster is started with Ray's own ``ray.cluster_utils.Cluster``: a head of 0 CPUs
   (it only schedules) and one worker node of ``--node-cpus`` CPUs, each node on 127.0.0.1
   with a cache folder and a name of its own, as separate machines would have; the runner
   joins it with a :class:`~polignac_arena.executors.ray_cluster.RayExecutor`;
3. the round trip of a no-op Ray task (reserving the CPUs of a match, so that it runs on a
   worker node) is timed, one task at a time, as the floor of what Ray adds to a match;
4. the tournament is run on the cluster at parallel = the worker nodes' CPUs, then a second
   worker node joins and it is run again at the doubled parallelism;
5. on the two nodes, tasks that only sleep (200 ms, holding a match's CPUs) are handed out
   at parallel = the slots, then one more: how long a slot stays idle per task is Ray's
   scheduling cost without the CPU contention of nodes that share cores (``slot_idle_ms``).
   Ray's head learns that a node freed a slot from the node's periodic resource reports, so
   a task handed out the moment another ends may wait for the next report (up to about
   100 ms); with one task more than the slots, a queued task is ready for the first slot
   that frees.

Each timed run is preceded by a warm-up tournament of ``parallel`` matches, so that worker
processes are started and have imported the arena before the clock starts.

What each run reports (``runs``): its wall time and matches per second; the match duration as
the runner sees it (the store's ``duration_s``: from handing the match to the executor to its
result, so shipping, scheduling and the result's way back included); on Ray, the duration on
the node (from its journal, ``matches.log`` in the node's cache: the match alone), and the
difference per match (``dispatch``).  ``overhead_per_match_ms`` is the Ray run's wall time per
match less the local run's at the same parallelism: it may come out below zero within the
noise, or well below it when the machine has cores to spare (local in-process seats share one
process, Ray's nodes do not).

On this 2-core machine the nodes share the cores (and Ray's own processes take some), so the
figures show the overhead and the scaling of the schedule, not a speed-up; docs/cluster.md
turns them into what to expect of real machines.  Figures move with the machine's load
(``load_average`` is reported at the start and the end); compare runs on the same machine only.
Ctrl-C (or SIGTERM) stops the benchmark and the cluster's processes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polignac_arena.executors import Executor
from polignac_arena.executors.node import CACHE_ENV, NODE_NAME_ENV
from polignac_arena.executors.ray_cluster import INSTALL_HINT, RayExecutor, import_ray
from polignac_arena.seats import SeatKind, launcher_for
from polignac_arena.store import Store, StoredResult
from polignac_arena.tournament.config import parse_config
from polignac_arena.tournament.runner import run_tournament

ENTRANTS = ("random", "cautious", "heuristic")
SEED = 2026
LOOPBACK = "127.0.0.1"
SEAT_KINDS = ("inprocess", "process")
DEFAULT_MATCHES = {"inprocess": 20, "process": 8}
QUICK = {"matches": 4, "limit": 5, "noop_samples": 10, "sleep_tasks": 6}
NOOP_SAMPLES = 50
SLEEP_TASKS = 20
SLEEP_TASK_S = 0.2
RUN_TIMEOUT_S = 60.0
"""A run that has not finished after this many seconds per match is stuck: the benchmark stops."""


class BenchError(RuntimeError):
    """A run that did not do what the benchmark needs (a match that failed, a run that hung)."""


@dataclass(frozen=True)
class Settings:
    matches: int
    limit: int
    node_cpus: int
    seats: str
    noop_samples: int
    sleep_tasks: int


def tournament_text(name: str, matches: int, parallel: int, limit: int, seats: str) -> str:
    """A round robin of the built-in bots, one table a round: ``matches`` matches."""
    return (
        f"name = {json.dumps(name)}\nentrants = {json.dumps(list(ENTRANTS))}\ntable_size = {len(ENTRANTS)}\n"
        f"rounds = {matches}\nseed = {SEED}\nparallel = {parallel}\n\n[rules]\nlimit = {limit}\n\n"
        f"[seats]\nkind = {json.dumps(seats)}\ntrusted = {json.dumps(seats == 'inprocess')}\n"
    )


def median_mean(values: list[float]) -> tuple[float | None, float | None]:
    """The median and the mean of ``values``, in ms (None for none)."""
    if not values:
        return None, None
    return round(statistics.median(values) * 1000, 1), round(statistics.fmean(values) * 1000, 1)


def journal(caches: list[Path]) -> dict[str, float]:
    """Each match's duration on its node, from the nodes' journals (``start`` to ``end``), by match id."""
    started: dict[str, float] = {}
    took: dict[str, float] = {}
    for cache in caches:
        path = cache / "matches.log"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) != 3:
                continue
            stamp, event, match_id = parts
            if event == "start":
                started[match_id] = float(stamp)
            elif event == "end" and match_id in started:
                took[match_id] = float(stamp) - started.pop(match_id)
    return took


async def play(
    name: str, folder: Path, matches: int, parallel: int, settings: Settings, executor: Executor | None
) -> tuple[float, list[StoredResult]]:
    """Run the benchmark's tournament as ``name`` into a fresh store; its wall time and final results."""
    config = parse_config(tournament_text(name, matches, parallel, settings.limit, settings.seats), f"<{name}>")
    with Store(folder / f"{name}.db") as store:
        began = time.perf_counter()
        try:
            async with asyncio.timeout(RUN_TIMEOUT_S * matches):
                outcome = await run_tournament(config, store, executor=executor)
        except TimeoutError:
            raise BenchError(f"run {name}: {matches} matches did not finish within {RUN_TIMEOUT_S * matches:g} s") from None
        wall = time.perf_counter() - began
        if outcome.played != matches or outcome.failed:
            raise BenchError(f"run {name}: {outcome.played} of {matches} matches finished, {outcome.failed} failed")
        return wall, store.list_results(outcome.tournament_id)


async def timed_run(
    name: str,
    folder: Path,
    parallel: int,
    settings: Settings,
    executor: Executor | None = None,
    caches: list[Path] | None = None,
) -> dict[str, Any]:
    """A warm-up of ``parallel`` matches, then the timed run; its figures."""
    await play(f"warm-{name}", folder, parallel, parallel, settings, executor)
    wall, results = await play(name, folder, settings.matches, parallel, settings, executor)
    runner = [r.duration_s for r in results if r.duration_s is not None]
    out: dict[str, Any] = {
        "executor": "local" if executor is None else executor.kind,
        "parallel": parallel,
        "matches": len(results),
        "wall_s": round(wall, 3),
        "matches_per_s": round(len(results) / wall, 3),
        "wall_per_match_ms": round(wall / len(results) * 1000, 1),
    }
    out["runner_median_ms"], out["runner_mean_ms"] = median_mean(runner)
    out["by_node"] = {node: sum(1 for r in results if r.node == node) for node in sorted({r.node or "" for r in results})}
    if caches is not None:
        on_node = journal(caches)
        node = [on_node[r.match_id] for r in results if r.match_id in on_node]
        dispatch = [r.duration_s - on_node[r.match_id] for r in results if r.match_id in on_node and r.duration_s is not None]
        out["node_median_ms"], out["node_mean_ms"] = median_mean(node)
        out["dispatch_median_ms"], out["dispatch_mean_ms"] = median_mean(dispatch)
    return out


def _noop() -> None:
    """The no-op Ray task."""


async def noop_round_trips(ray: Any, cpus: float, samples: int) -> dict[str, Any]:
    """The round trip of a no-op task that reserves ``cpus`` (as a match does), one at a time, after a warm-up."""
    task = ray.remote(num_cpus=cpus, max_retries=0)(_noop)
    for _ in range(3):
        await task.remote()
    took = []
    for _ in range(samples):
        began = time.perf_counter()
        await task.remote()
        took.append(time.perf_counter() - began)
    median, mean = median_mean(took)
    return {"median": median, "mean": mean, "samples": samples}


def _sleep(seconds: float) -> None:
    """A Ray task that holds its slot for ``seconds`` without using the CPU."""
    time.sleep(seconds)


async def slot_idle(ray: Any, cpus: float, slots: int, widths: list[int], tasks: int) -> dict[str, float]:
    """How long a slot stays idle per task when tasks that only sleep are handed out ``width`` at a time, by width.

    A sleeping task leaves the CPUs to Ray alone, so on a machine whose cores the nodes share
    this is the scheduling's own cost: the wall time each slot spent per task, less the sleep.
    """
    task = ray.remote(num_cpus=cpus, max_retries=0)(_sleep)

    async def one(gate: asyncio.Semaphore) -> None:
        async with gate:
            await task.remote(SLEEP_TASK_S)

    out = {}
    for width in widths:
        gate = asyncio.Semaphore(width)
        began = time.perf_counter()
        await asyncio.gather(*(one(gate) for _ in range(tasks)))
        wall = time.perf_counter() - began
        out[str(width)] = round((wall * slots / tasks - SLEEP_TASK_S) * 1000, 1)
    return out


class LoopbackCluster:
    """A Ray cluster on 127.0.0.1 of this process: a head that only schedules and worker nodes added one by one."""

    def __init__(self, root: Path, node_cpus: int) -> None:
        from ray import cluster_utils

        self.root = root
        self.node_cpus = node_cpus
        began = time.perf_counter()
        self.cluster: Any = cluster_utils.Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 0, "node_ip_address": LOOPBACK, "include_dashboard": False},
        )
        self.start_s = time.perf_counter() - began
        self.join_s: list[float] = []
        self.caches: list[Path] = []

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add(self) -> None:
        """One more worker node, named and cached as its own machine would be."""
        name = f"node-{len(self.caches) + 1}"
        cache = self.root / f"cache-{name}"
        began = time.perf_counter()
        self.cluster.add_node(
            num_cpus=self.node_cpus,
            node_ip_address=LOOPBACK,
            node_name=name,
            env_vars={NODE_NAME_ENV: name, CACHE_ENV: str(cache)},
        )
        self.cluster.wait_for_nodes()
        self.join_s.append(round(time.perf_counter() - began, 2))
        self.caches.append(cache)

    def shutdown(self) -> None:
        self.cluster.shutdown()


@contextlib.contextmanager
def loopback_cluster(root: Path, node_cpus: int) -> Iterator[LoopbackCluster]:
    """A :class:`LoopbackCluster`, shut down (its processes stopped) however the block ends.

    Its sessions, sockets and address file go to a folder of its own (``RAY_TMPDIR``, which
    the nodes' processes inherit), not to the ``/tmp/ray`` that other clusters of this machine
    share; the folder's name is short, as Ray's socket paths must be.
    """
    previous = os.environ.get("RAY_TMPDIR")
    with tempfile.TemporaryDirectory(prefix="polignac-ray-", ignore_cleanup_errors=True) as ray_tmp:
        os.environ["RAY_TMPDIR"] = ray_tmp
        try:
            cluster = LoopbackCluster(root, node_cpus)
            try:
                yield cluster
            finally:
                cluster.shutdown()
        finally:
            if previous is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = previous


async def ray_runs(cluster: LoopbackCluster, folder: Path, settings: Settings) -> dict[str, Any]:
    """The no-op round trip and the runs on 1, then 2 worker nodes."""
    executor = RayExecutor(cluster.address)
    await executor.start()
    try:
        cluster.add()
        noop = await noop_round_trips(import_ray(), executor.cpus_per_match, settings.noop_samples)
        runs = {}
        for nodes, name in ((1, "ray-1node"), (2, "ray-2nodes")):
            if nodes > len(cluster.caches):
                cluster.add()
            runs[name] = await timed_run(name, folder, nodes * settings.node_cpus, settings, executor, cluster.caches)
            runs[name]["nodes"] = nodes
        slots = 2 * settings.node_cpus
        idle = await slot_idle(import_ray(), executor.cpus_per_match, slots, [slots, slots + 1], settings.sleep_tasks)
        return {"noop": noop, "runs": runs, "idle": idle}
    finally:
        await executor.close()


def measure(settings: Settings) -> dict[str, Any]:
    began = time.perf_counter()
    out: dict[str, Any] = {
        "seats": settings.seats,
        "limit": settings.limit,
        "matches": settings.matches,
        "node_cpus": settings.node_cpus,
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
    }
    ray_parallel = (settings.node_cpus, 2 * settings.node_cpus)
    local_parallel = sorted({1, 2, *ray_parallel})
    with tempfile.TemporaryDirectory(prefix="polignac-bench-cluster-", ignore_cleanup_errors=True) as name:
        folder = Path(name)
        runs: dict[str, Any] = {}
        for parallel in local_parallel:
            runs[f"local-p{parallel}"] = asyncio.run(timed_run(f"local-p{parallel}", folder, parallel, settings))
        with loopback_cluster(folder / "ray", settings.node_cpus) as cluster:
            on_ray = asyncio.run(ray_runs(cluster, folder, settings))
            out["cluster_start_s"] = round(cluster.start_s, 2)
            out["node_join_s"] = cluster.join_s
    runs.update(on_ray["runs"])
    out["runs"] = runs
    out["noop_task_ms"] = on_ray["noop"]
    out["slot_idle_ms"] = on_ray["idle"]
    out["local_matches_per_s"] = {str(p): runs[f"local-p{p}"]["matches_per_s"] for p in local_parallel}
    out["ray_matches_per_s"] = {}
    out["overhead_per_match_ms"] = {}
    out["dispatch_median_ms"] = {}
    for name in ("ray-1node", "ray-2nodes"):
        run = runs[name]
        nodes = str(run["nodes"])
        local = runs[f"local-p{run['parallel']}"]
        out["ray_matches_per_s"][nodes] = run["matches_per_s"]
        out["overhead_per_match_ms"][nodes] = round(run["wall_per_match_ms"] - local["wall_per_match_ms"], 1)
        out["dispatch_median_ms"][nodes] = run["dispatch_median_ms"]
    out["load_average_end"] = round(os.getloadavg()[0], 2)
    out["wall_s"] = round(time.perf_counter() - began, 1)
    return out


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def summary(result: dict[str, Any]) -> str:
    rows = [
        f"{result['matches']} matches of {result['limit']} points, 3 built-in bots in {result['seats']} seats; "
        f"worker nodes of {result['node_cpus']} CPU(s)",
        "",
        "run          parallel  matches/s  wall/match ms  runner median/mean ms  node median/mean ms  dispatch median ms  nodes",
    ]
    for name, run in result["runs"].items():
        nodes = ", ".join(f"{node or 'here'} {count}" for node, count in run["by_node"].items())
        rows.append(
            f"{name:<12} {run['parallel']:>8}  {run['matches_per_s']:>9.2f}  {run['wall_per_match_ms']:>13.1f}"
            f"  {_ms(run['runner_median_ms']):>10} / {_ms(run['runner_mean_ms']):<8}"
            f"  {_ms(run.get('node_median_ms')):>8} / {_ms(run.get('node_mean_ms')):<8}"
            f"  {_ms(run.get('dispatch_median_ms')):>18}  {nodes}"
        )
    noop = result["noop_task_ms"]
    overhead = ", ".join(f"{n} node(s) {ms:+.1f} ms" for n, ms in result["overhead_per_match_ms"].items())
    rows += [
        "",
        f"Ray wall time per match less local's at the same parallelism: {overhead}",
        f"no-op Ray task round trip: median {noop['median']:.1f} ms, mean {noop['mean']:.1f} ms ({noop['samples']} tasks)",
        f"slot idle per task ({SLEEP_TASK_S * 1000:.0f} ms sleeping tasks on 2 nodes), by parallel: "
        + ", ".join(f"{width}: {ms:.1f} ms" for width, ms in result["slot_idle_ms"].items()),
        f"cluster: head started in {result['cluster_start_s']:.1f} s, worker nodes joined in "
        + ", ".join(f"{s:.1f} s" for s in result["node_join_s"]),
        f"machine: {result['cpus']} CPUs, load average {result['load_average']} at the start, {result['load_average_end']} at the end; "
        f"{result['wall_s']:.0f} s in all",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK['matches']} matches of {QUICK['limit']} points")
    parser.add_argument("--matches", type=int, help="matches per timed run (default 20 in-process, 8 in process seats)")
    parser.add_argument("--limit", type=int, default=10, help="points per match (default 10)")
    parser.add_argument("--node-cpus", type=int, default=1, help="CPUs of each Ray worker node (default 1)")
    parser.add_argument("--seats", choices=SEAT_KINDS, default="inprocess", help="seat kind (default inprocess; process: bubblewrap)")
    args = parser.parse_args(argv)
    # Before Ray is imported, here and in every process the cluster starts (they inherit the
    # environment): an address Ray looks up for itself is the loopback one, and no usage report
    # is sent anywhere.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if importlib.util.find_spec("ray") is None:
        parser.error(INSTALL_HINT)
    launcher = launcher_for(SeatKind(args.seats))
    if reason := launcher.unavailable() or launcher.refusal(args.seats == "inprocess"):
        parser.error(f"{args.seats} seats cannot run here: {reason}")
    if args.quick:
        settings = Settings(QUICK["matches"], QUICK["limit"], args.node_cpus, args.seats, QUICK["noop_samples"], QUICK["sleep_tasks"])
    else:
        matches = DEFAULT_MATCHES[args.seats] if args.matches is None else args.matches
        settings = Settings(matches, args.limit, args.node_cpus, args.seats, NOOP_SAMPLES, SLEEP_TASKS)
    if settings.matches < 1 or settings.limit < 1 or settings.node_cpus < 1:
        parser.error("--matches, --limit and --node-cpus must be at least 1")
    # SIGTERM as Ctrl-C: the cluster's processes are stopped on the way out either way.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the result alone
            result = measure(settings)
    except KeyboardInterrupt:
        print("stopped; the cluster was shut down", file=sys.stderr)
        return 130
    except BenchError as exc:
        print(f"cluster benchmark: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, sort_keys=True) if args.json else summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
