"""Hostile: asks its referee socket for health, health watches and reflection, then plays."""

import os
import sys

import grpc

from polignac import Card, PlayerView
from polignac.bot import Bot, run

ADDRESS = os.environ["POLIGNAC_ADDRESS"]
CALLS = {
    "health check": ("/grpc.health.v1.Health/Check", "unary"),
    "health watch": ("/grpc.health.v1.Health/Watch", "stream"),
    "reflection": ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", "bidi"),
}

with grpc.insecure_channel(ADDRESS) as channel:
    for label, (method, shape) in CALLS.items():
        identity = {"request_serializer": lambda b: b, "response_deserializer": lambda b: b}
        try:
            if shape == "unary":
                channel.unary_unary(method, **identity)(b"", timeout=5)
            elif shape == "stream":
                next(iter(channel.unary_stream(method, **identity)(b"", timeout=5)))
            else:
                next(iter(channel.stream_stream(method, **identity)(iter([b"\x3a\x00"]), timeout=5)))  # list_services ""
            print(f"{label}: answered", file=sys.stderr, flush=True)
        except grpc.RpcError as exc:
            print(f"{label}: {exc.code().name}", file=sys.stderr, flush=True)


class Prober(Bot):
    name = "health-prober"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


run(Prober())
