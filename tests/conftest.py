"""Test-wide settings and the fixtures several test modules share."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from polignac_arena.executors.node import CACHE_ENV
from polignac_arena.submission import Submission
from polignac_arena.templates import TEMPLATE_LANGUAGES
from tests.kits import start_checking_kits, stop_checking_kits
from tests.reaper import start_reaper
from tests.sample_builds import built

# The hostile bots are programs to run inside sandboxes, not modules to import:
# --doctest-modules would start them.
collect_ignore_glob = ["hostile/bots/*"]


def pytest_configure(config: pytest.Config) -> None:
    """Every process the run starts dies with it, even when it is interrupted (tests/reaper.py)."""
    start_reaper()


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    """sample_bots/c_stdio built once per session (skips without gcc)."""
    return built("c_stdio", tmp_path_factory, ("gcc",))


@pytest.fixture(scope="session")
def js_bot(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    """sample_bots/javascript built once per session (skips without node and npm)."""
    return built("javascript", tmp_path_factory, ("node", "npm"))


@pytest.fixture(scope="session", autouse=True)
def machine_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Where matches' submissions are unpacked and built (executors.node.cache_root): this session's temp dir, not the home
    folder; the runners a test starts as subprocesses inherit it.  A test may point it elsewhere (monkeypatch.setenv)."""
    if CACHE_ENV in os.environ:
        yield
        return
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("machine-cache"))
    try:
        yield
    finally:
        os.environ.pop(CACHE_ENV, None)


@pytest.fixture(scope="session", autouse=True)
def kits_checked_in_the_background(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, machine_cache: None
) -> Iterator[None]:
    """When the run includes tests/test_kits.py, the starter kits' builds and checks (minutes of compilers and conformance
    runs, mostly waiting) start with the session and go on beside the other tests (tests/kits.py)."""
    if any(item.path.name == "test_kits.py" for item in request.session.items):
        start_checking_kits(TEMPLATE_LANGUAGES, tmp_path_factory)
    try:
        yield
    finally:
        stop_checking_kits()
