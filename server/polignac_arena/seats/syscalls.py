"""The seccomp filter of sandboxed bots and builds: one table, as a BPF program (bubblewrap) and a Docker profile.

The table says which system calls a bot may not make and why.  It follows Docker's default
profile in spirit (written from the kernel's list, not copied): a bot has no business with
other processes' memory (ptrace), the kernel's keyrings, performance counters, io_uring,
eBPF, file systems, namespaces, kernel modules, the host's clock or its administration.
Every other call libseccomp knows for this machine is allowed; a call it does not know (newer
than its table) fails with ENOSYS, as it would on an older kernel, so that libc falls back;
anything else, and a denied call, fails with EPERM.  Calls of another architecture (32-bit
calls of a 64-bit machine) kill the process.

:func:`seccomp_bpf` gives the compiled filter for bubblewrap's ``--seccomp FD``;
:func:`docker_profile` the same table as a Docker seccomp profile (``security_opt``).  Both
need libseccomp (``libseccomp.so.2``, through the ``pyseccomp`` package).
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import tempfile
from dataclasses import dataclass
from types import ModuleType
from typing import Final

from polignac.jsontypes import JsonObject, JsonValue
from polignac_arena.seats.base import SeatError

__all__ = ["ALLOWED_WHEN", "DENIED", "ArgRule", "Denial", "SeccompUnavailable", "docker_profile", "seccomp_bpf"]


class SeccompUnavailable(SeatError):
    """The filter cannot be built here (libseccomp or pyseccomp missing)."""


@dataclass(frozen=True)
class Denial:
    """System calls that fail with ``errno``, and why a bot is kept from them."""

    names: tuple[str, ...]
    errno: int
    why: str


@dataclass(frozen=True)
class ArgRule:
    """A system call allowed only when its argument ``index`` compares so; otherwise it fails with EPERM.

    ``op`` is ``"eq"``, ``"ne"`` or ``"masked_eq"`` (``arg & mask == value``, the mask in ``mask``).
    Several rules for one call allow it when any of them holds.
    """

    name: str
    index: int
    op: str
    value: int
    mask: int = 0
    why: str = ""


_NAMESPACE_FLAGS: Final = 0x00020000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x02000000
"""CLONE_NEWNS, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWCGROUP."""
_AF_VSOCK: Final = 40

DENIED: Final = (
    Denial(
        ("ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd"),
        errno.EPERM,
        "reading, steering or comparing other processes, the sandbox's own first process included",
    ),
    Denial(("keyctl", "add_key", "request_key"), errno.EPERM, "the kernel's keyrings are not namespaced"),
    Denial(("perf_event_open",), errno.EPERM, "performance counters measure the host and are a frequent kernel attack surface"),
    Denial(
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
        errno.EPERM,
        "io_uring performs operations no filter sees, and is a frequent kernel attack surface (libuv falls back)",
    ),
    Denial(("bpf",), errno.EPERM, "eBPF programs run in the kernel"),
    Denial(("userfaultfd",), errno.EPERM, "page-fault handling in user space is the classic way to win kernel races"),
    Denial(
        (
            "mount",
            "umount",
            "umount2",
            "pivot_root",
            "chroot",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "move_mount",
            "open_tree",
            "mount_setattr",
        ),
        errno.EPERM,
        "the sandbox's file systems are set up before it starts and stay as they are",
    ),
    Denial(("unshare", "setns"), errno.EPERM, "no new namespaces and no joining others: the sandbox's are final"),
    Denial(
        ("clone3",),
        errno.ENOSYS,
        "its flags are in memory, out of a filter's reach; ENOSYS makes libc fall back to clone, whose flags are checked",
    ),
    Denial(("kexec_load", "kexec_file_load", "reboot"), errno.EPERM, "the host's kernel and power"),
    Denial(
        ("init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module"),
        errno.EPERM,
        "kernel modules",
    ),
    Denial(
        ("swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "sethostname", "setdomainname"),
        errno.EPERM,
        "the host's administration",
    ),
    Denial(("iopl", "ioperm"), errno.EPERM, "direct hardware port access"),
    Denial(
        ("settimeofday", "stime", "clock_settime", "clock_adjtime", "adjtimex"),
        errno.EPERM,
        "the host's clock (reading the time needs none of these)",
    ),
    Denial(
        ("name_to_handle_at", "open_by_handle_at"),
        errno.EPERM,
        "file handles open files by inode number, around the sandbox's mount namespace",
    ),
    Denial(("lookup_dcookie", "fanotify_init"), errno.EPERM, "watching or naming the host's file system activity"),
    Denial(
        ("mbind", "set_mempolicy", "set_mempolicy_home_node", "get_mempolicy", "migrate_pages", "move_pages"),
        errno.EPERM,
        "memory placement across the host's NUMA nodes",
    ),
    Denial(
        ("sysfs", "ustat", "_sysctl", "uselib", "nfsservctl", "vm86", "vm86old", "afs_syscall", "tuxcall", "security"),
        errno.EPERM,
        "obsolete calls, kept out as Docker does",
    ),
)
"""Denied system calls, each group with its reason."""

ALLOWED_WHEN: Final = (
    *(
        ArgRule("personality", 0, "eq", value, why="only the execution domains programs ask for (and the query, 0xffffffff)")
        for value in (0x0, 0x0008, 0x20000, 0x20008, 0xFFFFFFFF)
    ),
    ArgRule("clone", 0, "masked_eq", 0, mask=_NAMESPACE_FLAGS, why="threads and processes, not new namespaces"),
    ArgRule("socket", 0, "ne", _AF_VSOCK, why="no VM sockets to the host"),
)
"""System calls allowed only with some arguments (the others fail with EPERM)."""

_DEFAULT_ERRNO: Final = errno.EPERM
"""What a denied call, or an allowed one with other arguments, fails with."""
_UNKNOWN_SPAN: Final = 64
"""System call numbers above the last libseccomp knows that fail with ENOSYS (newer calls), not EPERM."""

_DOCKER_ARCHES: Final = {"X86_64": "SCMP_ARCH_X86_64", "AARCH64": "SCMP_ARCH_AARCH64", "RISCV64": "SCMP_ARCH_RISCV64"}
_DOCKER_OPS: Final = {"eq": "SCMP_CMP_EQ", "ne": "SCMP_CMP_NE", "masked_eq": "SCMP_CMP_MASKED_EQ"}


def _seccomp() -> ModuleType:
    """The pyseccomp module, or SeccompUnavailable saying what to install."""
    try:
        pyseccomp = importlib.import_module("pyseccomp")
    except ImportError:
        raise SeccompUnavailable("the pyseccomp package is not installed (pip install pyseccomp)") from None
    except (OSError, RuntimeError) as exc:  # pyseccomp raises RuntimeError when libseccomp.so.2 is missing
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({exc}): apt-get install libseccomp2") from None
    return pyseccomp


@dataclass(frozen=True)
class _Table:
    """The table resolved for this machine: the calls libseccomp knows, split by what happens to them."""

    arch: int
    arch_name: str
    allowed: tuple[str, ...]
    denied: tuple[tuple[Denial, tuple[str, ...]], ...]
    last_known: int


@functools.cache
def _table() -> _Table:
    sc = _seccomp()
    arch = int(sc.system_arch())
    known: dict[str, int] = {}
    for number in range(1024):
        try:
            name = sc.resolve_syscall(arch, number)
        except (OSError, ValueError, RuntimeError):
            continue
        if name:
            known[name.decode()] = number
    if not known:
        raise SeccompUnavailable("libseccomp knows no system call of this machine's architecture")
    special = {name for denial in DENIED for name in denial.names} | {rule.name for rule in ALLOWED_WHEN}
    denied = tuple((denial, tuple(name for name in denial.names if name in known)) for denial in DENIED)
    arches = (name for name in dir(sc.Arch) if name.isupper() and name != "NATIVE")
    arch_name = next((name for name in arches if getattr(sc.Arch, name) == arch), "")
    return _Table(
        arch=arch,
        arch_name=arch_name,
        allowed=tuple(sorted(set(known) - special)),
        denied=denied,
        last_known=max(known.values()),
    )


@functools.cache
def seccomp_bpf() -> bytes:
    """The filter as a BPF program for bubblewrap's ``--seccomp FD`` (made once per arena process)."""
    sc = _seccomp()
    table = _table()
    ops = {"eq": sc.EQ, "ne": sc.NE, "masked_eq": sc.MASKED_EQ}
    try:
        rules = sc.SyscallFilter(sc.ERRNO(_DEFAULT_ERRNO))
        for name in table.allowed:
            rules.add_rule(sc.ALLOW, name)
        for denial, names in table.denied:
            if denial.errno != _DEFAULT_ERRNO:  # libseccomp refuses a rule that does what the default does
                for name in names:
                    rules.add_rule(sc.ERRNO(denial.errno), name)
        for rule in ALLOWED_WHEN:
            if rule.op == "masked_eq":
                rules.add_rule(sc.ALLOW, rule.name, sc.Arg(rule.index, sc.MASKED_EQ, rule.mask, rule.value))
            else:
                rules.add_rule(sc.ALLOW, rule.name, sc.Arg(rule.index, ops[rule.op], rule.value))
        for number in range(table.last_known + 1, table.last_known + 1 + _UNKNOWN_SPAN):
            rules.add_rule(sc.ERRNO(errno.ENOSYS), number)
        rules.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a binary tree of system call numbers, not a linear scan
        with tempfile.TemporaryFile() as out:
            rules.export_bpf(out)
            out.seek(0)
            program = out.read()
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp cannot build the filter: {os.strerror(exc.errno or 0)}") from None
    return program


def docker_profile() -> JsonObject:
    """The same table as a Docker seccomp profile (pass ``json.dumps`` of it as ``security_opt=["seccomp=..."]``)."""
    table = _table()
    arch = _DOCKER_ARCHES.get(table.arch_name)
    if arch is None:
        raise SeccompUnavailable(f"no Docker name for the architecture {table.arch_name or hex(table.arch)!r}")
    syscalls: list[JsonValue] = [{"names": list(table.allowed), "action": "SCMP_ACT_ALLOW"}]
    for denial, names in table.denied:
        if names:
            syscalls.append({"names": list(names), "action": "SCMP_ACT_ERRNO", "errnoRet": denial.errno, "comment": denial.why})
    for rule in ALLOWED_WHEN:
        value, value_two = (rule.mask, rule.value) if rule.op == "masked_eq" else (rule.value, 0)
        condition: JsonObject = {"index": rule.index, "value": value, "valueTwo": value_two, "op": _DOCKER_OPS[rule.op]}
        syscalls.append({"names": [rule.name], "action": "SCMP_ACT_ALLOW", "args": [condition], "comment": rule.why})
    return {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": _DEFAULT_ERRNO, "architectures": [arch], "syscalls": syscalls}
