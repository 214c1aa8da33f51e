"""What the runner concludes from watching a cluster, and what it does with it, without a cluster."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from polignac_arena.executors import ClusterLost, LocalExecutor, MatchJob, NodeWait, PlayedMatch
from polignac_arena.executors.cluster_watch import ClusterWatch
from polignac_arena.executors.ray_cluster import _log_wait
from polignac_arena.settings import ExecutorKind
from polignac_arena.store import Store
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import run_tournament
from tests.aio import run_sync
from tests.test_tournament_run import tournament_file


def test_a_head_is_lost_only_after_it_has_been_silent_for_the_whole_delay() -> None:
    watch = ClusterWatch(lost_after_s=3.0)
    assert watch.head(True, 0.0) is None
    assert watch.head(False, 1.0) is None
    assert watch.head(False, 3.5) is None  # silent for 2.5 s
    assert watch.head(True, 3.9) is None  # it answered: the count starts again
    assert watch.head(False, 5.0) is None
    assert watch.head(False, 7.9) is None
    assert watch.head(False, 8.0) == pytest.approx(3.0)


def test_a_wait_for_a_node_begins_with_waiting_matches_counts_and_ends_once() -> None:
    watch = ClusterWatch()
    assert watch.nodes(True, 2, 0.0) is None  # nodes to play on: nothing to say
    assert watch.nodes(False, 0, 1.0) is None  # none, but nothing waits either
    assert watch.nodes(None, 2, 1.5) is None  # not known: nothing changes
    first = watch.nodes(False, 2, 2.0)
    assert first == NodeWait(2, 0.0) and first.begins and watch.waiting
    assert str(first) == "no Ray worker node is alive: 2 matches waiting for a node (for 0 s)"
    later = watch.nodes(False, 1, 14.2)
    assert later is not None and later.waiting == 1 and later.seconds == pytest.approx(12.2) and not later.begins
    assert str(later) == "no Ray worker node is alive: 1 match waiting for a node (for 12 s)"
    assert watch.nodes(None, 1, 15.0) is None
    assert watch.nodes(False, 0, 15.5) is None  # the wait goes on with nothing in hand, silently
    over = watch.nodes(True, 1, 16.0)
    assert over == NodeWait(1, 14.0, over=True) and not watch.waiting
    assert str(over) == "a Ray worker node is back after 14 s without one: the waiting matches go on"
    assert watch.nodes(True, 1, 17.0) is None


def test_the_default_hook_logs_a_wait_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="polignac_arena.executors.ray_cluster"):
        for wait in (NodeWait(3, 0.0), NodeWait(3, 1.0), NodeWait(2, 2.0), NodeWait(2, 3.0, over=True)):
            _log_wait(wait)
    assert [record.getMessage() for record in caplog.records] == [
        "no Ray worker node is alive: 3 matches waiting for a node (for 0 s)",
        "a Ray worker node is back after 3 s without one: the waiting matches go on",
    ]


class _LosesItsHead:
    """Plays the first ``good`` matches here, then fails every match as a lost cluster does."""

    kind = ExecutorKind.RAY

    def __init__(self, good: int) -> None:
        self.good = good
        self.local = LocalExecutor()

    async def start(self) -> None:
        """Nothing to start."""

    async def play(self, job: MatchJob, record_path: Path | None = None) -> PlayedMatch:
        if self.good <= 0:
            await asyncio.sleep(0)
            raise ClusterLost("10.0.0.5:6379", "its port has not answered for 3 s")
        self.good -= 1
        return await self.local.play(job, record_path)

    async def close(self) -> None:
        """Nothing to close."""


def test_a_lost_cluster_ends_the_run_stopped_without_counting_failed_matches(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "lost", rounds=6, parallel=1)
    with Store(tmp_path / "t.db") as store:
        with pytest.raises(ClusterLost, match=r"^the Ray cluster's head at 10\.0\.0\.5:6379 is gone: its port"):
            run_sync(run_tournament(load_config(path), store, executor=_LosesItsHead(good=2)))
        tournament = store.get_tournament("lost")
        assert tournament is not None and tournament.status == "stopped"
        results = store.list_results(tournament.id, attempts=True)
        assert len(results) == 2 and all(r.status == "finished" for r in results), "no match recorded as failed"
        assert store.check() == []


def test_native_output_goes_to_the_log_and_python_stderr_to_the_terminal(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from polignac_arena.executors.native_stderr import native_stderr_to

        with native_stderr_to(Path(sys.argv[1])):
            os.write(2, b"[C++] GCS reconnect attempt 3\\n")
            print("polignac: error: the arena's line", file=sys.stderr)
        os.write(2, b"after the block\\n")
        with native_stderr_to(Path(sys.argv[2])):
            pass
        """
    )
    log, empty = tmp_path / "ray.log", tmp_path / "empty.log"
    done = subprocess.run([sys.executable, "-c", script, str(log), str(empty)], capture_output=True, text=True, check=False, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "polignac: error: the arena's line\nafter the block\n"
    assert log.read_text() == "[C++] GCS reconnect attempt 3\n"
    assert not empty.exists(), "a log nothing was written to is removed"
