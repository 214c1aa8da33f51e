"""``polignac tournament run|list|status``, ``leaderboard``, ``crosstable`` and ``match show`` on a
store filled by the README's main command (the quickstart acceptance test), and their one-line
errors for unknown names and bad store files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from polignac_arena.store import Store

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "tournaments" / "quickstart.toml"
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def polignac(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)


def one_line_error(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("polignac: error: "), result.stderr
    return lines[0]


class Quickstart:
    """The outcome of ``polignac tournament run tournaments/quickstart.toml --db DB -q``."""

    def __init__(self, db: Path, seconds: float, done: subprocess.CompletedProcess[str]) -> None:
        self.db, self.seconds, self.done = db, seconds, done

    @property
    def matches(self) -> int:
        """How many matches it played: it plays on until its order is known ([schedule] until_separated)."""
        with Store(self.db, create=False) as store:
            tournament = store.get_tournament("quickstart")
            assert tournament is not None
            return store.progress(tournament.id).total


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Quickstart:
    db = tmp_path_factory.mktemp("quickstart") / "arena.db"
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(QUICKSTART), "--db", str(db), "-q"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env={**os.environ, **ENV}, cwd=ROOT)
    seconds = time.monotonic() - started
    print(f"\nquickstart: {seconds:.1f} s on {os.cpu_count()} cores")
    return Quickstart(db, seconds, done)


# -- the acceptance test ----------------------------------------------------------------------


@pytest.mark.slow
def test_quickstart_ranks_the_good_bots_above_random_within_a_minute(quickstart: Quickstart) -> None:
    assert quickstart.done.returncode == 0, quickstart.done.stderr
    assert "Leaderboard: quickstart" in quickstart.done.stdout
    assert quickstart.seconds < 60, f"the quickstart took {quickstart.seconds:.1f} s"
    with Store(quickstart.db, create=False) as store:
        tournament = store.get_tournament("quickstart")
        assert tournament is not None and tournament.status == "finished"
        progress = store.progress(tournament.id)
        assert progress.done == progress.total == progress.rated > 0 and progress.faults == {}
        rank = {row.name: row.rank for row in store.leaderboard(tournament.id)}
        assert store.check() == []
    assert set(rank) == {"random", "cautious", "heuristic"}
    assert rank["heuristic"] < rank["random"] and rank["cautious"] < rank["random"], rank


# -- list and status --------------------------------------------------------------------------


def test_tournament_list(quickstart: Quickstart) -> None:
    result = polignac("tournament", "list", "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if " quickstart " in line]
    n = quickstart.matches
    assert len(rows) == 1 and "finished" in rows[0] and f"{n}/{n}" in rows[0], result.stdout


def test_tournament_status(quickstart: Quickstart) -> None:
    result = polignac("tournament", "status", "quickstart", "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    n = quickstart.matches
    assert result.stdout.startswith(f"quickstart: finished, {n} of {n} matches, faults: none")
    for bot in ("heuristic", "cautious", "random"):
        assert bot in result.stdout


def test_tournament_status_of_an_unknown_tournament(quickstart: Quickstart) -> None:
    line = one_line_error(polignac("tournament", "status", "NOPE", "--db", str(quickstart.db)))
    assert "'NOPE'" in line


# -- leaderboard and crosstable --------------------------------------------------------------


@pytest.mark.parametrize("which", [(), ("--tournament", "quickstart")], ids=["all-time", "one tournament"])
def test_leaderboard_json(quickstart: Quickstart, which: tuple[str, ...]) -> None:
    result = polignac("leaderboard", "--json", *which, "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [row["rank"] for row in rows] == [1, 2, 3]
    assert {row["name"] for row in rows} == {"random", "cautious", "heuristic"}
    for row in rows:
        assert row["conservative"] == pytest.approx(row["mu"] - 3 * row["sigma"])
        assert row["matches"] == quickstart.matches and row["bot"] == f"{row['name']}@{row['version']}"
        assert set(row) >= {"wins", "average_place", "average_penalty_per_hand", "faults"}
    conservative = [row["conservative"] for row in rows]
    assert conservative == sorted(conservative, reverse=True)
    assert rows[-1]["name"] == "random"


def test_leaderboard_table(quickstart: Quickstart) -> None:
    result = polignac("leaderboard", "--tournament", "quickstart", "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    assert "Leaderboard: quickstart" in result.stdout
    order = [name for line in result.stdout.splitlines() for name in ("heuristic", "cautious", "random") if f" {name} " in line]
    assert sorted(order) == ["cautious", "heuristic", "random"] and order[-1] == "random"


def test_leaderboard_of_an_unknown_tournament(quickstart: Quickstart) -> None:
    line = one_line_error(polignac("leaderboard", "--tournament", "NOPE", "--db", str(quickstart.db)))
    assert "'NOPE'" in line and "quickstart" in line  # names the known ones


def test_leaderboard_of_an_empty_store(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store(db).close()
    result = polignac("leaderboard", "--json", "--db", str(db))
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    result = polignac("leaderboard", "--db", str(db))
    assert result.exit_code == 0 and "no rated bots yet" in result.stdout
    result = polignac("crosstable", "--db", str(db))
    assert result.exit_code == 0 and "no rated bots yet" in result.stdout


@pytest.mark.parametrize("which", [(), ("--tournament", "quickstart")], ids=["all-time", "one tournament"])
def test_crosstable(quickstart: Quickstart, which: tuple[str, ...]) -> None:
    result = polignac("crosstable", *which, "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    assert "Crosstable" in result.stdout
    for bot in ("heuristic@", "cautious@", "random@"):
        assert bot in result.stdout
    assert f"({quickstart.matches})" in result.stdout and "%" in result.stdout  # every pair meets at every table, probabilities


def test_crosstable_of_an_unknown_tournament(quickstart: Quickstart) -> None:
    assert "'NOPE'" in one_line_error(polignac("crosstable", "--tournament", "NOPE", "--db", str(quickstart.db)))


# -- match show ---------------------------------------------------------------------------------


def test_match_show_prints_a_stored_match_trick_by_trick(quickstart: Quickstart) -> None:
    with Store(quickstart.db, create=False) as store:
        tournament = store.get_tournament("quickstart")
        assert tournament is not None
        first = store.list_results(tournament.id)[0]
    result = polignac("match", "show", first.match_id, "--db", str(quickstart.db))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("quickstart, match 0: finished")
    assert first.match_id in result.stdout
    assert "Hand 1" in result.stdout and "won by" in result.stdout and "trick" in result.stdout
    assert "does not replay" not in result.stdout


def test_match_show_of_an_unknown_id(quickstart: Quickstart) -> None:
    assert "'no-such-match'" in one_line_error(polignac("match", "show", "no-such-match", "--db", str(quickstart.db)))


# -- bad --db paths ------------------------------------------------------------------------------

READERS = [
    pytest.param(("tournament", "list"), id="tournament list"),
    pytest.param(("tournament", "status", "quickstart"), id="tournament status"),
    pytest.param(("leaderboard",), id="leaderboard"),
    pytest.param(("leaderboard", "--json"), id="leaderboard --json"),
    pytest.param(("crosstable",), id="crosstable"),
    pytest.param(("match", "show", "x"), id="match show"),
]


@pytest.mark.parametrize("command", READERS)
def test_a_missing_store_is_a_one_line_error_and_is_not_created(tmp_path: Path, command: tuple[str, ...]) -> None:
    db = tmp_path / "sub" / "none.db"
    line = one_line_error(polignac(*command, "--db", str(db)))
    assert str(db) in line and "no store" in line
    assert not db.exists() and not db.parent.exists()


@pytest.mark.parametrize("command", [*READERS, pytest.param(("tournament", "run", str(QUICKSTART)), id="tournament run")])
def test_a_file_that_is_not_a_database_is_a_one_line_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("these are not the tables you are looking for\n" * 50)
    line = one_line_error(polignac(*command, "--db", str(db), *(["-q"] if command[:2] == ("tournament", "run") else [])))
    assert "notes.txt" in line and "not a Polignac Arena store" in line
    assert db.read_text().startswith("these are not")


@pytest.mark.parametrize("command", [*READERS, pytest.param(("tournament", "run", str(QUICKSTART)), id="tournament run")])
def test_another_sqlite_database_is_a_one_line_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    line = one_line_error(polignac(*command, "--db", str(db), *(["-q"] if command[:2] == ("tournament", "run") else [])))
    assert "other.sqlite" in line and "not a Polignac Arena store" in line
    with sqlite3.connect(db) as conn:
        assert [row[0] for row in conn.execute("SELECT name FROM sqlite_master")] == ["photos"]


def test_a_folder_as_the_store_is_a_one_line_error(tmp_path: Path) -> None:
    assert "directory" in one_line_error(polignac("leaderboard", "--db", str(tmp_path)))


def test_the_default_store_is_named_in_help() -> None:
    result = polignac("tournament", "run", "--help")
    assert result.exit_code == 0 and "polignac.db" in result.stdout
