"""The eight starter kits: each made by ``polignac bot new``, built in its sandbox, checked, and played.

Each kit is made and checked once per session (tests/kits.py): ``polignac bot new``, then
``polignac bot check DIR --conformance --json``, which builds it offline in the sandbox, plays
the smoke match and every situation of the conformance report.  Then it plays a match against
three built-in bots in process seats; packed as an upload, it builds and plays again (as a
league or a tournament's machine receives it); and the statically linked kits play one
together in docker seats, each in the image its own Dockerfile makes.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tomllib
from pathlib import Path
from typing import cast

import pytest

from polignac import PRESETS, preset
from polignac_arena.archive import pack_folder
from polignac_arena.executors.node import CACHE_ENV, SHIPPING_CAPS, ShippedBot, prepare_bot
from polignac_arena.referee import MatchResult, TimeControl
from polignac_arena.replay import replay_lines
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.seats import SeatKind, SeatLimits
from polignac_arena.submission import Submission
from polignac_arena.templates import KIT_SOURCES, TEMPLATE_LANGUAGES, WITH_PROTO
from tests.aio import run_sync
from tests.kits import Kit, checked_kit

CLOCK = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
EVERY_GAME = list(PRESETS)
SITUATIONS = ["the auction", "a void in the suit led", "the last trick", "a tie-break hand", "a reattach", "a later protocol version",
              "a time-pressed request"]  # fmt: skip
README_SECTIONS = ["## Build", "## Run locally", "## Test", "## Submit to a league, or connect to one", "## Docker seats",
                   "## Make it yours"]  # fmt: skip


@pytest.fixture(scope="session", params=TEMPLATE_LANGUAGES)
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return checked_kit(request.param, tmp_path_factory)


def play(bots: list[Submission], seat_kind: str, timeout: float = 120) -> MatchResult:
    async def capped() -> MatchResult:
        async with asyncio.timeout(timeout):
            result, stderrs = await run_local_match(bots, preset("classic", players=len(bots), limit=10), 5, CLOCK, seat_kind=seat_kind)
            assert result.status == "finished", (result, stderrs)
            return result

    return run_sync(capped())


_matches: dict[str, MatchResult] = {}


def against_built_ins(kit: Kit) -> MatchResult:
    """The kit's match against three built-in bots in process seats (once per session: the same deal for every kit)."""
    if kit.lang not in _matches:
        _matches[kit.lang] = play([kit.submission, resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")], "process")
    return _matches[kit.lang]


def test_the_kit_is_a_complete_submission_folder(kit: Kit) -> None:
    folder, lang = kit.folder, kit.lang
    assert f"Made {lang} bot '{lang}-kit'" in kit.new_output and f"polignac bot check {folder} --conformance" in kit.new_output
    assert kit.submission.name == f"{lang}-kit" and kit.submission.games == tuple(EVERY_GAME)
    assert (folder / ".gitignore").is_file() and (folder / "Dockerfile").is_file()
    readme = (folder / "README.md").read_text()
    assert all(section in readme for section in README_SECTIONS), readme
    assert "**Protocol: " in readme and ("Why not gRPC" in readme) == (kit.submission.transport == "stdio")
    text = "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and "node_modules" not in p.parts)
    assert "{{name}}" not in text
    assert (folder / "proto" / "polignac" / "v1" / "referee.proto").is_file() == (lang in WITH_PROTO)
    lines = sum(len((folder / source).read_text().splitlines()) for source in KIT_SOURCES[lang])
    assert lines < 250, f"the {lang} kit's own code is {lines} lines"
    manifest = tomllib.loads((folder / "bot.toml").read_text())
    assert manifest["language"] == lang and ("build" in manifest) == (lang != "python")


def test_bot_check_builds_the_kit_and_every_conformance_situation_holds(kit: Kit) -> None:
    report = kit.check
    failed = [step for step in report["steps"] if not step["ok"]]
    assert report["ok"] and not failed, (failed, report.get("conformance"), kit.check_stderr[-3000:])
    steps = [step["step"] for step in report["steps"]]
    assert steps == ["bot.toml", "build", "smoke match", "replay"] if kit.lang != "python" else ["bot.toml", "smoke match", "replay"]
    conformance = report["conformance"]
    assert conformance["bot"] == f"{kit.lang}-kit@0.1" and conformance["seat_kind"] == "process"
    lines = {line["situation"]: line for line in conformance["lines"]}
    not_held = [line for line in conformance["lines"] if line["held"] is not True]
    assert not not_held, not_held
    for game in EVERY_GAME:
        sizes = "3 players" if game == "knaves" else "3, 4, 5 players" if game == "bassadewitz" else "3, 4, 5, 6 players"
        assert f"{game}, {sizes}" in lines
    assert all(situation in lines for situation in SITUATIONS)
    assert all(line["doc"].startswith("docs/") for line in conformance["lines"])
    # The progress, line by line, went to stderr: stdout held the JSON alone.
    assert "held  the auction" in kit.check_stderr


def test_the_kit_plays_three_built_in_bots_in_process_seats(kit: Kit) -> None:
    result = against_built_ins(kit)
    assert result.faults == [{}, {}, {}, {}], result.faults
    assert result.names[0] == f"{kit.lang}-kit"  # a gRPC kit says its own name; the bridge says a stdio kit's
    replay = replay_lines(result.record)
    assert replay.divergence is None
    # Every kit sends debug text with each card (protocol 1.3): it arrives in the record, beside its step.
    cards = [line for line in result.record if line["type"] == "action" and line.get("seat") == 0 and line.get("status") == "ok"]
    cards = [line for line in cards if line["action"] not in ("pass", "capot", "general")]
    assert cards and all(re.fullmatch(r"legal cards: [1-9]\d*", cast(str, line.get("debug", ""))) for line in cards), cards[:3]
    assert {note.debug for note in replay.notes if note.seat == 0} == {line["debug"] for line in cards}


@pytest.mark.parametrize("lang", [lang for lang in TEMPLATE_LANGUAGES if lang != "cpp"])
def test_the_kit_builds_and_plays_as_uploaded_to_a_league_or_shipped_to_a_tournament(
    lang: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Packed as ``polignac league submit`` and a tournament pack it (no links, no node_modules/.bin), built in the sandbox.

    Not the C++ kit: its build reads only its sources and proto/, as the C kit's does, and
    compiling gRPC's generated code a second time would cost the suite a minute.
    """
    kit = checked_kit(lang, tmp_path_factory)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "node-cache"))
    data = pack_folder(kit.folder, SHIPPING_CAPS)
    shipped = ShippedBot(sha=hashlib.sha256(data).hexdigest(), archive="handle")
    builds: list[str] = []
    submission = run_sync(prepare_bot(shipped, lambda _: data, SeatKind.PROCESS, SeatLimits(), False, "kits", builds))
    assert submission.path != kit.folder and len(builds) == (kit.lang != "python"), builds
    result = play([submission, resolve_bot("heuristic"), resolve_bot("cautious"), resolve_bot("random")], "process")
    assert result.faults == [{}, {}, {}, {}], result.faults


def test_every_kit_plays_the_same_strategy(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Dealt the same cards against the same seeded opponents, every kit plays every card alike (ties too: the first legal)."""
    kits = []
    for lang in TEMPLATE_LANGUAGES:
        try:
            kits.append(checked_kit(lang, tmp_path_factory))
        except pytest.skip.Exception:
            continue  # a kit without its toolchain here: compared where it can be built
    if len(kits) < 2:
        pytest.skip("fewer than two kits can be built here")
    plays = {one.lang: [line["action"] for line in against_built_ins(one).record if line["type"] == "action"] for one in kits}
    reference = kits[0].lang
    differ = [lang for lang, actions in plays.items() if actions != plays[reference]]
    assert not differ, f"these kits play otherwise than the {reference} kit: {differ}"


@pytest.mark.docker
def test_the_static_kits_play_together_in_docker_seats_from_their_own_dockerfiles(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.docker_images import daemon_problem

    problem = daemon_problem()
    if problem:
        pytest.skip(f"docker seats cannot be tested here: {problem}")
    kits = [checked_kit(lang, tmp_path_factory) for lang in ("c", "cpp", "go", "rust")]
    for one in kits:
        dockerfile = (one.folder / "Dockerfile").read_text()
        assert one.submission.dockerfile == "Dockerfile" and re.search(r"^FROM scratch$", dockerfile, re.M), one.lang
    result = play([one.submission for one in kits], "docker", timeout=300)
    assert result.faults == [{}, {}, {}, {}], result.faults
    assert result.names == ("c-kit", "cpp-kit", "go-kit", "rust-kit")
    assert replay_lines(result.record).divergence is None


@pytest.mark.docker
def test_the_other_kits_play_together_in_docker_seats_on_the_runtime_image(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.docker_images import daemon_problem

    problem = daemon_problem()
    if problem:
        pytest.skip(f"docker seats cannot be tested here: {problem}")
    kits = [checked_kit(lang, tmp_path_factory) for lang in ("python", "javascript", "typescript", "java")]
    assert all(one.submission.dockerfile is None for one in kits)  # their Dockerfiles need a base image of the author's
    result = play([one.submission for one in kits], "docker", timeout=300)
    assert result.faults == [{}, {}, {}, {}], result.faults
    assert result.names == ("python-kit", "javascript-kit", "typescript-kit", "java-kit")
