"""Issue 24, points 7 to 10: who a client is, what a name is, and what the public may read.

Against a real ``polignac league serve`` over TLS: bad tokens slow down their sender without
locking out a good token from the same address (HTTP and the lobby), ``X-Forwarded-For`` is
believed only from configured proxies, a member name too long for the file system is a 400
naming it, look-alike bot names belong to the first one's owner, the public reason of a failed
build does not show its private command, and the store and archives are private files.
"""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import httpx
import pytest

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.archive import pack_folder
from polignac_arena.league.config import load_league_config
from polignac_arena.league.store import LeagueLimits, LeagueStore, name_key
from tests.league.abuse import TlsLeague, tls_league
from tests.league.league_process import DEADLINE_S, add_author, bot_folder
from tests.referee.helpers import run

UNKNOWN = "plg_0badc0de_" + "A" * 43
TOML = b'name = "longname"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsLeague]:
    folder = tmp_path_factory.mktemp("identity")
    path_owner = folder / "league.toml"
    with tls_league(folder, "parallel = 1", limits="uploads_per_hour = 100\nactive_bots = 10", drain="deadline_s = 0") as served:
        config = load_league_config(path_owner)
        with LeagueStore(config.store) as store:
            store.set_setting("paused", "1")
        yield served


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(league: TlsLeague, token: str, bot: str, data: bytes, local: str = "127.0.0.1") -> httpx.Response:
    headers = {**bearer(token), "Content-Type": "application/gzip"}
    return league.client(local).post(f"/api/league/bots/{bot}/versions", content=data, headers=headers)


# -- point 7: the bad-token throttle ----------------------------------------------------------------------------


def test_bad_tokens_from_an_address_do_not_lock_out_a_good_one_from_it(league: TlsLeague) -> None:
    good = add_author(league.path, "gil")
    client = league.client("127.0.0.21")
    for _ in range(6):
        assert client.get("/api/league/me", headers=bearer(UNKNOWN)).status_code == 401
    assert client.get("/api/league/me", headers=bearer(UNKNOWN)).status_code == 429  # the guessing is slowed down ...
    assert client.get("/api/league/me", headers=bearer(good)).json()["author"] == "gil"  # ... the right token is not


def test_bad_tokens_over_the_lobby_do_not_lock_out_a_good_one(league: TlsLeague) -> None:
    good = add_author(league.path, "lou")

    async def join(token: str, bot: str) -> grpc.StatusCode | str:
        credentials = grpc.ssl_channel_credentials(root_certificates=league.ca_pem)
        async with grpc.aio.secure_channel(league.process.grpc, credentials) as channel:
            lobby = channel.stream_stream(
                "/polignac.v1.LobbyService/Lobby",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=pb.LobbyEvent.FromString,
            )
            call = lobby(metadata=(("authorization", f"Bearer {token}"),))
            await call.write(pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name=bot, bot_version="1")))
            try:
                event = await call.read()
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            call.cancel()
            return str(event.joined.label) if event is not grpc.aio.EOF else "EOF"

    async def scenario() -> None:
        for _ in range(7):  # every stream comes from 127.0.0.1: the address is slowed down for bad tokens
            assert await join(UNKNOWN, "lou-bot") == grpc.StatusCode.UNAUTHENTICATED
        assert await join(good, "lou-bot") == "lou-bot@1"

    run(scenario(), timeout=60)


def wrong_secret(token: str) -> str:
    """``token``'s id with a secret that is not its own: a guess at that author's secret."""
    return token[:-43] + "A" * 43


def test_x_forwarded_for_is_ignored_from_clients_that_are_no_configured_proxy(league: TlsLeague) -> None:
    # From 127.0.0.1, the address uvicorn believes by default: the header must move no guess elsewhere.
    client = league.client("127.0.0.1")
    escaping = wrong_secret(add_author(league.path, "xena"))
    answers = [
        client.get("/api/league/me", headers={**bearer(escaping), "X-Forwarded-For": f"203.0.113.{n}"}).status_code for n in range(8)
    ]
    assert answers[:6] == [401] * 6 and 429 in answers[6:], answers  # a header of its own choosing does not escape the throttle
    framing = wrong_secret(add_author(league.path, "fay"))
    for _ in range(8):  # guesses "from" 127.0.0.24, in the header only
        client.get("/api/league/me", headers={**bearer(framing), "X-Forwarded-For": "127.0.0.24"})
    assert league.client("127.0.0.24").get("/api/league/me", headers=bearer(framing)).status_code == 401  # not locked out


def test_a_configured_proxy_is_believed(tmp_path: Path) -> None:
    with tls_league(tmp_path, http='address = "127.0.0.1:0"\ntrusted_proxies = ["127.0.0.25"]') as proxied:
        proxy = proxied.client("127.0.0.25")
        for _ in range(6):
            assert proxy.get("/api/league/me", headers={**bearer(UNKNOWN), "X-Forwarded-For": "203.0.113.7"}).status_code == 401
        assert proxy.get("/api/league/me", headers={**bearer(UNKNOWN), "X-Forwarded-For": "203.0.113.7"}).status_code == 429
        assert proxy.get("/api/league/me", headers={**bearer(UNKNOWN), "X-Forwarded-For": "203.0.113.8"}).status_code == 401


