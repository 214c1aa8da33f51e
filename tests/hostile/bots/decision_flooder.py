"""Hostile: after its Hello, writes stale Decisions as fast as it can, and listens for the end."""

import asyncio
import os
import sys

import grpc
import grpc.aio

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub


async def main() -> None:
    async with grpc.aio.insecure_channel(os.environ["POLIGNAC_ADDRESS"]) as channel:
        call = RefereeServiceStub(channel).Play(metadata=(("authorization", f"Bearer {os.environ['POLIGNAC_TOKEN']}"),))
        await call.write(pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="decision-flooder")))
        stale = pb.PlayRequest(decision=pb.Decision(request_id=1, card="7S"))
        written = 0

        async def flood() -> None:
            nonlocal written
            while True:
                await call.write(stale)
                written += 1

        flooding = asyncio.ensure_future(flood())
        try:
            while (response := await call.read()) is not grpc.aio.EOF:
                kind = response.WhichOneof("payload")
                if kind == "fault_notice" and response.fault_notice.forfeited:
                    print(f"forfeited after {written} writes", file=sys.stderr, flush=True)
                elif kind == "match_ended":
                    print(f"match ended: {response.match_ended.status}; {written} writes", file=sys.stderr, flush=True)
        except grpc.RpcError as exc:
            print(f"stream ended: {exc.code().name}", file=sys.stderr, flush=True)
        flooding.cancel()


asyncio.run(main())
