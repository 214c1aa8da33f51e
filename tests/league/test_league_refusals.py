"""Every refusal of a real ``polignac league serve`` over TLS: the wiring of its League, not the parts' fakes.

One server (HTTPS and gRPC with certificates from trustme) serves the module; each test uses
authors of its own, and sends bad tokens from a loopback address of its own (127.0.0.N), as the
league slows down an address that sends too many.  The ladder is paused but for the test of a
remote bot that never answers.
"""

from __future__ import annotations

import io
import os
import ssl
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import httpx
import pytest
import trustme
from typer.testing import CliRunner

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot.stream import write
from polignac_arena.archive import TEMP_PREFIX, pack_folder
from polignac_arena.archive_store import ArchiveStore
from polignac_arena.cli import app
from polignac_arena.league.config import LeagueConfig, load_league_config
from polignac_arena.league.lobby import peer_address
from polignac_arena.league.serve import League
from polignac_arena.league.store import LeagueLimits, LeagueStore, LimitReached
from polignac_arena.league.tokens import Throttled
from polignac_arena.statuses import MatchStatus
from tests.league.league_process import DEADLINE_S, LeagueProcess, add_author, bot_folder, seed_active, write_league
from tests.league.lobby_helpers import LobbyClient
from tests.league.test_archive import GOOD_TOML, archive, member, zeros_after
from tests.referee.helpers import run

HOUSE = ("h1", "h2", "h3")
"""The house's bots: active (seeded), at the limit of active bots per author."""
UNKNOWN = "plg_deadbeef_" + "A" * 43


@dataclass
class Server:
    process: LeagueProcess
    path: Path
    config: LeagueConfig
    ca: ssl.SSLContext
    ca_pem: bytes
    house: str
    bots: Path
    clients: dict[str, httpx.Client] = field(default_factory=dict)

    def client(self, local: str = "127.0.0.1") -> httpx.Client:
        """An HTTPS client trusting the league's CA, connecting from the loopback address ``local``."""
        if local not in self.clients:
            transport = httpx.HTTPTransport(verify=self.ca, local_address=local)
            self.clients[local] = httpx.Client(base_url=self.process.web, transport=transport, timeout=DEADLINE_S)
        return self.clients[local]

    def author(self, name: str) -> str:
        return add_author(self.path, name)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("refusals")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    path = write_league(
        folder,
        "parallel = 1",
        rules="limit = 5",  # short matches: the remote bot's test waits for one
        tls='cert = "cert.pem"\nkey = "key.pem"',
        limits="uploads_per_hour = 3\nactive_bots = 3\narchive_mb = 1\nunpacked_mb = 1\nfiles = 100",
        remote="reply_ms = 100",
        drain="deadline_s = 0",
    )
    config = load_league_config(path)
    house = add_author(path, "house")
    seed_active(path, "house", [bot_folder(folder / "bots", name) for name in HOUSE])
    set_paused(config, True)
    context = ssl.create_default_context()
    ca.configure_trust(context)
    with LeagueProcess.start(path) as process:
        assert process.web.startswith("https://")
        served = Server(process, path, config, context, ca.cert_pem.bytes(), house, folder / "bots")
        try:
            yield served
        finally:
            for client in served.clients.values():
                client.close()
            assert process.terminate() == 0, process.stderr()


def set_paused(config: LeagueConfig, paused: bool) -> None:
    with LeagueStore(config.store) as store:
        store.set_setting("paused", "1" if paused else "0")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(server: Server, token: str, bot: str, data: bytes, local: str = "127.0.0.1") -> httpx.Response:
    headers = {**bearer(token), "Content-Type": "application/gzip"}
    return server.client(local).post(f"/api/league/bots/{bot}/versions", content=data, headers=headers)


def refused(answer: httpx.Response, status: int, words: str) -> dict[str, Any]:
    """``answer`` is the refusal ``status`` whose error holds ``words``."""
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    assert words in body["error"], body
    return body


def stored(config: LeagueConfig) -> tuple[Any, ...]:
    """What the league keeps of uploads: versions (not their states: validations go on), archives, unpacked folders, temporary files."""
    archives = ArchiveStore(config.data)
    with LeagueStore(config.store) as store:
        versions = [(v.id, v.label, v.archive) for v in store.versions()]
    unpacked = sorted(p.name for p in archives.versions.iterdir())
    temp = [p for p in config.data.rglob("*") if p.name.startswith(TEMP_PREFIX)]
    return versions, archives.kept(), unpacked, temp


# -- tokens ----------------------------------------------------------------------------------------


