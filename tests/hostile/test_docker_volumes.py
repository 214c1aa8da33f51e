"""An image's ``VOLUME`` must not give a docker seat writable, executable host disk.

The bot is the static tool of ``bots/build_tool.c`` in an image that declares volumes: it
fills the volume as far as it can, copies itself there and tries to run the copy.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.seats import SeatContext, SeatError, SeatLimits
from polignac_arena.seats.docker import DockerLauncher, DockerSeat, _volume_paths
from polignac_arena.submission import load_submission
from tests import docker_images as images
from tests.referee.helpers import run


def needs_docker_and_gcc() -> None:
    problem = images.daemon_problem() or images.gcc_problem()
    if problem is not None:
        pytest.skip(f"docker seats cannot be tested here: {problem}")


def volume_names() -> set[str]:
    return {volume["Name"] for volume in images.client().api.volumes().get("Volumes") or []}


def image_bot(folder: Path, image: str, command: list[str]) -> Path:
    folder.mkdir(parents=True)
    words = ", ".join(f'"{word}"' for word in command)
    (folder / "bot.toml").write_text(f'name = "volume-filler"\nversion = "1"\nlanguage = "c"\ncommand = [{words}]\nimage = "{image}"\n')
    return folder


def context_for(tmp_path: Path, folder: Path, match_id: str, limits: SeatLimits) -> SeatContext:
    sockets = tmp_path / "referee"
    sockets.mkdir()
    sockets.chmod(0o755)
    (tmp_path / "seat").mkdir()
    return SeatContext(
        seat=0,
        token="t",
        submission=load_submission(folder),
        limits=limits,
        referee_socket=sockets / "referee.sock",
        workdir=tmp_path / "seat",
        match_id=match_id,
    )


@pytest.mark.docker
def test_an_image_volume_is_a_capped_noexec_tmpfs_and_no_docker_volume(tmp_path: Path) -> None:
    needs_docker_and_gcc()
    # /data is writable by everyone, as an image author who wants the bot to write there would make it.
    files = {"tool": (images.tool_binary().read_bytes(), 0o755), "data/": (b"", 0o1777)}
    image = images.imported_image("volumes", files, ["VOLUME /data /var/cache/bot"])
    folder = image_bot(tmp_path / "bot", image, ["/tool", "fill", "/data", "64"])
    limits = SeatLimits(tmpfs_mb=8)
    before = volume_names()

    async def scenario() -> tuple[int | None, str, list[dict[str, Any]]]:
        seat = await DockerLauncher().start(context_for(tmp_path, folder, "dockervolumes", limits))
        try:
            assert isinstance(seat, DockerSeat)
            mounts = images.client().api.inspect_container(seat.container_id)["Mounts"]
            code = await asyncio.wait_for(seat.wait(), 60)
        finally:
            await seat.stop()
        return code, seat.stderr_text(), mounts

    code, stderr, mounts = run(scenario())
    assert code == 0, stderr
    kinds = {mount["Destination"]: mount["Type"] for mount in mounts}
    assert kinds["/data"] == "tmpfs" and kinds["/var/cache/bot"] == "tmpfs" and "volume" not in kinds.values(), mounts
    written = int(next(line for line in stderr.splitlines() if line.startswith("fill: wrote")).split()[2])
    assert written <= limits.tmpfs_mb, stderr
    assert "exec: Permission denied" in stderr and "exec: ran" not in stderr, stderr
    assert volume_names() == before


def test_volumes_on_the_arenas_own_paths_are_refused() -> None:
    assert _volume_paths(("/data/", "/tmp"), ["/run/polignac"], "bot@1") == ["/data"]
    for volume in ("/", "/run", "/run/polignac", "/run/polignac/x", "/proc/x", "/dev", "relative"):
        with pytest.raises(SeatError, match=f"the image of bot@1 declares the volume '{volume}'"):
            _volume_paths((volume,), ["/run/polignac"], "bot@1")
    with pytest.raises(SeatError, match="declares 9 volumes"):
        _volume_paths(tuple(f"/v{index}" for index in range(9)), [], "bot@1")
