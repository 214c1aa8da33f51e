"""The bubblewrap sandbox of ``process`` seats: whole matches, and what a bot can and cannot do inside.

Probe bots are written to tmp_path (whose parents are private to root, so the sandbox's
staging of unreachable folders is used); they check things, report on stderr, and then
play normally.  Everything here skips, saying why, where bubblewrap is missing or unusable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from polignac import preset
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.seats import SeatContext, SeatKind, SeatLimits, SeatProcess, launcher_for
from polignac_arena.seats.sandbox import SandboxLauncher, SandboxProcess
from polignac_arena.seats.uids import processes_of_uid
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission, builtin_submission, load_submission
from tests.referee.helpers import run

ROOT = Path(__file__).resolve().parents[1]
CLOCK = TimeControl(move_ms=1000, bank_ms=2000, startup_ms=15_000)
LIMITS = SeatLimits(memory_mb=256, cpus=1.0, pids=48, cpu_seconds=60)


def _sandbox_or_skip() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("bubblewrap sandboxes need Linux")
    reason = SandboxLauncher().unavailable()
    if reason is not None:
        pytest.skip(f"the bubblewrap sandbox is not usable here: {reason}")


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    _sandbox_or_skip()


class RecordingLauncher(SandboxLauncher):
    """The sandbox launcher, keeping every seat it starts (and how long starting took)."""

    def __init__(self, *, cgroups: bool = True) -> None:
        super().__init__(cgroups=cgroups)
        self.seats: list[SandboxProcess] = []
        self.start_ms: list[float] = []

    async def start(self, context: SeatContext) -> SeatProcess:
        began = time.perf_counter()
        seat = await super().start(context)
        self.start_ms.append((time.perf_counter() - began) * 1000)
        assert isinstance(seat, SandboxProcess)
        self.seats.append(seat)
        return seat


def bot_folder(tmp_path: Path, name: str, code: str, transport: str = "grpc") -> Path:
    """A submission folder (readable by all, as uploaded submissions are) inside the private tmp_path."""
    folder = tmp_path / name
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    (folder / "bot.py").write_text(textwrap.dedent(code))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\ntransport = "{transport}"\n'
    )
    return folder


def play(bots: list[Submission], launcher: RecordingLauncher, limits: SeatLimits = LIMITS) -> tuple[MatchResult, list[str]]:
    return run(run_local_match(bots, preset("classic", limit=4), 7, CLOCK, launcher=launcher, limits=limits), timeout=90)


def assert_nothing_left(launcher: RecordingLauncher) -> None:
    """No process runs as any seat's uid (a scan of /proc), and every seat cgroup is gone."""
    uids = [seat.uid for seat in launcher.seats]
    assert None not in uids and len(set(uids)) == len(uids), f"seat uids are not distinct: {uids}"
    for seat in launcher.seats:
        assert seat.uid is not None
        assert processes_of_uid(seat.uid) == [], f"processes of seat uid {seat.uid} outlived the match"
        for folder in seat.cgroup_dirs:
            assert not folder.exists(), f"cgroup {folder} was not removed"


def others_move_ms(result: MatchResult) -> list[float]:
    actions = [line for line in result.record if line["type"] == "action" and line.get("seat") != 0]
    return [cast(float, line["ms"]) for line in actions if line.get("ms") is not None]


