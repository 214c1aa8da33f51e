"""Attacks of an outside red team on builds, submission folders and the sandboxes, after issue 10.

Each test is an attack that got through when it was written (or a close variant of one that
did), run the way a hostile submission would run it: through ``polignac bot check``, the
seat launchers, or the arena functions that handle what a submission sends back.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from polignac_arena.botcheck import CheckReport, check_submission
from polignac_arena.seats import BuildLimits, SeatKind
from polignac_arena.seats.builds import BuildRefused, ResultSink, install_results
from tests.aio import run_sync
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

    Links make a path whose real form is longer than PATH_MAX: ``os.path.realpath`` gives up
    resolving there, so the filter believes ``escape`` (a link through that path, then up and
    out to ``target``) stays inside, and ``escape/pwned`` is written through it.  It is the
    stream the hostile build step of bots/wrapper_hijack.py makes its wrapper send.
    """
    from tests.hostile.bots.wrapper_hijack import crafted

    stream: bytes = crafted(str(target))
    return stream


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


# -- a submission folder swapped after its check ---------------------------------------------------------------

SNOOP = "import os, sys; sys.stderr.write('SEEN ' + repr(sorted(os.listdir('.'))) + ' ' + open('secret.txt').read())"


def swapped_match(kind: str, tmp_path: Path, target: Path) -> str:
    """Check a bot's folder, swap it for a link to ``target`` (as its owner could at any time), play; the bot's stderr."""
    import shutil

    from polignac import preset
    from polignac_arena.referee import TimeControl
    from polignac_arena.runner import run_local_match
    from polignac_arena.submission import builtin_submission, load_submission

    launcher_or_skip(kind)
    folder, _ = submission(tmp_path, {}, f"command = {json.dumps(['python', '-c', SNOOP])}\n")
    checked = load_submission(folder)  # as a tournament does once, before its matches
    shutil.rmtree(folder)
    folder.symlink_to(target)
    clock = TimeControl(move_ms=1000, bank_ms=2000, startup_ms=10_000)
    bots = [checked, *(builtin_submission("random") for _ in range(3))]
    result, stderrs = run_sync(run_local_match(bots, preset("classic", limit=1), 1, clock, seat_kind=kind))
    assert result.status in ("finished", "aborted"), result.status
    return stderrs[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_swapped_for_a_link_to_another_bots_folder_is_not_mounted(kind: str, tmp_path: Path) -> None:
    other = tmp_path / "other-bot"
    other.mkdir(mode=0o755)
    (other / "secret.txt").write_text("the other bot's source\n")
    os.chmod(other / "secret.txt", 0o644)
    stderr = swapped_match(kind, tmp_path, other)
    assert "the other bot's source" not in stderr, stderr


def test_a_folder_swapped_for_a_link_to_a_root_only_folder_is_not_copied(tmp_path: Path) -> None:
    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    (private / "secret.txt").write_text("root's secret\n")
    os.chmod(private / "secret.txt", 0o600)
    stderr = swapped_match("process", tmp_path, private)
    assert "root's secret" not in stderr, stderr


# -- hard links and bot.toml edge cases --------------------------------------------------------------------------


def hard_linked_folder(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    """A private folder (mode 700, so the sandbox gets root's copy) holding a hard link to a root-only file."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$the-host-secret\n")
    os.chmod(secret, 0o600)
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o700)
    (folder / "bot.toml").write_text(
        'name = "linker"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "-m", "polignac.bots", "random"]\n' + extra
    )
    os.link(secret, folder / "notes.txt")
    return folder, secret


def test_a_hard_link_to_a_root_only_file_is_not_copied_for_the_sandbox(tmp_path: Path) -> None:
    from polignac_arena.folders import FolderError, copy_folder
    from polignac_arena.submission import SubmissionError, load_submission

    folder, _ = hard_linked_folder(tmp_path)
    with pytest.raises(SubmissionError, match="hard link"):
        load_submission(folder)
    copy = tmp_path / "copy"
    with pytest.raises(FolderError, match="hard link"):
        copy_folder(folder, copy)  # what the arena, as root, makes readable for a private folder's sandbox
    assert not copy.exists()
    # A hard link to a file everyone may read (a package manager's cache, say) is fine.
    os.chmod(tmp_path / "shadow", 0o644)
    load_submission(folder)


def test_a_hard_link_to_a_root_only_file_does_not_reach_a_docker_build_context(tmp_path: Path) -> None:
    from polignac_arena.seats.docker_build import BuildFailed, spooled_context

    folder, _ = hard_linked_folder(tmp_path, 'dockerfile = "Dockerfile"\n')
    (folder / "Dockerfile").write_text("FROM scratch\nCOPY notes.txt /notes.txt\n")
    with pytest.raises(BuildFailed, match="hard link"):
        spooled_context(folder, "FROM scratch\nCOPY notes.txt /notes.txt\n")[0].close()


def test_a_bot_toml_nested_too_deeply_is_a_clear_failure(tmp_path: Path) -> None:
    from polignac_arena.tournament.config import ConfigError, parse_config

    deep = "[" * 5_000 + "]" * 5_000
    folder, _ = submission(tmp_path, {}, f'command = ["python", "bot.py"]\nx = {deep}\n')
    report = check_submission(folder)
    failed = [detail for _, passed, detail in report.steps if not passed]
    assert failed and "nested too deeply" in failed[0], report.steps
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_config(f"x = {deep}\n")


# -- what an image build leaves behind --------------------------------------------------------------------------


def image_submission(tmp_path: Path, marker: str, dockerfile: str) -> Path:
    """A submission (bot name ``marker``) with its own Dockerfile; the tool image's ``/tool id`` is its bot."""
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    (folder / "Dockerfile").write_text(dockerfile)
    (folder / "bot.toml").write_text(
        f'name = "{marker}"\nversion = "1"\nlanguage = "c"\ncommand = ["/tool", "id"]\ndockerfile = "Dockerfile"\n'
    )
    for path in (folder / "Dockerfile", folder / "bot.toml"):
        os.chmod(path, 0o644)
    return folder


@pytest.mark.docker
@pytest.mark.parametrize("outcome", ["built", "failed"])
def test_an_image_build_leaves_no_stage_images_on_the_daemons_disk(outcome: str, tmp_path: Path) -> None:
    """Every stage but the last, and every step of a failed build, stayed as an untagged image (host disk) for good."""
    import docker.errors

    from polignac_arena.seats import SeatLimits
    from polignac_arena.seats.docker import DockerLauncher
    from polignac_arena.seats.docker_build import BuildFailed
    from polignac_arena.submission import load_submission
    from tests import docker_images as images
    from tests.hostile.test_docker_builds import needs_docker_and_gcc

    needs_docker_and_gcc()
    marker = f"redteam{uuid.uuid4().hex[:12]}"
    last = '["/tool", "id", "fail"]' if outcome == "failed" else '["/tool", "id"]'
    dockerfile = (
        f'FROM {images.tool_image()} AS scratchpad\nLABEL redteam.marker={marker}\nRUN ["/tool", "id"]\n'
        f"FROM {images.tool_image()}\nLABEL redteam.marker={marker}-last\nRUN {last}\n"
    )
    folder = image_submission(tmp_path, marker, dockerfile)
    client = images.client()
    tag = None
    try:
        if outcome == "failed":
            with pytest.raises(BuildFailed):
                DockerLauncher().image_for(load_submission(folder), SeatLimits())
        else:
            tag = DockerLauncher().image_for(load_submission(folder), SeatLimits())
        left = [
            image["Id"][7:19]
            for label in (f"redteam.marker={marker}", f"redteam.marker={marker}-last")
            for image in client.api.images(all=True, filters={"label": label})
            if tag is None or tag not in (image.get("RepoTags") or [])
        ]
        chain = set() if tag is None else {layer["Id"][7:19] for layer in client.api.history(tag) if layer["Id"] != "<missing>"}
        assert [i for i in left if i not in chain] == [], "images of the build's stages or steps were left on the daemon"
    finally:
        if tag is not None:
            client.api.remove_image(tag)
        for label in (f"redteam.marker={marker}", f"redteam.marker={marker}-last"):
            for image in client.api.images(all=True, filters={"label": label}):
                with contextlib.suppress(docker.errors.APIError):
                    client.api.remove_image(image["Id"], force=True)


# -- SIGTERM while `polignac bot check` runs a hostile submission -----------------------------------------------


def check_stopped_by_sigterm(folder: Path, started: Callable[[], bool], match: bool = False) -> tuple[int, str]:
    """Run ``polignac bot check --seat-kind docker FOLDER`` (or a match of it), SIGTERM it once ``started()``; its exit code and stderr."""
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "polignac_arena.cli", "bot", "check", "--seat-kind", "docker", str(folder)]
    if match:
        command = [sys.executable, "-m", "polignac_arena.cli", "match", "--seat-kind", "docker", "-b", str(folder), *["-b", "random"] * 3]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as check:
        try:
            deadline = time.monotonic() + 120
            while not started():
                assert check.poll() is None, f"the check ended before the attack started: {check.stderr.read() if check.stderr else ''}"
                assert time.monotonic() < deadline, "the attack never started"
                time.sleep(0.1)  # polling the daemon and /proc: neither can notify this test
            check.send_signal(signal.SIGTERM)
            _, stderr = check.communicate(timeout=60)  # the build's own wall clock is 900 s
        finally:
            if check.poll() is None:
                check.kill()
    return check.returncode, stderr


@pytest.mark.docker
def test_sigterm_during_a_docker_smoke_match_leaves_no_container_running(tmp_path: Path) -> None:
    from tests import docker_images as images

    problem = images.daemon_problem()
    if problem is not None:
        pytest.skip(f"docker seats cannot be tested here: {problem}")
    folder, marker = submission(tmp_path, {}, 'command = ["python", "-c", "import time; time.sleep(600)"]\n')
    (folder / "bot.toml").write_text((folder / "bot.toml").read_text().replace('"redteam"', f'"{marker}"'))
    client = images.client()
    mine = {"label": f"polignac.bot={marker}@1"}
    matches: set[str] = set()

    def seated() -> bool:
        found = client.api.containers(filters={**mine, "status": "running"})
        matches.update(c["Labels"]["polignac.match"] for c in found)
        return bool(found)

    try:
        code, stderr = check_stopped_by_sigterm(folder, seated)
        left = [c["Names"][0] for m in matches for c in client.api.containers(all=True, filters={"label": f"polignac.match={m}"})]
        assert left == [], f"the check's containers were left behind (a hostile bot still running): {left}"
        assert code == 128 + 15 and "stopped by SIGTERM" in stderr, (code, stderr)
    finally:
        for m in matches:
            for c in client.api.containers(all=True, filters={"label": f"polignac.match={m}"}):
                client.api.remove_container(c["Id"], force=True)


@pytest.mark.docker
@pytest.mark.parametrize("command", ["bot check", "match"])
def test_sigterm_during_an_image_build_stops_it_and_leaves_no_image(command: str, tmp_path: Path) -> None:
    import docker.errors

    from tests import docker_images as images
    from tests.hostile.test_docker_builds import needs_docker_and_gcc, processes_with

    needs_docker_and_gcc()
    marker = f"redteam{uuid.uuid4().hex[:12]}"
    tool = images.tool_image()
    folder = image_submission(
        tmp_path,
        marker,
        f'FROM {tool} AS first\nLABEL redteam.marker={marker}\nRUN ["/tool", "id"]\n'
        f'FROM {tool}\nLABEL redteam.marker={marker}\nRUN ["/tool", "sleep", "{marker}"]\n',
    )
    client = images.client()
    try:
        code, stderr = check_stopped_by_sigterm(folder, lambda: bool(processes_with(marker)), match=command == "match")
        assert processes_with(marker) == [], "the build step still runs"
        left = [i["Id"][7:19] for i in client.api.images(all=True, filters={"label": f"redteam.marker={marker}"})]
        assert left == [], f"the stopped build's images were left on the daemon: {left}"
        if command == "match":
            assert code == 1 and "aborted" in stderr, (code, stderr)
        else:
            assert code == 128 + 15 and "stopped by SIGTERM" in stderr, (code, stderr)
    finally:
        for image in client.api.images(all=True, filters={"label": f"redteam.marker={marker}"}):
            with contextlib.suppress(docker.errors.APIError):
                client.api.remove_image(image["Id"], force=True)
