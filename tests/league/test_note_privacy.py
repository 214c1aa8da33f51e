"""A bot's notes (debug text, stderr) are its author's: every route of the league's web is checked, none can leak them.

The routes are enumerated from the app itself, so a route added later is checked too: every
GET route is fetched by an anonymous visitor, by another author (signed in, and with their
API token) and by the author; only the author ever reads their bot's notes, and only on the
routes that show a replay.  Every other route must be named here as one that serves no
match, so a new kind of route cannot slip by unexamined.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route
from typer.testing import CliRunner

from polignac import Card, Contract, preset
from polignac.bot import Bot
from polignac.view import PlayerView
from polignac_arena.cli import app
from polignac_arena.league.config import load_league_config
from polignac_arena.league.serve import League, league_app
from polignac_arena.referee import MatchResult
from polignac_arena.runner import resolve_bot, run_local_match
from polignac_arena.seats.inprocess import InProcessLauncher
from polignac_arena.statuses import MatchStatus
from tests.league.league_process import add_author, bot_folder, seed_active, write_league
from tests.league.test_signin import sign_in
from tests.referee.helpers import run

MATCH_ID = "notes-match"
SEED = 9
SECRETS = {"ada": ("ADA-DEBUG-SECRET", "ADA-STDERR-SECRET"), "bob": ("BOB-DEBUG-SECRET", "BOB-STDERR-SECRET")}
REPLAY_ROUTES = {"/api/matches/{match_id}/replay", "/matches/{match_id}"}
"""The routes that show a replay: there, and only there, an author reads their own bot's notes."""
NO_MATCH_POSTS = {
    "/signin",
    "/signout",
    "/api/league/bots/{name}/versions",
    "/me/bots/{name}/versions",  # the author's page's upload form; its log is GET /me/submissions/{submission_id}
    "/api/league/bots/{name}/retire",
    # An author's test match is asked for here; its record is served by GET routes only (/me/reruns/..., /api/league/reruns/...).
    "/matches/{match_id}/rerun",
    "/api/league/matches/{match_id}/reruns",
    # A person's match against the built-ins is started and played here; its seat's state and replay are GET routes.
    "/play",
    "/play/{match_id}/decision",
    # "Play this position": a new human match from a recorded one's deals (no note of the record goes with it).
    "/play/from/{match_id}",
}
"""Routes other than GET: none serves a match (a new one must be looked at, then named here)."""


