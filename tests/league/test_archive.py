"""Submission archives: packing a folder, unpacking a stranger's archive (every attack refused), the content store."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from polignac_arena.archive import ArchiveCaps, ArchiveError, ArchiveTooBig, pack_folder, unpack_archive
from polignac_arena.archive_store import ArchiveStore, UnknownArchive

ROOT = Path(__file__).resolve().parents[2]
GOOD_TOML = 'name = "mybot"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'


def submission(tmp_path: Path, name: str = "bot") -> Path:
    folder = tmp_path / name
    (folder / "lib" / "deep").mkdir(parents=True)
    (folder / "bot.toml").write_text(GOOD_TOML)
    (folder / "bot.py").write_text("print('hello')\n")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "run.sh", 0o4775)  # setuid and group-writable: normalised away
    (folder / "lib" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 40)
    return folder


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **fields: object) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


def archive(*members: tuple[tarfile.TarInfo, bytes], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """A gzip'd tar made by hand, holding exactly ``members``, whatever they are."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.type == tarfile.REGTYPE else None)
    return gzip.compress(raw.getvalue())


def lying_size(name: str, declared: int, actual: bytes) -> bytes:
    """A tar whose one member declares ``declared`` bytes in its header but carries ``actual``."""
    info = tarfile.TarInfo(name)
    info.size = declared
    header = info.tobuf(tarfile.GNU_FORMAT)
    return gzip.compress(header + actual + b"\0" * (-len(actual) % 512) + b"\0" * 1024)


def refused(tmp_path: Path, data: bytes, words: str, caps: ArchiveCaps | None = None) -> ArchiveError:
    """Unpacking ``data`` fails with a message holding ``words``, and leaves nothing on disk."""
    where = tmp_path / "unpacked"
    where.mkdir(parents=True)
    with pytest.raises(ArchiveError) as caught:
        unpack_archive(data, where / "dest", caps)
    assert words in str(caught.value), str(caught.value)
    assert list(where.iterdir()) == []
    return caught.value


# -- packing -------------------------------------------------------------------------------------------------------


def test_a_folder_packs_and_unpacks_with_normalised_modes(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    data = pack_folder(folder)
    unpack_archive(data, tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "bot.toml").read_text() == GOOD_TOML
    assert (out / "lib" / "deep" / "data.bin").read_bytes() == (folder / "lib" / "deep" / "data.bin").read_bytes()
    assert os.stat(out / "run.sh").st_mode & 0o7777 == 0o755
    assert os.stat(out / "bot.py").st_mode & 0o7777 == 0o644
    assert os.stat(out / "lib").st_mode & 0o7777 == 0o755
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == ["bot.py", "bot.toml", "lib", "lib/deep", "lib/deep/data.bin", "run.sh"]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}


def test_the_same_content_packs_to_the_same_bytes(tmp_path: Path) -> None:
    first = submission(tmp_path, "one")
    second = tmp_path / "two"
    shutil.copytree(first, second)  # other inodes, other times
    os.utime(second / "bot.py", (1, 1))
    (second / "__pycache__").mkdir()
    (second / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    assert pack_folder(first) == pack_folder(first) == pack_folder(second)
    assert hashlib.sha256(pack_folder(first)).hexdigest() == ArchiveStore(tmp_path / "store").put(pack_folder(second))
    (second / "bot.py").write_text("print('changed')\n")
    assert pack_folder(first) != pack_folder(second)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda f: os.symlink("bot.py", f / "alias.py"), "'alias.py' is a symbolic link (to 'bot.py'): an upload holds no links"),
        (lambda f: os.symlink("/etc/passwd", f / "passwd"), "absolute symbolic link"),
        (lambda f: os.mkfifo(f / "pipe"), "'pipe' is a named pipe (FIFO)"),
        (lambda f: (f / "bot.toml").unlink(), "no bot.toml in this folder"),
        (lambda f: (f / "bot.toml").write_text('name = "my bot"\n'), "'name' (line 1): must be 1 to 64"),
        (lambda f: (f / "big.bin").write_bytes(b"x" * 20_000), "more than the 16000 an upload may hold"),
        (lambda f: [(f / f"file{n}").touch() for n in range(10)], "16 files and folders, more than the 12"),
        (lambda f: (f / "a" / "b" / "c" / "d").mkdir(parents=True), "'a/b/c/d' is 4 levels deep, more than the 3 allowed"),
    ],
    ids=["link", "absolute-link", "fifo", "no-bot-toml", "bad-bot-toml", "too-big", "too-many", "too-deep"],
)
def test_packing_refuses_what_an_upload_may_not_hold(tmp_path: Path, make: Callable[[Path], object], words: str) -> None:
    folder = submission(tmp_path)
    make(folder)
    with pytest.raises(ArchiveError) as caught:
        pack_folder(folder, ArchiveCaps(unpacked_bytes=16_000, files=12, depth=3))
    assert words in str(caught.value)


