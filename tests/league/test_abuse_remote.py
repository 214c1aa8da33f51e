"""Issue 24, point 6: remote bots that make versions without end, join and leave, and swell the public status.

New remote versions and bot names count against the author's limits as uploads do; a bot that
is offered a match and does not play it (it declines, does not answer, or has left) leaves no
match behind, public or void; and ``/api/league/status`` answers a page at a time however many
bots and versions there are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from fastapi.testclient import TestClient

from polignac_arena.league.author_api import author_router
from polignac_arena.league.config import load_league_config
from polignac_arena.league.lobby import ClaimRefused
from polignac_arena.league.pages import league_router
from polignac_arena.league.serve import League
from polignac_arena.league.store import LeagueStore
from polignac_arena.web import create_app
from tests.league.league_process import LeagueProcess, add_author, bot_folder, seed_active, write_league
from tests.league.lobby_helpers import LobbyClient
from tests.referee.helpers import run


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    made = League(load_league_config(write_league(tmp_path, limits="uploads_per_hour = 3\nactive_bots = 2")))
    try:
        yield made
    finally:
        made.store.close()


def test_new_remote_versions_count_toward_the_hourly_limit(league: League) -> None:
    league.store.add_author("rex")
    for version in ("1", "2", "3"):
        assert league.claim("rex", "rover", version) == f"rover@{version}"
    with pytest.raises(ClaimRefused) as refused:  # a fourth new version within the hour
        league.claim("rex", "rover", "4")
    assert refused.value.code is grpc.StatusCode.FAILED_PRECONDITION and "3 upload(s) per hour" in refused.value.reason
    assert league.claim("rex", "rover", "3") == "rover@3"  # coming back as a version it has costs nothing
    with LeagueStore(league.config.store) as store:
        assert [v.version for v in store.versions("rover")] == ["1", "2", "3"]


def test_bot_names_are_limited_per_author_whatever_became_of_their_versions(tmp_path: Path) -> None:
    made = League(load_league_config(write_league(tmp_path, limits="bots = 2\nactive_bots = 5")))
    try:
        made.store.add_author("nan")
        made.claim("nan", "first", "1")
        made.claim("nan", "second", "1")
        made.store.set_disabled("first", True)  # out of the ladder: its name is still the author's
        with pytest.raises(ClaimRefused) as refused:
            made.claim("nan", "third", "1")
        assert "the limit of 2 bot name(s) per author is reached" in refused.value.reason
        assert made.claim("nan", "second", "2") == "second@2"
    finally:
        made.store.close()


def test_a_bot_that_declines_its_match_leaves_no_match_behind(tmp_path: Path) -> None:
    path = write_league(tmp_path, drain="deadline_s = 5")
    config = load_league_config(path)
    add_author(path, "house")
    seed_active(path, "house", [bot_folder(tmp_path / "bots", name) for name in ("u1", "u2")])
    token = add_author(path, "drifter")  # with u1 and u2, every table needs its bot

    async def join_and_decline(address: str) -> str:
        client = LobbyClient(address, token)
        await client.open()
        try:
            await client.join("drift", "1")
            joined = await client.read()
            assert joined is not None and joined.joined.label == "drift@1"
            offer = await client.read()
            assert offer is not None and offer.WhichOneof("event") == "assignment"
            await client.reply(offer.assignment.match_id, accept=False, reason="not now")
            return str(offer.assignment.match_id)
        finally:
            await client.close()  # and it leaves

    with LeagueProcess.start(path) as server:
        declined = run(join_and_decline(server.grpc))
        assert declined.startswith("league-"), declined
        assert server.terminate() == 0, server.stderr()  # its drain stores whatever was pending
    with LeagueStore(config.store) as store:
        tournament = store.arena.get_tournament(config.name)
        assert tournament is not None
        assert store.arena.list_results(tournament.id) == [] and store.arena.fixtures(tournament.id) == []


def test_the_status_answers_a_page_at_a_time(league: League) -> None:
    author, _ = league.store.add_author("many")
    with league.store._write() as conn:  # 1,440 versions in one transaction (each the row a Join of a new version leaves)
        for bot in range(120):
            name = f"bot-{bot:03d}"
            conn.execute(
                "INSERT INTO league_bots (name, author_id, created_at, name_key) VALUES (?, ?, '2026', ?)", (name, author.id, name)
            )
            for version in range(12):
                conn.execute(
                    "INSERT INTO league_versions (bot_id, version, kind, state, created_at, updated_at)"
                    " SELECT id, ?, 'remote', 'retired', '2026', '2026' FROM league_bots WHERE name = ?",
                    (str(version), name),
                )
    app = create_app(league.config.store, routers=[author_router(league), league_router(league)])
    with TestClient(app) as client:
        first = client.get("/api/league/status")
        assert first.status_code == 200 and len(first.content) < 100_000, len(first.content)  # all of them: several times that
        status = first.json()
        assert status["bots_total"] == 120 and len(status["bots"]) == 50
        assert all(len(bot["versions"]) == 5 and bot["versions_total"] == 12 for bot in status["bots"])
        assert [v["version"] for v in status["bots"][0]["versions"]] == ["11", "10", "9", "8", "7"]  # newest first
        names = [bot["name"] for bot in status["bots"]]
        while status["next_after"] is not None:
            status = client.get("/api/league/status", params={"after": status["next_after"], "limit": 50, "versions": 1}).json()
            names += [bot["name"] for bot in status["bots"]]
        assert names == [f"bot-{n:03d}" for n in range(120)]
        assert client.get("/api/league/status", params={"limit": 1000}).status_code == 400
        page = client.get("/league", params={"limit": 10})
        assert page.status_code == 200 and page.text.count('class="state-') == 10 * 5 and "Next bots" in page.text  # a row a version
    assert json.loads(first.content)["online_total"] == 0
