"""``polignac league submit`` against a real HTTPS server (uvicorn on 127.0.0.1, certificates from trustme) and a fake league."""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme
import uvicorn
from fastapi import FastAPI
from typer.testing import CliRunner

from polignac_arena.archive import pack_folder
from polignac_arena.cli import app
from polignac_arena.league.author_api import author_router
from polignac_arena.league.authoring import SubmissionState
from polignac_arena.league.submit import LeagueClient, SubmitError, find_token, server_url
from tests.league.fake_league import FakeLeague, Step

CAP = 8192
TOML = 'name = "{name}"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
ACCEPTED: list[Step] = [
    (SubmissionState.VALIDATING, ("reading bot.toml", "ok  bot.toml: ada-bot@1.0 (python, grpc)"), ""),
    (SubmissionState.VALIDATING, ("smoke match: classic to 5 points against 3 random bots (process seats)",), ""),
    (SubmissionState.ACTIVE, ("ok  smoke match: 27 decisions", "accepted: ada-bot@1.0 is ready for the ladder"), "accepted ada-bot@1.0"),
]
REFUSED: list[Step] = [
    (SubmissionState.VALIDATING, ("reading bot.toml", "smoke match: classic"), ""),
    (
        SubmissionState.REFUSED,
        ("FAILED  smoke match: 0 decisions; faults: crashed 1", "\x1b[2Jcannot find my weights"),
        "smoke match: crashed 1",
    ),
]


