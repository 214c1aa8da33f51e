"""A gRPC bot written from docs/protocol.md and the .proto alone: no SDK, plain grpcio.

It plays the first legal option and prints every payload kind it receives, one per line,
on stderr, so a test can check the conversation the docs promise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from queue import Queue

import grpc

from polignac._proto.polignac.v1 import referee_pb2 as pb

_DONE = object()


def requests(outbox: Queue[object]) -> Iterator[pb.PlayRequest]:
    """Messages to send, until the reader says the match ended."""
    while True:
        item = outbox.get()
        if item is _DONE:
            return
        assert isinstance(item, pb.PlayRequest)
        yield item


def main() -> int:
    channel = grpc.insecure_channel(os.environ["POLIGNAC_ADDRESS"], options=[("grpc.max_receive_message_length", 1 << 20)])
    play = channel.stream_stream(
        "/polignac.v1.RefereeService/Play",
        request_serializer=pb.PlayRequest.SerializeToString,
        response_deserializer=pb.PlayResponse.FromString,
    )
    outbox: Queue[object] = Queue()
    outbox.put(pb.PlayRequest(hello=pb.Hello(protocol_version="1", bot_name="doc-client", bot_version="1")))
    metadata = (("authorization", f"Bearer {os.environ['POLIGNAC_TOKEN']}"),)
    ended = False
    try:
        for response in play(requests(outbox), metadata=metadata):
            kind = response.WhichOneof("payload")
            print(f"payload {kind} events {len(response.events)}", file=sys.stderr, flush=True)
            if kind == "decision_request":
                request = response.decision_request
                decision = pb.Decision(request_id=request.request_id)
                if request.kind == pb.DECISION_KIND_CARD:
                    decision.card = request.legal_cards[0]
                else:
                    decision.contract = request.legal_contracts[0]
                outbox.put(pb.PlayRequest(decision=decision))
            elif kind == "match_ended":
                ended = True
    except grpc.RpcError as error:
        print(f"stream error {error.code()} {error.details()}", file=sys.stderr, flush=True)
        return 1
    finally:
        outbox.put(_DONE)
    return 0 if ended else 2


if __name__ == "__main__":
    sys.exit(main())
