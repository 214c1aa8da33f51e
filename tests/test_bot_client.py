"""The SDK's connection: clear messages when the environment or the referee is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from polignac.bot import BotConnectionError, run_async
from polignac.bots import RandomBot
from tests.aio import run_sync


def test_missing_environment_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLIGNAC_ADDRESS", raising=False)
    monkeypatch.delenv("POLIGNAC_TOKEN", raising=False)
    with pytest.raises(BotConnectionError, match="POLIGNAC_ADDRESS and POLIGNAC_TOKEN not set"):
        run_sync(run_async(RandomBot()))


def test_unreachable_referee_is_explained(tmp_path: Path) -> None:
    with pytest.raises(BotConnectionError, match=r"cannot reach the referee at .* is it running"):
        run_sync(run_async(RandomBot(), f"unix:{tmp_path}/nobody.sock", "token", connect_timeout=0.5))


def test_a_bot_script_without_environment_exits_1_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "polignac.bots", "random"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "POLIGNAC_ADDRESS" in done.stderr


def test_unknown_builtin_name_is_a_usage_message() -> None:
    done = subprocess.run([sys.executable, "-m", "polignac.bots", "nope"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and "usage: python -m polignac.bots" in done.stderr
