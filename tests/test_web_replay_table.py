"""The replay viewer's table in a real browser: seats round the table, the trick in the middle, running totals.

Matches of 3 to 6 players are played in-process by the built-in bots, stored with their records as the referee
writes them, and opened in the static report (file://) in Debian's Chromium driven by Playwright (skipped as in
``tests/test_web_browser.py`` when either is missing).  A classic 4-player game shows four seats at S, W, N and E
in play order, each card played in front of its seat, whose turn it is, the contract, and totals that change when
a hand ends; a knaves game shows its turned trump card; an eichel-obern game shows German card names with their
suit letters.  With ``POLIGNAC_UPDATE_SCREENSHOTS=1`` the eichel-obern table mid-hand replaces
``docs/screenshots/replay-german.png``, and a classic table at the start of a hand and mid-trick replace
``replay-hand-start.png`` and ``replay-mid-trick.png``.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polignac_arena.statuses import MatchStatus

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    pytest.skip("the playwright package is not installed (pip install -e '.[test]')", allow_module_level=True)

from polignac import Faces, card_name, parse_face, preset
from polignac.bots import builtin_bot
from polignac_arena.players import Player, play_local, random_players
from polignac_arena.schedule import Fixture
from polignac_arena.store import Store
from polignac_arena.web import data
from polignac_arena.web.pages import slug
from polignac_arena.web.report import write_report
from tests.test_web_browser import CHROMIUM, CHROMIUM_ARGS, DOCS_SCREENSHOTS, VIEWPORT  # skips this module as it skips itself
from tests.test_web_faces import record_of

BOTS = ("heuristic", "cautious", "random")
# match id: (ruleset, players, seed); classic-4 is played by the random players, which declare capot now and then
# (seed 7: in hand 1), the others by the built-in bots in turn.
GAMES = {"classic-4": ("classic", 4, 7), "knaves-3": ("knaves", 3, 5), "german-4": ("eichel-obern", 4, 3),
         "classic-5": ("classic", 5, 2), "classic-6": ("classic", 6, 2)}  # fmt: skip


def seat_names(match_id: str) -> list[str]:
    players = GAMES[match_id][1]
    return [f"random{k}@1" if match_id == "classic-4" else f"{BOTS[k % 3]}{k}@1" for k in range(players)]


def players_of(match_id: str) -> list[Player]:
    _name, players, seed = GAMES[match_id]
    if match_id == "classic-4":
        return list(random_players(seed, players))
    return [builtin_bot(BOTS[k % 3], seed=k) for k in range(players)]


PLACES = {3: ["s", "w", "e"], 4: ["s", "w", "n", "e"], 5: ["s", "w", "nw", "ne", "e"], 6: ["s", "sw", "nw", "n", "ne", "se"]}


def _no_rating(current: Any, seats: Any, places: Any) -> dict[str, tuple[float, float]]:
    return {seat: (25.0, 8.0) for seat in seats}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static report of a store holding one match of each game of :data:`GAMES`."""
    folder = tmp_path_factory.mktemp("replay-table")
    with Store(folder / "arena.db") as store:
        for match_id, (name, players, seed) in GAMES.items():
            match = play_local(preset(name, players=players), seed, players_of(match_id))
            seats = tuple(seat_names(match_id))
            tid = store.create_tournament(match_id, {"format": "synthetic"}, [Fixture(0, seats, seed)])
            store.record_result(
                tid, 0, match_id=match_id, status=MatchStatus.FINISHED, places=list(match.places or ()), totals=list(match.totals),
                faults=[{} for _ in seats], hands=match.hand_number, rate=_no_rating, record=record_of(match, list(seats)),
            )  # fmt: skip
        write_report(store, folder / "site")
    return folder


def events_of(site: Path, match_id: str) -> list[dict[str, Any]]:
    with Store(site / "arena.db", create=False) as store:
        replay = data.replay(store, match_id)
    assert replay.divergence is None
    return [event.model_dump(mode="json") for event in replay.events]