def test_packing_refuses_an_archive_over_its_compressed_cap(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "noise.bin").write_bytes(os.urandom(50_000))
    with pytest.raises(ArchiveTooBig, match="more than 20000 bytes, the limit of an upload"):
        pack_folder(folder, ArchiveCaps(compressed_bytes=20_000))


def test_npm_command_links_are_left_out(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "node_modules" / ".bin").mkdir(parents=True)
    (folder / "node_modules" / "pkg.js").write_text("module.exports = 1\n")
    os.symlink("../pkg.js", folder / "node_modules" / ".bin" / "pkg")
    with tarfile.open(fileobj=io.BytesIO(pack_folder(folder)), mode="r:gz") as tar:
        names = tar.getnames()
    assert "node_modules/pkg.js" in names and not any(".bin" in n.split("/") for n in names)


# -- unpacking: every attack -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([member("../evil")], "archive member '../evil' leads out of the submission folder ('..')"),
        ([member("lib/../../evil")], "'lib/../../evil' leads out of the submission folder"),
        ([member("/etc/cron.d/evil")], "'/etc/cron.d/evil' is an absolute path"),
        ([member("a\0" + "b" * 200)], "has a NUL character in its name"),
        ([member("lib\\..\\evil")], "has a backslash in its name"),
        ([member("lib//evil")], "has an empty part"),
        ([member("./bot.py")], "has an empty part"),
        ([member("log\nfake")], "has a control character in its name"),
        ([member("x" * 300)], "longer than 255 bytes"),
        ([member("link", tarfile.SYMTYPE, linkname="/etc/shadow")], "'link' is a symbolic link (to '/etc/shadow')"),
        ([member("bot.py", data=b"x"), member("hard", tarfile.LNKTYPE, linkname="bot.py")], "'hard' is a hard link (to 'bot.py')"),
        ([member("tty", tarfile.CHRTYPE, devmajor=5, devminor=0)], "'tty' is a device file"),
        ([member("disk", tarfile.BLKTYPE, devmajor=8, devminor=0)], "'disk' is a device file"),
        ([member("pipe", tarfile.FIFOTYPE)], "'pipe' is a named pipe (FIFO)"),
        ([member("odd", tarfile.CONTTYPE.replace(b"7", b"Z"))], "'odd' is of tar type b'Z'"),
        ([member("bot.py", data=b"1"), member("bot.py", data=b"2")], "'bot.py' appears twice in the archive"),
        ([member("lib", tarfile.DIRTYPE), member("lib", tarfile.DIRTYPE)], "'lib' appears twice"),
        ([member("lib", data=b"x"), member("lib/bot.py", data=b"y")], "'lib/bot.py' is inside 'lib', which is a file"),
        ([member("lib/bot.py", data=b"y"), member("lib", data=b"x")], "'lib' is a file where the archive already has a folder"),
        ([member("/".join("d" * 40))], "is 40 levels deep, more than the 32 allowed"),
    ],
    ids=[
        "dotdot",
        "dotdot-inside",
        "absolute",
        "nul",
        "backslash",
        "empty-part",
        "dot-part",
        "control",
        "long-part",
        "symlink",
        "hardlink",
        "chardev",
        "blockdev",
        "fifo",
        "unknown-type",
        "duplicate-file",
        "duplicate-dir",
        "file-as-folder",
        "folder-as-file",
        "too-deep",
    ],
)
def test_each_bad_member_is_refused_naming_it_and_nothing_is_left(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]], words: str
) -> None:
    good = [member("bot.toml", data=GOOD_TOML.encode()), member("lib0", tarfile.DIRTYPE), member("lib0/x.py", data=b"x = 1\n")]
    refused(tmp_path, archive(*good, *members), words)


