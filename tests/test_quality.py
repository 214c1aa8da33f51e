"""Static checks as tests: mypy (strict) and ruff must pass; skipped when a tool is not installed.

One mypy run checks what ``[tool.mypy]`` in pyproject.toml names (the SDK and the server) and
the tests, all with its settings (strict), but for the test files of :data:`TESTS_NOT_YET_TYPED`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TESTS_NOT_YET_TYPED = [
    "tests/league/*",
    "tests/kits.py",
    "tests/sample_builds.py",
    "tests/test_benchmarks_smoke.py",
    "tests/test_bot_new.py",
    "tests/test_conformance.py",
    "tests/test_golden*.py",
    "tests/test_kits.py",
    "tests/test_polyglot_bots.py",
    "tests/test_records*.py",
    "tests/test_seat_common.py",
    "tests/test_web*.py",
]
"""Test files mypy does not check yet (patterns from the repository root): each leaves the list once typed."""


def run_tool(module: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m module args`` in the repository root (skip the test if it is not installed)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )


def typed_test_files() -> list[str]:
    """Every Python file under tests/ but those of :data:`TESTS_NOT_YET_TYPED`, relative to the root."""
    files = sorted(path.relative_to(ROOT) for path in (ROOT / "tests").rglob("*.py"))
    return [str(path) for path in files if not any(path.match(pattern) for pattern in TESTS_NOT_YET_TYPED)]


@pytest.fixture(scope="module")
def mypy_errors() -> list[str]:
    """The error lines of one mypy run over the configured files and the typed tests.

    One run, not one per test: it reads the SDK and the server once, and keeps one cache (runs with other options
    would each invalidate the other's).  The test files not typed yet are still read for the types they give the
    others, silently.
    """
    configured = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    done = run_tool("mypy", "--follow-imports=silent", *configured, *typed_test_files())
    output = f"{done.stdout}{done.stderr}"
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode in (0, 1) and (done.returncode == 0) == (not errors), f"mypy did not run:\n{output}"
    return errors


def test_mypy_strict(mypy_errors: list[str]) -> None:
    errors = [line for line in mypy_errors if not line.startswith("tests/")]
    assert errors == [], "mypy failed:\n" + "\n".join(errors)


def test_mypy_strict_on_the_tests(mypy_errors: list[str]) -> None:
    files = typed_test_files()
    assert "tests/test_quality.py" in files and "tests/league/test_lobby.py" not in files
    errors = [line for line in mypy_errors if line.startswith("tests/")]
    assert errors == [], "mypy failed on the tests:\n" + "\n".join(errors)


@pytest.mark.parametrize("path", ["sdk", "server", "tests"])
def test_ruff(path: str) -> None:
    done = run_tool("ruff", "check", "--no-cache", path)
    assert done.returncode == 0, f"ruff check {path} failed:\n{done.stdout}{done.stderr}"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("```sh\n")
    play, tests = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)[:2]
    assert play == "pip install -e . && polignac tournament run tournaments/quickstart.toml"
    assert tests == "pip install -e '.[test]' && python -m pytest"
    assert f'TEST_COMMAND="{tests}"' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
