"""Seat cgroups left by an arena killed with SIGKILL are swept by the next arena, and nothing else is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from polignac_arena.owners import identity
from polignac_arena.seats import cgroups
from polignac_arena.seats.base import SeatLimits
from tests.aio import run_sync


@pytest.fixture
def pids_parent() -> Iterator[Path]:
    """The shared ``polignac`` folder beneath this process's pids cgroup (root and cgroup v1 only)."""
    if os.geteuid() != 0:
        pytest.skip("seat cgroups need the arena to run as root")
    own = cgroups._own_cgroup_dirs().get("pids")
    if own is None:
        pytest.skip("no cgroup v1 pids hierarchy on this machine")
    parent = own / "polignac"
    parent.mkdir(exist_ok=True)
    made = set(os.listdir(parent))
    yield parent
    try:
        left = set(os.listdir(parent)) - made
    except FileNotFoundError:  # another arena on this machine removed the shared folder when it emptied
        left = set()
    for name in left:
        for _ in range(50):
            try:
                (parent / name).rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


def dead_owner() -> str:
    """``PID.START`` of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    owner = identity(child.pid)
    child.kill()
    child.wait()
    assert owner is not None
    return f"{owner[0]}.{owner[1]}"


def test_a_seat_cgroup_names_the_arena_that_made_it(pids_parent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "_stale_checked", {pids_parent})
    group = cgroups.SeatCgroups.create("named-seat0-1", SeatLimits())
    try:
        me = identity(os.getpid())
        assert me is not None and group.dirs
        assert {folder.name for folder in group.dirs.values()} == {f"named-seat0-1@{me[0]}.{me[1]}"}
    finally:
        run_sync(group.remove())


def test_only_empty_cgroups_of_dead_arenas_are_swept(pids_parent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    me = identity(os.getpid())
    assert me is not None
    gone = dead_owner()
    folders = {
        "orphan": pids_parent / f"sweep-orphan-seat0-1@{gone}",
        "alive": pids_parent / f"sweep-alive-seat0-1@{me[0]}.{me[1]}",
        "reused pid": pids_parent / f"sweep-reused-seat0-1@{me[0]}.1",  # this pid, another start time
        "busy orphan": pids_parent / f"sweep-busy-seat0-1@{gone}",
        "unowned, new": pids_parent / "sweep-new-seat0-1",  # older naming: only when an hour old
        "garbage owner": pids_parent / "sweep-x@not.a-pid",
    }
    for folder in folders.values():
        folder.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (folders["busy orphan"] / "cgroup.procs").write_text(str(sleeper.pid))
        monkeypatch.setattr(cgroups, "_stale_checked", set())
        removed = cgroups._remove_stale(pids_parent)
        mine = [path for path in removed if Path(path).name.startswith("sweep-")]  # older leftovers may go too
        assert sorted(mine) == sorted([str(folders["orphan"]), str(folders["reused pid"])])
        assert cgroups._remove_stale(pids_parent) == []  # once per process
        left = {what for what, folder in folders.items() if folder.exists()}
        assert left == {"alive", "busy orphan", "unowned, new", "garbage owner"}
    finally:
        sleeper.kill()
        sleeper.wait()
