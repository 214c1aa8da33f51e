"""The sample bots in other languages built as a submission is: once per test session (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from polignac_arena.protofiles import copy_proto
from polignac_arena.seats import SeatLimits, launcher_for
from polignac_arena.submission import Submission, load_submission
from tests.aio import run_sync

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bots"


def built(name: str, tmp_path_factory: pytest.TempPathFactory, tools: tuple[str, ...]) -> Submission:
    """sample_bots/NAME copied to a temp folder and built by its bot.toml ``build`` step (skips without ``tools``)."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the {name} sample bot cannot be built here")
    folder = tmp_path_factory.mktemp(name) / name
    shutil.copytree(SAMPLES / name, folder, ignore=shutil.ignore_patterns("node_modules", "bot"))
    if (folder / "package-lock.json").is_file():  # the author's steps before submitting: builds run offline
        copy_proto(folder)  # polignac bot proto .: the protocol is never committed beside the sample
        env = {**os.environ, "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
        npm = ["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"]
        done = subprocess.run(npm, cwd=folder, capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, f"{' '.join(npm)} failed in {name}:\n{done.stdout}\n{done.stderr}"
    submission = load_submission(folder)
    build = run_sync(launcher_for("process").build(submission, SeatLimits(), timeout_s=300, trusted=True))
    assert build.ok, f"building {name} ({' '.join(submission.build)}) failed: {build.reason}\n{build.output}"
    return load_submission(folder)
