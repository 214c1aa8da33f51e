"""In Chromium: a signed-in author opens a match their bot lost and reads its debug text beside the step; a visitor reads none.

The league of ``tests/league/test_note_privacy.py`` (a real match, seat 0 ada's bot, which
came second) is served by uvicorn on a loopback port the OS chooses and driven by Playwright
in Debian's Chromium (skipped with a reason when either is missing, as the other browser tests).
With ``POLIGNAC_UPDATE_SCREENSHOTS=1`` the author's replay page with the note shown replaces
``docs/screenshots/replay-notes.png``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from tests.league.test_note_privacy import MATCH_ID, SECRETS, Site

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')")
CHROMIUM = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium', installed by .ci/run)", allow_module_level=True)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Site, str]]:
    site = Site(tmp_path)
    server = uvicorn.Server(uvicorn.Config(site.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        yield site, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        site.league.store.close()


def test_the_author_reads_their_bots_debug_beside_the_step_of_a_lost_match_and_a_visitor_reads_none(served: tuple[Site, str]) -> None:
    site, base = served
    assert site.places is not None and site.places[0] > 1  # ada's bot, seat 0, lost this match
    debug, stderr = SECRETS["ada"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            author = browser.new_context().new_page()
            author.goto(f"{base}/signin")
            author.fill("input[name=token]", site.tokens["ada"])
            author.click("#signin button")
            author.wait_for_url(f"{base}/me")
            author.click(f"a:text-is('{MATCH_ID}')")  # the lost match, from the author's page
            author.wait_for_selector("#notes #note-body")
            author.click("#next-note")
            author.wait_for_selector("#note-body .note-debug")
            step = author.inner_text("#position")
            note = author.inner_text("#note-body")
            caption = author.inner_text("#caption")
            # The note is the decision just shown: the step's number is its event's plus one.
            shown = author.evaluate("window.polignacReplay.events[window.polignacReplay.step() - 1]")
            if os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1":
                author.screenshot(path=str(SCREENSHOTS / "replay-notes.png"), full_page=True)
            author.click("#next")
            after = author.inner_text("#note-body")

            visitor = browser.new_context().new_page()
            visitor.goto(f"{base}/matches/{MATCH_ID}")
            visitor.wait_for_selector("#caption")
            visitor.click("#last")
            anonymous_html = visitor.content()
            anonymous_panel = visitor.locator("#notes").count()
        finally:
            browser.close()
    assert step.startswith("step ") and debug in note and stderr in note and caption
    assert "Hand 1, auction" in note or "Hand 1, trick 1" in note, note
    assert shown["seat"] == 0 and shown["event"] in ("declared", "card_played")
    assert SECRETS["bob"][0] not in note  # another author's bot's notes never reach ada
    assert after != note  # the next step is another seat's: no note of ada's bot there
    assert anonymous_panel == 0
    for secret in (*SECRETS["ada"], *SECRETS["bob"]):
        assert secret not in anonymous_html
