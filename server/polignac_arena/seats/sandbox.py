"""``process`` seats in a bubblewrap sandbox: untrusted bots as unprivileged, contained processes.

What a sandboxed bot gets, how a seat starts and why: docs/sandbox.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Final

from polignac_arena.seats.base import (
    BuildLimits,
    BuildResult,
    SeatContext,
    SeatError,
    SeatKind,
    SeatLauncher,
    SeatLimits,
    SeatProcess,
)
from polignac_arena.seats.builds import BUILD_DIR, BUILD_SOURCE, BUILD_WRAPPER, WRAPPER_SOURCE, BuildStarted, build_command, run_build
from polignac_arena.seats.bwrap import (
    BOT_DIR,
    SANDBOX_SOCKET_DIR,
    SDK_DIR,
    Plan,
    make_plan,
    reachable_by_others,
    readable_by_others,
    readable_copy,
    sandbox_env,
    spawn,
)
from polignac_arena.seats.cgroups import SeatCgroups, warn_weaker_containment
from polignac_arena.seats.common import checked_folder, exit_status, host_runtime
from polignac_arena.seats.process import LocalProcess, std_pipes
from polignac_arena.seats.syscalls import SeccompUnavailable, seccomp_bpf
from polignac_arena.seats.uids import allocate_uid, kill_uid, processes_of_uid, release_uid
from polignac_arena.submission import Submission

__all__ = ["SANDBOX_SOCKET_DIR", "SandboxLauncher", "SandboxProcess"]

log = logging.getLogger(__name__)


def _command_inside(context: SeatContext) -> list[str]:
    """The bot's command as run in the sandbox (``python`` is this interpreter, at its own path)."""
    return list(context.submission.host_command())


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


_NO_BUILDS: Final = "build steps cannot be sandboxed: "
"""How the reason for refusing a build step begins."""


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
        try:
            seccomp_bpf()
        except SeccompUnavailable as exc:
            return f"the sandbox's seccomp filter cannot be made: {exc}"
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
        plan: Plan | None = None
        try:
            plan = make_plan(
                self.bwrap,
                [sys.executable, "-I", "-S", "-c", "pass"],
                limits=SeatLimits(),
                env=sandbox_env(None),
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

    async def _launch(
        self,
        command: Sequence[str],
        *,
        label: str,
        name: str,
        limits: SeatLimits,
        env: dict[str, str],
        chdir: str,
        mounts: list[tuple[str, str]],
        staging: Path | None,
        folder: tuple[Submission, str] | None,
        stdin: int,
        stdout: int,
        writable: Sequence[tuple[str, int]] = (),
        files: Sequence[tuple[str, bytes]] = (),
    ) -> SandboxProcess:
        """Start ``command`` in a sandbox of its own (uid, cgroups named ``name``); the submission ``folder``
        (the submission, where its folder appears) is mounted read-only.  ``staging`` is removed with the sandbox."""
        root = os.geteuid() == 0
        uid = allocate_uid() if root else None
        cgroups = SeatCgroups()
        plan: Plan | None = None
        try:
            if root:
                if staging is None or not reachable_by_others(str(staging / "x")):
                    raise SeatError(f"the staging folder {staging} is not reachable by other users: cannot stage mounts there")
            else:
                staging = None
            if folder is not None:
                submission, where = folder
                source = str(checked_folder(submission))  # never resolved again: a link put in its place is refused
                if root and not readable_by_others(source):
                    # A private folder (mode 700, say): the bot, not root, could not read it; it gets a readable copy.
                    assert staging is not None
                    source = str(readable_copy(Path(source), staging / "bot", label, submission.identity))
                mounts = [*mounts, (source, where)]
            if self.use_cgroups:
                cgroups = SeatCgroups.create(f"{name}-{uid if uid is not None else os.getpid()}", limits)
            plan = make_plan(
                self.bwrap,
                command,
                limits=limits,
                env=env,
                chdir=chdir,
                mounts=mounts,
                staging=staging,
                uid=uid,
                cgroups=cgroups,
                writable=writable,
                files=files,
            )
            process = await spawn(plan, stdin, stdout, label)
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
        log.info("started %s (uid %s, cgroups %s)", label, uid, ", ".join(cgroups.dirs) or "none: rlimits only")
        return SandboxProcess(process, limits.stderr_bytes, uid=uid, cgroups=cgroups, staging=staging)

    def _runtime_mounts(self) -> list[tuple[str, str]]:
        runtime = host_runtime()
        return [*((r, r) for r in runtime.python), (runtime.sdk, f"{SDK_DIR}/polignac")]

    async def start(self, context: SeatContext) -> SeatProcess:
        reason = self.unavailable()
        if reason is not None:
            raise SeatError(f"process seats cannot be sandboxed: {reason}")
        sub = context.submission
        staging = context.workdir / ".sandbox"
        if os.geteuid() == 0:
            staging.mkdir(mode=0o755, exist_ok=True)
            os.chmod(staging, 0o755)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", context.match_id or "match")[:64]
        stdin, stdout = std_pipes(sub.transport)
        socket_mount = [(str(context.referee_socket.parent), SANDBOX_SOCKET_DIR)] if context.reaches_referee else []
        return await self._launch(
            _command_inside(context),
            label=f"the sandbox of {sub.label} (seat {context.seat})",
            name=f"{name}-seat{context.seat}",
            limits=context.limits,
            env=sandbox_env(context),
            chdir="/tmp" if sub.builtin else BOT_DIR,
            mounts=[*self._runtime_mounts(), *socket_mount],
            staging=staging,
            folder=None if sub.builtin else (sub, BOT_DIR),
            stdin=stdin,
            stdout=stdout,
        )

    async def build(
        self, submission: Submission, limits: SeatLimits, *, timeout_s: float, trusted: bool = False, caps: BuildLimits | None = None
    ) -> BuildResult:
        return await run_build(submission, limits, caps, timeout_s, self.unavailable, _NO_BUILDS, partial(self._start_build, submission))

    async def _start_build(self, submission: Submission, build_limits: SeatLimits, caps: BuildLimits) -> BuildStarted:
        """The build's sandbox, started (:data:`.builds.BuildStart`)."""
        staging: Path | None = None
        if os.geteuid() == 0:  # for folders the seat's uid cannot reach (removed with the sandbox)
            staging = Path(tempfile.mkdtemp(prefix="polignac-build-"))
            os.chmod(staging, 0o755)
        process = await self._launch(
            build_command(sys.executable, submission.build),
            label=f"the sandbox of the build of {submission.label}",
            name=f"build-{re.sub(r'[^A-Za-z0-9_.-]', '_', submission.name)}",
            limits=build_limits,
            env=sandbox_env(None),
            chdir="/",
            mounts=self._runtime_mounts(),
            staging=staging,
            folder=(submission, BUILD_SOURCE),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            writable=[(BUILD_DIR, caps.disk_mb)],
            files=[(BUILD_WRAPPER, WRAPPER_SOURCE.read_bytes())],
        )
        return process, process.cgroups.oom_kills
