"""The local runner builds a submission as a cluster node does: once per content hash and seat kind, in the seat's sandbox.

A compiled bot that was never built by hand plays (it is not a crash in every match); the
organiser's folder is never built in; ``tournament run`` prints a line per build; a build that
fails fails its matches at once with the build's log.  tests/cluster compares such a
tournament with the same one on a Ray cluster.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polignac_arena.store import Store
from tests.test_tournament_run import ENV, tournament_file

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"


def unbuilt_c_bot(parent: Path) -> Path:
    """sample_bots/c_stdio as a fresh clone has it: its source, no binary (skips without gcc)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: the C sample bot cannot be built here (.ci/run installs it)")
    folder = parent / "c_stdio"
    shutil.copytree(SAMPLES / "c_stdio", folder, ignore=shutil.ignore_patterns("bot", "*.o"))
    assert not (folder / "bot").exists()
    return folder


def sandbox_or_trusted() -> str:
    """The [seats] trust of a file: the real sandbox where it runs, trusted unsandboxed seats elsewhere."""
    from polignac_arena.seats import launcher_for

    return "false" if type(launcher_for("process")).__name__ == "SandboxLauncher" else "true"


def run_cli(path: Path, db: Path, *more: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "polignac_arena.cli", "tournament", "run", str(path), "--db", str(db), "-q", *more]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **ENV}, timeout=300, check=False)


def c_tournament(folder: Path, c_bot: Path, name: str = "builds", rounds: int = 4) -> Path:
    path = tournament_file(folder, name, entrants=(str(c_bot), "random", "heuristic"), rounds=rounds, parallel=2, limit=10, kind="process")
    path.write_text(path.read_text(encoding="utf-8").replace("trusted = true", f"trusted = {sandbox_or_trusted()}"), encoding="utf-8")
    return path


def test_an_unbuilt_compiled_bot_is_built_once_and_plays_every_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("POLIGNAC_NODE_CACHE", str(cache))
    c_bot = unbuilt_c_bot(tmp_path)
    done = run_cli(c_tournament(tmp_path, c_bot), tmp_path / "t.db")
    assert done.returncode == 0, done.stdout + done.stderr
    builds = [line for line in done.stdout.splitlines() if line.startswith("build of ")]
    assert len(builds) == 1, done.stdout
    assert builds[0].startswith("build of c-stdio@1.1 on node ") and " exited 0 in " in builds[0]
    assert builds[0].endswith("installed 1 file(s): bot")
    with Store(tmp_path / "t.db", create=False) as store:
        results = store.list_results(1)
    assert len(results) == 4 and all(r.status == "finished" for r in results)
    seat = [r.seats.index("c-stdio@1.1") for r in results]
    assert all(r.faults[s] == {} for r, s in zip(results, seat, strict=True)), [r.faults for r in results]
    assert not (c_bot / "bot").exists(), "the organiser's folder is not built in"
    [built] = list((cache / "built").iterdir())
    assert built.name.endswith("-process.ok")
    assert (cache / "versions" / built.name.removesuffix("-process.ok") / "bot").is_file()
    # Run again (another tournament, same folder): the cached build is used, no build line.
    again = run_cli(c_tournament(tmp_path, c_bot, name="again", rounds=1), tmp_path / "t.db")
    assert again.returncode == 0 and "build of " not in again.stdout, again.stdout + again.stderr


def test_a_build_that_fails_fails_its_matches_at_once_with_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLIGNAC_NODE_CACHE", str(tmp_path / "cache"))
    c_bot = unbuilt_c_bot(tmp_path)
    (c_bot / "bot.c").write_text("this is not C\n", encoding="utf-8")
    done = run_cli(c_tournament(tmp_path, c_bot), tmp_path / "t.db")
    assert done.returncode == 1, done.stdout + done.stderr
    failures = [line for line in done.stdout.splitlines() if line.startswith("match ")]
    assert len(failures) == 4, done.stdout
    first = failures[0]
    assert "could not run: build of c-stdio@1.1 on node " in first and first.endswith(" exited 1")
    assert "error" in done.stdout.split(first, 1)[1].split("\nmatch ", 1)[0], "the build's own output follows"
    assert all(line.endswith("above") and "the same error as match" in line for line in failures[1:]), failures
    assert "4 match(es) did not finish: run again with --resume to play them." in done.stdout
    with Store(tmp_path / "t.db", create=False) as store:
        tournament = store.get_tournament("builds")
        assert tournament is not None and tournament.status == "stopped"
