"""In Chromium: an author signs in to a real ``polignac league serve``, uploads a sample bot from their page and watches it validate.

The league runs as a subprocess (its validation workers, sandbox and smoke match are the real
ones); the archive is made with the command the page suggests (``tar -czf`` in the folder).
With ``POLIGNAC_UPDATE_SCREENSHOTS=1`` the author's page after the upload replaces
``docs/screenshots/author-page.png``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.league.chromium import launched_chromium
from tests.league.league_process import LeagueProcess, add_author, bot_folder, write_league
from tests.test_web_browser import VIEWPORT  # skips this module where Chromium or Playwright is missing

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
VALIDATION_MS = 180_000
"""A build and a smoke match in the sandbox, on a loaded machine: generous."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launched_chromium()


def test_an_author_uploads_a_bot_from_their_page_and_follows_its_validation_to_accepted(tmp_path: Path, browser: Browser) -> None:
    config = write_league(tmp_path / "league")
    token = add_author(config, "ada")
    folder = bot_folder(tmp_path / "bots", "ada-bot")
    archive = tmp_path / "ada-bot.tar.gz"
    subprocess.run(["sh", "-c", f"tar -czf {archive} *"], cwd=folder, check=True)
    with LeagueProcess.start(config) as league:
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(f"{league.web}/signin")
        page.fill("input[name=token]", token)
        with page.expect_navigation(url=f"{league.web}/me", timeout=60_000):
            page.click("#signin button[type=submit]")
        expect(page.locator("#no-bots")).to_be_visible()  # nothing yet, and the page says so
        page.fill("#upload input[name=bot]", "ada-bot")
        page.set_input_files("#upload input[name=archive]", str(archive))
        page.click("#upload button[type=submit]")
        expect(page.locator("#upload-log")).to_contain_text("smoke match", timeout=VALIDATION_MS)  # the log, while it grows
        expect(page.locator("#upload-state")).to_contain_text(re.compile(r"ada-bot@\S+: accepted"), timeout=VALIDATION_MS)
        assert "accepted" in page.inner_text("#upload-log")
        row = page.locator("#my-bots tbody tr", has_text="ada-bot")  # the table is fetched again: no reload needed
        expect(row).to_have_count(1)
        expect(row.locator("td.state-active")).to_have_text("active")
        if os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1":
            page.screenshot(path=str(SCREENSHOTS / "author-page.png"), full_page=True)
        page.reload()
        expect(page.locator("#my-bots td.state-active")).to_have_text("active")

        # A bad archive: the page says why, in words.
        bad = tmp_path / "bad.tar.gz"
        bad.write_bytes(b"this is no archive")
        page.set_input_files("#upload input[name=archive]", str(bad))
        page.click("#upload button[type=submit]")
        expect(page.locator("#upload-state")).to_contain_text("Upload refused:", timeout=60_000)
        assert "archive" in page.inner_text("#upload-state")