def probe_report(stderr: str) -> dict[str, object]:
    lines = [line for line in stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, f"the probe bot did not report: {stderr[-2000:]}"
    report: dict[str, object] = json.loads(lines[0][len("PROBE ") :])
    return report


@pytest.fixture(scope="module")
def as_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("per-seat uids, cgroups and RLIMIT_NPROC need the arena to run as root")


# --- whole matches ------------------------------------------------------------------------------


def test_the_default_process_launcher_is_the_sandbox() -> None:
    assert isinstance(launcher_for(SeatKind.PROCESS), SandboxLauncher)


def test_python_bots_play_a_whole_match_in_sandboxes(tmp_path: Path) -> None:
    """A sample bot folder, built-in bots, and a bot given as a .py file, all with the default launcher."""
    script = tmp_path / "single" / "lowest.py"
    script.parent.mkdir(mode=0o755)
    script.write_text(
        "from polignac.bot import Bot, run\n\n"
        "class Lowest(Bot):\n    name = 'lowest'\n\n    def play(self, view):\n        return view.legal[0]\n\n"
        "run(Lowest())\n"
    )
    bots = [resolve_bot(str(ROOT / "sample_bots" / "heuristic")), resolve_bot("random"), resolve_bot(str(script)), resolve_bot("cautious")]
    result, stderrs = run(run_local_match(bots, preset("classic", limit=4), 3, CLOCK, seat_kind=SeatKind.PROCESS), timeout=90)
    assert result.status == "finished", (result, stderrs)
    assert result.faults == [{}, {}, {}, {}], stderrs
    assert result.names == ("heuristic", "random", "lowest", "cautious")
    assert replay_lines(result.record).divergence is None


def test_inside_the_sandbox_a_bot_has_no_rights_no_network_and_sees_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_root: None
) -> None:
    secret = f"hunter2-{secrets.token_hex(8)}"
    monkeypatch.setenv("POLIGNAC_TEST_SECRET", secret)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    folder = bot_folder(
        tmp_path,
        "probe",
        f"""
        import ctypes, json, os, resource, socket, sys

        report = {{"uid": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()]}}
        status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
        report["status"] = {{k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")}}
        report["interfaces"] = [name for _, name in socket.if_nameindex()]
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            report["tcp"] = "connected"
        except OSError as exc:
            report["tcp"] = repr(exc)

        def readable(path):
            try:
                with open(path, "rb") as f:
                    f.read(1)
                return True
            except OSError:
                return False

        report["readable"] = {{p: readable(p) for p in ("/etc/shadow", "/bot/secret.txt", "/bot/bot.py", "/etc/ld.so.cache")}}
        report["root"] = sorted(os.listdir("/root")) if os.access("/root", os.R_OK | os.X_OK) else None
        writes = {{}}
        for folder in ("/", "/bot", "/usr", "/etc", "/opt/polignac", "/run/polignac", "/dev", "/root", sys.prefix, "/tmp", "/dev/shm"):
            try:
                with open(os.path.join(folder, "probe-write"), "w") as f:
                    f.write("x")
                writes[folder] = True
            except OSError:
                writes[folder] = False
        report["writes"] = writes
        report["env"] = dict(os.environ)
        procs = {{}}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                    procs[pid] = f.read().replace(b"\\0", b" ").decode()
        report["proc"] = procs
        report["fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
        report["userns"] = ctypes.CDLL(None, use_errno=True).unshare(0x10000000)  # CLONE_NEWUSER
        names = ("CPU", "AS", "FSIZE", "NOFILE", "NPROC", "CORE")
        report["rlimits"] = {{n: resource.getrlimit(getattr(resource, "RLIMIT_" + n)) for n in names}}
        print("PROBE " + json.dumps(report), file=sys.stderr, flush=True)

        from polignac.bot import run
        from polignac.bots import RandomBot

        run(RandomBot())
        """,
    )
    (folder / "secret.txt").write_text("root only\n")
    os.chmod(folder / "secret.txt", 0o600)
    launcher = RecordingLauncher()
    try:
        result, stderrs = play(
            [load_submission(folder), builtin_submission("random"), builtin_submission("heuristic"), builtin_submission("cautious")],
            launcher,
        )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing from the sandbox reached the host's loopback
    finally:
        listener.close()
    assert result.status == "finished" and result.faults[0] == {}, (result.faults, stderrs[0][-2000:])
    report = probe_report(stderrs[0])
    seat_uid = launcher.seats[0].uid
    assert seat_uid is not None and report["uid"] == [seat_uid, seat_uid, seat_uid, seat_uid, []] and seat_uid != 0
    assert report["status"] == {
        "CapInh": "0" * 16,
        "CapPrm": "0" * 16,
        "CapEff": "0" * 16,
        "CapBnd": "0" * 16,
        "CapAmb": "0" * 16,
        "NoNewPrivs": "1",
    }
    assert report["interfaces"] == ["lo"]
    assert report["tcp"] != "connected" and "Connection refused" in str(report["tcp"])
    assert report["readable"] == {"/etc/shadow": False, "/bot/secret.txt": False, "/bot/bot.py": True, "/etc/ld.so.cache": True}
    # /root holds at most the way to the Python installation (mounted at its own path), nothing of the host's /root.
    python_top = Path(sys.base_prefix).resolve().parts[2:3] if Path(sys.base_prefix).resolve().parts[1:2] == ("root",) else ()
    assert report["root"] in (None, [], list(python_top)), report["root"]
    writes = report["writes"]
    assert isinstance(writes, dict)
    assert {k for k, wrote in writes.items() if wrote} == {"/tmp", "/dev/shm"}, writes
    env = report["env"]
    assert isinstance(env, dict)
    assert "POLIGNAC_TEST_SECRET" not in env and not any(secret in value for value in env.values())
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "USER",
        "PYTHONPATH",
        "PYTHONNOUSERSITE",
        "PYTHONDONTWRITEBYTECODE",
        "POLIGNAC_ADDRESS",
        "POLIGNAC_TOKEN",
        "POLIGNAC_BOT_SEED",
        "PWD",
    }, env
    assert env["POLIGNAC_ADDRESS"] == "unix:/run/polignac/referee.sock"
    procs = report["proc"]
    assert isinstance(procs, dict)
    assert set(procs) == {"1", "2"}, procs  # bubblewrap's init and the bot: not the arena, not the other seats
    assert "bwrap" in procs["1"] and "bot.py" in procs["2"]
    assert report["fds"] == [0, 1, 2, 3]  # stdin, stdout, stderr, and the listing itself: no descriptor leaks in
    assert report["userns"] == -1  # no nested user namespaces
    rlimits = report["rlimits"]
    assert isinstance(rlimits, dict)
    assert rlimits["NPROC"] == [LIMITS.pids, LIMITS.pids] and rlimits["CORE"] == [0, 0]
    assert rlimits["NOFILE"] == [LIMITS.open_files] * 2 and rlimits["FSIZE"] == [LIMITS.file_size_mb << 20] * 2
    assert rlimits["CPU"][0] == LIMITS.cpu_seconds and rlimits["AS"][0] >= (LIMITS.memory_mb + 1024) << 20
    assert_nothing_left(launcher)
    print(f"sandboxed seat start: {', '.join(f'{ms:.0f}' for ms in launcher.start_ms)} ms")


