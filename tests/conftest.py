"""Test-wide settings and the fixtures several test modules share."""

from __future__ import annotations

import pytest

from polignac_arena.submission import Submission
from tests.sample_builds import built

# The hostile bots are programs to run inside sandboxes, not modules to import:
# --doctest-modules would start them.
collect_ignore_glob = ["hostile/bots/*"]


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    """sample_bots/c_stdio built once per session (skips without gcc)."""
    return built("c_stdio", tmp_path_factory, ("gcc",))


@pytest.fixture(scope="session")
def js_bot(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    """sample_bots/javascript built once per session (skips without node and npm)."""
    return built("javascript", tmp_path_factory, ("node", "npm"))
