"""bot.toml validation and the `polignac bot check|add|list|show` commands, with bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from polignac_arena.submission import SubmissionError, builtin_submission, content_digest, load_submission
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
GOOD = 'name = "mybot"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
runner = CliRunner()


def folder_with(tmp_path: Path, manifest: str | bytes, name: str = "bot") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    data = manifest.encode() if isinstance(manifest, str) else manifest
    (folder / "bot.toml").write_bytes(data)
    (folder / "bot.py").write_text("from polignac.bot import Bot, run\n")
    return folder


def test_a_good_manifest_loads(tmp_path: Path) -> None:
    sub = load_submission(folder_with(tmp_path, GOOD + 'transport = "stdio"\n[resources]\nmemory_mb = 128\ncpus = 0.5\n'))
    assert (sub.name, sub.version, sub.transport, sub.command) == ("mybot", "1.0", "stdio", ("python", "bot.py"))
    assert sub.resources.memory_mb == 128 and sub.resources.cpus == 0.5
    assert (
        load_submission(folder_with(tmp_path, GOOD.replace('["python", "bot.py"]', '"python bot.py --fast"'), "b2")).command[-1] == "--fast"
    )


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ("colour = 1\n", "colour", "unknown key"),
        ('transport = "carrier-pigeon"\n', "transport", "'grpc' or 'stdio'"),
        ('image = "my-bot:1"\ndockerfile = "Dockerfile"\n', "image", "either"),
        ('dockerfile = "../Dockerfile"\n', "dockerfile", "relative path inside"),
        ('dockerfile = "Missing"\n', "dockerfile", "does not exist"),
        ('image = "BAD IMAGE"\n', "image", "docker image reference"),
        ("build = 5\n", "build", "non-empty list"),
        ("[resources]\nmemory_mb = 1\n", "resources", "memory_mb must be a number in 16..65536"),
        ("[resources]\ngpus = 1\n", "resources", "unknown key 'gpus'"),
        ('author = "bad\\u0000author"\n', "author", "printable"),
    ],
)
def test_each_problem_names_its_key_and_line(tmp_path: Path, extra: str, key: str, words: str) -> None:
    with pytest.raises(SubmissionError) as caught:
        load_submission(folder_with(tmp_path, GOOD + extra))
    matching = [p for p in caught.value.problems if p.startswith(f"{key!r} (line ") and words in p]
    assert len(matching) == 1, caught.value.problems


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    manifest = 'name = "has spaces"\nversion = ""\nlanguage = "cobol"\ntransport = 1\n'
    with pytest.raises(SubmissionError) as caught:
        load_submission(folder_with(tmp_path, manifest))
    keys = [p.split(" ")[0].rstrip(":") for p in caught.value.problems]
    assert keys == ["'name'", "'version'", "'language'", "'transport'", "'command'"]


@pytest.mark.parametrize(
    ("content", "words"),
    [("name = [\n", "not valid TOML"), (b"\xff\xfe", "not UTF-8"), (None, "no bot.toml")],
)
def test_unreadable_manifests(tmp_path: Path, content: str | bytes | None, words: str) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    if content is not None:
        (folder / "bot.toml").write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(SubmissionError, match=words):
        load_submission(folder)
    with pytest.raises(SubmissionError, match="not a folder"):
        load_submission(tmp_path / "nowhere")


def test_every_sample_bot_is_a_valid_submission() -> None:
    for folder in sorted((ROOT / "sample_bots").iterdir()):
        if (folder / "bot.toml").is_file():
            load_submission(folder)


def test_the_digest_follows_the_code_and_ignores_build_outputs(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, GOOD)
    before = content_digest(folder)
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "x.js").write_text("ignored")
    assert content_digest(folder) == before
    (folder / "bot.py").write_text("changed")
    assert content_digest(folder) != before
    assert builtin_submission("random").version == "builtin"


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_bot_check_passes_a_good_bot() -> None:
    result = polignac("bot", "check", str(ROOT / "sample_bots" / "random"), "--trusted")
    assert result.exit_code == 0, result.output
    assert "ok  bot.toml" in result.output and "ok  smoke match" in result.output and "ready" in result.output


def test_bot_check_fails_a_bot_that_plays_illegal_cards(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, GOOD)
    source = "from polignac.bot import Bot, run\n\nclass Bad(Bot):\n    name = 'bad'\n\n"
    (folder / "bot.py").write_text(source + "    def play(self, view):\n        return 'ZZ'\n\nrun(Bad())\n")
    result = polignac("bot", "check", str(folder), "--trusted")
    assert result.exit_code == 1
    assert "FAILED  smoke match" in result.output and "malformed" in result.output


def test_bot_check_reports_a_bad_manifest_and_a_failing_build(tmp_path: Path) -> None:
    result = polignac("bot", "check", str(folder_with(tmp_path, "name = 1\n")))
    assert result.exit_code == 1 and "FAILED  bot.toml" in result.output and "'name'" in result.output
    failing = folder_with(tmp_path, GOOD + 'build = ["false"]\n', "b2")
    result = polignac("bot", "check", str(failing))
    assert result.exit_code == 1 and "FAILED  build" in result.output and "exited 1" in result.output


def test_bot_add_list_show_and_a_changed_bot_needs_a_new_version(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    folder = folder_with(tmp_path, GOOD)
    assert polignac("bot", "add", str(folder), "--db", str(db)).exit_code == 0
    assert polignac("bot", "add", str(folder), "--db", str(db)).exit_code == 0  # the same code again: fine
    listed = polignac("bot", "list", "--db", str(db))
    assert listed.exit_code == 0 and "mybot" in listed.output
    shown = polignac("bot", "show", "mybot", "--db", str(db))
    assert shown.exit_code == 0 and "1.0" in shown.output
    (folder / "bot.py").write_text("# changed\n")
    changed = polignac("bot", "add", str(folder), "--db", str(db))
    assert changed.exit_code == 2 and "new version" in changed.output
    missing = polignac("bot", "show", "nobody", "--db", str(db))
    assert missing.exit_code == 2 and missing.output.count("polignac: error:") == 1
    bad = polignac("bot", "add", str(folder_with(tmp_path, "name = 1\n", "b3")), "--db", str(db))
    assert bad.exit_code == 2 and "'name'" in bad.output


def test_unsandboxed_process_seats_refuse_untrusted_bots_and_warn_for_trusted_ones(caplog: pytest.LogCaptureFixture) -> None:

    from polignac import preset
    from polignac_arena.runner import BotSpecError, run_local_match
    from polignac_arena.seats.process import ProcessLauncher

    bots = [builtin_submission(name) for name in ("random", "cautious", "heuristic")]
    with pytest.raises(BotSpecError, match="install bubblewrap"):
        run_sync(run_local_match(bots, preset("classic", players=3, limit=3), 1, launcher=ProcessLauncher()))
    result, _ = run_sync(run_local_match(bots, preset("classic", players=3, limit=3), 1, launcher=ProcessLauncher(), trusted=True))
    assert result.status == "finished"
    assert any("UNSANDBOXED" in record.getMessage() for record in caplog.records)
