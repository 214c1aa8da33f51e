"""``polignac league rerun MATCH --version V`` against a real league server, ``rerun-status`` and the operator's ``test-matches``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from tests.league.league_process import LeagueProcess
from tests.league.test_test_runs import MATCH, Arena

runner = CliRunner()


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def _token_file(folder: Path, token: str) -> Path:
    path = folder / "token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


def test_an_author_asks_for_a_test_match_from_the_command_line_and_follows_it(tmp_path: Path) -> None:
    arena = Arena(tmp_path, "reruns_per_hour = 10")
    arena.league.store.set_setting("paused", "1")  # the ladder plays nothing meanwhile: the test match alone
    arena.league.store.close()
    ada = _token_file(tmp_path / "league", arena.tokens["ada"])
    (tmp_path / "bob").mkdir()
    bob = _token_file(tmp_path / "bob", arena.tokens["bob"])
    with LeagueProcess.start(arena.config) as server:
        asked = polignac("league", "rerun", MATCH, "--version", "2", "--hand", "2", "--server", server.web, "--token-file", str(ada))
        assert asked.exit_code == 0, asked.output + server.stderr()
        assert f"test match 1: ada-bot@2 in {MATCH} from hand 2 (seats: ada-bot@2, bob-bot@1, carol-bot@1): queued" in asked.output
        assert f"{server.web}/me/reruns/1" in asked.output
        assert "test match 1: finished: places [" in asked.output
        out = tmp_path / "test.jsonl"
        status = polignac("league", "rerun-status", "1", "--server", server.web, "--token-file", str(ada), "--record", str(out))
        assert status.exit_code == 0 and "finished" in status.output, status.output
        header = json.loads(out.read_text().splitlines()[0])
        assert header["rerun_of"] == MATCH and header["first_hand"] == 2
        assert polignac("replay", "verify", str(out)).exit_code == 0
        other = polignac("league", "rerun-status", "1", "--server", server.web, "--token-file", str(bob))
        assert other.exit_code == 1 and "another author's" in other.output
        refused = polignac("league", "rerun", MATCH, "--version", "ada-bot@2", "--server", server.web, "--token-file", str(bob))
        assert refused.exit_code == 1 and "another author's version" in refused.output
        nowait = polignac("league", "rerun", MATCH, "--version", "1", "--server", server.web, "--token-file", str(ada), "--no-wait")
        assert nowait.exit_code == 0 and "test match 2:" in nowait.output and "finished" not in nowait.output
    listed = polignac("league", "test-matches", "--config", str(arena.config))
    assert listed.exit_code == 0 and f"1  ada  ada-bot@2 in {MATCH} from hand 2  finished" in listed.output
    shown = polignac("league", "test-matches", "--config", str(arena.config), "--show", "1")
    assert shown.exit_code == 0 and "Hand 2, dealer seat" in shown.output and "Hand 1," not in shown.output
    missing = polignac("league", "test-matches", "--config", str(arena.config), "--show", "99")
    assert missing.exit_code == 2 and "test match 99 does not exist" in missing.output


def test_option_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    no_server = polignac("league", "rerun", MATCH, "--version", "2")
    assert no_server.exit_code == 2 and "give --server URL" in no_server.output
    hand_alone = polignac("league", "rerun", MATCH, "--hand", "2", "--config", str(tmp_path / "league.toml"))
    assert hand_alone.exit_code == 2 and "--server and --hand go with --version" in hand_alone.output
    bad_hand = polignac("league", "rerun", MATCH, "--version", "2", "--hand", "0", "--server", "http://127.0.0.1:9")
    assert bad_hand.exit_code == 2 and "Traceback" not in bad_hand.output
    far = polignac("league", "rerun", MATCH, "--version", "2", "--server", "http://example.org")
    assert far.exit_code == 1 and "plain http:// is only for this machine" in far.output
