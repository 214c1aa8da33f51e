"""``docker`` seats: whole matches in containers, stdio bots, and what a container may not do.

Every test but the unreachable-daemon ones skips, with the reason, when no Docker daemon
answers; the C test images are built here from local contexts (tests/docker_images.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from polignac import Ruleset
from polignac_arena.replay import replay_lines
from polignac_arena.runner import BotSpecError, resolve_bot, run_local_match
from polignac_arena.seats import SeatContext, SeatError, SeatLimits
from polignac_arena.seats import docker as docker_seats
from polignac_arena.seats.docker import DockerLauncher, DockerSeat
from polignac_arena.settings import Transport
from polignac_arena.submission import Submission, builtin_submission, load_submission
from tests import docker_images as images
from tests.referee.helpers import run

ROOT = Path(__file__).resolve().parents[1]


def needs_docker() -> None:
    problem = images.daemon_problem()
    if problem is not None:
        pytest.skip(f"docker seats cannot be tested here: {problem}")


def needs_gcc() -> None:
    problem = images.gcc_problem()
    if problem is not None:
        pytest.skip(f"the C test image cannot be built: {problem}")


docker_test = pytest.mark.docker


def containers_of(match_id: str) -> list[Any]:
    found: list[Any] = images.client().api.containers(all=True, filters={"label": f"polignac.match={match_id}"})
    return found


def seat_context(tmp_path: Path, submission: Submission, match_id: str, limits: SeatLimits | None = None) -> SeatContext:
    """A context for one seat, with an empty (reachable) socket folder: these bots never call the referee."""
    socket_dir = tmp_path / "referee"
    socket_dir.mkdir(exist_ok=True)
    socket_dir.chmod(0o755)
    workdir = tmp_path / "seat"
    workdir.mkdir(exist_ok=True)
    return SeatContext(
        seat=0,
        token="t0k3n",
        submission=submission,
        limits=limits or SeatLimits(),
        referee_socket=socket_dir / "referee.sock",
        workdir=workdir,
        match_id=match_id,
    )


async def run_to_end(launcher: DockerLauncher, context: SeatContext, timeout: float = 60) -> tuple[int | None, str]:
    """Start a seat, wait for it to end, stop it; its exit status and stderr."""
    seat = await launcher.start(context)
    try:
        async with asyncio.timeout(timeout):
            code = await seat.wait()
    finally:
        await seat.stop()
    return code, seat.stderr_text()


# -- a missing daemon -------------------------------------------------------------------------------------------


def test_an_unreachable_daemon_is_a_clear_error_not_a_hang(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    started = time.monotonic()
    launcher = DockerLauncher()
    reason = launcher.unavailable()
    assert reason is not None and "cannot reach the Docker daemon at unix:///nonexistent.sock" in reason, reason
    assert "DOCKER_HOST" in reason  # it says what to do
    with pytest.raises(SeatError, match="cannot reach the Docker daemon"):
        run(launcher.start(seat_context(tmp_path, builtin_submission("random"), "nodaemon")))
    bots = [builtin_submission("random")] * 4
    with pytest.raises(BotSpecError, match=r"docker seats are not available here: cannot reach the Docker daemon"):
        run(run_local_match(bots, Ruleset(), 1, seat_kind="docker"))
    assert time.monotonic() - started < 5


def test_a_daemon_that_never_answers_times_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "silent.sock"
    with socket.socket(socket.AF_UNIX) as silent:  # accepts connections, never answers
        silent.bind(str(path))
        silent.listen(16)
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        monkeypatch.setattr(docker_seats, "PROBE_TIMEOUT_S", 0.5)
        started = time.monotonic()
        reason = DockerLauncher().unavailable()
        assert time.monotonic() - started < 5
    assert reason is not None and f"cannot reach the Docker daemon at unix://{path}" in reason, reason
    assert "timed out" in reason.lower(), reason


def test_exit_codes_read_as_process_statuses() -> None:
    assert docker_seats.docker_exit_status(0) == 0
    assert docker_seats.docker_exit_status(2) == 2
    assert docker_seats.docker_exit_status(137) == -9
    assert docker_seats.docker_exit_status(139) == -11
    assert docker_seats.docker_exit_status(255) == 255
    assert docker_seats.docker_exit_status(1, oom_killed=True) == -9


# -- whole matches ----------------------------------------------------------------------------------------------


@docker_test
def test_a_whole_match_in_docker_seats_verifies_and_leaves_no_container() -> None:
    needs_docker()
    bots = [resolve_bot(str(ROOT / "sample_bots" / "heuristic")), resolve_bot("random"), resolve_bot("heuristic"), resolve_bot("random")]
    started = time.monotonic()
    result, stderrs = run(run_local_match(bots, Ruleset(), 2024, seat_kind="docker", match_id="dockermatch1"), timeout=120)
    wall = time.monotonic() - started
    assert result.status == "finished", (result, stderrs)
    assert result.faults == [{}, {}, {}, {}], (result.faults, stderrs)
    assert result.names == ("heuristic", "random", "heuristic", "random")
    assert replay_lines(result.record).divergence is None
    assert containers_of("dockermatch1") == []
    assert wall < 60, f"the match took {wall:.1f} s"


# -- what a container may not do --------------------------------------------------------------------------------

PROBE = r"""
import json, os, shutil, socket, subprocess, sys

report = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
report["interfaces"] = sorted(name for _, name in socket.if_nameindex())
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    report["tcp"] = "connected"
except OSError as exc:
    report["tcp"] = f"failed: {exc}"
writes = {}
for path in ["/bot/x", "/x", "/etc/x", "/usr/x", "/run/polignac/x", "/var/tmp/x", "/dev/shm/x", "/home/x",
             "/opt/polignac-sdk/x", os.path.join(sys.base_prefix, "x"), "/tmp/x"]:
    try:
        with open(path, "w") as handle:
            handle.write("x")
        writes[path] = "written"
    except OSError as exc:
        writes[path] = exc.strerror
report["writes"] = writes
try:
    shutil.copy("/bin/true", "/tmp/true")
    os.chmod("/tmp/true", 0o755)
    subprocess.run(["/tmp/true"], check=True)
    report["exec_tmp"] = "ran"
except OSError as exc:
    report["exec_tmp"] = exc.strerror
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
report["cap_eff"] = status["CapEff"].strip()
report["no_new_privs"] = status["NoNewPrivs"].strip()
report["env"] = dict(os.environ)
report["cwd"] = os.getcwd()
import polignac
report["sdk"] = polignac.__file__
print(json.dumps(report), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def probe_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the probe bot in a docker seat, with a secret in the arena's environment and a host listener."""
    needs_docker()
    tmp = tmp_path_factory.mktemp("probe")
    with pytest.MonkeyPatch.context() as patch, socket.socket() as listener:
        patch.setenv("POLIGNAC_TEST_SECRET", "hunter2")
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0)
        folder = images.python_submission(tmp / "probe", PROBE, args=(str(listener.getsockname()[1]),))
        code, stderr = run(run_to_end(DockerLauncher(), seat_context(tmp, load_submission(folder), "dockerprobe")))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing came through
    assert code == 0, stderr
    assert containers_of("dockerprobe") == []
    report: dict[str, Any] = json.loads(stderr.strip().splitlines()[-1])
    return report


@docker_test
def test_a_container_has_no_network_but_its_own_loopback(probe_report: dict[str, Any]) -> None:
    assert probe_report["interfaces"] == ["lo"]
    assert probe_report["tcp"].startswith("failed"), probe_report["tcp"]


@docker_test
def test_a_container_runs_as_nobody_without_capabilities(probe_report: dict[str, Any]) -> None:
    assert (probe_report["uid"], probe_report["gid"]) == (65534, 65534)
    assert probe_report["groups"] in ([], [65534])
    assert int(probe_report["cap_eff"], 16) == 0 and probe_report["no_new_privs"] == "1"


@docker_test
def test_a_container_writes_only_to_its_tmp_and_cannot_run_what_it_wrote(probe_report: dict[str, Any]) -> None:
    writes = probe_report["writes"]
    assert writes.pop("/tmp/x") == "written"
    assert all(result != "written" for result in writes.values()), writes
    assert probe_report["exec_tmp"] == "Permission denied"  # /tmp is noexec


@docker_test
def test_a_container_sees_none_of_the_arenas_environment(probe_report: dict[str, Any]) -> None:
    env = probe_report["env"]
    assert "POLIGNAC_TEST_SECRET" not in env and "hunter2" not in json.dumps(env)
    assert env["POLIGNAC_ADDRESS"] == "unix:/run/polignac/referee.sock" and env["POLIGNAC_TOKEN"] == "t0k3n"
    allowed = {"POLIGNAC_ADDRESS", "POLIGNAC_TOKEN", "PATH", "HOME", "HOSTNAME", "TMPDIR", "LANG"}
    assert set(env) - allowed <= {"PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE"}, sorted(env)
    assert probe_report["cwd"] == "/bot" and probe_report["sdk"].startswith("/opt/polignac-sdk/")


