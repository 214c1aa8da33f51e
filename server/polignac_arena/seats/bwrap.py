"""The bubblewrap command line of one sandbox, and how it is started through the trampoline.

:mod:`.sandbox` (bots) and its builds use it; what a sandbox gets is told in that module's
documentation.  bubblewrap's options reach it through an in-memory file (``--args``), so the
bot's token is in no command line and in no environment but the bot's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import signal
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from polignac_arena.folders import FolderError, copy_folder
from polignac_arena.seats.base import SeatContext, SeatError, SeatLimits
from polignac_arena.seats.cgroups import SeatCgroups
from polignac_arena.seats.common import host_runtime
from polignac_arena.seats.syscalls import seccomp_bpf

__all__ = [
    "BOT_DIR",
    "SANDBOX_SOCKET_DIR",
    "SDK_DIR",
    "TRAMPOLINE",
    "Plan",
    "data_fd",
    "make_plan",
    "reachable_by_others",
    "readable_by_others",
    "readable_copy",
    "rlimits",
    "sandbox_env",
    "spawn",
]

log = logging.getLogger(__name__)

TRAMPOLINE: Final = str(Path(__file__).with_name("trampoline.py"))
"""The program that sets a seat up as root and becomes bubblewrap (:mod:`.trampoline`), run as a script."""

SANDBOX_SOCKET_DIR: Final = "/run/polignac"
"""Where the referee's socket folder appears inside the sandbox."""
BOT_DIR: Final = "/bot"
"""Where the submission's folder appears inside the sandbox (read-only, the working directory)."""
SDK_DIR: Final = "/opt/polignac"
"""Holds the SDK's ``polignac`` package inside the sandbox (on ``PYTHONPATH``)."""

_AS_HEADROOM_MB: Final = 4096
"""Address space above ``memory_mb`` (see the module's docstring): the memory cgroup is the real cap."""
_AS_HEADROOM_NO_CGROUP_MB: Final = 1024
"""Without a memory cgroup RLIMIT_AS is the only cap, so it is kept tighter."""

# --- what the sandbox sees --------------------------------------------------------------------