# -- point 8: a member name too long ----------------------------------------------------------------------------


def test_a_member_name_too_long_for_the_file_system_is_a_400_naming_it(league: TlsLeague) -> None:
    token = add_author(league.path, "len")
    name = "/".join(["p" * 200] * 25) + "/bot.py"  # 5 KB: each part within 255 bytes, the whole past PATH_MAX
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in (("bot.toml", TOML), (name, b"print(1)\n")):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    answer = upload(league, token, "longname", gzip.compress(raw.getvalue()))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error.startswith("the archive is refused: archive member 'pppp") and "more than the 1024 allowed" in error, error
    assert len(error) < 400  # the name is shown cut short


# -- point 9: look-alike names ----------------------------------------------------------------------------------


def test_a_bot_name_in_other_letter_cases_is_its_owners(league: TlsLeague) -> None:
    config = load_league_config(league.path)
    with LeagueStore(config.store) as store:
        tournament = store.arena.get_tournament(config.name)
        assert tournament is not None
        add_author(league.path, "first")
        store.claim_remote("first", "random-bot", "1", LeagueLimits(), lambda _: (25.0, 8.3), tournament.id)
    other = add_author(league.path, "second")
    answer = upload(league, other, "Random-Bot", pack_folder(bot_folder(league.path.parent / "bots", "Random-Bot")))
    assert answer.status_code == 403 and "reads as 'random-bot', another author's bot" in answer.json()["error"], answer.text
    # A name is ASCII letters, digits, '.', '_' and '-': a full-width look-alike is no name at all (the Lobby's
    # Join too); the key ownership compares is NFKC and case folded all the same.
    lookalike = "\uff32\uff41\uff4e\uff44\uff4f\uff4d-Bot"
    assert name_key(lookalike) == "random-bot"
    with LeagueStore(config.store) as store, pytest.raises(ValueError, match="a bot's name must be"):
        store.claim_remote("second", lookalike, "1", LeagueLimits(), lambda _: (25.0, 8.3), tournament.id)

    async def join() -> grpc.StatusCode:
        credentials = grpc.ssl_channel_credentials(root_certificates=league.ca_pem)
        async with grpc.aio.secure_channel(league.process.grpc, credentials) as channel:
            lobby = channel.stream_stream(
                "/polignac.v1.LobbyService/Lobby",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=pb.LobbyEvent.FromString,
            )
            call = lobby(metadata=(("authorization", f"Bearer {other}"),))
            await call.write(pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="RANDOM-BOT", bot_version="1")))
            with pytest.raises(grpc.aio.AioRpcError):
                await call.read()
            return await call.code()

    assert run(join(), timeout=60) == grpc.StatusCode.PERMISSION_DENIED


# -- point 10: what the public reads, and who may read the files ------------------------------------------------


def test_a_failed_builds_public_reason_leaves_out_its_private_command(league: TlsLeague) -> None:
    token = add_author(league.path, "pri")
    build = ["sh", "-c", "echo compiling; exit 3 # --api-key=s3cr3t-in-bot-toml"]
    answer = upload(league, token, "private", pack_folder(bot_folder(league.path.parent / "bots", "private", build=build)))
    assert answer.status_code == 202, answer.text
    submission = answer.json()["id"]

    def final() -> dict[str, Any] | None:
        body: dict[str, Any] = league.client().get(f"/api/league/submissions/{submission}", headers=bearer(token)).json()
        return body if body["final"] else None

    mine = league.process.wait_for("the validation", final, deadline_s=120)
    assert mine["state"] == "refused" and mine["reason"] == "build: the build step exited 3", mine
    assert any("s3cr3t-in-bot-toml" in line for line in mine["log"])  # the author's own log has it
    public = httpx.get(f"{league.process.web}/api/league/status", verify=league.ca, timeout=DEADLINE_S).text
    page = httpx.get(f"{league.process.web}/league", verify=league.ca, timeout=DEADLINE_S).text
    assert "private" in public and "s3cr3t" not in public and "s3cr3t" not in page


def test_the_store_and_the_archives_are_private_files(league: TlsLeague) -> None:
    config = load_league_config(league.path)
    for path in (config.store, config.store.with_name(config.store.name + "-wal")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((config.data / "archives").stat().st_mode) == 0o700
    for archive in (config.data / "archives").rglob("*.tar.gz"):
        assert stat.S_IMODE(archive.stat().st_mode) == 0o600, archive
    assert not stat.S_IMODE(config.data.stat().st_mode) & 0o044  # others may not list the versions' folder