BOMB = """
import os, sys, time
if os.fork() == 0:  # first a daemon of the classic kind: double fork, new session, meant to outlive the match
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(0)
children = 0
for _ in range(100_000):
    try:
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        children += 1
    except OSError:
        break
print(f"BOMB {children}", flush=True)
time.sleep(3600)
"""


def test_a_fork_bomb_is_capped_and_the_others_keep_their_pace(tmp_path: Path, as_root: None) -> None:
    folder = bot_folder(
        tmp_path,
        "bomb",
        """
        import subprocess, sys
        from polignac.bot import Bot, run

        class Bomb(Bot):
            name = "bomb"
            exploded = False

            def play(self, view):
                if not self.exploded:
                    self.exploded = True
                    bomb = subprocess.Popen([sys.executable, "bomb.py"], stdout=subprocess.PIPE, text=True)
                    print(bomb.stdout.readline().strip(), file=sys.stderr, flush=True)  # waits for the bomb's count
                return view.legal[0]

        run(Bomb())
        """,
    )
    # The forks happen in a fresh interpreter: a gRPC process that forks is at the mercy of gRPC's fork handlers
    # (with no pids left they retry creating threads, and the bot hangs before it could report).
    (folder / "bomb.py").write_text(BOMB)
    launcher = RecordingLauncher()
    bots = [load_submission(folder), builtin_submission("random"), builtin_submission("heuristic"), builtin_submission("cautious")]
    result, stderrs = play(bots, launcher)
    assert result.status == "finished", result
    assert result.faults[1:] == [{}, {}, {}], result.faults
    children = [int(line.split()[1]) for line in stderrs[0].splitlines() if line.startswith("BOMB ")]
    assert children and 0 < children[0] < LIMITS.pids, (result.faults, stderrs[0][:3000])
    print(f"fork bomb: {children[0]} children; the bomb seat's faults: {result.faults[0]}")
    others = others_move_ms(result)
    assert others and statistics.median(others) < 150 and max(others) < 1000, f"others' move times: {sorted(others)[-5:]}"
    assert_nothing_left(launcher)