FORK_BOMB = r"""
import json, os, sys, time

forked, error = 0, None
for _ in range(400):  # bounded: on a machine without the limit it still ends
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc.strerror
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    forked += 1
print(json.dumps({"forked": forked, "error": error}), file=sys.stderr, flush=True)
"""


@docker_test
def test_a_fork_bomb_is_stopped_by_the_pids_limit(tmp_path: Path) -> None:
    needs_docker()
    folder = images.python_submission(tmp_path / "bomb", FORK_BOMB, name="fork-bomb")
    limits = SeatLimits(pids=16)
    code, stderr = run(run_to_end(DockerLauncher(), seat_context(tmp_path, load_submission(folder), "dockerbomb", limits)))
    report = json.loads(stderr.strip().splitlines()[-1])
    assert report["forked"] < limits.pids and report["error"] == "Resource temporarily unavailable", report
    assert code == 0
    assert containers_of("dockerbomb") == []


MEMORY_HOG = r"""
import sys

hoard = []
for step in range(32):  # up to 512 MiB, bounded
    hoard.append(b"x" * (16 << 20))
    print(f"holding {16 * (step + 1)} MiB", file=sys.stderr, flush=True)
print("the memory limit never came", file=sys.stderr, flush=True)
"""


@docker_test
def test_a_memory_hog_is_killed_by_the_memory_limit(tmp_path: Path) -> None:
    needs_docker()
    folder = images.python_submission(tmp_path / "hog", MEMORY_HOG, name="memory-hog")
    limits = SeatLimits(memory_mb=96)
    code, stderr = run(run_to_end(DockerLauncher(), seat_context(tmp_path, load_submission(folder), "dockerhog", limits)))
    assert code == -9, stderr
    assert "the memory limit never came" not in stderr and "over its memory limit (96 MB)" in stderr, stderr
    assert containers_of("dockerhog") == []


# -- stdio bots, images, stop -----------------------------------------------------------------------------------


async def talk_to_echo(launcher: DockerLauncher, context: SeatContext) -> tuple[DockerSeat, list[bytes], int | None]:
    """Lines through the echo bot, a flood bigger than the pump's pause threshold, stderr past the cap, then EOF."""
    seat = await launcher.start(context)
    assert isinstance(seat, DockerSeat) and seat.stdin is not None and seat.stdout is not None
    try:
        answers = []
        for line in (b"hello\n", b'{"type": "json"}\n'):
            seat.stdin.write(line)
            await seat.stdin.drain()
            answers.append(await seat.stdout.readline())
        flood = 5 << 20
        seat.stdin.write(b"stderr 100000\n" + f"flood {flood}\n".encode())
        await seat.stdin.drain()
        await asyncio.sleep(0.3)  # let the flood pile up: the pump must pause, not lose bytes
        received = 0
        while received < flood + 1:
            chunk = await seat.stdout.read(1 << 16)
            assert chunk, f"stdout ended after {received} bytes"
            received += len(chunk)
        seat.stdin.close()  # end of input: the echo bot exits with 0
        code = await asyncio.wait_for(seat.wait(), 30)
        assert await seat.stdout.read() == b""
    finally:
        await seat.stop()
    return seat, answers, code


@docker_test
def test_a_stdio_bot_built_from_its_dockerfile_talks_over_stdin_and_stdout(tmp_path: Path) -> None:
    needs_docker()
    needs_gcc()
    submission = load_submission(images.echo_submission(tmp_path / "echo", how="dockerfile"))
    launcher = DockerLauncher()
    tag = launcher.image_for(submission)
    assert tag.startswith("polignac-bot/echo:")
    started = time.monotonic()
    assert launcher.image_for(submission) == tag and time.monotonic() - started < 1  # reused, not rebuilt
    context = seat_context(tmp_path, submission, "dockerecho", SeatLimits(stderr_bytes=1000))
    seat, answers, code = run(talk_to_echo(launcher, context))
    assert answers == [b"hello\n", b'{"type": "json"}\n']
    assert code == 0 and seat.returncode == 0
    stderr = seat.stderr_text()
    head, note, tail = stderr[:750], stderr[750:-250], stderr[-250:]  # a quarter of the cap is kept from the end
    assert head.startswith("echo: ready\n") and head.endswith("e") and tail == "e" * 250, stderr
    # How many were dropped depends on how much was read before the bot ended (past the cap, at a bounded rate).
    assert re.fullmatch(r"\n\[arena\] \d+ more bytes not kept \(the cap is 1000 bytes\); the last 250:\n", note), note
    assert containers_of("dockerecho") == []
    (tmp_path / "echo" / "README").write_text("changed")
    assert launcher.image_for(load_submission(tmp_path / "echo")) != tag  # another folder, another image


