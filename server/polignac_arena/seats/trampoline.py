"""The first program of a sandboxed seat: sets the seat up as root, then becomes (or watches) bubblewrap.

The arena has gRPC threads, so it never runs Python code in a forked child: it starts this file
as a script in a fresh interpreter (``python -I -S trampoline.py SPEC``), which imports nothing
but the standard library.  SPEC is a JSON object made by :mod:`.sandbox` (see ``_Plan.trampoline``).

As root: join the seat's cgroups, stage unreachable folders, then fork: the child sets the
rlimits, drops to the seat's uid and gid with no groups and becomes bubblewrap as the first process
of a new PID namespace; this process stays as its monitor, waits for it and exits as it exits
(both die with the arena).  Not as root (or for an unsandboxed bot): the same without the uid
switch and the PID namespace.  The monitor relays at most ``stderr_cap`` bytes of the child's
stderr to the arena (its beginning and its end) and drops the rest itself.  A step that fails is written to the report pipe
(exit 126).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import threading
from collections.abc import Callable
from typing import NoReturn, TypedDict

PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 262144
RELAY_GRACE_S = 2.0
"""How long the monitor waits, once its child has ended, for the end of the child's stderr."""
TAIL_BYTES = 4096
"""The end of a seat's stderr past its cap that is kept (a quarter of the cap at most)."""

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


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def relay(source: int, cap: int, drain_per_s: int, ended: threading.Event) -> None:
    """Pass the bot's stderr (``source``) to the arena (fd 2), at most ``cap`` bytes: its beginning and its end.

    The first ``cap`` less :data:`TAIL_BYTES` go on as they come; past them the monitor reads and
    drops, keeping the last :data:`TAIL_BYTES` (where a crash says why), which it sends at the
    end after a line saying how many bytes it dropped.  The arena reads no more than that, however
    much a bot writes.  The dropping goes at ``drain_per_s`` bytes a second at most: a bot that
    writes faster waits in its writes (a full pipe) instead of keeping this process and the
    kernel busy with a storm of small writes, which would weigh on the other seats.  Once the
    child has ended (``ended``), what is left comes at once: the note must reach the arena.
    """
    tail_cap = min(TAIL_BYTES, cap // 4)
    head_cap = cap - tail_cap
    sent = dropped = 0
    tail = b""
    arena_gone = False

    def send(data: bytes) -> None:
        nonlocal arena_gone
        if not arena_gone:
            try:
                write_all(2, data)
            except OSError:  # the arena has closed its end: keep draining the bot's
                arena_gone = True

    while True:
        try:
            data = os.read(source, min(1 << 16, head_cap - sent) if sent < head_cap else 1 << 16)
        except InterruptedError:
            continue
        if not data:
            break
        if sent < head_cap:
            sent += len(data)
            send(data)
        else:
            dropped += len(data)
            tail = (tail + data)[-tail_cap:] if tail_cap else b""
            ended.wait(len(data) / drain_per_s)
    if dropped > len(tail) and b"\n" in tail:
        tail = tail[: tail.rindex(b"\n") + 1]  # the bot was stopped mid-line: end with its last whole line, as docker seats do
    dropped -= len(tail)
    if dropped > 0:
        note = f"\n[arena] {dropped} more bytes not kept (the cap is {cap} bytes)"
        send((note + (f"; the last {len(tail)}:\n" if tail else "\n")).encode())
    send(tail)


def close_all_but(keep: tuple[int, ...]) -> None:
    """Close every descriptor but 2 (the arena's stderr pipe) and ``keep``: stdin and stdout belong to the bot."""
    low = 0
    for fd in sorted({2, *keep}):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def monitor(child: int, alive_w: int, stderr_r: int, cap: int, drain_per_s: int) -> NoReturn:
    """Relay the child's stderr, wait for it, and end as it ended."""
    close_all_but((alive_w, stderr_r))
    for group_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # a signal to the group is for the child: end as it ends
        signal.signal(group_signal, signal.SIG_IGN)
    ended = threading.Event()
    relaying = threading.Thread(target=relay, args=(stderr_r, cap, drain_per_s, ended), daemon=True)
    try:
        relaying.start()
    except RuntimeError:  # no thread to be had: relay to the end of the child's stderr first
        ended.set()
        relay(stderr_r, cap, drain_per_s, ended)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    ended.set()
    if relaying.is_alive():
        relaying.join(RELAY_GRACE_S)  # the last of its output; whatever still holds the pipe then is not waited for
    if os.WIFSIGNALED(status):  # end as the child ended
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal that does not end a process by default
    os._exit(os.waitstatus_to_exitcode(status))


class Spec(TypedDict):
    """SPEC, as ``_Plan.trampoline`` writes it (pairs and triples come as JSON arrays)."""

    report: int
    parent: int
    cgroups: list[str]
    staged: list[list[str]]
    """(source, stage) pairs."""
    rlimits: list[list[int]]
    """(which, soft, hard) triples."""
    uid: int | None
    argv: list[str]
    stderr_cap: int
    stderr_drain: int


def run(spec: Spec) -> NoReturn:
    report: int = spec["report"]
    os.set_inheritable(report, False)  # closed when the child execs: the arena's sign that all went well
    step = "start"
    try:
        uid: int | None = spec["uid"]
        # This process stays to the end as the child's monitor: it dies with the arena first.
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
        if uid is not None:
            # bubblewrap becomes the first process of a PID namespace of its own.  When it dies the kernel
            # kills everything in that namespace, its sandbox included, even a sandbox whose own
            # --die-with-parent was not yet in place (bubblewrap sets it in its child after the clone).
            step = "unshare the PID namespace"
            check(libc.unshare(CLONE_NEWPID))
        # getppid() says 0 across a PID namespace boundary: the child watches this pipe instead, whose
        # write end the monitor holds open until it dies.
        alive_r, alive_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        step = "fork"
        child = os.fork()
        if child:
            monitor(child, alive_w, stderr_r, spec["stderr_cap"], spec["stderr_drain"])
        os.close(alive_w)
        os.close(stderr_r)
        os.dup2(stderr_w, 2)
        os.close(stderr_w)
        for which, soft, hard in spec["rlimits"]:  # the child's alone: RLIMIT_NPROC would count the monitor's thread
            step = f"set rlimit {which}"
            resource.setrlimit(which, (soft, hard))
        if uid is not None:
            step = f"switch to uid {uid}"
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        step = "ask to die with the monitor"
        os.set_blocking(alive_r, False)
        die_with(lambda: monitor_alive(alive_r))  # after the uid switch, which clears the parent-death signal
        os.close(alive_r)
        argv: list[str] = spec["argv"]
        step = "start " + argv[0]
        os.execvp(argv[0], argv)
    except BaseException as exc:
        os.write(report, f"{step}: {exc}".encode()[:2000])
        os._exit(126)


if __name__ == "__main__":
    run(json.loads(sys.argv[1]))
