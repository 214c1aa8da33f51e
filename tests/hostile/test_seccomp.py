"""A seccomp filter in every sandbox: the calls Docker's default profile keeps from containers fail with EPERM.

The prober (bots/syscall_prober.py) tries each call inside its seat, reports, then plays a
whole match like a polite bot.  Python, Node and the C bot still run under the same filter:
tests/test_polyglot_bots.py and the other hostile tests play in the same sandboxes.
"""

from __future__ import annotations

import errno
import json
import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.test_hostile import play

KINDS = [
    pytest.param("process", id="bubblewrap"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]
DENIED = (
    "ptrace_attach_pid1",
    "ptrace_traceme",
    "keyctl",
    "add_key",
    "personality_no_aslr",
    "personality_read_implies_exec",
    "perf_event_open",
    "io_uring_setup",
    "bpf",
    "userfaultfd",
    "unshare_user",
    "mount",
    "clone_newns",
    "process_vm_readv",
    "kcmp",
    "open_by_handle_at",
    "settimeofday",
)


def report_of(stderr: str) -> dict[str, str]:
    lines = [line for line in stderr.splitlines() if line.startswith("SECCOMP ")]
    assert lines, f"the prober did not report: {stderr[-2000:]}"
    report: dict[str, str] = json.loads(lines[0][len("SECCOMP ") :])
    return report


@pytest.mark.parametrize("kind", KINDS)
def test_the_sandbox_filters_system_calls(kind: str, tmp_path: Path) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("the prober knows the x86_64 system call numbers only")
    outcome = play(kind, "syscall_prober", tmp_path)
    report = report_of(outcome.stderr)
    assert report["seccomp"] == "2", f"no seccomp filter in the seat: {report}"
    refused = {name: report[name] for name in DENIED if report[name] != "EPERM"}
    assert refused == {}, f"calls that did not fail with EPERM: {refused}"
    assert report["clone3"] == "ENOSYS", report  # so that libc falls back to clone, whose flags the filter checks
    assert report["personality_query"] == "ok" and report["fork"] == "ok" and report["thread"] == "ok", report
    assert outcome.faults == {}, outcome.faults


def test_the_docker_profile_is_the_same_table() -> None:
    from polignac_arena.seats import syscalls

    profile: dict[str, Any] = syscalls.docker_profile()
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == errno.EPERM
    entries = profile["syscalls"]
    allowed = {name for entry in entries if entry["action"] == "SCMP_ACT_ALLOW" and "args" not in entry for name in entry["names"]}
    denied = {name: entry["errnoRet"] for entry in entries if entry["action"] == "SCMP_ACT_ERRNO" for name in entry["names"]}
    for denial in syscalls.DENIED:
        for name in denial.names:
            assert name not in allowed, name
            assert denied.get(name, denial.errno) == denial.errno, name
    assert {"ptrace", "keyctl", "io_uring_setup", "perf_event_open", "bpf", "unshare"} <= set(denied)
    assert denied["clone3"] == errno.ENOSYS
    conditional = [entry for entry in entries if "args" in entry]
    assert {entry["names"][0] for entry in conditional} == {"personality", "clone", "socket"}
    assert {"read", "write", "openat", "execve", "futex"} <= allowed and not {"clone", "personality"} & allowed


def test_without_libseccomp_the_sandbox_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes.util

    from polignac_arena.seats import syscalls
    from polignac_arena.seats.sandbox import SandboxLauncher

    find_library = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None if name == "seccomp" else find_library(name))
    monkeypatch.delitem(sys.modules, "pyseccomp", raising=False)
    syscalls.seccomp_bpf.cache_clear()
    syscalls._table.cache_clear()
    try:
        reason = SandboxLauncher(bwrap="/usr/bin/bwrap").unavailable()
    finally:
        syscalls.seccomp_bpf.cache_clear()
        syscalls._table.cache_clear()
    assert reason is not None and "seccomp" in reason and "libseccomp" in reason and "apt-get install libseccomp2" in reason, reason