@docker_test
def test_a_stdio_bot_from_a_local_image_reports_its_exit_status(tmp_path: Path) -> None:
    needs_docker()
    needs_gcc()
    submission = load_submission(images.echo_submission(tmp_path / "echo", how="image"))
    assert submission.image is not None and submission.image.startswith("polignac-test/echo:")

    async def scenario() -> tuple[bytes, int | None]:
        seat = await DockerLauncher().start(seat_context(tmp_path, submission, "dockerimage"))
        assert seat.stdin is not None and seat.stdout is not None
        seat.stdin.write(b"ping\nexit 3\n")
        answer = await seat.stdout.readline()
        code = await asyncio.wait_for(seat.wait(), 30)
        await seat.stop()
        await seat.stop()  # twice is fine
        return answer, code

    answer, code = run(scenario())
    assert answer == b"ping\n" and code == 3
    assert containers_of("dockerimage") == []


@docker_test
def test_a_stdio_bot_whose_output_nobody_reads_still_ends_and_stops(tmp_path: Path) -> None:
    needs_docker()
    needs_gcc()
    submission = load_submission(images.echo_submission(tmp_path / "echo", how="image"))

    async def scenario() -> tuple[int | None, int, float, int | None]:
        launcher = DockerLauncher()
        # 3 MB fit in the arena's buffers: the bot exits while its output waits, unread.
        seat = await launcher.start(seat_context(tmp_path, submission, "dockerunread"))
        assert seat.stdin is not None and seat.stdout is not None
        seat.stdin.write(b"flood 3000000\nexit 4\n")
        code = await asyncio.wait_for(seat.wait(), 20)
        received = 0
        while chunk := await asyncio.wait_for(seat.stdout.read(1 << 16), 10):
            received += len(chunk)
        await seat.stop()
        # 50 MB do not: the bot blocks on its stdout, and stop() must not wait for anyone to read.
        stuck = await launcher.start(seat_context(tmp_path, submission, "dockerunread"))
        assert stuck.stdin is not None
        stuck.stdin.write(b"flood 50000000\n")
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await asyncio.wait_for(stuck.stop(), 15)
        return code, received, time.monotonic() - started, await asyncio.wait_for(stuck.wait(), 5)

    code, received, stop_s, stuck_code = run(scenario())
    assert code == 4 and received == 3_000_001
    assert stop_s < 5 and stuck_code == -9
    assert containers_of("dockerunread") == []


@docker_test
def test_stop_kills_a_running_container_and_removes_it(tmp_path: Path) -> None:
    needs_docker()
    folder = images.python_submission(tmp_path / "sleeper", "import time\ntime.sleep(600)\n", name="sleeper")

    async def scenario() -> tuple[int | None, int | None, list[Any]]:
        seat = await DockerLauncher().start(seat_context(tmp_path, load_submission(folder), "dockerstop"))
        await asyncio.sleep(0.2)
        assert seat.returncode is None
        running = containers_of("dockerstop")
        await asyncio.gather(seat.stop(), seat.stop())
        return seat.returncode, await asyncio.wait_for(seat.wait(), 10), running

    returncode, waited, running = run(scenario())
    assert len(running) == 1 and running[0]["Labels"]["polignac.seat"] == "0" and running[0]["Labels"]["polignac.bot"] == "sleeper@1"
    assert returncode == -9 and waited == -9
    assert containers_of("dockerstop") == []


