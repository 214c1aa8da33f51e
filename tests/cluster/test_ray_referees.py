"""Matches with remote bots refereed on Ray nodes: ``[referees] on_ray_nodes = true`` with the Ray executor.

A real ``polignac league serve`` joins a Ray cluster on loopback (a head of 0 CPUs and two
worker nodes of one CPU, each named as a machine would be); remote SDK bots come online through
its lobby, and their match is refereed by a Ray task on a worker node, whose address the
Assignment names: the result is stored once and names that node.  A worker node killed
mid-match (its raylet and its workers, the referee among them) costs that match only: it is recorded aborted
once, with a record that names the node, every bot is told (``Withdrawn``), and the next match is
refereed on the other node; a referee that hangs is found by the pings, killed through Ray, and
replaced the same way.  While no node can take a referee, the league serves and the match
waits for one.  A table of uploaded versions and a remote bot is refereed on a node too: its
versions travel by hash and are unpacked in the node's cache, where its seats start from; a
version whose build fails on the node forfeits its seat as crashed, and the referee goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from polignac_arena.statuses import MatchStatus
from tests.cluster.loopback import LoopbackCluster as _Cluster
from tests.cluster.loopback import loopback_cluster
from tests.league.remote_harness import WAIT_S, RemoteLeague, record_lines, remote_league
from tests.referee.helpers import run

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'; .ci/run installs it)")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow
T = TypeVar("T")

NODES = ("node-a", "node-b")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Cluster]:
    with loopback_cluster(tmp_path_factory.mktemp("ray"), NODES) as made:
        yield made


@contextlib.asynccontextmanager
async def _league(
    cluster: _Cluster,
    folder: Path,
    cpus: float = 1.0,
    tls: tuple[Path, Path, Path] | None = None,
    more: str = "",
    uploaded: tuple[str, ...] = (),
    builds: dict[str, list[str]] | None = None,
) -> AsyncIterator[RemoteLeague]:
    """A league of remote bots on the cluster, its one referee on a Ray node of ``cpus`` CPUs (``tls``, ``uploaded``,
    ``builds``: as remote_league's; ``more``: more lines of its ``[referees]``)."""
    executor = f'kind = "ray"\naddress = "{cluster.address}"'
    referees = f"on_ray_nodes = true\nprocesses = 1\ncpus_per_referee = {cpus}\n{more}"
    async with remote_league(folder, limit=40, referees=referees, executor=executor, tls=tls, uploaded=uploaded, builds=builds) as league:
        yield league


async def _three_bots(league: RemoteLeague) -> None:
    for name in ("ann", "ben", "cal"):
        await league.sdk(name)


def _referees() -> dict[int, str]:
    """The processes running a referee task now (the Ray workers whose title names it), each with its node's name."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            title = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if title.startswith("ray::") and ("serve_on_node" in title or "polignac referee" in title):
            names = [item.partition(b"=")[2].decode() for item in environ if item.startswith(b"POLIGNAC_NODE_NAME=")]
            found[int(entry)] = names[0] if names else ""
    return found


def _power_off(raylet: int) -> None:
    """Kill a node's raylet and every worker it started at once, as a machine that loses its power (its workers, left
    alone, would exit a moment later on their own: a short match could end meanwhile)."""
    workers = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == raylet:
                workers.append(int(entry))
    for pid in (raylet, *workers):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _listens_on(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on."""
    inodes = _socket_inodes(pid)
    return {int(row[1].rpartition(":")[2], 16) for row in _tcp_table() if row[3] == "0A" and row[9] in inodes}


def _my_peers() -> set[int]:
    """The remote ports of this process's established TCP connections (the bots' streams: this process is no Ray driver)."""
    inodes = _socket_inodes(os.getpid())
    return {int(row[2].rpartition(":")[2], 16) for row in _tcp_table() if row[3] == "01" and row[9] in inodes}


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    found.add(target[8:-1])
    return found


def _tcp_table() -> list[list[str]]:
    return [line.split() for name in ("tcp", "tcp6") for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]]


def _next(match_id: str) -> str:
    stem, _, number = match_id.rpartition("-")
    return f"{stem}-{int(number) + 1:06d}"


async def _wait_for(probe: Callable[[], T | None], timeout_s: float = WAIT_S) -> T:
    async with asyncio.timeout(timeout_s):
        while not (found := probe()):
            await asyncio.sleep(0.02)  # /proc offers no event to wait on
    return found


