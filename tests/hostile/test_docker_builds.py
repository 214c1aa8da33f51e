"""Hostile Dockerfiles: builds that fetch from the host, pull, or run wild in their ``RUN`` steps.

A loopback HTTP server on the host stands for a service with a secret (and for a registry):
every Dockerfile that would reach it is refused before the daemon sees it, and the server
gets no request.  ``RUN`` steps run a static tool (``bots/build_tool.c``) from a local image.
"""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from polignac_arena.owners import identity
from polignac_arena.seats import SeatError, SeatLimits
from polignac_arena.seats import docker as docker_seats
from polignac_arena.seats.docker import DockerLauncher
from polignac_arena.seats.docker_build import BUILD_CGROUP_ROOT, BuildFailed, BuildRequest, build_image
from polignac_arena.seats.dockerfile import DockerfileError
from polignac_arena.submission import Submission, load_submission
from tests import docker_images as images

pytestmark = pytest.mark.docker

SECRET = "the-host-secret-0f4e1c"


def needs_docker_and_gcc() -> None:
    problem = images.daemon_problem() or images.gcc_problem()
    if problem is not None:
        pytest.skip(f"docker builds cannot be tested here: {problem}")


class _Secret(http.server.BaseHTTPRequestHandler):
    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = SECRET.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def secret_server() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP server holding a secret (and answering registry probes); the paths asked of it."""
    requests: list[str] = []
    handler = type("Handler", (_Secret,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()


def submission(folder: Path, dockerfile: str, files: dict[str, tuple[bytes, int]] | None = None) -> Submission:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Dockerfile").write_text(dockerfile)
    for name, (data, mode) in (files or {}).items():
        (folder / name).write_bytes(data)
        (folder / name).chmod(mode)
    (folder / "bot.toml").write_text(
        'name = "hostile-build"\nversion = "1"\nlanguage = "c"\ncommand = ["/tool", "id"]\ndockerfile = "Dockerfile"\n'
    )
    return load_submission(folder)


@contextlib.contextmanager
def daemon_builds_counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Counts the builds that reach the daemon."""
    sent: list[str] = []
    real = build_image  # the function docker_seats calls, patched there below

    def spy(request: BuildRequest, context: IO[bytes], size: int) -> str:
        sent.append(request.tag)
        return real(request, context, size)

    monkeypatch.setattr(docker_seats, "build_image", spy)
    yield sent


# -- fetching from the host, pulling ----------------------------------------------------------------------------

FETCHES = {
    "add-url": "FROM scratch\nADD http://127.0.0.1:{port}/secret /secret\n",
    "add-lowercase": "from scratch\nadd http://127.0.0.1:{port}/secret /secret\n",
    "add-json": 'FROM scratch\nADD ["http://127.0.0.1:{port}/secret", "/secret"]\n',
    "add-continued-past-a-comment": "FROM scratch\nADD \\\n  # a comment in between\n  http://127.0.0.1:{port}/secret /secret\n",
    "add-escape-directive": "# escape=`\nFROM scratch\nADD `\n\n  http://127.0.0.1:{port}/secret /secret\n",
    "add-checksum": "FROM scratch\nADD --checksum=sha256:{zeros} http://127.0.0.1:{port}/secret /secret\n",
    "add-git": "FROM scratch\nADD git@127.0.0.1:{port}/repo.git /repo\n",
    "from-continuation-bypass": "FROM \\\n\n127.0.0.1:{port}/evil:1\n",
    "from-arg": "ARG BASE=127.0.0.1:{port}/evil:1\nFROM --platform=linux/amd64 $BASE\n",
    "from-lowercase-as": "from 127.0.0.1:{port}/evil:1 as build\n",
    "copy-from-remote-image": 'FROM {tool}\nCOPY --from=127.0.0.1:{port}/evil:1 ["/x", "/x"]\n',
    "run-mount-secret": 'FROM {tool}\nRUN --mount=type=secret,id=s ["/tool", "id"]\n',
    "run-network-host": 'FROM {tool}\nRUN --network=host ["/tool", "id"]\n',
    "heredoc-hiding-an-add": "FROM {tool}\nRUN <<EOF\nADD http://127.0.0.1:{port}/secret /secret\nEOF\n",
    "onbuild": "FROM {tool}\nONBUILD ADD http://127.0.0.1:{port}/secret /secret\n",
    "volume": "FROM {tool}\nVOLUME /data\n",
    "named-root-user": "FROM {tool}\nUSER root\n",
}


