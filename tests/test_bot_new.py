"""``polignac bot new``: a starter bot in each language that validates, builds and plays a match."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polignac import preset
from polignac_arena.cli import app
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.submission import Submission, load_submission
from polignac_arena.templates import TEMPLATE_LANGUAGES, ScaffoldError, scaffold
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "server" / "polignac_arena" / "templates"
TOOLS = {"python": (), "javascript": ("node", "npm"), "c": ("gcc",)}
runner = CliRunner()


def polignac(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def play(submission: Submission) -> MatchResult:
    bots = [submission, resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")]

    async def capped() -> MatchResult:
        async with asyncio.timeout(60):
            clock = TimeControl(move_ms=2000, bank_ms=5000, startup_ms=10_000)
            result, _ = await run_local_match(bots, preset("classic"), 2, clock, seat_kind="process", trusted=True)
            return result

    return run_sync(capped())


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_new_bot_validates_builds_and_plays_a_match(lang: str, tmp_path: Path) -> None:
    missing = [t for t in TOOLS[lang] if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: a {lang} starter bot cannot be built here")
    folder = tmp_path / f"my-{lang}-bot"
    result = polignac("bot", "new", f"my-{lang}-bot", "--lang", lang, "--dir", str(folder))
    assert result.exit_code == 0, result.output
    assert f"Made {lang} bot 'my-{lang}-bot'" in result.output and "polignac match --bot" in result.output
    submission = load_submission(folder)
    assert submission.name == f"my-{lang}-bot" and submission.language == lang
    assert (folder / "README.md").is_file() and (folder / ".gitignore").is_file()
    assert not list(folder.rglob("*{{name}}*")) and "{{name}}" not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    if submission.build:
        assert "Build it:" in result.output
        env = {**os.environ, "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
        if lang == "javascript":  # the README's first step: builds run offline, node_modules/ is part of the submission
            npm = ["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"]
            done = subprocess.run(npm, cwd=folder, capture_output=True, text=True, timeout=300, env=env, check=False)
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
        done = subprocess.run(submission.build, cwd=folder, capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, f"{' '.join(submission.build)} failed:\n{done.stdout}\n{done.stderr}"
    match = play(submission)
    assert match.status == "finished" and match.places is not None
    assert match.faults[0] == {}, match.faults
    assert match.names[0] == f"my-{lang}-bot"  # the bot says its own name
    assert replay_lines(match.record).divergence is None


def test_new_defaults_to_python_in_a_folder_named_after_the_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = polignac("bot", "new", "starter")
    assert result.exit_code == 0, result.output
    assert load_submission(tmp_path / "starter").language == "python"


def test_new_refuses_to_overwrite_and_checks_its_arguments(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "bot.py").write_text("mine\n")
    result = polignac("bot", "new", "taken", "--dir", str(taken))
    assert result.exit_code == 2 and "not overwriting" in result.output
    assert (taken / "bot.py").read_text() == "mine\n" and not (taken / "bot.toml").exists()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert polignac("bot", "new", "x", "--dir", str(a_file)).exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert polignac("bot", "new", "fine", "--lang", "c", "--dir", str(empty)).exit_code == 0  # an empty folder is filled
    bad = polignac("bot", "new", "no spaces", "--dir", str(tmp_path / "b"))
    assert bad.exit_code == 2 and "bot name" in bad.output and not (tmp_path / "b").exists()
    assert polignac("bot", "new", "x", "--lang", "cobol", "--dir", str(tmp_path / "c")).exit_code == 2
    with pytest.raises(ScaffoldError):
        scaffold("x", "cobol", tmp_path / "d")


def test_templates_are_package_data() -> None:
    """Every template file is matched by pyproject.toml's package-data, so an installed arena can scaffold."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["polignac_arena.templates"]
    files = [p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    data = [f for f in files if f != "__init__.py"]
    assert {"python/bot.py", "javascript/package-lock.json", "c/bot.c", "c/gitignore"} <= set(data)
    unmatched = [f for f in data if not any(fnmatch.fnmatch(f, p) and f.count("/") == p.count("/") for p in patterns)]
    assert not unmatched, f"add these to [tool.setuptools.package-data] in pyproject.toml: {unmatched}"
    assert not [f for f in data if Path(f).name.startswith(".")], "dotfiles are skipped by packaging: store them without the dot"


def test_templates_follow_their_samples() -> None:
    """The starters are the sample bots with a name of their own: a fix to one belongs in the other."""
    samples = ROOT / "sample_bots"
    pairs = [
        (samples / "c_stdio" / "bot.c", TEMPLATES / "c" / "bot.c", "*/\n", "c-stdio"),  # below the header comment
        (samples / "javascript" / "bot.js", TEMPLATES / "javascript" / "bot.js", "const VERSION", "javascript"),  # below the name
    ]
    for sample, template, marker, name in pairs:
        body = sample.read_text().split(marker, 1)[1].split("\n", 1)[1]
        starter = template.read_text().replace("{{name}}", name).split(marker, 1)[1].split("\n", 1)[1]
        assert body == starter, f"{template} and {sample} differ"
    lock_sample = (samples / "javascript" / "package-lock.json").read_text()
    lock_template = (TEMPLATES / "javascript" / "package-lock.json").read_text()
    assert lock_sample.split('"node_modules/')[1:] == lock_template.split('"node_modules/')[1:]
