"""In Chromium: a signed-in person plays a whole match against three built-in bots from the page, by clicking legal cards.

A four-seat league served by uvicorn on a loopback port the OS chooses, its built-ins in the
league's own seats; Playwright drives Debian's Chromium (skipped with a reason when either is
missing, as the other browser tests).  With ``POLIGNAC_UPDATE_SCREENSHOTS=1`` the table
mid-hand replaces ``docs/screenshots/play-table.png``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League, league_app
from tests.league.league_process import add_author, write_league
from tests.league.test_note_privacy import MATCH_ID as NOTES_MATCH
from tests.league.test_note_privacy import Site as NotesSite

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')")
CHROMIUM = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium', installed by .ci/run)", allow_module_level=True)
MATCH_S = 180.0
CLICKABLE = "button.card.legal, button.contract[data-contract=pass], #replay-link"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    config = write_league(tmp_path / "league")
    config.write_text(config.read_text().replace("table_size = 3", "table_size = 4"))
    token = add_author(config, "ada")
    league = League(load_league_config(config))
    settings = uvicorn.Config(league_app(league), host="127.0.0.1", port=0, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(settings)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        yield token, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)
        league.store.close()


def test_a_person_plays_a_whole_match_against_three_built_ins_from_the_page(served: tuple[str, str]) -> None:
    token, base = served
    clicks = 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_context().new_page()
            page.goto(f"{base}/signin")
            page.fill("input[name=token]", token)
            page.click("#signin button")
            page.wait_for_url(f"{base}/me")
            page.click("#play-link")
            page.select_option("select[name=seat1]", "random")
            page.select_option("select[name=seat2]", "heuristic")
            page.select_option("select[name=seat3]", "cautious")
            page.fill("input[name=limit]", "3")
            page.click("#play-start button")
            page.wait_for_selector("#scores tbody tr")
            deadline = time.monotonic() + MATCH_S
            shot = False
            while time.monotonic() < deadline:
                target = page.wait_for_selector(CLICKABLE, timeout=MATCH_S * 1000)
                assert target is not None
                if target.get_attribute("id") == "replay-link":
                    break
                if "legal" in (target.get_attribute("class") or ""):
                    legal = page.eval_on_selector_all("button.card.legal", "buttons => buttons.map(b => b.dataset.card)")
                    state = page.evaluate(f"fetch('{page.url}/state').then(r => r.json())")
                    assert set(legal) <= set(state["legal_cards"]) or state["turn"] is None  # only legal cards are clickable
                    if not shot and os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1" and state["trick"]:
                        page.screenshot(path=str(SCREENSHOTS / "play-table.png"), full_page=True)
                        shot = True
                try:
                    target.click(timeout=5000)
                except sync_api.Error:
                    continue  # the page redrew the hand as the click came: look again
                clicks += 1
            else:
                pytest.fail("the match did not end in time")
            ended = page.inner_text("#ended")
            status = page.inner_text("#status")
            page.click("#replay-link")
            page.wait_for_selector("#caption")
            replay_title = page.inner_text("h1")
        finally:
            browser.close()
    assert clicks >= 8  # at least a whole hand of cards
    assert "Final places" in ended and "ada" in ended
    assert "over (finished)" in status
    assert "random" in replay_title and "cautious" in replay_title


@pytest.fixture
def notes_served(tmp_path: Path) -> Iterator[tuple[NotesSite, str]]:
    site = NotesSite(tmp_path)
    settings = uvicorn.Config(site.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(settings)
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
        thread.join(20)
        site.league.store.close()


def test_play_this_position_from_a_replay_step_seats_the_person_in_that_hand(notes_served: tuple[NotesSite, str]) -> None:
    site, base = notes_served
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_context().new_page()
            page.goto(f"{base}/signin")
            page.fill("input[name=token]", site.tokens["bob"])
            page.click("#signin button")
            page.wait_for_url(f"{base}/me")
            page.goto(f"{base}/matches/{NOTES_MATCH}#hand=1")
            page.wait_for_selector("#caption")
            page.select_option("#play-here-form select[name=seat]", "2")
            page.select_option("#play-here-form select[name=bot]", "cautious")
            page.click("#play-here")
            page.wait_for_url(f"{base}/play/*")
            page.wait_for_selector("button.card.legal, button.contract")
            you = page.inner_text("#seat-2")
            status = page.inner_text("#status")
        finally:
            browser.close()
    assert "(you)" in you
    assert "Your turn (hand 1" in status