def test_not_a_gzip_is_refused(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info, data = member("bot.py", data=b"x")
        tar.addfile(info, io.BytesIO(data))
    refused(tmp_path / "tar", raw.getvalue(), "the upload is not a gzip'd tar")
    refused(tmp_path / "empty", b"", "the upload is not a gzip'd tar")


def test_a_gzip_of_something_else_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, gzip.compress(b"hello, world\n" * 100), "the upload is not a valid gzip'd tar: invalid header")


def test_a_broken_gzip_is_refused(tmp_path: Path) -> None:
    data = archive(member("bot.py", data=os.urandom(5000)))
    refused(tmp_path / "cut", data[:-2000], "is not a gzip'd tar")
    refused(tmp_path / "zeroed", data[:10] + bytes(len(data) - 10), "is not a gzip'd tar")


def test_an_archive_over_its_compressed_cap_is_refused_unread(tmp_path: Path) -> None:
    data = archive(member("bot.py", data=os.urandom(3000)))
    error = refused(tmp_path, data, f"the archive has {len(data)} bytes, more than the 1000 allowed", ArchiveCaps(compressed_bytes=1000))
    assert isinstance(error, ArchiveTooBig)


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    data = archive(*(member(f"f{n}") for n in range(6)))
    error = refused(tmp_path, data, "archive member 'f5' is past the 5 files and folders", ArchiveCaps(files=5))
    assert isinstance(error, ArchiveTooBig)


def test_a_member_declaring_more_than_the_cap_is_refused_at_its_header(tmp_path: Path) -> None:
    error = refused(
        tmp_path, lying_size("huge", 10 << 30, b"tiny"), "'huge' takes the files' bytes past 1000", ArchiveCaps(unpacked_bytes=1000)
    )
    assert isinstance(error, ArchiveTooBig)


def test_files_together_over_the_cap_are_refused_at_the_one_that_passes_it(tmp_path: Path) -> None:
    data = archive(*(member(f"part{n}", data=b"x" * 400) for n in range(3)))
    refused(tmp_path, data, "'part2' takes the files' bytes past 1000", ArchiveCaps(unpacked_bytes=1000))


def zeros_after(header: bytes, megabytes: int) -> bytes:
    """``header`` then ``megabytes`` MB of zeros, gzip'd: about a thousand times smaller."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return squeeze.compress(header) + b"".join(squeeze.compress(zeros) for _ in range(megabytes)) + squeeze.flush()


def test_a_gzip_bomb_is_stopped_once_past_the_cap(tmp_path: Path) -> None:
    """A tar header that no file counts (an extended header) declaring 10 GB: the bounded stream stops reading at the cap."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, 10 << 30
    bomb = zeros_after(header.tobuf(tarfile.GNU_FORMAT), 16)
    assert len(bomb) < 20_000
    caps = ArchiveCaps(unpacked_bytes=1 << 20, files=10)
    error = refused(tmp_path, bomb, "decompresses to more than 2138112 bytes", caps)
    assert isinstance(error, ArchiveTooBig) and "archive bomb" in str(error)


def test_a_raw_gzip_bomb_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, zeros_after(b"", 16), "the archive holds no files")  # zeros end a tar at once


def test_setuid_bits_are_dropped(tmp_path: Path) -> None:
    data = archive(member("run", data=b"#!/bin/sh\n", mode=0o6777), member("lib", tarfile.DIRTYPE, mode=0o1777))
    unpack_archive(data, tmp_path / "out")
    assert os.stat(tmp_path / "out" / "run").st_mode & 0o7777 == 0o755
    assert os.stat(tmp_path / "out" / "lib").st_mode & 0o7777 == 0o755


