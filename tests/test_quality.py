"""Static checks as tests: mypy (strict) and ruff must pass; skipped when a tool is not installed.

``mypy`` alone checks what ``[tool.mypy]`` in pyproject.toml names: the SDK and the
server, strict.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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


def test_mypy_strict() -> None:
    done = run_tool("mypy")  # files (sdk and server) and strictness come from [tool.mypy] in pyproject.toml
    assert done.returncode == 0, f"mypy failed:\n{done.stdout}{done.stderr}"


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
