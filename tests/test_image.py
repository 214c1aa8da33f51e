"""The league's image (deploy/Dockerfile) and its compose stack (deploy/compose.yaml), for real.

The image is built with scripts/league-image.sh from the local base image (.ci/run makes it: there is no container
registry), tagged by a hash of what goes into it so that an unchanged tree reuses it. The stack runs on the host's
network, every service bound to 127.0.0.1 on ports the OS chose, under a compose project of this test's own; it
is taken down with its volumes when the test ends, and a stack left by a test run that was killed is taken down by
the next run (its project name holds the pid of the pytest that made it).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docker_images import daemon_problem
from tests.image_tag import image_tag

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_FILE = ROOT / "deploy" / "compose.yaml"
BASE_IMAGE = "polignac/base:bookworm"
PROJECT_PREFIX = "polignac-image-test-"
BOTS = ("random", "heuristic", "cautious")
"""Three Python sample bots: the league's tables are of three."""
STACK_TIMEOUT_S = 240.0
"""For the stack to answer, and then for its first match on the worker (generous: the machine is shared)."""

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _problem() -> str | None:
    """Why the image cannot be built and run here, or None."""
    problem = daemon_problem()
    if problem is not None:
        return problem
    if shutil.which("docker-compose") is None:
        return "docker-compose is not installed (apt-get install docker-compose; .ci/run installs it)"
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True, check=False).returncode != 0:
        return f"the local base image {BASE_IMAGE} is absent (scripts/base-image.sh makes it; .ci/run runs it)"
    if sys.version_info[:2] != (3, 11):
        return "the image's wheels are made by this Python, which must be 3.11 as the image's is"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def league_image() -> str:
    """The league's image, built (or found, when this tree's was built before) with scripts/league-image.sh."""
    problem = _problem()
    if problem is not None:
        pytest.skip(problem)
    tag = image_tag()
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode != 0:
        env = {**os.environ, "POLIGNAC_IMAGE": tag, "PYTHON": sys.executable}
        done = subprocess.run(
            [str(ROOT / "scripts" / "league-image.sh")], env=env, capture_output=True, text=True, timeout=1200, check=False
        )
        assert done.returncode == 0, f"scripts/league-image.sh failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return tag


def _run(image: str, *args: str, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "run", "--rm", *options, image, *args], capture_output=True, text=True, timeout=120, check=False)


def test_the_image_runs_the_arena_as_a_user_of_its_own(league_image: str) -> None:
    done = _run(league_image, "--help")
    assert done.returncode == 0 and "league" in done.stdout, done.stderr
    who = _run(league_image, "id", "-u")
    assert who.stdout.strip() == "10001"
    tools = _run(league_image, "sh", "-c", "python --version && bwrap --version && ray --version")
    assert tools.returncode == 0 and "Python 3.11" in tools.stdout and "bubblewrap" in tools.stdout, tools.stderr


def test_the_entrypoint_refuses_what_it_cannot_run(league_image: str, tmp_path: Path) -> None:
    worker = _run(league_image, "ray-worker")
    assert worker.returncode != 0 and "POLIGNAC_RAY_ADDRESS" in worker.stderr
    (tmp_path / "league.toml").write_text('name = "main"\ntable_size = 9\n')
    tmp_path.chmod(0o755)
    (tmp_path / "league.toml").chmod(0o644)
    league = _run(league_image, "league", options=("-v", f"{tmp_path / 'league.toml'}:/etc/polignac/league.toml:ro"))
    assert league.returncode != 0 and "table_size" in league.stderr, league.stderr
    unknown = _run(league_image, "no-such-command")
    assert unknown.returncode != 0 and "no-such-command" in unknown.stderr


