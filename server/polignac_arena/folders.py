"""Submission folders walked, hashed, read and copied without trusting anything in them.

The arena runs as root and a submission folder is written by a stranger, so nothing here follows
a symbolic link or opens anything but a regular file:

* Every folder is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor
  and every file with ``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``-checked: a link swapped in
  between the listing and the open fails the open instead of redirecting it, and a FIFO, a
  device or a ``/proc`` file is never read (it could block forever or never end).
* A symbolic link may stay in a folder when it points inside it (resolved within the folder's
  own listing, through its other links); an absolute link, a link leading out of the folder,
  a dangling link and a link loop are refused, naming the path.
* FIFOs, sockets and devices are refused; so are folders past :data:`MAX_ENTRIES` entries,
  :data:`MAX_BYTES` bytes of files or :data:`MAX_DEPTH` levels.
* A file with other hard links must be readable by everyone: a hard link to a host file that
  only root may read (``/etc/shadow``) would otherwise be copied readable for the sandbox, or
  into an image, by the arena running as root.

Every check is made on the walk that does the work (hashing or copying), so what is hashed or
copied is exactly what was checked.  The digest covers each file's path, content and executable
bit and each link's path and target; it leaves out what builds and tools make (see
:data:`DIGEST_SKIPPED`): a folder keeps its digest when its bot is built or its bytecode cached.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

__all__ = [
    "DIGEST_SKIPPED",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "EntryKind",
    "FolderEntry",
    "FolderError",
    "FolderListing",
    "check_same_folder",
    "copy_folder",
    "folder_digest",
    "link_problem",
    "read_file",
    "scan_folder",
]

MAX_ENTRIES: Final = 10_000
"""Files, folders and links in one submission folder, all levels counted."""
MAX_BYTES: Final = 256 << 20
"""Bytes of all regular files of one submission folder together."""
MAX_DEPTH: Final = 32
"""Levels of folders below a submission folder."""
DIGEST_SKIPPED: Final = frozenset({"__pycache__", "node_modules", ".git", ".venv", "build", "dist"})
"""Folder names the digest leaves out (with every name starting with a dot): caches, build outputs, tools."""

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20
_MAX_LINK_HOPS: Final = 40  # as the kernel's own limit on links followed in one lookup
_SPECIAL_KINDS: Final = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class FolderError(ValueError):
    """A folder the arena will not walk, hash, read or copy; the message names the path and why."""

    def __init__(self, folder: Path, problem: str) -> None:
        self.folder = folder
        self.problem = problem
        super().__init__(f"{folder}: {problem}")


class EntryKind(StrEnum):
    """What an entry of a submission folder is (nothing else is allowed)."""

    FILE = "file"
    DIR = "dir"
    LINK = "link"


@dataclass(frozen=True, slots=True)
class FolderEntry:
    """One entry, as the walk found it."""

    path: str
    """Relative to the folder, ``/``-separated."""
    kind: EntryKind
    size: int = 0
    """Bytes, for a file."""
    executable: bool = False
    """A file with any execute bit set."""
    target: str = ""
    """What a link points to (inside the folder, relative)."""
    identity: tuple[int, int] = (0, 0)
    """``(st_dev, st_ino)``: tells a file from one swapped in for it."""


@dataclass(frozen=True, slots=True)
class FolderListing:
    """A checked folder: every entry (parents before children, names sorted) and the bytes of its files."""

    root: Path
    entries: tuple[FolderEntry, ...]
    total_bytes: int
    identity: tuple[int, int] = (0, 0)
    """The folder's own ``(st_dev, st_ino)``, as opened for the walk (see :func:`check_same_folder`)."""

    @property
    def files(self) -> int:
        """How many regular files."""
        return sum(1 for e in self.entries if e.kind is EntryKind.FILE)


def scan_folder(folder: Path | str) -> FolderListing:
    """Check a whole folder (links, special files, caps) without reading any file; raises :class:`FolderError`."""
    walk = _Walk(_resolved(folder))
    with walk.open_root() as fd:
        walk.run(fd, "", 0, None)
    return walk.finish()


