"""Issue 28: matches with remote bots refereed by referee processes of their own, outside the league process.

Against a real ``polignac league serve`` with ``[referees] processes = 2``: remote SDK bots play
their matches on a referee process (their Play streams reach its port, not the league's), each
result stored once; a referee process killed with SIGKILL mid-match, or one that hangs
(SIGSTOP), costs its match (recorded aborted, once, with a record that says why), its bots are
told (``Withdrawn``), and a new process takes its slot while the ladder goes on.  In this
process: a referee process refuses a match past ``matches_per_process``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

import pytest

from polignac import Ruleset
from polignac_arena.league.config import load_league_config
from polignac_arena.league.entrants import Entrant, LeagueFixture
from polignac_arena.league.limits import GrpcLimits
from polignac_arena.league.referee_orders import (
    NotPlayed,
    NotPlayedKind,
    Offer,
    PlayOrder,
    Ready,
    SeatAnswer,
    WorkerSettings,
)
from polignac_arena.seats import SeatKind, SeatLimits
from polignac_arena.settings import TimeControl
from polignac_arena.statuses import MatchStatus
from tests.league.remote_harness import WAIT_S, RemoteLeague, record_lines, remote_league
from tests.referee.helpers import run

pytestmark = pytest.mark.slow
T = TypeVar("T")


def _referee_addresses(league: RemoteLeague) -> list[str]:
    """The referee processes' addresses, from the server's banner (the line after the one the harness read)."""
    line = league.server.lines.get(timeout=WAIT_S)
    assert line is not None
    found = re.search(r"their matches are refereed on (.+) \(", line)
    assert found, f"no referee addresses in the banner: {line!r}"
    return found.group(1).split()


def _children(pid: int) -> list[int]:
    """The pids of the referee processes the league started."""
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "polignac_arena.league.referee_worker"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _tcp_table() -> list[list[str]]:
    """The rows of this network namespace's TCP sockets, IPv4 and IPv6 (gRPC's sockets are dual-stack)."""
    return [line.split() for name in ("tcp", "tcp6") for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]]


def _connected_ports() -> set[int]:
    """The remote ports of the established TCP connections."""
    return {int(fields[2].rpartition(":")[2], 16) for fields in _tcp_table() if fields[3] == "01"}


def _result_rows(league: RemoteLeague) -> dict[str, int]:
    """How many results the store holds for each match."""
    conn = sqlite3.connect(load_league_config(league.config).store)
    try:
        rows = conn.execute("SELECT match_id, COUNT(*) FROM results GROUP BY match_id").fetchall()
    finally:
        conn.close()
    return {str(match_id): int(count) for match_id, count in rows}


async def _three_bots(league: RemoteLeague) -> None:
    for name in ("ann", "ben", "cal"):
        await league.sdk(name)


def test_remote_match_is_refereed_in_a_referee_process_with_one_result(tmp_path: Path) -> None:
    workers = run(_refereed_in_a_process(tmp_path), timeout=180)
    for pid in workers:  # the league stopped: so did its referee processes
        assert not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes()


async def _refereed_in_a_process(tmp_path: Path) -> list[int]:
    async with remote_league(tmp_path, limit=20, referees="processes = 2") as league:
        addresses = _referee_addresses(league)
        assert len(addresses) == 2 and league.server.grpc not in addresses
        workers = _children(league.server.process.pid)
        assert len(workers) == 2
        await _three_bots(league)
        bot = league.bots[0]
        welcome = await bot.event("welcome")
        ports = {int(address.rpartition(":")[2]) for address in addresses}
        seen = await _wait_for(lambda: ports & _connected_ports() or bot.seen("match_ended", match_id=welcome["match_id"]))
        assert isinstance(seen, set), "no Play stream reached a referee process"
        result = await league.final(welcome["match_id"])
        assert result.status is MatchStatus.FINISHED
        assert league.result_rows(welcome["match_id"]) == [("finished", 1)]
        # The next matches go on, each stored once.
        await league.final(result.match_id.replace("000000", "000001"))
        assert all(count == 1 for count in _result_rows(league).values())
        assert _children(league.server.process.pid) == workers  # the same processes referee every match
    return workers


@pytest.mark.parametrize("how", ["kill", "hang"])
def test_a_referee_process_lost_mid_match_aborts_it_once_and_is_replaced(tmp_path: Path, how: str) -> None:
    victim = run(_lost_mid_match(tmp_path, how), timeout=240)
    assert not Path(f"/proc/{victim}/cmdline").exists() or not Path(f"/proc/{victim}/cmdline").read_bytes()


async def _lost_mid_match(tmp_path: Path, how: str) -> int:
    async with remote_league(tmp_path, limit=20, referees=f"processes = 2\nhang_s = {5 if how == 'hang' else 60}") as league:
        _referee_addresses(league)
        workers = _children(league.server.process.pid)
        await _three_bots(league)
        bot = league.bots[0]
        welcome = await bot.event("welcome")
        match_id = welcome["match_id"]
        await bot.decisions(3, match_id)
        ports = _connected_ports()
        assert _children(league.server.process.pid) == workers, league.server.stderr()
        victim = next(pid for pid in workers if _listens_on(pid) & ports)
        os.kill(victim, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        try:
            result = await league.final(match_id)
            assert result.status is MatchStatus.ABORTED
            assert league.result_rows(match_id) == [("aborted", 1)]  # one final result, unrated
            reason = record_lines(result, "result")[0]["reason"]
            assert "referee process" in reason, reason
            for each in league.bots:  # every bot of the match is told
                await each.event("withdrawn", match_id=match_id)
            # A new process takes the slot, and the next match is played to its end.
            replacement = await _wait_for(lambda: set(_children(league.server.process.pid)) - set(workers) or None)
            assert len(replacement) == 1
            after = await bot.event("welcome", timeout_s=WAIT_S * 2, match_id=_next(match_id))
            assert (await league.final(after["match_id"], timeout_s=WAIT_S * 2)).status is MatchStatus.FINISHED
            assert all(count == 1 for count in _result_rows(league).values())
        finally:
            if how == "hang":
                with contextlib.suppress(ProcessLookupError):  # killed by the pool already, and reaped
                    os.kill(victim, signal.SIGCONT)
    return victim


def _next(match_id: str) -> str:
    stem, _, number = match_id.rpartition("-")
    return f"{stem}-{int(number) + 1:06d}"


def _listens_on(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return {int(fields[1].rpartition(":")[2], 16) for fields in _tcp_table() if fields[3] == "0A" and fields[9] in inodes}


async def _wait_for(probe: Callable[[], T | None]) -> T:
    async with asyncio.timeout(WAIT_S):
        while not (found := probe()):
            await asyncio.sleep(0.01)  # /proc offers no event to wait on
    return found


# -- one referee process, driven through its pipe by the test -------------------------------------


def _start_worker(max_matches: int) -> tuple[subprocess.Popen[bytes], Connection]:
    ours, theirs = socket.socketpair()
    command = [sys.executable, "-m", "polignac_arena.league.referee_worker", str(theirs.fileno())]
    process = subprocess.Popen(command, pass_fds=[theirs.fileno()])
    theirs.close()
    conn = Connection(ours.detach())
    conn.send(
        WorkerSettings(
            host="127.0.0.1",
            port=0,
            tls_cert=None,
            tls_key=None,
            limits=GrpcLimits(),
            ipv6_prefix=64,
            trusted_proxies=(),
            max_matches=max_matches,
            seat_kind=SeatKind.PROCESS,
        )
    )
    return process, conn


def _order(match_id: str) -> PlayOrder:
    rules = Ruleset(players=3, limit=5)
    seats = tuple(Entrant(f"bot{seat}@1", f"bot{seat}") for seat in range(3))
    return PlayOrder(match_id, LeagueFixture(0, 7, seats), rules, TimeControl(), SeatLimits(), False, None, None, 0.0)


def _receive(conn: Connection) -> object:
    assert conn.poll(WAIT_S), "the referee process said nothing"
    return conn.recv()


def test_a_referee_process_refuses_matches_past_its_limit() -> None:
    process, conn = _start_worker(max_matches=2)
    try:
        assert isinstance(_receive(conn), Ready)
        offers: list[Offer] = []
        for number in range(3):
            conn.send(_order(f"m{number}"))
        refused: list[NotPlayed] = []
        while len(offers) < 6 or not refused:  # two matches hosted, three seats each offered; the third refused
            message = _receive(conn)
            if isinstance(message, Offer):
                offers.append(message)
            elif isinstance(message, NotPlayed):
                refused.append(message)
        assert [(m.match_id, m.kind) for m in refused] == [("m2", NotPlayedKind.FULL)]
        assert "limit: 2" in refused[0].detail
        assert {offer.match_id for offer in offers} == {"m0", "m1"}
        # Once a match is over (its bots declined), the room it held takes a new one.
        for offer in offers:
            if offer.match_id == "m0":
                conn.send(SeatAnswer("m0", offer.seat, False))
        ended = _receive(conn)
        while not (isinstance(ended, NotPlayed) and ended.match_id == "m0"):
            ended = _receive(conn)
        assert ended.kind is NotPlayedKind.DECLINED
        conn.send(_order("m3"))
        message = _receive(conn)
        while not isinstance(message, Offer | NotPlayed):
            message = _receive(conn)
        assert isinstance(message, Offer) and message.match_id == "m3"
    finally:
        conn.close()  # the pipe closing ends the process
        assert process.wait(timeout=WAIT_S) == 0