def test_parent_folders_are_made_and_folder_names_may_end_in_a_slash(tmp_path: Path) -> None:
    data = archive(member("a/b/c.py", data=b"1"), member("a/b/", tarfile.DIRTYPE), fmt=tarfile.GNU_FORMAT)
    unpack_archive(data, tmp_path / "out")
    assert (tmp_path / "out" / "a" / "b" / "c.py").read_bytes() == b"1"


def test_an_existing_destination_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine").touch()
    with pytest.raises(FileExistsError):
        unpack_archive(archive(member("bot.py", data=b"x")), tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mine"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- the store -------------------------------------------------------------------------------------------------------


def test_the_store_keeps_archives_by_content(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "store")
    data = pack_folder(submission(tmp_path))
    sha = store.put(data)
    assert sha == store.put(data) == hashlib.sha256(data).hexdigest()
    assert store.archive_path(sha) == tmp_path / "store" / "archives" / sha[:2] / f"{sha}.tar.gz"
    assert store.get(sha) == data
    folder = store.unpacked(sha)
    assert folder == tmp_path / "store" / "versions" / sha and (folder / "bot.toml").read_text() == GOOD_TOML
    (folder / "built").touch()
    assert store.unpacked(sha) == folder and (folder / "built").exists()  # unpacked once, then reused
    store.forget_unpacked(sha)
    assert store.unpacked(sha) == folder and not (folder / "built").exists() and store.has(sha)
    store.remove(sha)
    assert not store.has(sha) and not folder.exists()
    with pytest.raises(UnknownArchive):
        store.get(sha)
    with pytest.raises(UnknownArchive, match="is not a SHA-256"):
        store.get("../../etc/passwd")


def test_add_keeps_nothing_of_a_refused_archive(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "store")
    with pytest.raises(ArchiveError, match="symbolic link"):
        store.add(archive(member("bot.py", data=b"x"), member("link", tarfile.SYMTYPE, linkname="/")))
    assert list((tmp_path / "store" / "archives").iterdir()) == [] and list((tmp_path / "store" / "versions").iterdir()) == []
    sha = store.add(pack_folder(submission(tmp_path)))
    assert store.has(sha) and (store.version_path(sha) / "bot.py").is_file()


KILLED_IN = """
import os, signal, sys
from pathlib import Path
from polignac_arena import archive_store
store = archive_store.ArchiveStore(Path(sys.argv[1]))
data = Path(sys.argv[2]).read_bytes()
if sys.argv[3] == "unpack":
    archive_store.os.rename = lambda *a: os.kill(os.getpid(), signal.SIGKILL)  # killed just before the folder is renamed
    store.add(data)
else:
    archive_store.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # killed while the archive is being written
    store.put(data)
"""


@pytest.mark.parametrize("where", ["unpack", "put"])
def test_what_a_killed_process_left_is_swept(tmp_path: Path, where: str) -> None:
    (tmp_path / "upload.tar.gz").write_bytes(pack_folder(submission(tmp_path)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "sdk"), str(ROOT / "server")])}
    store_root = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_IN, str(store_root), str(tmp_path / "upload.tar.gz"), where], env=env, timeout=60, check=False
    )
    assert done.returncode == -9
    left = [p for p in store_root.rglob("*") if p.name.startswith(".tmp-")]
    assert left, "the killed process left nothing to sweep"
    store = ArchiveStore(store_root)
    orphan = store.versions / ("ab" * 32)
    orphan.mkdir()  # unpacked, but killed before its archive was kept
    removed = store.sweep()
    assert set(left) | {orphan} <= set(removed)
    assert not orphan.exists() and all(not path.exists() for path in left)  # moved to the trash at once ...
    store.empty_trash()  # ... and removed from there (in the league's background)
    assert [p for p in store_root.rglob("*") if p.is_file()] == []
