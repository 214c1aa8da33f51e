"""Live pages: /api/stamp changes when a result is stored, the pages carry the stamp they were drawn with, and in
Chromium (Playwright, Debian's browser as in tests/test_web_browser.py) the leaderboard, a tournament page, a bot page
and the match list redraw themselves when the test writes a result into the store, without a reload; the rating trend
is drawn as a sparkline."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from polignac_arena.ratings import RatingEnv
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from polignac_arena.web import create_app
from polignac_arena.web.live import stamp
from polignac_arena.web.pages import _trend
from polignac_arena.web.svg import sparkline
from tests.test_web_api import _rate, build_store
from tests.web_server import served

CHROMIUM = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))
_NAMES = count()


def add_result(db: Path, seats: tuple[str, ...] = ("random@builtin", "heuristic@builtin"), places: tuple[int, ...] = (2, 1)) -> str:
    """A new one-match tournament with its result, as a runner writing while the server reads; its name."""
    name = f"live-{next(_NAMES)}"
    with Store(db, create=False) as writer:
        tid = writer.create_tournament(name, {"format": "round-robin"}, [Fixture(0, seats, 7)])
        writer.record_result(
            tid, 0, match_id=f"{name}-0", status=MatchStatus.FINISHED, places=list(places), totals=[3, 0][: len(seats)], hands=1,
            faults=[{} for _ in seats], rate=_rate(RatingEnv()),
        )  # fmt: skip
    return name


# -- the stamp and the pages' marks ------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store for the module: each test that writes adds its own tournament, and checks what changed."""
    return build_store(tmp_path_factory.mktemp("live") / "arena.db")


def test_the_stamp_changes_with_each_result(live_db: Path) -> None:
    db = live_db
    with TestClient(create_app(db, live_poll_s=2)) as client:
        before = client.get("/api/stamp").json()
        assert before["last_result"] > 0 and [t["name"] for t in before["tournaments"]][:2] == ["small", "faulty"]
        assert client.get("/api/stamp").json() == before  # nothing stored: the same stamp
        home = client.get("/").text
        assert f'data-live-stamp="{before["key"]}"' in home and 'data-live-poll="2000"' in home and "/static/live.js" in home
        for url in ("/tournaments/small", "/bots/random", "/matches"):
            assert 'data-live-poll="2000"' in client.get(url).text, url
        assert "live.js" not in client.get("/crosstable").text  # not a live page
        add_result(db)
        after = client.get("/api/stamp").json()
    assert after["key"] != before["key"] and after["last_result"] > before["last_result"]
    assert len(after["tournaments"]) == len(before["tournaments"]) + 1 and after["tournaments"][-1]["rated"] == 1
    assert stamp(db) == type(stamp(db)).model_validate(after)


def test_polling_can_be_turned_off_and_a_bad_interval_is_refused(live_db: Path) -> None:
    db = live_db
    with TestClient(create_app(db, live_poll_s=0)) as client:
        assert "data-live-poll" not in client.get("/").text and "live.js" not in client.get("/").text
    for bad in (-1.0, 0.01, 1e6):
        with pytest.raises(ValueError, match="live_poll_s must be"):
            create_app(db, live_poll_s=bad)


def test_the_static_report_is_not_live(live_db: Path, tmp_path: Path) -> None:
    from polignac_arena.web.report import write_report

    with Store(live_db, create=False) as store:
        write_report(store, tmp_path / "site")
    assert "data-live-poll" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_the_trend_is_a_sparkline_and_a_change() -> None:
    assert sparkline([25.0]) == "" and str(_trend([])) == "" and str(_trend(None)) == ""
    up = str(_trend([20.0, 22.5, 24.0]))
    assert up.startswith("<svg") and 'class="sparkline up"' in up and "▲4.0" in up
    assert 'class="sparkline down"' in str(_trend([24.0, 20.0])) and "▼4.0" in str(_trend([24.0, 20.0]))
    flat = sparkline([3.0, 3.0, 3.0])
    assert 'class="sparkline flat"' in flat and len(re.findall(r"\d+\.\d,\d+\.\d", flat)) == 3


