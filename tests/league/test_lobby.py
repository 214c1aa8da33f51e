"""LobbyService.Lobby on a real server: who may be online, and how assignments are answered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import grpc.aio
import pytest

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac.bot.stream import write
from polignac_arena.league.lobby import MAX_REASON, MAX_UNSOLICITED, MAX_WITHDRAWN, LobbyService, OnlineBots
from tests.league.lobby_helpers import FakeDirectory, LobbyClient, lobby_server, spec
from tests.referee.helpers import run


async def _refusal(client: LobbyClient, *send: pb.LobbyRequest) -> grpc.aio.AioRpcError:
    """The status that ends ``client``'s stream, after it sends ``send`` (a write may already meet it)."""
    with pytest.raises(grpc.aio.AioRpcError):
        for message in send:
            await write(client.call, message)
        while await client.read() is not None:
            pass
    code, details = await client.call.code(), await client.call.details()
    await client.close()
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


async def _online(service_bots: OnlineBots, count: int) -> None:
    while len(service_bots.online()) != count:
        await service_bots.changed()


def _among(service_bots: OnlineBots) -> set[str]:
    """Which of the names the lobby tests use are online (``names()`` only answers ``in``)."""
    return {name for name in ("mybot", "other") if name in service_bots.names()}


async def _names(service_bots: OnlineBots, names: set[str]) -> None:
    while _among(service_bots) != names:
        await service_bots.changed()


@pytest.mark.parametrize("token", [None, "", "nobody-token", "revoked-token"])
def test_a_missing_bad_or_revoked_token_is_unauthenticated(token: str | None) -> None:
    async def scenario() -> None:
        directory = FakeDirectory()  # a revoked token is one the directory no longer knows
        async with lobby_server(directory) as (_, address):
            client = LobbyClient(address, token)
            await client.open()
            join = pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="mybot", bot_version="1"))
            refused = await _refusal(client, join)
            assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "token" in (refused.details() or "")

    run(scenario())


def test_the_directory_sees_the_peer_of_a_bad_token() -> None:
    async def scenario() -> None:
        directory = FakeDirectory()
        async with lobby_server(directory, join_timeout_s=0.2) as (_, address):  # no Join comes: the token is judged at the timeout
            client = LobbyClient(address, "guess")
            await client.open()
            assert (await _refusal(client)).code() == grpc.StatusCode.UNAUTHENTICATED
            assert directory.peers and "127.0.0.1" in directory.peers[0]

    run(scenario())


def test_another_authors_bot_is_permission_denied() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client = LobbyClient(address, "alice-token")
            await client.open()
            await client.join("bobs-bot")
            refused = await _refusal(client)
            assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "'bobs-bot'" in (refused.details() or "")
            assert service.bots.online() == []

    run(scenario())


def test_a_disabled_bot_is_a_failed_precondition() -> None:
    async def scenario() -> None:
        async with lobby_server(FakeDirectory(disabled={"mybot"})) as (_, address):
            client = LobbyClient(address)
            await client.open()
            await client.join("mybot")
            assert (await _refusal(client)).code() == grpc.StatusCode.FAILED_PRECONDITION

    run(scenario())


@pytest.mark.parametrize(
    ("first", "code"),
    [
        (pb.LobbyRequest(reply=pb.AssignmentReply(match_id="m", accept=True)), grpc.StatusCode.INVALID_ARGUMENT),
        (b"\xff\xff\xff", grpc.StatusCode.INVALID_ARGUMENT),
        (pb.LobbyRequest(join=pb.Join(protocol_version="2.0", bot_name="b", bot_version="1")), grpc.StatusCode.FAILED_PRECONDITION),
        (pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="", bot_version="1")), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="a\nb", bot_version="1")), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.LobbyRequest(join=pb.Join(protocol_version="1.1", bot_name="b", bot_version="v" * 65)), grpc.StatusCode.INVALID_ARGUMENT),
    ],
    ids=["reply-first", "undecodable", "protocol-2", "empty-name", "unprintable-name", "long-version"],
)
def test_a_bad_first_message_is_refused(first: pb.LobbyRequest | bytes, code: grpc.StatusCode) -> None:
    async def scenario() -> None:
        directory = FakeDirectory()
        async with lobby_server(directory) as (service, address):
            client = LobbyClient(address)
            await client.open()
            await client.call.write(first)
            assert (await _refusal(client)).code() == code
            assert service.bots.online() == []
            assert directory.owners == {"bobs-bot": "bob"}  # nothing was claimed
            stranger = LobbyClient(address, "nobody-token")  # a bad token is told so first, whatever else is wrong
            await stranger.open()
            await stranger.call.write(first)
            assert (await _refusal(stranger)).code() == grpc.StatusCode.UNAUTHENTICATED

    run(scenario())