def folder_digest(folder: Path | str, extra: str = "") -> str:
    """The SHA-256 (hex) of a submission's content; raises :class:`FolderError` for a folder it will not hash.

    Covers each file's path, executable bit and content and each link's path and target, in
    name order; the parts :data:`DIGEST_SKIPPED` names are checked but not hashed.  ``extra``
    is hashed first (for example the Dockerfile a build uses).
    """
    walk = _Walk(_resolved(folder), hash_files=True)
    with walk.open_root() as fd:
        walk.run(fd, "", 0, None)
    listing = walk.finish()
    digest = hashlib.sha256(extra.encode())
    for entry in sorted(listing.entries, key=lambda e: os.fsencode(e.path)):
        if _skipped(entry.path):
            continue
        name = os.fsencode(entry.path)
        if entry.kind is EntryKind.FILE:
            digest.update(b"F" + name + b"\0" + (b"x" if entry.executable else b"-") + walk.hashes[entry.path])
        elif entry.kind is EntryKind.LINK:
            digest.update(b"L" + name + b"\0" + os.fsencode(entry.target) + b"\0")
    return digest.hexdigest()


def copy_folder(
    source: Path | str, dest: Path | str, *, owner: tuple[int, int] | None = None, identity: tuple[int, int] | None = None
) -> FolderListing:
    """Copy a folder to ``dest`` (which must not exist; its parent must), checked as :func:`scan_folder` checks.

    The copy is readable by everyone: folders ``0755``, files ``0755`` when executable else
    ``0644``, links kept as links; modification times are kept (for ``make``).  With
    ``owner`` (uid, gid) everything copied belongs to that user.  With ``identity`` the source must
    still be that folder (:attr:`FolderListing.identity`), reached through no link.  Every file and folder is
    created anew (``O_EXCL``, relative to its parent's descriptor), so nothing in the
    destination can redirect a write.  On any error the copy is removed and the error raised.
    """
    dest_path = Path(dest)
    walk = _Walk(_resolved(source) if identity is None else Path(source), owner=owner, identity=identity)
    try:
        os.mkdir(dest_path, 0o700)
    except OSError as exc:
        raise FolderError(dest_path, f"cannot make the copy: {exc.strerror}") from None
    try:
        dest_fd = os.open(dest_path, _DIR_FLAGS)
        try:
            with walk.open_root() as fd:
                walk.run(fd, "", 0, dest_fd)
                walk.finish_folder(dest_fd, os.fstat(fd))
        finally:
            os.close(dest_fd)
        return walk.finish()
    except OSError as exc:  # the copy's side: a full disk, a destination that changed under us
        shutil.rmtree(dest_path, ignore_errors=True)  # rmtree works through descriptors: links in it are not followed
        raise FolderError(dest_path, f"cannot copy {str(walk.root)!r} here: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(dest_path, ignore_errors=True)
        raise


def check_same_folder(folder: Path | str, identity: tuple[int, int]) -> None:
    """Raise :class:`FolderError` unless ``folder`` (an absolute path) is reached through no link and is ``identity``.

    A folder is checked once and used later (a tournament seats its bots for hours): whoever owns
    it, or a folder above it, could meanwhile put a link in its place, to a folder that only root
    may read, which the arena, as root, would then copy for the bot or mount.
    """
    with _open_no_links(Path(folder)) as fd:
        info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != identity:
        raise FolderError(Path(folder), "is not the folder that was checked: it was replaced since (check it again)")


@contextlib.contextmanager
def _open_no_links(path: Path) -> Iterator[int]:
    """``path`` opened as a folder, from ``/`` down, without following a link on the way."""
    if not path.is_absolute():
        raise FolderError(path, "not an absolute path")
    fd = os.open("/", _DIR_FLAGS)
    try:
        for number, part in enumerate(path.parts[1:], start=1):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                where = Path(*path.parts[: number + 1])
                why = "a symbolic link or not a folder" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else exc.strerror
                raise FolderError(path, f"{str(where)!r} is now {why}: the folder was replaced since it was checked") from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def read_file(folder: Path | str, relative: str, max_bytes: int = 1 << 20) -> bytes:
    """The bytes of a regular file inside ``folder``; raises :class:`FolderError` for anything else.

    ``relative`` must stay inside the folder (no absolute path, no ``..``) and no part of it
    may be a symbolic link; a file over ``max_bytes`` is refused.
    """
    root = _resolved(folder)
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if relative.startswith("/") or not parts or ".." in parts:
        raise FolderError(root, f"{relative!r} is not a path inside the folder")
    walk = _Walk(root)
    with walk.open_root() as fd, contextlib.ExitStack() as opened:
        for number, part in enumerate(parts[:-1]):
            where = "/".join(parts[: number + 1])
            info = _lstat(root, where, part, fd)
            if not stat.S_ISDIR(info.st_mode):
                raise FolderError(root, f"{where!r} {_not_a_folder(info)}")
            fd = _open_dir(root, where, part, fd, info)
            opened.callback(os.close, fd)
        info = _lstat(root, relative, parts[-1], fd)
        if not stat.S_ISREG(info.st_mode):
            raise FolderError(root, f"{relative!r} {_not_a_file(info)}")
        _check_hard_links(root, relative, info)
        if info.st_size > max_bytes:
            raise FolderError(root, f"{relative!r} has {info.st_size} bytes, more than the {max_bytes} allowed")
        return _read(root, relative, parts[-1], fd, info, max_bytes)


# -- the walk ---------------------------------------------------------------------------------------------------


def _resolved(folder: Path | str) -> Path:
    """The folder's real path: the operator names it (it may be reached through links); its content is never followed."""
    try:
        return Path(folder).resolve(strict=True)
    except (OSError, RuntimeError):
        raise FolderError(Path(folder), "no such folder") from None


def _skipped(path: str) -> bool:
    return any(part in DIGEST_SKIPPED or part.startswith(".") for part in path.split("/"))


def _not_a_file(info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link: it must be a regular file of the folder itself"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file"
    return f"is {_SPECIAL_KINDS.get(stat.S_IFMT(info.st_mode), 'not a regular file')}: it must be a regular file"


def _check_hard_links(root: Path, where: str, info: os.stat_result) -> None:
    """Refuse a file with other hard links that not everyone may read: it may be a host file linked in."""
    if info.st_nlink > 1 and not info.st_mode & stat.S_IROTH:
        raise FolderError(
            root,
            f"{where!r} has {info.st_nlink - 1} other hard link(s) and is not readable by everyone (mode"
            f" {stat.S_IMODE(info.st_mode):o}): it could be a host file linked in; copy it instead of linking it",
        )


def _not_a_folder(info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link: the path must go through folders of the folder itself"
    return "is not a folder"


def _lstat(root: Path, where: str, name: str, dir_fd: int) -> os.stat_result:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise FolderError(root, f"{where!r} does not exist") from None
    except OSError as exc:
        raise FolderError(root, f"cannot read {where!r}: {exc.strerror}") from None


def _open_dir(root: Path, where: str, name: str, dir_fd: int, expected: os.stat_result) -> int:
    return _open_same(root, where, name, dir_fd, expected, folder=True)


def _open_file(root: Path, where: str, name: str, dir_fd: int, expected: os.stat_result) -> int:
    return _open_same(root, where, name, dir_fd, expected, folder=False)


def _open_same(root: Path, where: str, name: str, dir_fd: int, expected: os.stat_result, *, folder: bool) -> int:
    """Open the folder or regular file ``name`` that ``expected`` describes; it must be that same entry still."""
    try:
        fd = os.open(name, _DIR_FLAGS if folder else _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        what = f"the folder {where!r}" if folder else repr(where)
        raise FolderError(root, f"cannot open {what}: {exc.strerror} (was it replaced while being read?)") from None
    info = os.fstat(fd)
    if not (folder or stat.S_ISREG(info.st_mode)) or (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
        os.close(fd)
        raise FolderError(root, f"{where!r} changed while being read")
    return fd


def _chunks(root: Path, where: str, fd: int, size: int) -> Iterator[bytes]:
    """The file's bytes in chunks: exactly ``size`` of them, or an error (it changed while being read)."""
    left = size
    while True:
        try:
            block = os.read(fd, min(_CHUNK, left + 1))
        except OSError as exc:
            raise FolderError(root, f"cannot read {where!r}: {exc.strerror}") from None
        if not block:
            break
        left -= len(block)
        if left < 0:
            break
        yield block
    if left != 0:
        raise FolderError(root, f"{where!r} changed size while being read")


def _read(root: Path, where: str, name: str, dir_fd: int, info: os.stat_result, max_bytes: int) -> bytes:
    fd = _open_file(root, where, name, dir_fd, info)
    try:
        return b"".join(_chunks(root, where, fd, min(info.st_size, max_bytes)))
    finally:
        os.close(fd)


class _Walk:
    """One walk of a folder: checks every entry, counts against the caps, and hashes or copies as it goes."""

    def __init__(
        self, root: Path, *, hash_files: bool = False, owner: tuple[int, int] | None = None, identity: tuple[int, int] | None = None
    ) -> None:
        self.root = root
        self.identity = identity
        self.opened: tuple[int, int] = (0, 0)
        self.hash_files = hash_files
        self.owner = owner
        self.entries: list[FolderEntry] = []
        self.hashes: dict[str, bytes] = {}
        self.total_bytes = 0

    @contextlib.contextmanager
    def open_root(self) -> Iterator[int]:
        if self.identity is not None:
            with _open_no_links(self.root) as fd:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) != self.identity:
                    raise FolderError(self.root, "is not the folder that was checked: it was replaced since (check it again)")
                self.opened = self.identity
                yield fd
            return
        try:
            fd = os.open(self.root, _DIR_FLAGS)
        except NotADirectoryError:
            raise FolderError(self.root, "not a folder") from None
        except OSError as exc:
            raise FolderError(self.root, f"cannot open the folder: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            self.opened = (info.st_dev, info.st_ino)
            yield fd
        finally:
            os.close(fd)

    def run(self, dir_fd: int, prefix: str, depth: int, dest_fd: int | None) -> None:
        """Walk the folder open at ``dir_fd`` (``prefix`` is its relative path with a trailing ``/``)."""
        if depth > MAX_DEPTH:
            raise FolderError(self.root, f"{prefix.rstrip('/')!r} is more than {MAX_DEPTH} folders deep, the limit of a submission")
        names: list[str] = []
        try:
            with os.scandir(dir_fd) as listing:
                for item in listing:
                    names.append(item.name)
                    self._count(len(self.entries) + len(names))
        except OSError as exc:
            raise FolderError(self.root, f"cannot list {prefix or './'!r}: {exc.strerror}") from None
        for name in sorted(names, key=os.fsencode):
            self._entry(dir_fd, prefix, name, depth, dest_fd)

    def _count(self, entries: int) -> None:
        if entries > MAX_ENTRIES:
            raise FolderError(self.root, f"more than {MAX_ENTRIES} files, folders and links, the limit of a submission")

    def _entry(self, dir_fd: int, prefix: str, name: str, depth: int, dest_fd: int | None) -> None:
        where = prefix + name
        info = _lstat(self.root, where, name, dir_fd)
        mode = info.st_mode
        identity = (info.st_dev, info.st_ino)
        if stat.S_ISLNK(mode):
            try:
                target = os.readlink(name, dir_fd=dir_fd)
            except OSError as exc:
                raise FolderError(self.root, f"cannot read the link {where!r}: {exc.strerror}") from None
            if target.startswith("/"):
                problem = f"{where!r} is an absolute symbolic link (to {target!r}): links may only point inside the folder"
                raise FolderError(self.root, problem)
            self.entries.append(FolderEntry(where, EntryKind.LINK, target=target, identity=identity))
            if dest_fd is not None:
                os.symlink(target, name, dir_fd=dest_fd)
                self._own(name, dest_fd)
                os.utime(name, ns=(info.st_atime_ns, info.st_mtime_ns), dir_fd=dest_fd, follow_symlinks=False)
        elif stat.S_ISREG(mode):
            _check_hard_links(self.root, where, info)
            self.total_bytes += info.st_size
            if self.total_bytes > MAX_BYTES:
                raise FolderError(self.root, f"its files hold more than {MAX_BYTES >> 20} MiB, the limit of a submission (at {where!r})")
            self.entries.append(FolderEntry(where, EntryKind.FILE, info.st_size, bool(mode & 0o111), identity=identity))
            if self.hash_files and not _skipped(where):
                self._hash(dir_fd, where, name, info)
            if dest_fd is not None:
                self._copy_file(dir_fd, where, name, info, dest_fd)
        elif stat.S_ISDIR(mode):
            self.entries.append(FolderEntry(where, EntryKind.DIR, identity=identity))
            child = _open_dir(self.root, where, name, dir_fd, info)
            child_dest: int | None = None
            try:
                if dest_fd is not None:
                    os.mkdir(name, 0o700, dir_fd=dest_fd)
                    child_dest = os.open(name, _DIR_FLAGS, dir_fd=dest_fd)
                self.run(child, where + "/", depth + 1, child_dest)
                if child_dest is not None:
                    self.finish_folder(child_dest, info)
            finally:
                os.close(child)
                if child_dest is not None:
                    os.close(child_dest)
        else:
            kind = _SPECIAL_KINDS.get(stat.S_IFMT(mode), "not a file, folder or link")
            raise FolderError(self.root, f"{where!r} is {kind}: special files are not allowed in a submission")

    def _hash(self, dir_fd: int, where: str, name: str, info: os.stat_result) -> None:
        fd = _open_file(self.root, where, name, dir_fd, info)
        try:
            content = hashlib.sha256()
            for block in _chunks(self.root, where, fd, info.st_size):
                content.update(block)
        finally:
            os.close(fd)
        self.hashes[where] = content.digest()

    def _copy_file(self, dir_fd: int, where: str, name: str, info: os.stat_result, dest_fd: int) -> None:
        fd = _open_file(self.root, where, name, dir_fd, info)
        try:
            out = os.open(name, _CREATE_FLAGS, 0o600, dir_fd=dest_fd)
            try:
                for block in _chunks(self.root, where, fd, info.st_size):
                    view = memoryview(block)
                    while view:
                        view = view[os.write(out, view) :]
                os.fchmod(out, 0o755 if info.st_mode & 0o111 else 0o644)
                if self.owner is not None:
                    os.fchown(out, *self.owner)
                os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
            finally:
                os.close(out)
        finally:
            os.close(fd)

    def _own(self, name: str, dest_fd: int) -> None:
        if self.owner is not None:
            os.chown(name, *self.owner, dir_fd=dest_fd, follow_symlinks=False)

    def finish_folder(self, fd: int, fd_stat: os.stat_result) -> None:
        """A copied folder, once filled: readable by all, owned as asked, with its source's time."""
        os.fchmod(fd, 0o755)
        if self.owner is not None:
            os.fchown(fd, *self.owner)
        os.utime(fd, ns=(fd_stat.st_atime_ns, fd_stat.st_mtime_ns))

    def finish(self) -> FolderListing:
        """The listing, once every link is known to resolve inside the folder."""
        kinds = {entry.path: entry for entry in self.entries}
        for entry in self.entries:
            if entry.kind is EntryKind.LINK:
                problem = link_problem(kinds, entry)
                if problem is not None:
                    raise FolderError(self.root, f"{entry.path!r} is a symbolic link to {entry.target!r}, which {problem}")
        return FolderListing(self.root, tuple(self.entries), self.total_bytes, self.opened)


def link_problem(entries: Mapping[str, FolderEntry], link: FolderEntry) -> str | None:
    """Why ``link`` does not resolve to an entry of ``entries`` (by path, following their own links), or None."""
    folder = link.path.split("/")[:-1]
    pending = link.target.split("/")
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not folder:
                return "leads out of the folder: links may only point inside it"
            folder.pop()
            continue
        found = entries.get("/".join([*folder, part]))
        if found is None:
            return "does not exist in the folder (a dangling link)"
        if found.kind is EntryKind.LINK:
            hops += 1
            if hops > _MAX_LINK_HOPS:
                return "never resolves (a loop of links)"
            if found.target.startswith("/"):
                return "goes through an absolute link"
            pending = found.target.split("/") + pending
            continue
        if found.kind is EntryKind.FILE and any(p not in ("", ".") for p in pending):
            return "goes through a file as if it were a folder"
        folder.append(part)
    return None
