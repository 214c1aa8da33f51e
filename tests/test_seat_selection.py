"""A seat kind plays the bot that was named, or refuses in one line: no silent fallback, no name swap.

- ``launcher_for`` gives a kind's own launcher; an error in the sandbox's code is raised, and a
  sandbox that cannot run is named in the refusal of untrusted bots.
- In-process seats run a folder's own Python bot (trusted only) or refuse it; ``builtin:NAME``
  is always the built-in; a bare built-in name that is also a folder must be written out.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac import preset
from polignac_arena.cli import app
from polignac_arena.runner import BotSpecError, resolve_bot, run_local_match
from polignac_arena.seats import SeatKind, launcher_for
from polignac_arena.seats.process import ProcessLauncher
from polignac_arena.seats.sandbox import SandboxLauncher
from polignac_arena.store import Store
from polignac_arena.submission import load_submission
from polignac_arena.tournament.config import load_config
from polignac_arena.tournament.runner import EntrantError, resolve_entrants
from tests.aio import run_sync

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
RULES = preset("classic", players=3, limit=5)
runner = CliRunner()


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


# -- the launcher of a kind ---------------------------------------------------------------------


def test_an_error_in_the_sandbox_code_is_raised_not_taken_for_a_missing_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polignac_arena.seats.sandbox", None)  # its import now fails
    with pytest.raises(ImportError):
        launcher_for(SeatKind.PROCESS)


def test_where_the_sandbox_cannot_run_the_refusal_names_what_it_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SandboxLauncher, "unavailable", lambda self: "the sandbox's seccomp filter cannot be made: no libseccomp")
    launcher = launcher_for("process")
    assert isinstance(launcher, ProcessLauncher) and launcher.kind is SeatKind.PROCESS
    refusal = launcher.refusal(False)
    assert refusal is not None and "seccomp filter cannot be made: no libseccomp" in refusal and "bubblewrap" not in refusal
    assert launcher.refusal(True) is None  # trusted bots: unsandboxed, and it says so loudly (test_submission)
    bots = [resolve_bot(name) for name in ("random", "cautious", "heuristic")]
    with pytest.raises(BotSpecError, match="no libseccomp"):
        run_sync(run_local_match(bots, RULES, 1, seat_kind="process"))


def test_each_kind_gets_its_own_launcher() -> None:
    assert launcher_for("inprocess").kind is SeatKind.INPROCESS
    assert launcher_for("docker").kind is SeatKind.DOCKER  # even without a daemon: it then says so (unavailable)
    assert launcher_for("process").kind is SeatKind.PROCESS
    with pytest.raises(ValueError):
        launcher_for("vm")


# -- names: built-in or folder --------------------------------------------------------------------


def test_builtin_prefix_and_bare_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_bot("random").builtin and resolve_bot("builtin:random").builtin
    shutil.copytree(SAMPLES / "random", tmp_path / "random")
    with pytest.raises(BotSpecError) as both:
        resolve_bot("random")
    assert "both a built-in bot and the folder" in str(both.value) and "builtin:random" in str(both.value)
    assert resolve_bot("builtin:random").builtin
    folder = resolve_bot("./random")
    assert not folder.builtin and folder.version == "1.1"
    with pytest.raises(BotSpecError, match="no built-in bot 'nope'"):
        resolve_bot("builtin:nope")
    result = polignac("match", "--bot", "random", "--bot", "cautious", "--bot", "heuristic", "-q")
    assert result.exit_code == 2 and "builtin:random" in result.output and len(result.output.strip().splitlines()) == 1


def test_builtin_prefix_names_openspiel_bots_too() -> None:
    import importlib.util

    if importlib.util.find_spec("pyspiel") is None:
        with pytest.raises(BotSpecError, match="needs OpenSpiel"):
            resolve_bot("builtin:openspiel:random")
    else:
        found = resolve_bot("builtin:openspiel:random")
        assert found.builtin and found.name == "openspiel:random" and found == resolve_bot("openspiel:random")


def test_a_tournament_entrant_is_a_builtin_only_where_no_folder_of_that_name_is_given(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "random", tmp_path / "random")
    path = tmp_path / "t.toml"
    text = 'name = "t"\nentrants = [{}]\ntable_size = 3\n[seats]\nkind = "inprocess"\ntrusted = true\n'
    path.write_text(text.format('"random", "cautious", "heuristic"'), encoding="utf-8")
    with Store(tmp_path / "s.db") as store, pytest.raises(EntrantError, match="builtin:random"):
        resolve_entrants(load_config(path), store)
    path.write_text(text.format('"builtin:random", "./random", "cautious"'), encoding="utf-8")
    with Store(tmp_path / "s.db") as store:
        found = resolve_entrants(load_config(path), store)
    assert sorted(found) == ["cautious@builtin", "random@1.1", "random@builtin"]
    assert found["random@builtin"].builtin and not found["random@1.1"].builtin


# -- in-process seats and folders -------------------------------------------------------------------


def test_in_process_seats_refuse_an_untrusted_folder_in_one_line() -> None:
    result = polignac("match", "--bot", str(SAMPLES / "random"), "--bot", "heuristic", "--bot", "cautious", "--seat-kind", "inprocess")
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "random@1.1: in-process seats run a folder's code in the arena's own process" in line and "--trusted" in line


@pytest.mark.parametrize("sample", ["javascript", "python_stdio", "c_stdio"])
def test_in_process_seats_refuse_a_folder_that_is_no_python_sdk_bot(sample: str) -> None:
    bots = ["--bot", str(SAMPLES / sample), "--bot", "heuristic", "--bot", "cautious"]
    result = polignac("match", *bots, "--seat-kind", "inprocess", "--trusted")
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "in-process seats run only a Python bot of the SDK started as `python FILE.py`" in line


def _folder(tmp_path: Path, name: str, code: str, declared: str | None = None) -> Path:
    folder = tmp_path / name
    shutil.copytree(SAMPLES / "random", folder)
    toml = (folder / "bot.toml").read_text(encoding="utf-8").replace('name = "random"', f'name = "{declared or name}"')
    (folder / "bot.toml").write_text(toml.replace('version = "1.1"', 'version = "9.9"'), encoding="utf-8")
    (folder / "bot.py").write_text(code, encoding="utf-8")
    return folder


def test_a_folder_named_like_a_builtin_runs_its_own_code_in_process(tmp_path: Path) -> None:
    # bot.toml says "heuristic", but its bot.py only exits: its seat must not be the built-in heuristic.
    folder = _folder(tmp_path, "impostor", "import sys\nsys.exit(3)\n", declared="heuristic")
    bots = [load_submission(folder), resolve_bot("random"), resolve_bot("cautious")]
    result, _ = run_sync(run_local_match(bots, RULES, 5, seat_kind="inprocess", trusted=True))
    # Its code ran and exited before it joined: the seat forfeits as crashed, as a process seat's would.
    assert result.places is not None and result.places[0] == 3
    assert result.faults[0] == {"crashed": 1}
    assert (result.names[0], result.versions[0]) == ("seat0", ""), "no Hello: not the built-in heuristic"


def test_an_in_process_folder_bot_that_raises_is_a_crash_with_its_traceback(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "broken", "raise RuntimeError('no strategy today')\n")
    bots = [load_submission(folder), resolve_bot("random"), resolve_bot("cautious")]
    result, stderrs = run_sync(run_local_match(bots, RULES, 5, seat_kind="inprocess", trusted=True))
    assert result.places is not None and result.places[0] == 3
    assert "RuntimeError: no strategy today" in stderrs[0]


def test_an_in_process_folder_bot_imports_its_own_modules_and_reads_its_seed(tmp_path: Path) -> None:
    code = (
        "import os, helper\n"
        "from polignac.bot import Bot, run\n"
        "class Mine(Bot):\n"
        "    name = 'mine'\n"
        "    version = helper.VERSION + '-' + os.environ['POLIGNAC_BOT_SEED'][:4]\n"
        "    def play(self, view):\n"
        "        return view.legal_cards[0]\n"
        "if __name__ == '__main__':\n"
        "    run(Mine())\n"
    )
    one, two = _folder(tmp_path, "one", code), _folder(tmp_path, "two", code)
    (one / "helper.py").write_text("VERSION = 'one'\n", encoding="utf-8")
    (two / "helper.py").write_text("VERSION = 'two'\n", encoding="utf-8")  # the same module name, another folder
    bots = [load_submission(one), load_submission(two), resolve_bot("cautious")]
    result, _ = run_sync(run_local_match(bots, RULES, 5, seat_kind="inprocess", trusted=True, bot_seeds=[1111, 2222, 3]))
    assert result.status == "finished" and result.faults == [{}, {}, {}]
    assert list(result.versions[:2]) == ["one-1111", "two-2222"]
    assert "helper" not in sys.modules or "one" not in str(getattr(sys.modules["helper"], "__file__", ""))
