"""What every sandboxed build shares: the wrapper it runs, its capped output, and the safe install of its results.

A build runs in the bot's own sandbox (docs/builds.md): the submission folder is mounted
read-only at :data:`BUILD_SOURCE`, a size-capped tmpfs at :data:`BUILD_DIR` is its writable
copy, and :mod:`.build_wrapper` copies the folder in, runs the build step there and, when it
succeeds, sends what it added or changed as a tar stream on stdout; its output goes to stderr.

Nothing in that stream is trusted.  :class:`ResultSink` keeps it in a temporary file up to a
byte cap; :func:`install_results` unpacks it into a fresh staging folder through folder
descriptors, never following a link (regular files, folders and links only; no absolute or
``..`` names, no special files, caps on entries and depth), checks that every link it made
resolves inside the folder as it will be, and then installs it into the submission folder
the same way, never touching ``bot.toml``, replacing entries by rename.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import shlex
import shutil
import stat
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Final

from polignac_arena.folders import MAX_DEPTH, EntryKind, FolderEntry, FolderError, link_problem, scan_folder
from polignac_arena.seats.base import BuildLimits, BuildResult, SeatError, SeatLimits, SeatProcess
from polignac_arena.submission import Submission

__all__ = [
    "BUILD_DIR",
    "BUILD_OUTPUT_DRAIN_BYTES_PER_S",
    "BUILD_SOURCE",
    "BUILD_WRAPPER",
    "PROTECTED",
    "WRAPPER_SOURCE",
    "BuildRefused",
    "BuildStart",
    "BuildStarted",
    "ResultSink",
    "build_command",
    "build_seat_limits",
    "build_skipped",
    "finish_build",
    "install_results",
    "run_build",
    "signal_note",
]

BUILD_SOURCE: Final = "/src"
"""Where the submission folder appears, read-only, in a build's sandbox."""
BUILD_DIR: Final = "/bot"
"""The build's writable copy of the folder and its working folder (where the bot later runs, too)."""
BUILD_WRAPPER: Final = "/opt/polignac-build/build_wrapper.py"
"""Where :data:`WRAPPER_SOURCE` appears in a build's sandbox."""
WRAPPER_SOURCE: Final = Path(__file__).with_name("build_wrapper.py")
PROTECTED: Final = frozenset({"bot.toml"})
"""Files a build may not change in the submission folder (what it does to them is left out, and said)."""

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SIGNALS: Final = {
    9: "SIGKILL: killed (its memory cap, or stopped by the arena)",
    24: "SIGXCPU: over its CPU time cap",
    25: "SIGXFSZ: a file over its file size cap",
}


class BuildRefused(ValueError):
    """What a build sent back cannot be installed; the message says why, naming the path."""


def build_command(
    python: str, build: Sequence[str], *, source: str = BUILD_SOURCE, dest: str = BUILD_DIR, wrapper: str = BUILD_WRAPPER
) -> list[str]:
    """The sandbox's command: the wrapper (run by ``python``) around the build step (``python`` in it is that one too)."""
    step = list(build)
    if step and step[0] in ("python", "python3"):
        step[0] = python
    return [python, "-I", "-S", wrapper, source, dest, "--", *step]


BUILD_OUTPUT_DRAIN_BYTES_PER_S: Final = 16 << 20
"""A build's output past its cap is read (and dropped) faster than a seat's stderr: it is no seat of a match."""


def build_seat_limits(limits: SeatLimits, caps: BuildLimits) -> SeatLimits:
    """The caps a build runs under: the seat's, with a file as big as its folder may be and its own output cap."""
    return replace(
        limits,
        file_size_mb=max(limits.file_size_mb, caps.disk_mb),
        stderr_bytes=caps.output_bytes,
        stderr_drain_bytes_per_s=BUILD_OUTPUT_DRAIN_BYTES_PER_S,
    )


def build_skipped(submission: Submission, refusal: Callable[[], str | None], because: str = "") -> BuildResult | None:
    """The result of a build that does not run, or None when it runs.

    It does not run when the submission has no build step, or when ``refusal`` (asked only
    for a build step) gives a reason, reported as ``refused: {because}{reason}``.
    """
    if not submission.build:
        return BuildResult(True, 0, "", 0.0, "no build step")
    reason = refusal()
    if reason is not None:
        return BuildResult(False, None, "", 0.0, f"refused: {because}{reason}")
    return None


BuildStarted = tuple[SeatProcess, Callable[[], int]]
"""A build's started sandbox: the process running :mod:`.build_wrapper`, and how many of its
processes its memory cap has killed (``memory_kills`` of :func:`finish_build`)."""
BuildStart = Callable[[SeatLimits, BuildLimits], Awaitable[BuildStarted]]
"""Starts a build's sandbox under its seat caps and its build caps."""


