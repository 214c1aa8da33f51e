"""The web face in a real browser: Playwright driving Debian's Chromium (headless) against ``polignac web`` served by
uvicorn on port 0 and against the ``polignac report`` static site opened from the file system, both over a store
filled by a real small tournament.  The leaderboard shows the bots in rating order, the bot page draws its SVG chart,
the crosstable has coloured cells, and the replay viewer steps forward through a whole hand and back (buttons and
arrow keys) showing the engine's trick winners.  Screenshots of the leaderboard and the replay viewer are saved in the
test's temporary folder; with ``POLIGNAC_UPDATE_SCREENSHOTS=1`` one of each replaces its copy in ``docs/screenshots/``
(a test run does not otherwise touch the repository).

Playwright's own browser download does not work here: the tests use ``/usr/bin/chromium`` (Debian's ``chromium``
package, installed by ``.ci/run``; ``$POLIGNAC_CHROMIUM`` names another) and are skipped when it or the ``playwright``
package is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.replay import replay_lines
from polignac_arena.store import Store
from polignac_arena.web import create_app
from polignac_arena.web.pages import slug
from polignac_arena.web.report import write_report
from tests.test_web_api import build_store
from tests.web_server import served

try:
    from playwright.sync_api import Browser, Page, Playwright, ViewportSize, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    pytest.skip("the playwright package is not installed (pip install -e '.[test]')", allow_module_level=True)

CHROMIUM = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))
if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium', installed by .ci/run)", allow_module_level=True)


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT: ViewportSize = {"width": 1000, "height": 700}  # small screenshots
DOCS_SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


# -- the store, the server, the static site and the browser ---------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("browser") / "arena.db")


@pytest.fixture(scope="module")
def server_url(db: Path) -> Iterator[str]:
    """``polignac web``'s app served by uvicorn on 127.0.0.1, port 0, in a background thread."""
    with served(create_app(db)) as url:
        yield url