def test_a_missing_malformed_or_unknown_token_is_refused(server: Server) -> None:
    client = server.client("127.0.0.2")
    answer = client.get("/api/league/me")
    refused(answer, 401, "this needs an API token")
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    refused(client.get("/api/league/me", headers={"Authorization": "Basic YWRhOnB3"}), 401, "must be 'Bearer <token>'")
    for token in ("nonsense", UNKNOWN):
        answer = client.get("/api/league/me", headers=bearer(token))
        refused(answer, 401, "not a valid API token")
        assert answer.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_a_token_revoked_while_the_server_runs_is_refused_at_once(server: Server) -> None:
    token = server.author("rita")
    client = server.client("127.0.0.3")
    assert client.get("/api/league/me", headers=bearer(token)).json()["author"] == "rita"
    done = CliRunner().invoke(app, ["league", "token", "revoke", token.split("_")[1], "--config", str(server.path)])
    assert done.exit_code == 0, done.output
    refused(client.get("/api/league/me", headers=bearer(token)), 401, "not a valid API token")


def test_a_rotated_token_is_refused_and_its_successor_taken(server: Server) -> None:
    old = server.author("rob")
    client = server.client("127.0.0.4")
    assert client.get("/api/league/me", headers=bearer(old)).status_code == 200
    done = CliRunner().invoke(app, ["league", "token", "rotate", "rob", "--config", str(server.path)])
    assert done.exit_code == 0, done.output
    new = done.stdout.split()[-1]
    refused(client.get("/api/league/me", headers=bearer(old)), 401, "not a valid API token")
    assert client.get("/api/league/me", headers=bearer(new)).json()["author"] == "rob"


def test_an_address_sending_bad_tokens_is_slowed_down_and_others_are_not(server: Server) -> None:
    client = server.client("127.0.0.9")
    for _ in range(6):  # the first five are free; the sixth blocks the address for a second
        refused(client.get("/api/league/me", headers=bearer(UNKNOWN)), 401, "not a valid API token")
    # Refused unread (429) while the address is blocked; the first bad token after the block blocks it for two seconds.
    server.process.wait_for("the end of the first block", lambda: client.get("/api/league/me", headers=bearer(UNKNOWN)).status_code == 401)
    answer = client.get("/api/league/me", headers=bearer(UNKNOWN))  # the next bad one is refused unread
    refused(answer, 429, "too many bad tokens from this address")
    assert int(answer.headers["Retry-After"]) >= 1
    # A good token is not locked out by the bad ones sent from its address (tests/league/test_abuse_tokens.py).
    assert client.get("/api/league/me", headers=bearer(server.house)).status_code == 200
    assert server.client("127.0.0.10").get("/api/league/me", headers=bearer(server.house)).status_code == 200


# -- what an author may upload ------------------------------------------------------------------------


def test_another_authors_bot_is_forbidden_and_nothing_is_stored(server: Server) -> None:
    token = server.author("bob")
    before = stored(server.config)
    data = pack_folder(bot_folder(server.bots.parent / "bob", "h1"))
    refused(upload(server, token, "h1", data), 403, "the bot 'h1' belongs to another author")
    assert stored(server.config) == before


def test_an_author_at_the_limit_of_active_bots_is_refused(server: Server) -> None:
    before = stored(server.config)
    data = pack_folder(bot_folder(server.bots.parent / "house", "h4"))
    answer = upload(server, server.house, "h4", data)
    refused(answer, 429, "the limit of 3 active bot(s) per author is reached (h1, h2, h3)")
    assert "Retry-After" not in answer.headers  # waiting does not help
    assert stored(server.config) == before


def test_a_bot_toml_naming_another_bot_is_refused_unpacked_and_counts_toward_the_hourly_limit(server: Server) -> None:
    token = server.author("cara")
    before = stored(server.config)
    for number in range(3):  # refused as they arrive, from the bot.toml read out of the archive: nothing unpacked or built
        folder = bot_folder(server.bots.parent / f"cara-{number}", "c1", declared="someone-else", extra=str(number))
        refused(
            upload(server, token, "c1", pack_folder(folder)), 400, "bot.toml: this is bot 'someone-else', uploaded as a version of 'c1'"
        )
    assert stored(server.config) == before
    answer = upload(server, token, "c1", pack_folder(bot_folder(server.bots.parent / "cara-3", "c1")))
    refused(answer, 429, "the limit of 3 upload(s) per hour is reached")  # the refused uploads counted
    assert 3000 < int(answer.headers["Retry-After"]) <= 3600
    assert stored(server.config) == before