async def run_build(
    submission: Submission,
    limits: SeatLimits,
    caps: BuildLimits | None,
    timeout_s: float,
    refusal: Callable[[], str | None],
    because: str,
    start: BuildStart,
) -> BuildResult:
    """A sandboxed build, whole: skipped or refused as :func:`build_skipped` says (``refusal``, ``because``),
    else started (``start``), read to its end and its results installed (:func:`finish_build`); a
    :class:`SeatError` on the way is its result."""
    caps = caps or BuildLimits()
    skipped = build_skipped(submission, refusal, because)
    if skipped is not None:
        return skipped
    started = time.monotonic()
    try:
        process, memory_kills = await start(build_seat_limits(limits, caps), caps)
    except SeatError as exc:
        return BuildResult(False, None, "", time.monotonic() - started, str(exc))
    return await finish_build(process, submission, caps, timeout_s, started, memory_kills=memory_kills)


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"


def signal_note(status: int | None) -> str:
    """What a negative exit status means for a build, for the report (empty for other statuses)."""
    if status is None or status >= 0:
        return ""
    return _SIGNALS.get(-status, f"killed by signal {-status}")


class ResultSink:
    """The tar stream a build sends back, kept in a temporary file up to ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="polignac-build-")  # noqa: SIM115 (closed by close(), after the install)

    @property
    def over(self) -> bool:
        return self.size > self.cap

    def feed(self, data: bytes) -> bool:
        """Keep ``data``; False once the stream is over the cap (stop reading: the build is refused)."""
        self.size += len(data)
        if self.over:
            return False
        self.file.write(data)
        return True

    def close(self) -> None:
        self.file.close()


async def finish_build(
    process: SeatProcess, submission: Submission, caps: BuildLimits, timeout_s: float, started: float, *, memory_kills: Callable[[], int]
) -> BuildResult:
    """Read a started build to its end (its results from ``process.stdout``), stop it, and install its results.

    ``process`` runs :mod:`.build_wrapper` with its output as the seat's stderr; ``memory_kills``
    tells how many of its processes its memory cap has killed (read before it is stopped).
    """
    sink = ResultSink(caps.result_bytes)
    status: int | None = None
    problem = ""
    try:
        try:
            async with asyncio.timeout(timeout_s):
                assert process.stdout is not None
                while chunk := await process.stdout.read(1 << 16):
                    if not sink.feed(chunk):
                        problem = f"sent back results over the cap of {_size(caps.result_bytes)}: stopped"
                        break
                if not problem:
                    status = await process.wait()
        except TimeoutError:
            problem = f"timed out after {timeout_s:g} s: stopped, with everything it started"
        memory = memory_kills()
        await process.stop()
        output = process.stderr_text()
        command = shlex.join(submission.build)
        seconds = time.monotonic() - started
        if memory:
            problem = problem or f"went over its memory cap: {memory} of its processes killed"

        def result(ok: bool, outcome: str, installed: tuple[str, ...] = (), public: str | None = None) -> BuildResult:
            # `public` leaves out what came from the submission (paths it made); the command is never in it
            shown = f"the build step {public or outcome}"
            return BuildResult(ok, status, output, seconds, f"{command} {outcome}", installed, outcome=shown)

        if problem:
            return result(False, problem)
        if status != 0:
            note = signal_note(status)
            return result(False, f"exited {status}" + (f" ({note})" if note else ""))
        try:
            installed, notes = await asyncio.to_thread(install_results, sink, submission.path, caps)
        except BuildRefused as exc:
            return result(False, f"exited 0, but {exc}: nothing was installed", public="exited 0, but what it made cannot be installed")
        except OSError as exc:
            return result(
                False, f"exited 0, but its results cannot be installed: {exc}", public="exited 0, but its results cannot be installed"
            )
        if notes:
            output = "\n".join([output.rstrip("\n"), *notes]).lstrip("\n")
        what = f"installed {len(installed)} file(s)" + (f": {', '.join(installed[:5])}" if installed else "")
        if len(installed) > 5:
            what += ", ..."
        return result(True, f"exited 0 in {seconds:.1f} s; {what}", tuple(installed))
    finally:
        sink.close()


# -- installing what came back ----------------------------------------------------------------------------------


def install_results(sink: ResultSink, folder: Path, caps: BuildLimits) -> tuple[list[str], list[str]]:
    """Install the build's results into ``folder``: the files installed, and notes (protected files left out).

    Raises :class:`BuildRefused` (nothing installed) for a stream over the caps, a member that
    is not a regular file, folder or link inside the folder, or an entry that would replace a
    folder of the submission or go through one of its links or files.
    """
    if sink.over:
        raise BuildRefused(f"the build's results are over the cap of {_size(caps.result_bytes)}")
    sink.file.seek(0)
    staging = Path(tempfile.mkdtemp(prefix="polignac-build-results-"))
    try:
        unpacked = _extract(sink.file, staging, caps) if sink.size else {}
        entries = sorted(_entries(staging), key=lambda path: path.split("/"))
        notes = [f"[arena] the build changed {path}: not installed (a build may not change it)" for path in entries if path in PROTECTED]
        _check_links(folder, {path: entry for path, entry in unpacked.items() if path not in PROTECTED})
        owner = _owner(folder)
        installed: list[str] = []
        root_fd = os.open(folder, _DIR_FLAGS)
        try:
            for path in entries:  # first check every entry against the folder, so that a refusal installs nothing
                if path not in PROTECTED:
                    _install(staging, path, root_fd, owner, check_only=True)
            for path in entries:
                if path not in PROTECTED and _install(staging, path, root_fd, owner):
                    installed.append(path)
        finally:
            os.close(root_fd)
        return installed, notes
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_links(folder: Path, unpacked: dict[str, FolderEntry]) -> None:
    """Refuse a link of the build's that would not resolve inside the folder as it will be once installed."""
    links = [entry for entry in unpacked.values() if entry.kind is EntryKind.LINK]
    if not links:
        return
    try:
        view = {entry.path: entry for entry in scan_folder(folder).entries}
    except FolderError as exc:
        raise BuildRefused(f"the submission folder cannot take the build's links: {exc.problem}") from None
    view |= unpacked
    for link in links:
        problem = link_problem(view, link)
        if problem is not None:
            raise BuildRefused(f"the build made {link.path!r}: a link to {link.target!r}, which {problem}")


