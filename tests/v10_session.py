"""A client of protocol 1.0, byte for byte: recorded against the referee of 1.0, replayed against today's.

The session (``tests/data/v1_0_session.json``) is four raw gRPC clients that say protocol
``"1"`` or ``"1.0"`` in a classic match, every byte each one sent and received.  Seat 0
misbehaves as a 1.0 client might: the card text ``2C`` (no card in 1.0: MALFORMED), a card
it holds but may not play (ILLEGAL) and an answer with a stale request_id (STALE); seat 1
declares capot.  It was recorded with the referee of commit 8ee2076 (before any 1.1 field),
from a checkout of that commit::

    PYTHONPATH=/tmp/base/sdk:/tmp/base/server python tests/v10_session.py tests/data/v1_0_session.json

:func:`replay` plays the same clients against a referee, sending what they sent (with the
request ids the new referee chose) and reading what it answers with the 1.0 schema saved in
the session, as a 1.0 client reads it.  Only the standard library, grpc, protobuf and the
referee's public API are used, so this file runs against both versions.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SEED = 20_261_201
MATCH_ID = "v1-0-session"
RULES = {"variant": "classic", "limit": 6, "max_faults": 5}
VERSIONS = ("1", "1.0", "1", "1.0")
"""What each seat says in its Hello."""
CLOCK_MS = (60_000, 60_000, 60_000)
"""move_ms, bank_ms, startup_ms: so long that no bank is ever drawn on, and the requests stay the same."""
_PLAY = "/polignac.v1.RefereeService/Play"

Message = Any
Schema = dict[str, type[Message]]
"""Message classes of a saved referee.proto by name: ``PlayRequest``, ``PlayResponse``, ``Decision``."""


def schema_of(serialized_file: bytes) -> Schema:
    """The message classes of a saved referee.proto, in a pool of their own (apart from today's classes)."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(descriptor_pb2.FileDescriptorProto.FromString(serialized_file))
    names = ("PlayRequest", "PlayResponse", "Decision")
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"polignac.v1.{name}")) for name in names}


