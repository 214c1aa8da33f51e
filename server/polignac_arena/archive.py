"""Submission archives: packed on the author's machine, unpacked on the server without trusting them, stored by content.

:func:`pack_folder` makes a gzip'd tar of a submission folder holding only regular files and
folders, under relative names, in name order, with modes ``0644``/``0755`` and a fixed time
and owner: the same folder packs to the same bytes, so an archive's SHA-256 names its content.

:func:`unpack_archive` reads an archive a stranger sent as a stream, member by member, and
refuses it (:class:`ArchiveError`, naming the member) at the first thing a submission may not
hold: a name leading out of the folder or too long, a link, a device, a FIFO, a duplicate, too
many files and folders (the folders its paths imply counted), too deep a path, or more bytes
than the caps allow.  The bytes are counted as they are decompressed, not as the headers
declare them, so neither a tar nor a gzip bomb is ever unpacked past the cap.  It unpacks into
a fresh folder beside the destination and renames it into place: a refused archive leaves
nothing behind.  :func:`scan_archive` makes the same checks without writing anything, and
says what unpacking would cost on disk and what ``bot.toml`` holds: the cheap refusals come
before anything is unpacked.

:mod:`polignac_arena.archive_store` keeps them on the server.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import itertools
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from polignac_arena.folders import EntryKind, FolderEntry, FolderError, read_file, scan_folder
from polignac_arena.submission import SubmissionError, load_submission

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = [
    "BLOCK_BYTES",
    "MANIFEST",
    "PACK_LEFT_OUT",
    "PATH_BYTES",
    "ArchiveCaps",
    "ArchiveError",
    "ArchiveScan",
    "ArchiveTooBig",
    "pack_folder",
    "scan_archive",
    "unpack_archive",
]

PACK_LEFT_OUT: Final = frozenset({".git", "__pycache__"})
"""Folders :func:`pack_folder` leaves out wherever they are: a version control's history and bytecode caches."""
TEMP_PREFIX: Final = ".tmp-"
"""How half-written files and folders start: :meth:`polignac_arena.archive_store.ArchiveStore.sweep` removes them."""
_CHUNK: Final = 1 << 20
_MEMBER_OVERHEAD: Final = 4096
"""Bytes of tar headers (and their padding) allowed per member on top of the files' bytes."""
_NAME_BYTES: Final = 255
PATH_BYTES: Final = 1024
"""The longest member name (all its parts, in UTF-8 bytes) an archive may hold: far under the system's path limit."""
BLOCK_BYTES: Final = 4096
"""What a folder, and the last part of a file, costs on disk: the unit disk use is counted in."""
MANIFEST: Final = "bot.toml"
_MANIFEST_BYTES: Final = 64 << 10
"""A ``bot.toml`` larger than this is not read by :func:`scan_archive` (load_submission refuses it later)."""
_CONTROLS: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ArchiveCaps:
    """What one submission archive may hold."""

    compressed_bytes: int = 20 << 20
    """The archive itself, as uploaded."""
    unpacked_bytes: int = 100 << 20
    """All its files' bytes together, unpacked."""
    files: int = 2_000
    """Its members: files and folders."""
    depth: int = 32
    """Parts of one member's name (``a/b/c`` has 3)."""


def _shown(name: str) -> str:
    """A member's name for a message: quoted, and cut short when it is long."""
    return repr(name) if len(name) <= 120 else f"{name[:100]!r}... ({len(name.encode('utf-8', 'replace'))} bytes)"


class ArchiveError(ValueError):
    """An archive refused; the message names the member (when one is to blame) and why."""

    def __init__(self, problem: str, member: str | None = None) -> None:
        self.problem = problem
        self.member = member
        super().__init__(problem if member is None else f"archive member {_shown(member)} {problem}")


class ArchiveTooBig(ArchiveError):
    """An archive over one of its caps (bytes or members): too big rather than malformed."""


# -- packing (the author's machine) -------------------------------------------------------------------------------


def _left_out(path: str) -> bool:
    """Whether :func:`pack_folder` leaves ``path`` out: :data:`PACK_LEFT_OUT`, and npm's command links."""
    parts = path.split("/")
    if any(part in PACK_LEFT_OUT for part in parts):
        return True
    # npm makes node_modules/.bin of links to each package's commands; a bot run with `node` needs none of them.
    return any(a == "node_modules" and b == ".bin" for a, b in itertools.pairwise(parts))