class Secretive(Bot):
    """Plays the first legal option and tells its author a secret at every decision."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def declare(self, view: PlayerView) -> Contract:
        self.debug(self.secret)
        return view.legal_contracts[0]

    def play(self, view: PlayerView) -> Card:
        self.debug(self.secret)
        return view.legal_cards[0]


class Site:
    """A league whose store holds one match of ada's bot and bob's bot, both with notes."""

    def __init__(self, folder: Path) -> None:
        self.config = write_league(folder / "league")
        self.tokens = {name: add_author(self.config, name) for name in ("ada", "bob", "cy")}
        labels = [seed_active(self.config, name, [bot_folder(folder / "bots", f"{name}-bot")])[0].label for name in ("ada", "bob", "cy")]
        self.league = League(load_league_config(self.config))
        self.labels = labels
        result, record = self.match()
        self.places = result.places
        store = self.league.store
        idx = store.schedule(self.league.tournament_id, labels, SEED)
        store.arena.record_result(
            self.league.tournament_id, idx, match_id=MATCH_ID, status=MatchStatus.FINISHED, places=list(result.places or ()),
            totals=list(result.totals), faults=[{}, {}, {}], hands=3, rate=lambda c, s, p: {b: (25.0, 8.0) for b in s}, record=record,
        )  # fmt: skip
        self.app = league_app(self.league)

    @staticmethod
    def match() -> tuple[MatchResult, list[dict[str, Any]]]:
        """A real match and its record: seat 0 ada's bot, seat 1 bob's, each with debug text and (added here) stderr."""
        launcher = InProcessLauncher({0: Secretive(SECRETS["ada"][0]), 1: Secretive(SECRETS["bob"][0])})
        bots = [resolve_bot("random")] * 3
        result, _ = run(run_local_match(bots, preset("classic", players=3, limit=3), SEED, launcher=launcher, trusted=True))
        assert result.places is not None
        lines = [dict(line) for line in result.record]
        for line in lines:
            if line["type"] == "action" and line.get("seat") in (0, 1) and "request_id" in line:
                line["stderr"] = SECRETS["ada" if line["seat"] == 0 else "bob"][1]
        return result, lines

    def client(self) -> TestClient:
        return TestClient(self.app, follow_redirects=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    made = Site(tmp_path_factory.mktemp("notes"))
    try:
        yield made
    finally:
        made.league.store.close()


def routes(items: list[Any], prefix: str = "") -> Iterator[tuple[frozenset[str], str]]:
    """Every route of an app as (methods, path), through included routers and mounts."""
    for item in items:
        if isinstance(item, APIRoute | Route):
            yield frozenset(item.methods or ()), prefix + item.path
        elif isinstance(item, Mount):
            yield frozenset({"GET"}), prefix + item.path + "/{path}"
        elif hasattr(item, "original_router"):  # FastAPI's included router
            yield from routes(item.original_router.routes, prefix + (item.include_context.prefix or ""))
        else:
            raise AssertionError(f"a route of an unknown kind: {item!r}: teach this test to read it")


def url_of(path: str, site: Site) -> str:
    values = {
        "match_id": MATCH_ID,
        "name": site.league.config.name if "/tournaments/" in path else "ada-bot",
        "rest": "nothing/here",
        "path": "style.css",
        "submission_id": "1",
        "run_id": "1",
    }
    for key, value in values.items():
        path = path.replace("{" + key + "}", value).replace("{" + key + ":path}", value)
    assert "{" not in path, f"a path parameter this test cannot fill: {path}"
    return path


def viewers(site: Site) -> dict[str, TestClient]:
    anonymous = site.client()
    ada = site.client()
    sign_in(ada, site.tokens["ada"])
    bob = site.client()
    sign_in(bob, site.tokens["bob"])
    ada_token = site.client()
    ada_token.headers["Authorization"] = f"Bearer {site.tokens['ada']}"
    bob_token = site.client()
    bob_token.headers["Authorization"] = f"Bearer {site.tokens['bob']}"
    return {"anonymous": anonymous, "ada": ada, "bob": bob, "ada-token": ada_token, "bob-token": bob_token}


def test_every_route_shows_a_bots_notes_to_its_author_only(site: Site) -> None:
    every = list(routes(site.app.router.routes))
    gets = sorted({path for methods, path in every if "GET" in methods})
    others = {path for methods, path in every if "GET" not in methods}
    assert others <= NO_MATCH_POSTS, f"routes not yet examined for notes: {sorted(others - NO_MATCH_POSTS)}"
    assert set(gets) >= REPLAY_ROUTES
    clients = viewers(site)
    seen: dict[str, dict[str, str]] = {who: {} for who in clients}
    for path in gets:
        url = url_of(path, site)
        for who, client in clients.items():
            answer = client.get(url)
            assert answer.status_code < 500, (who, url, answer.text[:300])
            seen[who][path] = answer.text
    for path in gets:
        for who, text in ((who, pages[path]) for who, pages in seen.items()):
            owner = who.split("-")[0]
            for author, (debug, stderr) in SECRETS.items():
                readable = author == owner and path in REPLAY_ROUTES
                assert (debug in text) is readable, (who, path, author)
                assert (stderr in text) is readable, (who, path, author)


def test_the_replay_api_gives_the_author_their_notes_beside_the_step_and_no_cache_keeps_them(site: Site) -> None:
    clients = viewers(site)
    answer = clients["ada-token"].get(f"/api/matches/{MATCH_ID}/replay")
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "private, no-store" and "Authorization" in answer.headers["vary"]
    replay = answer.json()
    notes = replay["notes"]
    assert notes and {note["seat"] for note in notes} == {0}
    for note in notes:
        event = replay["events"][note["event"]]
        assert event["event"] in ("declared", "card_played") and event["seat"] == 0
        assert note["debug"] == SECRETS["ada"][0] and note["stderr"] == SECRETS["ada"][1]
    assert clients["anonymous"].get(f"/api/matches/{MATCH_ID}/replay").json()["notes"] == []


@pytest.mark.parametrize("header", ["Bearer plg_nope_secret", "Basic abc", "Bearer " + "x" * 600])
def test_a_bad_token_on_the_replay_api_is_refused_not_ignored(site: Site, header: str) -> None:
    client = site.client()
    answer = client.get(f"/api/matches/{MATCH_ID}/replay", headers={"Authorization": header})
    assert answer.status_code == 401 and "token" in json.loads(answer.text)["error"]
    assert SECRETS["ada"][0] not in answer.text


def test_the_operator_reads_every_bots_notes_from_the_store(site: Site) -> None:
    shown = CliRunner().invoke(app, ["match", "show", MATCH_ID, "--db", str(site.league.config.store)])
    assert shown.exit_code == 0, shown.output
    assert all(secret in shown.output for pair in SECRETS.values() for secret in pair)
