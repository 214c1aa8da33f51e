"""Validating an uploaded version: a good bot passes in the sandbox; a bad one fails with its reason and the log."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from polignac import preset
from polignac_arena.league.config import LeagueConfig
from polignac_arena.league.validation import Validation, validate
from polignac_arena.referee import TimeControl
from polignac_arena.seats import SeatKind, SeatLimits, launcher_for
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[2]
CLASSIC = preset("classic")
CLOCK = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
LEAGUE = LeagueConfig(
    "validation", CLASSIC, ROOT, ROOT / "unused.db", ROOT / "unused", time=CLOCK, seat_kind=SeatKind.PROCESS, limits=SeatLimits()
)
TOML = 'name = "{name}"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'


def run(folder: Path, *, bot_name: str | None = None) -> tuple[Validation, list[str]]:
    told: list[str] = []
    validation = run_sync(validate(folder, LEAGUE, log=told.append, bot_name=bot_name))
    assert validation.log_text == "\n".join(told)
    return validation, told


def bot(tmp_path: Path, code: str, extra: str = "", name: str = "mybot") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(TOML.format(name=name) + extra)
    (folder / "bot.py").write_text(code)
    return folder


@pytest.fixture(scope="module")
def sandboxed() -> None:
    if launcher_for(SeatKind.PROCESS).unavailable() is not None or type(launcher_for(SeatKind.PROCESS)).__name__ != "SandboxLauncher":
        pytest.skip("bubblewrap is not available: process seats would not be sandboxed")


@pytest.mark.usefixtures("sandboxed")
def test_a_good_python_submission_passes_in_the_sandbox(tmp_path: Path) -> None:
    folder = tmp_path / "random"
    shutil.copytree(ROOT / "sample_bots" / "random", folder)
    validation, told = run(folder, bot_name="random")
    assert validation.ok, validation.log_text
    assert validation.reason == "accepted" and validation.submission is not None and validation.submission.label == "random@1.1"
    assert told[0] == "reading bot.toml"
    assert any(line.startswith("smoke match: classic to 5 points against 3 random bots (process seats)") for line in told)
    assert any(line.startswith("ok  smoke match: ") for line in told)
    assert told[-1] == "accepted: the bot is ready for the ladder"


@pytest.mark.usefixtures("sandboxed")
def test_a_failing_build_fails_with_its_output(tmp_path: Path) -> None:
    build = 'build = ["sh", "-c", "echo \\"bot.c:1: error: expected \\u001b[31mthis\\u001b[0m\\" >&2; exit 3"]\n'
    validation, told = run(bot(tmp_path, "print('never run')\n", build))
    assert not validation.ok
    # The public reason says how the build failed, not its command (the private bot.toml's): the author's log has that.
    assert validation.reason == "build: the build step exited 3", validation.log_text
    assert any(line.startswith("FAILED  build: sh -c") and line.endswith("exited 3") for line in told), told
    assert "bot.c:1: error: expected this" in told  # its output, with no terminal escape
    assert not any("smoke match" in line for line in told)


@pytest.mark.usefixtures("sandboxed")
def test_a_bot_that_crashes_at_hello_fails(tmp_path: Path) -> None:
    validation, told = run(bot(tmp_path, "import sys\nsys.exit('cannot find my weights')\n"))
    assert not validation.ok
    assert validation.reason.startswith("smoke match: 0 decisions") and "faults: crashed 1" in validation.reason, validation.log_text
    assert "cannot find my weights" in told


def test_a_bot_for_another_game_fails_before_building(tmp_path: Path) -> None:
    folder = bot(tmp_path, "", 'games = ["knaves"]\nbuild = ["sh", "-c", "exit 1"]\n')
    validation, told = run(folder)
    assert not validation.ok
    assert validation.reason.startswith("game: bot 'mybot@1.0' does not play 'classic'"), validation.reason
    assert told == ["reading bot.toml", told[1], f"FAILED  {validation.reason}"] and told[1].startswith("ok  bot.toml: mybot@1.0")


def test_a_bad_bot_toml_fails_with_every_problem(tmp_path: Path) -> None:
    folder = bot(tmp_path, "", 'colour = "blue"\n')
    validation, told = run(folder)
    assert not validation.ok and validation.submission is None
    assert validation.reason == "bot.toml: it is not valid (the author's validation log says why)", validation.reason
    assert any("'colour' (line 5): unknown key" in line for line in told), told


def test_a_version_of_another_bot_fails(tmp_path: Path) -> None:
    validation, told = run(bot(tmp_path, "", name="other"), bot_name="mybot")
    assert not validation.ok
    assert validation.reason == "bot.toml: this is bot 'other', uploaded as a version of 'mybot'; upload it under its own name"
    assert told == [f"FAILED  {validation.reason}"]
