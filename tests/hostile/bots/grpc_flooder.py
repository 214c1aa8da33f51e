"""Hostile (gRPC): says Hello, then writes Decisions that answer nothing as fast as the stream takes them.

Once welcomed it also tries to open more connections to its socket and writes to stderr
without pause, for the whole match.  (Started before its own stream, the connection flood
would take its seat's few connections and keep the bot from joining at all.)
"""

import os
import socket
import threading
from collections.abc import Iterator

import grpc

from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub

address = os.environ["POLIGNAC_ADDRESS"]


def connections() -> None:
    path = address[len("unix:") :]
    held: list[socket.socket] = []
    while True:
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(path)
            held.append(conn)
        except OSError:
            if held:
                held.pop(0).close()


def stderr() -> None:
    while True:
        try:
            os.write(2, b"flood " * 16 + b"\n")
        except OSError:
            return


def requests() -> Iterator[pb.PlayRequest]:
    yield pb.PlayRequest(hello=pb.Hello(protocol_version="1.0", bot_name="grpc-flooder", bot_version="1"))
    stale = pb.PlayRequest(decision=pb.Decision(request_id=1, card="7S"))
    while True:
        yield stale


channel = grpc.insecure_channel(address)
stub = RefereeServiceStub(channel)
flooding = False
try:
    for _response in stub.Play(requests(), metadata=(("authorization", f"Bearer {os.environ['POLIGNAC_TOKEN']}"),)):
        if not flooding:
            flooding = True
            for target in (connections, connections, stderr):
                threading.Thread(target=target, daemon=True).start()
except grpc.RpcError:
    pass
threading.Event().wait()  # stay alive (and flooding stderr) until the arena stops the seat
