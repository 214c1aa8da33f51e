"""The executor seam without a cluster: the [executor] settings, the command line's choice, a node's cache and builds.

The cluster itself is tested in tests/cluster (a real Ray cluster of three nodes).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from polignac import preset
from polignac_arena.archive import pack_folder
from polignac_arena.executors import ExecutorSettings, LocalExecutor, MatchJob, executor_for
from polignac_arena.executors import node as node_module
from polignac_arena.executors.node import CACHE_ENV, NodeRefused, ShippedBot, play_on_node, prepare_bot
from polignac_arena.games import game_of
from polignac_arena.referee import TimeControl
from polignac_arena.seats import SeatKind, SeatLimits, launcher_for
from polignac_arena.settings import ExecutorKind
from polignac_arena.submission import builtin_submission
from polignac_arena.tournament.config import ConfigError, parse_config
from tests.aio import run_sync
from tests.test_tournament_run import ENV, tournament_file

SAMPLE = Path(__file__).resolve().parents[1] / "sample_bots" / "cautious"
ENTRANTS = 'name = "t"\nentrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n'


# -- settings -----------------------------------------------------------------------------------


def test_the_executor_table_is_read_and_local_is_the_default() -> None:
    assert parse_config(ENTRANTS).executor == ExecutorSettings()
    settings = parse_config(ENTRANTS + '[executor]\nkind = "ray"\naddress = "10.1.2.3:6379"\ncpus_per_match = 2\n').executor
    assert settings == ExecutorSettings(ExecutorKind.RAY, "10.1.2.3:6379", 2.0)
    assert isinstance(executor_for(ExecutorSettings()), LocalExecutor)


def test_every_bad_executor_setting_is_named_with_its_line() -> None:
    text = ENTRANTS + '[executor]\nkind = "spark"\naddress = "no port"\ncpus_per_match = 0\nnodes = 3\n'
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    problems = "\n".join(caught.value.problems)
    assert "line 5: 'executor.kind': must be one of local, ray, got 'spark'" in problems
    assert "line 6: 'executor.address': must be the Ray head's HOST:PORT, got 'no port'" in problems
    assert "line 7: 'executor.cpus_per_match': must be a number" in problems
    assert "line 8: 'executor.nodes': unknown setting" in problems
    with pytest.raises(ConfigError, match="must be a table"):
        parse_config(ENTRANTS + 'executor = "ray"\n')


def test_the_executor_is_not_part_of_what_defines_a_tournament() -> None:
    from polignac_arena.tournament.runner import config_record

    local = parse_config(ENTRANTS)
    on_ray = parse_config(ENTRANTS + '[executor]\nkind = "ray"\naddress = "127.0.0.1:6379"\n')
    assert config_record(local) == config_record(on_ray)  # so --resume may finish on another executor


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "polignac_arena.cli", *args],
        capture_output=True, text=True, env={**os.environ, **ENV, **(env or {})}, timeout=120, check=False,
    )  # fmt: skip


def test_the_command_line_refuses_an_unknown_executor_and_an_address_without_ray(tmp_path: Path) -> None:
    path = tournament_file(tmp_path)
    bogus = _cli("tournament", "run", str(path), "--db", str(tmp_path / "a.db"), "--executor", "spark")
    assert bogus.returncode == 2 and "invalid value for '--executor': 'spark' is not one of 'local', 'ray'." in bogus.stderr
    stray = _cli("tournament", "run", str(path), "--db", str(tmp_path / "a.db"), "--ray-address", "127.0.0.1:6379")
    assert stray.returncode == 2 and "--ray-address goes with --executor ray" in stray.stderr
    assert not (tmp_path / "a.db").exists() or "small" not in (tmp_path / "a.db").read_bytes().decode("latin-1")


def test_without_ray_the_ray_executor_says_how_to_install_it(tmp_path: Path) -> None:
    hidden = tmp_path / "no-ray" / "ray"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n", encoding="utf-8")
    path = tournament_file(tmp_path)
    done = _cli(
        "tournament", "run", str(path), "--db", str(tmp_path / "a.db"), "--executor", "ray", "--ray-address", "127.0.0.1:6379",
        env={"PYTHONPATH": os.pathsep.join([str(hidden.parent), *sys.path])},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        == "polignac: error: the ray executor needs Ray: pip install 'polignac-arena[ray]' (in a checkout: pip install -e '.[ray]')"
    )


# -- a node's cache and builds ------------------------------------------------------------------


@pytest.fixture
def node_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "node-cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    return cache


def _shipped(folder: Path) -> tuple[ShippedBot, bytes]:
    data = pack_folder(folder)
    return ShippedBot(sha=hashlib.sha256(data).hexdigest(), archive="handle"), data


def _prepare(bot: ShippedBot, data: bytes, *, fetched: list[Any] | None = None, kind: SeatKind = SeatKind.PROCESS) -> Any:
    def fetch(handle: Any) -> bytes:
        if fetched is not None:
            fetched.append(handle)
        return data

    return run_sync(prepare_bot(bot, fetch, kind, SeatLimits(), True, "node-x"))


def test_a_shipped_folder_is_fetched_once_and_unpacked_under_its_hash(node_cache: Path) -> None:
    bot, data = _shipped(SAMPLE)
    fetched: list[Any] = []
    first = _prepare(bot, data, fetched=fetched)
    second = _prepare(bot, data, fetched=fetched)
    assert fetched == ["handle"], "the archive's bytes travel once per node"
    assert bot.sha is not None
    assert first.path == second.path == node_cache / "versions" / bot.sha
    assert (first.name, first.version) == ("cautious", "1.1")
    assert _prepare(ShippedBot(builtin="heuristic"), b"") == builtin_submission("heuristic")


def test_an_archive_that_is_not_what_its_hash_says_is_refused_and_not_kept(node_cache: Path) -> None:
    bot, _ = _shipped(SAMPLE)
    other = pack_folder(Path(__file__).resolve().parents[1] / "sample_bots" / "random")
    assert bot.sha is not None
    with pytest.raises(NodeRefused, match=f"node node-x received archive {bot.sha[:12]} with other content than its hash"):
        _prepare(bot, other)
    assert not (node_cache / "versions" / bot.sha).exists()
    assert not list((node_cache / "archives").rglob("*.tar.gz"))


def test_a_hostile_archive_is_refused_with_the_member_to_blame(node_cache: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    data = buffer.getvalue()
    bot = ShippedBot(sha=hashlib.sha256(data).hexdigest(), archive="handle")
    with pytest.raises(NodeRefused, match=r"cannot unpack archive .*escape\.txt"):
        _prepare(bot, data)
    assert not (node_cache.parent / "escape.txt").exists()


def _bot_with_build(tmp_path: Path, step: str) -> Path:
    """The cautious sample with the build step ``python -c STEP`` (``step``: TOML basic-string text, no double quotes)."""
    folder = tmp_path / "builder"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    with open(folder / "bot.toml", "a", encoding="utf-8") as toml:
        toml.write(f'build = ["python", "-c", "{step}"]\n')
    return folder


def test_a_node_builds_a_submission_once_and_reuses_it(tmp_path: Path, node_cache: Path) -> None:
    folder = _bot_with_build(tmp_path, "open('builds.txt', 'a').write('built\\\\n')")
    bot, data = _shipped(folder)
    first = _prepare(bot, data)
    second = _prepare(bot, data)
    assert (first.path / "builds.txt").read_text() == "built\n" and second.path == first.path
    assert not (folder / "builds.txt").exists()
    log = (node_cache / "built" / f"{bot.sha}-process.ok").read_text()
    assert log.startswith("build of cautious@1.1 on node node-x: ") and " exited 0 " in log


def test_a_build_that_fails_fails_every_match_at_once_with_its_reason(
    tmp_path: Path, node_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _bot_with_build(tmp_path, "import sys; print('no compiler here'); sys.exit(3)")
    bot, data = _shipped(folder)
    with pytest.raises(NodeRefused, match="exited 3") as first:
        _prepare(bot, data)
    assert "no compiler here" in str(first.value)
    built: list[SeatKind] = []

    def counting(kind: SeatKind) -> Any:
        built.append(kind)
        return launcher_for(kind)

    monkeypatch.setattr(node_module, "launcher_for", counting)
    with pytest.raises(NodeRefused) as second:
        _prepare(bot, data)
    assert str(second.value) == str(first.value) and built == [], "not built again"


def _job(kind: SeatKind, trusted: bool) -> MatchJob:
    rules = preset("classic", players=3, limit=5)
    return MatchJob((), rules, 7, TimeControl(), game_of(rules), kind, trusted, SeatLimits(), "node-test-1")


def test_a_node_without_bubblewrap_refuses_untrusted_bots_with_the_usual_error(node_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(node_cache))  # no bwrap on this node's PATH
    shipped = [ShippedBot(builtin=name) for name in ("random", "cautious", "heuristic")]
    with pytest.raises(NodeRefused) as refused:
        play_on_node(_job(SeatKind.PROCESS, trusted=False), shipped, lambda handle: b"", "node-bare")
    message = str(refused.value)
    assert message.startswith("node node-bare cannot play match node-test-1 in process seats: ")
    assert "install bubblewrap" in message


def test_a_node_plays_a_match_of_built_in_bots_and_keeps_a_journal(node_cache: Path) -> None:
    shipped = [ShippedBot(builtin=name) for name in ("random", "cautious", "heuristic")]
    played = play_on_node(_job(SeatKind.INPROCESS, trusted=True), shipped, lambda handle: b"", "node-y")
    assert played.node == "node-y" and played.result.status == "finished" and played.result.match_id == "node-test-1"
    events = [line.split()[1:] for line in (node_cache / "matches.log").read_text().splitlines()]
    assert events == [["start", "node-test-1"], ["end", "node-test-1"]]


@pytest.mark.parametrize("address", ["nonsense", "host:", ":6379", "10.0.0.5:99999"])
def test_a_malformed_ray_address_is_one_clear_line(tmp_path: Path, address: str) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'; .ci/run installs it)")
    path = tournament_file(tmp_path)
    done = _cli("tournament", "run", str(path), "--db", str(tmp_path / "a.db"), "--executor", "ray", "--ray-address", address)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"polignac: error: a Ray address is HOST:PORT (the head's GCS port, 6379 by default), got {address!r}"