@docker_test
def test_wait_reports_the_kill_even_when_the_removal_is_seen_before_stop_returns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The watcher may find the container gone while stop()'s thread is still returning its status."""
    needs_docker()
    needs_gcc()
    submission = load_submission(images.echo_submission(tmp_path / "echo", how="image"))
    kill_and_remove = DockerSeat._kill_and_remove

    def slow_to_return(seat: DockerSeat) -> int | None:
        code = kill_and_remove(seat)
        time.sleep(1.0)  # the container is gone; the watcher polls meanwhile
        return code

    state = DockerSeat._state

    def running_until_gone(seat: DockerSeat) -> dict[str, Any] | None:
        found = state(seat)  # the brief exited-but-not-yet-removed state is hidden: the watcher sees it gone
        return None if found is None else {**found, "Running": True}

    monkeypatch.setattr(DockerSeat, "_kill_and_remove", slow_to_return)
    monkeypatch.setattr(DockerSeat, "_state", running_until_gone)

    async def scenario() -> int | None:
        seat = await DockerLauncher().start(seat_context(tmp_path, submission, "dockerslowstop"))
        assert seat.stdin is not None
        seat.stdin.write(b"flood 50000000\n")  # its output backs up, so the watcher polls the state
        await asyncio.sleep(0.5)
        await asyncio.wait_for(seat.stop(), 15)
        return await asyncio.wait_for(seat.wait(), 5)

    assert run(scenario()) == -9
    assert containers_of("dockerslowstop") == []


@docker_test
def test_the_containers_of_a_match_can_be_swept_by_label(tmp_path: Path) -> None:
    needs_docker()
    folder = images.python_submission(tmp_path / "sleeper", "import time\ntime.sleep(600)\n", name="sleeper")

    async def scenario() -> tuple[list[str], int | None]:
        launcher = DockerLauncher()
        seat = await launcher.start(seat_context(tmp_path, load_submission(folder), "dockersweep"))
        swept = await asyncio.to_thread(launcher.remove_match_containers, "dockersweep")
        code = await asyncio.wait_for(seat.wait(), 10)  # the seat notices
        await seat.stop()  # and stopping what is gone is fine
        return swept, code

    swept, code = run(scenario())
    assert len(swept) == 1 and swept[0].startswith("polignac-dockersweep-seat0-")
    assert code in (None, -9)
    assert containers_of("dockersweep") == []


@docker_test
def test_images_are_never_pulled(tmp_path: Path) -> None:
    needs_docker()
    absent = tmp_path / "absent"
    absent.mkdir()
    (absent / "bot.toml").write_text(
        'name = "absent"\nversion = "1"\nlanguage = "c"\ncommand = ["/bot"]\nimage = "polignac-test/absent:nope"\n'
    )
    pulls = tmp_path / "pulls"
    pulls.mkdir()
    (pulls / "Dockerfile").write_text("FROM polignac-test/not-here:0\nCOPY . /bot\n")
    (pulls / "bot.toml").write_text('name = "pulls"\nversion = "1"\nlanguage = "c"\ncommand = ["/bot"]\ndockerfile = "Dockerfile"\n')
    launcher = DockerLauncher()
    refusals = ((absent, "is not on this machine, and the arena never pulls"), (pulls, "the image 'polignac-test/not-here:0' is not on"))
    for folder, message in refusals:
        with pytest.raises(SeatError, match=message):
            run(launcher.start(seat_context(tmp_path, load_submission(folder), "dockernopull")))
    assert containers_of("dockernopull") == []


@docker_test
def test_a_bot_that_cannot_start_leaves_no_container(tmp_path: Path) -> None:
    needs_docker()
    folder = tmp_path / "missing"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "bot.toml").write_text('name = "missing"\nversion = "1"\nlanguage = "c"\ncommand = ["./no-such-program"]\n')
    with pytest.raises(SeatError, match="cannot start the container of missing@1"):
        run(DockerLauncher().start(seat_context(tmp_path, load_submission(folder), "dockerbroken")))
    assert containers_of("dockerbroken") == []


def test_a_stdio_bot_gets_no_referee_socket_address_or_token(tmp_path: Path) -> None:
    """A stdio bot talks to the arena's bridge on its pipes: its container mounts no referee socket (no daemon needed)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    stdio = Submission(path=folder, name="s", version="1", language="python", command=("python", "bot.py"), transport=Transport.STDIO)
    grpc_bot = Submission(path=folder, name="g", version="1", language="python", command=("python", "bot.py"))
    launcher = DockerLauncher()
    quiet = launcher.container_config(seat_context(tmp_path, stdio, "stdio-env"), "runtime:1")
    talking = launcher.container_config(seat_context(tmp_path, grpc_bot, "grpc-env"), "runtime:1")
    assert "/run/polignac" not in [target for _, target in quiet["mounts"]]
    assert not {"POLIGNAC_ADDRESS", "POLIGNAC_TOKEN"} & set(quiet["environment"])
    assert "/run/polignac" in [target for _, target in talking["mounts"]]
    assert talking["environment"]["POLIGNAC_TOKEN"] == "t0k3n"
