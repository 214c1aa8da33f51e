"""The ``polignac`` command: ``rules``, ``play``, help, and one-line errors for bad options."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac import PRESETS, Ruleset, preset
from polignac_arena.cli import app
from polignac_arena.cli.rules import settings
from polignac_arena.players import play_local, random_players
from polignac_arena.render import WIDTH

# A fixed, colourless 80-column "terminal", whatever the environment running the tests.
ENV: dict[str, str | None] = {"COLUMNS": "80", "LINES": "50", "NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None}

# A row of the standings table, such as "│    2= │ seat 3 │    -5 │" (a minus sign is not a border).
STANDINGS_ROW = re.compile(r"^[^\w-]*(\d+)=?[^\w-]+seat (\d)[^\w-]+(-?\d+)[^\w-]*$")

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> Result:
    """Invoke the app as the console script would, with the given arguments."""
    return CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)


def standings(output: str) -> list[tuple[int, int, int]]:
    """The (place, seat, total) rows of the standings table, top to bottom."""
    tail = output[output.index("Final standings") :]
    rows = [STANDINGS_ROW.match(line) for line in tail.splitlines()]
    return [(int(m[1]), int(m[2]), int(m[3])) for m in rows if m]


def assert_fits(output: str) -> None:
    too_wide = [line for line in output.splitlines() if len(line.rstrip()) > WIDTH]
    assert not too_wide, too_wide


# -- help -------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [(), ("--help",)])
def test_bare_command_and_help_show_the_commands(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "Usage" in result.stdout
    for command in ("rules", "play"):
        assert command in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("command", ["rules", "play"])
def test_command_help(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0, result.output
    assert f"Usage: polignac {command} [OPTIONS]" in result.stdout
    assert "--players" in result.stdout


@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        (("tournament", "run"), "--executor", "<local|ray>"),
        (("league", "serve"), "--executor", "<local|ray>"),
        (("league", "export"), "--format", "<csv|json>"),
        (("bot", "check"), "--seat-kind", "<inprocess|process|docker>"),
    ],
)
def test_an_option_of_a_kind_shows_its_choices_and_refuses_others_in_one_line(command: tuple[str, ...], option: str, choices: str) -> None:
    shown = CliRunner().invoke(app, [*command, "--help"], env={**ENV, "COLUMNS": "200"}, catch_exceptions=False)
    assert shown.exit_code == 0 and re.search(rf"{option}\s+{re.escape(choices)}", shown.stdout), shown.stdout
    refused = run(*command, option, "nonsense")
    quoted = ", ".join(repr(choice) for choice in choices.strip("<>").split("|"))
    assert refused.exit_code == 2, refused.output
    assert refused.stderr == f"polignac: error: invalid value for {option!r}: 'nonsense' is not one of {quoted}.\n"


# -- rules ------------------------------------------------------------------------------


def test_rules_lists_every_named_ruleset_on_one_line_each() -> None:
    result = run("rules")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for name, rules in PRESETS.items():
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert rules.rank_text() in line
    assert_fits(result.stdout)


@pytest.mark.parametrize("name", list(PRESETS))
def test_rules_name_shows_every_setting(name: str) -> None:
    result = run("rules", name)
    assert result.exit_code == 0, result.output
    for key, value in settings(PRESETS[name]):
        assert re.search(rf"\b{key}\W+{re.escape(value)}", result.stdout), (key, value)
    assert_fits(result.stdout)


@pytest.mark.parametrize("name", list(PRESETS))
def test_rules_json_round_trips_through_from_dict(name: str) -> None:
    result = run("rules", name, "--json")
    assert result.exit_code == 0, result.output
    assert Ruleset.from_dict(json.loads(result.stdout)) == PRESETS[name]


def test_rules_json_without_a_name_gives_every_ruleset() -> None:
    result = run("rules", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == list(PRESETS)
    assert all(Ruleset.from_dict(table) == PRESETS[name] for name, table in data.items())


def test_rules_overrides_players_and_limit() -> None:
    result = run("rules", "ace-high", "--players", "5", "--limit", "10", "--json")
    assert result.exit_code == 0, result.output
    assert Ruleset.from_dict(json.loads(result.stdout)) == preset("ace-high", players=5, limit=10)
    table = run("rules", "ace-high", "-p", "5", "-l", "10").stdout
    assert re.search(r"\bplayers\W+5\b", table)
    assert re.search(r"\blimit\W+10\b", table)


# -- play -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "name"),
    [(3, "classic"), (4, "classic"), (5, "quatre-valets"), (6, "ace-high"), (4, "slobberhannes"), (6, "no-contracts")],
)
def test_play_prints_every_hand_and_the_true_standings(players: int, name: str) -> None:
    result = run("play", "--players", str(players), "--rules", name, "--seed", "11")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"Polignac, {name} rules, {players} random players, limit 20, seed 11\n")
    assert "Hand 1, dealer seat" in out
    assert "Final standings" in out
    assert_fits(out)
    # The table is exactly the match that the same seed plays outside the CLI.
    match = play_local(preset(name, players=players), 11, random_players(11, players))
    assert match.places is not None
    expected = sorted((match.places[s], s, match.totals[s]) for s in range(players))
    assert standings(out) == expected
    assert {seat for _, seat, _ in standings(out)} == set(range(players))


def test_play_same_seed_same_output() -> None:
    first = run("play", "--players", "5", "--rules", "classic", "--seed", "123456789")
    again = run("play", "--players", "5", "--rules", "classic", "--seed", "123456789")
    other = run("play", "--players", "5", "--rules", "classic", "--seed", "123456790")
    assert first.exit_code == again.exit_code == other.exit_code == 0
    assert first.stdout == again.stdout
    assert first.stdout != other.stdout


def test_play_without_seed_prints_one_that_repeats_the_match() -> None:
    result = run("play", "--players", "4")
    assert result.exit_code == 0, result.output
    found = re.search(r"--seed (\d+)", result.stdout)
    assert found, result.stdout
    again = run("play", "--players", "4", "--seed", found[1])
    # Only the header differs: the repeat no longer says its seed was random.
    assert result.stdout.splitlines()[2:] == again.stdout.splitlines()[1:]


def test_play_seed_bounds_are_inclusive() -> None:
    for seed in ("0", str(2**64 - 1)):
        result = run("play", "--seed", seed, "--quiet")
        assert result.exit_code == 0, result.output


def test_play_quiet_prints_only_the_standings() -> None:
    loud = run("play", "--players", "3", "--seed", "5")
    quiet = run("play", "--players", "3", "--seed", "5", "--quiet")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout.startswith("Final standings (classic, 3 players, seed 5)")
    assert "Hand" not in quiet.stdout
    assert standings(quiet.stdout) == standings(loud.stdout)
    assert len(standings(quiet.stdout)) == 3


def test_play_limit() -> None:
    result = run("play", "--seed", "3", "--limit", "5")
    assert result.exit_code == 0, result.output
    assert "limit 5, seed 3" in result.stdout
    match = play_local(preset("classic", limit=5), 3, random_players(3, 4))
    assert match.places is not None
    assert max(match.totals) >= 5
    assert standings(result.stdout) == sorted((match.places[s], s, match.totals[s]) for s in range(4))


# -- bad options ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "bad"),
    [
        (["rules", "foo"], "'foo'"),
        (["play", "--rules", "foo"], "'foo'"),
        (["play", "--players", "2"], "'2'"),
        (["play", "--players", "7"], "'7'"),
        (["play", "-p", "four"], "'four'"),
        (["play", "--players", "3.5"], "'3.5'"),
        (["rules", "classic", "--players", "9"], "'9'"),
        (["play", "--seed", "-1"], "'-1'"),
        (["play", "--seed", str(2**64)], f"'{2**64}'"),
        (["play", "--seed", "seven"], "'seven'"),
        (["play", "--limit", "0"], "'0'"),
        (["play", "--limit", "-3"], "'-3'"),
        (["play", "--limit", "ten"], "'ten'"),
        (["play", "--limit", "10001"], "10001"),
        (["rules", "--limit", "0"], "'0'"),
        (["play", "--seed"], "--seed"),
        (["play", "--bogus"], "--bogus"),
        (["play", "extra"], "extra"),
        (["bogus"], "bogus"),
    ],
)
def test_bad_option_is_one_line_and_exit_code_2(args: list[str], bad: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("polignac: error: ")
    assert bad in lines[0]


def test_unknown_ruleset_lists_the_choices() -> None:
    result = run("play", "--rules", "foo")
    assert result.stderr.strip() == f"polignac: error: unknown ruleset 'foo'; choose one of {', '.join(PRESETS)}"


# -- the installed console script -------------------------------------------------------


def test_console_script() -> None:
    script = Path(sys.executable).with_name("polignac")
    found = str(script) if script.exists() else shutil.which("polignac")
    if found is None:
        pytest.skip("the polignac console script is not installed: pip install -e .")
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update({k: v for k, v in ENV.items() if v is not None})
    args = ["play", "--players", "4", "--rules", "classic", "--seed", "7"]
    done = subprocess.run([found, *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == run(*args).stdout
    bad = subprocess.run([found, "play", "--players", "9"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.splitlines() == ["polignac: error: invalid value for '--players' / '-p': must be an integer from 3 to 6, got '9'"]


@pytest.mark.parametrize("name", [None, "slobberhannes"])
def test_rules_says_where_the_rules_are_written_out(name: str | None) -> None:
    result = run("rules", *([name] if name else []))
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("The rules of ") and "docs/rules.md" in last
    assert (ROOT / "docs" / "rules.md").is_file()
    rules_doc = (ROOT / "docs" / "rules.md").read_text()
    for preset_name in PRESETS:
        assert f"| `{preset_name}` |" in rules_doc, f"docs/rules.md does not describe {preset_name}"
