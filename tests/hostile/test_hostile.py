"""Hostile bots against every seat kind that claims to contain them.

For each: the referee survives and finishes the match, the hostile seat gets the documented
fault outcome, the other seats' move times stay normal, and nothing of the bot is left.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from polignac import preset
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import run_local_match
from polignac_arena.seats import SeatLauncher, SeatLimits, launcher_for
from polignac_arena.submission import builtin_submission, load_submission
from tests.referee.helpers import run

BOTS = Path(__file__).parent / "bots"
CLOCK = TimeControl(move_ms=400, bank_ms=300, startup_ms=15_000)
LIMITS = SeatLimits(memory_mb=256, cpus=1.0, pids=48, cpu_seconds=30)


def launcher_or_skip(kind: str) -> SeatLauncher:
    launcher = launcher_for(kind)
    if kind == "process" and type(launcher).__name__ != "SandboxLauncher":
        pytest.skip("bubblewrap is not usable here, so process seats would not be sandboxed (apt-get install bubblewrap)")
    reason = launcher.unavailable()
    if reason is not None:
        pytest.skip(f"{kind} seats are not available: {reason}")
    return launcher


@dataclass
class Outcome:
    result: MatchResult
    stderr: str
    marker: str
    tmp: Path

    @property
    def faults(self) -> dict[str, int]:
        return self.result.faults[0]

    @property
    def place(self) -> int:
        assert self.result.places is not None
        return self.result.places[0]


def play(kind: str, name: str, tmp_path: Path, transport: str = "grpc", **params: str) -> Outcome:
    """Seat 0 is the hostile bot; the others are built-in bots in the same kind of seat."""
    launcher = launcher_or_skip(kind)
    marker = f"hostile{uuid.uuid4().hex[:12]}"
    folder = tmp_path / marker
    folder.mkdir()
    script = f"{marker}.py"  # the marker is in the command line of every process of the bot
    (folder / script).write_text((BOTS / f"{name}.py").read_text())
    (folder / "params.json").write_text(json.dumps({"marker": marker, **params}))
    manifest = f'name = "{name.replace("_", "-")}"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "{script}"]\n'
    (folder / "bot.toml").write_text(manifest + f'transport = "{transport}"\n')
    bots = [load_submission(folder), builtin_submission("random"), builtin_submission("heuristic"), builtin_submission("cautious")]
    result, stderrs = run(
        run_local_match(bots, preset("classic", limit=6), 7, CLOCK, launcher=launcher, limits=LIMITS),
        timeout=240,
    )
    outcome = Outcome(result, stderrs[0], marker, tmp_path)
    check_common(outcome, kind)
    return outcome


def check_common(outcome: Outcome, kind: str) -> None:
    result = outcome.result
    assert result.status == "finished", result
    assert replay_lines(result.record).divergence is None
    assert result.faults[1:] == [{}, {}, {}], f"polite seats were charged: {result.faults}"
    others = [cast(float, line["ms"]) for line in result.record if line["type"] == "action" and line.get("seat") != 0 and "ms" in line]
    assert others, "the other seats made no decision"
    late = sorted(others)[-len(others) // 20 or -1]  # about the 95th percentile
    assert statistics.median(others) < 150 and late < 600, (
        f"others' move times: median {statistics.median(others):.0f} ms, p95 {late:.0f} ms"
    )
    assert leftover(outcome.marker) == [], f"processes of the bot outlived the match: {leftover(outcome.marker)}"
    if kind == "docker":
        import docker

        client = docker.from_env()
        assert client.containers.list(all=True, filters={"label": f"polignac.match={result.match_id}"}) == []


def leftover(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(f"{pid}: {cmdline[:120]}")
    return found


KINDS = [pytest.param("process", id="bubblewrap"), pytest.param("docker", id="docker", marks=pytest.mark.docker)]


@pytest.mark.parametrize("kind", KINDS)
def test_sleeper_times_out_to_a_forfeit(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "sleeper", tmp_path)
    assert outcome.faults == {"timeout": 3} and outcome.place == 4


@pytest.mark.parametrize("kind", KINDS)
def test_cpu_spinner_forfeits_and_the_others_keep_their_pace(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "spinner", tmp_path)
    assert outcome.place == 4
    assert (outcome.faults.get("timeout", 0) >= 1 and sum(outcome.faults.values()) == 3) or "crashed" in outcome.faults


@pytest.mark.parametrize("kind", KINDS)
def test_memory_hog_is_stopped(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "memory_hog", tmp_path)
    assert outcome.place == 4 and ("crashed" in outcome.faults or outcome.faults.get("timeout") == 3), outcome.faults


@pytest.mark.parametrize("kind", KINDS)
def test_fork_bomb_is_capped(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "fork_bomb", tmp_path)
    children = [line for line in outcome.stderr.splitlines() if line.startswith("fork bomb:")]
    if children:  # it survived its own bomb and reported
        assert int(children[0].split()[2]) <= LIMITS.pids


@pytest.mark.parametrize("kind", KINDS)
def test_network_prober_finds_only_its_own_loopback(kind: str, tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0)
        port = listener.getsockname()[1]
        outcome = play(kind, "network_prober", tmp_path, port=str(port))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody came through
    assert "interfaces: lo\n" in outcome.stderr + "\n" and "tcp: failed" in outcome.stderr, outcome.stderr
    assert outcome.faults == {}


@pytest.mark.parametrize("kind", KINDS)
def test_writer_cannot_write_outside_its_temp_dir(kind: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outcome = play(kind, "writer", tmp_path, outside=str(outside))
    assert "wrote:" not in outcome.stderr and "tmp: writable" in outcome.stderr, outcome.stderr
    assert not outside.exists()
    assert outcome.faults == {}


@pytest.mark.parametrize("kind", KINDS)
def test_snoop_sees_no_other_seat(kind: str, tmp_path: Path) -> None:
    secret = tmp_path / "other-seat-secret.txt"
    secret.write_text("the other seat's notes")
    outcome = play(kind, "snoop", tmp_path, other_file=str(secret))
    assert "foreign tokens: 0" in outcome.stderr and "other file: refused" in outcome.stderr, outcome.stderr
    pids = int(next(line for line in outcome.stderr.splitlines() if line.startswith("pids:")).split()[1])
    assert pids < 20, "the bot sees more than its own processes"


@pytest.mark.parametrize("kind", KINDS)
def test_quitter_mid_hand_is_crashed(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "quitter", tmp_path)
    assert outcome.faults == {"crashed": 1} and outcome.place == 4


@pytest.mark.parametrize("kind", KINDS)
def test_a_daemon_does_not_outlive_the_match(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "daemon", tmp_path)
    assert outcome.faults == {}


@pytest.mark.parametrize("kind", KINDS)
def test_garbage_printer_forfeits_on_malformed_lines(kind: str, tmp_path: Path) -> None:
    outcome = play(kind, "garbage", tmp_path, transport="stdio")
    assert outcome.place == 4 and outcome.faults.get("malformed", 0) >= 1, outcome.faults
