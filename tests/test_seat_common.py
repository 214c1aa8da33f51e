"""The two launchers of untrusted code share one module (:mod:`polignac_arena.seats.common`) and must not drift apart.

These tests fail when either launcher works out its host runtime mounts, its path
containment or its exit statuses on its own again.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from polignac_arena.seats import bwrap, common, docker, docker_seat, sandbox
from polignac_arena.seats.base import SeatContext, SeatLimits
from polignac_arena.seats.sandbox import SandboxProcess
from polignac_arena.submission import Submission

SEATS = Path(common.__file__).parent


def sandbox_mounts(tmp_path: Path) -> dict[str, str]:
    """Every path the bubblewrap sandbox gets from the host at the same path: path -> how (bind or symlink)."""
    runtime = common.host_runtime()
    plan = bwrap.make_plan(
        "/usr/bin/bwrap",
        ["true"],
        limits=SeatLimits(),
        env={},
        chdir="/tmp",
        mounts=[(r, r) for r in runtime.python],
        staging=None,
        uid=None,
        cgroups=None,
    )
    try:
        options_fd = int(plan.argv[plan.argv.index("--args") + 1])
        words = os.pread(options_fd, 1 << 20, 0).decode().split("\0")
    finally:
        plan.close()
    found: dict[str, str] = {}
    for index, word in enumerate(words):
        if word == "--ro-bind" and words[index + 1] == words[index + 2]:
            found[words[index + 2]] = "bind"
        elif word == "--symlink":
            found[words[index + 2]] = "symlink"
    return found


def docker_mounts(tmp_path: Path) -> set[str]:
    """Every path a runtime-image container gets from the host at the same path."""
    folder = tmp_path / "bot"
    folder.mkdir()
    submission = Submission(path=folder, name="b", version="1", language="python", command=("python", "bot.py"))
    context = SeatContext(
        seat=0, token="t", submission=submission, limits=SeatLimits(), referee_socket=tmp_path / "r.sock", workdir=tmp_path
    )
    config = docker.DockerLauncher().container_config(context, "image")
    return {source for source, target in config["mounts"] if source == target}


def test_both_launchers_mount_the_host_runtime_of_the_shared_module(tmp_path: Path) -> None:
    runtime = common.host_runtime()
    expected = {*runtime.system, *runtime.python, *runtime.etc}
    assert "/usr" in expected and any(os.path.basename(p).startswith("ld.so") for p in runtime.etc)
    in_sandbox = sandbox_mounts(tmp_path)
    assert set(in_sandbox) - {"/etc/passwd", "/etc/group", "/etc/hosts"} == expected
    for top in runtime.system:  # a link on the host stays a link in the sandbox
        assert in_sandbox[top] == ("symlink" if os.path.islink(top) else "bind"), top
    assert docker_mounts(tmp_path) == expected


def test_both_launchers_put_the_sdk_dependencies_on_the_same_pythonpath() -> None:
    runtime = common.host_runtime()
    in_sandbox = bwrap.sandbox_env(None)["PYTHONPATH"].split(":")
    _, in_docker = docker.host_runtime()
    assert in_sandbox[1:] == in_docker.split(":")[1:] == list(runtime.python_path)
    assert set(runtime.python_path) <= set(runtime.python)


@pytest.mark.parametrize("code", [None, 0, 1, 2, 125, 126, 127, 128, 129, 137, 143, 192, 193, 255])
def test_both_launchers_read_exit_codes_the_same_way(code: int | None) -> None:
    bubblewrap = SandboxProcess.returncode.fget(SimpleNamespace(process=SimpleNamespace(returncode=code)))  # type: ignore[attr-defined]  # the property's getter on a stand-in object
    assert bubblewrap == docker_seat.docker_exit_status(code) == common.exit_status(code)


def test_neither_launcher_defines_its_own_copy() -> None:
    assert docker_seat.docker_exit_status is common.exit_status
    assert vars(sandbox)["exit_status"] is common.exit_status
    shared = {"within", "exit_status", "module_root", "host_runtime", "_within", "_covered", "_exit_status", "_module_root"}
    shared |= {"_python_view", "_etc_files", "docker_exit_status"}
    for name in ("sandbox.py", "bwrap.py", "docker.py", "docker_seat.py", "process.py"):
        tree = ast.parse((SEATS / name).read_text())
        defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        allowed = {"host_runtime"} if name == "docker.py" else set()  # the shared runtime as docker mounts
        assert defined & shared <= allowed, f"{name} defines its own {sorted(defined & shared - allowed)}"
        strings = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
        assert not any("import " in s and "os" in s and "\n" in s for s in strings), f"{name} embeds a program in a string"


def test_the_trampoline_is_a_real_file_run_as_a_script() -> None:
    plan = bwrap.Plan(argv=["/usr/bin/bwrap"], env={}, pass_fds=[], uid=None, staging=None)
    command = plan.trampoline(99)
    assert command[1:4] == ["-I", "-S", str(SEATS / "trampoline.py")]
    assert "-c" not in command


def test_the_runtime_holds_the_jdk_configuration_a_jvm_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian's JDK links jvm.cfg and java.security into /etc/java-*-openjdk: without that folder a JVM cannot start."""
    etc = tmp_path / "etc"
    (etc / "java-17-openjdk" / "security").mkdir(parents=True)
    (etc / "java-21-openjdk").mkdir()
    (etc / "java-home").mkdir()  # no match: only the JDKs' configuration folders
    (etc / "java-8-openjdk").symlink_to(etc / "java-17-openjdk")  # a link is not followed out of /etc
    monkeypatch.setattr(common, "ETC_PATTERNS", (f"{etc}/java-*-openjdk",))
    common.host_runtime.cache_clear()
    try:
        runtime = common.host_runtime()
        assert [path for path in runtime.etc if path.startswith(str(etc))] == [f"{etc}/java-17-openjdk", f"{etc}/java-21-openjdk"]
        assert "/etc/passwd" not in runtime.etc and "/etc/shadow" not in runtime.etc
    finally:
        common.host_runtime.cache_clear()