def test_the_league_page_is_live_and_a_started_match_changes_the_stamp(tmp_path: Path) -> None:
    from polignac_arena.league.config import parse_league_config
    from polignac_arena.league.serve import League, league_app

    league = League(parse_league_config('name = "live"\ntable_size = 3\n', tmp_path / "league.toml"))
    try:
        with TestClient(league_app(league)) as client:
            before = client.get("/api/stamp").json()
            assert f'data-live-stamp="{before["key"]}"' in client.get("/league").text
            league.store.schedule(league.tournament_id, ["a@1", "b@1", "c@1"], 2)  # the ladder starts a match
            after = client.get("/api/stamp").json()
            assert after["last_fixture"] > before["last_fixture"] and after["key"] != before["key"]
            assert 'id="league-live" data-live' in client.get("/league").text
    finally:
        league.store.close()


def test_a_stamp_reader_keeps_one_connection_and_reports_a_missing_store(live_db: Path, tmp_path: Path) -> None:
    from polignac_arena.store import StoreError
    from polignac_arena.web.live import StampReader

    db = live_db
    reader = StampReader(db)
    first = reader.read()
    add_result(db)
    assert reader.read().last_result > first.last_result  # a kept connection still sees later writes
    reader.close()
    with pytest.raises(StoreError, match="cannot read the store"):
        StampReader(tmp_path / "missing.db").read()


# -- in the browser (last in the module: Playwright's loop stays in this thread until it ends) -------


@pytest.fixture(scope="module")
def server_url(live_db: Path) -> Iterator[str]:
    with served(create_app(live_db, live_poll_s=0.2)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium', installed by .ci/run)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.mark.slow
def test_pages_redraw_when_a_result_is_stored(live_db: Path, server_url: str, browser: object) -> None:
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.on("request", lambda req: None if req.url.startswith(server_url) else errors.append("left the server: " + req.url))
    tab.route("**/favicon.ico", lambda route: route.fulfill(status=204))  # the browser asks for one; the app has none
    try:
        # the all-time leaderboard: a new tournament's row appears, and the bots' match counts grow
        tab.goto(server_url + "/tournaments/small")
        expect(tab.locator("#leaderboard td.trend svg.sparkline")).to_have_count(3)  # each bot's rating trend
        tab.goto(server_url + "/")
        matches = tab.locator('#leaderboard tr[data-bot="random@builtin"] td').nth(8)
        before = int(matches.inner_text())
        name = add_result(live_db)
        expect(tab.locator("#board-live table.board a", has_text=name)).to_be_visible(timeout=15_000)
        expect(matches).to_have_text(str(before + 1))
        expect(tab.locator("nav a.tournament", has_text=name)).to_be_visible()
        assert tab.evaluate("document.body.dataset.liveRedraws") is not None

        # a tournament page, while its tournament runs: its second result shows up
        with Store(live_db, create=False) as writer:
            seats = ("random@builtin", "cautious@builtin")
            tid = writer.create_tournament("running", {"format": "round-robin"}, [Fixture(0, seats, 1), Fixture(1, seats[::-1], 2)])
            writer.record_result(tid, 0, match_id="running-0", status=MatchStatus.FINISHED, places=[1, 2], totals=[0, 5], hands=1,
                                 faults=[{}, {}], rate=_rate(RatingEnv()))  # fmt: skip
        tab.goto(server_url + "/tournaments/running")
        expect(tab.locator(".summary")).to_contain_text("1 of 2 matches played")
        with Store(live_db, create=False) as writer:
            writer.record_result(tid, 1, match_id="running-1", status=MatchStatus.FINISHED, places=[1, 2], totals=[0, 5], hands=1,
                                 faults=[{}, {}], rate=_rate(RatingEnv()))  # fmt: skip
        expect(tab.locator(".summary")).to_contain_text("2 of 2 matches played", timeout=15_000)
        expect(tab.locator('#leaderboard tr[data-bot="cautious@builtin"] td').nth(8)).to_have_text("2")

        # the bot page and the match list
        tab.goto(server_url + "/bots/cautious")
        recent = tab.locator("#bot-live table.matches tbody tr")
        shown = recent.count()
        name = add_result(live_db, ("cautious@builtin", "heuristic@builtin"))
        expect(recent).to_have_count(shown + 1, timeout=15_000)
        expect(tab.locator("#bot-live table.matches", has_text=f"{name}-0")).to_be_visible()

        tab.goto(server_url + "/matches")
        listed = tab.locator("#matches-live table.matches tbody tr")
        total = listed.count()
        tab.fill("input[name=bot]", "random")  # the filter form is not redrawn: a half-filled form stays
        name = add_result(live_db)
        expect(listed).to_have_count(total + 1, timeout=15_000)
        expect(listed.first).to_contain_text(f"{name}-0")
        assert tab.locator("input[name=bot]").input_value() == "random"
    finally:
        context.close()
    assert not errors, errors