class _CappedBuffer(io.BytesIO):
    """The archive being written, refused as soon as it passes its cap."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def write(self, data: ReadableBuffer, /) -> int:
        written = super().write(data)
        if self.tell() > self.cap:
            raise ArchiveTooBig(f"the archive would have more than {self.cap} bytes, the limit of an upload")
        return written


def pack_folder(folder: Path, caps: ArchiveCaps | None = None) -> bytes:
    """The submission ``folder`` as a gzip'd tar, the same bytes for the same content; raises :class:`ArchiveError`.

    ``bot.toml`` is validated first (:func:`polignac_arena.submission.load_submission`) and the
    folder walked without following anything (:func:`polignac_arena.folders.scan_folder`): a
    link, a special file, or a folder over ``caps`` is refused, naming the path.  What
    :data:`PACK_LEFT_OUT` names and ``node_modules/.bin`` are left out.
    """
    caps = caps or ArchiveCaps()
    try:
        load_submission(folder)
        listing = scan_folder(folder)
    except SubmissionError as exc:
        raise ArchiveError(f"{folder} is not a submission to upload: {'; '.join(exc.problems)}") from None
    except FolderError as exc:
        raise ArchiveError(f"{folder} is not a submission to upload: {exc.problem}") from None
    entries = [entry for entry in listing.entries if not _left_out(entry.path)]
    _check_packable(folder, entries, caps)
    out = _CappedBuffer(caps.compressed_bytes)
    total = 0
    # Time and name in the gzip header fixed too: the same folder, the same bytes.
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for entry in entries:
            info = tarfile.TarInfo(entry.path)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if entry.kind is EntryKind.DIR:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                continue
            try:
                content = read_file(listing.root, entry.path, caps.unpacked_bytes)
            except FolderError as exc:
                raise ArchiveError(f"{folder} is not a submission to upload: {exc.problem}") from None
            total += len(content)
            if total > caps.unpacked_bytes:
                raise ArchiveTooBig(f"{folder}: its files grew past {caps.unpacked_bytes} bytes while being packed")
            info.size, info.mode = len(content), 0o755 if entry.executable else 0o644
            tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


def _check_packable(folder: Path, entries: list[FolderEntry], caps: ArchiveCaps) -> None:
    for entry in entries:
        if entry.kind is EntryKind.LINK:
            raise ArchiveError(
                f"{folder}: {entry.path!r} is a symbolic link (to {entry.target!r}): an upload holds no links,"
                " put a copy of what it points to in its place"
            )
        depth = entry.path.count("/") + 1
        if depth > caps.depth:
            raise ArchiveError(f"{folder}: {entry.path!r} is {depth} levels deep, more than the {caps.depth} allowed")
    if len(entries) > caps.files:
        raise ArchiveTooBig(f"{folder}: {len(entries)} files and folders, more than the {caps.files} an upload may hold")
    size = sum(entry.size for entry in entries)
    if size > caps.unpacked_bytes:
        raise ArchiveTooBig(f"{folder}: its files hold {size} bytes, more than the {caps.unpacked_bytes} an upload may hold")


# -- unpacking (the server) ---------------------------------------------------------------------------------------


class _BoundedGunzip(io.RawIOBase):
    """The decompressed stream of ``source``, refused as soon as it passes ``bound`` bytes (a gzip bomb)."""

    def __init__(self, source: IO[bytes], bound: int) -> None:
        super().__init__()
        self._gzip = gzip.GzipFile(fileobj=source, mode="rb")
        self._bound = bound
        self._count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = self._bound + 1 - self._count  # never everything at once: at most just past the bound
        try:
            block = self._gzip.read(min(size, _CHUNK))
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise ArchiveError(f"the upload is not a gzip'd tar: {exc}") from None
        self._count += len(block)
        if self._count > self._bound:
            raise ArchiveTooBig(f"decompresses to more than {self._bound} bytes, the limit of an upload (an archive bomb?)")
        return block


@dataclass(frozen=True, slots=True)
class ArchiveScan:
    """What an archive holds, checked member by member without unpacking it (:func:`scan_archive`)."""

    files: int
    """Regular files."""
    folders: int
    """Folders, those its paths imply included."""
    content_bytes: int
    """The files' bytes."""
    disk_bytes: int
    """What unpacking it takes on disk: each file rounded up to :data:`BLOCK_BYTES`, and a block per folder."""
    manifest: bytes | None
    """The top-level ``bot.toml`` (None when there is none, or it is over 64 KiB)."""


@contextlib.contextmanager
def _opened(data: bytes | Path, caps: ArchiveCaps) -> Iterator[IO[bytes]]:
    """The archive ``data`` (its bytes, or the file holding them) as a stream, once its size and first bytes are checked."""
    stream: IO[bytes]
    if isinstance(data, bytes | bytearray):
        size, stream = len(data), io.BytesIO(data)
    else:
        stream = open(data, "rb")  # noqa: SIM115 (closed below)
        size = os.fstat(stream.fileno()).st_size
    with stream:
        if size > caps.compressed_bytes:
            raise ArchiveTooBig(f"the archive has {size} bytes, more than the {caps.compressed_bytes} allowed")
        if stream.read(2) != b"\x1f\x8b":
            raise ArchiveError("the upload is not a gzip'd tar (it does not start as gzip data does)")
        stream.seek(0)
        yield stream


