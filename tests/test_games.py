"""bot.toml's ``games``: what a bot plays, checked when it loads and refused at a table of another game.

A table is refused before anything starts (no seat launched, no tournament stored), with a
message that names the bot and the game.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from polignac import PRESETS, preset
from polignac.rules import FRENCH_32_GAMES
from polignac_arena.cli import app
from polignac_arena.games import Game, GameRefused, check_seating, game_of
from polignac_arena.runner import BotSpecError, resolve_bot, run_local_match
from polignac_arena.store import Store
from polignac_arena.submission import SubmissionError, builtin_submission, load_submission
from polignac_arena.templates import TEMPLATE_LANGUAGES
from polignac_arena.tournament.config import load_config, parse_config
from polignac_arena.tournament.runner import EntrantError, run_tournament
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = 'name = "french"\nversion = "2.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
# Started, the bot would leave this file behind: a refused table starts no seat.
BOT = "import pathlib\npathlib.Path(__file__).with_name('started').write_text('yes')\n"
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
runner = CliRunner()


def bot_folder(tmp_path: Path, extra: str = "", name: str = "french") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(MANIFEST.replace('"french"', f'"{name}"') + extra)
    (folder / "bot.py").write_text(BOT)
    return folder


def problems(tmp_path: Path, games: str) -> list[str]:
    with pytest.raises(SubmissionError) as caught:
        load_submission(bot_folder(tmp_path, f"games = {games}\n"))
    return caught.value.problems


# -- bot.toml ---------------------------------------------------------------------------------


def test_without_games_a_bot_plays_the_french_32_card_games(tmp_path: Path) -> None:
    assert load_submission(bot_folder(tmp_path)).games == FRENCH_32_GAMES
    assert FRENCH_32_GAMES == ("classic", "quatre-valets", "ace-high", "slobberhannes", "no-contracts")


def test_games_lists_what_it_plays(tmp_path: Path) -> None:
    submission = load_submission(bot_folder(tmp_path, 'games = ["classic", "knaves"]\n'))
    assert submission.games == ("classic", "knaves")


@pytest.mark.parametrize(
    ("games", "words"),
    [
        ('"classic"', 'must be a non-empty list of game names such as ["classic", "knaves"], got \'classic\''),
        ("[]", "must be a non-empty list of game names"),
        ('["classic", "knave"]', "unknown game 'knave'; known games: classic, quatre-valets, ace-high, slobberhannes,"),
        ('["classic", 3]', "unknown game 3; known games: "),
        ('["Knaves"]', "unknown game 'Knaves'"),
        ('["knaves", "knaves"]', "game 'knaves' is listed twice"),
    ],
)
def test_a_bad_games_value_names_the_key_the_value_and_the_known_games(tmp_path: Path, games: str, words: str) -> None:
    found = problems(tmp_path, games)
    assert len(found) == 1 and found[0].startswith("'games' (line 5): ") and words in found[0], found
    if "unknown" in words:
        assert "bassadewitz, knaves" in found[0]


def test_the_sample_bots_and_starters_declare_every_game() -> None:
    folders = [p.parent for p in (ROOT / "sample_bots").glob("*/bot.toml")]
    assert len(folders) == 7
    for folder in folders:
        assert load_submission(folder).games == tuple(PRESETS), folder
    for lang in TEMPLATE_LANGUAGES:
        text = (ROOT / "server" / "polignac_arena" / "templates" / lang / "bot.toml").read_text()
        assert f"games = [{', '.join(map(repr, PRESETS))}]".replace("'", '"') in text, lang


def test_built_in_bots_play_every_game() -> None:
    bots = [builtin_submission(name) for name in ("random", "cautious", "heuristic", "expert")]
    assert all(bot.games == tuple(PRESETS) and bot.builtin for bot in bots)
    custom = game_of(preset("classic", pack=52, trick_order="ace-high", tiebreak="play-on"))
    for game in [*(Game(name) for name in PRESETS), custom]:
        check_seating(bots, game)


# -- which game a ruleset is ----------------------------------------------------------------


def test_a_ruleset_is_the_game_of_its_name_else_of_its_variant() -> None:
    assert game_of(preset("knaves", limit=5)) == Game("knaves")
    assert game_of(preset("bassadewitz", players=5)) == Game("bassadewitz")
    house = preset("knaves").with_changes(name="house-knaves", limit=30)
    assert game_of(house, "knaves") == Game("knaves")
    assert game_of(preset("classic").with_changes(name="house")) == Game("classic")  # no variant said: classic


def test_changing_what_makes_the_game_makes_a_custom_game() -> None:
    game = game_of(preset("classic", pack=52, trick_order="ace-high", tiebreak="play-on"))
    assert game.custom and game.preset == "classic" and game.changed == ("pack = 52",)
    assert str(game) == "a custom game from 'classic' (pack = 52)"
    # A name that is a preset does not make the rules that game.
    assert game_of(preset("classic").with_changes(name="knaves")).custom
    # The trick order, the penalty cards, the limit change within a game.
    assert not game_of(preset("classic", trick_order="ace-high", penalty_cards={"QS": 3}, limit=50)).custom


def test_a_tournament_plays_the_game_of_its_rules_table() -> None:
    base = 'name = "t"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n[rules]\n'
    assert parse_config(base + 'variant = "knaves"\n').game == Game("knaves")
    assert parse_config(base + 'variant = "knaves"\nname = "house"\nlimit = 30\n').game == Game("knaves")
    assert parse_config(base).game == Game("classic")
    custom = parse_config(base + 'variant = "no-contracts"\ndirection = "higher"\n').game
    assert custom.custom and custom.preset == "no-contracts" and custom.changed == ("direction = higher",)


# -- refusals ---------------------------------------------------------------------------------


def test_a_match_in_an_undeclared_game_is_refused_before_any_seat_starts(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    bots = [load_submission(folder), builtin_submission("random"), builtin_submission("heuristic")]
    with pytest.raises(BotSpecError) as caught:
        run_sync(run_local_match(bots, preset("knaves"), 1, trusted=True))
    message = str(caught.value)
    assert "bot 'french@2.0' does not play 'knaves'" in message
    assert "add 'knaves' to 'games' in its bot.toml" in message
    assert not (folder / "started").exists()


def test_a_py_file_bot_plays_the_french_games_only(tmp_path: Path) -> None:
    (tmp_path / "solo").mkdir()
    (tmp_path / "solo" / "mine.py").write_text(BOT)
    bots = [resolve_bot(str(tmp_path / "solo" / "mine.py")), builtin_submission("random"), builtin_submission("cautious")]
    with pytest.raises(BotSpecError, match="bot 'mine@0' does not play 'knaves'"):
        run_sync(run_local_match(bots, preset("knaves"), 1, trusted=True))


def test_a_custom_game_seats_only_built_in_bots(tmp_path: Path) -> None:
    every = bot_folder(tmp_path, f"games = [{', '.join(map(repr, PRESETS))}]\n".replace("'", '"'))
    game = game_of(preset("no-contracts", direction="higher"))
    with pytest.raises(GameRefused, match=r"bot 'french@2.0' cannot play a custom game from 'no-contracts' \(direction = higher\)"):
        check_seating([load_submission(every)], game)


def test_polignac_match_refuses_a_bot_in_a_game_it_does_not_declare(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    args = ["match", "--bot", str(folder), "--bot", "random", "--bot", "cautious", "--rules", "knaves", "--trusted", "--seed", "1"]
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 2, result.output
    assert "bot 'french@2.0' does not play 'knaves'" in " ".join(result.output.split())
    assert not (folder / "started").exists()


def tournament(tmp_path: Path, entrants: list[str], variant: str, table_size: int = 3) -> Path:
    path = tmp_path / f"{variant}.toml"
    path.write_text(
        f'name = "t-{variant}"\nentrants = {entrants!r}\ntable_size = {table_size}\n'.replace("'", '"')
        + f'[rules]\nvariant = "{variant}"\nlimit = 5\n[seats]\nkind = "process"\ntrusted = true\n'
    )
    return path


def test_a_tournament_that_seats_a_bot_in_an_undeclared_game_is_refused_before_it_starts(tmp_path: Path) -> None:
    bot_folder(tmp_path, name="french")
    bot_folder(tmp_path, 'games = ["classic"]\n', name="classical")
    path = tournament(tmp_path, ["french", "classical", "random", "heuristic"], "knaves")
    with Store(tmp_path / "arena.db") as store, pytest.raises(EntrantError) as caught:
        run_sync(run_tournament(load_config(path), store))
    message = str(caught.value)
    assert message.startswith("tournament 't-knaves' plays knaves: ")
    assert "bot 'french@2.0' does not play 'knaves'" in message and "bot 'classical@2.0' does not play 'knaves'" in message
    with Store(tmp_path / "arena.db") as store:
        assert store.list_tournaments() == []
    assert not list(tmp_path.rglob("started"))


def test_polignac_tournament_run_names_the_bot_and_the_game(tmp_path: Path) -> None:
    bot_folder(tmp_path)
    path = tournament(tmp_path, ["french", "random", "heuristic"], "bassadewitz")
    result = runner.invoke(app, ["tournament", "run", str(path), "--db", str(tmp_path / "arena.db"), "-q"], env=ENV)
    assert result.exit_code == 2, result.output
    assert "bot 'french@2.0' does not play 'bassadewitz'" in " ".join(result.output.split())


def test_a_tournament_in_a_declared_game_is_accepted(tmp_path: Path) -> None:
    bot_folder(tmp_path, 'games = ["classic", "bassadewitz"]\n', name="both")
    config = load_config(tournament(tmp_path, ["both", "random", "heuristic"], "bassadewitz"))
    check_seating([load_submission(tmp_path / "both"), builtin_submission("random")], config.game)
