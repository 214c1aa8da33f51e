"""What the two launchers of untrusted code share: the host runtime they mount, path containment, exit statuses.

Both :mod:`.sandbox` (bubblewrap) and :mod:`.docker` run a bot with the host's own runtime
mounted read-only at the same paths: the system folders (``/usr``, and ``/bin``, ``/lib``... as
the host has them), the Python installation that runs the arena, the folders outside it that
hold the SDK's dependencies, a few harmless ``/etc`` files, and the SDK package.  They work
that out here, once, so the two cannot drift apart.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polignac_arena.folders import FolderError, check_same_folder
from polignac_arena.seats.base import SeatError
from polignac_arena.submission import Submission

__all__ = [
    "ETC_FILES",
    "ETC_PATTERNS",
    "SYSTEM_DIRS",
    "HostRuntime",
    "checked_folder",
    "exit_status",
    "host_runtime",
    "module_root",
    "within",
]

SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Top folders of the host's system: a launcher binds each that exists (or recreates it as the link it is)."""
ETC_FILES: Final = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/nsswitch.conf",
)
"""Host files of /etc that programs need; nothing secret (no passwd, shadow, ssh or TLS keys)."""
ETC_PATTERNS: Final = ("/etc/java-*-openjdk",)
"""Folders of /etc a runtime cannot start without, by pattern: Debian's JDKs keep ``jvm.cfg`` and ``java.security``
there (links from ``/usr/lib/jvm``), so a Java bot or build needs them; their configuration holds nothing secret."""
SDK_DEPENDENCIES: Final = ("grpc", "google.protobuf")
"""Modules the SDK imports: the folders holding them are mounted and put on PYTHONPATH."""


def within(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one of them (by name: no link is resolved).

    >>> within("/usr/lib/x", ["/usr"]), within("/usr2", ["/usr"]), within("/opt", ["/"]), within("/a", [])
    (True, False, True, False)
    """
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def checked_folder(submission: Submission) -> Path:
    """The submission's folder, to mount or copy for its sandbox; :class:`SeatError` if it was replaced since it was checked.

    Checked at its path (never resolved again): no link may lead to it now, and it must be the
    folder :func:`~polignac_arena.submission.load_submission` checked (its ``identity``).
    """
    path = submission.path
    try:
        if submission.identity is not None:
            check_same_folder(path, submission.identity)
        elif os.path.realpath(path) != str(path):
            raise FolderError(path, "is reached through a symbolic link: give the folder's own path")
    except FolderError as exc:
        raise SeatError(f"{submission.label}: {exc}") from None
    return path


def exit_status(code: int | None, oom_killed: bool = False) -> int | None:
    """A launcher's exit code as a process exit status: 128+N (killed by signal N) becomes -N.

    bubblewrap and Docker both report a bot killed by signal N as 128 + N, like a shell does; a
    bot that itself exits with such a code reads as killed by that signal.  ``oom_killed`` (the
    memory limit's kill) reads as SIGKILL.

    >>> exit_status(0), exit_status(3), exit_status(137), exit_status(143), exit_status(255)
    (0, 3, -9, -15, 255)
    >>> exit_status(1, oom_killed=True), exit_status(None)
    (-9, None)
    """
    if code is None:
        return None
    if oom_killed and code != 0:
        return -9
    if 128 < code <= 128 + 64:
        return -(code - 128)
    return code


def module_root(module: str) -> str | None:
    """The ``sys.path`` entry that ``module`` is imported from (links resolved), or None when it is not importable."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    root = os.path.realpath(spec.origin)
    depth = module.count(".") + (2 if spec.submodule_search_locations is not None else 1)
    for _ in range(depth):
        root = os.path.dirname(root)
    return root


@dataclass(frozen=True)
class HostRuntime:
    """The host folders a bot's runtime needs, each mounted read-only at its own path (but the SDK)."""

    system: tuple[str, ...]
    """Those of :data:`SYSTEM_DIRS` that exist here (some are links, ``/bin -> usr/bin``)."""
    python: tuple[str, ...]
    """The Python installation and the folders holding the SDK's dependencies, outside the system folders."""
    python_path: tuple[str, ...]
    """The entries of ``python`` to put on ``PYTHONPATH`` (after the SDK's folder)."""
    etc: tuple[str, ...]
    """Those of :data:`ETC_FILES` that exist here, and the folders matching :data:`ETC_PATTERNS`."""
    sdk: str
    """The SDK's ``polignac`` package folder: a launcher mounts it as ``polignac`` in a folder on ``PYTHONPATH``."""


@functools.cache
def host_runtime() -> HostRuntime:
    """The host runtime of this arena (worked out once: it does not change while the arena runs)."""
    import polignac

    system = tuple(path for path in SYSTEM_DIRS if os.path.lexists(path))
    python: list[str] = []

    def add(path: str) -> bool:
        if not path or not os.path.exists(path) or within(path, [*system, *python]):
            return False
        python.append(path)
        return True

    executable = os.path.dirname(os.path.realpath(sys.executable))
    installation = os.path.dirname(executable) if os.path.basename(executable) == "bin" else executable
    for folder in (sys.base_prefix, sys.prefix, os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), installation):
        add(folder)
    python_path = [root for module in SDK_DEPENDENCIES if (root := module_root(module)) is not None and add(root)]
    matched = sorted(path for pattern in ETC_PATTERNS for path in glob.glob(pattern) if os.path.isdir(path) and not os.path.islink(path))
    etc = tuple(path for path in ETC_FILES if os.path.exists(path)) + tuple(matched)
    sdk = str(Path(polignac.__file__).resolve().parent)
    return HostRuntime(system=system, python=tuple(python), python_path=tuple(python_path), etc=etc, sdk=sdk)
