"""The shipped tournament files: every one parses, and each game of the seeds' family has its own.

Running them is left to `polignac tournament run tournaments/NAME.toml` (about half a minute
each): here only what they say is checked, quickly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polignac import preset
from polignac_arena.games import Game, check_seating
from polignac_arena.store import Store
from polignac_arena.templates import TEMPLATE_LANGUAGES
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import resolve_entrants

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "tournaments").glob("*.toml"))
FAMILY = ("eichel-obern", "gras-obern", "bassadewitz", "knaves")


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_tournament_file_parses_and_names_a_game(path: Path) -> None:
    config = load_config(path)
    assert config.name == path.stem
    assert not config.game.custom and config.game.preset in {
        "classic",
        "quatre-valets",
        "ace-high",
        "slobberhannes",
        "no-contracts",
        *FAMILY,
    }


@pytest.mark.parametrize("name", FAMILY)
def test_each_game_of_the_family_has_a_file_whose_rules_are_its_preset(name: str, tmp_path: Path) -> None:
    config = load_config(ROOT / "tournaments" / f"{name}.toml")
    assert config.rules == preset(name, players=config.table_size, limit=config.rules.limit)
    assert config.game == Game(name)
    assert config.format == "round-robin" and config.trusted
    # The sample bots, each declaring the game: the tournament is not refused.
    assert all(entrant.startswith("../sample_bots/") for entrant in config.entrants)
    with Store(tmp_path / "arena.db") as store:
        entrants = resolve_entrants(config, store)
    check_seating(entrants.values(), config.game)


def test_knaves_is_played_by_exactly_three() -> None:
    config = load_config(ROOT / "tournaments" / "knaves.toml")
    assert config.table_size == config.rules.players == 3 == len(config.entrants)


def test_the_languages_tournament_seats_every_starter_kit_from_build_kits() -> None:
    config = load_config(ROOT / "tournaments" / "languages.toml")
    assert sorted(config.entrants) == sorted(f"../build/kits/{lang}-kit" for lang in TEMPLATE_LANGUAGES)
    assert len(TEMPLATE_LANGUAGES) == 8 and config.table_size == 4 and config.format == "round-robin"
