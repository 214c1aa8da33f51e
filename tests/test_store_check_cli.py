"""``polignac store check``: clean stores pass, a tampered aggregate is named, bad paths are one line;
and a tournament runner killed with SIGKILL while writing results leaves a store that checks clean,
whose ``--resume`` leaves the aggregates equal to a recomputation."""

from __future__ import annotations

import contextlib
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.store import Store
from tests.test_store_aggregates import assert_aggregates_recompute
from tests.test_tournament_run import snapshot, tournament_file

DATA = Path(__file__).parent / "data"
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def polignac(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def v4(tmp_path: Path) -> Path:
    """The version-3 sample store, migrated."""
    path = tmp_path / "arena.db"
    shutil.copyfile(DATA / "store_v3.db", path)
    with Store(path):
        pass
    return path


def test_a_clean_store_checks_clean(v4: Path) -> None:
    assert polignac("store", "check", "--db", str(v4)) == (0, f"{v4}: clean\n", "")


def test_a_tampered_aggregate_is_named_by_table_bot_and_field(v4: Path) -> None:
    with contextlib.closing(sqlite3.connect(v4)) as conn, conn:
        conn.execute("UPDATE bot_stats SET wins = wins + 1 WHERE tournament_id = 1 AND bot = 'b1@1'")
        conn.execute("UPDATE bot_stats SET faults = '{\"timeout\":99}' WHERE tournament_id = 2 AND bot = 'b2@1'")
    code, out, err = polignac("store", "check", "--db", str(v4))
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert "bot_stats: tournament 'alpha', bot 'b1@1': wins is 8, recomputed 7" in lines
    assert any(line.startswith("bot_stats: tournament 'beta', bot 'b2@1': faults is '{\"timeout\":99}', recomputed '{") for line in lines)
    assert len(lines) == 2, lines


def test_a_missing_and_an_extra_row_are_reported(v4: Path) -> None:
    with contextlib.closing(sqlite3.connect(v4)) as conn, conn:
        conn.execute("DELETE FROM pair_stats WHERE a = 'b0@1' AND b = 'b1@1' AND tournament_id = 1")
        conn.execute("INSERT INTO bot_stats (tournament_id, bot) VALUES (2, 'ghost@1')")
    code, out, _ = polignac("store", "check", "--db", str(v4))
    assert code == 1
    assert "pair_stats: a 'b0@1', b 'b1@1', tournament 'alpha': missing (recomputed meetings " in out
    assert "bot_stats: tournament 'beta', bot 'ghost@1': not in the results (stored matches 0, " in out


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("missing", "there is no store at '{db}'"),
        ("folder", "cannot open the store '{db}': it is a directory"),
        ("text", "'{db}' is not a Polignac Arena store: not an SQLite database (or an encrypted or damaged one)"),
    ],
    ids=["missing", "folder", "text"],
)
def test_a_bad_db_path_is_one_clear_line(tmp_path: Path, what: str, message: str) -> None:
    db = tmp_path / "arena.db"
    if what == "folder":
        db.mkdir()
    elif what == "text":
        db.write_text("not a store\n")
    code, out, err = polignac("store", "check", "--db", str(db))
    assert (code, out) == (2, "")
    assert err == f"polignac: error: {message.format(db=db)}\n"
    assert what != "missing" or not db.exists()  # checking never creates a store


# -- killed while writing, then resumed ------------------------------------------------------------

# The runner itself, in a process of its own, announcing each result once it is committed.
# With a kill point, it kills itself with SIGKILL inside the transaction of that result, after
# its result and aggregate rows are written and while its ratings are being computed.
WRITER = """
import asyncio, os, signal, sys
from polignac_arena.store import Store
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import run_tournament

kill_at = int(sys.argv[3])

class Announcing(Store):
    stored = 0

    def record_result(self, *args, **kwargs):
        if self.stored + 1 == kill_at:
            rate = kwargs["rate"]
            def rate_then_die(current, seats, places):
                os.kill(os.getpid(), signal.SIGKILL)
                return rate(current, seats, places)
            kwargs["rate"] = rate_then_die
        recorded = super().record_result(*args, **kwargs)
        self.stored += 1
        print("stored", self.stored, flush=True)
        return recorded

with Announcing(sys.argv[2]) as store:
    asyncio.run(run_tournament(load_config(sys.argv[1]), store))
print("done", flush=True)
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tournament_file(tmp_path_factory.mktemp("kill"), "agg", rounds=3, seed=3, limit=6)


@pytest.fixture(scope="module")
def uninterrupted(small: Path) -> Path:
    db = small.parent / "uninterrupted.db"
    assert polignac("tournament", "run", str(small), "--db", str(db), "-q")[0] == 0
    return db


@pytest.mark.parametrize("kill_at", [0, 2], ids=["by-the-parent", "inside-a-write"])
def test_a_runner_killed_while_writing_checks_clean_and_resumes_to_equal_aggregates(
    small: Path, uninterrupted: Path, tmp_path: Path, kill_at: int
) -> None:
    db = tmp_path / "killed.db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(small), str(db), str(kill_at)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None
        lines = [writer.stdout.readline() for _ in range(1 if kill_at else 2)]
        if not kill_at:
            assert lines == ["stored 1\n", "stored 2\n"], lines
            writer.send_signal(signal.SIGKILL)  # while the runner plays or stores the next result
        rest = writer.stdout.read()
        writer.wait(timeout=120)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert writer.returncode == -signal.SIGKILL and "done" not in rest, rest
    with Store(db, create=False) as store:
        tournament = store.get_tournament("agg")
        assert tournament is not None
        done = store.progress(tournament.id).done
        assert done == (1 if kill_at else len(store.list_results(tournament.id))) and 1 <= done < len(store.fixtures(tournament.id))
        assert_aggregates_recompute(store)
    assert polignac("store", "check", "--db", str(db))[0] == 0
    code, _out, err = polignac("tournament", "run", str(small), "--db", str(db), "-q", "--resume")
    assert code == 0, err
    with Store(db, create=False) as store:
        assert_aggregates_recompute(store)
        tournament = store.get_tournament("agg")
        assert tournament is not None
        board = store.leaderboard(tournament.id)
    assert board == snapshot(uninterrupted, "agg")[1]