def test_no_join_in_time_is_deadline_exceeded() -> None:
    async def scenario() -> None:
        async with lobby_server(join_timeout_s=0.2) as (_, address):
            client = LobbyClient(address)
            await client.open()
            assert (await _refusal(client)).code() == grpc.StatusCode.DEADLINE_EXCEEDED

    run(scenario())


async def _joined(address: str, name: str = "mybot") -> tuple[LobbyClient, pb.Joined]:
    client = LobbyClient(address)
    await client.open()
    await client.join(name, "1.0")
    event = await client.read()
    assert event is not None and event.WhichOneof("event") == "joined"
    return client, event.joined


def test_an_accepted_assignment() -> None:
    async def scenario() -> None:
        async with lobby_server(reattach_grace_ms=7000) as (service, address):
            client, joined = await _joined(address)
            assert (joined.label, joined.reattach_grace_ms) == ("mybot@1.0", 7000)
            await _online(service.bots, 1)
            [bot] = service.bots.online()
            assert (bot.label, bot.name, bot.version, bot.author, bot.busy) == ("mybot@1.0", "mybot", "1.0", "alice", 0)
            assigned = asyncio.ensure_future(service.bots.assign("mybot@1.0", spec("m1")))
            event = await client.read()
            assert event is not None and event.WhichOneof("event") == "assignment"
            a = event.assignment
            assert (a.match_id, a.seat, a.seat_token, a.reply_ms, a.rules.name, a.rules.players) == (
                "m1",
                1,
                "seat-token",
                5000,
                "classic",
                4,
            )
            assert a.time_control.move_ms == 1000
            await client.reply("m1", True)
            assert await assigned is True
            assert service.bots.online()[0].busy == 1
            service.bots.finished("mybot@1.0", "m1")
            assert service.bots.online()[0].busy == 0
            await client.close()

    run(scenario())


def test_a_declined_assignment() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            assigned = asyncio.ensure_future(service.bots.assign("mybot@1.0", spec("m2")))
            event = await client.read()
            assert event is not None
            await client.reply("m2", False, "busy elsewhere " * 50)
            assert await assigned is False
            assert [b.busy for b in service.bots.online()] == [0]
            assert await service.bots.assign("nobody@1", spec("m3")) is False, "a bot that is not online"
            await client.close()

    run(scenario())


def test_an_unanswered_assignment_takes_the_bot_offline() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            assert await service.bots.assign("mybot@1.0", spec("m4", reply_ms=200)) is False
            assert service.bots.online() == []
            event = await client.read()
            assert event is not None and event.assignment.match_id == "m4"
            refused = await _refusal(client)
            assert refused.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "no answer to assignment 'm4' within 200 ms" in (refused.details() or "")
            assert "offline" in (refused.details() or "")

    run(scenario())


def test_a_closed_stream_takes_the_bot_offline() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await _online(service.bots, 1)
            await client.call.done_writing()
            await _online(service.bots, 0)
            other, _ = await _joined(address, "other")
            await _online(service.bots, 1)
            await other.close()  # a cancelled call, as when the bot's process dies
            await _online(service.bots, 0)
            assert await service.bots.assign("other@1.0", spec()) is False
            await client.close()

    run(scenario())


def test_a_second_join_of_a_label_replaces_the_first() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            first, _ = await _joined(address)
            second, _ = await _joined(address)
            refused = await _refusal(first)
            assert refused.code() == grpc.StatusCode.ABORTED
            assert "replaces" in (refused.details() or "")
            await _online(service.bots, 1)
            assigned = asyncio.ensure_future(service.bots.assign("mybot@1.0", spec("m5")))
            event = await second.read()
            assert event is not None and event.assignment.match_id == "m5"
            await second.reply("m5", True)
            assert await assigned is True
            await second.close()

    run(scenario())


def test_the_names_online_follow_joins_replacements_and_ends() -> None:
    """What each Join counts its author's active bots by: one entry per bot name, whatever its versions online."""

    async def scenario() -> None:
        async with lobby_server() as (service, address):
            assert _among(service.bots) == set()
            first, _ = await _joined(address)
            other, _ = await _joined(address, "other")
            version = LobbyClient(address)
            await version.open()
            await version.join("mybot", "2.0")
            assert (await version.read()) is not None
            await _online(service.bots, 3)
            assert _among(service.bots) == {"mybot", "other"}
            again, _ = await _joined(address)  # replaces the first stream of mybot@1.0
            assert (await _refusal(first)).code() == grpc.StatusCode.ABORTED
            await _online(service.bots, 3)
            assert _among(service.bots) == {"mybot", "other"}
            await version.close()
            await _online(service.bots, 2)
            assert _among(service.bots) == {"mybot", "other"}  # mybot@1.0 is still online
            await again.close()
            await _names(service.bots, {"other"})
            await other.close()
            await _names(service.bots, set())

    run(scenario())