@pytest.mark.parametrize("security", ["plaintext", "tls"])
def test_a_remote_match_is_refereed_on_a_ray_node_stored_once_and_named_after_it(cluster: _Cluster, tmp_path: Path, security: str) -> None:
    run(_refereed_on_a_node(cluster, tmp_path, _certificates(tmp_path) if security == "tls" else None), timeout=150)


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A certificate for 127.0.0.1 (the league's and, read from the same path on the node, its referee's), its key and its CA."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    paths = folder / "cert.pem", folder / "key.pem", folder / "ca.pem"
    cert.cert_chain_pems[0].write_to_path(str(paths[0]))
    cert.private_key_pem.write_to_path(str(paths[1]))
    ca.cert_pem.write_to_path(str(paths[2]))
    return paths


async def _refereed_on_a_node(cluster: _Cluster, tmp_path: Path, tls: tuple[Path, Path, Path] | None) -> None:
    async with _league(cluster, tmp_path / "league", tls=tls) as league:
        assert league.server.grpc_security == ("TLS" if tls is not None else "plaintext: loopback only")
        (pid, node), *others = (await _wait_for(_referees)).items()
        assert not others and node in NODES, (pid, node, others)
        await _three_bots(league)
        bot = league.bots[0]
        match_id = (await bot.event("welcome"))["match_id"]
        # The bots' Play streams go to the referee on the node (the Assignment's address), not to the league.
        ports = _listens_on(pid)
        seen = await _wait_for(lambda: ports & _my_peers() or bot.seen("match_ended", match_id=match_id))
        assert isinstance(seen, set), "no Play stream reached the referee on the node"
        result = await league.final(match_id)
        assert result.status is MatchStatus.FINISHED
        assert result.node == node, "the result names the node whose referee played it"
        assert league.result_rows(match_id) == [("finished", 1)]
        assert record_lines(result, "result"), "the record came back from the node and was stored"
        assert (league.folder / "league-data" / "records" / f"{match_id}.jsonl").is_file(), "its file is kept by the league"
        later = await league.final(_next(match_id))
        assert later.status is MatchStatus.FINISHED and later.node == node
        assert all(rows == [("finished", 1)] for rows in map(league.result_rows, (match_id, later.match_id)))


@pytest.mark.parametrize("how", ["node killed", "referee hung"])
def test_a_referee_lost_mid_match_aborts_it_once_tells_its_bots_and_the_next_match_plays(
    cluster: _Cluster, tmp_path: Path, how: str
) -> None:
    lost: list[str] = []
    try:
        run(_lost_mid_match(cluster, tmp_path, how, lost), timeout=180)
    finally:
        for name in lost:  # the next test finds the cluster whole (Ray adds a node from the main thread only)
            cluster.cluster.remove_node(cluster.nodes.pop(name), allow_graceful=False)
            cluster.add(name)


async def _lost_mid_match(cluster: _Cluster, tmp_path: Path, how: str, lost: list[str]) -> None:
    """``node killed``: its raylet and workers at once (the link closes); ``referee hung``: SIGSTOP (the pings find it)."""
    hung = how == "referee hung"
    async with _league(cluster, tmp_path, more="hang_s = 3" if hung else "") as league:
        (pid, doomed), *_ = (await _wait_for(_referees)).items()
        await _three_bots(league)
        bot = league.bots[0]
        match_id = (await bot.event("welcome"))["match_id"]
        await bot.decisions(3, match_id)
        if hung:
            os.kill(pid, signal.SIGSTOP)
        else:
            _power_off(cluster.raylet_pid(doomed))
            lost.append(doomed)
        try:
            result = await league.final(match_id)
            assert result.status is MatchStatus.ABORTED
            assert league.result_rows(match_id) == [("aborted", 1)]  # one final result, unrated
            reason = record_lines(result, "result")[0]["reason"]
            assert f"referee on Ray node {doomed}" in reason, reason
            assert not hung or "answered nothing for 3 s" in reason, reason
            for each in league.bots:  # every bot of the match is told
                await each.event("withdrawn", match_id=match_id)
            # A new referee takes the slot (on the other node when this one is gone), and the next match is played to its end.
            after = await bot.event("welcome", timeout_s=WAIT_S * 2, match_id=_next(match_id))
            later = await league.final(after["match_id"], timeout_s=WAIT_S * 2)
            assert later.status is MatchStatus.FINISHED
            assert later.node in NODES and (hung or later.node != doomed)
            assert league.result_rows(match_id) == [("aborted", 1)] and league.result_rows(later.match_id) == [("finished", 1)]
            assert not hung or not Path(f"/proc/{pid}").exists(), "the hung referee was killed through Ray"
        finally:
            if hung:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)


