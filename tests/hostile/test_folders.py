"""Hostile submission folders: links out of the folder, special files, swaps, and folders too big.

The arena runs as root: it must never follow a link that leaves a submission, never open
anything but a regular file of it (a FIFO or a ``/proc`` file can block forever), and every
command refuses such a folder up front with a one-line error, never a hang or a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from polignac_arena import folders
from polignac_arena.folders import EntryKind, FolderError, copy_folder, folder_digest, read_file, scan_folder
from polignac_arena.seats import SeatError
from polignac_arena.seats.docker import folder_hash
from polignac_arena.submission import SubmissionError, content_digest, load_submission

MANIFEST = 'name = "folderbot"\nversion = "1.0"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n'
BOT = "from polignac.bots.random_bot import RandomBot\nfrom polignac.bot import run\n\nrun(RandomBot())\n"
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}
AS_ROOT = os.geteuid() == 0
COMMAND_TIMEOUT_S = 90.0
"""A refused folder takes a second or two; this bound only catches a hang."""


def submission(tmp_path: Path, name: str = "sub", manifest: str = MANIFEST) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(BOT)
    return folder


# -- tricks: each makes a folder the arena must refuse ---------------------------------------------------------


def _link(target: str, name: str = "notes.txt") -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        os.symlink(target, folder / name)
        return name

    return make


def _nested_escape(folder: Path) -> str:
    """Every link alone looks inside; together they lead out (a/up is the folder itself, so a/up/.. is its parent)."""
    (folder / "a").mkdir()
    os.symlink("a", folder / "alias")
    os.symlink("../alias/..", folder / "a" / "up")
    os.symlink("a/up/../sub/bot.toml", folder / "sneaky")
    return "sneaky"


def _fifo(folder: Path) -> str:
    os.mkfifo(folder / "pipe")
    return "pipe"


def _socket(folder: Path) -> str:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "sock"))
    return "sock"


def _device(folder: Path) -> str:
    os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return "null"


TRICKS: dict[str, Callable[[Path], str]] = {
    "kmsg": _link("/proc/kmsg"),
    "pagemap": _link("/proc/self/pagemap"),
    "shadow-relative": _link("../" * 40 + "etc/shadow"),
    "outside": _link("../elsewhere.txt"),
    "dangling": _link("missing/file"),
    "loop": _link("notes.txt"),
    "nested-escape": _nested_escape,
    "fifo": _fifo,
    "socket": _socket,
    "device": _device,
}


@pytest.fixture(params=sorted(TRICKS))
def trick(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    if request.param == "device" and not AS_ROOT:
        pytest.skip("making a device node needs root")
    (tmp_path / "elsewhere.txt").write_text("outside the submission")
    folder = submission(tmp_path)
    name = TRICKS[request.param](folder)
    yield folder, name
    _unblock(folder)


def _unblock(folder: Path) -> None:
    """Open every FIFO of the folder for writing, so a reader stuck on one (a bug) ends."""
    for path in folder.rglob("*"):
        if path.is_fifo():
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def within(seconds: float, call: Callable[[], object]) -> object:
    """``call()`` in a thread; fails (instead of hanging the suite) when it has not returned in time."""
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test below
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call} blocked for {seconds} s"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def test_every_walk_refuses_the_trick_naming_the_path(trick: tuple[Path, str], tmp_path: Path) -> None:
    folder, name = trick
    for call in (
        lambda: scan_folder(folder),
        lambda: folder_digest(folder),
        lambda: copy_folder(folder, tmp_path / "copy"),
    ):
        with pytest.raises(FolderError) as caught:
            within(30, call)
        assert repr(name) in caught.value.problem
    assert not (tmp_path / "copy").exists(), "a refused copy leaves nothing behind"
    with pytest.raises(SubmissionError, match=name):
        within(30, lambda: load_submission(folder))
    with pytest.raises(SubmissionError, match=name):
        within(30, lambda: content_digest(folder))
    with pytest.raises(SeatError, match=name):
        within(30, lambda: folder_hash(folder, "Dockerfile"))


def test_links_inside_the_folder_stay_links(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "lib").mkdir()
    (folder / "lib" / "util.py").write_text("x = 1\n")
    os.symlink("lib/util.py", folder / "util.py")
    os.symlink("lib", folder / "lib2")
    os.symlink("../bot.py", folder / "lib" / "main.py")
    os.symlink("../lib2/../bot.toml", folder / "lib" / "manifest")  # through an in-folder link, still inside
    os.symlink(".", folder / "self")
    listing = scan_folder(folder)
    links = {e.path: e.target for e in listing.entries if e.kind is EntryKind.LINK}
    assert links == {
        "util.py": "lib/util.py", "lib2": "lib", "lib/main.py": "../bot.py", "lib/manifest": "../lib2/../bot.toml", "self": ".",
    }  # fmt: skip
    copy = tmp_path / "copy"
    copy_folder(folder, copy)
    assert os.readlink(copy / "lib" / "main.py") == "../bot.py" and (copy / "util.py").read_text() == "x = 1\n"
    assert folder_digest(copy) == folder_digest(folder)


def test_the_digest_covers_content_modes_and_link_targets_but_not_caches(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    os.symlink("bot.py", folder / "main.py")
    before = folder_digest(folder)
    assert content_digest(folder) == before and folder_hash(folder) == before, "one digest for the store and the images"
    assert folder_hash(folder, "Dockerfile") != before, "the extra text is hashed"
    for skipped in ("__pycache__", "node_modules", ".git", ".venv", "build", "dist"):
        (folder / skipped).mkdir()
        (folder / skipped / "x").write_text("made by a tool")
    (folder / ".env").write_text("KEY=1")
    assert folder_digest(folder) == before
    (folder / "bot.py").chmod(0o755)
    executable = folder_digest(folder)
    assert executable != before
    os.remove(folder / "main.py")
    os.symlink("bot.toml", folder / "main.py")
    assert folder_digest(folder) not in (before, executable)


def test_skipped_folders_are_still_checked(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "node_modules").mkdir()
    os.symlink("/etc/shadow", folder / "node_modules" / "leak")
    with pytest.raises(FolderError, match="node_modules/leak"):
        folder_digest(folder)


@pytest.mark.parametrize(
    ("cap", "value", "make", "words"),
    [
        ("MAX_ENTRIES", 5, lambda f: [(f / f"x{i}").write_text("") for i in range(5)], "more than 5 files, folders and links"),
        ("MAX_BYTES", 2 << 20, lambda f: (f / "big").write_bytes(b"\0" * (3 << 20)), "more than 2 MiB"),
        ("MAX_DEPTH", 3, lambda f: (f / "a" / "b" / "c" / "d" / "e").mkdir(parents=True), "more than 3 folders deep"),
    ],
)
def test_the_caps_are_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str, value: int, make: Callable[[Path], object], words: str
) -> None:
    folder = submission(tmp_path)
    make(folder)
    monkeypatch.setattr(folders, cap, value)
    for call in (scan_folder, folder_digest):
        with pytest.raises(FolderError, match=words):
            call(folder)
    with pytest.raises(SubmissionError, match=words):
        load_submission(folder)


def test_a_file_swapped_for_a_link_mid_walk_is_never_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attacker replaces a checked file by a link to a secret between the check and the open."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's secret")
    folder = submission(tmp_path)
    (folder / "data.txt").write_text("harmless")
    real_lstat = folders._lstat

    def swapping(root: Path, where: str, name: str, dir_fd: int) -> os.stat_result:
        info = real_lstat(root, where, name, dir_fd)
        if name == "data.txt":
            os.remove(folder / "data.txt")
            os.symlink(secret, folder / "data.txt")
        return info

    monkeypatch.setattr(folders, "_lstat", swapping)
    with pytest.raises(FolderError, match=r"data\.txt"):
        folder_digest(folder)
    os.remove(folder / "data.txt")
    (folder / "data.txt").write_text("harmless")
    with pytest.raises(FolderError, match=r"data\.txt"):
        copy_folder(folder, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()
    os.remove(folder / "data.txt")
    (folder / "data.txt").write_text("harmless")
    with pytest.raises(FolderError, match=r"data\.txt"):
        read_file(folder, "data.txt")


def test_a_copy_is_readable_by_all_keeps_modes_and_times_and_can_change_owner(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o700)
    (folder / "private").mkdir(mode=0o700)
    (folder / "private" / "key").write_text("k")
    (folder / "private" / "key").chmod(0o600)
    os.utime(folder / "bot.py", ns=(1_000_000_000, 2_000_000_000))
    os.symlink("private/key", folder / "key")
    owner = (65534, 65534) if AS_ROOT else None
    copy = tmp_path / "copy"
    listing = copy_folder(folder, copy, owner=owner)
    assert listing.files == 4 and listing.total_bytes == sum(e.size for e in listing.entries)
    assert stat.S_IMODE(os.stat(copy / "run.sh").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(copy / "private").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(copy / "private" / "key").st_mode) == 0o644
    assert os.stat(copy / "bot.py").st_mtime_ns == 2_000_000_000
    if owner is not None:
        for path in (copy, copy / "run.sh", copy / "private", copy / "private" / "key"):
            assert (os.stat(path).st_uid, os.stat(path).st_gid) == owner
        assert os.lstat(copy / "key").st_uid == owner[0]
    with pytest.raises(FolderError, match="cannot make the copy"):
        copy_folder(folder, copy)


def test_read_file_reads_only_regular_files_of_the_folder(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "docker").mkdir()
    (folder / "docker" / "Dockerfile").write_text("FROM scratch\n")
    assert read_file(folder, "docker/Dockerfile") == b"FROM scratch\n"
    os.symlink("docker", folder / "d")
    os.symlink("/etc/shadow", folder / "Dockerfile")
    os.mkfifo(folder / "fifo")
    for relative, words in [
        ("Dockerfile", "symbolic link"),
        ("d/Dockerfile", "symbolic link"),
        ("fifo", "FIFO"),
        ("../sub/bot.toml", "not a path inside"),
        ("/etc/passwd", "not a path inside"),
        ("docker", "is a folder"),
        ("missing", "does not exist"),
    ]:
        with pytest.raises(FolderError, match=words):
            within(30, functools.partial(read_file, folder, relative))
    with pytest.raises(FolderError, match="more than the 4 allowed"):
        read_file(folder, "bot.py", max_bytes=4)
    _unblock(folder)


@pytest.mark.parametrize("linked", ["bot.toml", "Dockerfile"])
def test_a_manifest_or_dockerfile_linked_outside_is_not_read(tmp_path: Path, linked: str) -> None:
    """Even to a file that would be valid: the arena reads them only as regular files of the folder."""
    outside = tmp_path / "outside"
    outside.write_text(MANIFEST + 'dockerfile = "Dockerfile"\n' if linked == "bot.toml" else "FROM scratch\n")
    folder = submission(tmp_path, manifest=MANIFEST + 'dockerfile = "Dockerfile"\n')
    (folder / "Dockerfile").write_text("FROM scratch\n")
    os.remove(folder / linked)
    os.symlink(outside, folder / linked)
    with pytest.raises(SubmissionError, match=linked):
        load_submission(folder)
    os.remove(folder / linked)
    os.symlink("../outside", folder / linked)
    with pytest.raises(SubmissionError, match=linked):
        load_submission(folder)


# -- every command refuses such a folder up front: one line, no traceback, no hang ---------------------------------


def run_polignac(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``polignac ARGS`` in a subprocess; a hang fails the test (SIGTERM first, to see if it is obeyed, then SIGKILL)."""
    command = [sys.executable, "-m", "polignac_arena.cli", *args]
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **ENV})
    try:
        out, err = process.communicate(timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        try:
            out, err = process.communicate(timeout=10)
            obeyed = f"it ended on SIGTERM with {process.returncode}"
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            obeyed = "SIGTERM was ignored: killed"
        pytest.fail(f"polignac {' '.join(args)} hung for {COMMAND_TIMEOUT_S:.0f} s ({obeyed}): {err[-1000:]}")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def tournament_with(folder: Path, kind: str) -> Path:
    path = folder.parent / "t.toml"
    path.write_text(
        f'name = "t"\nentrants = ["{folder.name}", "random", "cautious"]\ntable_size = 3\nrounds = 1\nseed = 1\n'
        f'[rules]\nlimit = 2\n[seats]\nkind = "{kind}"\ntrusted = true\n'
    )
    return path


COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "bot add": lambda f: ["bot", "add", str(f), "--db", str(f.parent / "x.db")],
    "tournament run": lambda f: ["tournament", "run", str(tournament_with(f, "process")), "--db", str(f.parent / "x.db"), "-q"],
    "match process": lambda f: ["match", "--bot", str(f), "--bot", "random", "--bot", "cautious", "--trusted"],
    "match docker": lambda f: ["match", "--bot", str(f), "--bot", "random", "--bot", "cautious", "--seat-kind", "docker"],
    "match inprocess": lambda f: ["match", "--bot", str(f), "--bot", "random", "--bot", "cautious", "--seat-kind", "inprocess"],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", ["kmsg", "pagemap", "fifo"])
def test_commands_refuse_the_folder_in_one_line(tmp_path: Path, command: str, name: str) -> None:
    folder = submission(tmp_path, manifest=MANIFEST + 'dockerfile = "Dockerfile"\n')
    (folder / "Dockerfile").write_text("FROM scratch\n")
    TRICKS[name](folder)
    try:
        done = run_polignac(*COMMANDS[command](folder), cwd=tmp_path)
    finally:
        _unblock(folder)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-1000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("polignac: error: "), done.stderr
    expected = "'pipe'" if name == "fifo" else "'notes.txt'"
    assert expected in lines[0], lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kmsg", "fifo"])
def test_bot_check_fails_the_folder_step(tmp_path: Path, name: str) -> None:
    folder = submission(tmp_path)
    TRICKS[name](folder)
    try:
        done = run_polignac("bot", "check", str(folder), "--trusted", cwd=tmp_path)
    finally:
        _unblock(folder)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1 and "FAILED  bot.toml" in done.stdout, done.stdout
    assert ("'pipe'" if name == "fifo" else "'notes.txt'") in done.stdout
