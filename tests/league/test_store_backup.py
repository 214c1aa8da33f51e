"""``polignac store backup`` and ``restore``: a consistent copy of a live league's store, brought back whole."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from polignac_arena.league.config import load_league_config
from polignac_arena.store import NewerSchemaError, Store, StoreError
from polignac_arena.store.backup import backup, restore
from polignac_arena.store.schema import schema_version
from tests.league.league_process import LeagueProcess, add_author, bot_folder, seed_active, write_league

AUTHOR = "ada"


def polignac(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "polignac_arena.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def finished_matches(path: Path) -> int:
    """Matches played to the end or forfeited (what the league's status calls played), in every tournament."""
    with Store(path, create=False) as store:
        return sum(p.done - p.void for p in (store.progress(t.id) for t in store.list_tournaments()))


def more_played_than(server: LeagueProcess, played: int) -> Callable[[], bool | None]:
    return lambda: server.status()["matches_played"] > played or None


@pytest.mark.slow
def test_a_backup_taken_while_the_ladder_plays_restores_to_a_store_that_checks_clean(tmp_path: Path) -> None:
    path = write_league(tmp_path / "league", "parallel = 2")
    config = load_league_config(path)
    add_author(path, AUTHOR)
    seed_active(path, AUTHOR, [bot_folder(tmp_path / "bots", name) for name in ("b1", "b2", "b3")])
    copies = []
    with LeagueProcess.start(path) as server:
        for n in range(3):  # each while matches are live and their results being written
            server.wait_for("a live match", lambda: server.status()["live"] or None)
            target = tmp_path / f"backup-{n}.db"
            done = polignac("store", "backup", target, "--db", config.store)
            assert done.returncode == 0, done.stderr
            assert f"backed up to {target}" in done.stdout
            copies.append(target)
            server.wait_for("another finished match", more_played_than(server, server.status()["matches_played"]))
        assert server.terminate() == 0, server.stderr()

    counts = []
    for copy in copies:
        assert copy.stat().st_mode & 0o777 == 0o600
        assert not Path(f"{copy}-wal").exists()  # one self-contained file
        restored = tmp_path / "restored" / copy.name
        restored.parent.mkdir(exist_ok=True)
        done = polignac("store", "restore", copy, "--db", restored)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{restored}: clean" in done.stdout
        counts.append(finished_matches(restored))
    assert counts == sorted(counts) and counts[-1] < finished_matches(config.store)  # moments of a store that grew

    # The league starts again on a restored store, and it checks clean after more matches.
    done = polignac("store", "restore", copies[0], "--db", config.store, "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    with LeagueProcess.start(path) as server:
        assert server.status()["matches_played"] == counts[0]
        server.wait_for("a match after the restore", more_played_than(server, counts[0]))
        assert server.terminate() == 0, server.stderr()
    assert polignac("store", "check", "--db", config.store).returncode == 0


def test_restore_refuses_a_store_another_process_has_open(tmp_path: Path) -> None:
    live, copy = tmp_path / "live.db", tmp_path / "copy.db"
    Store(live).close()
    backup(live, copy)
    hold = (
        f"import sqlite3, sys; c = sqlite3.connect({str(live)!r}); c.execute('SELECT 1 FROM sqlite_master');"
        " print('open', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(StoreError, match="is open in another process: stop the league"):
            restore(copy, live, overwrite=True)
        with pytest.raises(StoreError, match="is open in another process"):
            backup(copy, live, overwrite=True)  # nor is it overwritten by a backup
    finally:
        holder.communicate("", timeout=30)
    assert restore(copy, live, overwrite=True).path == live  # once it is closed


def test_an_existing_file_is_replaced_only_with_force(tmp_path: Path) -> None:
    store, copy = tmp_path / "s.db", tmp_path / "copy.db"
    Store(store).close()
    copy.write_text("precious")
    with pytest.raises(StoreError, match="exists: choose another name, or --force"):
        backup(store, copy)
    assert copy.read_text() == "precious"
    done = polignac("store", "restore", store, "--db", copy)
    assert done.returncode != 0 and "exists: --force replaces it" in done.stderr
    assert copy.read_text() == "precious"
    assert backup(store, copy, overwrite=True).schema_version == schema_version()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "there is no backup at"),
        (b"not a database at all" * 100, "not a Polignac Arena store"),
        ("foreign", "an SQLite database but not a Polignac Arena store"),
        ("newer", "written by a newer Polignac Arena"),
        ("truncated", "not a Polignac Arena store|malformed|integrity"),
    ],
)
def test_restore_refuses_what_is_no_whole_arena_store_and_leaves_the_store_as_it_was(
    tmp_path: Path, content: bytes | str | None, message: str
) -> None:
    store, bad = tmp_path / "s.db", tmp_path / "bad.db"
    Store(store).close()
    before = store.read_bytes()
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content == "foreign":
        sqlite3.connect(bad).execute("CREATE TABLE t (x)").connection.close()
    elif content == "newer":
        backup(store, bad)
        with sqlite3.connect(bad) as conn:
            conn.execute(f"PRAGMA user_version = {schema_version() + 1}")
    elif content == "truncated":
        backup(store, bad)
        data = bad.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    with pytest.raises((StoreError, NewerSchemaError), match=message):
        restore(bad, store, overwrite=True)
    assert store.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_a_backup_onto_itself_or_into_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    Store(store).close()
    with pytest.raises(StoreError, match="onto itself"):
        backup(store, store, overwrite=True)
    done = polignac("store", "backup", tmp_path / "no" / "such" / "x.db", "--db", store)
    assert done.returncode != 0 and "cannot write" in done.stderr and "Traceback" not in done.stderr
    done = polignac("store", "backup", tmp_path / "x.db", "--db", tmp_path)
    assert done.returncode != 0 and "is a directory" in done.stderr
    assert os.listdir(tmp_path) == ["s.db"]