@pytest.fixture(scope="module")
def tab() -> Iterator[tuple[Page, list[str]]]:
    """One page for the module (each test opens its replay afresh) and the script errors it reports."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            shown = chromium.new_page(viewport=VIEWPORT)
            errors: list[str] = []
            shown.on("pageerror", lambda exc: errors.append(str(exc)))
            shown.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            yield shown, errors
        finally:
            chromium.close()


@pytest.fixture
def page(tab: tuple[Page, list[str]]) -> Iterator[Page]:
    """The module's page; the test fails on any script error while it ran."""
    shown, errors = tab
    errors.clear()
    yield shown
    assert not errors, errors


def open_replay(page: Page, site: Path, match_id: str) -> None:
    page.goto((site / "site" / "matches" / f"{slug(match_id)}.html").as_uri())


def go(page: Page, step: int) -> None:
    page.evaluate(f"window.polignacReplay.go({step})")


def centre(page: Page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def seat_text(page: Page, seat: int, part: str) -> str:
    return page.locator(f"#table .seat[data-seat='{seat}'] {part}").inner_text()


def first(events: list[dict[str, Any]], kind: str) -> int:
    """The index of the first event of ``kind``."""
    return next(i for i, e in enumerate(events) if e["event"] == kind)


def test_four_seats_sit_round_the_table_in_play_order(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    open_replay(page, site, "classic-4")
    go(page, 1)
    seats = page.locator("#table .seat")
    assert seats.evaluate_all("s => s.map(x => x.dataset.place)") == ["s", "w", "n", "e"]
    south, west, north, east = (centre(page, f"#table .seat[data-seat='{k}']") for k in range(4))
    middle = centre(page, "#trick")
    assert south[1] > middle[1] > north[1] and west[0] < middle[0] < east[0]
    for seat, hand in zip(events[0]["seats"], events[0]["hands"], strict=True):
        shown = page.locator(f"#table .seat[data-seat='{seat}'] .hand .card").evaluate_all("c => c.map(x => x.dataset.card)")
        assert sorted(shown) == sorted(hand)
        assert seat_text(page, seat, ".total") == "total 0"
    assert "dealer" in seat_text(page, events[0]["dealer"], ".name")


def test_stepping_puts_each_card_in_front_of_its_seat_and_marks_the_turn(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    open_replay(page, site, "classic-4")
    start = first(events, "card_played")
    go(page, start)
    middle = centre(page, "#trick")
    page.locator("body").click(position={"x": 5, "y": 5})  # the page has the keyboard focus
    for k in range(4):
        played = events[start + k]
        assert played["event"] == "card_played"
        seat, card = played["seat"], played["card"]
        assert page.locator("#table .seat.to-play").evaluate_all("s => s.map(x => Number(x.dataset.seat))") == [seat]
        page.keyboard.press("ArrowRight") if k % 2 else page.click("#next")
        spot = f"#trick .spot[data-seat='{seat}']"
        assert page.locator(f"{spot} .card").get_attribute("data-card") == card
        assert page.locator(f"#table .seat[data-seat='{seat}'] .hand .card[data-card='{card}']").count() == 0
        x, y = centre(page, spot)
        place = PLACES[4][seat]  # in front of the seat: on its side of the middle
        assert {"s": y > middle[1], "n": y < middle[1], "w": x < middle[0], "e": x > middle[0]}[place], (place, x, y, middle)
        if k == 0:
            assert "leads" in seat_text(page, seat, ".name")
    won = events[start + 4]
    assert won["event"] == "trick_won"
    page.click("#next")
    assert page.locator("#trick .card").count() == 4
    assert page.locator("#trick .card.wins").get_attribute("data-card") == won["cards"][won["seats"].index(won["winner"])]
    assert "1 trick" in seat_text(page, won["winner"], ".taken")
    page.click("#next")  # the next trick starts: the middle holds only its first card
    assert page.locator("#trick .card").count() == 1
    assert page.locator("#log li").count() == start + 6
    assert page.locator("#log li.current").inner_text() == page.locator("#caption").inner_text()


def test_the_contract_is_shown(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    declared = next(e for e in events if e["event"] == "declared" and e["contract"] != "pass")
    open_replay(page, site, "classic-4")
    go(page, events.index(declared))
    assert seat_text(page, declared["seat"], ".badge.turn") == "to bid"
    page.click("#next")
    assert page.locator("#contract").inner_text() == f"Contract: {declared['contract']} by random{declared['seat']}@1"
    assert declared["contract"] in seat_text(page, declared["seat"], ".badge.declarer")


def test_totals_change_when_a_hand_ends(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    open_replay(page, site, "classic-4")
    ended = first(events, "hand_ended")
    go(page, ended)
    assert [seat_text(page, k, ".total") for k in range(4)] == ["total 0"] * 4
    page.click("#next")
    totals = events[ended]["totals"]
    assert [seat_text(page, k, ".total") for k in range(4)] == [f"total {t}" for t in totals]
    assert any(t != 0 for t in totals)
    second = next(i for i, e in enumerate(events) if e["event"] == "hand_ended" and i > ended)
    go(page, second + 1)
    assert [seat_text(page, k, ".total") for k in range(4)] == [f"total {t}" for t in events[second]["totals"]]


def test_a_replay_opens_on_the_first_deal_with_every_hand_face_up(page: Page, site: Path, tmp_path: Path) -> None:
    events = events_of(site, "classic-4")
    open_replay(page, site, "classic-4")
    assert page.evaluate("window.polignacReplay.step()") == 1
    assert page.locator("#table .seat .hand .card").count() == 32  # not an empty table: it is a replay
    assert page.locator("#caption").inner_text().startswith("Hand 1 dealt")
    assert page.evaluate("location.hash") == "#step=1"
    save(page, tmp_path, "replay-hand-start.png")
    go(page, first(events, "trick_won") + 3)  # the second trick under way
    assert page.locator("#trick .card").count() == 2
    save(page, tmp_path, "replay-mid-trick.png")


def save(page: Page, tmp_path: Path, name: str) -> None:
    shot = tmp_path / name
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 1000
    if os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOTS / shot.name)


def test_the_hand_list_buttons_and_page_keys_jump_between_hands(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    deals = [i + 1 for i, e in enumerate(events) if e["event"] == "hand_dealt"]
    assert len(deals) >= 3
    open_replay(page, site, "classic-4")
    options = page.locator("#hand-jump option").evaluate_all("o => o.map(x => [x.value, x.textContent])")
    assert [int(value) for value, _ in options] == deals and options[1][1].startswith("hand 2, dealer ")
    page.select_option("#hand-jump", str(deals[2]))
    assert page.evaluate("window.polignacReplay.step()") == deals[2]
    assert page.locator("#caption").inner_text().startswith("Hand 3 dealt")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("PageUp")
    assert page.evaluate("window.polignacReplay.step()") == deals[1]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("PageUp")  # from inside a hand: back to its deal first
    assert page.evaluate("window.polignacReplay.step()") == deals[1]
    page.click("#next-hand")
    assert page.evaluate("window.polignacReplay.step()") == deals[2]
    assert page.locator("#hand-jump").input_value() == str(deals[2])
    page.keyboard.press("PageDown")
    assert page.evaluate("window.polignacReplay.step()") == deals[3] if len(deals) > 3 else True


def test_an_address_names_the_step_or_hand_to_open_on(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    deals = [i + 1 for i, e in enumerate(events) if e["event"] == "hand_dealt"]
    url = (site / "site" / "matches" / f"{slug('classic-4')}.html").as_uri()
    page.goto(f"{url}#hand=2")
    assert page.evaluate("window.polignacReplay.step()") == deals[1]
    page.goto(f"{url}#step=7")  # the same page, another fragment: no reload, the viewer follows
    assert page.evaluate("window.polignacReplay.step()") == 7
    page.goto("about:blank")
    page.goto(f"{url}#step=999999")  # past the end: the last step
    assert page.evaluate("window.polignacReplay.step()") == len(events)


def test_the_auction_and_the_hands_result_are_on_the_table(page: Page, site: Path) -> None:
    events = events_of(site, "classic-4")
    open_replay(page, site, "classic-4")
    passed = next(i for i, e in enumerate(events) if e["event"] == "declared" and e["contract"] == "pass")
    go(page, passed + 1)
    assert seat_text(page, events[passed]["seat"], ".badge.bid") == "pass"
    ended = first(events, "hand_ended")
    go(page, ended)
    assert page.locator("#hand-result").count() == 0
    page.click("#next")
    result = page.locator("#trick #hand-result").inner_text()
    hand = events[ended]
    assert result.startswith(f"Hand {hand['hand_number']}: {hand['contract']}")
    for seat, score in enumerate(hand["scores"]):
        sign = "+" if score > 0 else "\u2212" if score < 0 else ""
        assert f"random{seat}@1 {sign}{abs(score)}" in result


def test_a_knaves_table_shows_the_turned_trump(page: Page, site: Path) -> None:
    events = events_of(site, "knaves-3")
    open_replay(page, site, "knaves-3")
    go(page, 1)
    turned = events[0]["turned"]
    assert page.locator("#trumps .card.turned").get_attribute("data-card") == turned
    assert page.locator("#trumps").inner_text().startswith("Trumps: ")
    assert page.locator("#table .seat").evaluate_all("s => s.map(x => x.dataset.place)") == PLACES[3]
    assert page.locator("#table .seat .hand .card").count() == 51  # 17 each, the turned card in no hand


def test_a_german_table_names_its_cards(page: Page, site: Path, tmp_path: Path) -> None:
    events = events_of(site, "german-4")
    open_replay(page, site, "german-4")
    go(page, 1)
    shown = page.locator("#table .hand .card").evaluate_all("c => c.map(x => [x.dataset.card, x.textContent, x.dataset.pip])")
    assert len(shown) == 32 and ["QC", "Eichel-Ober", "E"] in shown
    for code, text, pip in shown:
        assert text == card_name(parse_face(code), Faces.GERMAN) and pip == text[0]
    pip = page.locator("#table .card[data-card='QC']").evaluate("c => getComputedStyle(c, '::before').content")
    assert pip == '"E"'
    # mid-hand for the picture: the fifth trick under way
    fifth = [i for i, e in enumerate(events) if e["event"] == "trick_won"][3] + 3
    go(page, fifth)
    assert page.locator("#trick .card").count() == 2
    shot = tmp_path / "replay-german.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 1000
    if os.environ.get("POLIGNAC_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(shot, DOCS_SCREENSHOTS / shot.name)


@pytest.mark.parametrize("players", [3, 5, 6])
def test_other_tables_go_round_clockwise(page: Page, site: Path, players: int) -> None:
    match_id = {3: "knaves-3", 5: "classic-5", 6: "classic-6"}[players]
    open_replay(page, site, match_id)
    go(page, 1)
    assert page.locator("#table .seat").evaluate_all("s => s.map(x => x.dataset.place)") == PLACES[players]
    mx, my = centre(page, "#trick")
    # Seen on the screen, going to the left from the bottom seat turns clockwise: the angle (y down) grows.
    angles = []
    for seat in range(players):
        x, y = centre(page, f"#table .seat[data-seat='{seat}']")
        angles.append(math.atan2(x - mx, my - y) % (2 * math.pi))  # 0 at the top, growing clockwise
    turned = [(a - angles[0]) % (2 * math.pi) for a in angles]
    assert turned == sorted(turned) and len(set(turned)) == players, angles
