"""Runs a submission's build step inside its sandbox: ``python -I -S build_wrapper.py SOURCE BUILD -- COMMAND...``.

Copies the read-only folder SOURCE into the writable folder BUILD (folders, regular files and
links; anything else is left out), runs COMMAND there with its output on stderr, and when it
exits 0 writes a tar stream of what it added or changed in BUILD on stdout.  Exits as the
command exited (128 + N when a signal N ended it).

It runs in the sandbox, as the bot's uid, beside the code it builds: the arena trusts nothing it
sends (:mod:`.builds` reads the stream with caps and installs it safely).  Still, it makes itself
non-dumpable first: the build step runs as the same uid, and ``/proc/PID/mem`` of a dumpable
process of one's own uid is writable (no seccomp filter sees a plain ``open``), so the step could
otherwise rewrite the wrapper and speak for it.  It imports nothing but the standard library, so
any host Python can run it.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
import tarfile
from typing import NoReturn

PR_SET_DUMPABLE = 4

Signature = tuple[int, int, int, str]
"""What tells an entry changed: its type and permission bits, size, modification time, link target."""


def signature(info: os.stat_result, target: str = "") -> Signature:
    if stat.S_ISDIR(info.st_mode):  # a folder changes when anything is added to it: that is not a change of its own
        return (info.st_mode, 0, 0, "")
    return (info.st_mode, info.st_size, info.st_mtime_ns, target)


def copy_in(source: str, build: str) -> dict[str, Signature]:
    """Copy ``source`` into ``build``; the signature of every entry copied, by relative path."""
    copied: dict[str, Signature] = {}
    for folder, dirs, files in os.walk(source):
        relative = os.path.relpath(folder, source)
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            rel = os.path.normpath(os.path.join(relative, name))
            dest = os.path.join(build, rel)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                os.mkdir(dest, 0o755)
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(path), dest)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as reader, open(dest, "xb") as writer:
                    while block := reader.read(1 << 20):
                        writer.write(block)
                os.chmod(dest, 0o755 if info.st_mode & 0o111 else 0o644)
            else:
                print(f"[build] {rel!r} is not a file, folder or link: left out", file=sys.stderr)
                continue
            os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    for folder, dirs, files in os.walk(build):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
            copied[os.path.relpath(path, build)] = signature(info, target)
    return copied


def send_changes(build: str, before: dict[str, Signature]) -> None:
    """Write a tar stream of every entry of ``build`` that is new or changed on stdout."""
    with tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for folder, dirs, files in os.walk(build):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, build)
                info = os.lstat(path)
                target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
                if before.get(rel) != signature(info, target):
                    tar.add(path, arcname=rel, recursive=False)


def undumpable() -> None:
    """Keep the build step (same uid) out of this process: no ``/proc/PID/mem``, ``fd`` or ``environ`` of it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        print(f"[build] cannot make the wrapper non-dumpable: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        sys.exit(126)


def main(argv: list[str]) -> NoReturn:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: build_wrapper.py SOURCE BUILD -- COMMAND...", file=sys.stderr)
        sys.exit(2)
    undumpable()
    source, build, command = argv[0], argv[1], argv[3:]
    try:
        before = copy_in(source, build)
    except OSError as exc:
        print(f"[build] cannot copy the folder for the build: {exc.filename}: {exc.strerror}", file=sys.stderr)
        sys.exit(126)
    try:
        done = subprocess.run(command, cwd=build, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(), stderr=sys.stderr.fileno())
    except OSError as exc:
        print(f"[build] cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)
    if done.returncode == 0:
        send_changes(build, before)
    sys.stdout.flush()
    sys.exit(done.returncode if done.returncode >= 0 else 128 - done.returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
