"""Agents of the research frameworks as arena bots: in-process seats, sandboxed submission folders, the built-ins."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from polignac import preset
from polignac.bot import Bot, play_local
from polignac.bots import BUILTIN_NAMES, builtin_bot
from polignac.envs.adapters import PolicyBot
from polignac.errors import IllegalDecision
from polignac_arena.cli import app
from polignac_arena.referee import TimeControl
from polignac_arena.runner import BotSpecError, resolve_bot, run_local_match
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.seats.sandbox import SandboxLauncher
from polignac_arena.submission import SubmissionError, builtin_submission
from tests.aio import run_sync
from tests.research.common import need_openspiel

ROOT = Path(__file__).resolve().parents[2]
CLOCK = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=30_000)


def lowest_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def test_a_policy_plays_a_real_referee_match_in_an_in_process_seat() -> None:
    rules = preset("classic", limit=10)
    bots: dict[int, Bot] = {0: PolicyBot(lowest_legal, name="lowest")}
    subs = [builtin_submission(name) for name in ("random", "cautious", "heuristic", "random")]
    result, _ = run_sync(run_local_match(subs, rules, 5, CLOCK, seat_kind="inprocess", launcher=InProcessLauncher(bots)))
    assert result.status == "finished" and result.places is not None
    assert sum(result.faults[0].values()) == 0 and result.names[0] == "lowest"


def test_a_policy_outside_its_mask_is_named_and_the_seat_crashes() -> None:
    bot = PolicyBot(lambda observation, mask: 54, name="general")  # general is off in classic
    result = play_local(bot, matches=1, seed=2)
    assert result.places == [4] and "the action mask does not allow" in result.faults[-1]
    with pytest.raises(IllegalDecision, match="action 54"):
        from polignac import Match

        bot.decide(Match(preset("classic"), seed=1).view(0))


def test_openspiel_bots_play_a_real_referee_match_in_in_process_seats() -> None:
    need_openspiel()
    import pyspiel

    from polignac.envs.adapters import OpenSpielBot
    from polignac.envs.openspiel_bots import IsmctsBot

    rules = preset("knaves", limit=10)
    bots: dict[int, Bot] = {
        0: OpenSpielBot(lambda game, seat: pyspiel.make_uniform_random_bot(seat, 7), name="os-random", seed=1),
        1: IsmctsBot(seed=2),
    }
    subs = [builtin_submission(name) for name in ("random", "random", "heuristic")]
    clock = TimeControl(move_ms=100, bank_ms=10_000, startup_ms=30_000)
    result, _ = run_sync(run_local_match(subs, rules, 9, clock, seat_kind="inprocess", launcher=InProcessLauncher(bots)))
    assert result.status == "finished" and result.places is not None
    assert result.names[:2] == ("os-random", "openspiel:ismcts")
    assert sum(result.faults[0].values()) == sum(result.faults[1].values()) == 0


def folder(path: Path, name: str, code: str) -> Path:
    path.mkdir()
    (path / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n')
    (path / "bot.py").write_text(textwrap.dedent(code))
    return path


def test_submission_folders_of_a_policy_and_an_openspiel_bot_play_in_the_sandbox(tmp_path: Path) -> None:
    need_openspiel()
    reason = SandboxLauncher().unavailable()
    if reason is not None:
        pytest.skip(f"the bubblewrap sandbox is not usable here: {reason}")
    # The policy's weights travel in the folder, as a trained policy's would.
    np.save(tmp_path / "weights.npy", np.arange(55, dtype=np.float32))
    policy = folder(
        tmp_path / "policy",
        "npy-policy",
        """
        from pathlib import Path
        import numpy as np
        from polignac.bot import run
        from polignac.envs.adapters import PolicyBot
        weights = np.load(Path(__file__).with_name("weights.npy"))
        run(PolicyBot(lambda observation, mask: int(np.argmax(np.where(mask == 1, weights, -np.inf))), name="npy-policy"))
        """,
    )
    (tmp_path / "weights.npy").rename(policy / "weights.npy")
    spiel = folder(
        tmp_path / "spiel",
        "spiel-random",
        """
        import pyspiel
        from polignac.bot import run
        from polignac.envs.adapters import OpenSpielBot
        run(OpenSpielBot(lambda game, seat: pyspiel.make_uniform_random_bot(seat, 3), name="spiel-random"))
        """,
    )
    subs = [resolve_bot(str(policy)), resolve_bot(str(spiel)), resolve_bot("openspiel:ismcts"), resolve_bot("random")]
    clock = TimeControl(move_ms=500, bank_ms=10_000, startup_ms=30_000)
    result, stderr = run_sync(run_local_match(subs, preset("classic", limit=10), 4, clock, seat_kind="process"))
    assert result.status == "finished", stderr
    assert result.names == ("npy-policy", "spiel-random", "openspiel:ismcts", "random")
    assert all(sum(f.values()) == 0 for f in result.faults), (result.faults, stderr)


def test_the_openspiel_built_ins_are_built_in_names_everywhere() -> None:
    need_openspiel()
    assert {"openspiel:ismcts", "openspiel:random"} <= set(BUILTIN_NAMES)
    for name in ("openspiel:ismcts", "openspiel:random"):
        sub = resolve_bot(name)
        assert sub.builtin and sub.name == name and sub.command[-1] == name
        assert builtin_bot(name, 1).name == name
    result = play_local(builtin_bot("openspiel:random", 3), matches=1, seed=1)
    assert result.faults == [] and len(result.places) == 1
    bots = ["openspiel:random", "openspiel:ismcts", "heuristic"]
    options = ["--seat-kind", "inprocess", "--limit", "5", "--seed", "3", "--move-ms", "50"]
    done = CliRunner().invoke(app, ["match", *(f"--bot={b}" for b in bots), *options])
    assert done.exit_code == 0, done.output
    assert "Seats: 0 openspiel:random, 1 openspiel:ismcts, 2 heuristic" in done.output


def test_without_openspiel_naming_its_bots_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspiel" else real(name, *a))
    with pytest.raises(BotSpecError, match=r"needs OpenSpiel, which is not installed: pip install 'polignac-arena\[research\]'"):
        resolve_bot("openspiel:ismcts")
    with pytest.raises(SubmissionError, match="needs OpenSpiel"):
        builtin_submission("openspiel:random")
    with pytest.raises(ValueError, match="needs OpenSpiel"):
        builtin_bot("openspiel:random")
    with pytest.raises(BotSpecError, match="openspiel:ismcts, openspiel:random"):
        resolve_bot("openspiel:nope")


def test_an_openspiel_that_does_not_load_is_a_clear_error_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import polignac.envs

    monkeypatch.delattr(polignac.envs, "openspiel_bots", raising=False)
    monkeypatch.setitem(sys.modules, "polignac.envs.openspiel_bots", None)  # importing it raises ImportError
    with pytest.raises(ValueError, match="built-in bot 'openspiel:ismcts' needs OpenSpiel"):
        builtin_bot("openspiel:ismcts")


def test_the_arena_and_the_sdk_import_none_of_the_research_frameworks() -> None:
    """``import polignac`` and the arena's modules load no PettingZoo, OpenSpiel, gymnasium or torch, and no numpy
    where they loaded none before (the SDK's batch playouts and the research bridges load numpy when used)."""
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        import polignac, polignac.bot, polignac.bots, polignac_arena.cli
        core = sorted(m for m in sys.modules if m.split(".")[0] == "numpy")
        import polignac_arena
        for module in pkgutil.walk_packages(polignac_arena.__path__, "polignac_arena."):
            if not module.name.startswith("polignac_arena.executors.ray") and not module.name.endswith("__main__"):
                importlib.import_module(module.name)
        research = sorted({m.split(".")[0] for m in sys.modules} & {"pettingzoo", "pyspiel", "open_spiel", "gymnasium", "torch"})
        print(core, research)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


def test_the_yardstick_tournament_seats_the_expert_ismcts_and_the_heuristic_at_100_ms(tmp_path: Path) -> None:
    """Its shape only: running it (tens of minutes) is for `polignac tournament run tournaments/expert-vs-openspiel.toml`."""
    from polignac_arena.games import Game, check_seating
    from polignac_arena.store import Store
    from polignac_arena.tournament.config import load_config
    from polignac_arena.tournament.runner import resolve_entrants

    config = load_config(ROOT / "tournaments" / "expert-vs-openspiel.toml")
    assert set(config.entrants) == {"expert", "openspiel:ismcts", "heuristic"} and config.table_size == 3
    assert config.format == "duplicate" and config.time.move_ms == 100 and config.until_separated == 0.95
    assert config.game == Game("classic") and not config.trusted
    need_openspiel()
    with Store(tmp_path / "arena.db") as store:
        check_seating(resolve_entrants(config, store).values(), config.game)
