"""A real ``polignac league serve`` with remote bots only, each behind a fault proxy of its own: the network tests' harness.

Each bot is the Python SDK (in the test's event loop) or the Node doc-conformance client
(``tests/doc_client/client.js``, a process); either way it reaches the league only through
its own :class:`~tests.faultproxy.FaultProxy`, so a test breaks one bot's path as a real
network would and watches what every bot, and the league's record, make of it.  A bot's
``events`` say what happened to it, in a form shared by both clients: ``online``,
``assignment``, ``welcome``, ``decision``, ``withdrawn``, ``paused``, ``match_ended``,
``gave_up`` and ``offline``, each with its ``match_id`` or text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from polignac import Card, Contract, PlayerView, Ruleset
from polignac.bot import Bot
from polignac.bot.base import MatchInfo
from polignac.bot.league import ChannelSecurity, play_in_league
from polignac.events import Event, Forfeited
from polignac.statuses import MatchStatus
from polignac.values import Decision
from polignac_arena.league.config import load_league_config
from polignac_arena.league.store import LeagueStore
from polignac_arena.store.records import StoredResult
from tests.faultproxy import FaultProxy
from tests.league.league_process import LeagueProcess, add_author, bot_folder, processes_mentioning, seed_active, write_league

ROOT = Path(__file__).resolve().parents[2]
DOC_CLIENT = ROOT / "tests" / "doc_client"
WAIT_S = 60.0
"""How long a wait for something a bot should see lasts before the test fails (the machine may be loaded)."""


@dataclass(frozen=True)
class NodeModules:
    """Where the doc client's packages are: the folder to give node as NODE_PATH."""

    path: Path


