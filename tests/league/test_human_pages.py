"""The pages and JSON bridge of people's matches: signed in only, CSRF on every write, nobody else's seat, bad input refused.

A league app in a TestClient kept open (its event loop hosts the match, as the league's does),
seats of the league's own kind for the built-ins.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League, league_app
from tests.league.league_process import add_author, write_league
from tests.league.test_note_privacy import MATCH_ID as NOTES_MATCH
from tests.league.test_note_privacy import Site as NotesSite
from tests.league.test_signin import sign_in


class Site:
    def __init__(self, folder: Path) -> None:
        config = write_league(folder / "league")
        self.tokens = {name: add_author(config, name) for name in ("ada", "bob")}
        self.league = League(load_league_config(config))
        self.app = league_app(self.league)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    made = Site(tmp_path)
    try:
        yield made
    finally:
        made.league.store.close()


def csrf_of(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/play").text)
    assert found is not None
    return found.group(1)


def start(client: TestClient, **fields: str) -> str:
    """Start a match from the form; the match's page."""
    data = {"csrf": csrf_of(client), "seat1": "random", "seat2": "random", "limit": "2", **fields}
    answer = client.post("/play", data=data)
    assert answer.status_code == 303, answer.text
    return str(answer.headers["location"])


def test_an_anonymous_visitor_is_sent_to_sign_in_and_refused(site: Site) -> None:
    with TestClient(site.app, follow_redirects=False) as anonymous:
        assert anonymous.get("/play").headers["location"] == "/signin"
        assert anonymous.post("/play", data={"seat1": "random", "seat2": "random", "limit": "2"}).status_code == 401
        assert anonymous.get("/play/abc/state").status_code == 401
        assert anonymous.post("/play/abc/decision", json={"turn": 1, "decision": "pass"}).status_code == 401
        assert anonymous.get("/play/abc").headers["location"] == "/signin"
        assert anonymous.get("/play/abc/replay").headers["location"] == "/signin"


def test_the_start_form_and_the_decisions_need_the_sessions_csrf_token(site: Site) -> None:
    with TestClient(site.app, follow_redirects=False) as ada:
        sign_in(ada, site.tokens["ada"])
        assert "seat1" in ada.get("/play").text
        no_token = ada.post("/play", data={"seat1": "random", "seat2": "random", "limit": "2"})
        assert no_token.status_code == 403 and "CSRF" in no_token.text
        other_site = ada.post(
            "/play",
            data={"csrf": csrf_of(ada), "seat1": "random", "seat2": "random", "limit": "2"},
            headers={"Origin": "https://evil.example"},
        )
        assert other_site.status_code == 403
        page = start(ada)
        refused = ada.post(f"{page}/decision", json={"turn": 1, "decision": "pass"})
        assert refused.status_code == 403
        stranger = ada.post(f"{page}/decision", json={"turn": 1, "decision": "pass"}, headers={"X-CSRF-Token": "not-it"})
        assert stranger.status_code == 403
        site_stop(site, ada)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"turn": "1", "decision": "QS"}',
        b'{"turn": 1}',
        b'{"turn": 1, "decision": ""}',
        b"{" + b" " * 300 + b"}",
    ],
)
def test_a_bad_decision_body_is_refused_with_a_clear_error(site: Site, body: bytes) -> None:
    with TestClient(site.app, follow_redirects=False) as ada:
        sign_in(ada, site.tokens["ada"])
        page = start(ada)
        answer = ada.post(f"{page}/decision", content=body, headers={"X-CSRF-Token": csrf_of(ada), "Content-Type": "application/json"})
        assert answer.status_code == 400 and "as JSON" in answer.json()["detail"]
        assert ada.get(f"{page}/state").json()["live"]  # nothing broke
        site_stop(site, ada)


@pytest.mark.parametrize(
    ("fields", "status", "says"),
    [
        ({"seat2": "someone-elses-upload"}, 400, "no built-in bot"),
        ({"limit": "-1"}, 400, "points limit"),
        ({"limit": "99999"}, 400, "points limit"),
        ({"limit": "ten"}, 400, "points limit"),
    ],
)
def test_a_bad_start_form_is_refused(site: Site, fields: dict[str, str], status: int, says: str) -> None:
    with TestClient(site.app, follow_redirects=False) as ada:
        sign_in(ada, site.tokens["ada"])
        data = {"csrf": csrf_of(ada), "seat1": "random", "seat2": "random", "limit": "2", **fields}
        answer = ada.post("/play", data=data)
        assert answer.status_code == status and says in answer.text
        assert site.league.human_matches.live_count == 0