def test_unsolicited_replies_end_the_stream() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            for n in range(MAX_UNSOLICITED + 1):
                await client.reply(f"nothing-{n}", True)
            refused = await _refusal(client)
            assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "answer no pending assignment" in (refused.details() or "")
            await _online(service.bots, 0)

    run(scenario())


def test_a_second_join_on_the_stream_ends_it() -> None:
    async def scenario() -> None:
        async with lobby_server() as (_, address):
            client, _ = await _joined(address)
            await client.join()
            refused = await _refusal(client)
            assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "only AssignmentReply" in (refused.details() or "")

    run(scenario())


def test_an_oversized_message_breaks_only_its_stream() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await client.reply("x" * 100_000, True)
            with pytest.raises(grpc.aio.AioRpcError):
                while await client.read() is not None:
                    pass
            await client.close()
            await _online(service.bots, 0)
            again, _ = await _joined(address)
            await again.close()

    run(scenario())


def test_the_protocol_doc_tells_what_a_lobby_client_can_observe() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
    for words in (
        "## Remote bots",
        "LobbyService/Lobby",
        f"more than {MAX_UNSOLICITED} replies",
        f"no Join within {LobbyService(FakeDirectory())._join_timeout_s:g} s",
        "`ABORTED`",
        "`PERMISSION_DENIED`",
        "reattach_grace_ms",
        "not** replayed",
        f"up to {MAX_REASON} characters",
    ):
        assert words in doc, words


def test_a_withdrawn_assignment_is_told_and_a_reply_that_crosses_it_is_not_counted() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await _online(service.bots, 1)
            for number in range(MAX_UNSOLICITED + 2):  # more than the unsolicited replies a stream may send
                match_id = f"w{number}"
                assigned = asyncio.ensure_future(service.bots.assign("mybot@1.0", spec(match_id)))
                assert (await client.read()).WhichOneof("event") == "assignment"  # type: ignore[union-attr]  # a message, not the end of the stream
                await client.reply(match_id, True)
                assert await assigned is True
                service.bots.withdraw("mybot@1.0", match_id, "seat 2 declined")
                event = await client.read()
                assert event is not None and event.WhichOneof("event") == "withdrawn"
                assert (event.withdrawn.match_id, event.withdrawn.reason) == (match_id, "seat 2 declined")
                assert service.bots.online()[0].busy == 0
                await client.reply(match_id, True)  # late: crossed the Withdrawn
            assert [bot.label for bot in service.bots.online()] == ["mybot@1.0"], "replies to withdrawn matches are not junk"
            service.bots.withdraw("nobody@1", "w0", "not online: nothing to tell")
            await client.close()

    run(scenario())


def test_a_paused_bot_hears_why_now_and_when_it_joins_again() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await _online(service.bots, 1)
            service.bots.pause("mybot@1.0", 30, "match m1 declined or not answered: no match is offered for 30 s")
            event = await client.read()
            assert event is not None and event.WhichOneof("event") == "paused"
            assert 29_000 <= event.paused.pause_ms <= 30_000 and "declined" in event.paused.reason
            await client.close()
            await _online(service.bots, 0)
            again, _ = await _joined(address)
            event = await again.read()
            assert event is not None and event.WhichOneof("event") == "paused" and event.paused.pause_ms <= 30_000
            # A pause that is over is not told, and is forgotten.
            service.bots.pause("other@1", 0, "over at once")
            assert "other@1" not in service.bots._pauses or service.bots._paused_event("other@1") is None
            assert "other@1" not in service.bots._pauses
            await again.close()

    run(scenario())


def test_a_kicked_bot_hears_why() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await _online(service.bots, 1)
            assert service.bots.kick("mybot@1.0", grpc.StatusCode.FAILED_PRECONDITION, "mybot@1.0 was retired by its author") is True
            refused = await _refusal(client)
            assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION and refused.details() == "mybot@1.0 was retired by its author"
            assert service.bots.kick("mybot@1.0", grpc.StatusCode.FAILED_PRECONDITION, "again") is False

    run(scenario())


def test_a_session_remembers_a_bounded_number_of_withdrawn_matches() -> None:
    async def scenario() -> None:
        async with lobby_server() as (service, address):
            client, _ = await _joined(address)
            await _online(service.bots, 1)
            for number in range(MAX_WITHDRAWN + 10):
                service.bots.withdraw("mybot@1.0", f"x{number}", "called off")
            (session,) = service.bots._sessions.values()
            assert len(session.withdrawn) == MAX_WITHDRAWN and session.withdrawn[-1] == f"x{MAX_WITHDRAWN + 9}"
            await client.close()

    run(scenario())