def _entries(staging: Path) -> Iterator[str]:
    """Every entry of the staging folder (relative, parents first); links are not followed."""
    for folder, dirs, files in os.walk(staging):
        for name in dirs + files:
            yield os.path.relpath(os.path.join(folder, name), staging)


def _extract(stream: IO[bytes], staging: Path, caps: BuildLimits) -> dict[str, FolderEntry]:
    """Unpack the tar stream into ``staging`` without following any link; what was unpacked, by path.

    ``tarfile``'s own extraction is not used: its ``data`` filter checks paths with
    ``os.path.realpath``, which stops resolving links past PATH_MAX (CVE-2025-4517), so a crafted
    stream could write through a link it believed to stay inside.  Here every folder is opened
    with ``O_NOFOLLOW`` relative to its parent and every file made with ``O_EXCL``: a link
    unpacked earlier is never followed, whatever it points to.
    """
    unpacked: dict[str, FolderEntry] = {}
    root_fd = os.open(staging, _DIR_FLAGS)
    try:
        with tarfile.open(fileobj=stream, mode="r:") as tar:
            for count, member in enumerate(tar, start=1):
                if count > caps.result_files:
                    raise BuildRefused(f"the build's results hold more than {caps.result_files} files, folders and links")
                parts = _member_parts(member)
                if parts:
                    unpacked["/".join(parts)] = _unpack(tar, member, parts, root_fd)
    except (tarfile.TarError, EOFError) as exc:
        raise BuildRefused(f"the build's results are not a valid tar stream: {exc}") from None
    except OSError as exc:
        raise BuildRefused(f"the build's results cannot be unpacked: {exc.strerror or exc}") from None
    finally:
        os.close(root_fd)
    return unpacked


def _member_parts(member: tarfile.TarInfo) -> list[str]:
    """The member's path as parts; refused when absolute, through ``..``, too deep, or not a file, folder or link."""
    name = member.name
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        kind = "a named pipe (FIFO)" if member.isfifo() else "a device" if member.isdev() else "a special file"
        raise BuildRefused(f"the build made {name!r}, {kind}: only files, folders and links are installed")
    if member.issparse():
        raise BuildRefused(f"the build made {name!r}, a sparse file entry: only plain files are installed")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if name.startswith("/") or ".." in parts or "\0" in name:
        raise BuildRefused(f"the build made {name!r}: a path outside the folder")
    if len(parts) > MAX_DEPTH + 1:
        raise BuildRefused(f"the build made {name!r}: more than {MAX_DEPTH} folders deep, the limit of a submission")
    return parts


def _link_target(member: tarfile.TarInfo, parts: list[str]) -> str:
    """A symbolic link's target, refused when it is absolute or leads out of the folder as written."""
    target = member.linkname
    inside = posixpath.normpath(posixpath.join(*parts[:-1], target)) if parts[:-1] else posixpath.normpath(target)
    if not target or target.startswith("/") or "\0" in target or inside == ".." or inside.startswith("../"):
        raise BuildRefused(f"the build made {member.name!r}: a link to {target!r}, outside the folder: links may only point inside it")
    return target


