"""Tournaments on a real Ray cluster on this machine: a head and two worker nodes, each node a raylet of its own.

Ray's own cluster test utility starts the nodes on loopback; each worker node has a cache
folder and a name of its own, as separate machines would.  The runner is the `polignac`
command in a subprocess, as an organiser would run it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.archive import pack_folder
from polignac_arena.executors.node import SHIPPING_CAPS
from polignac_arena.store import Store, StoredResult
from tests.cluster.loopback import LoopbackCluster, loopback_cluster
from tests.test_tournament_run import ENV, assert_same_leaderboard, assert_same_results, tournament_file

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'; .ci/run installs it)")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    with loopback_cluster(tmp_path_factory.mktemp("ray"), ("node-a", "node-b")) as made:
        yield made


def _run(path: Path, db: Path, *more: str, timeout: float = 180, quiet: bool = True) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "polignac_arena.cli",
        "tournament",
        "run",
        str(path),
        "--db",
        str(db),
        *(["-q"] if quiet else []),
        *more,
    ]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **ENV}, timeout=timeout, check=False)


def _results(db: Path, name: str) -> tuple[list[StoredResult], list[Any], list[Any]]:
    with Store(db, create=False) as store:
        tournament = store.get_tournament(name)
        assert tournament is not None and tournament.status == "finished"
        results = store.list_results(tournament.id)
        return results, store.leaderboard(tournament.id), store.rating_history(tournament.id)


# What differs between any two runs of a match, two local runs included: when it started, the
# referee's unguessable request ids, and how long each bot took.
_MEASURED = re.compile(r'"started_at":"[^"]*",?|"request_id":[0-9]+,?|,"ms":[0-9.e+-]+')


def _records(db: Path) -> dict[int, str]:
    """Each final result's stored record, byte for byte but for :data:`_MEASURED`."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT r.idx, c.data FROM results r JOIN records c ON c.result_id = r.id WHERE r.final = 1").fetchall()
    return {idx: _MEASURED.sub("", zlib.decompress(data).decode("utf-8")) for idx, data in rows}


def _same_tournament(local_db: Path, ray_db: Path, name: str) -> list[StoredResult]:
    local, ray_run = _results(local_db, name), _results(ray_db, name)
    assert_same_results(ray_run[0], local[0])
    assert_same_leaderboard(ray_run[1], local[1])
    assert ray_run[2] == local[2]  # the rating history, fixture by fixture
    ray_records, local_records = _records(ray_db), _records(local_db)
    assert len(ray_records) == len(local_records) == len(local[0])
    for idx, text in ray_records.items():
        assert text == local_records[idx], f"fixture {idx}: the records differ"
    return ray_run[0]


def _signal_after_first_result(path: Path, db: Path, options: tuple[str, ...], signum: int) -> tuple[int, str]:
    """Run the tournament with ``options``, send ``signum`` once its first result is stored; its exit code and stderr."""
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(path), "--db", str(db), "-q", *options]
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV})
    try:
        deadline = time.monotonic() + 120
        while not _has_result(db):
            assert runner.poll() is None, runner.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "no result"
            time.sleep(0.02)
        runner.send_signal(signum)
        _, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    return runner.returncode, err