def test_matches_in_parallel_give_every_seat_its_own_uid_and_cgroups(tmp_path: Path, as_root: None) -> None:
    launcher = RecordingLauncher()
    bots = [builtin_submission(name) for name in ("random", "heuristic", "cautious", "random")]

    async def both() -> list[tuple[MatchResult, list[str]]]:
        return await asyncio.gather(*(run_local_match(bots, preset("classic", limit=2), seed, CLOCK, launcher=launcher) for seed in (1, 2)))

    for result, stderrs in run(both(), timeout=90):
        assert result.status == "finished" and result.faults == [{}, {}, {}, {}], stderrs
    assert len(launcher.seats) == 8
    assert len({folder for seat in launcher.seats for folder in seat.cgroup_dirs}) == 8 * len(launcher.seats[0].cgroup_dirs)
    assert_nothing_left(launcher)  # distinct uids included


DAEMON = """
import os, sys, time
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
        os._exit(0)
    os._exit(0)
os.waitpid(first, 0)  # reaped: a zombie would show in /proc as the seat's uid but not in the cgroup's procs
print("daemon started", file=sys.stderr, flush=True)
time.sleep(float(sys.argv[1]))
"""


ARENA = """
import asyncio, json, sys
from pathlib import Path
from polignac_arena.seats import SeatContext, SeatLimits
from polignac_arena.seats.sandbox import SandboxLauncher
from polignac_arena.submission import Submission

async def main():
    folder, socket_path, workdir = (Path(a) for a in sys.argv[1:4])
    sub = Submission(path=folder, name="daemon", version="1", language="python", command=("python", "bot.py", "3600"))
    context = SeatContext(seat=0, token="t", submission=sub, limits=SeatLimits(), referee_socket=socket_path, workdir=workdir)
    seat = await SandboxLauncher().start(context)
    while "daemon started" not in seat.stderr_text():
        await asyncio.sleep(0.02)
    print(json.dumps({"uid": seat.uid, "cgroups": [str(d) for d in seat.cgroup_dirs]}), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_when_the_arena_dies_its_sandboxes_die_with_it(tmp_path: Path, as_root: None) -> None:
    """--die-with-parent: an arena killed outright (no stop() ever runs) leaves no bot process behind."""
    folder = bot_folder(tmp_path, "orphan", DAEMON)
    with seat_dirs() as (socket_path, workdir):
        arena = subprocess.Popen(
            [sys.executable, "-c", ARENA, str(folder), str(socket_path), str(workdir)], stdout=subprocess.PIPE, cwd=ROOT
        )
        try:
            assert arena.stdout is not None
            started = json.loads(arena.stdout.readline() or "{}")
            uid = started["uid"]
            assert processes_of_uid(uid)
        finally:
            arena.kill()
            arena.wait()
        assert run(_until(lambda: not processes_of_uid(uid))), f"processes of seat uid {uid} outlived the arena"
        # Nobody ran stop(): remove what it would have removed (the next arena would sweep them).
        assert _remove_cgroups_of_a_dead_arena([Path(c) for c in started["cgroups"]]) == []


KILLED_WHILE_STARTING = """
import asyncio, os, signal, sys
from pathlib import Path
from polignac_arena.seats import SeatContext, SeatLimits
from polignac_arena.seats import sandbox
from polignac_arena.submission import Submission

allocate = sandbox.allocate_uid
def allocate_and_say() -> int:
    uid = allocate()
    print(uid, flush=True)
    return uid
sandbox.allocate_uid = allocate_and_say

