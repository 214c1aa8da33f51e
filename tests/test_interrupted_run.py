"""A test run that is interrupted leaves nothing running: its league server and the bots it started die with it.

Each test starts a small pytest run of its own (tests/conftest.py as its plugin, so with the
reaper of tests/reaper.py), whose one test starts ``polignac league serve`` with three seeded
bots and holds it while a long match is played.  Once bots are running, the inner run is
interrupted (SIGTERM, as a CI timeout does, or SIGINT, as Ctrl-C does), and every process it
had started, sandboxed bots included, must be gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEADLINE_S = 180.0

INNER = """
import os
import threading
from pathlib import Path

from tests.league.league_process import LeagueProcess, add_author, bot_folder, seed_active, write_league


def test_a_league_plays_until_interrupted(tmp_path: Path) -> None:
    config = write_league(tmp_path / "league", rules="limit = 5000")  # a match that outlasts the test
    add_author(config, "ada")
    seed_active(config, "ada", [bot_folder(tmp_path / "bots", name) for name in ("ant", "bee", "cat")])
    league = LeagueProcess.start(config)  # no context manager: an interrupted run must need none
    league.wait_for("a match being played", lambda: league.status()["live"] or None, deadline_s=120)
    Path(os.environ["INNER_READY"]).write_text(str(league.process.pid))
    threading.Event().wait()
"""


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every living process: pid -> (parent pid, start time in ticks, command line)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            found[int(entry)] = (int(fields[1]), int(fields[19]), cmdline)
    return found


def _descendants(root: int) -> dict[int, tuple[int, str]]:
    """The processes below ``root``: pid -> (start time, command line)."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found[pid] = (table[pid][1], table[pid][2])
        todo += children.get(pid, [])
    return found


def _carrying(text: str) -> list[int]:
    """The processes whose environment holds ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if text.encode() in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_interrupted_test_run_leaves_no_server_and_no_bot_behind(tmp_path: Path, signum: int) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(textwrap.dedent(INNER), encoding="utf-8")
    ready = tmp_path / "ready"
    probe = f"POLIGNAC_INTERRUPT_PROBE={uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INNER_READY": str(ready), probe.split("=")[0]: probe.split("=")[1]}
    plugins = ["-p", "tests.conftest", "-p", "no:cacheprovider"]  # the repository's conftest: its reaper
    command = [sys.executable, "-m", "pytest", "-q", *plugins, "--rootdir", str(inner), "test_inner.py"]
    run = subprocess.Popen(command, cwd=inner, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while not ready.exists():
            assert run.poll() is None, f"the inner run ended before its league played: {run.communicate()[0][-3000:]}"
            assert time.monotonic() < deadline, "the inner run's league played no match"
            time.sleep(0.1)
        league = int(ready.read_text())
        while True:  # the match is live as soon as it starts: its seats may still be starting their bots
            started = _descendants(run.pid)
            assert league in started and "league serve" in started[league][1]
            if len([cmd for _, cmd in started.values() if "bot.py" in cmd]) >= 3:
                break
            assert run.poll() is None, f"the inner run ended before its bots started: {run.communicate()[0][-3000:]}"
            assert time.monotonic() < deadline, f"no match's bots are running: {sorted(cmd for _, cmd in started.values())}"
            time.sleep(0.1)
        run.send_signal(signum)
        run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    deadline = time.monotonic() + 30
    while True:
        now = _processes()
        left = sorted(cmd for pid, (start, cmd) in started.items() if pid in now and now[pid][1] == start)
        left += [now[pid][2] for pid in _carrying(probe) if pid in now]
        if not left:
            break
        assert time.monotonic() < deadline, f"still running after the run was interrupted: {left}"
        time.sleep(0.1)
