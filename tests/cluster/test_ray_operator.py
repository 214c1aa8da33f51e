"""A Ray cluster as an operator meets it: every worker node gone for a while, the head lost.

Each test starts a small cluster of its own on loopback (a head that only schedules, one
worker node), since it kills parts of it; the runner is the `polignac` command in a
subprocess, as an organiser would run it.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.store import Store
from tests.cluster.loopback import FAST_HEALTH_CHECKS
from tests.cluster.test_ray_cluster import _has_result
from tests.test_tournament_run import ENV, tournament_file

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'; .ci/run installs it)")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow


def _start_cluster(gcs_port: int | None = None) -> Any:
    """A head of no CPUs (on ``gcs_port`` if given) and one worker node of one CPU, all on 127.0.0.1."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    head_args: dict[str, Any] = {
        "num_cpus": 0,
        "node_ip_address": "127.0.0.1",
        "include_dashboard": False,
        "_system_config": FAST_HEALTH_CHECKS,
    }
    if gcs_port is not None:
        head_args["gcs_server_port"] = gcs_port
    made = cluster_utils.Cluster(initialize_head=True, head_node_args=head_args)
    try:
        _add_worker(made)
    except BaseException:
        made.shutdown()
        raise
    return made


def _add_worker(made: Any) -> Any:
    node = made.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    made.wait_for_nodes()
    return node


@pytest.fixture
def clusters() -> Iterator[list[Any]]:
    """The clusters a test starts, each shut down when the test ends, however it ends."""
    started: list[Any] = []
    try:
        yield started
    finally:
        for made in started:
            made.shutdown()


def _runner(path: Path, db: Path, address: str, out: Path, err: Path, *more: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(path), "--db", str(db), "-q", *more]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        return subprocess.Popen(
            [*command, "--executor", "ray", "--ray-address", address], stdout=stdout, stderr=stderr, env={**os.environ, **ENV}
        )


def _wait_for(what: str, ready: Callable[[], bool], runner: subprocess.Popen[bytes], err: Path, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while not ready():
        assert runner.poll() is None, f"the runner ended before {what}: {err.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"no {what} within {deadline_s} s"
        time.sleep(0.05)


def _stored_once(db: Path, name: str, matches: int) -> str:
    """The tournament's status, after checking each of its ``matches`` results is stored exactly once."""
    with Store(db, create=False) as store:
        tournament = store.get_tournament(name)
        assert tournament is not None and store.check() == []
        assert len(store.list_results(tournament.id)) == len(store.list_results(tournament.id, attempts=True)) == matches
        return str(tournament.status)


def test_a_run_with_every_worker_node_gone_says_so_counts_and_goes_on_when_a_node_is_back(clusters: list[Any], tmp_path: Path) -> None:
    made = _start_cluster()
    clusters.append(made)
    (worker,) = made.worker_nodes
    path = tournament_file(tmp_path, "orphaned", rounds=12, parallel=2, limit=30)
    db, out, err = tmp_path / "ray.db", tmp_path / "out.txt", tmp_path / "err.txt"
    runner = _runner(path, db, made.address, out, err)
    try:
        _wait_for("a stored result", lambda: _has_result(db), runner, err)
        made.remove_node(worker, allow_graceful=False)  # the only worker node: the matches in hand have nowhere to go
        _wait_for("the line saying no node is alive", lambda: "no Ray worker node is alive" in out.read_text(), runner, err)
        _add_worker(made)
        runner.wait(timeout=180)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    printed = out.read_text()
    assert runner.returncode == 0, err.read_text() + printed
    waiting = [line for line in printed.splitlines() if line.startswith("no Ray worker node is alive: ")]
    assert len(waiting) == 1, printed  # one line with -q, however long the wait
    assert " matches waiting for a node (for " in waiting[0] or " match waiting for a node (for " in waiting[0], waiting
    back = [line for line in printed.splitlines() if line.startswith("a Ray worker node is back after ")]
    assert len(back) == 1 and printed.index(waiting[0]) < printed.index(back[0]), printed
    assert err.read_text() == "", "Ray's notes stay off the runner's terminal"
    assert "(raylet)" not in printed and "Raylet is terminated" not in printed, printed
    assert "(raylet) " in (tmp_path / "ray.db-ray.log").read_text(), "Ray's notes on the dead node are in the log beside the store"
    assert _stored_once(db, "orphaned", 12) == "finished"


def _free_port() -> int:
    with socket.socket() as probe:  # free a moment ago; the head binds it next
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_lost_head_ends_the_run_in_seconds_with_one_line_naming_the_resume_command(clusters: list[Any], tmp_path: Path) -> None:
    port = _free_port()
    made = _start_cluster(port)
    clusters.append(made)
    address = f"127.0.0.1:{port}"
    assert made.address == address
    path = tournament_file(tmp_path, "beheaded", rounds=24, parallel=2, limit=30)
    db, out, err = tmp_path / "ray.db", tmp_path / "out.txt", tmp_path / "err.txt"
    runner = _runner(path, db, address, out, err)
    try:
        _wait_for("a stored result", lambda: _has_result(db), runner, err)
        made.remove_node(made.head_node, allow_graceful=False)
        lost_at = time.monotonic()
        runner.wait(timeout=90)
        took = time.monotonic() - lost_at
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    said = err.read_text()
    print(f"the runner ended {took:.1f} s after its head was lost")  # shown with -s: the figure docs/cluster.md quotes
    assert took < 30, f"the runner took {took:.1f} s to end after its head was lost: {said}"
    assert runner.returncode == 1, said
    lines = said.splitlines()
    assert len(lines) == 1, said  # the arena's one line, nothing of Ray's
    assert lines[0].startswith(f"polignac: error: the Ray cluster's head at {address} is gone: "), said
    again = f"polignac tournament run {path} --resume --executor ray --ray-address {address} --db {db}"
    assert lines[0].endswith(f"; once it is back, finish with: {again}"), said
    assert "Traceback" not in out.read_text()
    with Store(db, create=False) as store:
        tournament = store.get_tournament("beheaded")
        assert tournament is not None and tournament.status == "stopped" and store.check() == []
        assert 1 <= store.progress(tournament.id).done < 24

    made.shutdown()  # what is left of it: its worker node
    clusters.append(_start_cluster(port))  # the head back on its port: the command said is the one to run
    words = shlex.split(again)
    assert words[:1] == ["polignac"]
    resumed = subprocess.run(
        [sys.executable, "-m", "polignac_arena.cli", *words[1:], "-q"],
        capture_output=True, text=True, env={**os.environ, **ENV}, timeout=180, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert resumed.stderr == ""
    assert _stored_once(db, "beheaded", 24) == "finished"