@pytest.fixture(scope="module")
def site(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``polignac report``'s static site."""
    out = tmp_path_factory.mktemp("report") / "site"
    with Store(db, create=False) as store:
        assert write_report(store, out) > 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = _launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


def _launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


@dataclass(frozen=True)
class Target:
    """Where each page is: on the live server or in the static report (file://)."""

    kind: str
    base: str

    def url(self, page: str, name: str = "") -> str:
        if self.kind == "server":
            paths = {"home": "/", "tournament": f"/tournaments/{name}", "bot": f"/bots/{name}",
                     "crosstable": f"/crosstable?tournament={name}", "replay": f"/matches/{name}"}  # fmt: skip
        else:
            paths = {"home": "/index.html", "tournament": f"/tournaments/{slug(name)}.html", "bot": f"/bots/{slug(name)}.html",
                     "crosstable": f"/crosstable/t-{slug(name)}.html", "replay": f"/matches/{slug(name)}.html"}  # fmt: skip
        return self.base + paths[page]


@pytest.fixture(scope="module", params=["server", "report"])
def target(request: pytest.FixtureRequest) -> Target:
    if request.param == "server":
        return Target("server", request.getfixturevalue("server_url"))
    return Target("report", request.getfixturevalue("site").as_uri())


@pytest.fixture
def page(browser: Browser, target: Target) -> Iterator[Page]:
    """A fresh page; the test fails on any script error or any request that leaves the server or the site."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    errors: list[str] = []
    outside: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.on("request", lambda req: None if req.url.startswith(target.base) else outside.append(req.url))
    tab.on("response", lambda resp: errors.append(f"{resp.status} {resp.url}") if resp.status >= 400 else None)
    tab.route("**/favicon.ico", lambda route: route.fulfill(status=204))  # the browser asks for one; the app has none
    try:
        yield tab
    finally:
        context.close()
    assert not errors, errors
    assert not outside, outside


def expected_board(db: Path, tournament: str | None) -> list[str]:
    with Store(db, create=False) as store:
        tid = None
        if tournament is not None:
            found = store.get_tournament(tournament)
            assert found is not None
            tid = found.id
        return [row.bot for row in store.leaderboard(tid)]


def first_match(db: Path) -> tuple[str, list[dict[str, Any]]]:
    """The first match of the real tournament and its engine events (the record re-run)."""
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        result = store.list_results(small.id)[0]
        full = store.get_result(result.match_id)
        assert full is not None and full.record is not None
    replay = replay_lines(full.record)
    assert replay.divergence is None
    return result.match_id, [event.to_dict() for event in replay.match.events]


def save_screenshot(tab: Page, tmp_path: Path, name: str, target: Target) -> None:
    shot = tmp_path / f"{name}.png"
    tab.screenshot(path=str(shot))
    assert shot.stat().st_size > 1000
    if target.kind == "server" and os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_SCREENSHOTS / f"{name}.png")


# -- the page checks (each runs against the server and against the static report) -----------------


def rating_column(tab: Page) -> list[float]:
    """The "rating" column (mu - 3 sigma) of the leaderboard, as displayed."""
    index = tab.locator("#leaderboard thead th").all_inner_texts().index("rating")
    cells = tab.locator("#leaderboard tbody tr.bot-row").evaluate_all(f"rows => rows.map(r => r.cells[{index}].textContent)")
    return [float(str(text).replace("\u2212", "-")) for text in cells]


def test_leaderboards_show_the_bots_in_rating_order(page: Page, target: Target, db: Path, tmp_path: Path) -> None:
    for url, tournament in ((target.url("tournament", "small"), "small"), (target.url("home"), None)):
        page.goto(url)
        rows = page.locator("#leaderboard tbody tr.bot-row")
        shown = rows.evaluate_all("rows => rows.map(r => r.getAttribute('data-bot'))")
        assert shown == expected_board(db, tournament), url
        names = [bot.split("@")[0] for bot in shown]
        assert [text.strip() for text in page.locator("#leaderboard tbody tr.bot-row td:nth-child(2)").all_inner_texts()] == names
        ratings = rating_column(page)
        assert len(ratings) == len(shown) and ratings == sorted(ratings, reverse=True), ratings
        assert page.locator("#leaderboard").is_visible()
    save_screenshot(page, tmp_path, "leaderboard", target)  # the all-time leaderboard, with the tournaments
    # a bot's link leads to its page (relative links in the report, absolute on the server)
    page.locator("#leaderboard tbody tr.bot-row td:nth-child(2) a").first.click()
    page.wait_for_load_state()
    assert page.locator("svg.rating-chart").count() >= 1


def test_bot_page_shows_an_svg_rating_chart(page: Page, target: Target) -> None:
    page.goto(target.url("bot", "random"))
    charts = page.locator("svg.rating-chart")
    assert charts.count() == 2  # one per tournament
    chart = charts.first
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    for part in (".mu-line", ".sigma-band"):
        assert chart.locator(part).count() >= 1
        part_box = chart.locator(part).first.bounding_box()
        assert part_box is not None and part_box["width"] > 0, part
    assert page.locator("#versions").is_visible() and page.locator("#places").is_visible()


def test_crosstable_renders_with_coloured_cells(page: Page, target: Target) -> None:
    page.goto(target.url("crosstable", "small"))
    table = page.locator("#crosstable")
    assert table.is_visible()
    cells = table.locator("td[data-p]")
    assert cells.count() == 6  # 3 bots: every ordered pair
    found = cells.evaluate_all(
        "cells => cells.map(c => [Number(c.getAttribute('data-p')), getComputedStyle(c).backgroundColor, c.textContent])"
    )
    colours = set()
    for p, colour, text in found:
        assert 0 < p < 1 and text.strip().startswith(f"{p * 100:.0f}%")
        assert colour.startswith("rgb") and colour not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), colour
        colours.add(colour)
    assert len(colours) > 1  # coloured by the probability, not one flat colour


def test_replay_viewer_steps_through_a_hand_and_back_with_the_engine_winners(page: Page, target: Target, db: Path, tmp_path: Path) -> None:
    match_id, events = first_match(db)
    page.goto(target.url("replay", match_id))

    def step() -> int:
        return int(page.evaluate("window.polignacReplay.step()"))

    assert step() == 1 and page.locator("#position").inner_text() == f"step 1 / {len(events)}"  # opens on the deal
    page.evaluate("window.polignacReplay.go(0)")
    assert page.evaluate("window.polignacReplay.events") == events  # the engine's events, re-run from the record
    end_of_hand = next(i for i, e in enumerate(events) if e["event"] == "hand_ended") + 1
    engine_winners = [e["winner"] for e in events[:end_of_hand] if e["event"] == "trick_won"]
    assert engine_winners

    shown_winners: list[int] = []
    page.locator("body").click(position={"x": 5, "y": 5})  # the page has the keyboard focus
    while step() < end_of_hand:
        before = step()
        if before % 2:
            page.keyboard.press("ArrowRight")
        else:
            page.click("#next")
        assert step() == before + 1
        if events[before]["event"] == "trick_won" and events[before]["trick_number"] == 4:
            save_screenshot(page, tmp_path, "replay", target)  # mid-hand: cards in hand, the trick on the table
        if events[before]["event"] == "trick_won":
            last = page.locator("#tricks li").last
            assert "current" in (last.get_attribute("class") or "")
            shown_winners.append(int(last.get_attribute("data-winner") or "-1"))
            assert page.locator("#caption").inner_text().startswith(f"Trick {events[before]['trick_number']} won by")
        if before == 0:  # after the deal every seat holds its hand, suits in their colours
            assert page.locator("#table .seat").count() == len(events[0]["hands"])
            assert page.locator("#table .card").count() == sum(len(hand) for hand in events[0]["hands"])
            assert page.locator("#table .card.red").count() > 0 and page.locator("#table .card.black").count() > 0
    assert shown_winners == engine_winners and (tmp_path / "replay.png").is_file()
    shown = page.locator("#tricks li").evaluate_all("items => items.map(li => Number(li.getAttribute('data-winner')))")
    assert shown == engine_winners
    assert page.locator("#results tr").count() == 2  # the header and the first hand's result
    assert page.locator("#caption").inner_text().startswith(f"Hand {events[end_of_hand - 1]['hand_number']} ends")

    while step() > 0:
        before = step()
        if before % 2:
            page.keyboard.press("ArrowLeft")
        else:
            page.click("#prev")
        assert step() == before - 1
        tricks_so_far = sum(1 for e in events[: before - 1] if e["event"] == "trick_won" and _same_hand(events, e, before - 1))
        assert page.locator("#tricks li").count() == tricks_so_far
    assert page.locator("#position").inner_text() == f"step 0 / {len(events)}"
    page.click("#last")
    assert step() == len(events) and page.locator("#caption").inner_text().startswith("Match over")
    page.keyboard.press("Home")
    assert step() == 0
    page.keyboard.press("End")
    assert step() == len(events)
    page.click("#first")
    assert step() == 0


def _same_hand(events: list[dict[str, Any]], event: dict[str, Any], applied: int) -> bool:
    """Whether ``event`` belongs to the hand being shown after ``applied`` events (a deal clears the trick list)."""
    deals = [i for i, e in enumerate(events[:applied]) if e["event"] == "hand_dealt"]
    return not deals or events.index(event) > deals[-1]
