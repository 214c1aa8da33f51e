"""``polignac ratings fit`` and polignac_arena.rating_fit: the draw rate and beta a store's results support."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac import MatchStatus, preset
from polignac_arena.cli import app
from polignac_arena.rating_fit import MIN_RESULTS, FitError, draw_rate, fit
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
SKILLS = {"a@1": 8.0, "b@1": 4.0, "c@1": 0.0, "d@1": -4.0, "e@1": -8.0}


def simulated(matches: int, noise: float, seed: int = 1) -> list[dict[str, int]]:
    """Tables of 4 from 5 bots whose performance is skill + Gaussian noise, rounded so some neighbours tie."""
    rng = random.Random(seed)
    results = []
    for _ in range(matches):
        table = rng.sample(sorted(SKILLS), 4)
        score = {name: round(SKILLS[name] + rng.gauss(0, noise)) for name in table}
        results.append({name: 1 + sum(1 for other in table if score[other] > score[name]) for name in table})
    return results


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fit") / "arena.db"
    rules = preset("classic", players=4).to_dict()
    with Store(path) as store:
        for name, results in (("noisy", simulated(40, 12.0)), ("short", simulated(10, 12.0, seed=2))):
            fixtures = [Fixture(i, tuple(r), i, i) for i, r in enumerate(results)]
            tid = store.create_tournament(name, {"rules": rules}, fixtures)
            for f, result in zip(fixtures, results, strict=True):
                store.record_result(
                    tid, f.index, match_id=f"{name}-{f.index}", status=MatchStatus.FINISHED, places=[result[s] for s in f.seats],
                    totals=[0] * 4, faults=[{}] * 4, hands=1, rate=lambda current, seats, places: {s: (25.0, 8.0) for s in seats},
                )  # fmt: skip
    return path


def test_draw_rate_is_the_share_of_tied_neighbours() -> None:
    assert draw_rate([[{"a": 1, "b": 2, "c": 2}, {"a": 1, "b": 1, "c": 1}]]) == (3 / 4, 2)
    with pytest.raises(FitError, match="no finished match"):
        draw_rate([[]])


def test_fit_prefers_a_wide_beta_for_noisy_results_and_a_narrow_one_for_clean_ones() -> None:
    grid = (2.0, 25 / 3, 20.0)
    noisy = fit([simulated(80, 14.0)], grid=grid)
    clean = fit([simulated(80, 1.5)], grid=grid)
    assert noisy.beta > clean.beta
    assert set(noisy.log_likelihood) and noisy.log_likelihood[noisy.beta] == max(noisy.log_likelihood.values())
    assert 0 < noisy.draw_rate < 0.2


def test_fit_refuses_too_few_results() -> None:
    with pytest.raises(FitError, match=f"only 10 finished matches: at least {MIN_RESULTS}"):
        fit([simulated(10, 5.0)])


def test_cli_prints_a_table_and_the_lines_to_paste(store_path: Path) -> None:
    done = run("ratings", "fit", "--db", str(store_path), "--tournament", "noisy")
    assert done.exit_code == 0, done.output
    assert "classic" in done.output and "40" in done.output
    assert "[trueskill]" in done.output and "draw_probability = " in done.output and "beta = " in done.output


def test_cli_json_pools_tournaments_of_one_ruleset(store_path: Path) -> None:
    done = run("ratings", "fit", "--db", str(store_path), "--json")
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.output)
    assert (row["ruleset"], row["players"], row["matches"]) == ("classic", 4, 50)
    assert row["beta"] > 0 and 0 <= row["draw_probability"] < 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "nowhere.db"], "no store at 'nowhere.db'"),
        (["--tournament", "nope"], "no tournament 'nope' in the store; known: noisy, short"),
        (["--tournament", "short"], "too few finished matches to fit: each ruleset and table size needs at least 30"),
    ],
)
def test_cli_refusals_are_one_line(store_path: Path, args: list[str], message: str) -> None:
    full = ["ratings", "fit", *(args if args[0] == "--db" else ["--db", str(store_path), *args])]
    done = CliRunner().invoke(app, full, env=ENV)
    assert done.exit_code != 0
    assert message in " ".join(done.output.split())
