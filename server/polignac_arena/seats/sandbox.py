"""``process`` seats in a bubblewrap sandbox: untrusted bots as unprivileged, contained processes.

What a sandboxed bot gets (DESIGN.md, "Running bots"):

- **No rights.** bubblewrap itself runs as a uid/gid of its own for this seat (a free one
  from ``200000`` up, distinct for every seat running on this machine at the same time),
  with no supplementary groups, ``no_new_privs`` and no capabilities, and creates an
  unprivileged user namespace.  Run as root, bwrap with ``--uid`` would map the sandbox to
  root outside; a plain uid cannot read root-owned files and is held to ``RLIMIT_NPROC``.
  Nested user namespaces are disabled (``--disable-userns``).
- **No network.** Every namespace is new (``--unshare-all``): inside there is only ``lo``.
  The referee is reached through its unix socket, mounted at ``/run/polignac``.
- **A read-only view of what it needs:** the host runtime that docker seats get too
  (:mod:`.common`: ``/usr`` and ``/bin``, ``/lib``... as on the host, a few harmless ``/etc``
  files, the Python installation that runs the arena at its own path), a made-up
  ``passwd``/``group``/``hosts`` (not the host's), the SDK at ``/opt/polignac``, and the submission's folder
  at ``/bot`` (the working directory).  Its own ``/proc`` (own PID namespace: it sees only
  its processes), a minimal read-only ``/dev``, and private writable ``/tmp`` and
  ``/dev/shm`` (tmpfs of ``SeatLimits.tmpfs_mb`` and a quarter of that); nothing else is
  writable.  Its environment is made from scratch: the arena's never leaks in.
- **Limits.** rlimits on CPU time, address space, file size, open files, processes and
  core dumps; when cgroup v1 controllers are writable (as root), a cgroup per seat under
  the arena's own cgroup caps its processes (``pids.max``), memory
  (``memory.limit_in_bytes``, and swap) and CPU share (``cpu.cfs_quota_us``).  The memory
  cgroup is the real memory cap: ``RLIMIT_AS`` is only a backstop, set well above
  ``memory_mb`` because Python with gRPC (or Node) reserves far more address space than it
  uses.  Without cgroups the caps are the rlimits alone, held per seat by the distinct uid,
  and a log line says that containment is weaker.  (Seat uids: :mod:`.uids`; cgroups:
  :mod:`.cgroups`.)
- **Nothing outlives the match.** PID namespaces: when the first process of one dies, the
  kernel kills every process in it, double-forked daemons included.  As root, bubblewrap
  itself starts as the first process of a PID namespace of its own, under a monitor that
  dies with the arena (``PR_SET_PDEATHSIG``, checked against a parent that died first) and
  takes bubblewrap with it; bubblewrap's ``--die-with-parent`` alone would leave a sandbox
  running if the arena died in the moment between bubblewrap's clone and its child setting
  that up (seen: about one kill in twelve during a seat's start).  ``stop()`` also kills
  whatever is in the seat's cgroups and whatever still runs as the seat's uid, then removes
  the cgroups.

How a seat starts: the arena (which has gRPC threads, so it never runs Python code in a
forked child) starts a small trampoline (:mod:`.trampoline`, run as a script by a fresh
``python -I -S``), that as root joins the
seat's cgroups, stages unreachable folders, sets the rlimits, makes a PID namespace and
forks; the child drops to the seat's uid and gid with no groups and execs bubblewrap, the
trampoline stays as its monitor and exits as it exits.  Any failure comes back through a
pipe as a clear :class:`SeatError`.  bubblewrap's options reach it through an in-memory file (``--args``),
so the bot's token is in no command line and in no environment but the bot's.

Paths the sandbox user cannot reach (``/root`` is mode 700, so is a pytest temp dir) are
first bind-mounted, as root and in a private mount namespace of the trampoline only, on a
staging folder in the seat's workdir; bubblewrap (as the sandbox user) mounts them from
there.  (bubblewrap 0.8 resolves ``--ro-bind-fd`` descriptors back to their path with
``realpath``, so an ``O_PATH`` descriptor does not get around the permission.)

Run as a user other than root (a developer's machine), the uid switch and staging are
skipped: bubblewrap runs as that user, without ``RLIMIT_NPROC`` (the user's other
processes would count against it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from polignac_arena.seats.base import SeatContext, SeatError, SeatKind, SeatLauncher, SeatLimits, SeatProcess
from polignac_arena.seats.cgroups import SeatCgroups, warn_weaker_containment
from polignac_arena.seats.common import exit_status, host_runtime
from polignac_arena.seats.process import LocalProcess, std_pipes
from polignac_arena.seats.uids import allocate_uid, kill_uid, processes_of_uid, release_uid

__all__ = ["SANDBOX_SOCKET_DIR", "SandboxLauncher", "SandboxProcess"]

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


def _reachable_by_others(path: str) -> bool:
    """Whether a user with no rights of its own can reach ``path`` (every folder above it searchable by others)."""
    parts = Path(path).parents
    for folder in parts:
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _readable_by_others(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


_COPY_MAX_BYTES: Final = 256 << 20
_COPY_MAX_FILES: Final = 10_000


def _readable_copy(source: Path, dest: Path, label: str) -> Path:
    """Copy a submission folder that only root can read, readable (and, where the owner may, runnable) by all."""
    total, files = 0, 0
    for folder, _dirs, names in os.walk(source):
        for name in names:
            files += 1
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
            if files > _COPY_MAX_FILES or total > _COPY_MAX_BYTES:
                raise SeatError(
                    f"{label}: its folder {source} is readable by root only and too big to copy for the sandbox"
                    f" (over {_COPY_MAX_FILES} files or {_COPY_MAX_BYTES >> 20} MB): make it readable by all users (chmod a+rX)"
                )
    shutil.copytree(source, dest, symlinks=True)
    for folder, _dirs, names in os.walk(dest):
        os.chmod(folder, 0o755)
        for name in names:
            path = os.path.join(folder, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                os.chmod(path, 0o755 if mode & stat.S_IXUSR else 0o644)
    log.info("%s: its folder %s is readable by root only: the sandbox gets a copy", label, source)
    return dest


@dataclass
class _Plan:
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
        }
        return [sys.executable, "-I", "-S", TRAMPOLINE, json.dumps(spec)]

    def close(self) -> None:
        for fd in self.fds_to_close:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds_to_close.clear()


def _data_fd(text: str) -> int:
    """A descriptor to read ``text`` from (for bubblewrap's ``--args`` and ``--ro-bind-data``): an in-memory file."""
    data = text.encode()
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


def _rlimits(limits: SeatLimits, with_nproc: bool, memory_cgroup: bool) -> list[tuple[int, tuple[int, int]]]:
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


def _plan(
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
) -> _Plan:
    """The bubblewrap command for ``command`` with the host folders ``mounts`` (source, destination) read-only."""
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
    plan = _Plan(argv=[], env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, pass_fds=[], uid=uid, staging=staging)
    shown_uid = uid if uid is not None else os.getuid()
    shown_gid = uid if uid is not None else os.getgid()
    for dest, text in (
        ("/etc/passwd", f"bot:x:{shown_uid}:{shown_gid}:bot:/tmp:/usr/sbin/nologin\n"),
        ("/etc/group", f"bot:x:{shown_gid}:\n"),
        ("/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"),
    ):
        fd = _data_fd(text)
        plan.pass_fds.append(fd)
        plan.fds_to_close.append(fd)
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), dest]
    for index, (source, dest) in enumerate(mounts):
        if root and uid is not None and not _reachable_by_others(source):
            if staging is None:
                raise SeatError(f"{source} is not reachable by the sandbox user and there is no staging folder")
            stage = staging / str(index)
            stage.mkdir(mode=0o755)
            os.chmod(stage, 0o755)
            plan.staged.append((source, str(stage)))
            source = str(stage)
        argv += ["--ro-bind", source, dest]
    # The root and /dev (tmpfs that bubblewrap filled) become read-only: only /tmp and /dev/shm are writable.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", chdir, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    # The options reach bubblewrap through an in-memory file, not its command line (which anyone on the host
    # can read): the bot's token is not shown, and bubblewrap's own environment (the sandbox's pid 1, which
    # the bot can read) does not hold it either.
    options_fd = _data_fd("".join(f"{word}\0" for word in argv))
    plan.pass_fds.append(options_fd)
    plan.fds_to_close.append(options_fd)
    plan.argv = [bwrap, "--args", str(options_fd), "--", *command]
    if cgroups is not None:
        plan.cgroup_procs = cgroups.procs_files
    plan.rlimits = _rlimits(limits, with_nproc=uid is not None, memory_cgroup=cgroups is not None and "memory" in cgroups.dirs)
    return plan