def test_with_no_node_for_a_referee_the_league_serves_and_the_match_waits_for_one(cluster: _Cluster, tmp_path: Path) -> None:
    added: list[str] = []
    try:
        run(_waits_for_a_node(cluster, tmp_path, added), timeout=120)
    finally:
        for name in added:
            cluster.cluster.remove_node(cluster.nodes.pop(name), allow_graceful=False)


async def _waits_for_a_node(cluster: _Cluster, tmp_path: Path, added: list[str]) -> None:
    await _wait_for(lambda: not _referees())  # an earlier test's referee may still be ending on its node
    async with _league(cluster, tmp_path, cpus=2) as league:  # no node has 2 CPUs; the league serves all the same
        await _three_bots(league)
        for bot in league.bots:
            await bot.event("online")
        assert not _referees(), "no node could take the referee"
        assert not any(bot.seen("assignment") for bot in league.bots), "no match is offered while no referee is up"
        big = "node-big"
        added.append(big)
        cluster.add(big, cpus=2)  # Ray adds a node from the main thread only: the loop waits meanwhile
        bot = league.bots[0]
        match_id = (await bot.event("welcome"))["match_id"]
        result = await league.final(match_id)
        assert result.status is MatchStatus.FINISHED and result.node == big
        assert league.result_rows(match_id) == [("finished", 1)]


def test_a_table_of_uploaded_versions_and_a_remote_bot_is_refereed_on_a_ray_node_from_its_cache(cluster: _Cluster, tmp_path: Path) -> None:
    run(_mixed_on_a_node(cluster, tmp_path), timeout=150)


async def _mixed_on_a_node(cluster: _Cluster, tmp_path: Path) -> None:
    """Two uploaded versions and one remote bot: every table seats all three (a bot sits once at a table)."""
    async with _league(cluster, tmp_path / "league", uploaded=("up1", "up2")) as league:
        (_, node), *others = (await _wait_for(_referees)).items()
        assert not others and node in NODES, (node, others)
        bot = await league.sdk("ann")
        match_id = (await bot.event("welcome"))["match_id"]
        result = await league.final(match_id)
        assert result.status is MatchStatus.FINISHED
        assert result.node == node, "the result names the node whose referee played it"
        assert sorted(label.split("@")[0] for label in result.seats) == ["ann", "up1", "up2"]
        assert league.result_rows(match_id) == [("finished", 1)]
        faults = record_lines(result, "result")[0]["faults"]
        assert not any(counts.get("crashed") for counts in faults), f"every seat started and played: {faults}"
        # Each version was unpacked once into the node's cache, under its archive's SHA-256, and its seat started there.
        versions = cluster.cache(node) / "versions"
        names = sorted(toml.read_text().split('name = "', 1)[1].split('"', 1)[0] for toml in versions.glob("*/bot.toml"))
        assert names == ["up1", "up2"], names
        assert str(league.folder) not in "".join(map(str, versions.iterdir())), "nothing of the league's paths"
        later = await league.final(_next(match_id))
        assert later.status is MatchStatus.FINISHED and later.node == node
        assert all(rows == [("finished", 1)] for rows in map(league.result_rows, (match_id, later.match_id)))
        assert len(list(versions.iterdir())) == 2, "the next match found the versions in the cache"


def test_a_version_that_does_not_build_on_the_node_forfeits_its_seat_and_the_referee_goes_on(cluster: _Cluster, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap; .ci/run installs it)")
    run(_unbuilt_on_a_node(cluster, tmp_path), timeout=150)


async def _unbuilt_on_a_node(cluster: _Cluster, tmp_path: Path) -> None:
    """``broken``'s build step fails (the league never ran it: its versions are seeded as accepted)."""
    async with _league(cluster, tmp_path / "league", uploaded=("up1", "broken"), builds={"broken": ["false"]}) as league:
        (pid, node), *_ = (await _wait_for(_referees)).items()
        bot = await league.sdk("ann")
        match_id = (await bot.event("welcome"))["match_id"]
        for played in (match_id, _next(match_id)):  # the next match finds the failed build on the node: the same forfeit
            result = await league.final(played)
            assert result.status is MatchStatus.FINISHED and result.node == node
            seat = next(i for i, label in enumerate(result.seats) if label.startswith("broken@"))
            faults = record_lines(result, "result")[0]["faults"]
            assert faults[seat].get("crashed") == 1 and sum(counts.get("crashed", 0) for counts in faults) == 1, faults
            assert league.result_rows(played) == [("finished", 1)]
        assert _referees() == {pid: node}, "the same referee refereed both matches"
        failed = [path.read_text() for path in (cluster.cache(node) / "built").glob("*.failed")]
        assert any(text.startswith("build of broken@") and f"on node {node}: false exited 1" in text for text in failed), failed
