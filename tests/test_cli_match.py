"""``polignac match`` and ``polignac replay``: real bot processes, records, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("match") / "match.jsonl"
    bots = ["random", "cautious", "heuristic", str(ROOT / "sample_bots" / "random")]
    result = polignac("match", *(f"--bot={b}" for b in bots), "--seed", "11", "--replay", str(path), "--trusted")
    assert result.exit_code == 0, result.output
    assert "Final standings" in result.output and "Record written to" in result.output
    assert "Seats: 0 random, 1 cautious, 2 heuristic, 3 random" in result.output
    return path


def test_match_writes_a_record_that_verifies(recorded: Path) -> None:
    result = polignac("replay", "verify", str(recorded))
    assert result.exit_code == 0 and "OK" in result.output


def test_replay_show_prints_every_trick(recorded: Path) -> None:
    result = polignac("replay", "show", str(recorded))
    assert result.exit_code == 0
    assert "Seats: 0 random, 1 cautious, 2 heuristic, 3 random" in result.output
    assert "Hand 1, dealer seat 3" in result.output and "won by" in result.output and "Record status: finished" in result.output


def test_a_tampered_record_diverges_with_exit_1(recorded: Path, tmp_path: Path) -> None:
    lines = [json.loads(line) for line in recorded.read_text().splitlines()]
    for line in lines:
        if line["type"] == "result":
            line["totals"] = [0] * len(line["totals"])
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = polignac("replay", "verify", str(tampered))
    assert result.exit_code == 1 and "DIVERGES" in result.output and "totals" in result.output


def test_match_in_process_with_three_players(tmp_path: Path) -> None:
    result = polignac(
        "match",
        "--bot",
        "random",
        "--bot",
        "heuristic",
        "--bot",
        "cautious",
        "--seat-kind",
        "inprocess",
        "-q",
        "--rules",
        "ace-high",
        "--limit",
        "5",
    )
    assert result.exit_code == 0, result.output
    assert "Final standings (ace-high" in result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--bot", "random", "--bot", "random"], "3 to 6 bots"),
        (["--bot", "random"] * 7, "3 to 6 bots"),
        (["--bot", "random", "--bot", "random", "--bot", "no-such-bot"], "no bot 'no-such-bot'"),
        (["--bot", "random", "--bot", "random", "--bot", "random", "--rules", "nope"], "unknown ruleset 'nope'"),
        (["--bot", "random", "--bot", "random", "--bot", "random", "--seed", "-1"], "'-1'"),
        (["--bot", "random", "--bot", "random", "--bot", "random", "--move-ms", "0"], "'0'"),
    ],
)
def test_bad_match_options_are_one_line_errors(args: list[str], words: str) -> None:
    result = polignac("match", *args)
    assert result.exit_code == 2
    error_lines = [line for line in result.output.splitlines() if line.startswith("polignac: error:")]
    assert len(error_lines) == 1 and words in error_lines[0], result.output


def test_a_folder_with_a_bad_bot_toml_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text("command = 42\n")
    result = polignac("match", "--bot", str(tmp_path), "--bot", "random", "--bot", "random")
    assert result.exit_code == 2 and "'command' (line 1): must be a non-empty list" in result.output
    (tmp_path / "bot.toml").write_text("command = [\n")
    result = polignac("match", "--bot", str(tmp_path), "--bot", "random", "--bot", "random")
    assert result.exit_code == 2 and "not valid TOML" in result.output


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "cannot read"),
        ("", "first line must be the match header"),
        ("not json\n", "not JSON"),
        ("[1, 2]\n", "an object with a 'type'"),
        ('{"type": "header", "format": "other/9"}\n', "unknown record format"),
        ('{"type": "header", "format": "polignac-match/1"}\n', "does not describe a match"),
        ('{"type": "header", "format": "polignac-match/1", "rules": {"players": 9}, "seed": 1}\n', "players"),
        (b"\xff\xfe".decode("latin-1"), "not a UTF-8"),
    ],
)
@pytest.mark.parametrize("command", ["show", "verify"])
def test_bad_record_files_are_one_line_errors(tmp_path: Path, content: str | None, words: str, command: str) -> None:
    path = tmp_path / "record.jsonl"
    if content is not None:
        path.write_bytes(content.encode("latin-1") if "\xff" in content else content.encode())
    result = polignac("replay", command, str(path))
    assert result.exit_code == 2, result.output
    assert result.output.count("polignac: error:") == 1 and words in result.output, result.output