@pytest.mark.parametrize("trick", list(FETCHES))
def test_a_dockerfile_that_fetches_is_refused_before_the_daemon_sees_it(
    trick: str, tmp_path: Path, secret_server: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_docker_and_gcc()
    port, requests = secret_server
    text = FETCHES[trick].format(port=port, tool=images.tool_image(), zeros="0" * 64)
    with daemon_builds_counted(monkeypatch) as sent, pytest.raises(DockerfileError) as refused:
        DockerLauncher().image_for(submission(tmp_path / "bot", text), SeatLimits())
    assert str(refused.value).startswith("Dockerfile of hostile-build@1: line "), refused.value
    assert sent == [], "the build reached the daemon"
    assert requests == [], f"the host's server was asked for {requests}"


def test_the_issues_continuation_bypass_names_the_image_it_refuses(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    with pytest.raises(DockerfileError, match=r"line 1: the image 'busybox:1\.36' is not on this machine"):
        DockerLauncher().image_for(submission(tmp_path / "bot", "FROM \\\n\nbusybox:1.36\n"), SeatLimits())


def test_a_base_image_with_onbuild_triggers_is_refused(tmp_path: Path, secret_server: tuple[int, list[str]]) -> None:
    needs_docker_and_gcc()
    port, requests = secret_server
    trigger = f"ADD http://127.0.0.1:{port}/secret /secret"
    base = images.build_test_image("onbuild", f"FROM {images.tool_image()}\nONBUILD {trigger}\n", {})
    try:
        with pytest.raises(DockerfileError, match="has ONBUILD triggers"):
            DockerLauncher().image_for(submission(tmp_path / "bot", f"FROM {base}\n"), SeatLimits())
    finally:
        images.client().api.remove_image(base, force=True)  # its tag names this run's port
    assert requests == []


def test_an_image_removed_after_the_check_is_an_error_not_a_pull(tmp_path: Path) -> None:
    """The daemon builds bare 64-hex IDs: an ID that is not here fails at once, with no registry asked."""
    needs_docker_and_gcc()
    launcher = DockerLauncher()
    client = launcher._connect()
    missing = "f" * 63 + "e"
    request = BuildRequest(
        base_url=launcher.base_url,
        api_version=str(client.api.api_version),
        tag="polignac-test/never:1",
        labels={},
        limits=SeatLimits(),
        timeout_s=60,
    )
    context = io.BytesIO()
    from polignac_arena.seats.docker_build import context_archive

    (tmp_path / "ctx").mkdir()
    context_archive(tmp_path / "ctx", f"# escape=\\\nFROM {missing}\nUSER 65534:65534\n", context)
    size = context.tell()
    context.seek(0)
    started = time.monotonic()
    with pytest.raises(BuildFailed, match="cannot specify 64-byte hexadecimal strings"):
        build_image(request, context, size)
    assert time.monotonic() - started < 10


# -- run steps: caps, the wall clock, the user ------------------------------------------------------------------


def leftover_build_cgroups() -> list[str]:
    """This process's build cgroups still there (another arena on the machine may be building meanwhile)."""
    me = identity(os.getpid())
    assert me is not None
    mine = f"@{me[0]}.{me[1]}"
    return sorted(
        str(path) for path in Path("/sys/fs/cgroup").glob(f"*/{BUILD_CGROUP_ROOT}/*") if path.is_dir() and path.name.endswith(mine)
    )


def processes_with(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if marker in cmdline and "pytest" not in cmdline:
                    found.append(f"{pid}: {cmdline[:100]}")
    return found


def test_a_fork_bomb_in_a_run_step_is_capped_by_the_seats_pids(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    text = f'FROM {images.tool_image()}\nRUN ["/tool", "fork", "300"]\n'
    with pytest.raises(BuildFailed) as failed:
        DockerLauncher().image_for(submission(tmp_path / "bot", text), SeatLimits(pids=16))
    message = str(failed.value)
    line = next((line for line in message.splitlines() if line.startswith("forked ")), "")
    assert line.endswith("then: Resource temporarily unavailable") and int(line.split()[1]) < 16, message
    assert leftover_build_cgroups() == []


def test_a_run_step_allocating_2_gb_is_killed_at_the_seats_memory(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    text = f'FROM {images.tool_image()}\nRUN ["/tool", "alloc", "2048"]\n'
    with pytest.raises(BuildFailed) as failed:
        DockerLauncher().image_for(submission(tmp_path / "bot", text), SeatLimits(memory_mb=128))
    message = str(failed.value)
    assert "returned a non-zero code: 137" in message, message
    assert "allocated 2048 MB" not in message and "allocated 256 MB" not in message, message
    assert leftover_build_cgroups() == []


def test_a_run_step_that_never_ends_is_stopped_by_the_wall_clock(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    marker = f"sleeper{uuid.uuid4().hex[:10]}"
    text = f'FROM {images.tool_image()}\nRUN ["/tool", "sleep", "{marker}"]\n'
    launcher = DockerLauncher(build_timeout_s=5)
    started = time.monotonic()
    with pytest.raises(BuildFailed, match=r"the build ran past its 5 s limit and was stopped"):
        launcher.image_for(submission(tmp_path / "bot", text), SeatLimits())
    assert time.monotonic() - started < 30
    assert processes_with(marker) == []
    containers = images.client().api.containers(all=True)
    assert [c["Id"] for c in containers if marker in str(c.get("Command"))] == []
    assert leftover_build_cgroups() == []


def test_run_steps_run_as_nobody_even_with_a_setuid_file(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    tool = images.tool_binary().read_bytes()
    text = f'FROM {images.tool_image()}\nCOPY suid /suid\nRUN ["/suid", "id", "fail"]\n'
    with pytest.raises(BuildFailed) as failed:
        DockerLauncher().image_for(submission(tmp_path / "bot", text, {"suid": (tool, 0o4755)}), SeatLimits())
    assert "uid=65534 euid=65534 gid=65534 egid=65534" in str(failed.value), failed.value


def test_a_polite_build_with_run_steps_succeeds_and_its_image_runs(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    text = f'FROM {images.tool_image()} AS tools\nRUN ["/tool", "id"]\nFROM scratch\nCOPY --from=tools /tool /tool\nUSER 1000:1000\n'
    launcher = DockerLauncher()
    tag = launcher.image_for(submission(tmp_path / "bot", text), SeatLimits())
    config = images.client().api.inspect_image(tag)["Config"]
    assert config["User"] == "1000:1000" and not config.get("Volumes")
    output = images.client().containers.run(tag, ["/tool", "id"], remove=True, network_mode="none", user="65534:65534")
    assert b"uid=65534" in output
    assert leftover_build_cgroups() == []


def test_seat_errors_are_what_a_refused_build_raises() -> None:
    assert issubclass(DockerfileError, SeatError) and issubclass(BuildFailed, SeatError)
