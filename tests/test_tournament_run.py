"""Running tournaments: --parallel 1 and 2 agree, duplicate deals, the ladder's budget, reruns, and
the acceptance test: the runner killed with a real SIGKILL and resumed gives the same results and
leaderboard as an uninterrupted run."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from polignac_arena.schedule import match_seed
from polignac_arena.store import ConflictError, LeaderboardRow, Store, StoredResult, StoreError
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import EntrantError, TournamentRun, run_tournament
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def tournament_file(
    folder: Path,
    name: str = "small",
    *,
    entrants: tuple[str, ...] = ("random", "cautious", "heuristic"),
    table_size: int = 3,
    rounds: int = 4,
    seed: int = 11,
    parallel: int = 1,
    limit: int = 10,
    kind: str = "inprocess",
    extra: str = "",
) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f"name = {json.dumps(name)}\nentrants = {json.dumps(list(entrants))}\ntable_size = {table_size}\nrounds = {rounds}\n"
        f"seed = {seed}\nparallel = {parallel}\n{extra}\n\n[rules]\nlimit = {limit}\n\n"
        f"[seats]\nkind = {json.dumps(kind)}\ntrusted = true\n",
        encoding="utf-8",
    )
    return path


def run(path: Path, db: Path, **kw: Any) -> TournamentRun:
    with Store(db) as store:
        return run_sync(run_tournament(load_config(path), store, **kw))


def polignac(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)


def snapshot(db: Path, name: str) -> tuple[list[StoredResult], list[LeaderboardRow], list[Any], str]:
    """Final results, leaderboard, rating history and status of tournament ``name`` in ``db``."""
    with Store(db, create=False) as store:
        tournament = store.get_tournament(name)
        assert tournament is not None
        return (
            store.list_results(tournament.id),
            store.leaderboard(tournament.id),
            store.rating_history(tournament.id),
            tournament.status,
        )


def assert_same_results(a: list[StoredResult], b: list[StoredResult]) -> None:
    assert [r.idx for r in a] == [r.idx for r in b] == list(range(len(a)))
    for x, y in zip(a, b, strict=True):
        assert (x.seats, x.seed, x.match_id, x.status, x.places, x.totals, x.faults, x.hands, x.penalties) == (
            y.seats, y.seed, y.match_id, y.status, y.places, y.totals, y.faults, y.hands, y.penalties,
        ), x.idx  # fmt: skip


def assert_same_leaderboard(a: list[LeaderboardRow], b: list[LeaderboardRow]) -> None:
    assert [row.bot for row in a] == [row.bot for row in b]
    for x, y in zip(a, b, strict=True):
        assert x.mu == pytest.approx(y.mu, abs=1e-9) and x.sigma == pytest.approx(y.sigma, abs=1e-9), x.bot
        assert dataclasses.replace(x, mu=0.0, sigma=0.0) == dataclasses.replace(y, mu=0.0, sigma=0.0)


# -- parallelism does not change the outcome ----------------------------------------------------


def test_parallel_1_and_2_give_the_identical_leaderboard(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, rounds=12)  # at --parallel 2, results arrive out of schedule order now and then
    one = run(path, tmp_path / "one.db", parallel=1)
    two = run(path, tmp_path / "two.db", parallel=2)
    assert one.played == two.played == 12 and one.failed == two.failed == 0
    results_1, board_1, history_1, status_1 = snapshot(tmp_path / "one.db", "small")
    results_2, board_2, history_2, status_2 = snapshot(tmp_path / "two.db", "small")
    assert status_1 == status_2 == "finished"
    assert len(results_1) == 12
    assert_same_results(results_1, results_2)
    assert_same_leaderboard(board_1, board_2)
    assert [(h.idx, h.bot) for h in history_1] == [(h.idx, h.bot) for h in history_2]
    for x, y in zip(history_1, history_2, strict=True):
        assert (x.mu, x.sigma) == pytest.approx((y.mu, y.sigma), abs=1e-9)
    assert all(row.matches == 12 and row.mu is not None for row in board_1)
    for store_path in (tmp_path / "one.db", tmp_path / "two.db"):
        with Store(store_path, create=False) as store:
            assert store.check() == []


# -- duplicate deals ----------------------------------------------------------------------------


@pytest.mark.slow
def test_duplicate_groups_share_a_seed_and_rotate_the_seats(tmp_path: Path) -> None:
    fourth = str(ROOT / "sample_bots" / "python_stdio")
    entrants = ("random", "cautious", "heuristic", fourth)
    path = tournament_file(
        tmp_path, "dup", entrants=entrants, table_size=4, rounds=1, parallel=2, limit=5, kind="process", extra='format = "duplicate"'
    )
    config = load_config(path)
    assert config.format == "duplicate"
    db = tmp_path / "dup.db"
    outcome = run(path, db)
    assert outcome.failed == 0 and outcome.played == 4
    with Store(db, create=False) as store:
        tournament = store.get_tournament("dup")
        assert tournament is not None
        tid = tournament.id
        fixtures = store.fixtures(tid)
        results = store.list_results(tid)
        records = [store.get_result(r.match_id) for r in results]
        assert store.check() == []
    assert len(fixtures) == 4 and len(results) == 4
    groups: dict[Any, list[Any]] = {}
    for fixture in fixtures:
        groups.setdefault(fixture.group, []).append(fixture)
    assert sorted(groups) == [0]
    for group, members in groups.items():
        assert len(members) == 4
        assert {f.seed for f in members} == {match_seed(config.seed, group)}
        base = members[0].seats
        assert sorted(base) == sorted({f.seats[0] for f in members})  # every bot holds hand 0 once...
        for r, fixture in enumerate(members):
            assert fixture.seats == tuple(base[(i - r) % 4] for i in range(4))  # ... rotated one seat each time
        for seat in range(4):
            assert len({f.seats[seat] for f in members}) == 4  # every bot holds every hand exactly once
    for stored in records:
        assert stored is not None and stored.record is not None
        header: dict[str, Any] = stored.record[0]
        assert header["type"] == "header" and header["seed"] == fixtures[stored.idx].seed
        assert [s["name"] for s in header["seats"]] == [key.split("@")[0] for key in fixtures[stored.idx].seats]


# -- the ladder's budget ------------------------------------------------------------------------


@pytest.mark.parametrize("parallel", [1, 2])
def test_the_ladder_plays_exactly_its_budget(tmp_path: Path, parallel: int) -> None:
    path = tournament_file(tmp_path, "ladder", extra='format = "ladder"\nmatches = 5')
    assert load_config(path).matches == 5
    db = tmp_path / "ladder.db"
    outcome = run(path, db, parallel=parallel)
    assert outcome.played == 5 and outcome.failed == 0
    results, board, _history, status = snapshot(db, "ladder")
    assert status == "finished"
    assert [r.idx for r in results] == list(range(5))
    assert sum(row.matches for row in board) == 5 * 3
    again = run(path, db, parallel=parallel)
    assert again.already_finished and again.played == 0
    assert len(snapshot(db, "ladder")[0]) == 5
    with Store(db, create=False) as store:
        tournament = store.get_tournament("ladder")
        assert tournament is not None
        tid = tournament.id
        assert len(store.fixtures(tid)) == 5
        assert store.progress(tid).total == 5
        assert store.check() == []


# -- running again ------------------------------------------------------------------------------


def _results_fingerprint(db: Path) -> list[tuple[int, str, str, bool]]:
    with Store(db, create=False) as store:
        tournament = store.get_tournament("small")
        assert tournament is not None
        tid = tournament.id
        return [(r.idx, r.match_id, r.finished_at, r.final) for r in store.list_results(tid, attempts=True)]


@pytest.fixture
def finished(tmp_path: Path) -> tuple[Path, Path]:
    path = tournament_file(tmp_path)
    db = tmp_path / "arena.db"
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q")
    assert result.exit_code == 0, result.output
    assert "Leaderboard: small" in result.stdout and "heuristic" in result.stdout
    return path, db


@pytest.mark.parametrize("resume", [False, True])
def test_running_a_finished_tournament_again_replays_nothing(finished: tuple[Path, Path], resume: bool) -> None:
    path, db = finished
    before = _results_fingerprint(db)
    assert len(before) == 4
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q", *(["--resume"] if resume else []))
    assert result.exit_code == 0, result.output
    assert "already finished" in result.stdout
    for bot in ("random", "cautious", "heuristic"):
        assert bot in result.stdout
    assert _results_fingerprint(db) == before


@pytest.mark.parametrize("resume", [False, True])
def test_a_changed_file_under_the_same_name_is_a_clear_error(finished: tuple[Path, Path], resume: bool) -> None:
    path, db = finished
    before = _results_fingerprint(db)
    path.write_text(path.read_text().replace("limit = 10", "limit = 12"))
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q", *(["--resume"] if resume else []))
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("polignac: error: "), result.stderr
    assert "'small'" in lines[0] and "rules.limit" in lines[0] and "another configuration" in lines[0]
    assert _results_fingerprint(db) == before


def test_parallelism_and_description_are_not_part_of_the_tournament(finished: tuple[Path, Path]) -> None:
    path, db = finished
    before = _results_fingerprint(db)
    path.write_text(path.read_text().replace("parallel = 1", 'parallel = 2\ndescription = "now described"'))
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q", "--parallel", "3")
    assert result.exit_code == 0, result.output
    assert "already finished" in result.stdout
    assert _results_fingerprint(db) == before


def test_a_missing_entrant_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, entrants=("random", "cautious", "nosuchbot"))
    db = tmp_path / "arena.db"
    with pytest.raises(EntrantError, match="nosuchbot"):
        run(path, db)
    result = polignac("tournament", "run", str(path), "--db", str(tmp_path / "cli.db"), "-q")
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("polignac: error: ") and "'nosuchbot'" in lines[0], result.stderr
    with Store(db, create=False) as store:
        assert store.list_tournaments() == []
    assert not (tmp_path / "cli.db").exists()  # the command's failed start leaves no empty store file
    assert polignac("tournament", "run", str(path), "--db", str(db), "-q").exit_code == 2
    assert db.exists()  # a store that was there before the command stays, whatever it holds


def test_inprocess_seats_refuse_an_entrant_that_is_not_built_in(tmp_path: Path) -> None:
    folder = str(ROOT / "sample_bots" / "python_stdio")
    path = tournament_file(tmp_path, entrants=("random", "cautious", folder), rounds=1)
    db = tmp_path / "arena.db"
    try:
        run(path, db)
    except EntrantError as exc:
        assert "python_stdio" in str(exc) or "python-stdio" in str(exc)
    with Store(db, create=False) as store:
        assert [t.name for t in store.list_tournaments() if store.list_results(t.id)] == []


# -- stopped from inside (what SIGTERM and SIGINT do: the CLI cancels the run) --------------------


def _cancel_after_first_result(path: Path, db: Path) -> None:
    async def main() -> None:
        with Store(db) as store:
            task: asyncio.Future[TournamentRun] | None = None

            def hook(event: str, done: int, total: int, running: int, faults: int, nodes: Any) -> None:
                if event == "match" and done >= 1 and task is not None:
                    task.cancel()

            task = asyncio.ensure_future(run_tournament(load_config(path), store, parallel=2, progress=hook))
            with pytest.raises(asyncio.CancelledError):
                await task

    run_sync(main())


def test_a_cancelled_run_resumes_to_the_uninterrupted_results(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, rounds=6)
    _cancel_after_first_result(path, tmp_path / "stopped.db")
    with Store(tmp_path / "stopped.db", create=False) as store:
        assert store.check() == []
        progress = store.progress(1)
        assert 1 <= progress.done < progress.total == 6 and progress.attempts == 0
    with pytest.raises(ConflictError, match="--resume"):
        run(path, tmp_path / "stopped.db")
    resumed = run(path, tmp_path / "stopped.db", resume=True)
    assert resumed.played == 6 - progress.done
    run(path, tmp_path / "whole.db")
    stopped, whole = snapshot(tmp_path / "stopped.db", "small"), snapshot(tmp_path / "whole.db", "small")
    assert stopped[3] == whole[3] == "finished"
    assert_same_results(stopped[0], whole[0])
    assert_same_leaderboard(stopped[1], whole[1])


def test_a_cancelled_run_is_marked_stopped(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, rounds=6)
    _cancel_after_first_result(path, tmp_path / "stopped.db")
    assert snapshot(tmp_path / "stopped.db", "small")[3] == "stopped"


# -- the acceptance test: kill -9 the runner, then --resume ---------------------------------------

KILL_ROUNDS = 8
"""Matches in the killed tournament (3 bots, 3 at a table): at --parallel 2 a kill past half way still
leaves a match running and one not started, and each match costs its seats' sandboxes."""

