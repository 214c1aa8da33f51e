"""Hostile (gRPC): says Hello, then writes Decisions that answer nothing as fast as the stream takes them.

Meanwhile it opens extra connections to its socket and writes to stderr without pause.
"""

import os
import socket
import threading

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


def requests():
    yield pb.PlayRequest(hello=pb.Hello(protocol_version="1.0", bot_name="decision-flooder", bot_version="1"))
    stale = pb.PlayRequest(decision=pb.Decision(request_id=1, card="7S"))
    while True:
        yield stale


if address.startswith("unix:"):
    threading.Thread(target=connections, daemon=True).start()
threading.Thread(target=stderr, daemon=True).start()
channel = grpc.insecure_channel(address)
stub = RefereeServiceStub(channel)
try:
    for _response in stub.Play(requests(), metadata=(("authorization", f"Bearer {os.environ['POLIGNAC_TOKEN']}"),)):
        pass
except grpc.RpcError:
    pass
threading.Event().wait()  # stay alive (and flooding stderr) until the arena stops the seat
