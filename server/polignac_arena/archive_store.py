"""Submission archives on the server: kept by SHA-256, unpacked once, received as a stream.

:class:`ArchiveStore` keeps archives by SHA-256 and their unpacked folders beside them; an
upload is received into it as a stream (:class:`IncomingArchive`), never held in memory whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import IO, Final

from polignac_arena.archive import TEMP_PREFIX, ArchiveCaps, ArchiveTooBig, unpack_archive

__all__ = ["ArchiveStore", "IncomingArchive", "UnknownArchive", "disk_usage"]

_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")


class UnknownArchive(LookupError):
    """No archive with that SHA-256 in the store."""


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def disk_usage(path: Path) -> int:
    """The bytes a folder (or file) takes on disk, links not followed: what the disk budgets count."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return 0
    total = info.st_blocks * 512
    if not stat.S_ISDIR(info.st_mode):
        return total
    pending = [str(path)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                total += entry.stat(follow_symlinks=False).st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
            except OSError:
                continue  # removed meanwhile
    return total


class ArchiveStore:
    """Archives kept by content: ``root/archives/ab/<sha256>.tar.gz``, unpacked once into ``root/versions/<sha256>/``.

    An archive is written to a temporary file, synced and renamed, so it is whole or absent; an
    unpacked folder is renamed into place whole.  :meth:`sweep`, at start-up, moves what a
    killed process left half-written to ``root/trash/``, which :meth:`empty_trash` empties
    (in the background: start-up does not wait on a large folder's removal).

    The archives are their authors' private code: their folder is open to this user only
    (``0700``, files ``0600``).  An unpacked folder must stay readable by the sandbox's users,
    so ``root`` and ``versions`` may be crossed by others (``0711``) but not listed: a version
    is reached only by its SHA-256, which only the store knows.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.archives = self.root / "archives"
        self.versions = self.root / "versions"
        self.incoming = self.root / "incoming"
        self.trash_folder = self.root / "trash"
        self.root.mkdir(parents=True, exist_ok=True)
        modes = {self.root: 0o711, self.archives: 0o700, self.versions: 0o711, self.incoming: 0o700, self.trash_folder: 0o700}
        for folder, mode in modes.items():
            folder.mkdir(exist_ok=True)
            with contextlib.suppress(PermissionError):  # a store another user keeps: left as it is
                os.chmod(folder, mode)

    def archive_path(self, sha: str) -> Path:
        """Where the archive ``sha`` is kept; raises :class:`UnknownArchive` for a name that is no SHA-256."""
        if not _SHA256.match(sha):
            raise UnknownArchive(f"{sha!r} is not a SHA-256 in hex")
        return self.archives / sha[:2] / f"{sha}.tar.gz"

    def version_path(self, sha: str) -> Path:
        """Where the archive ``sha`` is unpacked (whether or not it is yet)."""
        self.archive_path(sha)  # the same check of the name
        return self.versions / sha

    def receive(self, cap: int) -> IncomingArchive:
        """A new upload, written to disk as it arrives and refused (:class:`ArchiveTooBig`) once it passes ``cap`` bytes."""
        return IncomingArchive(self, cap)

    def put(self, data: bytes) -> str:
        """Keep ``data``; its SHA-256 in hex.  Storing the same bytes again changes nothing."""
        with self.receive(len(data)) as incoming:
            incoming.write(data)
            return incoming.keep()

    def _keep_file(self, temp: Path, sha: str) -> None:
        """Move the synced file ``temp`` (whose SHA-256 is ``sha``) into place, or drop it when the archive is kept already."""
        final = self.archive_path(sha)
        if final.is_file():
            temp.unlink(missing_ok=True)
            return
        final.parent.mkdir(mode=0o700, exist_ok=True)
        os.rename(temp, final)
        _fsync_folder(final.parent)

    def get(self, sha: str) -> bytes:
        """The archive ``sha``; raises :class:`UnknownArchive`."""
        try:
            return self.archive_path(sha).read_bytes()
        except FileNotFoundError:
            raise UnknownArchive(f"no archive {sha!r} in the store") from None

    def has(self, sha: str) -> bool:
        """Whether the archive ``sha`` is kept."""
        return self.archive_path(sha).is_file()

    def size(self, sha: str) -> int:
        """The bytes the archive ``sha`` takes on disk (0 when it is not kept)."""
        return disk_usage(self.archive_path(sha))

    def unpacked(self, sha: str, caps: ArchiveCaps | None = None) -> Path:
        """The folder the archive ``sha`` unpacks to, unpacked on first use; raises :class:`ArchiveError`, :class:`UnknownArchive`."""
        dest = self.version_path(sha)
        if dest.is_dir():
            return dest
        path = self.archive_path(sha)
        if not path.is_file():
            raise UnknownArchive(f"no archive {sha!r} in the store")
        return self._unpack(sha, path, caps)

    def add(self, data: bytes, caps: ArchiveCaps | None = None) -> str:
        """Check ``data`` by unpacking it, then keep it; its SHA-256.  A refused archive (:class:`ArchiveError`) is not kept.

        Unpacked first and kept second: a process killed in between leaves an unpacked folder
        without its archive, which :meth:`sweep` removes.
        """
        sha = hashlib.sha256(data).hexdigest()
        self._unpack(sha, data, caps)
        try:
            return self.put(data)
        except BaseException:
            shutil.rmtree(self.version_path(sha), ignore_errors=True)
            raise

    def _unpack(self, sha: str, data: bytes | Path, caps: ArchiveCaps | None) -> Path:
        """``data`` (whose SHA-256 is ``sha``) unpacked into its version folder, unless it already is."""
        dest = self.version_path(sha)
        if not dest.is_dir():
            with contextlib.suppress(FileExistsError):  # unpacked meanwhile by another caller: the same content
                unpack_archive(data, dest, caps)
        return dest

    def forget_unpacked(self, sha: str) -> None:
        """Remove the unpacked folder of ``sha`` (kept: its archive), so the next :meth:`unpacked` unpacks it anew.

        A validation builds in the unpacked folder; one cut short (a killed server) may leave it half built.
        """
        shutil.rmtree(self.version_path(sha), ignore_errors=True)

    def remove(self, sha: str, *, later: bool = False) -> None:
        """Forget the archive ``sha`` and its unpacked folder (nothing happens when neither is kept).

        ``later``: the folder goes to the trash (a rename), for :meth:`empty_trash` to remove.
        """
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.archive_path(sha))
        # The archive goes first: a folder left without one is swept at the next start.
        if later:
            self.trash(self.version_path(sha))
        else:
            shutil.rmtree(self.version_path(sha), ignore_errors=True)

    def kept(self) -> set[str]:
        """The SHA-256 of every archive kept."""
        return {
            path.name.removesuffix(".tar.gz")
            for shard in self.archives.iterdir()
            if shard.is_dir() and not shard.is_symlink()
            for path in shard.iterdir()
            if path.name.endswith(".tar.gz") and _SHA256.match(path.name.removesuffix(".tar.gz"))
        }

    def trash(self, path: Path) -> None:
        """Move ``path`` (in the store) to the trash at once; :meth:`empty_trash` removes it."""
        with contextlib.suppress(FileNotFoundError):
            os.rename(path, Path(tempfile.mkdtemp(prefix="gone-", dir=self.trash_folder)) / "x")

    def empty_trash(self) -> None:
        """Remove everything in the trash (what :meth:`sweep` and :meth:`trash` put there)."""
        for entry in list(self.trash_folder.iterdir()):
            shutil.rmtree(entry, ignore_errors=True)

    def sweep(self) -> list[Path]:
        """Move to the trash what a killed process left: temporary files and folders, uploads half received, and
        unpacked folders without their archive.  Each costs a rename: :meth:`empty_trash` does the removing."""
        removed: list[Path] = []
        for shard in self.archives.iterdir():
            if shard.is_dir() and not shard.is_symlink():
                for path in shard.iterdir():
                    if path.name.startswith(TEMP_PREFIX):
                        path.unlink(missing_ok=True)
                        removed.append(path)
        for path in self.incoming.iterdir():
            self.trash(path)
            removed.append(path)
        for path in self.versions.iterdir():
            orphan = _SHA256.match(path.name) is not None and not self.has(path.name)
            if path.name.startswith(TEMP_PREFIX) or orphan:
                if path.is_dir() and not path.is_symlink():
                    self.trash(path)
                else:
                    path.unlink(missing_ok=True)
                removed.append(path)
        return removed


class IncomingArchive:
    """An upload being received: written to a private temporary file as it arrives, hashed, and capped.

    Use it as a context manager: unless :meth:`keep` moved it into the store, the file is removed
    on leaving.
    """

    def __init__(self, store: ArchiveStore, cap: int) -> None:
        self.store = store
        self.cap = cap
        self.size = 0
        fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=store.incoming)  # mode 0600
        self.path = Path(name)
        self._file: IO[bytes] | None = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self._kept = False

    @property
    def sha(self) -> str:
        """The SHA-256 of what was received so far, in hex."""
        return self._hash.hexdigest()

    def write(self, data: bytes) -> None:
        """Add ``data``; :class:`ArchiveTooBig` once the upload passes its cap (what came is then dropped)."""
        if self._file is None:
            raise ValueError("the upload is closed")
        self.size += len(data)
        if self.size > self.cap:
            raise ArchiveTooBig(f"the upload is more than the {self.cap} bytes allowed")
        self._hash.update(data)
        self._file.write(data)

    def finish(self) -> Path:
        """Stop receiving: the file, synced, to read (scan, unpack) before :meth:`keep` or :meth:`discard`."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
        return self.path

    def keep(self) -> str:
        """Move the upload into the store (whole: synced, then renamed); its SHA-256."""
        self.finish()
        sha = self.sha
        self.store._keep_file(self.path, sha)
        self._kept = True
        return sha

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if not self._kept:
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> IncomingArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()
