"""Golden playthroughs: whole matches replayed and diffed against tests/golden/*.txt.

The cases, the decision policy and the text rendering live in scripts/regen_golden.py;
each file is that script's output.  A difference means the engine now deals, allows,
scores or records something differently.  If that is intended, run
``python scripts/regen_golden.py`` and review the diff of tests/golden/ like code.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from polignac import Match

ROOT = Path(__file__).resolve().parent.parent
REGEN = "python scripts/regen_golden.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regen_golden", ROOT / "scripts" / "regen_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


golden = _load_script()
CASES = {case.name: case for case in golden.CASES}


def _diff(expected: str, actual: str, name: str) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"tests/golden/{name}.txt", "engine now", lineterm=""))
    shown = "\n".join(lines[:80])
    more = f"\n... {len(lines) - 80} more diff lines" if len(lines) > 80 else ""
    return f"{shown}{more}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name: str) -> None:
    case = CASES[name]
    path = golden.golden_path(case)
    assert path.exists(), f"tests/golden/{name}.txt is missing; run `{REGEN}` to create it"
    expected = path.read_text(encoding="utf-8")
    actual = golden.render_case(case)
    if actual != expected:
        pytest.fail(
            f"golden playthrough {name} changed. If the change is intended, run `{REGEN}` and review the diff.\n"
            + _diff(expected, actual, name),
            pytrace=False,
        )


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_record_replays(name: str) -> None:
    """The stored record, read back through Match.from_record, gives the same events and record."""
    events, record = golden.split_golden(golden.golden_path(CASES[name]).read_text(encoding="utf-8"))
    replayed = Match.from_record(record)
    assert replayed.is_over
    assert replayed.record() == record
    assert golden.render_match(replayed) == events + f"{golden.RECORD_MARK}\n" + golden.render_record(record), (
        f"tests/golden/{name}.txt no longer replays from its record; if intended, run `{REGEN}`"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_case_exercises_what_it_is_for(name: str) -> None:
    case = CASES[name]
    assert case.expect(golden.play_case(case)), (
        f"case {name} no longer exercises what it is for ({case.about}); pick another seed (see --find-tiebreak) and run `{REGEN}`"
    )


def test_every_golden_file_belongs_to_a_case() -> None:
    files = {p.stem for p in (ROOT / "tests" / "golden").glob("*.txt")}
    assert files == set(CASES), (
        f"golden files without a case: {sorted(files - set(CASES))}; cases without a file: {sorted(set(CASES) - files)}"
    )


def test_golden_cases_cover_the_briefed_tables() -> None:
    """Every preset, every player count and both removed-seven choices appear in some case."""
    rules = [case.rules for case in CASES.values()]
    assert {r.name for r in rules} >= {"classic", "ace-high", "slobberhannes", "no-contracts"}
    assert {r.players for r in rules} == {3, 4, 5, 6}
    assert {r.removed_sevens.value for r in rules if r.players != 4} == {"black", "red"}


def test_policy_generator_is_pinned() -> None:
    """The policy's first draws: a change here would silently change every golden file."""
    lcg = golden.Lcg(1)
    assert [lcg.draw() for _ in range(4)] == [908834774, 1093944153, 1392341196, 822192870]
