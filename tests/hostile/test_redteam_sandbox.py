"""Attacks of an outside red team on builds, submission folders and the sandboxes, after issue 10.

Each test is an attack that got through when it was written (or a close variant of one that
did), run the way a hostile submission would run it: through ``polignac bot check``, the
seat launchers, or the arena functions that handle what a submission sends back.
"""

from __future__ import annotations

import io
import os
import platform
import tarfile
import uuid
from pathlib import Path

import pytest

from polignac_arena.botcheck import CheckReport, check_submission
from polignac_arena.seats import BuildLimits, SeatKind
from polignac_arena.seats.builds import BuildRefused, ResultSink, install_results
from tests.hostile.test_hostile import launcher_or_skip, leftover

BOTS = Path(__file__).parent / "bots"
KINDS = [
    pytest.param("process", id="bubblewrap"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


def submission(tmp_path: Path, files: dict[str, str], toml: str) -> tuple[Path, str]:
    """A submission folder readable by all (as sandboxes need), with a marker in its name; (folder, marker)."""
    marker = f"redteam{uuid.uuid4().hex[:12]}"
    folder = tmp_path / marker
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "bot.toml").write_text(f'name = "redteam"\nversion = "1"\nlanguage = "python"\n{toml}')
    for path in [tmp_path, *folder.rglob("*"), folder]:
        os.chmod(path, 0o755)
    return folder, marker


def build_detail(report: CheckReport) -> tuple[bool, str]:
    found = [(passed, detail) for step, passed, detail in report.steps if step == "build"]
    assert found, f"no build step in the report: {report.steps}"
    return found[0]


# -- what a build sends back ------------------------------------------------------------------------------------


def realpath_overflow_stream(target: Path) -> bytes:
    """A tar stream that ``tarfile``'s ``data`` filter passes (before CVE-2025-4517) but writes ``target/pwned``.

    Links ``a`` .. ``p`` make a path whose real form is longer than PATH_MAX: ``os.path.realpath``
    gives up resolving there, so the filter believes ``escape`` (a link through that path, then
    up and out to ``target``) stays inside, and ``escape/pwned`` is written through it.
    """
    comp, steps = "d" * 247, "abcdefghijklmnop"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def add(name: str, kind: bytes, link: str = "", data: bytes = b"") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode, info.size = kind, link, 0o755, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)

        path = ""
        for step in steps:
            add(os.path.join(path, comp), tarfile.DIRTYPE)
            add(os.path.join(path, step), tarfile.SYMTYPE, comp)
            path = os.path.join(path, step)
        deep = os.path.join(path, "l" * 254)
        add(deep, tarfile.SYMTYPE, "../" * len(steps))
        add("escape", tarfile.SYMTYPE, deep + "/.." * 7 + str(target))
        add("escape/pwned", tarfile.REGTYPE, data=b"written by a build step, as root\n")
    return buffer.getvalue()


def test_a_crafted_result_stream_writes_nothing_outside_the_staging_folder(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text("name = 'x'\n")
    sink = ResultSink(BuildLimits().result_bytes)
    sink.feed(realpath_overflow_stream(victim))
    try:
        with pytest.raises(BuildRefused):
            install_results(sink, folder, BuildLimits())
    finally:
        sink.close()
    assert list(victim.iterdir()) == [], "the build's stream wrote outside the arena's staging folder"
    assert sorted(p.name for p in folder.iterdir()) == ["bot.toml"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_build_step_cannot_write_its_wrappers_memory(kind: str, tmp_path: Path) -> None:
    launcher_or_skip(kind)
    folder, marker = submission(
        tmp_path,
        {"wrapper_hijack.py": (BOTS / "wrapper_hijack.py").read_text()},
        'command = ["python", "-m", "polignac.bots", "random"]\n',
    )
    with (folder / "bot.toml").open("a") as manifest:
        manifest.write(f'build = ["python", "wrapper_hijack.py", "probe", "/tmp", "{marker}"]\n')
    report = check_submission(folder, seat_kind=SeatKind(kind))
    _, detail = build_detail(report)
    assert "PROBE mem: refused" in detail, detail
    assert leftover(marker) == []


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the hijack's code is x86-64 machine code")
@pytest.mark.parametrize("kind", KINDS)
def test_a_build_that_takes_over_its_wrapper_writes_nothing_on_the_host(kind: str, tmp_path: Path) -> None:
    launcher_or_skip(kind)
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o755)
    folder, marker = submission(
        tmp_path,
        {"wrapper_hijack.py": (BOTS / "wrapper_hijack.py").read_text()},
        'command = ["python", "-m", "polignac.bots", "random"]\n',
    )
    with (folder / "bot.toml").open("a") as manifest:
        manifest.write(f'build = ["python", "wrapper_hijack.py", "hijack", "{victim}", "{marker}"]\n')
    report = check_submission(folder, seat_kind=SeatKind(kind))
    passed, detail = build_detail(report)
    assert list(victim.iterdir()) == [], f"the build wrote on the host as root: {detail}"
    assert not passed, detail
    assert leftover(marker) == []
