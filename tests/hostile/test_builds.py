"""Hostile build steps: ``polignac bot check`` runs a submission's build in the bot's own sandbox.

Each build (bots/hostile_build.py, one action each) does one bad thing and reports it; the
check must contain it (no host secret, socket, network or environment reached; processes,
memory, disk, time and output capped; nothing it leaves outside the rules installed), say so
in a clear report line, leave no process behind, and return.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from polignac_arena import botcheck
from polignac_arena.botcheck import CheckReport, check_submission
from polignac_arena.seats import SeatKind
from tests.hostile.test_hostile import launcher_or_skip, leftover

BOTS = Path(__file__).parent / "bots"
KINDS = [
    pytest.param("process", id="bubblewrap"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]
POLITE_BOT = """\
from polignac.bot import Bot, run


class Polite(Bot):
    name = "polite"

    def play(self, view):
        return view.legal[0]


run(Polite())
"""
SECRET_NAME = "POLIGNAC_TEST_ARENA_SECRET"


@dataclass
class Built:
    report: CheckReport
    folder: Path
    marker: str
    seconds: float

    @property
    def build(self) -> tuple[bool, str]:
        """The build step's outcome and its detail."""
        found = [(passed, detail) for step, passed, detail in self.report.steps if step == "build"]
        assert found, f"no build step in the report: {self.report.steps}"
        return found[0]

    def probe(self, action: str) -> str:
        detail = self.build[1]
        lines = [line for line in detail.splitlines() if line.startswith(f"PROBE {action}: ")]
        assert lines, f"the build did not report (did it run?): {detail}"
        return lines[0].split(": ", 1)[1]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback listener on the host: no build may reach it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0)
        yield server


def build(kind: str, tmp_path: Path, action: str, port: int = 0) -> Built:
    """Check a submission whose build step runs ``action``; the secret is in the arena's environment meanwhile."""
    launcher_or_skip(kind)
    marker = f"hostile{uuid.uuid4().hex[:12]}"
    folder = tmp_path / marker
    folder.mkdir()
    os.chmod(folder, 0o755)
    script = f"build_{marker}.py"  # the marker is in the command line of every process of the build
    (folder / script).write_text((BOTS / "hostile_build.py").read_text())
    (folder / "bot.py").write_text(POLITE_BOT)
    (folder / "params.json").write_text(f'{{"port": {port}, "secret_name": "{SECRET_NAME}"}}')
    (folder / "bot.toml").write_text(
        'name = "hostile-build"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
        f'build = ["python", "{script}", "{action}"]\n'
    )
    started = time.monotonic()
    report = check_submission(folder, seat_kind=SeatKind(kind))
    built = Built(report, folder, marker, time.monotonic() - started)
    assert leftover(marker) == [], f"processes of the build outlived it: {leftover(marker)}"
    return built


@pytest.fixture(autouse=True)
def arena_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    secret = secrets.token_hex(16)
    monkeypatch.setenv(SECRET_NAME, secret)
    return secret


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_cannot_read_the_hosts_shadow_file(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "shadow")
    assert built.probe("shadow").startswith("refused"), built.build


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_finds_no_docker_socket(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "docker")
    assert built.probe("docker") == "no socket", built.build


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_gets_a_scrubbed_environment(kind: str, tmp_path: Path, arena_secret: str) -> None:
    built = build(kind, tmp_path, "environ")
    assert built.probe("environ").startswith("clean"), built.build
    assert all(arena_secret not in detail for _, _, detail in built.report.steps)


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_has_no_network(kind: str, tmp_path: Path, listener: socket.socket) -> None:
    built = build(kind, tmp_path, "network", port=listener.getsockname()[1])
    assert built.probe("network").startswith("failed"), built.build
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody came through


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_forking_500_processes_is_held_to_the_seats_pids(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "fork")
    started = int(built.probe("fork").split()[1])
    assert started < 64, f"the build started {started} processes, over the seat's cap of 64"


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_allocating_2_gb_is_stopped_by_the_seats_memory_cap(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "memory")
    passed, detail = built.build
    assert not passed and "allocated" not in detail, detail
    assert "memory" in detail.splitlines()[0], f"the report line does not say why: {detail}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_writing_2_gb_is_stopped_by_its_disk_cap(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "disk")
    stopped = built.probe("disk")
    assert stopped.startswith("stopped at") and int(stopped.split()[2]) <= 256, built.build
    assert not (built.folder / "big").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_that_runs_forever_is_stopped_with_everything_it_started(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(botcheck, "BUILD_TIMEOUT_S", 5)
    built = build(kind, tmp_path, "forever")  # build() asserts that no process of it is left
    passed, detail = built.build
    assert not passed and "timed out after 5 s" in detail.splitlines()[0], detail
    assert built.seconds < 60


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_printing_100_mb_has_its_output_capped(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "chatter")
    _, detail = built.build
    assert "more bytes not kept (the cap is 65536 bytes)" in detail, detail[-2000:]
    assert len(detail) < 70_000


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_to_the_hosts_shadow_file_is_not_installed(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "symlink")
    passed, detail = built.build
    assert not passed and "'/etc/shadow'" in detail.splitlines()[0] and "nothing was installed" in detail, detail
    assert not os.path.lexists(built.folder / "shadow")


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_is_not_installed(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "fifo")
    passed, detail = built.build
    assert not passed and "FIFO" in detail.splitlines()[0] and "nothing was installed" in detail, detail
    assert not os.path.lexists(built.folder / "pipe")


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_cannot_change_bot_toml_but_installs_what_it_made(kind: str, tmp_path: Path) -> None:
    built = build(kind, tmp_path, "manifest")
    manifest = (built.folder / "bot.toml").read_text()
    passed, detail = built.build
    assert passed and "installed 1 file(s): made.txt" in detail.splitlines()[0], detail
    assert "changed by the build" not in manifest and "the build changed bot.toml: not installed" in detail
    assert (built.folder / "made.txt").read_text() == "made by the build\n"
    assert built.report.ok, built.report.steps
