"""Run one match among bots started as local processes, through a real referee.

A bot is named by a built-in name (``random``, ``cautious``, ``heuristic``), a
submission folder holding ``bot.toml``, or a Python file.  Each process gets
``POLIGNAC_ADDRESS`` and ``POLIGNAC_TOKEN`` in its environment, its stderr is kept (up
to a cap) for the match log, and every process is killed when the match ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from polignac import Ruleset
from polignac.bots import BUILTIN_BOTS
from polignac_arena.referee import MatchHost, MatchResult, RefereeServer, TimeControl

__all__ = ["BotSpec", "BotSpecError", "resolve_bot", "run_local_match"]

STDERR_CAP = 64 * 1024
"""Bytes of each bot's stderr kept for the match log."""


class BotSpecError(ValueError):
    """A bot argument that names no runnable bot."""


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot."""

    label: str
    command: tuple[str, ...]
    cwd: Path | None = None


def resolve_bot(text: str) -> BotSpec:
    """A built-in name, a folder with ``bot.toml`` (its ``command``), or a ``.py`` file."""
    if text in BUILTIN_BOTS:
        return BotSpec(text, (sys.executable, "-m", "polignac.bots", text))
    path = Path(text)
    if path.is_dir():
        manifest = path / "bot.toml"
        if not manifest.is_file():
            raise BotSpecError(f"{text!r} is a folder without bot.toml")
        try:
            table = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BotSpecError(f"{manifest}: not valid TOML: {exc}") from None
        command = table.get("command")
        if isinstance(command, str):
            command = shlex.split(command)
        if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
            raise BotSpecError(f"{manifest}: 'command' must be a non-empty list of strings (or a command line)")
        # A command naming python runs with this interpreter, so the SDK is importable.
        if command[0] in ("python", "python3"):
            command = [sys.executable, *command[1:]]
        return BotSpec(str(table.get("name", path.name)), tuple(command), path.resolve())
    if path.is_file() and path.suffix == ".py":
        return BotSpec(path.stem, (sys.executable, str(path.resolve())), path.resolve().parent)
    raise BotSpecError(f"no bot {text!r}: give a built-in name ({', '.join(BUILTIN_BOTS)}), a folder with bot.toml, or a .py file")


@dataclass
class _Seat:
    spec: BotSpec
    process: asyncio.subprocess.Process | None = None
    stderr: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    watcher: asyncio.Future[None] | None = None


async def _keep_stderr(stream: asyncio.StreamReader, into: bytearray) -> None:
    while chunk := await stream.read(4096):
        room = STDERR_CAP - len(into)
        if room > 0:
            into.extend(chunk[:room])


async def run_local_match(
    bots: list[BotSpec],
    rules: Ruleset,
    seed: int,
    time_control: TimeControl | None = None,
    *,
    transport: str = "unix",
    record_path: Path | None = None,
    handle_signals: bool = False,
) -> tuple[MatchResult, list[str]]:
    """Start a referee and one process per bot, play the match; returns the result and each bot's stderr.

    With ``handle_signals``, SIGTERM and SIGINT abort the match cleanly: it is recorded as aborted.
    """
    if len(bots) != rules.players:
        raise BotSpecError(f"the ruleset seats {rules.players} players but {len(bots)} bots were given")
    with tempfile.TemporaryDirectory(prefix="polignac-") as tmp:
        address = f"unix:{tmp}/referee.sock" if transport == "unix" else "127.0.0.1:0"
        server = RefereeServer(address)
        await server.start()
        remove_handlers = server.install_signal_handlers() if handle_signals else None
        seats = [_Seat(spec) for spec in bots]

        async def exit_status(seat: int) -> int | None:
            process = seats[seat].process
            return None if process is None else await process.wait()

        host = server.create_match(rules, seed, time_control, record_path=record_path, exit_status=exit_status)
        try:
            for number, seat in enumerate(seats):
                env = {**os.environ, "POLIGNAC_ADDRESS": server.address, "POLIGNAC_TOKEN": host.tokens[number]}
                seat.process = await asyncio.create_subprocess_exec(
                    *seat.spec.command,
                    cwd=seat.spec.cwd,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,  # its own process group, killed as a whole at the end
                )
                assert seat.process.stderr is not None
                seat.reader = asyncio.ensure_future(_keep_stderr(seat.process.stderr, seat.stderr))
                seat.watcher = asyncio.ensure_future(_report_exit(host, number, seat.process))
            result = await server.run_match(host)
        finally:
            await _stop_all(seats)
            await server.stop(grace=1)
            if remove_handlers is not None:
                remove_handlers()
        return result, [s.stderr.decode("utf-8", "replace") for s in seats]


async def _report_exit(host: MatchHost, seat: int, process: asyncio.subprocess.Process) -> None:
    """Tell the host when a bot's process ends, so a crash is known as one."""
    code = await process.wait()
    if host.result is None:
        host.post_exit(seat, code)


async def _stop_all(seats: list[_Seat]) -> None:
    for seat in seats:
        process = seat.process
        if process is not None:
            # The whole group: whatever the bot started goes too, even if the bot itself has exited.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
    for seat in seats:
        process = seat.process
        if process is None:
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 2)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if seat.watcher is not None:
            seat.watcher.cancel()
        if seat.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(seat.reader, 1)
