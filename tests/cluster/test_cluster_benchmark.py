"""Smoke test of benchmarks/cluster.py: a quick run starts its own cluster on loopback, prints one
JSON object with the promised keys and positive figures, and stops every process of its cluster.

About 20 to 30 s, most of it the cluster's start (a head and two worker nodes).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'; .ci/run installs it)")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "cluster.py"
RUNS = {"local-p1", "local-p2", "ray-1node", "ray-2nodes"}
KEYS = {
    "runs",
    "local_matches_per_s",
    "ray_matches_per_s",
    "overhead_per_match_ms",
    "dispatch_median_ms",
    "noop_task_ms",
    "slot_idle_ms",
    "cluster_start_s",
    "node_join_s",
    "matches",
    "limit",
    "seats",
    "node_cpus",
    "cpus",
    "load_average",
    "load_average_end",
    "wall_s",
}


def _session(sid: int) -> set[int]:
    """The processes of session ``sid``: the benchmark runs in a session of its own, and so do its cluster's processes."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[3]) == sid:
                found.add(int(entry.name))
    return found


def _wait_for_exit(pids: set[int], timeout_s: float) -> set[int]:
    """Those of ``pids`` still running after ``timeout_s``."""
    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue
    try:
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        left = dict(fds)
        deadline = time.monotonic() + timeout_s
        while left and (ready := poller.poll(max(0.0, deadline - time.monotonic()) * 1000)):
            for fd, _ in ready:
                poller.unregister(fd)
                left.pop(fd)
        return set(left.values())
    finally:
        for fd in fds:
            os.close(fd)


def test_cluster_benchmark_quick_run() -> None:
    benchmark = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--quick", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = benchmark.communicate(timeout=240)
    finally:
        if benchmark.poll() is None:
            os.killpg(benchmark.pid, signal.SIGKILL)
            benchmark.communicate()
    assert benchmark.returncode == 0, err[-3000:]
    left = _wait_for_exit(_session(benchmark.pid), timeout_s=30)
    for pid in left:  # not to leave a cluster running when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert left == set(), "the benchmark's cluster was not shut down"

    result = json.loads(out)
    assert result.keys() >= KEYS, f"missing keys: {sorted(KEYS - result.keys())}"
    assert result["seats"] == "inprocess" and result["matches"] == 4
    assert set(result["runs"]) == RUNS
    for name, run in result["runs"].items():
        assert run["matches"] == 4, name
        assert sum(run["by_node"].values()) == 4, name
        for key in ("wall_s", "matches_per_s", "wall_per_match_ms", "runner_median_ms", "runner_mean_ms"):
            assert run[key] > 0, (name, key)
    for name in ("ray-1node", "ray-2nodes"):
        run = result["runs"][name]
        for key in ("node_median_ms", "node_mean_ms", "dispatch_median_ms", "dispatch_mean_ms"):
            assert run[key] > 0, (name, key)
        assert run["runner_mean_ms"] > run["node_mean_ms"], "the runner's view of a match holds the node's"
    assert result["runs"]["ray-1node"]["by_node"] == {"node-1": 4}
    assert set(result["runs"]["ray-2nodes"]["by_node"]) <= {"node-1", "node-2"}
    assert set(result["local_matches_per_s"]) == {"1", "2"}
    for table in ("local_matches_per_s", "ray_matches_per_s", "dispatch_median_ms"):
        assert all(value > 0 for value in result[table].values()), table
    assert set(result["ray_matches_per_s"]) == set(result["overhead_per_match_ms"]) == {"1", "2"}
    assert all(isinstance(value, float) for value in result["overhead_per_match_ms"].values())  # either sign: a difference
    assert result["noop_task_ms"]["median"] > 0 and result["noop_task_ms"]["mean"] > 0
    assert set(result["slot_idle_ms"]) == {"2", "3"}
    assert all(value >= 0 for value in result["slot_idle_ms"].values())  # a task cannot end before its sleep
    assert result["cluster_start_s"] > 0 and len(result["node_join_s"]) == 2