def final_state(server: Server, token: str, submission: str) -> dict[str, Any] | None:
    body: dict[str, Any] = server.client().get(f"/api/league/submissions/{submission}", headers=bearer(token)).json()
    return body if body["final"] else None


def attacks() -> list[tuple[str, bytes, int, str]]:
    """Hand-made archives a submission may not be: each with the status and words of its refusal."""
    good = [member("bot.toml", data=GOOD_TOML.encode()), member("bot.py", data=b"print(1)\n")]
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, 10 << 30
    return [
        ("traversal", archive(*good, member("../evil", data=b"x")), 400, "archive member '../evil' leads out of the submission folder"),
        ("absolute", archive(*good, member("/etc/cron.d/evil", data=b"x")), 400, "'/etc/cron.d/evil' is an absolute path"),
        ("symlink", archive(*good, member("link", tarfile.SYMTYPE, linkname="/etc/shadow")), 400, "'link' is a symbolic link"),
        ("hardlink", archive(*good, member("hard", tarfile.LNKTYPE, linkname="bot.py")), 400, "'hard' is a hard link"),
        ("device", archive(*good, member("tty", tarfile.CHRTYPE, devmajor=5, devminor=0)), 400, "'tty' is a device file"),
        ("fifo", archive(*good, member("pipe", tarfile.FIFOTYPE)), 400, "'pipe' is a named pipe"),
        ("gzip-bomb", zeros_after(header.tobuf(tarfile.GNU_FORMAT), 64), 413, "decompresses to more than"),
        ("too-big-unpacked", archive(*good, member("weights", data=bytes((1 << 20) + 1))), 413, "the limit of a submission"),
        ("oversized", os.urandom((1 << 20) + 1), 413, "more than the 1048576 allowed"),
        ("not-gzip", b"PK\x03\x04 a zip file", 400, "the upload is not a gzip'd tar"),
    ]


def test_each_archive_attack_is_refused_with_a_clear_error_and_nothing_is_stored(server: Server) -> None:
    before = stored(server.config)
    for name, data, status, words in attacks():
        token = server.author(f"eve-{name}")  # an author each: every upload counts toward its author's hourly limit
        answer = upload(server, token, "eve-bot", data)
        assert answer.status_code == status, (name, answer.text)
        assert words in answer.json()["error"], (name, answer.json())
        me = server.client().get("/api/league/me", headers=bearer(token)).json()
        assert me["bots"] == []
    assert stored(server.config) == before


def test_an_archive_made_by_hand_that_holds_a_good_bot_is_taken(server: Server) -> None:
    """The attacks above are refused for what they hold, not for being made by hand."""
    token = server.author("hal")
    raw = io.BytesIO()
    folder = bot_folder(server.bots.parent / "hal", "hal-bot")
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name)
    assert upload(server, token, "hal-bot", raw.getvalue()).status_code == 202


# -- the lobby ---------------------------------------------------------------------------------------------


@dataclass
class SecureLobbyClient(LobbyClient):
    """A Lobby stream over TLS, trusting ``ca``."""

    ca: bytes = b""

    async def open(self) -> None:
        self.channel = grpc.aio.secure_channel(self.address, grpc.ssl_channel_credentials(root_certificates=self.ca))
        lobby = self.channel.stream_stream(
            "/polignac.v1.LobbyService/Lobby",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.LobbyEvent.FromString,
        )
        metadata = (("authorization", f"Bearer {self.token}"),) if self.token is not None else ()
        self.call = lobby(metadata=metadata)


async def lobby_status(server: Server, token: str | None, bot: str = "remote-bot") -> tuple[grpc.StatusCode, str]:
    """Join the lobby as ``bot`` with ``token``: the status its stream ends with (reading past a Joined)."""
    client = SecureLobbyClient(server.process.grpc, token, ca=server.ca_pem)
    await client.open()
    try:
        with pytest.raises(grpc.aio.AioRpcError):
            await write(client.call, pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name=bot, bot_version="1")))
            while await client.read() is not None:
                pass
        return await client.call.code(), await client.call.details() or ""
    finally:
        await client.close()


def test_the_lobby_refuses_a_missing_bad_or_revoked_token(server: Server) -> None:
    token = server.author("lou")
    with LeagueStore(server.config.store) as store:
        store.revoke_token(token.split("_")[1])
    for bad in (None, "nonsense", UNKNOWN, token):
        code, details = run(lobby_status(server, bad))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "missing, unknown or revoked API token" in details, (bad, details)


