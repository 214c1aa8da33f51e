"""Hostile: tries the system calls a seccomp filter should refuse, reports what each gave, then plays."""

import ctypes
import errno
import json
import os
import platform
import sys
import threading

from polignac import Card, PlayerView
from polignac.bot import Bot, run

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86_64 system call numbers (the test skips other machines).
NR = {
    "ptrace": 101,
    "personality": 135,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "perf_event_open": 298,
    "io_uring_setup": 425,
    "bpf": 321,
    "userfaultfd": 323,
    "unshare": 272,
    "mount": 165,
    "clone": 56,
    "clone3": 435,
    "process_vm_readv": 310,
    "kcmp": 312,
    "open_by_handle_at": 304,
    "settimeofday": 164,
}
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
SIGCHLD = 17


def call(name: str, *args: int) -> str:
    """'ok' when the call succeeded, else the errno's name."""
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(NR[name]), *(ctypes.c_ulong(a & 0xFFFFFFFFFFFFFFFF) for a in args))
    if result == 0 and name == "clone":  # the filter let it through: this is the child
        os._exit(0)
    if result >= 0:
        if name in ("io_uring_setup", "perf_event_open", "userfaultfd", "bpf"):
            os.close(result)
        return "ok"
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def probe() -> None:
    report = {"machine": platform.machine()}
    with open("/proc/self/status") as status:
        report["seccomp"] = next((line.split()[1] for line in status if line.startswith("Seccomp:")), "?")
    if platform.machine() != "x86_64":
        print("SECCOMP " + json.dumps(report), file=sys.stderr, flush=True)
        return
    zeros = ctypes.create_string_buffer(256)
    attr = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(attr, 4).value = 112  # perf_event_attr.size
    report["ptrace_attach_pid1"] = call("ptrace", 16, 1, 0, 0)  # PTRACE_ATTACH to the sandbox's first process
    report["keyctl"] = call("keyctl", 0, -3, 1, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring, create it
    report["add_key"] = call("add_key", ctypes.addressof(ctypes.create_string_buffer(b"user")), 0, 0, 0, -3)
    report["personality_query"] = call("personality", 0xFFFFFFFF)
    report["personality_no_aslr"] = call("personality", 0x0040000)  # ADDR_NO_RANDOMIZE
    report["personality_read_implies_exec"] = call("personality", 0x0400000)
    report["perf_event_open"] = call("perf_event_open", ctypes.addressof(attr), 0, -1, -1, 0)
    report["io_uring_setup"] = call("io_uring_setup", 1, ctypes.addressof(zeros))
    report["bpf"] = call("bpf", 0, ctypes.addressof(zeros), 48)
    report["userfaultfd"] = call("userfaultfd", 0)
    report["unshare_user"] = call("unshare", CLONE_NEWUSER)
    report["mount"] = call("mount", 0, 0, 0, 0, 0)
    report["clone_newns"] = call("clone", CLONE_NEWNS | CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    report["clone3"] = call("clone3", ctypes.addressof(zeros), 88)
    report["process_vm_readv"] = call("process_vm_readv", 1, 0, 0, 0, 0, 0)
    report["kcmp"] = call("kcmp", os.getpid(), 1, 0, 0, 0)
    report["open_by_handle_at"] = call("open_by_handle_at", -100, ctypes.addressof(zeros), 0)
    report["settimeofday"] = call("settimeofday", 0, 0)
    child = os.fork()  # plain processes and threads still work
    if child == 0:
        os._exit(0)
    report["fork"] = "ok" if os.waitpid(child, 0)[1] == 0 else "failed"
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    report["thread"] = "ok"
    report["ptrace_traceme"] = call("ptrace", 0, 0, 0, 0)  # last: once traced, signals stop this process
    print("SECCOMP " + json.dumps(report), file=sys.stderr, flush=True)


class Prober(Bot):
    name = "syscall-prober"

    def play(self, view: PlayerView) -> Card:
        return view.legal_cards[0]


probe()
run(Prober())
