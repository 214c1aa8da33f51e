"""The starter kits of ``polignac bot new``, made and checked once per test session (tests/test_kits.py).

For each language, :func:`checked_kit` runs what an author runs: ``polignac bot new``, the
kit's one networked step (``npm ci`` for the Node kits), then ``polignac bot check DIR
--conformance --json`` as a command of its own, which builds the kit in its sandbox (offline),
plays the smoke match and the conformance report.  A kit whose toolchain is missing skips
with the reason; ``.ci/run`` installs every one.  The kits are built and checked side by side in
threads, started as the session starts (tests/conftest.py), while the other tests run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
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


KIT_WORKERS = 3
"""Kits checked at once: their builds and conformance runs wait on compilers and bot processes as much as on the CPU."""
SLOWEST_FIRST = ("cpp", "typescript", "javascript", "rust", "python", "java", "c", "go")
"""The order the kits start in, the longest builds first, so that the last to finish is a short one."""

_kits: dict[str, Future[Kit]] = {}
_running: set[subprocess.Popen[str]] = set()
_stopping = threading.Event()


def start_checking_kits(langs: Iterable[str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Make every kit of ``langs`` whose toolchain is here (in this thread), and build and check them in threads meanwhile.

    Their commands get this moment's environment and working folder, whatever a test running meanwhile changes in its own
    process.  :func:`checked_kit` waits for its own kit; a kit's failure is raised there, in the test that asks for it.
    """
    env = dict(os.environ)
    pool = ThreadPoolExecutor(max_workers=KIT_WORKERS, thread_name_prefix="kit")
    for lang in sorted(langs, key=lambda lang: SLOWEST_FIRST.index(lang) if lang in SLOWEST_FIRST else len(SLOWEST_FIRST)):
        if lang in _kits or missing_toolchain(lang):
            continue
        folder = tmp_path_factory.mktemp("kits") / f"{lang}-kit"
        made = CliRunner().invoke(app, ["bot", "new", f"{lang}-kit", "--lang", lang, "--dir", str(folder)], catch_exceptions=False)
        if made.exit_code != 0:
            failed: Future[Kit] = Future()
            failed.set_exception(AssertionError(f"polignac bot new failed for {lang}:\n{made.output}"))
            _kits[lang] = failed
            continue
        _kits[lang] = pool.submit(_built_and_checked, lang, folder, made.output, env)
    pool.shutdown(wait=False)


def stop_checking_kits() -> None:
    """Kill the kits' commands still running (the session ends): no thread is left waiting for them."""
    _stopping.set()
    for process in list(_running):
        process.kill()


def checked_kit(lang: str, tmp_path_factory: pytest.TempPathFactory) -> Kit:
    """The kit of ``lang``, made, built and checked once per session (skips without its toolchain)."""
    problem = missing_toolchain(lang)
    if problem:
        pytest.skip(problem)
    if lang not in _kits:
        start_checking_kits([lang], tmp_path_factory)
    return _kits[lang].result()


def _built_and_checked(lang: str, folder: Path, new_output: str, env: dict[str, str]) -> Kit:
    if lang in PREPARE:  # the kit's one step with the network, as its README says
        command = [*PREPARE[lang].split(), "--no-audit", "--no-fund"]
        done = _run(command, folder, {**env, "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}, 600)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    command = [sys.executable, "-m", "polignac_arena.cli", "bot", "check", str(folder), "--conformance", "--json"]
    done = _run(command, ROOT, env, 900)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"bot check --json printed no JSON (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        ) from None
    return Kit(lang, folder, load_submission(folder), new_output, report, done.stderr)


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    if _stopping.is_set():
        raise AssertionError("the test session ended before this kit was checked")
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        _running.add(process)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            err += f"\n(killed after {timeout:.0f} s)"
        finally:
            _running.discard(process)
    return subprocess.CompletedProcess(command, process.returncode, out, err)
