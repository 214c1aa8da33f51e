"""Tournaments that stop when they know ([schedule] until_separated, max_matches): the config's
errors, stopping when every two neighbours are ordered or when the budget is spent, the same
schedule on a rerun and after a resume, and resume reading the stored schedule back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.schedule import extra_round, round_robin
from polignac_arena.store import Store
from polignac_arena.tournament import runner
from polignac_arena.tournament.config import ConfigError, load_config, parse_config
from polignac_arena.tournament.runner import TournamentRun, run_tournament, unseparated
from tests.aio import run_sync

BOTS = ("random", "cautious", "heuristic")


def tournament_file(folder: Path, schedule: str, *, name: str = "sep", form: str = "round-robin", extra: str = "") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nentrants = {json.dumps(list(BOTS))}\nformat = "{form}"\ntable_size = 3\nseed = 5\n{extra}\n'
        f'[schedule]\n{schedule}\n\n[rules]\nlimit = 5\n\n[seats]\nkind = "inprocess"\ntrusted = true\n',
        encoding="utf-8",
    )
    return path


def run(path: Path, db: Path, **kw: Any) -> TournamentRun:
    with Store(db) as store:
        return run_sync(run_tournament(load_config(path), store, **kw))


def stored(db: Path, name: str = "sep") -> tuple[list[tuple[int, tuple[str, ...], int]], dict[str, tuple[float, float]], str]:
    with Store(db, create=False) as store:
        tournament = store.get_tournament(name)
        assert tournament is not None
        fixtures = [(f.index, f.seats, f.seed) for f in store.fixtures(tournament.id)]
        return fixtures, store.ratings(tournament.id), tournament.status


# -- the file -------------------------------------------------------------------------------------

BASE = 'name = "t"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n'


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        (BASE + "[schedule]\nuntil_separated = 1.5\nmax_matches = 9\n", 5, "schedule.until_separated", "must be a number in 0.5..0.9999"),
        (BASE + "[schedule]\nuntil_separated = 0.9\n", 5, "schedule.until_separated", "needs a budget: add max_matches"),
        (BASE + "[schedule]\nuntil_separated = 0.9\nmax_matches = 0\n", 6, "schedule.max_matches", "must be an integer in 1..1000000"),
        (BASE + "[schedule]\nmax_matches = 9\n", 5, "schedule.max_matches", "is the budget of until_separated, which is not set"),
        (
            BASE + 'format = "ladder"\n[schedule]\nuntil_separated = 0.9\nmax_matches = 9\n',
            7,
            "schedule.max_matches",
            "budget is 'matches'",
        ),
        (BASE + "[schedule]\nuntil = 0.9\n", 5, "schedule.until", "unknown setting; known: until_separated, max_matches"),
        (BASE + 'schedule = "soon"\n', 4, "schedule", "must be a table ([schedule])"),
    ],
)
def test_schedule_errors_name_their_key_and_line(text: str, line: int, key: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert len(caught.value.problems) == 1, caught.value.problems
    problem = caught.value.problems[0]
    assert problem.startswith(f"line {line}: {key!r}: ") and message in problem, problem


def test_schedule_settings_are_read() -> None:
    config = parse_config(BASE + "[schedule]\nuntil_separated = 0.95\nmax_matches = 40\n")
    assert (config.until_separated, config.max_matches) == (0.95, 40)
    assert parse_config(BASE).until_separated is None
    assert "schedule" not in runner.config_record(parse_config(BASE)), "files without it still resume stores written before"


# -- separation -----------------------------------------------------------------------------------


def test_unseparated_neighbours() -> None:
    ratings = {"a": (30.0, 1.0), "b": (29.0, 1.0), "c": (10.0, 1.0)}
    (pair,) = unseparated(ratings, ["a", "b", "c"], 0.95)
    assert pair[:2] == ("a", "b") and 0.5 < pair[2] < 0.95
    assert unseparated(ratings, ["a", "b", "c"], 0.7) == []
    assert unseparated({"a": (30.0, 1.0)}, ["a", "b"], 0.5), "a bot without a rating is not separated"


def test_extra_rounds_continue_the_indices_and_deals() -> None:
    names = ["a", "b", "c", "d", "e"]
    more = extra_round(names, 3, 9, 20, 20, replays=False)
    assert [f.index for f in more] == list(range(20, 30)) and [f.group for f in more] == list(range(20, 30))
    assert more == extra_round(names, 3, 9, 20, 20, replays=False)
    assert [f.seats for f in more] != [f.seats for f in extra_round(names, 3, 9, 30, 30, replays=False)]
    replayed = extra_round(names, 3, 9, 40, 7, replays=True)
    assert [f.group for f in replayed[:6]] == [7, 7, 7, 8, 8, 8] and replayed[0].index == 40


def test_stops_when_every_neighbour_is_ordered(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "until_separated = 0.6\nmax_matches = 60")
    outcome = run(path, tmp_path / "a.db")
    fixtures, ratings, status = stored(tmp_path / "a.db")
    assert status == "finished" and outcome.failed == 0
    assert "every two neighbours on the leaderboard are ordered at 0.6" in outcome.stop_reason
    assert f"after {len(fixtures)} matches" in outcome.stop_reason
    assert 1 <= len(fixtures) < 60 and unseparated(ratings, [f"{b}@builtin" for b in BOTS], 0.6) == []


def test_stops_when_the_budget_is_spent_and_the_cli_says_why(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "until_separated = 0.9999\nmax_matches = 4")
    db = tmp_path / "b.db"
    result = CliRunner().invoke(app, ["tournament", "run", str(path), "--db", str(db), "-q"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "Stopped after 4 matches, the budget spent" in result.output and "not ordered at 0.9999" in result.output
    fixtures, _, status = stored(db)
    assert len(fixtures) == 4 and status == "finished"


def test_a_duplicate_tournament_adds_whole_groups_within_its_budget(tmp_path: Path) -> None:
    path = tournament_file(tmp_path, "until_separated = 0.9999\nmax_matches = 10", form="duplicate")
    outcome = run(path, tmp_path / "d.db")
    fixtures, _, _ = stored(tmp_path / "d.db")
    assert len(fixtures) == 9 and "budget spent" in outcome.stop_reason  # rounds of 3 rotations: a fourth would pass 10


class Interrupt(Exception):
    """Raised from the progress hook to stop a run midway, as a kill would."""


def test_a_resumed_run_ends_as_an_uninterrupted_one_without_drawing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tournament_file(tmp_path, "until_separated = 0.9999\nmax_matches = 8")
    run(path, tmp_path / "whole.db")
    assert len(stored(tmp_path / "whole.db")[0]) == 8

    def stop_after_four(event: str, done: int, total: int, running: int, faults: int, nodes: Mapping[str, int]) -> None:
        if event == "match" and done == 4:
            raise Interrupt

    with pytest.raises(ExceptionGroup) as caught:  # the matches run in a task group
        run(path, tmp_path / "cut.db", progress=stop_after_four)
    assert caught.value.subgroup(Interrupt) is not None
    assert stored(tmp_path / "cut.db")[2] == "stopped"

    def no_drawing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a stored schedule is drawn again")

    monkeypatch.setattr(runner, "round_robin", no_drawing)
    resumed = run(path, tmp_path / "cut.db", resume=True)
    assert resumed.failed == 0 and resumed.stop_reason
    assert stored(tmp_path / "cut.db") == stored(tmp_path / "whole.db")


def test_resume_reads_the_stored_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(
        'name = "plain"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\nrounds = 2\n'
        '[rules]\nlimit = 5\n[seats]\nkind = "inprocess"\ntrusted = true\n',
        encoding="utf-8",
    )
    drawn: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        drawn.append(1)
        return round_robin(*args, **kwargs)

    monkeypatch.setattr(runner, "round_robin", counting)
    run(path, tmp_path / "p.db")
    run(path, tmp_path / "p.db", resume=True)
    assert drawn == [1]


def test_a_ladder_stops_when_its_neighbours_are_ordered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tournament_file(tmp_path, "until_separated = 0.6", name="lad", form="ladder", extra="matches = 60\n")
    reads: list[int] = []
    fixtures = Store.fixtures

    def counted(self: Store, tournament_id: int) -> Any:
        reads.append(tournament_id)
        return fixtures(self, tournament_id)

    monkeypatch.setattr(Store, "fixtures", counted)
    outcome = run(path, tmp_path / "l.db")
    monkeypatch.undo()
    drawn, ratings, status = stored(tmp_path / "l.db", "lad")
    assert status == "finished" and "ordered at 0.6" in outcome.stop_reason
    assert len(drawn) < 60 and unseparated(ratings, [f"{b}@builtin" for b in BOTS], 0.6) == []
    assert len(reads) <= 2, "the ladder reads its schedule once, not every wave"