def _sandbox_env(context: SeatContext | None) -> dict[str, str]:
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


def _command_inside(context: SeatContext) -> list[str]:
    """The bot's command as run in the sandbox (``python`` is this interpreter, at its own path)."""
    return list(context.submission.host_command())


async def _spawn(plan: _Plan, stdin: int, stdout: int, label: str) -> asyncio.subprocess.Process:
    """Start the trampoline and wait until it has become bubblewrap; raises :class:`SeatError` with its reason."""
    loop = asyncio.get_running_loop()
    report_r, report_w = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *plan.trampoline(report_w),
            cwd="/",
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
        raise SeatError(f"cannot start the sandbox of {label}: {exc.strerror}") from None
    finally:
        os.close(report_w)
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(report_r, "rb", buffering=0))
    try:
        why = (await asyncio.wait_for(reader.read(), 30)).decode(errors="replace")
    except TimeoutError:
        why = "timed out setting up the sandbox"
    finally:
        transport.close()
    if why:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise SeatError(f"cannot start the sandbox of {label}: {why}")
    return process


# --- the seat ---------------------------------------------------------------------------------


class SandboxProcess(LocalProcess):
    """A bot in a bubblewrap sandbox; ``stop()`` leaves nothing of it: processes, cgroups, staging folders."""

    def __init__(
        self, process: asyncio.subprocess.Process, stderr_cap: int, *, uid: int | None, cgroups: SeatCgroups, staging: Path | None
    ) -> None:
        super().__init__(process, stderr_cap)
        self.uid = uid
        """The seat's own uid (None when the arena is not root and bots run as its user)."""
        self.cgroups = cgroups
        self.cgroup_dirs = list(cgroups.dirs.values())
        """The seat's cgroup folders (removed by ``stop()``)."""
        self._staging = staging

    async def wait(self) -> int | None:
        return exit_status(await self.process.wait())

    @property
    def returncode(self) -> int | None:
        return exit_status(self.process.returncode)

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        try:
            # bubblewrap first (when it dies its PID namespace dies with it), so that its parent, the
            # monitor, reaps it and exits; then the monitor's whole group, in case.
            for child in _children(self.process.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 1.0)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 2.0)
            await self.cgroups.kill_all()
            if self.uid is not None:
                strays = await kill_uid(self.uid)
                if strays:  # normally processes still exiting from the SIGKILL above
                    log.debug("seat uid %d: SIGKILL sent again to %s", self.uid, sorted(set(strays)))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 1.0)
        finally:
            await self.cgroups.remove()
            if self._staging is not None:
                shutil.rmtree(self._staging, ignore_errors=True)
            if self.uid is not None and not processes_of_uid(self.uid):
                release_uid(self.uid)


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (none if it has ended)."""
    children: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                children += [int(c) for c in Path(task.path, "children").read_text().split()]
    return children


_probe_results: dict[str, str | None] = {}
_probe_lock = threading.Lock()


class SandboxLauncher(SeatLauncher):
    """``process`` seats in a bubblewrap sandbox (see the module's docstring)."""

    kind = SeatKind.PROCESS

    def __init__(self, bwrap: str | None = None, *, cgroups: bool = True) -> None:
        self.bwrap = (shutil.which("bwrap") or "") if bwrap is None else bwrap
        self.use_cgroups = cgroups
        """Put each seat in cgroups of its own when they can be set up (off: rlimits and the seat uid only)."""
        if not cgroups:
            warn_weaker_containment("turned off for this launcher")

    def unavailable(self) -> str | None:
        if not self.bwrap:
            return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
        with _probe_lock:
            if self.bwrap not in _probe_results:
                _probe_results[self.bwrap] = self._probe()
            return _probe_results[self.bwrap]

    def _probe(self) -> str | None:
        """Start one empty sandbox the way seats are started (uid switch, staging, namespaces, /proc)."""
        uid = allocate_uid() if os.geteuid() == 0 else None
        staging = Path(tempfile.mkdtemp(prefix="polignac-probe-")) if uid is not None else None
        if staging is not None:
            os.chmod(staging, 0o755)
        plan: _Plan | None = None
        try:
            plan = _plan(
                self.bwrap,
                [sys.executable, "-I", "-S", "-c", "pass"],
                limits=SeatLimits(),
                env=_sandbox_env(None),
                chdir="/tmp",
                mounts=[(r, r) for r in host_runtime().python],
                staging=staging,
                uid=uid,
                cgroups=None,
            )
            report_r, report_w = os.pipe()
            try:
                done = subprocess.run(
                    plan.trampoline(report_w),
                    cwd="/",
                    env=plan.env,
                    pass_fds=[*plan.pass_fds, report_w],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=30,
                    check=False,
                )
                os.close(report_w)
                report_w = -1
                why = os.read(report_r, 4096).decode(errors="replace")
            finally:
                if report_w >= 0:
                    os.close(report_w)
                os.close(report_r)
            if why:
                return f"cannot set up a sandbox: {why}"
            if done.returncode != 0:
                message = done.stderr.decode(errors="replace").strip()[-500:] or "no message"
                if "bwrap:" not in message:
                    return f"cannot set up a sandbox (exit {done.returncode}): {message}"
                return (
                    f"bubblewrap cannot create a sandbox here (exit {done.returncode}): {message};"
                    " unprivileged user namespaces may be disabled (sysctl user.max_user_namespaces,"
                    " kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns)"
                )
            return None
        except (OSError, SeatError) as exc:
            return f"cannot start bubblewrap: {exc}"
        finally:
            if plan is not None:
                plan.close()
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if uid is not None:
                release_uid(uid)

    async def start(self, context: SeatContext) -> SeatProcess:
        reason = self.unavailable()
        if reason is not None:
            raise SeatError(f"process seats cannot be sandboxed: {reason}")
        sub = context.submission
        runtime = host_runtime()
        mounts = [(r, r) for r in runtime.python]
        mounts.append((runtime.sdk, f"{SDK_DIR}/polignac"))
        mounts.append((str(context.referee_socket.parent), SANDBOX_SOCKET_DIR))
        root = os.geteuid() == 0
        uid = allocate_uid() if root else None
        cgroups = SeatCgroups()
        staging: Path | None = None
        plan: _Plan | None = None
        try:
            if root:
                staging = context.workdir / ".sandbox"
                staging.mkdir(mode=0o755, exist_ok=True)
                os.chmod(staging, 0o755)
                if not _reachable_by_others(str(staging / "x")):
                    raise SeatError(f"the seat's folder {context.workdir} is not reachable by other users: cannot stage mounts there")
            if sub.builtin:
                chdir = "/tmp"
            else:
                folder = str(sub.path.resolve())
                if root and not _readable_by_others(folder):
                    # A private folder (mode 700, say): the bot, not root, could not read it; it gets a readable copy.
                    assert staging is not None
                    folder = str(_readable_copy(Path(folder), staging / "bot", sub.label))
                mounts.append((folder, BOT_DIR))
                chdir = BOT_DIR
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", context.match_id or "match")[:64]
            if self.use_cgroups:
                cgroups = SeatCgroups.create(f"{name}-seat{context.seat}-{uid if uid is not None else os.getpid()}", context.limits)
            plan = _plan(
                self.bwrap,
                _command_inside(context),
                limits=context.limits,
                env=_sandbox_env(context),
                chdir=chdir,
                mounts=mounts,
                staging=staging,
                uid=uid,
                cgroups=cgroups,
            )
            stdin, stdout = std_pipes(sub.transport)
            process = await _spawn(plan, stdin, stdout, sub.label)
        except BaseException:
            await cgroups.remove()
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if uid is not None:
                release_uid(uid)
            raise
        finally:
            if plan is not None:
                plan.close()
        log.info(
            "seat %s: %s sandboxed (uid %s, cgroups %s)", context.seat, sub.label, uid, ", ".join(cgroups.dirs) or "none: rlimits only"
        )
        return SandboxProcess(process, context.limits.stderr_bytes, uid=uid, cgroups=cgroups, staging=staging)
