"""Connect a bot: to the referee that started it (one match), or to a league's lobby (every match it assigns)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import overload

import grpc
import grpc.aio

from polignac._proto.polignac.v1.referee_pb2_grpc import RefereeServiceStub
from polignac.bot.base import Bot
from polignac.bot.league import ChannelSecurity, play_in_league
from polignac.bot.stream import CHANNEL_OPTIONS, BotConnectionError, MatchOutcome, converse

__all__ = ["CHANNEL_OPTIONS", "BotConnectionError", "MatchOutcome", "run", "run_async"]

ADDRESS_ENV = "POLIGNAC_ADDRESS"
TOKEN_ENV = "POLIGNAC_TOKEN"
LEAGUE_TOKEN_ENV = "POLIGNAC_LEAGUE_TOKEN"
"""The author's API token for a league (never ``POLIGNAC_TOKEN``: a seat token, sent to its referee only)."""

_converse = converse
"""One Play stream's conversation (:func:`polignac.bot.stream.converse`), by the name callers of this module know."""


@overload
async def run_async(bot: Bot, address: str | None = None, token: str | None = None, *, connect_timeout: float = 10.0) -> MatchOutcome: ...


@overload
async def run_async(
    bot: Bot,
    address: None = None,
    token: str | None = None,
    *,
    connect_timeout: float = 10.0,
    server: str,
    root_certificates: bytes | str | os.PathLike[str] | None = None,
    insecure: bool = False,
    max_matches: int = 1,
) -> None: ...


async def run_async(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    *,
    connect_timeout: float = 10.0,
    server: str | None = None,
    root_certificates: bytes | str | os.PathLike[str] | None = None,
    insecure: bool = False,
    max_matches: int = 1,
) -> MatchOutcome | None:
    """Play one match for ``bot`` (address and token default to the environment), or with ``server``, a league's.

    See :func:`run`.
    """
    if server is not None:
        if address is not None:
            raise ValueError("give either address (a referee's, one match) or server (a league's lobby), not both")
        await play_in_league(bot, server, _api_token(token), ChannelSecurity.of(root_certificates, insecure), max_matches=max_matches)
        return None
    token = token or os.environ.get(TOKEN_ENV)
    address = address or os.environ.get(ADDRESS_ENV)
    if not address or not token:
        missing = " and ".join(name for name, value in ((ADDRESS_ENV, address), (TOKEN_ENV, token)) if not value)
        raise BotConnectionError(
            f"{missing} not set: the referee sets them when it starts a bot (polignac match ...);"
            f" to connect by hand, set {ADDRESS_ENV}=unix:/path/or/host:port and {TOKEN_ENV}=<seat token>"
        )
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            raise BotConnectionError(f"cannot reach the referee at {address!r} within {connect_timeout:g} s: is it running?") from None
        stub = RefereeServiceStub(channel)
        call = stub.Play(metadata=(("authorization", f"Bearer {token}"),))
        try:
            return await converse(bot, call)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise BotConnectionError(f"the referee refused this seat's token: {exc.details()}") from None
            raise BotConnectionError(f"the referee ended the stream: {exc.code().name}: {exc.details()}") from None


@overload
def run(bot: Bot, address: str | None = None, token: str | None = None) -> MatchOutcome: ...


@overload
def run(
    bot: Bot,
    address: None = None,
    token: str | None = None,
    *,
    server: str,
    root_certificates: bytes | str | os.PathLike[str] | None = None,
    insecure: bool = False,
    max_matches: int = 1,
) -> None: ...


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    *,
    server: str | None = None,
    root_certificates: bytes | str | os.PathLike[str] | None = None,
    insecure: bool = False,
    max_matches: int = 1,
) -> MatchOutcome | None:
    """Play: one match for the referee that started the bot, or every match a league assigns.

    Without ``server``: connect with ``POLIGNAC_ADDRESS`` and ``POLIGNAC_TOKEN`` (the seat
    token; the referee sets both when it starts the bot) and play one match.

    With ``server="host:port"``: join that league's lobby with your API ``token`` (else
    ``POLIGNAC_LEAGUE_TOKEN``; keep it off the command line), play
    each match it assigns, up to
    ``max_matches`` at a time on this one ``bot`` object, and go on until interrupted
    (Ctrl-C).  A league off this machine is reached over TLS: the system's certificate
    authorities, or ``root_certificates`` (PEM bytes, or a file; else the file named by
    ``POLIGNAC_TLS_CA``).  A loopback address is plaintext unless certificates are given;
    ``insecure=True`` forces plaintext, on loopback only.  A dropped connection is made
    again: a match stream within the league's reattach grace (the bot may see a request
    again), the lobby with backoff.  See docs/protocol.md, "Remote bots".

    Connection problems and refusals end the program with a one-line message on stderr and
    exit code 1.
    """
    try:
        if server is None:
            return asyncio.run(run_async(bot, address, token))
        return asyncio.run(_league(bot, server, token, root_certificates, insecure, max_matches))
    except BotConnectionError as exc:
        print(f"{bot.name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"{bot.name}: interrupted; offline", file=sys.stderr)
        return None


def _api_token(token: str | None) -> str:
    """The author's API token: ``token``, else ``POLIGNAC_LEAGUE_TOKEN``."""
    token = token or os.environ.get(LEAGUE_TOKEN_ENV)
    if not token:
        raise BotConnectionError(f"no API token: pass token=... or set {LEAGUE_TOKEN_ENV} (your league API token)")
    return token


async def _league(
    bot: Bot, server: str, token: str | None, root_certificates: bytes | str | os.PathLike[str] | None, insecure: bool, max_matches: int
) -> None:
    security = ChannelSecurity.of(root_certificates, insecure)
    await play_in_league(
        bot,
        server,
        _api_token(token),
        security,
        max_matches=max_matches,
        on_status=lambda text: print(f"{bot.name}: {text}", file=sys.stderr),
    )