def test_a_tournament_on_two_worker_nodes_equals_the_local_run_and_names_its_nodes(cluster: LoopbackCluster, tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "spread", rounds=8, parallel=2, limit=15)
    local = _run(path, tmp_path / "local.db")
    assert local.returncode == 0, local.stderr
    # The runner is killed after its first result, and --resume finishes on the cluster.
    on_ray = ("--executor", "ray", "--ray-address", cluster.address)
    db = tmp_path / "ray.db"
    _signal_after_first_result(path, db, on_ray, signal.SIGKILL)
    resumed = _run(path, db, "--resume", *on_ray, quiet=False)
    assert resumed.returncode == 0, resumed.stderr
    assert "Leaderboard: spread" in resumed.stdout
    assert "node-a" in resumed.stdout or "node-b" in resumed.stdout, resumed.stdout  # the progress display counts per node

    results = _same_tournament(tmp_path / "local.db", db, "spread")
    with Store(db, create=False) as store:
        assert len(store.list_results(1, attempts=True)) == len(results) == 8, "each result stored once across the kill"
    assert {r.node for r in results} <= {"node-a", "node-b"}
    assert {r.node for r in results} == {"node-a", "node-b"}, "two free nodes and two matches at a time: both played"

    from fastapi.testclient import TestClient

    from polignac_arena.web import create_app

    with TestClient(create_app(db)) as client:
        listed = client.get("/api/matches", params={"tournament": "spread", "per_page": 50}).json()["matches"]
        assert {m["match_id"]: m["node"] for m in listed} == {r.match_id: r.node for r in results}
        assert "node-a" in client.get("/matches", params={"tournament": "spread"}).text

    shown = subprocess.run(
        [sys.executable, "-m", "polignac_arena.cli", "match", "show", results[0].match_id, "--db", str(db)],
        capture_output=True, text=True, env={**os.environ, **ENV}, check=True,
    )  # fmt: skip
    assert f"spread, match 0: finished, played on {results[0].node}" in shown.stdout

    status = subprocess.run(
        [sys.executable, "-m", "polignac_arena.cli", "tournament", "status", "spread", "--db", str(tmp_path / "ray.db")],
        capture_output=True, text=True, env={**os.environ, **ENV}, check=True,
    )  # fmt: skip
    assert "Matches by node" in status.stdout
    for name in ("node-a", "node-b"):
        line = next(line for line in status.stdout.splitlines() if name in line)
        count = sum(1 for r in results if r.node == name)
        assert f" {count} " in line, line


