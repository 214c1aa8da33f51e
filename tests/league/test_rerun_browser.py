"""The replay page's rerun form in Chromium: a signed-in author reruns a hand of their match and finds the result on their page."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from playwright.sync_api import Browser, expect  # after the skip above

from tests.league.chromium import launched_chromium
from tests.league.test_test_runs import MATCH, Arena
from tests.test_web_browser import VIEWPORT  # skips this module where Chromium or Playwright is missing
from tests.web_server import served

T = TypeVar("T")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launched_chromium()


def _in_a_thread(work: Callable[[], T]) -> T:
    """Run ``work`` in a thread of its own: it starts an event loop, and Playwright's runs in this one."""
    done: list[T] = []
    worker = threading.Thread(target=lambda: done.append(work()))
    worker.start()
    worker.join(timeout=300)
    assert done, "the work failed or did not end: see its thread's traceback above"
    return done[0]


def test_an_author_reruns_the_hand_on_show_and_follows_it_to_the_replay(tmp_path: Path, browser: Browser) -> None:
    arena = _in_a_thread(lambda: Arena(tmp_path, "reruns_per_hour = 10"))
    try:
        with served(arena.app) as url:
            anonymous = browser.new_page(viewport=VIEWPORT)
            anonymous.goto(f"{url}/matches/{MATCH}")
            expect(anonymous.locator("#viewer")).to_be_visible()
            assert anonymous.locator("#rerun-form").count() == 0 and anonymous.locator("#rerun-here").count() == 0
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.goto(f"{url}/signin")
            page.fill("input[name=token]", arena.tokens["ada"])
            with page.expect_navigation(url=f"{url}/me", timeout=60_000):
                page.click("#signin button[type=submit]")
            page.goto(f"{url}/matches/{MATCH}#hand=2")
            expect(page.locator("#rerun-form")).to_be_visible()
            page.select_option("#rerun-form select[name=version]", "ada-bot@2")
            with page.expect_navigation(url=re.compile(r"/me/reruns/\d+$"), timeout=60_000):
                page.click("#rerun-here")
            expect(page.locator("#test-run-state")).to_have_text("queued")
            assert "ada-bot@2 in main-000000 from hand 2" in page.inner_text("body")
            assert _in_a_thread(arena.play_queued) == 1
            page.reload()
            expect(page.locator("#viewer")).to_be_visible()
            assert "Test match" in page.inner_text(".test-run") and "finished" in page.inner_text(".test-run")
            page.goto(f"{url}/me")
            expect(page.locator("#my-test-runs")).to_contain_text("ada-bot@2")
            # Another author's session sees neither the test match nor ada's versions in the form.
            bob = browser.new_context(viewport=VIEWPORT).new_page()
            bob.goto(f"{url}/signin")
            bob.fill("input[name=token]", arena.tokens["bob"])
            with bob.expect_navigation(url=f"{url}/me", timeout=60_000):
                bob.click("#signin button[type=submit]")
            assert bob.locator("#my-test-runs").count() == 0
            bob.goto(f"{url}/me/reruns/1")
            assert "you have no test match" in bob.inner_text("body")
    finally:
        arena.league.store.close()