def test_another_author_can_neither_watch_nor_play_someones_seat(site: Site) -> None:
    with TestClient(site.app, follow_redirects=False) as ada, TestClient(site.app, follow_redirects=False) as bob:
        sign_in(ada, site.tokens["ada"])
        sign_in(bob, site.tokens["bob"])
        page = start(ada)
        assert ada.get(page).status_code == 200
        assert bob.get(page).status_code == 404
        assert bob.get(f"{page}/state").status_code == 404
        assert bob.get(f"{page}/replay").status_code == 404
        assert bob.post(f"{page}/decision", json={"turn": 1, "decision": "pass"}, headers={"X-CSRF-Token": csrf_of(bob)}).status_code == 404
        assert page.rsplit("/", 1)[1] not in bob.get("/play").text
        second = ada.post("/play", data={"csrf": csrf_of(ada), "seat1": "random", "seat2": "random", "limit": "2"})
        assert second.status_code == 409 and "already" in second.text
        site_stop(site, ada)


def site_stop(site: Site, client: TestClient) -> None:
    """Abort the live matches in the app's own loop (a league stopping does the same)."""
    assert client.portal is not None
    client.portal.call(site.league.human_matches.stop)


def play_out(client: TestClient, page: str, csrf: str) -> dict[str, Any]:
    """Play the first legal decision at every turn through the JSON bridge, as the page does; the last state."""
    state = client.get(f"{page}/state").json()
    deadline = time.monotonic() + 120
    while state["live"] and time.monotonic() < deadline:
        if state["turn"] is not None:
            choice = (state["legal_contracts"] or state["legal_cards"])[0]
            answer = client.post(f"{page}/decision", json={"turn": state["turn"], "decision": choice}, headers={"X-CSRF-Token": csrf})
            assert answer.status_code in (200, 409), answer.text  # 409: the clock took that turn first
        state = client.get(f"{page}/state", params={"since": state["version"]}).json()
    return dict(state)


def test_play_this_position_starts_a_match_from_a_replays_hand_with_its_deals_and_totals(tmp_path: Path) -> None:
    site = NotesSite(tmp_path)
    try:
        record = site.league.store.arena.get_result(NOTES_MATCH)
        assert record is not None and record.record
        ended = {
            int(str(line["hand_number"])): line["totals"]
            for line in record.record
            if line["type"] == "hand_ended" and not line.get("tiebreak")
        }
        hand = max(ended)  # the last hand: the totals before it are the earlier hands'
        totals_before = ended.get(hand - 1, [0, 0, 0])
        with TestClient(site.app, follow_redirects=False) as ada:
            sign_in(ada, site.tokens["ada"])
            replay = ada.get(f"/matches/{NOTES_MATCH}").text
            assert 'id="play-here"' in replay and 'id="play-here-form"' in replay
            csrf = csrf_of(ada)
            refused = ada.post(f"/play/from/{NOTES_MATCH}", data={"csrf": csrf, "hand": "99", "seat": "1", "bot": "random"})
            assert refused.status_code == 400 and "hand" in refused.text
            bad_seat = ada.post(f"/play/from/{NOTES_MATCH}", data={"csrf": csrf, "hand": str(hand), "seat": "7", "bot": "random"})
            assert bad_seat.status_code == 400 and "seat" in bad_seat.text
            missing = ada.post("/play/from/no-such-match", data={"csrf": csrf, "hand": "2", "seat": "1", "bot": "random"})
            assert missing.status_code == 404
            forged = ada.post(f"/play/from/{NOTES_MATCH}", data={"hand": "2", "seat": "1", "bot": "random"})
            assert forged.status_code == 403
            started = ada.post(f"/play/from/{NOTES_MATCH}", data={"csrf": csrf, "hand": str(hand), "seat": "1", "bot": "random"})
            assert started.status_code == 303, started.text
            page = str(started.headers["location"])
            first = ada.get(f"{page}/state").json()
            deadline = time.monotonic() + 60
            while first.get("hand_number") is None and time.monotonic() < deadline:
                first = ada.get(f"{page}/state", params={"since": first["version"]}).json()
            assert first["seat"] == 1 and first["hand_number"] == hand
            assert first["totals"] == totals_before
            last = play_out(ada, page, csrf)
            assert last["status"] == "finished" and last["ended"]["places"]
            assert ada.get(f"{page}/replay").status_code == 200
            played = site.league.human_matches.get("ada", page.rsplit("/", 1)[1])
            assert played is not None and played.human == 1
            header: Any = played.record[0]
            assert header["seed"] == record.seed and header["rules"]["limit"] == 3  # the record's deals and rules
    finally:
        site.league.store.close()


def test_the_web_app_stopping_aborts_the_live_matches(site: Site) -> None:
    with TestClient(site.app, follow_redirects=False) as ada:
        sign_in(ada, site.tokens["ada"])
        page = start(ada)
        assert ada.get(f"{page}/state").json()["live"]
    assert site.league.human_matches.live_count == 0
    (match,) = site.league.human_matches.of_author("ada")
    assert match.status == "aborted"
