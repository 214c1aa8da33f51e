"""Match folders: each names its owner process, and those of dead owners are swept, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from polignac_arena import match_folder as mf
from polignac_arena.owners import identity

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the sweep needs /proc (Linux)")


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(done.stdout)


def folder(parent: Path, name: str, owner: str | None) -> Path:
    path = parent / name
    (path / "seat0").mkdir(parents=True)
    (path / "seat0" / "scratch").write_text("a bot's file")
    if owner is not None:
        (path / mf.OWNER_FILE).write_text(owner)
    return path


def test_a_match_folder_names_its_owner_and_is_removed_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with mf.match_folder() as root:
        assert root.parent == tmp_path and root.name.startswith(mf.PREFIX)
        pid, started = (root / mf.OWNER_FILE).read_text().split()
        assert int(pid) == os.getpid() and started.isdigit()
    assert not root.exists()


def test_only_folders_of_dead_owners_are_swept(tmp_path: Path) -> None:
    me = identity(os.getpid())
    assert me is not None
    gone = dead_pid()
    orphan = folder(tmp_path, "polignac-orphan", f"{gone} 12345")
    reused = folder(tmp_path, "polignac-reused", f"{os.getpid()} 1")  # this pid, another start time: a reused pid
    alive = folder(tmp_path, "polignac-alive", f"{me[0]} {me[1]}")
    unowned = folder(tmp_path, "polignac-setting-up", None)  # no owner file (yet): left alone
    garbage = folder(tmp_path, "polignac-garbage", "not a pid")
    other = folder(tmp_path, "someone-else", f"{gone} 12345")  # not a match folder's name
    assert sorted(mf.sweep_orphans(tmp_path)) == sorted([orphan, reused])
    assert not orphan.exists() and not reused.exists()
    assert all(p.exists() for p in (alive, unowned, garbage, other))


def test_the_sweep_follows_no_link_and_spares_other_users(tmp_path: Path) -> None:
    gone = dead_pid()
    target = folder(tmp_path, "precious", f"{gone} 1")
    (tmp_path / "polignac-link").symlink_to(target)
    spared = [target, tmp_path / "polignac-link"]
    if os.getuid() == 0:  # only root can make a folder that another user owns
        theirs = folder(tmp_path, "polignac-theirs", f"{gone} 1")
        os.chown(theirs, 65534, 65534)
        spared.append(theirs)
    assert mf.sweep_orphans(tmp_path) == []
    assert all(p.exists() for p in spared) and (target / "seat0" / "scratch").exists()


def test_the_first_match_folder_of_a_process_sweeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(mf, "_swept", set())
    orphan = folder(tmp_path, "polignac-orphan", f"{dead_pid()} 1")
    with mf.match_folder():
        assert not orphan.exists()
    later = folder(tmp_path, "polignac-later", f"{dead_pid()} 1")
    with mf.match_folder():
        assert later.exists()  # once per process: a tournament does not scan the temp dir at every match