KILL_LIMIT = 5
"""The killed tournament's point limit: short matches, since what is tested is the kill, not the play."""


def _stat(pid: int) -> tuple[int, int, str, str]:
    """``(ppid, start time, state, comm)`` of a process; OSError if it is gone."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[19]), fields[0], text[text.index("(") + 1 : text.rindex(")")]


def _descendants(root: int) -> set[tuple[int, int, str]]:
    """Every living descendant of ``root``: ``(pid, start time, comm)``."""
    children: dict[int, list[tuple[int, int, str]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid, start, state, comm = _stat(int(entry))
            except (OSError, ValueError, IndexError):
                continue
            if state != "Z":
                children.setdefault(ppid, []).append((int(entry), start, comm))
    found: set[tuple[int, int, str]] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child[0])
    return found


def _alive(processes: set[tuple[int, int, str]]) -> set[tuple[int, int, str]]:
    """Those of ``processes`` still running (same pid and start time, not a zombie)."""
    alive = set()
    for pid, start, comm in processes:
        try:
            _ppid, now_start, state, _comm = _stat(pid)
        except (OSError, ValueError, IndexError):
            continue
        if now_start == start and state != "Z":
            alive.add((pid, start, comm))
    return alive


def _referee_dirs(pid: int) -> set[Path]:
    """The private folders of the matches ``pid`` is refereeing (found by their unix socket)."""
    paths = {}
    try:
        for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7].endswith("referee.sock"):
                paths[fields[6]] = Path(fields[7])
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return set()
    inodes = {link[len("socket:[") : -1] for link in links if link.startswith("socket:[")}
    return {paths[inode].parent.parent for inode in inodes if inode in paths}


def _progress(db: Path, name: str) -> tuple[int, int] | None:
    """``(done, total)`` read from the store without writing to it; None while it is not there yet."""
    if not db.exists() or db.stat().st_size == 0:
        return None
    try:
        with Store(db, create=False) as store:
            tournament = store.get_tournament(name)
            if tournament is None:
                return None
            progress = store.progress(tournament.id)
            return progress.done, progress.total
    except StoreError:
        return None


def _runner(path: Path, db: Path, *more: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(path), "--db", str(db), "-q", *more]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV})


def _finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the runner did not finish in {timeout} s: {err[-2000:]}")
    return process.returncode, out, err


@pytest.fixture(scope="module")
def kill_tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kill")
    return tournament_file(folder, "killme", rounds=KILL_ROUNDS, seed=5, parallel=2, limit=KILL_LIMIT, kind="process")


@pytest.fixture(scope="module")
def uninterrupted(kill_tournament: Path) -> Path:
    """The same tournament run start to end, in a store of its own."""
    db = kill_tournament.parent / "uninterrupted.db"
    code, out, err = _finish(_runner(kill_tournament, db))
    assert code == 0, err
    assert "Leaderboard: killme" in out
    return db


def _kill_trees(processes: set[tuple[int, int, str]]) -> set[tuple[int, int, str]]:
    """SIGKILL those of ``processes`` still running and everything they started, by pid; what was killed."""
    left = _alive(processes)
    for pid, _start, _comm in list(left):
        left |= _descendants(pid)
    for pid, _start, _comm in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture
def watched() -> Iterator[set[tuple[int, int, str]]]:
    """The processes a test saw; any still running at its end are killed (by pid)."""
    seen: set[tuple[int, int, str]] = set()
    yield seen
    _kill_trees(seen)


def _seat_cgroups(name: str, fixtures: list[Any]) -> list[Path]:
    """The seat cgroups of the tournament's matches that are on the machine now."""
    found: list[Path] = []
    for fixture in fixtures:
        match_id = f"{name}-{fixture.index:05d}-{fixture.seed % 10**6:06d}"
        found += Path("/sys/fs/cgroup").glob(f"*/polignac/{match_id}-seat*")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("moment", [1, KILL_ROUNDS * 5 // 8], ids=["after-the-first-result", "past-half-way"])
def test_killed_with_sigkill_and_resumed_gives_the_uninterrupted_results(
    kill_tournament: Path, uninterrupted: Path, tmp_path: Path, moment: int, watched: set[tuple[int, int, str]]
) -> None:
    db = tmp_path / "killed.db"
    runner = _runner(kill_tournament, db)
    seen = watched
    folders: set[Path] = set()
    deadline = time.monotonic() + 120
    try:
        while True:
            assert runner.poll() is None, f"the runner ended before the kill: {runner.communicate()[1][-2000:]}"
            assert time.monotonic() < deadline, "no progress"
            seen |= _descendants(runner.pid)
            folders |= _referee_dirs(runner.pid)
            progress = _progress(db, "killme")
            if progress is not None and progress[0] >= moment:
                break
            time.sleep(0.02)
        seen |= _descendants(runner.pid)
        folders |= _referee_dirs(runner.pid)
        os.kill(runner.pid, signal.SIGKILL)  # kill -9: no handler, no clean-up, no last write
    finally:
        if runner.poll() is None:
            runner.kill()
        runner.communicate()
    assert runner.returncode == -signal.SIGKILL

    # The store is consistent and holds part of the tournament.
    with Store(db, create=False) as store:
        assert store.check() == []
        tournament = store.get_tournament("killme")
        assert tournament is not None and tournament.status == "running"
        stored = store.progress(tournament.id)
        assert 1 <= stored.done < stored.total == KILL_ROUNDS, stored
        assert stored.rated <= stored.done
        kept = {r.idx: (r.match_id, r.finished_at) for r in store.list_results(tournament.id, attempts=True)}

    # The runner's bots are in sessions of their own, but nothing of theirs outlives it: each seat's
    # monitor dies with the runner and takes the seat's PID namespace with it, even a seat that was
    # being set up at that moment (tests/test_sandbox.py has the details).
    grace = time.monotonic() + 2
    while _alive(seen) and time.monotonic() < grace:
        time.sleep(0.05)
    orphans = _kill_trees(seen)
    if os.geteuid() == 0:
        assert not orphans, f"bot processes outlived the killed runner by 2 s (killed now): {sorted(orphans)}"
    elif orphans:  # not as root there is no PID namespace around bubblewrap: its own race remains
        warnings.warn(f"bot processes outlived the killed runner by 2 s (killed now): {sorted(orphans)}", stacklevel=1)
    with Store(db, create=False) as store:
        fixtures = store.fixtures(1)
    left_cgroups = _seat_cgroups("killme", fixtures)  # kill -9 allows no clean-up: empty seat cgroups stay
    left = {folder for folder in folders if folder.exists()}  # kill -9 allows no clean-up: the match folders stay

    # Without --resume, the unfinished tournament is refused and nothing changes.
    refused = polignac("tournament", "run", str(kill_tournament), "--db", str(db), "-q")
    assert refused.exit_code == 2 and refused.stderr.startswith("polignac: error: ") and "--resume" in refused.stderr, refused.output
    assert len(refused.stderr.splitlines()) == 1
    with Store(db, create=False) as store:
        assert {r.idx: (r.match_id, r.finished_at) for r in store.list_results(1, attempts=True)} == kept

    # --resume finishes it; what was stored before the kill stays as it was, stored once.
    code, out, err = _finish(_runner(kill_tournament, db, "--resume"))
    assert code == 0, err
    assert "Leaderboard: killme" in out
    with Store(db, create=False) as store:
        assert store.check() == []
        everything = store.list_results(1, attempts=True)
        assert len(everything) == KILL_ROUNDS and all(r.final for r in everything)
        assert {r.idx: (r.match_id, r.finished_at) for r in everything if r.idx in kept} == kept
        assert store.progress(1).rated == KILL_ROUNDS
    assert not any(folder.exists() for folder in left), "the resumed runner sweeps the dead runner's match folders"
    assert not any(cgroup.exists() for cgroup in left_cgroups), "the resumed runner sweeps the dead runner's seat cgroups"
    assert _seat_cgroups("killme", fixtures) == []

    resumed = snapshot(db, "killme")
    reference = snapshot(uninterrupted, "killme")
    assert resumed[3] == reference[3] == "finished"
    assert_same_results(resumed[0], reference[0])
    assert_same_leaderboard(resumed[1], reference[1])
    assert [(h.idx, h.bot) for h in resumed[2]] == [(h.idx, h.bot) for h in reference[2]]
