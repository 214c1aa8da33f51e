"""Static checks as tests: mypy (strict) and ruff must pass; skipped when a tool is not installed.

One mypy run checks what ``[tool.mypy]`` in pyproject.toml names (the SDK and the server) and
every test file, all with its settings (strict).
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import subprocess
import sys
import tokenize
import tomllib
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


def typed_test_files() -> list[str]:
    """Every Python file under tests/, relative to the root."""
    return [str(path.relative_to(ROOT)) for path in sorted((ROOT / "tests").rglob("*.py"))]


@pytest.fixture(scope="module")
def mypy_errors() -> list[str]:
    """The error lines of one mypy run over the configured files and the tests.

    One run, not one per test: it reads the SDK and the server once, and keeps one cache (runs with other options
    would each invalidate the other's).
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
    assert "tests/test_quality.py" in files and "tests/league/test_lobby.py" in files
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


SILENCER = re.compile(r"(type:\s*ignore(\[[^\]]*\])?|noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?)(?P<reason>.*)$")
"""A ``type: ignore`` or ``noqa`` comment, with what follows its codes: the reason it is there."""


def silencers_without_a_reason(paths: list[Path], root: Path = ROOT) -> list[str]:
    """``file:line: comment`` for each ``# type: ignore`` or ``# noqa`` comment (not string) that says nothing after its codes."""
    found = []
    for path in paths:
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        for token in tokens:
            if token.type == tokenize.COMMENT and (match := SILENCER.search(token.string)) and not match["reason"].strip(" #-:()"):
                found.append(f"{path.relative_to(root)}:{token.start[0]}: {token.string}")
    return found


def test_every_type_ignore_and_noqa_says_why() -> None:
    python = [
        path
        for part in ("sdk", "server", "tests", "benchmarks", "scripts", "sample_bots")
        for path in sorted((ROOT / part).rglob("*.py"))
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py")) and "node_modules" not in path.parts
    ]
    assert len(python) > 300
    assert silencers_without_a_reason(python) == []


def test_a_silencer_without_a_reason_is_found(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    lines = ["x = 1  # type: ignore[assignment]", "y = 2  # noqa: E501", "z = 3  # noqa: E501 (a table row)", 's = "# type: ignore"']
    sample.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [line.split(": ", 1)[0] for line in silencers_without_a_reason([sample], tmp_path)] == ["sample.py:1", "sample.py:2"]