@dataclass
class Server:
    url: str
    league: FakeLeague
    ca: Path
    other_ca: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The author API with a fake league, served over TLS on a port the OS chose, in a thread."""
    folder = tmp_path_factory.mktemp("tls")
    ca, other = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    other.cert_pem.write_to_path(str(folder / "other-ca.pem"))
    league = FakeLeague(scripts={"ada-bot": ACCEPTED, "crash-bot": REFUSED})
    api = FastAPI()
    api.include_router(author_router(league, max_upload_bytes=CAP))
    config = uvicorn.Config(
        api, ssl_keyfile=str(folder / "key.pem"), ssl_certfile=str(folder / "cert.pem"), log_level="warning", lifespan="off"
    )
    uvicorn_server = uvicorn.Server(config)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # connections wait in the backlog until the server accepts them: no need to wait for it to start
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield Server(f"https://127.0.0.1:{listener.getsockname()[1]}", league, folder / "ca.pem", folder / "other-ca.pem")
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
        listener.close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("tok-ada\n")
    path.chmod(0o600)
    return path


def bot(tmp_path: Path, name: str = "ada-bot", padding: int = 0) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(TOML.format(name=name))
    (folder / "bot.py").write_text("print('hello')\n")
    if padding:
        (folder / "weights.bin").write_bytes(os.urandom(padding))
    return folder


def submit(*args: str | Path, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    done = runner.invoke(app, ["league", "submit", *map(str, args)], env={"POLIGNAC_LEAGUE_TOKEN": None, **(env or {})})
    return done.exit_code, done.stdout, done.stderr


def test_an_accepted_submission_shows_its_validation_and_label(server: Server, tmp_path: Path, token_file: Path) -> None:
    folder = bot(tmp_path)
    code, out, err = submit(folder, "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 0, out + err
    lines = out.splitlines()
    assert re.fullmatch(rf"uploaded {re.escape(str(folder))} as a version of ada-bot: submission \d+, queued", lines[0]), lines[0]
    assert [line.strip() for line in lines[1:-1]] == [line for _, step, _ in ACCEPTED for line in step]
    assert lines[-1] == "accepted: ada-bot@1.0 (active)"
    assert server.league.uploads[-1] == pack_folder(folder)
    assert "warning" not in err


def test_a_refused_submission_exits_1_with_its_reason(server: Server, tmp_path: Path, token_file: Path) -> None:
    code, out, err = submit(bot(tmp_path, "crash-bot"), "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 1, out + err
    assert "  cannot find my weights" in out.splitlines()  # the screen-clearing escape taken out
    assert out.splitlines()[-1] == "refused: smoke match: crashed 1"


def test_a_bad_token_is_refused(server: Server, tmp_path: Path) -> None:
    code, _, err = submit(bot(tmp_path), "--server", server.url, "--ca", server.ca, env={"POLIGNAC_LEAGUE_TOKEN": "tok-eve"})
    assert code == 1
    assert "polignac: error: the server refused the API token: not a valid API token" in err


def test_a_server_with_a_certificate_from_another_ca_is_refused(server: Server, tmp_path: Path, token_file: Path) -> None:
    calls, folder = len(server.league.calls), bot(tmp_path)
    for trust in (["--ca", str(server.other_ca)], []):
        code, _, err = submit(folder, "--server", server.url, "--token-file", token_file, *trust)
        assert code == 1
        assert "polignac: error: TLS: cannot verify the server at https://127.0.0.1:" in err and "certificate" in err, err
    assert "--ca FILE" in err
    assert len(server.league.calls) == calls  # the token was never sent


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (lambda league: league.owners.update({"ada-bot": "bob"}), "polignac: error: refused: bot 'ada-bot' belongs to another author"),
        (lambda league: league.over_limit.add("ada"), "the limit: retry after 1801 s"),
    ],
    ids=["another-authors-bot", "limit"],
)
def test_refusals_before_the_upload_are_explained(
    server: Server, tmp_path: Path, token_file: Path, setup: object, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.league, "owners", dict(server.league.owners))
    monkeypatch.setattr(server.league, "over_limit", set())
    setup(server.league)  # type: ignore[operator]  # the parameter's callables, typed object by pytest's params
    code, _, err = submit(bot(tmp_path), "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 1
    assert words in err


def test_an_upload_over_the_servers_cap_is_refused(server: Server, tmp_path: Path, token_file: Path) -> None:
    code, _, err = submit(bot(tmp_path, padding=2 * CAP), "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 1
    assert "polignac: error: the upload is too big for this server: the upload has " in err and f"more than the {CAP} allowed" in err


def test_an_unreachable_server_is_explained(tmp_path: Path, token_file: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    code, _, err = submit(bot(tmp_path), "--server", f"https://127.0.0.1:{port}", "--token-file", token_file)
    assert code == 1
    assert f"polignac: error: cannot reach the league server at https://127.0.0.1:{port}" in err


def test_a_token_is_no_command_line_argument(tmp_path: Path) -> None:
    code, _, err = submit(bot(tmp_path), "--server", "https://league.example.org", "--token", "tok-ada")
    assert code == 2
    assert "no such option: --token" in err.lower()


def test_a_token_file_others_may_read_gets_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("tok-ada\n")
    path.chmod(0o644)
    warnings: list[str] = []
    assert find_token(path, {}, warnings.append) == "tok-ada"
    assert warnings == [f"{path} may be read by other users (mode 644): anyone who reads it can upload as you; chmod 600 {path}"]


def test_the_token_comes_from_the_file_then_the_environment_then_the_config(tmp_path: Path, token_file: Path) -> None:
    config = tmp_path / "xdg" / "polignac" / "league.toml"
    config.parent.mkdir(parents=True)
    config.write_text('token = "tok-config"\n')
    config.chmod(0o600)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "POLIGNAC_LEAGUE_TOKEN": "tok-env"}
    assert find_token(token_file, env, print) == "tok-ada"
    assert find_token(None, env, print) == "tok-env"
    assert find_token(None, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, print) == "tok-config"
    with pytest.raises(SubmitError, match="no API token: give --token-file FILE, set POLIGNAC_LEAGUE_TOKEN"):
        find_token(None, {"HOME": str(tmp_path / "nobody")}, print)
    config.write_text("colour = 1\n")
    with pytest.raises(SubmitError, match="has no 'token'"):
        find_token(None, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, print)
    with pytest.raises(SubmitError, match="is not an API token"):
        find_token(None, {"POLIGNAC_LEAGUE_TOKEN": "two words"}, print)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://league.example.org", "plain http:// is only for this machine"),
        ("ftp://league.example.org", "must be an https:// URL"),
        ("league.example.org", "must be an https:// URL"),
    ],
)
def test_a_server_url_must_be_https_unless_on_loopback(url: str, words: str) -> None:
    with pytest.raises(SubmitError, match=words):
        server_url(url)
    assert server_url("http://127.0.0.1:8000").port == 8000 and server_url("http://[::1]:1").host == "::1"


def test_a_folder_that_is_no_submission_is_refused_before_connecting(tmp_path: Path, token_file: Path) -> None:
    folder = bot(tmp_path)
    os.symlink("/etc/passwd", folder / "passwd")
    code, _, err = submit(folder, "--server", "https://league.example.org", "--token-file", token_file)
    assert code == 1
    assert "is not a submission to upload" in err and "absolute symbolic link" in err


def test_an_upload_refused_while_the_league_is_busy_is_tried_again(server: Server, tmp_path: Path) -> None:
    server.league.busy = 2
    waits: list[float] = []
    told: list[str] = []
    data = pack_folder(bot(tmp_path))
    with LeagueClient(server.url, "tok-ada", ca=server.ca) as client:
        status = client.upload("ada-bot", data, on_wait=lambda seconds, why: told.append(why), sleep=waits.append)
    assert status.state is SubmissionState.QUEUED and waits == [1.0, 1.0]
    assert all("the league is receiving 4 upload(s)" in line for line in told)
    server.league.over_limit.add("ada")  # an hour's wait is told, not waited for
    try:
        with LeagueClient(server.url, "tok-ada", ca=server.ca) as client, pytest.raises(SubmitError, match="retry after 1801 s"):
            client.upload("ada-bot", data, sleep=waits.append)
    finally:
        server.league.over_limit.discard("ada")
    assert waits == [1.0, 1.0]


def league_cli(*args: str | Path) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, ["league", *map(str, args)], env={"POLIGNAC_LEAGUE_TOKEN": None})
    return done.exit_code, done.stdout, done.stderr


def test_an_author_lists_and_retires_their_bots(server: Server, tmp_path: Path, token_file: Path) -> None:
    code, out, err = submit(bot(tmp_path), "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 0, out + err
    code, out, err = league_cli("bots", "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 0, err
    assert "ada-bot  ada-bot@1.0 (upload)" in out
    code, out, err = league_cli("retire", "ada-bot", "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 0, err
    assert out.startswith("retired: ada-bot  no active version")
    code, _, err = league_cli("retire", "ada-bot", "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 1 and "refused: the bot 'ada-bot' has no active version to retire" in err
    code, _, err = league_cli("retire", "bob-bot", "--server", server.url, "--token-file", token_file, "--ca", server.ca)
    assert code == 1 and "refused: the bot 'bob-bot' belongs to another author" in err
    code, _, err = league_cli("retire", "ada-bot", "--server", "https://league.example.org", "--token-file", tmp_path / "nothing")
    assert code == 1 and "cannot read" in err
