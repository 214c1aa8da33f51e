"""Helpers for tests of a real ``polignac league serve`` process: its league file, seeded bots, its URLs, polls.

The server runs as a subprocess (``python -m polignac_arena.cli league serve``) and prints its
URLs on stdout.  Bots that are not what a test is about are seeded straight into its store
before it starts, through the league's own calls (:class:`~polignac_arena.league.serve.League`):
stored, validated and active, as an accepted upload is, without paying for a smoke match.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx

from polignac_arena.archive import pack_folder
from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League
from polignac_arena.league.store import LeagueStore, Version
from polignac_arena.seats import SeatKind, launcher_for

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random"
DEADLINE_S = 60.0
"""How long a poll waits for what it waits for (generous: the machine may be loaded)."""
T = TypeVar("T")


def sandbox_missing() -> str | None:
    """Why process seats would not run in bubblewrap here (None when they would)."""
    launcher = launcher_for(SeatKind.PROCESS)
    if type(launcher).__name__ != "SandboxLauncher":
        return "process seats are not sandboxed here"
    return launcher.unavailable()


def seats_section() -> str:
    """The league file's [seats]: the real sandbox, trusted process seats only where bubblewrap is missing."""
    return 'kind = "process"' if sandbox_missing() is None else 'kind = "process"\ntrusted = true'


def write_league(folder: Path, top: str = "", **sections: str) -> Path:
    """A league file in ``folder``: three players, short matches, loopback addresses the OS chooses; ``top`` and ``sections`` added.

    ``sections`` maps a section's name to its lines (``drain='deadline_s = 2'``); given ones
    replace the defaults of [rules], [seats], [http], [grpc] and [referees] (one: remote bots play on the league's own
    address, where a test's proxies stand; tests of the referee processes set more).
    """
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "rules": "limit = 10",
        "seats": seats_section(),
        "http": 'address = "127.0.0.1:0"',
        "grpc": 'address = "127.0.0.1:0"',
        "referees": "processes = 1",
    }
    tables.update(sections)
    text = f"table_size = 3\n{top.strip()}\n" + "".join(f"[{name}]\n{body.strip()}\n" for name, body in tables.items())
    path = folder / "league.toml"
    path.write_text(text)
    return path


