"""One headless Chromium per test module for the league's browser tests (importing this skips the module where Chromium
or Playwright is missing, as tests/test_web_browser.py does)."""

from __future__ import annotations

from collections.abc import Iterator

from tests.test_web_browser import CHROMIUM, CHROMIUM_ARGS  # skips the importing module where Chromium is missing

from playwright.sync_api import Browser, sync_playwright  # isort: skip  # after the skip above


def launched_chromium() -> Iterator[Browser]:
    """A Chromium for a module fixture to yield from; closed when the fixture ends."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