def test_an_unbuilt_compiled_bot_gives_the_same_tournament_locally_and_on_the_cluster(cluster: LoopbackCluster, tmp_path: Path) -> None:
    from tests.test_local_builds import c_tournament, unbuilt_c_bot

    c_bot = unbuilt_c_bot(tmp_path)
    path = c_tournament(tmp_path, c_bot, name="compiled", rounds=6)
    local = _run(path, tmp_path / "local.db", quiet=True)
    assert local.returncode == 0, local.stderr + local.stdout
    on_ray = _run(path, tmp_path / "ray.db", "--executor", "ray", "--ray-address", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr + on_ray.stdout
    for run in (local, on_ray):  # each machine that played the bot built it once, and said so
        builds = [line for line in run.stdout.splitlines() if line.startswith("build of c-stdio@1.1 on node ")]
        assert 1 <= len(builds) <= 2 and all(" exited 0 in " in line for line in builds), run.stdout
    results = _same_tournament(tmp_path / "local.db", tmp_path / "ray.db", "compiled")
    assert len(results) == 6 and all(r.status == "finished" for r in results)
    assert all(r.faults[r.seats.index("c-stdio@1.1")] == {} for r in results), "the compiled bot played, it did not crash"
    assert not (c_bot / "bot").exists(), "built on each machine, never in the organiser's folder"


def _bot_with_a_build(folder: Path) -> Path:
    """A Python bot whose build step adds a line to builds.txt: the line count is the number of builds."""
    sample = Path(__file__).resolve().parents[2] / "sample_bots" / "cautious"
    bot = folder / "builder"
    shutil.copytree(sample, bot, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (bot / "bot.toml").read_text(encoding="utf-8")
    toml = toml.replace('name = "cautious"', 'name = "builder"')
    toml += "\nbuild = [\"python\", \"-c\", \"open('builds.txt', 'a').write('built\\\\n')\"]\n"
    (bot / "bot.toml").write_text(toml, encoding="utf-8")
    return bot


def _untrusted_on_ray(cluster: LoopbackCluster, folder: Path, entrants: tuple[str, ...], kind: str, rounds: int) -> list[StoredResult]:
    """A tournament of untrusted bots in ``kind`` seats (tables of 3, to 5 points) played on the cluster; its results."""
    path = tournament_file(folder, "untrusted", entrants=entrants, rounds=rounds, parallel=2, limit=5, kind=kind)
    path.write_text(path.read_text(encoding="utf-8").replace("trusted = true", "trusted = false"), encoding="utf-8")
    on_ray = _run(path, folder / "ray.db", "--executor", "ray", "--ray-address", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr + on_ray.stdout
    with Store(folder / "ray.db", create=False) as store:
        return store.list_results(1)


def test_a_submission_travels_by_hash_and_each_node_builds_it_once(cluster: LoopbackCluster, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap; .ci/run installs it)")
    bot = _bot_with_a_build(tmp_path)
    results = _untrusted_on_ray(cluster, tmp_path, (str(bot), "random", "heuristic"), "process", rounds=6)
    assert len(results) == 6 and all(r.status == "finished" for r in results)
    assert not (bot / "builds.txt").exists(), "the organiser's folder is sent, not built in place"
    played_on = {r.node for r in results}
    sha = hashlib.sha256(pack_folder(bot, SHIPPING_CAPS)).hexdigest()
    for name in played_on:
        assert name is not None, "a result of the cluster names its node"
        cache = cluster.cache(name)
        version = cache / "versions" / sha  # unpacked once, under the archive's SHA-256 (other tests' bots beside it)
        assert (cache / "archives" / sha[:2] / f"{sha}.tar.gz").is_file()
        assert (version / "builds.txt").read_text() == "built\n", "built once, however many matches the node played"
        assert [p.name for p in (cache / "built").iterdir() if p.name.startswith(sha)] == [f"{sha}-process.ok"]
        assert bot.name not in str(version)  # nothing of the organiser's path


@pytest.mark.docker
def test_docker_seats_run_on_the_nodes_from_their_cache(cluster: LoopbackCluster, tmp_path: Path) -> None:
    from tests.docker_images import daemon_problem

    if (problem := daemon_problem()) is not None:
        pytest.skip(f"docker seats cannot be tested here: {problem}")
    sample = Path(__file__).resolve().parents[2] / "sample_bots" / "heuristic"
    results = _untrusted_on_ray(cluster, tmp_path, (str(sample), "random", "cautious"), "docker", rounds=2)
    assert len(results) == 2 and all(r.status == "finished" and r.faults == ({}, {}, {}) for r in results), results
    for name in {r.node for r in results}:
        assert name in ("node-a", "node-b") and list((cluster.cache(name) / "versions").iterdir())


def _slow_on(node: str, folder: Path) -> Path:
    """The cautious bot, thinking 40 ms a decision on ``node`` only: that node's matches last long enough to be cut off.

    The thinking changes no decision, so the tournament's results are the same wherever it runs.
    """
    bot = folder / "slow-on-c"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "slow-on-c"\nversion = "1.0"\nauthor = "tests"\nlanguage = "python"\ncommand = ["python", "bot.py"]\ntransport = "grpc"\n',
        encoding="utf-8",
    )
    (bot / "bot.py").write_text(
        "import os, time\n"
        "from polignac.bot import run\n"
        "from polignac.bots.cautious import CautiousBot\n\n\n"
        "class SlowOnC(CautiousBot):\n"
        '    name = "slow-on-c"\n'
        '    version = "1.0"\n\n'
        "    def play(self, view):\n"
        f"        if os.environ.get('POLIGNAC_NODE_NAME') == {node!r}:\n"
        "            time.sleep(0.04)\n"
        "        return super().play(view)\n\n\n"
        'if __name__ == "__main__":\n'
        "    run(SlowOnC())\n",
        encoding="utf-8",
    )
    return bot


def test_a_worker_node_killed_mid_run_costs_nothing_and_each_result_is_stored_once(cluster: LoopbackCluster, tmp_path: Path) -> None:
    slow = _slow_on("node-c", tmp_path)
    path = tournament_file(tmp_path, "survive", entrants=("random", str(slow), "heuristic"), rounds=10, parallel=3, limit=30)
    local = _run(path, tmp_path / "local.db")
    assert local.returncode == 0, local.stderr
    doomed = cluster.add("node-c")
    db = tmp_path / "ray.db"
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(path), "--db", str(db), "-q"]
    runner = subprocess.Popen(
        [*command, "--executor", "ray", "--ray-address", cluster.address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV},
    )  # fmt: skip
    journal = cluster.cache("node-c") / "matches.log"
    try:
        deadline = time.monotonic() + 120
        while not _cut_off(journal, within_s=1.0):  # a match of node-c's that started a moment ago
            assert runner.poll() is None, runner.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "node-c played nothing"
            time.sleep(0.02)
        cluster.cluster.remove_node(doomed, allow_graceful=False)  # its raylet and workers killed, mid-match
        out, err = runner.communicate(timeout=180)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, err + out
    assert "could not run" not in out
    results = _same_tournament(tmp_path / "local.db", db, "survive")
    with Store(db, create=False) as store:
        assert store.check() == []
        attempts = store.list_results(1, attempts=True)
    assert len(attempts) == len(results) == 10, "no match stored twice, none lost"
    # The match node-c had in hand when it died was played again on a living node.  Its journal
    # may still show that match ended: a worker can finish a match after its raylet is gone, but
    # that result never reaches the runner.
    started_on_c = _started(journal)
    replayed = {r.match_id for r in results if r.match_id in started_on_c and r.node != "node-c"}
    assert replayed, f"no match node-c started was played again elsewhere: {sorted(started_on_c)}"
    assert {r.node for r in results if r.match_id in replayed} <= {"node-a", "node-b"}
    assert {r.node for r in results} <= {"node-a", "node-b", "node-c"}


def _has_result(db: Path) -> bool:
    if not db.exists():
        return False
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT 1 FROM results WHERE final = 1 LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return False


def _started(journal: Path) -> set[str]:
    """Every match a node's journal shows started."""
    lines = journal.read_text(encoding="utf-8").splitlines() if journal.exists() else []
    return {parts[2] for parts in (line.split() for line in lines) if len(parts) == 3 and parts[1] == "start"}


def _cut_off(journal: Path, within_s: float | None) -> set[str]:
    """The matches a node's journal shows started and not ended (only those started in the last ``within_s``)."""
    if not journal.exists():
        return set()
    started: dict[str, float] = {}
    for line in journal.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue  # a line being written
        stamp, event, match_id = parts
        if event == "start":
            started[match_id] = float(stamp)
        else:
            started.pop(match_id, None)
    now = time.time()
    return {match_id for match_id, stamp in started.items() if within_s is None or now - stamp < within_s}


def test_sigterm_stops_a_cluster_run_between_results_and_resume_finishes_it(cluster: LoopbackCluster, tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "stopped", rounds=6, parallel=2, limit=30)
    db = tmp_path / "ray.db"
    on_ray = ("--executor", "ray", "--ray-address", cluster.address)
    code, err = _signal_after_first_result(path, db, on_ray, signal.SIGTERM)  # the matches in flight are cancelled on their nodes
    assert code == 130, err
    assert "stopped: the results so far are stored; run again with --resume to finish" in err and "Traceback" not in err, err
    with Store(db, create=False) as store:
        tournament = store.get_tournament("stopped")
        assert store.check() == [] and tournament is not None and tournament.status == "stopped"
        assert 1 <= store.progress(1).done < 6
    resumed = _run(path, db, "--resume", *on_ray)
    assert resumed.returncode == 0, resumed.stderr
    with Store(db, create=False) as store:
        assert len(store.list_results(1)) == len(store.list_results(1, attempts=True)) == 6


def test_a_cluster_that_does_not_answer_is_a_clear_error_and_leaves_no_store_file(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tournament_file(tmp_path, "nowhere")
    done = _run(path, tmp_path / "x.db", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("polignac: error: no Ray cluster answers at 127.0.0.1:") and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "x.db").exists()  # a failed start leaves no empty store behind


def test_a_league_plays_its_uploaded_versions_on_the_cluster(cluster: LoopbackCluster, tmp_path: Path) -> None:
    from tests.league.league_process import LeagueProcess, add_author, bot_folder, seed_active, write_league

    config = write_league(tmp_path / "league", executor=f'kind = "ray"\naddress = "{cluster.address}"')
    add_author(config, "ada")
    seed_active(config, "ada", [bot_folder(tmp_path / "bots", name) for name in ("ant", "bee", "cat")])
    db = config.parent / "league.db"
    with LeagueProcess.start(config) as league:

        def played() -> list[StoredResult] | None:
            with Store(db, create=False) as store:
                results = [r for r in store.list_results(1) if r.status == "finished"]
            return results if len(results) >= 3 else None

        results = league.wait_for("three matches played on the cluster", played, deadline_s=120)
        assert league.terminate() == 0, league.stderr()
    assert {r.node for r in results} <= {"node-a", "node-b"}, [r.node for r in results]
    assert all(sorted(label.split("@")[0] for label in r.seats) == ["ant", "bee", "cat"] for r in results)