def bot_folder(
    parent: Path, name: str, *, code: str | None = None, extra: str = "", declared: str | None = None, build: Sequence[str] = ()
) -> Path:
    """A copy of sample_bots/random named ``name`` (its bot.toml says ``declared`` when given), with ``extra`` in a file.

    ``code`` replaces its bot.py; ``build`` is its build step (run in its validation only).
    """
    folder = parent / name
    shutil.copytree(RANDOM_BOT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text().replace('name = "random"', f'name = "{declared or name}"', 1)
    (folder / "bot.toml").write_text(toml + (f"build = {json.dumps(list(build))}\n" if build else ""))
    if code is not None:
        (folder / "bot.py").write_text(code)
    if extra:
        (folder / "extra.txt").write_text(extra)
    return folder


def add_author(config: Path, name: str) -> str:
    """Add an author to the league's store (as ``polignac league user add`` does); their token."""
    with LeagueStore(load_league_config(config).store) as store:
        return store.add_author(name)[1]


def seed_active(config: Path, author: str, folders: Iterable[Path], *, hours_ago: float = 2.0) -> list[Version]:
    """Store each folder as an upload of ``author`` (``hours_ago``: out of the hourly limit's window) and accept it.

    The calls are the league's own (its archive store, ``add_upload``, ``finish_validation``
    with its priors): the versions are what an accepted upload leaves, minus the smoke match.
    """
    league = League(load_league_config(config))
    try:
        when = datetime.now(UTC) - timedelta(hours=hours_ago)
        versions = []
        for folder in folders:
            sha = league.archives.add(pack_folder(folder), league.caps)
            version, _ = league.store.add_upload(author, folder.name, sha, league.limits, now=when)
            league.store.start_validation(version.id)
            versions.append(league.store.finish_validation(version.id, True, "accepted", league.tournament_id, league.prior))
        return versions
    finally:
        league.store.close()


@dataclass
class LeagueProcess:
    """A running ``polignac league serve``: its process, its URLs, its stderr."""

    config: Path
    process: subprocess.Popen[str]
    web: str = ""
    grpc: str = ""
    web_security: str = ""
    """What the server's banner says of the web address: "TLS" or "plaintext: loopback only"."""
    grpc_security: str = ""
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    err_path: Path | None = None
    http: httpx.Client | None = None

    @classmethod
    def start(cls, config: Path, *options: str) -> LeagueProcess:
        """Start the server on ``config`` (with more command-line ``options``); returns once it printed where it serves."""
        err = config.parent / f"serve-{time.monotonic_ns()}.err"
        command = [sys.executable, "-m", "polignac_arena.cli", "league", "serve", "--config", str(config), *options]
        with err.open("w") as err_file:
            process = subprocess.Popen(command, cwd=config.parent, stdout=subprocess.PIPE, stderr=err_file, text=True)
        server = cls(config, process, err_path=err)
        threading.Thread(target=_pump, args=(process.stdout, server.lines), daemon=True).start()
        deadline = time.monotonic() + DEADLINE_S
        while not (server.web and server.grpc):
            try:
                line = server.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                server.kill()
                raise AssertionError(f"the league did not start in {DEADLINE_S} s: {server.stderr()}") from None
            if line is None:
                raise AssertionError(f"the league ended before it served (exit {process.wait()}): {server.stderr()}")
            if found := re.search(r"authors' API on (\S+?)/? \((.+)\)$", line):
                server.web, server.web_security = found.group(1), found.group(2)
            if found := re.search(r"remote bots connect to (\S+) \((.+)\)$", line):
                server.grpc, server.grpc_security = found.group(1), found.group(2)
        return server

    def stderr(self) -> str:
        return self.err_path.read_text()[-4000:] if self.err_path is not None and self.err_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        if self.http is not None:
            self.http.close()
            self.http = None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=DEADLINE_S)

    def terminate(self, timeout: float = DEADLINE_S) -> int:
        """SIGTERM; its exit code (fails when it does not end within ``timeout``)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"SIGTERM did not stop the league in {timeout} s: {self.stderr()}") from None

    def stdout_rest(self) -> str:
        """What it printed after its URLs (once it has ended)."""
        out = []
        while (line := self.lines.get(timeout=DEADLINE_S)) is not None:
            out.append(line)
        return "".join(out)

    def status(self, client: httpx.Client | None = None) -> dict[str, Any]:
        """GET /api/league/status (on one kept-alive connection, as a page polls: the league limits new connections per address)."""
        if client is None:
            if self.http is None:
                self.http = httpx.Client(timeout=10)
            client = self.http
        answer = client.get(f"{self.web}/api/league/status", timeout=10)
        answer.raise_for_status()
        result: dict[str, Any] = answer.json()
        return result

    def wait_for(self, what: str, probe: Callable[[], T | None], deadline_s: float = DEADLINE_S) -> T:
        """Poll ``probe()`` until it gives something other than None or False; fails if the server ends first."""
        deadline = time.monotonic() + deadline_s
        while True:
            found = probe()
            if found is not None and found is not False:
                return found
            if self.process.poll() is not None:
                raise AssertionError(f"the league ended (exit {self.process.returncode}) before {what}: {self.stderr()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {deadline_s} s: {self.stderr()}")
            time.sleep(0.05)

    def __enter__(self) -> LeagueProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    assert stream is not None
    for line in stream:
        lines.put(line)
    lines.put(None)


def versions_by_state(status: dict[str, Any]) -> dict[str, list[str]]:
    """The labels of every version in a status answer, by state."""
    found: dict[str, list[str]] = {}
    for bot in status["bots"]:
        for version in bot["versions"]:
            found.setdefault(version["state"], []).append(version["label"])
    return found


def processes_mentioning(text: str) -> list[str]:
    """The command lines of the living processes (zombies left out) that mention ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z" and text in cmdline:
            found.append(cmdline)
    return found
