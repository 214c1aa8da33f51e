"""Every name rule, limit and bound is declared once: in polignac_arena.settings (or, for what the protocol itself
limits, polignac.limits and polignac.deal), and read from there by every layer."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from polignac_arena.settings import NAME_PATTERN, NAME_RULE, VERSION_PATTERN, TimeControl, is_name

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "sdk" / "polignac").rglob("*.py"), *(ROOT / "server" / "polignac_arena").rglob("*.py")])
HOMES = {ROOT / "server/polignac_arena/settings.py", ROOT / "sdk/polignac/limits.py", ROOT / "sdk/polignac/deal.py"}


def _code(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _constants(path: Path) -> list[tuple[int, object]]:
    return [(node.lineno, node.value) for node in ast.walk(_code(path)) if isinstance(node, ast.Constant)]


def _outside_homes() -> list[Path]:
    return [path for path in SOURCES if path not in HOMES and "_proto" not in path.parts]


def test_the_name_pattern_is_written_once() -> None:
    """A regular expression of name characters (letters, digits, '.', '_', '-') appears only in the settings."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _outside_homes()
        for line, value in _constants(path)
        if isinstance(value, str) and re.search(r"\[\^?A-Za-z0-9[._+-]{2,4}\]\{\d*,?6[34]\}", value)
    ]
    assert found == [], f"a name pattern outside polignac_arena/settings.py: {found}"


def test_the_clock_bounds_are_written_once() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _outside_homes() for line, value in _constants(path) if value == 3_600_000]
    assert found == [], f"the longest clock written outside polignac_arena/settings.py: {found}"


def _bounds(path: Path) -> list[str]:
    """``2**63 - 1`` and ``2**64 - 1`` written out in ``path``: a bound, where ``2**64`` alone is a range's end."""
    found = []
    for node in ast.walk(_code(path)):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub)
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Pow)
            and ast.literal_eval(node.left) in (2**63, 2**64)
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_seed_bounds_are_written_once() -> None:
    found = [place for path in _outside_homes() for place in _bounds(path)]
    assert found == [], f"a seed or integer bound outside the settings: {found}"


def test_the_version_and_name_lengths_are_written_once() -> None:
    """No ``len(...)`` compared with 32 or 64, nor a ``[:64]`` cut, outside the settings."""
    found = []
    for path in _outside_homes():
        for node in ast.walk(_code(path)):
            numbers: list[ast.expr] = []
            if isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Call) and getattr(side.func, "id", "") == "len" for side in (node.left, *node.comparators)
            ):
                numbers = [node.left, *node.comparators]
            elif isinstance(node, ast.Slice) and node.lower is None:
                numbers = [node.upper] if node.upper is not None else []
            if any(isinstance(n, ast.Constant) and n.value in (32, 64) for n in numbers):
                assert isinstance(node, ast.expr)  # a Compare or a Slice
                text = ast.get_source_segment(path.read_text(encoding="utf-8"), node) or ""
                if re.search(r"name|version", text):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert found == [], f"a name or version length outside the settings: {found}"


@pytest.mark.parametrize("name", ["heuristic", "c_stdio", "Bot-2.1", "x", "9lives", "a" * 64])
def test_names_every_layer_takes(name: str) -> None:
    assert is_name(name) and NAME_PATTERN.match(name)


@pytest.mark.parametrize("name", ["", "_x", "-x", ".x", "..", "a b", "a/b", "é", "a" * 65, "x\n", "x\r", "\nx"])
def test_names_every_layer_refuses(name: str) -> None:
    assert not is_name(name)


def test_the_layers_agree_on_names(tmp_path: Path) -> None:
    """A name the league store refuses is refused by bot.toml, tournament files, league files and `bot new` alike."""
    from polignac_arena.league.store_tokens import check_name
    from polignac_arena.submission import SubmissionError, load_submission
    from polignac_arena.templates import ScaffoldError, scaffold
    from polignac_arena.tournament.config import ConfigError, parse_config

    for name in ("_x", "-x", ".."):
        with pytest.raises(ValueError, match=re.escape(NAME_RULE)):
            check_name("bot", name)
        folder = tmp_path / f"bot{len(name)}{ord(name[0])}"
        folder.mkdir()
        (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n')
        (folder / "bot.py").write_text("")
        with pytest.raises(SubmissionError, match=re.escape(NAME_RULE)):
            load_submission(folder)
        with pytest.raises(ConfigError, match=re.escape(NAME_RULE)):
            parse_config(f'name = "{name}"\nentrants = ["random", "heuristic", "cautious"]\n')
        with pytest.raises(ScaffoldError, match=re.escape(NAME_RULE)):
            scaffold(name, "python", tmp_path / f"new{ord(name[0])}")


def test_versions_of_64_characters_pass_everywhere(tmp_path: Path) -> None:
    from polignac_arena.submission import load_submission

    (tmp_path / "bot.toml").write_text(f'name = "v"\nversion = "{"1" * 64}"\nlanguage = "python"\ncommand = ["python", "bot.py"]\n')
    (tmp_path / "bot.py").write_text("")
    assert load_submission(tmp_path).version == "1" * 64
    assert VERSION_PATTERN.match("1" * 64) and not VERSION_PATTERN.match("1" * 65)


def test_a_time_control_takes_the_bounds_it_declares() -> None:
    TimeControl(1, 0, 1)
    TimeControl(3_600_000, 3_600_000, 3_600_000)
    for bad in ({"move_ms": 0}, {"bank_ms": -1}, {"startup_ms": 3_600_001}, {"move_ms": 1.5}):
        with pytest.raises(ValueError, match="time control"):
            TimeControl(**bad)


def test_reading_a_tournament_or_league_file_does_not_import_grpc() -> None:
    code = (
        "import sys, polignac_arena.tournament.config, polignac_arena.league.config, polignac_arena.settings\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'grpc_health', 'ray') or m.startswith('google.protobuf'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_submission_made_in_code_with_the_transports_text_has_the_transport(tmp_path: Path) -> None:
    from polignac_arena.settings import Transport
    from polignac_arena.submission import Submission

    made = Submission(path=tmp_path, name="x", version="1", language="c", command=("./bot",), transport="stdio")  # type: ignore[arg-type]  # text, as callers write it
    assert made.transport is Transport.STDIO
    with pytest.raises(ValueError):
        Submission(path=tmp_path, name="x", version="1", language="c", command=("./bot",), transport="pigeon")  # type: ignore[arg-type]  # on purpose


def _assigned_name(node: ast.AST) -> str | None:
    """The name an annotated assignment with a value gives, else None."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def test_the_author_limits_are_declared_once() -> None:
    """``uploads_per_hour``, ``versions_kept`` and ``active_bots`` get their default and bounds in league/limits.py only."""
    limits = ("uploads_per_hour", "active_bots", "versions_kept")
    found = [
        f"{path.relative_to(ROOT)}:{name}" for path in SOURCES for node in ast.walk(_code(path)) if (name := _assigned_name(node)) in limits
    ]
    assert sorted(found) == [
        "server/polignac_arena/league/limits.py:active_bots",
        "server/polignac_arena/league/limits.py:uploads_per_hour",
        "server/polignac_arena/league/limits.py:versions_kept",
    ]