def _open_parent(root_fd: int, parts: list[str], name: str) -> int:
    """The folder of ``parts``[:-1] under ``root_fd`` (made if missing), opened without following a link; the caller closes it."""
    fd = os.dup(root_fd)
    try:
        for number, part in enumerate(parts[:-1]):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                where = "/".join(parts[: number + 1])
                raise BuildRefused(f"the build made {name!r} inside {where!r}, which it made as a file or a link") from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _clear(parent: int, part: str, name: str) -> None:
    """Make room for a file or link named ``part``: a file or link of an earlier member goes; a folder refuses."""
    try:
        existing = os.stat(part, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(existing.st_mode):
        raise BuildRefused(f"the build made {name!r} twice: as a folder, then as a file or a link")
    os.unlink(part, dir_fd=parent)


def _unpack(tar: tarfile.TarFile, member: tarfile.TarInfo, parts: list[str], root_fd: int) -> FolderEntry:
    """Unpack one member at ``parts`` under ``root_fd`` (a file as a new file, never through a link); its entry."""
    name, path = member.name, "/".join(parts)
    parent = _open_parent(root_fd, parts, name)
    try:
        part = parts[-1]
        if member.isdir():
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=parent)
            if not stat.S_ISDIR(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode):
                raise BuildRefused(f"the build made {name!r} twice: as a file or a link, then as a folder")
            return FolderEntry(path, EntryKind.DIR)
        _clear(parent, part, name)
        if member.issym():
            target = _link_target(member, parts)
            os.symlink(target, part, dir_fd=parent)
            return FolderEntry(path, EntryKind.LINK, target=target)
        if member.islnk():  # a second name of a file earlier in the stream: its content is read from the stream
            linked = [p for p in member.linkname.split("/") if p not in ("", ".")]
            if member.linkname.startswith("/") or ".." in linked or not linked:
                where = f"a link to {member.linkname!r}, outside the folder"
                raise BuildRefused(f"the build made {name!r}: {where}: links may only point inside it")
        try:
            source = tar.extractfile(member)
        except KeyError:
            source = None
        if source is None:
            raise BuildRefused(f"the build made {name!r}, a hard link to {member.linkname!r}, which is not a file it made before")
        executable = bool(member.mode & 0o100)
        out = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
        try:
            while block := source.read(1 << 20):
                view = memoryview(block)
                while view:
                    view = view[os.write(out, view) :]
            os.fchmod(out, 0o755 if executable else 0o644)
            os.utime(out, ns=(int(member.mtime * 1e9), int(member.mtime * 1e9)))
        finally:
            os.close(out)
        return FolderEntry(path, EntryKind.FILE, executable=executable)
    finally:
        os.close(parent)


def _owner(folder: Path) -> tuple[int, int]:
    info = os.stat(folder)
    return info.st_uid, info.st_gid


def _install(staging: Path, relative: str, root_fd: int, owner: tuple[int, int], *, check_only: bool = False) -> bool:
    """Install one entry of ``staging`` at ``relative`` under the folder open at ``root_fd``; True for a file or link.

    ``check_only``: raise :class:`BuildRefused` if it could not be installed, change nothing.
    """
    parts = relative.split("/")
    source = staging / relative
    info = os.lstat(source)
    with contextlib.ExitStack() as stack:
        parent = root_fd
        for number, part in enumerate(parts[:-1]):
            try:
                parent = os.open(part, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if check_only:  # a new folder, made by an entry before this one
                    return False
                raise
            except OSError:
                where = "/".join(parts[: number + 1])
                raise BuildRefused(f"the build made {relative!r}, but {where!r} is not a folder of the submission") from None
            stack.callback(os.close, parent)
        name = parts[-1]
        try:
            existing: os.stat_result | None = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if stat.S_ISDIR(info.st_mode):
            if existing is None and not check_only:
                os.mkdir(name, 0o755, dir_fd=parent)
                os.chown(name, *owner, dir_fd=parent, follow_symlinks=False)
            elif existing is not None and not stat.S_ISDIR(existing.st_mode):
                raise BuildRefused(f"the build made the folder {relative!r}, where the submission has a file or a link")
            return False
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise BuildRefused(f"the build made {relative!r}, where the submission has a folder")
        if check_only:
            return False
        temporary = f".{name[:64]}.polignac-{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=parent)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), temporary, dir_fd=parent)
        else:
            _copy_file(source, temporary, parent, info)
        os.chown(temporary, *owner, dir_fd=parent, follow_symlinks=False)
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)  # a link in the way is replaced, not followed
    return True


def _copy_file(source: Path, name: str, dir_fd: int, info: os.stat_result) -> None:
    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with open(source, "rb") as reader:
            while block := reader.read(1 << 20):
                view = memoryview(block)
                while view:
                    view = view[os.write(out, view) :]
        os.fchmod(out, 0o755 if info.st_mode & 0o111 else 0o644)
        os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
    finally:
        os.close(out)
