"""The league's page and status: live matches, who is online, versions and why; an author reads their logs."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from polignac_arena.league.author_api import author_router
from polignac_arena.league.config import parse_league_config
from polignac_arena.league.pages import league_router
from polignac_arena.league.serve import League
from polignac_arena.web import create_app


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[League, dict[str, str]]]:
    config = parse_league_config('name = "pages"\ndescription = "the test league"\ntable_size = 3\n', tmp_path / "league.toml")
    league = League(config)
    tokens = {name: league.store.add_author(name)[1] for name in ("ada", "bob")}
    accepted, _ = league.store.add_upload("ada", "alpha", "a" * 64, league.limits)
    league.store.append_log(accepted.id, "building alpha\nsmoke match: ok\n")
    league.store.finish_validation(accepted.id, True, "", league.tournament_id, league.prior)
    refused, _ = league.store.add_upload("ada", "beta", "b" * 64, league.limits)
    league.store.append_log(refused.id, "building beta\nerror: <script>alert(1)</script> no compiler\n")
    league.store.finish_validation(refused.id, False, "the build failed", league.tournament_id, league.prior)
    league.store.claim_remote("bob", "far", "2.0", league.limits, league.prior, league.tournament_id)
    league.store.schedule(league.tournament_id, ["alpha@1", "far@2.0", "x@1"], 3)
    yield league, tokens
    league.store.close()


def app_of(league: League) -> Any:
    return create_app(league.config.store, routers=[author_router(league), league_router(league)])


def test_the_status_lists_live_matches_and_every_version_with_its_state(league: tuple[League, dict[str, str]]) -> None:
    with TestClient(app_of(league[0])) as client:
        status = client.get("/api/league/status").json()
    assert status["name"] == "pages" and status["paused"] is False and status["matches_played"] == 0
    assert status["live"] == [{"index": 0, "seats": ["alpha@1", "far@2.0", "x@1"]}]
    versions = {v["label"]: v for b in status["bots"] for v in b["versions"]}
    assert versions["alpha@1"]["state"] == "active" and versions["alpha@1"]["sigma"] == pytest.approx(25 / 3)
    assert versions["beta@1"]["state"] == "refused" and versions["beta@1"]["reason"] == "the build failed"
    assert versions["far@2.0"]["kind"] == "remote" and versions["far@2.0"]["state"] == "active"
    assert "log" not in versions["beta@1"], "a validation log is for its author only"


def test_the_page_shows_the_league_and_escapes_what_authors_wrote(league: tuple[League, dict[str, str]]) -> None:
    with TestClient(app_of(league[0])) as client:
        page = client.get("/league")
        schema = client.get("/openapi.json").json()
    assert page.status_code == 200 and "the test league" in page.text
    for text in ("alpha@1", "far@2.0", "the build failed", "refused", "No remote bot is online", 'id="mine"'):
        assert text in page.text
    assert "<script>alert" not in page.text
    assert "/api/league/status" in schema["paths"]


def test_an_author_reads_their_own_logs_and_nobody_elses(league: tuple[League, dict[str, str]]) -> None:
    instance, tokens = league
    with TestClient(app_of(instance)) as client:
        mine = client.get("/api/league/me", headers={"Authorization": f"Bearer {tokens['ada']}"})
        theirs = client.get("/api/league/me", headers={"Authorization": f"Bearer {tokens['bob']}"})
        nobody = client.get("/api/league/me")
        refused_id = next(v.id for v in instance.store.versions("beta"))
        log = client.get(f"/api/league/submissions/{refused_id}", headers={"Authorization": f"Bearer {tokens['ada']}"})
        forbidden = client.get(f"/api/league/submissions/{refused_id}", headers={"Authorization": f"Bearer {tokens['bob']}"})
    assert mine.status_code == 200 and {b["name"] for b in mine.json()["bots"]} == {"alpha", "beta"}
    assert theirs.status_code == 200 and {b["name"] for b in theirs.json()["bots"]} == {"far"}
    assert log.status_code == 200 and "no compiler" in " ".join(log.json()["log"])
    assert nobody.status_code == 401 and forbidden.status_code == 403


CHROMIUM = Path(os.environ.get("POLIGNAC_CHROMIUM", "/usr/bin/chromium"))


def test_an_author_pastes_a_token_on_the_page_and_reads_the_validation_log(league: tuple[League, dict[str, str]]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian package 'chromium', installed by .ci/run)")
    instance, tokens = league
    server = uvicorn.Server(uvicorn.Config(app_of(instance), host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/league"
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(url)
            page.fill("#token", "plg_00000000_" + "A" * 43)
            page.click("#mine button")
            page.wait_for_selector("#my-versions .error")
            assert "token" in page.inner_text("#my-versions").lower()
            page.fill("#token", tokens["ada"])
            page.click("#mine button")
            page.wait_for_selector("#my-versions pre.log")
            text = page.inner_text("#my-versions")
            browser.close()
    finally:
        server.should_exit = True
        thread.join(10)
    assert "beta@1: refused (the build failed)" in text and "error: <script>alert(1)</script> no compiler" in text
    assert "alpha@1: active" in text and "smoke match: ok" in text
