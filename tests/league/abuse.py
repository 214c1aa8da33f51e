"""Helpers of the abuse tests: a league over TLS on loopback, slow clients, the server's memory.

Per-address limits count loopback addresses apart, so an attacker in these tests connects from
an address of its own (``127.0.0.N``: all of 127.0.0.0/8 reaches the server) and the
legitimate client from another.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trustme

from tests.league.league_process import DEADLINE_S, LeagueProcess, write_league


@dataclass
class TlsLeague:
    """A running league over TLS, with clients that trust it and connect from chosen loopback addresses."""

    process: LeagueProcess
    path: Path
    ca: ssl.SSLContext
    ca_pem: bytes
    clients: dict[str, httpx.Client] = field(default_factory=dict)

    @property
    def host_port(self) -> tuple[str, int]:
        host, _, port = self.process.web.removeprefix("https://").rpartition(":")
        return host, int(port)

    @property
    def grpc_host_port(self) -> tuple[str, int]:
        host, _, port = self.process.grpc.rpartition(":")
        return host, int(port)

    def client(self, local: str = "127.0.0.1") -> httpx.Client:
        """An HTTPS client from the loopback address ``local`` (one keep-alive connection, reused)."""
        if local not in self.clients:
            transport = httpx.HTTPTransport(verify=self.ca, local_address=local)
            self.clients[local] = httpx.Client(base_url=self.process.web, transport=transport, timeout=DEADLINE_S)
        return self.clients[local]

    def fresh(self, local: str = "127.0.0.1") -> httpx.Client:
        """A client of its own: its request opens a new connection (the caller closes it)."""
        return httpx.Client(
            base_url=self.process.web, transport=httpx.HTTPTransport(verify=self.ca, local_address=local), timeout=DEADLINE_S
        )

    def rss_mb(self) -> float:
        return rss_mb(self.process.process.pid)


@contextlib.contextmanager
def tls_league(folder: Path, top: str = "", **sections: str) -> Iterator[TlsLeague]:
    """Start ``polignac league serve`` over TLS (a certificate from trustme) with the league file's extra ``sections``."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    path = write_league(folder, top, tls='cert = "cert.pem"\nkey = "key.pem"', **sections)
    context = ssl.create_default_context()
    ca.configure_trust(context)
    with LeagueProcess.start(path) as process:
        league = TlsLeague(process, path, context, ca.cert_pem.bytes())
        try:
            yield league
        finally:
            for client in league.clients.values():
                client.close()


def rss_mb(pid: int) -> float:
    """A process's resident memory, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def wait_until(what: str, probe: Callable[[], bool], deadline_s: float = DEADLINE_S) -> None:
    """Poll ``probe`` (a file, a socket, /proc) until it holds; fail after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while not probe():
        assert time.monotonic() < deadline, f"no {what} within {deadline_s} s"
        time.sleep(0.05)


Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def slow_clients(
    host: str, port: int, count: int, ca: ssl.SSLContext | None, local: Callable[[int], str]
) -> tuple[list[Stream], int]:
    """Open ``count`` connections that send half a request's headers and stop (TLS when ``ca``); those open and those refused.

    ``local(n)`` is the loopback address the n-th connects from.
    """
    opened: list[Stream] = []
    refused = 0
    for number in range(count):
        try:
            reader, writer = await asyncio.open_connection(host, port, ssl=ca, local_addr=(local(number), 0))
            writer.write(b"GET /api/leaderboard HTTP/1.1\r\nHost: league\r\n")
            await writer.drain()
            opened.append((reader, writer))
        except (OSError, ssl.SSLError):
            refused += 1
    return opened, refused


async def ended(stream: Stream, timeout_s: float = DEADLINE_S) -> bool:
    """Whether the server ends the connection within ``timeout_s`` (its reader reaches its end, or a reset)."""
    reader, _ = stream
    try:
        async with asyncio.timeout(timeout_s):
            while await reader.read(1 << 16):
                pass
    except TimeoutError:
        return False
    except (OSError, ssl.SSLError):
        pass
    return True


@contextlib.asynccontextmanager
async def held(streams: list[Stream]) -> AsyncIterator[list[Stream]]:
    """Close the connections on leaving."""
    try:
        yield streams
    finally:
        for _, writer in streams:
            writer.close()
        for _, writer in streams:
            with contextlib.suppress(Exception):
                await writer.wait_closed()
