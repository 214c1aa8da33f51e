"""The first program of a sandboxed seat: sets the seat up as root, then becomes (or watches) bubblewrap.

The arena has gRPC threads, so it never runs Python code in a forked child: it starts this file
as a script in a fresh interpreter (``python -I -S trampoline.py SPEC``), which imports nothing
but the standard library.  SPEC is a JSON object made by :mod:`.sandbox` (see ``_Plan.trampoline``).

As root: join the seat's cgroups, stage unreachable folders, set the rlimits, then fork: the
child drops to the seat's uid and gid with no groups and becomes bubblewrap as the first process
of a new PID namespace; this process stays as its monitor, waits for it and exits as it exits
(both die with the arena).  Not as root: the same without the uid switch and the PID namespace,
becoming bubblewrap itself.  A step that fails is written to the report pipe (exit 126).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 262144

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def die_with(parent_alive: Callable[[], bool]) -> None:
    """SIGKILL when the parent dies; if it died already, stop now (a signal asked for too late never comes)."""
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0))
    if not parent_alive():
        os._exit(125)


def monitor_alive(fd: int) -> bool:
    try:
        return os.read(fd, 1) != b""  # end of file: the write end's holder has died
    except BlockingIOError:
        return True


def monitor(child: int, alive_w: int) -> NoReturn:
    """Wait for bubblewrap (``child``) and end as it ended."""
    os.closerange(0, 2)  # stdin and stdout belong to the bot
    os.closerange(3, alive_w)
    os.closerange(alive_w + 1, 1 << 16)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):  # end as bubblewrap ended
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal that does not end a process by default
    os._exit(os.waitstatus_to_exitcode(status))


def run(spec: dict[str, Any]) -> NoReturn:
    report: int = spec["report"]
    os.set_inheritable(report, False)  # closed when bubblewrap starts: the arena's sign that all went well
    step = "start"
    try:
        uid: int | None = spec["uid"]
        if uid is not None:
            # As root this process stays to the end as the sandbox's monitor: it dies with the arena first.
            step = "ask to die with the arena"
            die_with(lambda: os.getppid() == spec["parent"])
        for path in spec["cgroups"]:
            step = "join the cgroup " + path
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, b"0")
            os.close(fd)
        if spec["staged"]:
            step = "unshare the mount namespace"
            check(libc.unshare(CLONE_NEWNS))
            check(libc.mount(b"none", b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None))
            for source, stage in spec["staged"]:
                step = "stage " + source
                check(libc.mount(source.encode(), stage.encode(), None, ctypes.c_ulong(MS_BIND | MS_REC), None))
        for which, soft, hard in spec["rlimits"]:
            step = f"set rlimit {which}"
            resource.setrlimit(which, (soft, hard))
        if uid is not None:
            # bubblewrap becomes the first process of a PID namespace of its own.  When it dies the kernel
            # kills everything in that namespace, its sandbox included, even a sandbox whose own
            # --die-with-parent was not yet in place (bubblewrap sets it in its child after the clone).
            step = "unshare the PID namespace"
            check(libc.unshare(CLONE_NEWPID))
            # getppid() says 0 across the namespace boundary: the child watches this pipe instead, whose
            # write end the monitor holds open until it dies.
            alive_r, alive_w = os.pipe()
            child = os.fork()
            if child:
                monitor(child, alive_w)
            step = f"switch to uid {uid}"
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            step = "ask to die with the monitor"
            os.close(alive_w)
            os.set_blocking(alive_r, False)
            die_with(lambda: monitor_alive(alive_r))  # after the uid switch, which clears the parent-death signal
            os.close(alive_r)
        else:
            step = "ask to die with the arena"
            die_with(lambda: os.getppid() == spec["parent"])  # PR_SET_PDEATHSIG survives execve for a non-setuid binary
        argv: list[str] = spec["argv"]
        step = "start " + argv[0]
        os.execv(argv[0], argv)
    except BaseException as exc:
        os.write(report, f"{step}: {exc}".encode()[:2000])
        os._exit(126)


if __name__ == "__main__":
    run(json.loads(sys.argv[1]))