async def _open(address: str, token: str) -> tuple[grpc.aio.Channel, Any]:
    channel = grpc.aio.insecure_channel(address)
    play = channel.stream_stream(_PLAY, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    return channel, play(metadata=(("authorization", f"Bearer {token}"),))


# -- recording (against the referee of 1.0) -------------------------------------------------------


def _answers(seat: int, response: Message, schema: Schema, asked: list[int]) -> list[bytes]:
    """What the recorded client of ``seat`` sends for one message: nothing, or its decision(s)."""
    request_class, decision_class = schema["PlayRequest"], schema["Decision"]
    if response.WhichOneof("payload") != "decision_request":
        return []
    request = response.decision_request
    decision = decision_class(request_id=request.request_id)
    sent = []
    if request.kind == 2:  # DECISION_KIND_CARD
        asked[0] += 1
        legal = list(request.legal_cards)
        illegal = [c for c in request.view.hand if c not in legal]
        if seat == 0 and asked[0] == 1:
            decision.card = "2C"
        elif seat == 0 and asked[0] == 2 and illegal:
            decision.card = illegal[0]
        else:
            if seat == 0 and asked[0] == 3:
                sent.append(request_class(decision=decision_class(request_id=request.request_id + 7, card=legal[0])))
            decision.card = legal[0]
    else:
        capot = 2 in request.legal_contracts and seat == 1 and request.view.hand_number == 1
        decision.contract = 2 if capot else request.legal_contracts[0]
    sent.append(request_class(decision=decision))
    return [m.SerializeToString() for m in sent]


async def _record_seat(seat: int, address: str, token: str, schema: Schema) -> list[dict[str, str]]:
    request_class, response_class = schema["PlayRequest"], schema["PlayResponse"]
    channel, call = await _open(address, token)
    log: list[dict[str, str]] = []

    async def send(data: bytes) -> None:
        log.append({"send": base64.b64encode(data).decode()})
        await call.write(data)

    hello = request_class()
    hello.hello.protocol_version = VERSIONS[seat]
    hello.hello.bot_name = f"v10-seat{seat}"
    hello.hello.bot_version = "1.0"
    await send(hello.SerializeToString())
    asked = [0]
    while True:
        data = await call.read()
        if data is grpc.aio.EOF:
            break
        log.append({"recv": base64.b64encode(data).decode()})
        for answer in _answers(seat, response_class.FromString(data), schema, asked):
            await send(answer)
    await channel.close()
    return log


async def record(out: Path) -> None:
    """Record the session against the referee on PYTHONPATH (a checkout of 8ee2076)."""
    from polignac import Ruleset
    from polignac._proto.polignac.v1 import referee_pb2
    from polignac_arena.referee import RefereeServer, TimeControl

    schema = schema_of(referee_pb2.DESCRIPTOR.serialized_pb)
    server = RefereeServer("127.0.0.1:0")
    await server.start()
    try:
        rules = Ruleset.from_dict(RULES)
        host = server.create_match(rules, SEED, TimeControl(*CLOCK_MS), match_id=MATCH_ID)
        seats = [asyncio.ensure_future(_record_seat(s, server.address, host.tokens[s], schema)) for s in range(rules.players)]
        result = await server.run_match(host)
        logs = await asyncio.gather(*seats)
    finally:
        await server.stop(grace=0.5)
    session = {
        "about": "a protocol 1.0 session recorded against the referee of commit 8ee2076: see tests/v10_session.py",
        "rules": RULES,
        "seed": SEED,
        "match_id": MATCH_ID,
        "clock_ms": list(CLOCK_MS),
        "result": {
            "status": str(result.status),
            "places": list(result.places or ()),
            "totals": list(result.totals),
            "faults": result.faults,
        },
        "schema": base64.b64encode(referee_pb2.DESCRIPTOR.serialized_pb).decode(),
        "seats": logs,
    }
    out.write_text(json.dumps(session, indent=1) + "\n", encoding="utf-8")


# -- replaying (against today's referee) ----------------------------------------------------------


def normalized(message: Message, offset: int) -> Message:
    """A received message as a 1.0 client compares it: known fields only, request ids relative, fault details aside.

    A fault's ``detail`` is a sentence for people, free to improve between versions.
    """
    copy = type(message)()
    copy.CopyFrom(message)
    copy.DiscardUnknownFields()
    kind = copy.WhichOneof("payload")
    if kind == "decision_request":
        copy.decision_request.request_id -= offset
    elif kind == "fault_notice":
        if copy.fault_notice.request_id:
            copy.fault_notice.request_id -= offset
        copy.fault_notice.detail = ""
    return copy


async def replay_seat(address: str, token: str, log: list[dict[str, str]], schema: Schema) -> tuple[list[tuple[Message, Message]], int]:
    """Replay one seat's side; returns (recorded, received) message pairs, and how many received held unknown fields."""
    request_class, response_class = schema["PlayRequest"], schema["PlayResponse"]
    channel, call = await _open(address, token)
    pairs: list[tuple[Message, Message]] = []
    offset: int | None = None
    unknown = 0
    try:
        for entry in log:
            if "send" in entry:
                data = base64.b64decode(entry["send"])
                message = request_class.FromString(data)
                if message.WhichOneof("message") == "decision":
                    assert offset is not None, "a decision before any request"
                    message.decision.request_id += offset
                    data = message.SerializeToString()
                await call.write(data)
                continue
            want = response_class.FromString(base64.b64decode(entry["recv"]))
            data = await call.read()
            assert data is not grpc.aio.EOF, f"the stream ended where the 1.0 referee sent {want}"
            got = response_class.FromString(data)
            known = type(got)()
            known.CopyFrom(got)
            known.DiscardUnknownFields()
            unknown += known.ByteSize() < len(data)  # fields of a later version, which 1.0 skips
            if offset is None and want.WhichOneof("payload") == "decision_request":
                offset = got.decision_request.request_id - want.decision_request.request_id
            pairs.append((normalized(want, 0), normalized(got, offset or 0)))
        end = await call.read()
        assert end is grpc.aio.EOF, f"the referee sent more than the 1.0 referee did: {response_class.FromString(end)}"
    finally:
        await channel.close()
    return pairs, unknown


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1])))
