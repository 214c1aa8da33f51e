"""The one line finder of the files people write: tournament files, league files and bot.toml point at the same lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from polignac_arena.league.config import parse_league_config
from polignac_arena.submission import SubmissionError, load_submission
from polignac_arena.toml_files import TomlLines
from polignac_arena.tournament.config import ConfigError, parse_config

TEXT = 'name = "t"\nseats.limits.cpus = 0\n[trueskill]\nmu = "a"\n[executor]\nkind = "spark"\n'


@pytest.mark.parametrize(
    ("key", "line"),
    [(("name",), 1), (("seats", "limits", "cpus"), 2), (("trueskill",), 3), (("trueskill", "mu"), 4), (("executor", "kind"), 6)],
)
def test_a_key_is_found_whichever_toml_spelling_set_it(key: tuple[str, ...], line: int) -> None:
    assert TomlLines(TEXT).line(key) == line


def test_a_key_nowhere_in_the_text_has_no_line() -> None:
    assert TomlLines(TEXT).line(("entrants",)) is None and TomlLines(TEXT).line(()) is None


def test_tournament_and_league_files_word_the_same_setting_alike(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as tournament:
        parse_config('name = "t"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n' + TEXT.split("\n", 1)[1])
    with pytest.raises(ConfigError) as league:
        parse_league_config(TEXT, tmp_path / "league.toml")
    expected = [
        "line 2: 'seats.limits.cpus': must be a number in 0.1..64, got 0",
        "line 4: 'trueskill.mu': must be a number in -1e+06..1e+06, got 'a'",
        "line 6: 'executor.kind': must be one of local, ray, got 'spark'",
    ]
    assert league.value.problems == expected
    assert sorted(problem.split(": ", 1)[1] for problem in tournament.value.problems) == sorted(p.split(": ", 1)[1] for p in expected)


def test_a_dotted_key_in_bot_toml_has_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    manifest = 'name = "b"\nversion = "1"\nlanguage = "python"\ncommand = "python bot.py"\nresources.memory_mb = 1\n'
    (folder / "bot.toml").write_text(manifest, encoding="utf-8")
    with pytest.raises(SubmissionError) as caught:
        load_submission(folder)
    assert caught.value.problems == ["'resources' (line 5): memory_mb must be a number in 16..65536, got 1"]