def test_the_lobby_refuses_another_authors_bot(server: Server) -> None:
    token = server.author("max")
    code, details = run(lobby_status(server, token, bot="h2"))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "the bot 'h2' belongs to another author" in details


@pytest.mark.slow
def test_a_remote_bot_that_never_answers_is_taken_offline_and_the_ladder_goes_on(server: Server) -> None:
    token = server.author("sid")

    async def silent() -> tuple[grpc.StatusCode, str, list[str]]:
        client = SecureLobbyClient(server.process.grpc, token, ca=server.ca_pem)
        await client.open()
        set_paused(server.config, False)
        # Its coming online wakes the ladder; with no match played yet, the first label is the first table's anchor.
        await client.join("a-silent", "1")
        seen = []
        try:
            joined = await client.read()
            assert joined is not None and joined.joined.label == "a-silent@1"
            with pytest.raises(grpc.aio.AioRpcError):
                while (event := await client.read()) is not None:
                    seen.append(event.assignment.match_id)
            return await client.call.code(), await client.call.details() or "", seen
        finally:
            await client.close()

    try:
        code, details, offered = run(silent())
        assert code == grpc.StatusCode.DEADLINE_EXCEEDED and "within 100 ms: the bot is taken offline" in details, details
        assert len(offered) == 1
        # The offer was never a match: the ladder goes on with others, and no result, void or not, has the silent bot.
        played = server.process.wait_for("a match played without it", lambda: played_without(server, "a-silent@1"))
        assert played["status"] == MatchStatus.FINISHED and played["places"] is not None
        assert all(b["label"] != "a-silent@1" for b in server.process.status(server.client())["online"])
    finally:
        set_paused(server.config, True)


def played_without(server: Server, label: str) -> dict[str, Any] | None:
    """A finished match, once there is one, after checking that no result seats ``label``."""
    with LeagueStore(server.config.store) as store:
        tournament = store.arena.get_tournament(server.config.name)
        assert tournament is not None
        results = store.arena.list_results(tournament.id)
    assert all(label not in r.seats for r in results), [r for r in results if label in r.seats]
    done = next((r for r in results if r.status is MatchStatus.FINISHED), None)
    return None if done is None else {"status": done.status, "places": done.places, "idx": done.idx}


# -- the league's own checks -----------------------------------------------------------------------------


def test_bad_tokens_over_the_lobby_count_per_address_not_per_connection(tmp_path: Path) -> None:
    """gRPC names a peer with its port: each new connection would otherwise start a fresh count."""
    path = write_league(tmp_path)
    league = League(load_league_config(path))
    try:
        league.store.add_author("zed")
        good = league.store.new_token("zed")
        for port in range(6):
            assert league.author_of(UNKNOWN, f"ipv4:127.0.0.1:{40000 + port}") is None
        with pytest.raises(Throttled):  # the address is blocked, from whichever port (connection) it comes
            league.authenticate(UNKNOWN, peer_address("ipv4:127.0.0.1:41001"))
        assert league.author_of(good, "ipv4:127.0.0.1:41000") == "zed"  # but a good token is not locked out
        assert league.author_of(good, "ipv6:%5B::1%5D:41000") == "zed"
    finally:
        league.store.close()


def test_a_plaintext_league_on_a_public_address_is_refused_at_start(tmp_path: Path) -> None:
    path = write_league(tmp_path, http='address = "0.0.0.0:0"', grpc='address = "[::]:0"')
    command = [sys.executable, "-m", "polignac_arena.cli", "league", "serve", "--config", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_S, check=False)
    assert done.returncode == 2, done.stderr
    assert "'http.address': '0.0.0.0:0' is not a loopback address: give [tls] cert and key" in done.stderr
    assert "'grpc.address': '[::]:0' is not a loopback address" in done.stderr
    assert done.stdout == ""


def test_the_hourly_limit_says_when_the_next_upload_is_taken(tmp_path: Path) -> None:
    """Once the oldest upload that holds the limit is an hour old: with a limit lowered below the count, a later one."""
    league = League(load_league_config(write_league(tmp_path)))
    try:
        league.store.add_author("una")
        start = datetime.now(UTC) - timedelta(minutes=50)
        for minute in range(3):
            league.store.add_upload("una", "u1", "0" * 64, LeagueLimits(uploads_per_hour=10), now=start + timedelta(minutes=minute))
        for limit, waits in ((3, 10), (2, 11)):
            with pytest.raises(LimitReached) as caught:
                league.store.check_upload("una", "u1", LeagueLimits(uploads_per_hour=limit))
            assert caught.value.retry_after_s == pytest.approx(waits * 60, abs=5)
    finally:
        league.store.close()