def scan_archive(data: bytes | Path, caps: ArchiveCaps | None = None) -> ArchiveScan:
    """Check the gzip'd tar ``data`` as :func:`unpack_archive` does, writing nothing; what it holds, or :class:`ArchiveError`.

    It costs the archive's decompression and nothing on disk: a refusal here is cheap.
    """
    caps = caps or ArchiveCaps()
    walker = _Unpacker(None, caps)
    with _opened(data, caps) as stream:
        walker.run(stream)
    files = walker.members_files
    folders = len(walker.folders)
    return ArchiveScan(files, folders, walker.written, walker.disk + folders * BLOCK_BYTES, walker.manifest)


def unpack_archive(data: bytes | Path, dest: Path, caps: ArchiveCaps | None = None) -> None:
    """Unpack the gzip'd tar ``data`` (its bytes, or the file holding them) into the new folder ``dest``, or refuse it.

    All or nothing: it unpacks into a fresh folder beside ``dest`` and renames that into place,
    so on a refusal (:class:`ArchiveError`, or any error) nothing is left.  Files get mode
    ``0644`` (``0755`` when the archive marks them executable), folders ``0755``.  Raises
    :class:`FileExistsError` when ``dest`` exists (another unpack of the same archive may have
    won the race).
    """
    caps = caps or ArchiveCaps()
    dest = Path(dest)
    with _opened(data, caps) as stream:
        if os.path.lexists(dest):
            raise FileExistsError(errno.EEXIST, "already unpacked", str(dest))
        temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{dest.name}-", dir=dest.parent))
        try:
            _Unpacker(temp, caps).run(stream)
            os.chmod(temp, 0o755)
            try:
                os.rename(temp, dest)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise FileExistsError(errno.EEXIST, "already unpacked", str(dest)) from None
                raise
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise


