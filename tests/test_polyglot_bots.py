"""The sample bots in other languages: the C stdio bot, the JavaScript gRPC bot, the Python stdio bot.

Each is built once per session (tests/conftest.py's ``c_bot`` and ``js_bot``) in a copy of
its folder by its own bot.toml ``build`` step (gcc; for JavaScript, ``npm ls`` after the
author's ``npm ci``), run as ``polignac bot check`` runs it: in the seat's sandbox, its
results installed in the folder.  Then it plays whole matches through a real referee in
process seats.
Needs gcc (with a static libc) and Node with npm; a missing tool skips with the reason.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tomllib

import pytest

from polignac import Ruleset, preset
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.submission import Submission, load_submission
from tests.aio import run_sync
from tests.sample_builds import SAMPLES

ROOT = SAMPLES.parent
CLOCK = TimeControl(move_ms=2000, bank_ms=5000, startup_ms=10_000)


def play(bots: list[Submission | str], rules: Ruleset | None = None, seed: int = 3) -> MatchResult:
    subs = [b if isinstance(b, Submission) else resolve_bot(b) for b in bots]

    async def capped() -> MatchResult:
        async with asyncio.timeout(60):
            result, _ = await run_local_match(subs, rules or preset("classic"), seed, CLOCK, seat_kind="process", trusted=True)
            return result

    result = run_sync(capped())
    assert result.status == "finished" and result.places is not None, result
    assert all(counts == {} for counts in result.faults), result.faults
    assert replay_lines(result.record).divergence is None
    return result


def test_c_bot_builds_static_and_plays_a_match(c_bot: Submission) -> None:
    binary = c_bot.path / "bot"
    assert binary.is_file() and os.access(binary, os.X_OK)
    with binary.open("rb") as f:
        assert f.read(4) == b"\x7fELF"
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False) if shutil.which("ldd") else None
    assert ldd is None or "not a dynamic executable" in ldd.stdout + ldd.stderr  # runs FROM scratch
    result = play([c_bot, "heuristic", "cautious", "random"])
    assert result.names[0] == "c-stdio"


def test_js_bot_plays_a_match(js_bot: Submission) -> None:
    result = play(["heuristic", js_bot, "cautious", "random"])
    assert result.names[1] == "javascript"


def test_mixed_four_player_match_python_grpc_javascript_grpc_c_stdio_python_stdio(c_bot: Submission, js_bot: Submission) -> None:
    bots: list[Submission | str] = [str(SAMPLES / "heuristic"), js_bot, c_bot, str(SAMPLES / "python_stdio")]
    result = play(bots, seed=11)
    assert result.names == ("heuristic", "javascript", "c-stdio", "python-stdio")


def test_six_players_and_another_trick_order(c_bot: Submission, js_bot: Submission) -> None:
    # Longer lines (six seats) and a trick order the welcome must teach the bots (ace high).
    bots: list[Submission | str] = [c_bot, js_bot, str(SAMPLES / "python_stdio"), "heuristic", "cautious", "random"]
    play(bots, rules=preset("ace-high", players=6), seed=4)


def test_sample_bot_names_are_unique_and_valid() -> None:
    names = [load_submission(folder).name for folder in sorted(SAMPLES.iterdir()) if (folder / "bot.toml").is_file()]
    assert {"c-stdio", "javascript", "python-stdio"} <= set(names)
    assert len(names) == len(set(names)), names


def test_no_copy_of_the_protocol_can_be_committed() -> None:
    """proto/ is the protocol's one source: the JavaScript sample and the starter kits get theirs copied at build time."""
    tracked = subprocess.run(["git", "ls-files", "*.proto"], cwd=ROOT, capture_output=True, text=True, check=False)
    if tracked.returncode != 0:
        pytest.skip(f"not a git checkout: {tracked.stderr.strip()[:200]}")
    assert tracked.stdout.split() == ["proto/polignac/v1/referee.proto"], "a copy of the protocol is committed: remove it"
    templates = ROOT / "server" / "polignac_arena" / "templates"
    assert not list(templates.rglob("*.proto")), "the starter kits get the protocol from proto/ (polignac bot new copies it)"
    # A copy made by `polignac bot proto .` in the sample's folder is ignored, so it cannot be committed by mistake.
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "sample_bots/javascript/proto/polignac/v1/referee.proto"], cwd=ROOT, capture_output=True
    )
    assert ignored.returncode == 0, "sample_bots/javascript/.gitignore must ignore /proto/"


def test_javascript_folder_is_self_contained_and_locked() -> None:
    folder = SAMPLES / "javascript"
    package = (folder / "package.json").read_text(encoding="utf-8")
    lock = (folder / "package-lock.json").read_text(encoding="utf-8")
    assert '"@grpc/grpc-js"' in package and '"@grpc/proto-loader"' in package
    assert '"node_modules/@grpc/grpc-js"' in lock
    assert "node_modules/" in (folder / ".gitignore").read_text(encoding="utf-8")
    assert tomllib.loads((folder / "bot.toml").read_text(encoding="utf-8"))["build"][:2] == ["npm", "ls"]  # offline


def test_c_folder_builds_from_its_own_files() -> None:
    folder = SAMPLES / "c_stdio"
    submission = load_submission(folder)
    assert submission.transport == "stdio" and submission.dockerfile == "Dockerfile"
    assert "-static" in submission.build and "-static" in (folder / "Makefile").read_text(encoding="utf-8")
    dockerfile = (folder / "Dockerfile").read_text(encoding="utf-8")
    assert "FROM scratch" in dockerfile and "COPY bot /bot" in dockerfile
    assert "/bot" in (folder / ".gitignore").read_text(encoding="utf-8")


@pytest.mark.docker
def test_mixed_four_player_match_in_docker_seats(c_bot: Submission, js_bot: Submission) -> None:
    from tests.docker_images import daemon_problem

    problem = daemon_problem()
    if problem:
        pytest.skip(problem)
    subs = [resolve_bot(str(SAMPLES / "heuristic")), js_bot, c_bot, resolve_bot(str(SAMPLES / "python_stdio"))]

    async def capped() -> MatchResult:
        async with asyncio.timeout(120):
            result, _ = await run_local_match(subs, preset("classic"), 11, CLOCK, seat_kind="docker")
            return result

    result = run_sync(capped())
    assert result.status == "finished" and result.places is not None, result
    assert all(counts == {} for counts in result.faults), result.faults
    assert result.names == ("heuristic", "javascript", "c-stdio", "python-stdio")
    assert replay_lines(result.record).divergence is None
