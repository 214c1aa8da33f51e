"""A whole league on loopback with TLS, as its users meet it.

Two authors submit bots with ``polignac league submit`` (a Python gRPC bot and the JavaScript
sample), a third connects a remote bot from a process of its own through the SDK, the ladder
plays 30 matches and more, and the JSON leaderboard rates all three.  The remote bot's
connection is cut in the middle of a match: it reattaches within the grace and does not forfeit.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.conformance.proxy import CuttableProxy
from polignac_arena.submission import Submission

trustme = pytest.importorskip("trustme")

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "polignac_arena.cli"]
MATCHES = 30
"""Rated matches the ladder plays before the test reads the leaderboard (the issue's acceptance asks for 30)."""

REMOTE_BOT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from polignac.bot import Bot, run

    signal_dir = Path(sys.argv[3])

    class Far(Bot):
        name = "far"
        version = "1.0"

        def __init__(self):
            self.matches = 0
            self.decisions = 0
            self.match_id = ""

        def on_match_start(self, info):
            self.matches += 1
            self.decisions = 0
            self.match_id = info.match_id

        def play(self, view):
            self.decisions += 1
            if self.matches == 3 and self.decisions == 3 and not (signal_dir / "cut").exists():
                # Mid-match: tell the test, which cuts the connection, then answer (on the broken stream).
                (signal_dir / "mid-match").write_text(self.match_id)
                deadline = time.monotonic() + 5
                while not (signal_dir / "cut").exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
            return min(view.legal_cards, key=lambda c: view.rules.strength[c.index])

    run(Far(), server=sys.argv[1], token=Path(sys.argv[2]).read_text().strip(), root_certificates=sys.argv[4])
    """
)


class ProxyThread:
    """A :class:`CuttableProxy` on a loop of its own, for a test that is not async."""

    def __init__(self, target: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.proxy = CuttableProxy(target)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.address = asyncio.run_coroutine_threadsafe(self.proxy.start(), self.loop).result(10)

    def cut(self) -> None:
        self.loop.call_soon_threadsafe(self.proxy.cut)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.proxy.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def token_file(folder: Path, author: str) -> Path:
    """An author added with ``polignac league user add`` (run in this process, as a CliRunner), their token in a file."""
    done = CliRunner().invoke(app, ["league", "user", "add", author, "--config", str(folder / "league.toml")], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    path = folder / f"{author}.token"
    path.write_text(done.stdout.strip().splitlines()[-1] + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def league(tmp_path: Path) -> Iterator[dict[str, Any]]:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "server.pem"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    (tmp_path / "league.toml").write_text(
        textwrap.dedent(
            """
            name = "e2e"
            table_size = 3
            parallel = 2
            [rules]
            limit = 5
            [time]
            move_ms = 2000
            [http]
            address = "127.0.0.1:0"
            [grpc]
            address = "127.0.0.1:0"
            [tls]
            cert = "server.pem"
            key = "server.pem"
            [remote]
            reattach_grace_s = 10
            [drain]
            deadline_s = 1
            [referees]
            processes = 1  # the test's proxy, which cuts the remote bot's connection, stands before the league's address
            """
        )
    )
    tokens = {author: token_file(tmp_path, author) for author in ("ada", "bob", "cy")}
    server = subprocess.Popen([*CLI, "league", "serve"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        web_line, grpc_line = server.stdout.readline(), server.stdout.readline()
        web = web_line.split(" on ")[-1].split()[0].rstrip("/")
        grpc_address = grpc_line.split(" to ")[-1].split()[0]
        assert web.startswith("https://127.0.0.1:") and grpc_address.startswith("127.0.0.1:"), (web, grpc_address, server.poll())
        # The banner names TLS for each address, loopback ones included: they speak nothing else.
        assert web_line.rstrip().endswith("(TLS)") and grpc_line.rstrip().endswith("(TLS)"), (web_line, grpc_line)
        yield {"dir": tmp_path, "web": web, "grpc": grpc_address, "ca": tmp_path / "ca.pem", "tokens": tokens, "server": server}
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()


def submit(league: dict[str, Any], author: str, bot: Path) -> subprocess.Popen[str]:
    """``polignac league submit`` of ``bot`` by ``author``, started (it ends when the version is accepted or refused)."""
    command = [*CLI, "league", "submit", str(bot), "--server", league["web"], "--token-file", str(league["tokens"][author])]
    return subprocess.Popen(
        [*command, "--ca", str(league["ca"])], cwd=league["dir"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def status(client: httpx.Client, web: str) -> dict[str, Any]:
    response = client.get(f"{web}/api/league/status")
    response.raise_for_status()
    return dict(response.json())


@pytest.mark.slow
def test_two_uploads_and_a_remote_bot_play_a_rated_ladder_over_tls(league: dict[str, Any], js_bot: Submission) -> None:
    folder: Path = league["dir"]
    ada_bot = folder / "ada-bot"
    shutil.copytree(ROOT / "sample_bots" / "random", ada_bot)
    (ada_bot / "bot.toml").write_text((ada_bot / "bot.toml").read_text().replace('name = "random"', 'name = "ada-bot"'))
    ada_second = folder / "ada-second"  # a fourth bot: a table without the remote one plays beside it
    shutil.copytree(ROOT / "sample_bots" / "cautious", ada_second)
    (ada_second / "bot.toml").write_text((ada_second / "bot.toml").read_text().replace('name = "cautious"', 'name = "ada-second"'))
    bob_bot = folder / "javascript"
    shutil.copytree(js_bot.path, bob_bot, symlinks=True)
    # The authors submit at once; the league validates one upload at a time, oldest first.
    uploads = [submit(league, author, bot) for author, bot in (("ada", ada_bot), ("ada", ada_second), ("bob", bob_bot))]
    try:
        for upload in uploads:
            out, err = upload.communicate(timeout=180)
            assert upload.returncode == 0 and "accepted" in out, out + err
    finally:
        for upload in uploads:
            if upload.poll() is None:
                upload.kill()
                upload.communicate()

    proxy = ProxyThread(league["grpc"])
    signals = folder / "signals"
    signals.mkdir()
    script = folder / "remote.py"
    script.write_text(REMOTE_BOT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")])}
    remote = subprocess.Popen(
        [sys.executable, str(script), proxy.address, str(league["tokens"]["cy"]), str(signals), str(league["ca"])],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        with httpx.Client(verify=ssl.create_default_context(cafile=str(league["ca"])), timeout=30) as client:
            deadline = time.monotonic() + 600
            cut_match = ""
            while True:
                assert remote.poll() is None, f"the remote bot ended: {remote.stdout.read() if remote.stdout else ''}"
                assert league["server"].poll() is None, "the league server ended"
                if not cut_match and (signals / "mid-match").exists():
                    cut_match = (signals / "mid-match").read_text()
                    proxy.cut()
                    (signals / "cut").write_text("")
                state = status(client, league["web"])
                if state["matches_played"] >= MATCHES and cut_match and all(m["index"] > MATCHES for m in state["live"]):
                    break
                assert time.monotonic() < deadline, f"the ladder played {state['matches_played']} matches in time"
                time.sleep(0.2)  # polling the league's API: nothing else to wait on from outside
            board = client.get(f"{league['web']}/api/leaderboard", params={"tournament": "e2e"}).json()
            cut_result = client.get(f"{league['web']}/api/matches/{cut_match}").json()
    finally:
        remote.terminate()
        remote.wait(30)
        proxy.stop()

    rated = {row["bot"]: row for row in board}
    assert {"ada-bot@1", "javascript@1", "far@1.0"} <= set(rated), board
    for label in ("ada-bot@1", "javascript@1", "far@1.0"):
        assert rated[label]["mu"] is not None and rated[label]["sigma"] < 25 / 3 and rated[label]["matches"] >= MATCHES // 3, rated[label]

    # The match whose connection was cut: the remote seat went away, came back, and did not forfeit.
    record = [json.loads(line) for line in (folder / "league-data" / "records" / f"{cut_match}.jsonl").read_text().splitlines()]
    seat = next(i for i, label in enumerate(cut_result["seats"]) if label == "far@1.0")
    kinds = [line["type"] for line in record if line.get("seat") == seat]
    assert "away" in kinds and "back" in kinds, kinds
    assert cut_result["status"] == "finished" and cut_result["faults"][seat] == {}, cut_result
    assert not any(line["type"] == "fault" and line.get("seat") == seat for line in record)
