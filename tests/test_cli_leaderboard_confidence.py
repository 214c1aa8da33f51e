"""``polignac leaderboard`` shows how sure its order is: per row P(the bot above is stronger), rounded down, "=" below 0.95."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from typer.testing import CliRunner

from polignac import MatchStatus
from polignac_arena.cli import app
from polignac_arena.ratings import RatingEnv, stronger_probability
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store
from tests.test_web_api import _rate

BOTS = ("alpha@v1", "beta@v1", "gamma@v1", "delta@v1")


def _store(path: Path) -> None:
    """alpha always first; beta and gamma sharing second and third; delta always last."""
    fixtures = [Fixture(i, BOTS, 100 + i) for i in range(24)]
    with Store(path) as store:
        tid = store.create_tournament("t", {"format": "synthetic"}, fixtures)
        for i in range(len(fixtures)):
            places = [1, 2, 3, 4] if i % 2 else [1, 3, 2, 4]
            store.record_result(
                tid, i, match_id=f"m-{i}", status=MatchStatus.FINISHED, places=places, totals=[0, 1, 2, 3], hands=1,
                faults=[{}] * 4, rate=_rate(RatingEnv()), record=[{"type": "header"}],
            )  # fmt: skip


def test_each_row_shows_p_above_rounded_down_and_marks_rows_not_separated(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    with Store(db) as store:
        rows = store.leaderboard(None)
    result = CliRunner().invoke(app, ["leaderboard", "--db", str(db)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = {row.name: line for row in rows for line in result.stdout.splitlines() if f" {row.name} " in line}
    p_column = {name: line.split()[6] for name, line in lines.items()}  # #, bot, ver, mu, sd, rating, P>
    assert p_column[rows[0].name] == "-"  # nobody above the first row
    tied = []
    for above, row in itertools.pairwise(rows):
        assert above.mu is not None and above.sigma is not None and row.mu is not None and row.sigma is not None
        p = stronger_probability((above.mu, above.sigma), (row.mu, row.sigma))
        shown = re.fullmatch(r"(\d\.\d\d)(=?)", p_column[row.name])
        assert shown is not None, lines[row.name]
        assert float(shown.group(1)) <= p < float(shown.group(1)) + 0.01 + 1e-9
        tied.append(shown.group(2) == "=")
        assert tied[-1] == (p < 0.95)
    assert tied == [False, True, False]  # beta and gamma are not told apart; alpha and delta are
    assert "P>" in result.stdout and "faults" in result.stdout  # every column fits 80 columns
