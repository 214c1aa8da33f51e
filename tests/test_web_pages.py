"""The web face's HTML pages and the static report: they render, show the bots in rating order, the SVG chart,
the crosstable and a replay viewer whose data has the engine's trick winners; a proper 404 page; ``polignac web`` and
``polignac report``.  (The replay viewer's script is also run under Node with a stub DOM when Node is installed.)"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from polignac_arena.cli import app as cli_app
from polignac_arena.replay import replay_lines
from polignac_arena.store import Store, StoreError
from polignac_arena.web import create_app
from polignac_arena.web.app import STATIC_DIR
from tests.test_web_api import build_store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("pages") / "arena.db")


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db)) as test_client:
        yield test_client


def page(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    text: str = response.text
    return text


class Links(HTMLParser):
    """The href and src of a page, and whether any points off the machine."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("href", "src") and value]


def urls_of(html: str) -> list[str]:
    parser = Links()
    parser.feed(html)
    return parser.urls


def board_bots(html: str) -> list[str]:
    return re.findall(r'<tr class="bot-row" data-bot="([^"]+)"', html)


def replay_data(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert found, "no replay data in the page"
    return dict(json.loads(found.group(1)))


def first_match(db: Path) -> str:
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        return store.list_results(small.id)[0].match_id


# -- the pages -----------------------------------------------------------------------------------


def test_leaderboards_list_the_bots_in_rating_order(client: TestClient, db: Path) -> None:
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        expected_small = [r.bot for r in store.leaderboard(small.id)]
        expected_all = [r.bot for r in store.leaderboard(None)]
    html = page(client, "/tournaments/small")
    assert board_bots(html) == expected_small
    assert "Leaderboard: small" in html and 'href="/crosstable?tournament=small"' in html
    home = page(client, "/")
    assert board_bots(home) == expected_all
    assert 'href="/tournaments/faulty"' in home and "timeout 1" in home
    by_name = page(client, "/?sort=name")
    assert board_bots(by_name) == sorted(expected_all, key=lambda key: key.split("@")[0])


def test_bot_page_has_the_chart_places_matches_and_faults(client: TestClient) -> None:
    html = page(client, "/bots/random")
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart"') == 2  # one per tournament
    assert 'class="mu-line"' in html and 'class="sigma-band"' in html
    assert 'id="versions"' in html and "builtin" in html
    assert 'id="places"' in html
    assert html.count('class="replay-link"') == 7
    assert 'id="faults"' in html and 'href="/matches/faulty-1"' in html and "timeout 1" in html


def test_crosstable_page(client: TestClient) -> None:
    html = page(client, "/crosstable?tournament=small")
    assert 'id="crosstable"' in html
    probabilities = [float(p) for p in re.findall(r'data-p="([0-9.]+)"', html)]
    assert len(probabilities) == 6 and all(0 < p < 1 for p in probabilities)
    assert "background: hsl(" in html
    assert 'id="crosstable"' in page(client, "/crosstable")


def test_match_list_with_filters_links_every_match_to_its_replay(client: TestClient) -> None:
    html = page(client, "/matches")
    assert html.count('class="replay-link"') == 7
    assert page(client, "/matches?tournament=small").count('class="replay-link"') == 4
    faulty = page(client, "/matches?faults=true")
    assert faulty.count('class="replay-link"') == 1 and 'href="/matches/faulty-1"' in faulty
    assert page(client, "/matches?bot=heuristic&faults=false").count('class="replay-link"') == 4
    assert page(client, "/matches?tournament=&bot=&faults=").count('class="replay-link"') == 7  # the form's empty choices


def test_replay_viewer_has_the_engine_trick_winners(client: TestClient, db: Path) -> None:
    match_id = first_match(db)
    html = page(client, f"/matches/{match_id}")
    assert '<script src="/static/replay.js"></script>' in html
    for control in ('id="first"', 'id="prev"', 'id="next"', 'id="last"'):
        assert control in html
    data = replay_data(html)
    with Store(db, create=False) as store:
        result = store.get_result(match_id)
        assert result is not None and result.record is not None
    events = [e.to_dict() for e in replay_lines(result.record).match.events]
    assert data["events"] == events
    winners = [(e["trick_number"], e["winner"]) for e in data["events"] if e["event"] == "trick_won"]
    assert winners and winners == [(e["trick_number"], e["winner"]) for e in events if e["event"] == "trick_won"]
    assert data["names"] == list(result.seats)


def test_static_assets_are_bundled_and_nothing_is_external(client: TestClient, db: Path) -> None:
    script = client.get("/static/replay.js")
    assert script.status_code == 200 and "ArrowRight" in script.text and "polignac" in script.text
    assert client.get("/static/style.css").status_code == 200
    for url in ("/", "/tournaments/small", "/bots/random", "/crosstable", "/matches", f"/matches/{first_match(db)}"):
        for link in urls_of(page(client, url)):
            assert not urlsplit(link).netloc and not link.startswith("//"), (url, link)


def test_404_pages(client: TestClient) -> None:
    for url in ("/tournaments/nope", "/bots/nope", "/matches/nope", "/crosstable?tournament=nope", "/no/such/page"):
        html = page(client, url, 404)
        assert "Not found" in html and 'href="/"' in html
    assert "no bot named &#39;nope&#39;" in page(client, "/bots/nope", 404)
    assert "sort" in page(client, "/?sort=elo", 400)
    page(client, "/matches?page=0", 400)


# -- the replay script, under Node with a stub DOM -----------------------------------------------

_STUB_DOM = r"""
const fs = require("fs");
function node(id) {
  return { id, children: [], className: "", textContent: "", attrs: {}, listeners: {},
    appendChild(c) { this.children.push(c); return c; }, setAttribute(k, v) { this.attrs[k] = String(v); },
    addEventListener(t, f) { this.listeners[t] = f; },
    set innerHTML(v) { this.children = []; }, get innerHTML() { return ""; } };
}
const byId = {};
const data = fs.readFileSync(process.argv[2], "utf8");
for (const id of ["first", "prev", "next", "last", "position", "caption", "table", "auction", "tricks", "results"]) byId[id] = node(id);
byId["replay-data"] = { textContent: data };
const docListeners = {};
global.window = {};
global.document = {
  getElementById: (id) => byId[id],
  createElement: (tag) => node(tag),
  createTextNode: (t) => ({ textContent: t }),
  addEventListener: (t, f) => { docListeners[t] = f; },
};
require(process.argv[3]);
const viewer = window.polignacReplay;
const out = { total: viewer.events.length, winners: [], back: [] };
const key = (k) => docListeners.keydown({ key: k, preventDefault() {} });
while (viewer.step() < viewer.events.length) {
  byId.next.listeners.click();
  const tricks = byId.tricks.children;
  if (viewer.events[viewer.step() - 1].event === "trick_won") out.winners.push(Number(tricks[tricks.length - 1].attrs["data-winner"]));
}
out.captionAtEnd = byId.caption.textContent;
while (viewer.step() > 0) { key("ArrowLeft"); out.back.push(viewer.step()); }
key("End"); out.end = viewer.step(); key("Home"); out.home = viewer.step();
key("ArrowRight"); out.afterRight = viewer.step();
out.cards = byId.table.children.map((seat) => seat.children[1].children.length);
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_replay_script_steps_through_the_match(client: TestClient, db: Path, tmp_path: Path) -> None:
    data = replay_data(page(client, f"/matches/{first_match(db)}"))
    (tmp_path / "data.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "stub.js").write_text(_STUB_DOM, encoding="utf-8")
    done = subprocess.run(
        ["node", str(tmp_path / "stub.js"), str(tmp_path / "data.json"), str(STATIC_DIR / "replay.js")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    n = len(data["events"])
    assert out["total"] == n
    assert out["winners"] == [e["winner"] for e in data["events"] if e["event"] == "trick_won"]
    assert out["captionAtEnd"].startswith("Match over")
    assert out["back"] == list(range(n - 1, -1, -1))
    assert (out["end"], out["home"], out["afterRight"]) == (n, 0, 1)
    assert out["cards"] == [len(hand) for hand in data["events"][0]["hands"]]  # after the deal: every seat holds its hand


# -- the commands --------------------------------------------------------------------------------


def test_report_writes_a_static_site_with_relative_links(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(cli_app, ["report", "--db", str(db), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and (out / "static" / "replay.js").is_file()
    assert board_bots((out / "index.html").read_text(encoding="utf-8"))
    with Store(db, create=False) as store:
        small = store.get_tournament("small")
        assert small is not None
        expected = [r.bot for r in store.leaderboard(small.id)]
    assert board_bots((out / "tournaments" / "small.html").read_text(encoding="utf-8")) == expected
    assert 'class="rating-chart"' in (out / "bots" / "random.html").read_text(encoding="utf-8")
    assert 'id="crosstable"' in (out / "crosstable" / "t-small.html").read_text(encoding="utf-8")
    match_id = first_match(db)
    replay = (out / "matches" / f"{match_id}.html").read_text(encoding="utf-8")
    assert replay_data(replay)["events"]
    pages = list(out.rglob("*.html"))
    assert len(pages) >= 5 + 7 + 3
    for html_file in pages:
        for link in urls_of(html_file.read_text(encoding="utf-8")):
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc and not link.startswith("/"), (html_file, link)
            target = (html_file.parent / unquote(parts.path)).resolve()
            assert target.is_file(), (html_file, link)


def test_report_and_web_need_an_existing_store(tmp_path: Path) -> None:
    for args in (["report", "--out", str(tmp_path / "site")], ["web", "--port", "0"]):
        result = CliRunner().invoke(cli_app, [*args, "--db", str(tmp_path / "none.db")])
        assert result.exit_code == 2
        assert "there is no store" in result.output
    assert not (tmp_path / "none.db").exists()


def test_web_command_serves_on_loopback(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    result = CliRunner().invoke(cli_app, ["web", "--db", str(db), "--port", "0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert calls and calls[0]["host"] == "127.0.0.1" and calls[0]["port"] == 0
    with TestClient(calls[0]["app"]) as test_client:
        assert board_bots(test_client.get("/").text)


# -- the benchmark -------------------------------------------------------------------------------


def test_web_benchmark_quick_run() -> None:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "web.py"), "--json", "--quick"],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["leaderboard_median_ms"] > 0 and (result["bots"], result["matches"]) == (10, 100)
    assert set(result["targets"]) == {"leaderboard", "tournament_leaderboard", "api_leaderboard", "bot_page", "matches_page", "crosstable"}
    for name in ("api_matches", "crosstable_csv", *result["targets"]):
        assert result[f"{name}_p90_ms"] >= result[f"{name}_median_ms"] > 0, name
    assert isinstance(result["all_met"], bool) and result["crosstable_csv_bytes"] > 0


def test_a_store_that_would_need_migrating_is_refused_untouched(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    sqlite3.connect(old).close()  # an empty SQLite file: schema version 0, which Store would migrate (a write)
    before = old.read_bytes()
    for args in (["report", "--out", str(tmp_path / "site")], ["web"]):
        result = CliRunner().invoke(cli_app, [*args, "--db", str(old)])
        assert result.exit_code == 2 and "schema version 0" in result.output, result.output
    with pytest.raises(StoreError, match="schema version 0"), TestClient(create_app(old)):
        pass
    assert old.read_bytes() == before


# -- property-based: no page request makes the server fail ---------------------------------------

_WORDS = ["", "small", "faulty", "nope", "random", "0", "-1", "2", "true", "false", "mu", "x%y"]
_TEXT = st.one_of(st.sampled_from(_WORDS), st.text(max_size=10))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(["/", "/tournaments/{x}", "/bots/{x}", "/crosstable", "/matches", "/matches/{x}", "/{x}"]),
    segment=_TEXT.filter(lambda s: s not in ("", ".", "..")),
    params=st.dictionaries(st.sampled_from(["tournament", "sort", "bot", "faults", "page"]), _TEXT, max_size=3),
)
def test_no_page_request_makes_a_server_error(client: TestClient, route: str, segment: str, params: dict[str, str]) -> None:
    response = client.get(route.replace("{x}", quote(segment, safe="")), params=params)
    assert response.status_code in (200, 400, 404), (route, segment, params, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("text/html")