def _blocks(size: int) -> int:
    return -(-size // BLOCK_BYTES) * BLOCK_BYTES


class _Unpacker:
    """One unpack: every member checked, counted against the caps, and written under ``root`` (None: only checked)."""

    def __init__(self, root: Path | None, caps: ArchiveCaps) -> None:
        self.root = root
        self.caps = caps
        self.folders: set[str] = set()
        """Folders made so far (named by a member, or parents of one)."""
        self.named: set[str] = set()
        """Names of the members seen so far."""
        self.members = 0
        self.members_files = 0
        self.declared = 0
        self.written = 0
        self.disk = 0
        """The files' bytes on disk, each rounded up to a block."""
        self.manifest: bytes | None = None

    def run(self, source: IO[bytes]) -> None:
        stream = _BoundedGunzip(source, self.caps.unpacked_bytes + self.caps.files * _MEMBER_OVERHEAD + (1 << 20))
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for member in tar:
                    self._member(tar, member)
        except tarfile.TarError as exc:
            raise ArchiveError(f"the upload is not a valid gzip'd tar: {exc}") from None
        if not self.members:
            raise ArchiveError("the archive holds no files")

    def _entries(self) -> int:
        """Files and folders so far (the folders its paths imply included): what the ``files`` cap counts."""
        return self.members_files + len(self.folders)

    def _member(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        self.members += 1
        name = member.name.rstrip("/") if member.isdir() and member.name != "/" else member.name
        if self.members > self.caps.files:
            raise ArchiveTooBig(f"is past the {self.caps.files} files and folders an archive may hold", name)
        parts = self._check_name(name)
        self._check_kind(member, name)
        if name in self.named:
            raise ArchiveError("appears twice in the archive", name)
        self.named.add(name)
        for number in range(1, len(parts)):
            parent = "/".join(parts[:number])
            if parent in self.named and parent not in self.folders:
                raise ArchiveError(f"is inside {parent!r}, which is a file in the archive", name)
            self._folder(parent, name)
        if member.isdir():
            self._folder(name, name)
            return
        if name in self.folders:
            raise ArchiveError("is a file where the archive already has a folder of that name", name)
        self.members_files += 1
        if self._entries() > self.caps.files:
            raise ArchiveTooBig(f"is past the {self.caps.files} files and folders an archive may hold (its folders counted)", name)
        self.declared += member.size
        if self.declared > self.caps.unpacked_bytes:
            raise ArchiveTooBig(f"takes the files' bytes past {self.caps.unpacked_bytes}, the limit of a submission", name)
        source = tar.extractfile(member)
        if source is None:  # a regular member always has a reader; kept as a refusal rather than a crash
            raise ArchiveError("cannot be read", name)
        self._write(name, source, executable=bool(member.mode & 0o111))

    def _check_name(self, name: str) -> list[str]:
        if not name:
            raise ArchiveError("has an empty name", name)
        if "\x00" in name:
            raise ArchiveError("has a NUL character in its name", name)
        if "\\" in name:
            raise ArchiveError("has a backslash in its name: names use '/' only", name)
        if _CONTROLS.search(name):
            raise ArchiveError("has a control character in its name", name)
        if name.startswith("/"):
            raise ArchiveError("is an absolute path: names must be relative to the submission folder", name)
        parts = name.split("/")
        if ".." in parts:
            raise ArchiveError("leads out of the submission folder ('..')", name)
        if any(part in ("", ".") for part in parts):
            raise ArchiveError("has an empty part ('//' or '.') in its name", name)
        try:
            size = len(name.encode("utf-8"))
            too_long = any(len(part.encode("utf-8")) > _NAME_BYTES for part in parts)
        except UnicodeEncodeError:
            raise ArchiveError("has a name that is not UTF-8", name) from None
        if too_long:
            raise ArchiveError(f"has a part of its name longer than {_NAME_BYTES} bytes", name)
        if size > PATH_BYTES:
            raise ArchiveError(f"has a name of {size} bytes, more than the {PATH_BYTES} allowed", name)
        if len(parts) > self.caps.depth:
            raise ArchiveError(f"is {len(parts)} levels deep, more than the {self.caps.depth} allowed", name)
        return parts

    @staticmethod
    def _check_kind(member: tarfile.TarInfo, name: str) -> None:
        if member.issym():
            raise ArchiveError(f"is a symbolic link (to {member.linkname!r}): an archive may hold no links", name)
        if member.islnk():
            raise ArchiveError(f"is a hard link (to {member.linkname!r}): an archive may hold no links", name)
        if member.ischr() or member.isblk():
            raise ArchiveError("is a device file: an archive holds only regular files and folders", name)
        if member.isfifo():
            raise ArchiveError("is a named pipe (FIFO): an archive holds only regular files and folders", name)
        if member.issparse():
            raise ArchiveError("is a sparse file: an archive holds only regular files and folders", name)
        if not (member.isreg() or member.isdir()):
            raise ArchiveError(f"is of tar type {member.type!r}: an archive holds only regular files and folders", name)

    def _folder(self, name: str, member: str) -> None:
        if name in self.folders:
            return
        self.folders.add(name)
        if self._entries() > self.caps.files:
            raise ArchiveTooBig(f"is past the {self.caps.files} files and folders an archive may hold (its folders counted)", member)
        if self.root is None:
            return
        path = self.root / name
        try:
            os.mkdir(path, 0o700)
            os.chmod(path, 0o755)
        except OSError as exc:
            raise ArchiveError(f"cannot be unpacked: {exc.strerror or exc}", member) from None

    def _write(self, name: str, source: IO[bytes], *, executable: bool) -> None:
        if self.root is None:
            self._count(name, source)
            return
        # Every folder on the way was made by this unpack and no link is ever made: the path cannot be redirected.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.root / name, flags, 0o600)
        except OSError as exc:
            raise ArchiveError(f"cannot be unpacked: {exc.strerror or exc}", name) from None
        try:
            size = 0
            while block := source.read(_CHUNK):
                size += len(block)
                self._add_bytes(name, len(block))
                view = memoryview(block)
                while view:
                    view = view[os.write(fd, view) :]
            self.disk += _blocks(size)
            os.fchmod(fd, 0o755 if executable else 0o644)
        except OSError as exc:
            raise ArchiveError(f"cannot be unpacked: {exc.strerror or exc}", name) from None
        finally:
            os.close(fd)

    def _count(self, name: str, source: IO[bytes]) -> None:
        """Read a member only to count its bytes (and keep ``bot.toml``'s)."""
        keep = name == MANIFEST
        kept: list[bytes] = []
        size = 0
        while block := source.read(_CHUNK):
            size += len(block)
            self._add_bytes(name, len(block))
            if keep and size <= _MANIFEST_BYTES:
                kept.append(block)
        self.disk += _blocks(size)
        if keep and size <= _MANIFEST_BYTES:
            self.manifest = b"".join(kept)

    def _add_bytes(self, name: str, count: int) -> None:
        self.written += count
        if self.written > self.caps.unpacked_bytes:
            raise ArchiveTooBig(f"takes the files' bytes past {self.caps.unpacked_bytes}, the limit of a submission", name)
