"""SIGTERM ends every long-running ``polignac`` command, each with its documented outcome.

``polignac match``: the match is aborted and its record says so; ``polignac tournament run``:
the results so far stay stored, the tournament is marked stopped and ``--resume`` finishes it.
(What made commands deaf to SIGTERM, a read of a FIFO or ``/proc`` file in a submission, is
in tests/hostile/test_folders.py.)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
DEADLINE_S = 120.0


def polignac(*args: str, cwd: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "polignac_arena.cli", *args]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV})


def terminate(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """SIGTERM, then the exit status and output; SIGKILL (and a failure) if it does not end in 60 s."""
    process.send_signal(signal.SIGTERM)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"SIGTERM did not end the command in 60 s: {err[-2000:]}")
    return process.returncode, out, err


def _cmdlines_below(root: int) -> list[str]:
    """The command lines of every living descendant of ``root``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(text[text.rindex(")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                todo.append(pid)
                try:
                    found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
                except OSError:
                    continue
    return found


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    """Poll ``condition()`` until true; fails if the process ends first or the deadline passes."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"the command ended before {what}: {process.communicate()[1][-2000:]}")
        assert time.monotonic() < deadline, f"no {what} in {DEADLINE_S} s"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigterm_aborts_a_match_and_records_it(tmp_path: Path) -> None:
    record = tmp_path / "match.jsonl"
    bots = ["--bot", "random"] * 3
    process = polignac("match", *bots, "--seat-kind", "process", "--trusted", "--limit", "10000", "--replay", str(record), cwd=tmp_path)
    # Seats start after the referee's signal handlers are in place: a running bot means SIGTERM is handled.
    wait_until(lambda: any("polignac.bots" in line for line in _cmdlines_below(process.pid)), process, "bot started")
    code, _out, err = terminate(process)
    assert code == 1, err
    assert "the match did not finish: aborted" in err and "Traceback" not in err, err
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "result" and lines[-1]["status"] == "aborted"
    assert not any("polignac.bots" in line for line in _cmdlines_below(os.getpid())), "no bot outlives the match"


def _progress(db: Path) -> tuple[int, int, str] | None:
    """The tournament's results stored, its fixtures and its status, read without ever taking the store's write lock."""
    if not db.exists():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as conn:
            row = conn.execute("SELECT id, status FROM tournaments WHERE name = 'long'").fetchone()
            if row is None:
                return None
            done = conn.execute("SELECT count(*) FROM results WHERE tournament_id = ? AND final = 1", (row[0],)).fetchone()[0]
            total = conn.execute("SELECT count(*) FROM fixtures WHERE tournament_id = ?", (row[0],)).fetchone()[0]
            return int(done), int(total), str(row[1])
    except sqlite3.Error:  # the store is being created by the other process
        return None


LONG_ROUNDS = 30
"""Matches of the stopped tournament: enough that SIGTERM after the first result leaves many unplayed."""


@pytest.mark.slow
def test_sigterm_stops_a_long_tournament_which_resume_finishes(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text(
        'name = "long"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n'
        f"rounds = {LONG_ROUNDS}\nseed = 3\n"
        '[rules]\nlimit = 10\n[seats]\nkind = "inprocess"\ntrusted = true\n'
    )
    db = tmp_path / "t.db"
    process = polignac("tournament", "run", str(path), "--db", str(db), "-q", cwd=tmp_path)
    wait_until(lambda: (_progress(db) or (0, 0, ""))[0] >= 1, process, "first stored result")
    code, _out, err = terminate(process)
    assert code == 130, err
    assert "stopped: the results so far are stored; run again with --resume to finish" in err and "Traceback" not in err, err
    stopped = _progress(db)
    assert stopped is not None and stopped[2] == "stopped" and 1 <= stopped[0] < stopped[1] == LONG_ROUNDS
    resumed = polignac("tournament", "run", str(path), "--db", str(db), "-q", "--resume", cwd=tmp_path)
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert _progress(db) == (LONG_ROUNDS, LONG_ROUNDS, "finished")