def node_modules(tmp_path_factory: pytest.TempPathFactory) -> NodeModules:
    """The doc client's ``node_modules``: the one ``.ci/run`` installed next to it, else installed from its lock file into a
    temp folder (npm's cache first, as the JavaScript sample's build); skips without node and npm."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the Node doc client cannot run here")
    here = DOC_CLIENT / "node_modules"
    env = {**os.environ, "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
    if here.is_dir():
        check = subprocess.run(["npm", "ls", "--omit=dev", "--offline"], cwd=DOC_CLIENT, capture_output=True, env=env, timeout=120)
        if check.returncode == 0:
            return NodeModules(here)
    folder = tmp_path_factory.mktemp("doc_client")
    for name in ("package.json", "package-lock.json"):
        shutil.copy(DOC_CLIENT / name, folder / name)
    npm = ["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"]
    done = subprocess.run(npm, cwd=folder, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, f"{' '.join(npm)} failed for the doc client:\n{done.stdout}\n{done.stderr}"
    return NodeModules(folder / "node_modules")


class RemoteBot:
    """One remote bot of a test, behind its own proxy; what happened to it is in :attr:`events`."""

    def __init__(self, name: str, proxy: FaultProxy) -> None:
        self.name = name
        self.proxy = proxy
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def note(self, event: str, **fields: Any) -> None:
        self.events.append({"event": event, "at": time.monotonic(), **fields})
        self._changed.set()

    def seen(self, event: str, **fields: Any) -> list[dict[str, Any]]:
        """The events of kind ``event`` whose fields include ``fields``."""
        return [e for e in self.events if e["event"] == event and all(e.get(k) == v for k, v in fields.items())]

    async def wait_for(self, what: str, probe: Callable[[], Any], timeout_s: float = WAIT_S) -> Any:
        """Wait until ``probe()`` is truthy (checked after each event of this bot); returns it."""
        async with asyncio.timeout(timeout_s):
            while not (found := probe()):
                self._changed.clear()
                await self._changed.wait()
        return found

    async def event(self, event: str, timeout_s: float = WAIT_S, **fields: Any) -> dict[str, Any]:
        """The first event of kind ``event`` with ``fields`` (waits for it)."""
        found: list[dict[str, Any]] = await self.wait_for(f"{event} {fields}", lambda: self.seen(event, **fields), timeout_s)
        return found[0]

    async def decisions(self, count: int, match_id: str, timeout_s: float = WAIT_S) -> None:
        """Wait until the bot has answered ``count`` requests in ``match_id``."""
        await self.wait_for(f"{count} decisions", lambda: len(self.seen("decision", match_id=match_id)) >= count, timeout_s)

    async def stop(self) -> None:
        raise NotImplementedError


class _SdkPlayer(Bot):
    """The SDK bot of a test: the first legal option; it tells its :class:`SdkBot` what it sees."""

    def __init__(self, owner: SdkBot, name: str, decline: str | None) -> None:
        self.owner = owner
        self.name = name
        self.version = "1.0"
        self.decline = decline
        self.match_id = ""

    def accepts(self, rules: Ruleset) -> str | None:
        return self.decline

    def on_match_start(self, info: MatchInfo) -> None:
        self.match_id = info.match_id
        self.owner.note("welcome", match_id=info.match_id, seat=info.seat)

    def declare(self, view: PlayerView) -> Contract:
        return view.legal_contracts[0]

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]

    def decide(self, view: PlayerView) -> Decision:
        decision = super().decide(view)
        self.owner.note("decision", match_id=self.match_id)
        return decision

    def on_event(self, event: Event) -> None:
        if isinstance(event, Forfeited):
            self.owner.note("forfeited", match_id=self.match_id, seat=event.seat)

    def on_match_end(self, places: tuple[int, ...], totals: tuple[int, ...], status: MatchStatus) -> None:
        self.owner.note("match_ended", match_id=self.match_id, status=status.value)


_STATUS_EVENTS = (
    (re.compile(r"^online as (?P<label>\S+)"), "online"),
    (re.compile(r"^playing match (?P<match_id>\S+) \(seat (?P<seat>\d+)\)"), "assignment"),
    (re.compile(r"^declining match (?P<match_id>\S+): (?P<reason>.*)"), "declined"),
    (re.compile(r"^match (?P<match_id>\S+) withdrawn before it began: (?P<reason>.*)"), "withdrawn"),
    (re.compile(r"^paused: (?P<reason>.*)"), "paused"),
    (re.compile(r"^match (?P<match_id>\S+): (?P<reason>.*)"), "gave_up"),
    (re.compile(r"^offline \((?P<reason>.*)\)"), "offline"),
    (re.compile(r"^the match stream broke"), "stream_broke"),
)


class SdkBot(RemoteBot):
    """A bot on the Python SDK's league mode (:func:`polignac.bot.league.play_in_league`), in the test's event loop."""

    def __init__(self, name: str, proxy: FaultProxy, token: str, *, decline: str | None = None, ca: Path | None = None) -> None:
        super().__init__(name, proxy)
        self.player = _SdkPlayer(self, name, decline)
        self.statuses: list[str] = []
        security = ChannelSecurity.of(ca) if ca is not None else ChannelSecurity.of(insecure=True)
        self.task = asyncio.ensure_future(play_in_league(self.player, proxy.address, token, security, on_status=self._status))

    def _status(self, text: str) -> None:
        self.statuses.append(text)
        for pattern, event in _STATUS_EVENTS:
            if found := pattern.match(text):
                self.note(event, text=text, **found.groupdict())
                return

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


class NodeBot(RemoteBot):
    """The Node doc-conformance client, a process of its own; its stdout's JSON lines are its events."""

    def __init__(self, name: str, proxy: FaultProxy, process: asyncio.subprocess.Process) -> None:
        super().__init__(name, proxy)
        self.process = process
        self.stderr = b""
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, name: str, proxy: FaultProxy, token: str, modules: NodeModules, args: Sequence[str] = ()) -> NodeBot:
        env = {**os.environ, "NODE_PATH": str(modules.path), "POLIGNAC_LEAGUE_TOKEN": token}
        env.pop("POLIGNAC_TLS_CA", None)
        process = await asyncio.create_subprocess_exec(
            "node",
            str(DOC_CLIENT / "client.js"),
            "--league",
            proxy.address,
            "--name",
            name,
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(name, proxy, process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                fields = json.loads(line)
                event = fields.pop("event")
                fields.pop("t", None)
                self.note(event, **fields)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
        with contextlib.suppress(ProcessLookupError):
            _, self.stderr = await asyncio.wait_for(self.process.communicate(), WAIT_S)
        await asyncio.gather(self._reader, return_exceptions=True)


@dataclass
class RemoteLeague:
    """A league process with remote bots only (``table_size`` of them play each match), and the bots the test adds."""

    folder: Path
    config: Path
    server: LeagueProcess
    tokens: dict[str, str]
    bots: list[RemoteBot] = field(default_factory=list)
    proxies: list[FaultProxy] = field(default_factory=list)
    ca: Path | None = None
    """The certificate authority the SDK bots trust (None: the league serves plaintext on loopback)."""

    async def proxy(self, local: str | None = None) -> FaultProxy:
        proxy = FaultProxy(self.server.grpc, seed=len(self.proxies), local=local)
        await proxy.start()
        self.proxies.append(proxy)
        return proxy

    async def sdk(self, name: str, *, decline: str | None = None, author: str = "ada", local: str | None = None) -> SdkBot:
        """A bot on the SDK, through a proxy of its own (whose connections come from ``local``)."""
        bot = SdkBot(name, await self.proxy(local), self.tokens[author], decline=decline, ca=self.ca)
        self.bots.append(bot)
        return bot

    async def node(self, name: str, modules: NodeModules, *args: str, author: str = "ada") -> NodeBot:
        """A bot on the Node doc client (``args`` its options), through a proxy of its own."""
        bot = await NodeBot.start(name, await self.proxy(), self.tokens[author], modules, args)
        self.bots.append(bot)
        return bot

    async def client(self, kind: str, name: str, modules: NodeModules | None, *node_args: str, decline: str | None = None) -> RemoteBot:
        """The bot under test: ``kind`` ``sdk`` or ``node``."""
        if kind == "sdk":
            return await self.sdk(name, decline=decline)
        assert modules is not None
        return await self.node(name, modules, *node_args)

    def result(self, match_id: str) -> StoredResult | None:
        """The match's stored result, with its record (None while it has none)."""
        with LeagueStore(load_league_config(self.config).store) as store:
            return store.arena.get_result(match_id)

    def result_rows(self, match_id: str) -> list[tuple[str, int]]:
        """Every result stored for the match, final or not: (status, final)."""
        with contextlib.closing(sqlite3.connect(load_league_config(self.config).store)) as conn:
            rows = conn.execute("SELECT status, final FROM results WHERE match_id = ? ORDER BY id", (match_id,)).fetchall()
        return [(str(status), int(final)) for status, final in rows]

    async def final(self, match_id: str, timeout_s: float = WAIT_S) -> StoredResult:
        """Wait for the match's result to be stored."""
        async with asyncio.timeout(timeout_s):
            while (result := await asyncio.to_thread(self.result, match_id)) is None:
                await asyncio.sleep(0.1)  # the store offers no event to wait on; each look is a cheap read
        return result

    async def restart(self, *, kill: bool) -> None:
        """Stop the server (``kill -9`` or SIGTERM) and start it again on the same files; the proxies follow it."""
        if kill:
            await asyncio.to_thread(self.server.kill)
        else:
            await asyncio.to_thread(self.server.terminate)
        self.server = await asyncio.to_thread(LeagueProcess.start, self.config)
        for proxy in self.proxies:
            proxy.retarget(self.server.grpc)


def seat_of(result: StoredResult, name: str) -> int:
    """The seat a bot named ``name`` held in ``result``."""
    return next(seat for seat, label in enumerate(result.seats) if label.split("@")[0] == name)


def record_lines(result: StoredResult, kind: str, seat: int | None = None) -> list[dict[str, Any]]:
    """The record's lines of ``kind`` (of ``seat`` when given)."""
    assert result.record is not None, f"match {result.match_id} has no record"
    return [line for line in result.record if line["type"] == kind and (seat is None or line.get("seat") == seat)]


@contextlib.asynccontextmanager
async def remote_league(
    folder: Path,
    *,
    grace_s: float = 10,
    reply_ms: int = 10_000,
    limit: int = 10,
    grpc: str = "",
    referees: str = "processes = 1",
    executor: str = 'kind = "local"',
    tls: tuple[Path, Path, Path] | None = None,
    uploaded: Sequence[str] = (),
    builds: Mapping[str, Sequence[str]] | None = None,
) -> AsyncIterator[RemoteLeague]:
    """A started league of three-seat tables, one match at a time (``grpc``: more lines of its ``[grpc]``, ``referees`` its
    ``[referees]``, ``executor`` its ``[executor]``, ``tls`` its certificate, key and the authority its SDK bots trust;
    ``uploaded``: copies of the random sample bot by these names, accepted versions of author ``house``, ``builds`` the
    build step of some, never run by the league);
    every bot, proxy and process is stopped on the way out, and nothing of the league is left running."""
    more = {"tls": f'cert = "{tls[0]}"\nkey = "{tls[1]}"'} if tls is not None else {}
    config = write_league(
        folder,
        "parallel = 1",
        rules=f"limit = {limit}",
        time="move_ms = 1000\nbank_ms = 10000\nstartup_ms = 10000",
        remote=f"reattach_grace_s = {grace_s:g}\nreply_ms = {reply_ms}\ndecline_pause_s = 30\npause_after = 3\npause_s = 300",
        drain="deadline_s = 0",
        grpc=f'address = "127.0.0.1:0"\n{grpc}',
        referees=referees,
        executor=executor,
        **more,
    )
    tokens = {author: add_author(config, author) for author in ("ada", "bob")}
    if uploaded:
        add_author(config, "house")
        seed_active(config, "house", [bot_folder(folder / "bots", name, build=(builds or {}).get(name, ())) for name in uploaded])
    server = await asyncio.to_thread(LeagueProcess.start, config)
    league = RemoteLeague(folder, config, server, tokens, ca=tls[2] if tls is not None else None)
    try:
        yield league
    finally:
        await asyncio.gather(*(bot.stop() for bot in league.bots), return_exceptions=True)
        await asyncio.gather(*(proxy.stop() for proxy in league.proxies), return_exceptions=True)
        if league.server.process.poll() is None:
            await asyncio.to_thread(league.server.terminate)
        leftovers = processes_mentioning(str(folder))
        assert not leftovers, f"still running after the test: {leftovers}"
