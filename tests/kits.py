"""The starter kits of ``polignac bot new``, made and checked once per test session (tests/test_kits.py).

For each language, :func:`checked_kit` runs what an author runs: ``polignac bot new``, the
kit's one networked step (``npm ci`` for the Node kits), then ``polignac bot check DIR
--conformance --json`` as a command of its own, which builds the kit in its sandbox (offline),
plays the smoke match and the conformance report.  A kit whose toolchain is missing skips
with the reason; ``.ci/run`` installs every one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from polignac_arena.cli import app
from polignac_arena.submission import Submission, load_submission
from polignac_arena.templates import PREPARE

ROOT = Path(__file__).resolve().parents[1]
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The PATH a build step and a bot get in the sandbox (polignac_arena.seats.bwrap.sandbox_env, but the Python's own)."""
TOOLS: dict[str, tuple[str, ...]] = {
    "python": (),
    "javascript": ("node", "npm"),
    "typescript": ("node", "npm"),
    "c": ("gcc",),
    "cpp": ("g++", "make", "pkg-config", "protoc", "grpc_cpp_plugin"),
    "go": ("go",),
    "rust": ("cargo", "rustc"),
    "java": ("javac", "jar", "java", "make"),
}
FILES: dict[str, tuple[str, ...]] = {
    "c": ("/usr/lib/x86_64-linux-gnu/libc.a",),
    "cpp": ("/usr/lib/x86_64-linux-gnu/libgrpc++.a", "/usr/include/grpcpp/grpcpp.h"),
    "rust": ("/usr/share/cargo/registry",),
    "java": ("/usr/share/java/gson.jar",),
}
"""Files a kit's build needs beyond its tools (Debian's paths: the packages .ci/run installs)."""


def missing_toolchain(lang: str) -> str | None:
    """Why the kit of ``lang`` cannot be built here (as the sandbox sees this machine), or None."""
    tools = [tool for tool in TOOLS[lang] if shutil.which(tool, path=SANDBOX_PATH) is None]
    files = [path for path in FILES.get(lang, ()) if not any(Path(p).exists() for p in (path, path.replace("x86_64", "aarch64")))]
    if lang == "rust" and not list(Path("/usr/share/cargo/registry").glob("serde_json-*")):
        files.append("/usr/share/cargo/registry/serde_json-* (librust-serde-json-dev)")
    if not tools and not files:
        return None
    return f"{', '.join(tools + files)} not installed here: the {lang} kit cannot be built (.ci/run installs it)"


@dataclass(frozen=True)
class Kit:
    """A starter kit made by ``polignac bot new``, built and checked."""

    lang: str
    folder: Path
    submission: Submission
    new_output: str
    check: dict[str, Any]
    """``polignac bot check --conformance --json``'s report."""
    check_stderr: str


_kits: dict[str, Kit] = {}


def checked_kit(lang: str, tmp_path_factory: pytest.TempPathFactory) -> Kit:
    """The kit of ``lang``, made, built and checked once per session (skips without its toolchain)."""
    if lang in _kits:
        return _kits[lang]
    problem = missing_toolchain(lang)
    if problem:
        pytest.skip(problem)
    folder = tmp_path_factory.mktemp("kits") / f"{lang}-kit"
    made = CliRunner().invoke(app, ["bot", "new", f"{lang}-kit", "--lang", lang, "--dir", str(folder)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    if lang in PREPARE:  # the kit's one step with the network, as its README says
        env = {**os.environ, "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
        command = [*PREPARE[lang].split(), "--no-audit", "--no-fund"]
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600, env=env, check=False)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    command = [sys.executable, "-m", "polignac_arena.cli", "bot", "check", str(folder), "--conformance", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"bot check --json printed no JSON (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    kit = Kit(lang, folder, load_submission(folder), made.output, report, done.stderr)
    _kits[lang] = kit
    return kit