def reachable_by_others(path: str) -> bool:
    """Whether a user with no rights of its own can reach ``path`` (every folder above it searchable by others)."""
    parts = Path(path).parents
    for folder in parts:
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def readable_by_others(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def readable_copy(source: Path, dest: Path, label: str, identity: tuple[int, int] | None = None) -> Path:
    """Copy a submission folder that only root can read, readable (and, where the owner may, runnable) by all.

    With ``identity`` the copy is made only of that folder, reached through no link: root reads what
    it copies, so a folder swapped for a link to one only root may read must not be copied.
    """
    try:
        copy_folder(source, dest, identity=identity)
    except FolderError as exc:
        raise SeatError(
            f"{label}: its folder {source} is readable by root only and cannot be copied for the sandbox ({exc.problem}):"
            " make it readable by all users (chmod a+rX)"
        ) from None
    log.info("%s: its folder %s is readable by root only: the sandbox gets a copy", label, source)
    return dest


@dataclass
class Plan:
    """The command line of one sandbox and what must happen in the child before bubblewrap starts."""

    argv: list[str]
    """bwrap's command line: its options come from a pipe (``--args``), then the bot's command."""
    env: dict[str, str]
    """bwrap's own environment (minimal: the bot's is set with ``--clearenv`` and ``--setenv``)."""
    pass_fds: list[int]
    uid: int | None
    staging: Path | None
    staged: list[tuple[str, str]] = field(default_factory=list)
    cgroup_procs: list[str] = field(default_factory=list)
    rlimits: list[tuple[int, tuple[int, int]]] = field(default_factory=list)
    fds_to_close: list[int] = field(default_factory=list)
    stderr_cap: int = SeatLimits.stderr_bytes
    stderr_drain: int = SeatLimits.stderr_drain_bytes_per_s
    """Bytes of the child's stderr that reach the arena (the trampoline drops the rest)."""

    def trampoline(self, report_fd: int) -> list[str]:
        """The command that sets the seat up as root and then becomes bubblewrap (see :mod:`.trampoline`)."""
        spec = {
            "report": report_fd,
            "parent": os.getpid(),
            "cgroups": self.cgroup_procs,
            "staged": self.staged,
            "rlimits": [[which, soft, hard] for which, (soft, hard) in self.rlimits],
            "uid": self.uid,
            "argv": self.argv,
            "stderr_cap": self.stderr_cap,
            "stderr_drain": self.stderr_drain,
        }
        return [sys.executable, "-I", "-S", TRAMPOLINE, json.dumps(spec)]

    def close(self) -> None:
        for fd in self.fds_to_close:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds_to_close.clear()


def data_fd(text: str | bytes) -> int:
    """A descriptor to read ``text`` from (bubblewrap's ``--args``, ``--ro-bind-data``, ``--seccomp``): an in-memory file."""
    data = text.encode() if isinstance(text, str) else text
    fd = os.memfd_create("polignac-sandbox", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def rlimits(limits: SeatLimits, with_nproc: bool, memory_cgroup: bool) -> list[tuple[int, tuple[int, int]]]:
    headroom = _AS_HEADROOM_MB if memory_cgroup else _AS_HEADROOM_NO_CGROUP_MB
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 2),
        (resource.RLIMIT_AS, (limits.memory_mb + headroom) << 20, (limits.memory_mb + headroom) << 20),
        (resource.RLIMIT_FSIZE, limits.file_size_mb << 20, limits.file_size_mb << 20),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if with_nproc:
        wanted.append((resource.RLIMIT_NPROC, limits.pids, limits.pids))
    result = []
    for which, soft, hard in wanted:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:  # never raise what the arena itself is held to
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        result.append((which, (soft, hard)))
    return result


def make_plan(
    bwrap: str,
    command: Sequence[str],
    *,
    limits: SeatLimits,
    env: dict[str, str],
    chdir: str,
    mounts: Sequence[tuple[str, str]],
    staging: Path | None,
    uid: int | None,
    cgroups: SeatCgroups | None,
    writable: Sequence[tuple[str, int]] = (),
    files: Sequence[tuple[str, bytes]] = (),
) -> Plan:
    """The bubblewrap command for ``command`` with the host folders ``mounts`` (source, destination) read-only,
    the tmpfs folders ``writable`` (path, size in MiB) and the read-only ``files`` (path, content)."""
    root = os.geteuid() == 0
    argv = [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "polignac",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(limits.tmpfs_mb << 20),
        "--tmpfs",
        "/tmp",
        "--size",
        str(max(1, limits.tmpfs_mb // 4) << 20),
        "--tmpfs",
        "/dev/shm",
    ]
    runtime = host_runtime()
    for top in runtime.system:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for path in runtime.etc:
        argv += ["--ro-bind", path, path]
    plan = Plan(argv=[], env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, pass_fds=[], uid=uid, staging=staging)
    shown_uid = uid if uid is not None else os.getuid()
    shown_gid = uid if uid is not None else os.getgid()
    for dest, text in (
        ("/etc/passwd", f"bot:x:{shown_uid}:{shown_gid}:bot:/tmp:/usr/sbin/nologin\n"),
        ("/etc/group", f"bot:x:{shown_gid}:\n"),
        ("/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"),
    ):
        fd = data_fd(text)
        plan.pass_fds.append(fd)
        plan.fds_to_close.append(fd)
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), dest]
    for index, (source, dest) in enumerate(mounts):
        if root and uid is not None and not reachable_by_others(source):
            if staging is None:
                raise SeatError(f"{source} is not reachable by the sandbox user and there is no staging folder")
            stage = staging / str(index)
            stage.mkdir(mode=0o755)
            os.chmod(stage, 0o755)
            plan.staged.append((source, str(stage)))
            source = str(stage)
        argv += ["--ro-bind", source, dest]
    for dest, size_mb in writable:
        argv += ["--perms", "0755", "--size", str(size_mb << 20), "--tmpfs", dest]
    for dest, content in files:
        fd = data_fd(content)
        plan.pass_fds.append(fd)
        plan.fds_to_close.append(fd)
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), dest]
    # The filter applies to the bot's command (bubblewrap loads it last, just before running it).
    seccomp_fd = data_fd(seccomp_bpf())
    plan.pass_fds.append(seccomp_fd)
    plan.fds_to_close.append(seccomp_fd)
    argv += ["--seccomp", str(seccomp_fd)]
    # The root and /dev (tmpfs that bubblewrap filled) become read-only: only /tmp, /dev/shm and ``writable`` stay writable.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", chdir, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    # The options reach bubblewrap through an in-memory file, not its command line (which anyone on the host
    # can read): the bot's token is not shown, and bubblewrap's own environment (the sandbox's pid 1, which
    # the bot can read) does not hold it either.
    options_fd = data_fd("".join(f"{word}\0" for word in argv))
    plan.pass_fds.append(options_fd)
    plan.fds_to_close.append(options_fd)
    plan.argv = [bwrap, "--args", str(options_fd), "--", *command]
    if cgroups is not None:
        plan.cgroup_procs = cgroups.procs_files
    plan.rlimits = rlimits(limits, with_nproc=uid is not None, memory_cgroup=cgroups is not None and "memory" in cgroups.dirs)
    plan.stderr_cap = limits.stderr_bytes
    plan.stderr_drain = limits.stderr_drain_bytes_per_s
    return plan


def sandbox_env(context: SeatContext | None) -> dict[str, str]:
    """The bot's whole environment: nothing of the arena's comes in."""
    python_bin = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "USER": "bot",
        "PYTHONPATH": ":".join([SDK_DIR, *host_runtime().python_path]),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if context is not None:
        env |= context.bot_environment(f"unix:{SANDBOX_SOCKET_DIR}/{context.referee_socket.name}")
    return env


async def spawn(plan: Plan, stdin: int, stdout: int, label: str, cwd: str | Path = "/") -> asyncio.subprocess.Process:
    """Start the trampoline and wait until its child runs ``plan.argv``; raises :class:`SeatError` with its reason."""
    loop = asyncio.get_running_loop()
    report_r, report_w = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *plan.trampoline(report_w),
            cwd=cwd,
            env=plan.env,
            stdin=stdin,
            stdout=stdout,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=[*plan.pass_fds, report_w],
            limit=1 << 20,
        )
    except OSError as exc:
        os.close(report_r)
        raise SeatError(f"cannot start {label}: {exc.strerror}") from None
    finally:
        os.close(report_w)
    try:
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(report_r, "rb", buffering=0))
        try:
            why = (await asyncio.wait_for(reader.read(), 30)).decode(errors="replace")
        except TimeoutError:
            why = "timed out setting up the sandbox"
        finally:
            transport.close()
    except BaseException:
        # Cancelled (a signal stops the arena) after the process was made: it must not outlive
        # the start, nor its pipes the event loop.
        await asyncio.shield(_kill_and_reap(process))
        raise
    if why:
        await _kill_and_reap(process)
        raise SeatError(f"cannot start {label}: {why}")
    return process


async def _kill_and_reap(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
