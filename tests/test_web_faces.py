"""The web face names cards by the ruleset's faces: German names in the replay viewer of a German-suited game,
French otherwise; the viewer shows the turned trump card and the parts of each hand's score.

A store holds three matches played locally (eichel-obern, knaves, classic), their records made as the referee
makes them.  The replay data and page are checked directly; ``replay.js`` runs under Node with a stub DOM (when
Node is installed) and in Chromium on the static report (when Playwright and Chromium are there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac import Faces, Match, card_name, parse_face, preset, suit_name
from polignac_arena.players import play_local, random_players
from polignac_arena.schedule import Fixture
from polignac_arena.statuses import MatchStatus
from polignac_arena.store import Store
from polignac_arena.web import create_app, data
from polignac_arena.web.app import STATIC_DIR
from polignac_arena.web.report import write_report

GAMES = {"german-0": ("eichel-obern", 4, 3), "knaves-0": ("knaves", 3, 5), "classic-0": ("classic", 4, 7)}


def record_of(match: Match, names: list[str]) -> list[dict[str, Any]]:
    """The lines of a match record (referee/record.py) for a match played locally."""
    return [
        {"type": "header", "rules": match.rules.to_dict(), "seed": match.seed, "seats": [{"name": n} for n in names]},
        *({"type": "action", "action": action} for action in match.actions),
        {"type": "result", "status": "finished", "places": list(match.places or ()), "totals": list(match.totals)},
    ]


def _no_rating(current: Any, seats: Any, places: Any) -> dict[str, tuple[float, float]]:
    return {seat: (25.0, 8.0) for seat in seats}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faces") / "arena.db"
    with Store(path) as store:
        for match_id, (name, players, seed) in GAMES.items():
            match = play_local(preset(name, players=players), seed, random_players(seed, players))
            seats = tuple(f"random{i}@1" for i in range(players))
            tid = store.create_tournament(match_id, {"format": "synthetic"}, [Fixture(0, seats, seed)])
            store.record_result(
                tid, 0, match_id=match_id, status=MatchStatus.FINISHED, places=list(match.places or ()), totals=list(match.totals),
                faults=[{} for _ in seats], hands=match.hand_number, rate=_no_rating, record=record_of(match, list(seats)),
            )  # fmt: skip
    return path


def replay_of(db: Path, match_id: str) -> dict[str, Any]:
    with Store(db, create=False) as store:
        return data.replay(store, match_id).model_dump(mode="json")


def test_replay_data_names_cards_by_the_rulesets_faces(db: Path) -> None:
    german = replay_of(db, "german-0")
    assert german["divergence"] is None and german["rules"]["faces"] == "german"
    assert german["cards"]["QC"]["text"] == "Eichel-Ober" and german["cards"]["JS"]["text"] == "Gras-Unter"
    assert german["cards"]["AD"]["name"] == "Schellen-Daus" and german["cards"]["AD"]["suit"] == "Schellen"
    assert len(german["cards"]) == 32 and not any(c["polignac"] for c in german["cards"].values())
    assert {c["colour"] for c in german["cards"].values()} == {"eichel", "gras", "herz", "schellen"}
    classic = replay_of(db, "classic-0")
    assert classic["cards"]["JS"] == {"text": "J♠", "name": "jack of spades", "suit": "spades", "colour": "black", "polignac": True}
    assert classic["cards"]["TH"]["text"] == "10♥" and classic["direction"] == "lower is better"
    knaves = replay_of(db, "knaves-0")
    assert len(knaves["cards"]) == 52 and knaves["cards"]["2C"]["text"] == "2♣" and knaves["direction"] == "higher is better"
    assert not knaves["cards"]["JS"]["polignac"]


def test_replay_page_says_the_ruleset_its_faces_and_the_direction(db: Path) -> None:
    with TestClient(create_app(db)) as client:
        german = client.get("/matches/german-0").text
        knaves = client.get("/matches/knaves-0").text
    assert "rules eichel-obern (german cards)" in german and "(lower is better)" in german
    assert "Eichel-Ober" in german  # the viewer's card table, in the page's data
    assert "rules knaves (french cards)" in knaves and "(higher is better)" in knaves
    assert 'id="trumps"' in knaves


# -- replay.js under Node ------------------------------------------------------------------------

_STUB_DOM = r"""
const fs = require("fs");
function node(tag) {
  return { tag, children: [], className: "", textContent: "", title: "", attrs: {}, listeners: {},
    appendChild(c) { this.children.push(c); return c; }, setAttribute(k, v) { this.attrs[k] = String(v); },
    addEventListener(t, f) { this.listeners[t] = f; },
    set innerHTML(v) { this.children = []; }, get innerHTML() { return ""; } };
}
const ids = ["first", "prev", "next", "last", "position", "caption", "trumps", "table", "auction", "tricks", "results"];
const byId = {};
for (const id of ids) byId[id] = node(id);
byId["replay-data"] = { textContent: fs.readFileSync(process.argv[2], "utf8") };
global.window = {};
global.document = {
  getElementById: (id) => byId[id], createElement: (tag) => node(tag), createTextNode: (t) => ({ textContent: t }),
  addEventListener: () => {},
};
require(process.argv[3]);
const viewer = window.polignacReplay;
const cards = (n) => (n.children || []).flatMap((c) => (c.className && c.className.startsWith("card") ? [c] : cards(c)));
const text = (n) => (n.textContent || "") + (n.children || []).map(text).join("");
const steps = JSON.parse(process.argv[4]);
const out = [];
for (const step of steps) {
  viewer.go(step);
  out.push({
    caption: byId.caption.textContent,
    hands: cards(byId.table).map((c) => [c.attrs["data-card"], c.textContent, c.className]),
    tricks: cards(byId.tricks).map((c) => [c.attrs["data-card"], c.textContent]),
    trumps: text(byId.trumps),
    results: byId.results.children.map(text),
  });
}
console.log(JSON.stringify(out));
"""


def run_viewer(replay: dict[str, Any], steps: list[int], tmp_path: Path) -> list[dict[str, Any]]:
    """Run replay.js on the replay data and report what it shows after each of ``steps`` events."""
    (tmp_path / "data.json").write_text(json.dumps(replay), encoding="utf-8")
    (tmp_path / "stub.js").write_text(_STUB_DOM, encoding="utf-8")
    done = subprocess.run(
        ["node", str(tmp_path / "stub.js"), str(tmp_path / "data.json"), str(STATIC_DIR / "replay.js"), json.dumps(steps)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown: list[dict[str, Any]] = json.loads(done.stdout)
    return shown


def first_hand_end(events: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == "hand_ended") + 1


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


@needs_node
def test_viewer_names_german_cards(db: Path, tmp_path: Path) -> None:
    replay = replay_of(db, "german-0")
    events = replay["events"]
    after_deal, end = run_viewer(replay, [1, first_hand_end(events)], tmp_path)
    dealt = [code for hand in events[0]["hands"] for code in hand]
    assert sorted(code for code, _, _ in after_deal["hands"]) == sorted(dealt)
    for code, shown, cls in after_deal["hands"]:
        assert shown == card_name(parse_face(code), Faces.GERMAN)  # "Eichel-Ober" for QC, "Gras-Unter" for JS ...
        assert cls.split()[1] == suit_name(parse_face(code).suit, Faces.GERMAN).lower()
    assert {"Eichel-Ober", "Gras-Unter", "Schellen-Daus"} <= {shown for _, shown, _ in after_deal["hands"]}
    assert all(shown == card_name(parse_face(code), Faces.GERMAN) for code, shown in end["tricks"])
    assert end["caption"].startswith("Hand 1 ends")


@needs_node
def test_viewer_shows_french_cards_in_a_french_game(db: Path, tmp_path: Path) -> None:
    (after_deal,) = run_viewer(replay_of(db, "classic-0"), [1], tmp_path)
    symbols = dict(zip("SHDC", "♠♥♦♣", strict=True))
    assert after_deal["hands"] and all(shown == code[:-1].replace("T", "10") + symbols[code[-1]] for code, shown, _ in after_deal["hands"])
    assert any("polignac" in cls for code, _, cls in after_deal["hands"] if code == "JS")


@needs_node
def test_viewer_shows_the_turned_trump_and_the_parts_of_each_score(db: Path, tmp_path: Path) -> None:
    replay = replay_of(db, "knaves-0")
    events = replay["events"]
    end = first_hand_end(events)
    after_deal, after_hand, last = run_viewer(replay, [1, end, len(events)], tmp_path)
    turned = events[0]["turned"]
    trump = replay["cards"][turned]
    assert after_deal["trumps"] == f"Trumps: {trump['suit']}, turned card {trump['text']}"
    assert f"trumps {trump['suit']} (turned card {trump['text']})" in after_deal["caption"]
    _header, first = after_hand["results"]
    result = events[end - 1]["result"]
    scores = events[end - 1]["scores"]
    for seat in range(3):
        assert f"{scores[seat]} ({events[end - 1]['totals'][seat]}){result['tricks'][seat]} tricks" in first
        assert f"+{result['trick_points'][seat]} for tricks" in first
    assert last["caption"].startswith("Match over") and last["caption"].endswith("(higher is better)")


# -- the real browser, on the static report ------------------------------------------------------


def test_browser_viewer_names_german_cards(db: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    chromium = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))
    if not (chromium.is_file() and os.access(chromium, os.X_OK)):
        pytest.skip(f"no Chromium at {chromium}")
    with Store(db, create=False) as store:
        write_report(store, tmp_path / "site")
    events = replay_of(db, "german-0")["events"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((tmp_path / "site" / "matches" / "german-0.html").as_uri())
            page.click("#next")
            shown = page.locator("#table .card").evaluate_all("cards => cards.map(c => [c.dataset.card, c.textContent])")
            assert not errors, errors
        finally:
            browser.close()
    assert sorted(code for code, _ in shown) == sorted(code for hand in events[0]["hands"] for code in hand)
    assert all(text == card_name(parse_face(code), Faces.GERMAN) for code, text in shown)
    assert ["QC", "Eichel-Ober"] in shown
