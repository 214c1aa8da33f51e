"""What a build hands back is installed safely (seats/builds.py): crafted tar streams against a submission folder.

The stream comes from the build's sandbox, so it is hostile by assumption: nothing in it may
write outside the folder, follow a link of the folder, or leave a special file or a link out.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from polignac_arena.seats import BuildLimits
from polignac_arena.seats.builds import BuildRefused, ResultSink, install_results
from tests.aio import run_sync

CAPS = BuildLimits()


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = "", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size, info.mode = kind, link, len(data), mode
    return info, data


def stream(*members: tuple[tarfile.TarInfo, bytes], caps: BuildLimits = CAPS) -> ResultSink:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    sink = ResultSink(caps.result_bytes)
    sink.feed(buffer.getvalue())
    return sink


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    submission = tmp_path / "bot"
    submission.mkdir()
    (submission / "bot.toml").write_text("name = 'x'\n")
    (submission / "bot.c").write_text("int main(void) { return 0; }\n")
    (submission / "lib").mkdir()
    return submission


def install(sink: ResultSink, folder: Path, caps: BuildLimits = CAPS) -> tuple[list[str], list[str]]:
    try:
        return install_results(sink, folder, caps)
    finally:
        sink.close()


def test_new_and_changed_files_are_installed_and_bot_toml_is_not(folder: Path) -> None:
    sink = stream(
        member("bot", data=b"\x7fELF", mode=0o755),
        member("lib", tarfile.DIRTYPE),
        member("lib/new", tarfile.DIRTYPE),
        member("lib/new/data.txt", data=b"data"),
        member("bot.c", data=b"changed"),
        member("link", tarfile.SYMTYPE, link="lib/new/data.txt"),
        member("bot.toml", data=b"command = ['evil']\n"),
    )
    installed, notes = install(sink, folder)
    assert sorted(installed) == ["bot", "bot.c", "lib/new/data.txt", "link"]
    assert (folder / "bot").read_bytes() == b"\x7fELF" and os.access(folder / "bot", os.X_OK)
    assert (folder / "bot.c").read_text() == "changed" and (folder / "link").read_text() == "data"
    assert (folder / "bot.toml").read_text() == "name = 'x'\n" and any("bot.toml" in note for note in notes)


def test_an_empty_result_installs_nothing(folder: Path) -> None:
    assert install(ResultSink(CAPS.result_bytes), folder) == ([], [])


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (member("escape", tarfile.SYMTYPE, link="/etc/shadow"), "outside the folder"),
        (member("escape", tarfile.SYMTYPE, link="../../../etc/shadow"), "outside the folder"),
        (member("../escape", data=b"x"), "outside the folder"),
        (member("hard", tarfile.LNKTYPE, link="/etc/passwd"), "outside the folder"),
        (member("pipe", tarfile.FIFOTYPE), "FIFO"),
        (member("null", tarfile.CHRTYPE), "device"),
    ],
)
def test_links_out_paths_out_and_special_files_refuse_the_whole_result(
    folder: Path, entry: tuple[tarfile.TarInfo, bytes], problem: str
) -> None:
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(BuildRefused, match=problem):
        install(stream(member("good.txt", data=b"fine"), entry), folder)
    assert sorted(p.name for p in folder.iterdir()) == before, "something was installed"
    assert not (folder.parent / "escape").exists()


def test_a_path_through_a_link_of_the_submission_is_refused(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "out").symlink_to(outside)
    with pytest.raises(BuildRefused, match=r"'out'.*(a file or a link|not a folder)"):
        install(stream(member("a.txt", data=b"a"), member("out/evil", data=b"evil")), folder)
    assert list(outside.iterdir()) == [] and not (folder / "a.txt").exists()


def test_a_link_of_the_submission_is_replaced_not_followed(folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("precious")
    (folder / "bot").symlink_to(target)
    install(stream(member("bot", data=b"binary", mode=0o755)), folder)
    assert target.read_text() == "precious"
    assert not (folder / "bot").is_symlink() and (folder / "bot").read_bytes() == b"binary"


def test_a_file_over_a_folder_of_the_submission_installs_nothing(folder: Path) -> None:
    with pytest.raises(BuildRefused, match="where the submission has a folder"):
        install(stream(member("a.txt", data=b"a"), member("lib", data=b"not a folder")), folder)
    assert not (folder / "a.txt").exists() and (folder / "lib").is_dir()


def test_the_caps_on_size_and_entries_refuse_the_result(folder: Path) -> None:
    small = BuildLimits(result_bytes=100_000, result_files=3)
    with pytest.raises(BuildRefused, match="more than 3 files"):
        install(stream(*(member(f"f{n}", data=b"x") for n in range(4)), caps=small), folder, small)
    big = stream(member("big", data=b"x" * 200_000), caps=small)
    assert big.over
    with pytest.raises(BuildRefused, match="over the cap"):
        install(big, folder, small)
    assert not (folder / "big").exists() and not (folder / "f0").exists()


def test_installed_files_belong_to_the_owner_of_the_folder(folder: Path) -> None:
    os.chown(folder, 4242, 4343)
    install(stream(member("bot", data=b"x", mode=0o4755)), folder)
    info = os.stat(folder / "bot")
    assert (info.st_uid, info.st_gid) == (4242, 4343) and info.st_mode & 0o7777 == 0o755  # no setuid bit


def test_a_garbage_stream_is_refused(folder: Path) -> None:
    sink = ResultSink(CAPS.result_bytes)
    sink.feed(b"not a tar stream at all" * 100)
    with pytest.raises(BuildRefused, match="not a valid tar stream"):
        install(sink, folder)


def test_without_a_sandbox_only_a_trusted_build_runs_and_it_installs_the_same_way(folder: Path) -> None:

    from polignac_arena.seats import SeatLimits
    from polignac_arena.seats.process import ProcessLauncher
    from polignac_arena.submission import Submission

    script = "open('made.txt', 'w').write('made')"
    submission = Submission(path=folder, name="b", version="1", language="python", command=("./bot",), build=("python", "-c", script))
    refused = run_sync(ProcessLauncher().build(submission, SeatLimits(), timeout_s=60))
    assert not refused.ok and refused.reason.startswith("refused: build steps without the sandbox") and "--trusted" in refused.reason
    assert "apt-get install bubblewrap" in refused.reason
    assert not (folder / "made.txt").exists()
    built = run_sync(ProcessLauncher().build(submission, SeatLimits(), timeout_s=60, trusted=True))
    assert built.ok and built.installed == ("made.txt",), built
    assert (folder / "made.txt").read_text() == "made"