async def main():
    folder, socket_path, workdir, delay = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4])
    sub = Submission(path=folder, name="daemon", version="1", language="python", command=("python", "bot.py", "3600"))
    context = SeatContext(seat=0, token="t", submission=sub, limits=SeatLimits(), referee_socket=socket_path, workdir=workdir)
    asyncio.get_running_loop().call_later(delay, os.kill, os.getpid(), signal.SIGKILL)
    await sandbox.SandboxLauncher().start(context)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_an_arena_killed_while_a_sandbox_starts_leaves_no_bot(tmp_path: Path, as_root: None) -> None:
    """Killed at any moment of a seat's start, bubblewrap's own moment included (its sandbox sets
    --die-with-parent only after its clone): the PID namespace the seat starts in takes everything down."""
    folder = bot_folder(tmp_path, "orphan", DAEMON)
    survivors = []
    busy: list[Path] = []
    # The start of a seat takes about 0.1 s here; the race window is a few ms of it, so a run of this
    # test does not always hit it (test_a_seat_runs_in_a_pid_namespace_of_its_own checks the cause).
    for delay in [0.04 + 0.01 * n for n in range(10)]:
        with seat_dirs() as (socket_path, workdir):
            arena = subprocess.Popen(
                [sys.executable, "-c", KILLED_WHILE_STARTING, str(folder), str(socket_path), str(workdir), str(delay)],
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            assert arena.stdout is not None
            uid_line = arena.stdout.readline()
            arena.wait()
            if not uid_line.strip():
                continue  # killed before it chose a uid: nothing was started
            uid = int(uid_line)
            if not run(_until(lambda uid=uid: not processes_of_uid(uid), 3.0)):
                survivors.append((delay, processes_of_uid(uid)))
                for pid in processes_of_uid(uid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            # Nobody ran stop(): remove what it would have removed (the next arena would sweep them).
            busy += _remove_cgroups_of_a_dead_arena(list(Path("/sys/fs/cgroup").glob(f"*/polignac/match-seat0-{uid}@*")))
    assert busy == [], f"seat cgroups still in use after their arena was killed: {busy}"
    assert survivors == [], f"(delay, pids) of seats that outlived their killed arena: {survivors}"


def _pid_namespace_depths(uid: int) -> list[int]:
    """For each live process of ``uid``: how many PID namespaces deep it is (1: the host's)."""
    depths = []
    for pid in processes_of_uid(uid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:"):
                    depths.append(len(line.split()) - 1)
    return depths


def _zombies_of(uid: int) -> list[str]:
    """Ended but unreaped processes of ``uid``, as "pid comm"."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                status = dict(line.split(":", 1) for line in Path(f"/proc/{entry}/status").read_text().splitlines() if ":" in line)
                if status["State"].split()[0] == "Z" and int(status["Uid"].split()[0]) == uid:
                    found.append(f"{entry} {status['Name'].strip()}")
    return found


def test_a_seat_runs_in_a_pid_namespace_of_its_own(tmp_path: Path, as_root: None) -> None:
    """Even the outermost bubblewrap of a seat is the first process of a PID namespace the arena's
    side made: when it dies (it dies with its monitor, which dies with the arena) the kernel kills
    the whole sandbox, whether or not bubblewrap's own --die-with-parent is in place yet."""
    folder = bot_folder(tmp_path, "orphan", DAEMON)
    submission = Submission(path=folder, name="daemon", version="1", language="python", command=("python", "bot.py", "3600"))
    with seat_dirs() as (socket_path, workdir):

        async def check() -> tuple[list[int], list[str]]:
            seat = await _start(SandboxLauncher(), submission, socket_path, workdir, SeatLimits())
            assert seat.uid is not None
            try:
                assert await _until(lambda: "daemon started" in seat.stderr_text())
                depths = _pid_namespace_depths(seat.uid)
            finally:
                await seat.stop()
            return depths, _zombies_of(seat.uid)

        depths, zombies = run(check())
    assert depths and min(depths) >= 2, depths
    assert zombies == [], f"stop() left unreaped processes of the seat: {zombies}"


# --- single seats ------------------------------------------------------------------------------


@contextlib.contextmanager
def seat_dirs() -> Iterator[tuple[Path, Path]]:
    """A referee socket folder and a seat workdir laid out as run_local_match does (reachable by seat users)."""
    root = Path(tempfile.mkdtemp(prefix="polignac-sbxtest-"))
    try:
        os.chmod(root, 0o711)
        (root / "referee").mkdir(mode=0o755)
        workdir = root / "seat0"
        workdir.mkdir()
        os.chmod(workdir, 0o777)
        yield root / "referee" / "referee.sock", workdir
    finally:
        shutil.rmtree(root, ignore_errors=True)


def script_seat(tmp_path: Path, code: str, transport: Transport = Transport.GRPC, *args: str) -> Submission:
    folder = bot_folder(tmp_path, f"script{secrets.token_hex(3)}", code, transport)
    return Submission(path=folder, name="script", version="1", language="python", command=("python", "bot.py", *args), transport=transport)


async def _start(launcher: SandboxLauncher, submission: Submission, socket_path: Path, workdir: Path, limits: SeatLimits) -> SandboxProcess:
    context = SeatContext(
        seat=0, token="t", submission=submission, limits=limits, referee_socket=socket_path, workdir=workdir, match_id="sbxtest"
    )
    seat = await launcher.start(context)
    assert isinstance(seat, SandboxProcess)
    return seat


def _remove_cgroups_of_a_dead_arena(cgroups: list[Path], timeout: float = 3.0) -> list[Path]:
    """Remove a killed arena's seat cgroups; those still in use after ``timeout`` (its processes take a moment to go)."""
    deadline = time.monotonic() + timeout
    left = list(cgroups)
    while left and time.monotonic() < deadline:
        for cgroup in list(left):
            with contextlib.suppress(FileNotFoundError, OSError):
                cgroup.rmdir()
            if not cgroup.exists():
                left.remove(cgroup)
        time.sleep(0.02)
    return left


async def _until(predicate: object, timeout: float = 5.0) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return bool(predicate())


def test_a_double_forked_daemon_dies_with_the_pid_namespace_and_with_the_cgroup(tmp_path: Path, as_root: None) -> None:
    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            # 1. The bot leaves at once: its daemon goes with the PID namespace, before anyone calls stop().
            seat = await _start(SandboxLauncher(), script_seat(tmp_path, DAEMON, Transport.GRPC, "0.3"), socket_path, workdir, LIMITS)
            assert seat.uid is not None
            assert await seat.wait() == 0
            assert await _until(lambda: not processes_of_uid(seat.uid or 0)), "the daemon outlived its sandbox"
            await seat.stop()
            assert all(not folder.exists() for folder in seat.cgroup_dirs)
            # 2. The bot stays: all its processes are in its cgroups, and stop() ends them all and removes the cgroups.
            seat = await _start(SandboxLauncher(), script_seat(tmp_path, DAEMON, Transport.GRPC, "60"), socket_path, workdir, LIMITS)
            assert seat.uid is not None and seat.cgroup_dirs
            assert await _until(lambda: "daemon started" in seat.stderr_text())
            mine = set(processes_of_uid(seat.uid))
            assert len(mine) >= 4  # bubblewrap, its init, the bot, the daemon
            assert mine <= seat.cgroups.pids()
            assert (seat.cgroups.dirs["pids"] / "pids.max").read_text().strip() == str(LIMITS.pids)
            assert int((seat.cgroups.dirs["memory"] / "memory.limit_in_bytes").read_text()) == LIMITS.memory_mb << 20
            assert int((seat.cgroups.dirs["cpu"] / "cpu.cfs_quota_us").read_text()) == int(LIMITS.cpus * 100_000)
            await seat.stop()
            assert processes_of_uid(seat.uid) == [] and all(not folder.exists() for folder in seat.cgroup_dirs)
            await seat.stop()  # twice is fine

    run(scenario(), timeout=30)


def test_without_cgroups_the_seat_uid_caps_processes_with_rlimit_nproc(tmp_path: Path, as_root: None) -> None:
    code = """
    import os, sys, time
    children = 0
    for _ in range(10_000):
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            children += 1
        except OSError:
            break
    print(f"BOMB {children}", file=sys.stderr, flush=True)
    """

    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            limits = SeatLimits(pids=20)
            seat = await _start(SandboxLauncher(cgroups=False), script_seat(tmp_path, code), socket_path, workdir, limits)
            assert seat.cgroup_dirs == []
            await seat.wait()
            await seat.stop()
            children = [int(line.split()[1]) for line in seat.stderr_text().splitlines() if line.startswith("BOMB ")]
            assert children and children[0] < limits.pids, seat.stderr_text()
            assert seat.uid is not None and processes_of_uid(seat.uid) == []

    run(scenario(), timeout=30)


def test_memory_beyond_the_cap_kills_the_bot(tmp_path: Path, as_root: None) -> None:
    code = """
    import sys
    hoard = []
    for n in range(64):
        hoard.append(bytearray(16 << 20))  # zero-filled: really touched
        print(f"MB {(n + 1) * 16}", file=sys.stderr, flush=True)
    """

    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            seat = await _start(SandboxLauncher(), script_seat(tmp_path, code), socket_path, workdir, SeatLimits(memory_mb=128))
            code_ = await seat.wait()
            await seat.stop()
            held = [int(line.split()[1]) for line in seat.stderr_text().splitlines() if line.startswith("MB ")]
            assert code_ == -9 and max(held, default=0) <= 128, (code_, seat.stderr_text()[-500:])

    run(scenario(), timeout=30)


def test_stdio_bots_get_pipes_and_their_stderr_is_capped(tmp_path: Path) -> None:
    code = """
    import sys
    sys.stderr.write("e" * 100_000)
    sys.stderr.flush()
    for line in sys.stdin:
        sys.stdout.write(line.upper())
        sys.stdout.flush()
    """

    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            limits = SeatLimits(stderr_bytes=1000)
            seat = await _start(SandboxLauncher(), script_seat(tmp_path, code, Transport.STDIO), socket_path, workdir, limits)
            assert seat.stdin is not None and seat.stdout is not None
            seat.stdin.write(b'{"hello": "sandbox"}\n')
            await seat.stdin.drain()
            assert await asyncio.wait_for(seat.stdout.readline(), 10) == b'{"HELLO": "SANDBOX"}\n'
            seat.stdin.close()
            assert await asyncio.wait_for(seat.wait(), 10) == 0
            await seat.stop()
            # The seat's monitor passed on 1000 bytes, the beginning and the end, and said how many it dropped.
            note = "\n[arena] 99000 more bytes not kept (the cap is 1000 bytes); the last 250:\n"
            assert seat.stderr_text() == "e" * 750 + note + "e" * 250

    run(scenario(), timeout=30)


def test_a_bot_in_a_folder_only_root_can_read_runs_from_a_readable_copy(tmp_path: Path, as_root: None) -> None:
    code = """
    import os
    print(os.getcwd(), sorted(os.listdir(".")), open("notes.txt").read(), flush=True)
    """

    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            submission = script_seat(tmp_path, code, Transport.STDIO)
            (submission.path / "notes.txt").write_text("private")
            os.chmod(submission.path / "notes.txt", 0o600)
            os.chmod(submission.path, 0o700)
            seat = await _start(SandboxLauncher(), submission, socket_path, workdir, LIMITS)
            assert seat.stdout is not None
            line = await asyncio.wait_for(seat.stdout.readline(), 10)
            assert await seat.wait() == 0, seat.stderr_text()
            await seat.stop()
            assert line == b"/bot ['bot.py', 'bot.toml', 'notes.txt'] private\n"
            assert not (workdir / ".sandbox").exists()  # the copy went with the seat

    run(scenario(), timeout=30)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_node_runs_in_the_sandbox(tmp_path: Path) -> None:
    folder = tmp_path / "js"
    folder.mkdir(mode=0o755)
    script = (
        "const fs = require('fs');\n"
        "console.log(process.version, process.env.POLIGNAC_ADDRESS, process.env.POLIGNAC_TOKEN, fs.existsSync('/run/polignac'));\n"
    )
    (folder / "bot.js").write_text(script)
    submission = Submission(
        path=folder, name="js", version="1", language="javascript", command=("node", "bot.js"), transport=Transport.STDIO
    )

    async def scenario() -> None:
        with seat_dirs() as (socket_path, workdir):
            seat = await _start(SandboxLauncher(), submission, socket_path, workdir, LIMITS)
            assert seat.stdout is not None
            line = (await asyncio.wait_for(seat.stdout.readline(), 10)).decode()
            assert await seat.wait() == 0, seat.stderr_text()
            await seat.stop()
            # A stdio bot talks to the arena's bridge: no referee socket, no address, no token.
            assert line.startswith("v") and line.split()[1:] == ["undefined", "undefined", "false"], line

    run(scenario(), timeout=30)


def test_unavailable_says_why() -> None:
    assert "not installed" in (SandboxLauncher(bwrap="").unavailable() or "")
    assert "exit 1" in (SandboxLauncher(bwrap=shutil.which("false") or "/bin/false").unavailable() or "")
    assert SandboxLauncher().unavailable() is None