def _compose(project: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker-compose", "--no-ansi", "-p", project, "-f", str(COMPOSE_FILE), *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale_stacks() -> None:
    """Take down the stacks of test runs that were killed before their finalizer ran."""
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=com.docker.compose.project", "--format", '{{.Label "com.docker.compose.project"}}'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    for project in sorted(set(listed.stdout.split())):
        match = re.fullmatch(re.escape(PROJECT_PREFIX) + r"(\d+)-[0-9a-f]+", project)
        if match and not _pid_alive(int(match.group(1))):
            _compose(project, "down", "-v", "-t", "5", "--remove-orphans")


@pytest.fixture
def stack(league_image: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The compose stack up, on ports of its own; taken down with its volumes at the end, whatever happens."""
    _sweep_stale_stacks()
    http, grpc, ray = _free_port(), _free_port(), _free_port()
    config = (ROOT / "deploy" / "league.toml").read_text()
    config = config.replace("table_size = 4", "table_size = 3")
    config = config.replace("127.0.0.1:8080", f"127.0.0.1:{http}").replace("127.0.0.1:50051", f"127.0.0.1:{grpc}")
    folder = tmp_path / "stack"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "league.toml").write_text(config)
    project = f"{PROJECT_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    worker = f"worker-{secrets.token_hex(3)}"
    env = {
        "POLIGNAC_IMAGE": league_image,
        "POLIGNAC_LEAGUE_TOML": str(folder / "league.toml"),
        "POLIGNAC_RAY_PORT": str(ray),
        "POLIGNAC_WORKER_NAME": worker,
    }
    try:
        up = _compose(project, "up", "-d", "--no-build", env=env)
        assert up.returncode == 0, f"docker-compose up failed:\n{up.stdout}{up.stderr}"
        yield {"project": project, "env": env, "http": f"http://127.0.0.1:{http}", "worker": worker, "folder": folder}
    finally:
        _compose(project, "down", "-v", "-t", "2", "--remove-orphans", env=env)


def _tcp_peers(port: int) -> list[tuple[str, str]]:
    """The local and remote addresses of this network namespace's TCP sockets with ``port`` at either end."""
    peers = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            next(lines)
            for line in lines:
                local, remote = line.split()[1:3]
                ends = [_proc_address(end) for end in (local, remote)]
                if port in (ends[0][1], ends[1][1]) and ends[1][1] != 0:
                    peers.append((ends[0][0], ends[1][0]))
    return peers


def _proc_address(text: str) -> tuple[str, int]:
    """An address of /proc/net/tcp{,6}: hex of the kernel's 32-bit words in this machine's byte order, and a port."""
    host, port = text.split(":")
    raw = b"".join(int(host[i : i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(host), 8))
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port, 16)


def _logs(stack: dict[str, Any], tail: str = "40") -> str:
    done = _compose(stack["project"], "logs", "--tail", tail, env=stack["env"], timeout=60)
    return done.stdout if tail == "all" else done.stdout[-6000:]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except OSError:
        return 0, ""


def _wait_for(what: str, check: Any, stack: dict[str, Any], deadline: float) -> Any:
    """Ask ``check()`` until it returns something true, failing with the stack's logs at ``deadline``."""
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {STACK_TIMEOUT_S:.0f} s; the stack's logs:\n{_logs(stack)}")
        time.sleep(0.5)


def test_the_compose_stack_plays_a_ladder_match_on_the_ray_worker(stack: dict[str, Any]) -> None:
    deadline = time.monotonic() + STACK_TIMEOUT_S
    _wait_for("the league did not answer", lambda: _get(stack["http"] + "/api/league/status")[0] == 200, stack, deadline)

    user = _compose(stack["project"], "exec", "-T", "league", "polignac", "league", "user", "add", "tester",
                    "--config", "/etc/polignac/league.toml", env=stack["env"], timeout=120)  # fmt: skip
    tokens = re.findall(r"plg_\S+", user.stdout)
    assert user.returncode == 0 and len(tokens) == 1, f"{user.stdout}{user.stderr}"
    token_file = stack["folder"] / "token"
    token_file.write_text(tokens[0] + "\n")
    token_file.chmod(0o600)
    for bot in BOTS:
        submit = subprocess.run(
            [sys.executable, "-m", "polignac_arena.cli", "league", "submit", str(ROOT / "sample_bots" / bot),
             "--server", stack["http"], "--token-file", str(token_file)],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert submit.returncode == 0 and "accepted" in submit.stdout, f"{submit.stdout}{submit.stderr}\n{_logs(stack)}"

    def match_on_the_worker() -> dict[str, Any] | None:
        status, body = _get(stack["http"] + "/api/matches?tournament=main")
        if status != 200:
            return None
        matches: list[dict[str, Any]] = json.loads(body)["matches"]
        return next((m for m in matches if m["status"] == "finished" and m["node"] == stack["worker"]), None)

    match = _wait_for("no match finished on the Ray worker", match_on_the_worker, stack, time.monotonic() + STACK_TIMEOUT_S)
    assert sorted(seat.split("@")[0] for seat in match["seats"]) == sorted(BOTS)
    assert sorted(match["places"]) in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1]) and match["hands"] >= 1

    status, metrics = _get(stack["http"] + "/metrics")
    assert status == 200
    counted = re.search(rf'^polignac_node_matches_total\{{node="{re.escape(stack["worker"])}"\}} (\S+)$', metrics, re.M)
    assert counted and float(counted.group(1)) >= 1, metrics[-2000:]
    # Ray's nodes talk to each other on 127.0.0.1 only (ray start alone would use the machine's outward address).
    ray_peers = _tcp_peers(int(stack["env"]["POLIGNAC_RAY_PORT"]))
    assert ray_peers and all(ipaddress.ip_address(end).is_loopback for pair in ray_peers for end in pair), ray_peers
    logs = _logs(stack, tail="all")
    assert "weaker containment" not in logs, logs[-6000:]  # the sandbox has its cgroups in the containers too
    with contextlib.suppress(OSError):
        token_file.unlink()
