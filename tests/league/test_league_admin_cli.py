"""The operator's commands on the server's host: authors, tokens, pause, disable, rerun, export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.league.store import LeagueLimits, LeagueStore
from polignac_arena.league.tokens import parse_token
from polignac_arena.statuses import MatchStatus

runner = CliRunner()


def league_file(tmp_path: Path) -> Path:
    path = tmp_path / "league.toml"
    path.write_text('name = "test"\ntable_size = 3\n')
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_an_author_gets_a_token_once_then_lists_revokes_and_rotates(tmp_path: Path) -> None:
    config = str(league_file(tmp_path))
    code, out, _ = run("league", "user", "add", "ada", "--config", config)
    assert code == 0
    token = out.strip().splitlines()[-1]
    parts = parse_token(token)
    assert parts is not None
    with LeagueStore(tmp_path / "league.db") as store:
        assert store.author_of(token) == "ada"
    code, out, _ = run("league", "user", "list", "--config", config)
    assert code == 0 and "ada" in out and "tokens: 1" in out
    code, out, _ = run("league", "token", "list", "--config", config)
    assert code == 0 and f"plg_{parts.id}_..." in out and parts.secret not in out and "active" in out
    code, out, _ = run("league", "token", "rotate", "ada", "--config", config)
    new = out.strip().splitlines()[-1]
    assert code == 0 and parse_token(new) is not None
    code, out, _ = run("league", "token", "revoke", f"plg_{parse_token(new).id}", "--config", config)  # type: ignore[union-attr]  # a token: checked just above
    assert code == 0 and "revoked" in out
    with LeagueStore(tmp_path / "league.db") as store:
        assert store.author_of(token) is None and store.author_of(new) is None


def test_refusals_are_one_line_errors(tmp_path: Path) -> None:
    config = str(league_file(tmp_path))
    run("league", "user", "add", "ada", "--config", config)
    for args, message in (
        (("user", "add", "ada"), "already an author named 'ada'"),
        (("user", "add", "a b"), "an author's name must be"),
        (("token", "revoke", "deadbeef"), "no token with id 'deadbeef'"),
        (("token", "rotate", "bob"), "no author named 'bob'"),
        (("disable", "nobot"), "no bot named 'nobot'"),
        (("rerun", "nomatch"), "no match 'nomatch'"),
        (("export", "--format", "xml"), "invalid value for '--format': 'xml' is not one of 'csv', 'json'."),
    ):
        code, _, err = run("league", *args, "--config", config)
        assert code == 2 and message in err and err.count("\n") == 1, (args, err)
    (tmp_path / "bad.toml").write_text("colour = 1\n")
    code, _, err = run("league", "user", "list", "--config", str(tmp_path / "bad.toml"))
    assert code == 2 and "line 1: 'colour': unknown setting" in err


def test_pause_disable_rerun_and_export(tmp_path: Path) -> None:
    config = str(league_file(tmp_path))
    with LeagueStore(tmp_path / "league.db") as store:
        tid = store.arena.create_tournament("test", {"x": 1}, [])
        store.add_author("ada")
        version, _ = store.add_upload("ada", "bot", "a" * 64, LeagueLimits())
        store.finish_validation(version.id, True, "", tid, lambda _: (25.0, 8.0))
        idx = store.schedule(tid, ["a@1", "b@1", "c@1"], 5)
        store.arena.record_result(
            tid, idx, match_id="m0", status=MatchStatus.FINISHED, places=[2, 1, 3], totals=[3, 1, 9],
            faults=[{}, {"timeout": 1}, {}], hands=4, rate=lambda c, s, p: {b: (25.0, 8.0) for b in s},
        )  # fmt: skip
    assert run("league", "pause", "--config", config)[0] == 0
    assert run("league", "disable", "bot", "--config", config)[0] == 0
    with LeagueStore(tmp_path / "league.db") as store:
        assert store.setting("paused") == "1" and store.active_versions() == []
    assert run("league", "resume", "--config", config)[0] == 0
    assert run("league", "enable", "bot", "--config", config)[0] == 0
    code, out, _ = run("league", "rerun", "m0", "--config", config)
    assert code == 0 and "rerun #1 of m0" in out
    with LeagueStore(tmp_path / "league.db") as store:
        assert store.setting("paused") == "0" and len(store.active_versions()) == 1 and store.pending_reruns() == [(1, "m0")]
    code, out, _ = run("league", "export", "--config", config)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows[0]["match_id"] == "m0" and json.loads(rows[0]["places"]) == [2, 1, 3]
    code, out, _ = run("league", "export", "--format", "json", "--config", config)
    assert code == 0 and json.loads(out)[0]["faults"][1] == {"timeout": 1}
